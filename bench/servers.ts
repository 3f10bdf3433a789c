/**
 * The devcluster child process of the benchmarks (`serve.ts`), seen from the parent: fork it,
 * ask it things over IPC (one request, one typed reply), and stop it. Benchmarks measure across a
 * process boundary so the server's CPU and memory are not mixed with the load generator's.
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';

/** A running devcluster child and its URL. */
export interface Server {
  child: ChildProcess;
  url: string;
}

/**
 * Forks `serve.ts` with extra environment (e.g. `DEVCLUSTER_HISTORY`) and extra Node options
 * (e.g. `--max-old-space-size=8192` for a devcluster holding 100,000 objects and their history),
 * and waits for its URL.
 */
export function startServer(env: Record<string, string> = {}, nodeOptions: readonly string[] = []): Promise<Server> {
  const child = fork(path.join(import.meta.dirname, 'serve.ts'), [], {
    execArgv: ['--import', 'tsx', '--expose-gc', ...nodeOptions],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the devcluster process exited early (code ${code})`)));
    child.once('message', (m: { type: string; url: string }) => resolve({ child, url: m.url }));
  });
}

/** Sends `message` and resolves with the first reply whose `type` is `reply`. */
export function ask<T>(child: ChildProcess, message: object, reply: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: { type: string }): void => {
      if (m.type === reply) {
        child.off('message', on);
        resolve(m as T);
      }
    };
    child.on('message', on);
    child.send(message);
  });
}

let calls = 0;

/**
 * Sends `message` with a `reply` type of its own and resolves with the answer, so that questions
 * asked at the same time cannot take each other's answers (the chaos messages of `serve.ts`).
 */
export function call<T>(child: ChildProcess, message: object): Promise<T> {
  const reply = `reply-${process.pid}-${++calls}`;
  return ask<T>(child, { ...message, reply }, reply);
}

/** Asks the child to stop and waits for it to exit. */
export function stopServer(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) {
      resolve();
      return;
    }
    child.once('exit', () => resolve());
    child.send({ type: 'stop' });
  });
}
