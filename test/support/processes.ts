/**
 * Child processes for the end-to-end suites (a generated project, the packed tarballs): running
 * a command to completion with its output collected, polling until something appears, and an
 * environment without the test runner's own variables. Commands run under npm leave their real
 * process as a grandchild, so a timeout kills the whole tree.
 */
import { spawn } from 'node:child_process';
import * as demo from '../../scripts/demo.js';
import * as waiting from './waiting.js';

/** How a child process ended, with its stdout and stderr interleaved. */
export interface Finished {
  readonly code: number | null;
  readonly output: string;
}

/** The environment of the child processes: this one's, minus the test runner's own variables, without colours. */
export function childEnv(changes: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('VITEST') && key !== 'FORCE_COLOR' && key !== 'NODE_OPTIONS') env[key] = value;
  env['NO_COLOR'] = '1';
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

/** Runs a command to completion; killed (with its script's processes) after `timeoutMs`. */
export function run(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    const timer = setTimeout(() => {
      output += `\n[killed after ${options.timeoutMs / 1000}s]`;
      if (child.pid !== undefined) for (const pid of demo.scriptProcesses(child.pid)) process.kill(pid, 'SIGKILL');
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output: output.replace(/\u001b\[[0-9;]*m/g, '') });
    });
  });
}

/** Polls `read` every 100 ms until it returns a value; throws naming `what` after `timeoutMs`. */
export function until<T>(read: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs: number): Promise<T> {
  return waiting.until(read, what, timeoutMs, 100);
}
