/**
 * The dev loop's checker in a worker thread. The launcher's thread also serves the devcluster: a
 * type check there — seconds for the first one, which loads the compiler and every declaration
 * file — would hold up every request of the operator meanwhile. In its own thread the checker warms
 * up while the first operator starts, and a save's check never stalls the devcluster.
 *
 * This module is both sides: `startChecker()` in the launcher, and the worker's loop when loaded as
 * the worker. Where the module cannot be a worker (its TypeScript source, run by a test runner), the
 * checker runs in the calling thread instead, with the same interface.
 */
import * as path from 'node:path';
import * as url from 'node:url';
import * as threads from 'node:worker_threads';
import * as checking from './checking.js';

/** Marks the worker's data, so that the module knows it is the worker. */
const WORKER_MARK = 'kopf-gen.checker';

/** A checker the dev loop awaits. */
export interface AsyncChecker {
  readonly kind: checking.SourceChecker['kind'];
  /** Checks the sources as they are now. */
  check(): Promise<checking.CheckResult>;
  /** The files the entry files reached at the last check (absolute). */
  files(): readonly string[];
  close(): Promise<void>;
}

interface Request {
  readonly id: number;
}
interface Response {
  readonly id: number;
  readonly result: checking.CheckResult;
  readonly files: readonly string[];
}
interface Setup {
  readonly mark: typeof WORKER_MARK;
  readonly cwd: string;
  readonly entries: readonly string[];
}

/** Starts a checker for the project: in a worker thread when possible. */
export function startChecker(cwd: string, entries: readonly string[]): AsyncChecker {
  const kind = checking.projectTypeScriptPath(cwd) === undefined ? 'syntax' : 'typescript';
  const self = url.fileURLToPath(import.meta.url);
  if (path.extname(self) !== '.js') return new InThread(kind, cwd, entries);
  return new InWorker(kind, self, { mark: WORKER_MARK, cwd, entries });
}

/** What the checker answers when it fails itself (one line, like the checks). */
function failure(error: unknown): checking.CheckResult {
  return { ok: false, line: `kopf-gen run: the sources could not be checked: ${error instanceof Error ? error.message : String(error)}` };
}

class InThread implements AsyncChecker {
  private checker: checking.SourceChecker | undefined;

  constructor(
    readonly kind: checking.SourceChecker['kind'],
    private readonly cwd: string,
    private readonly entries: readonly string[],
  ) {}

  async check(): Promise<checking.CheckResult> {
    try {
      this.checker ??= checking.createChecker(this.cwd, this.entries);
      return this.checker.check();
    } catch (error) {
      return failure(error);
    }
  }

  files(): readonly string[] {
    return this.checker?.files() ?? [];
  }

  async close(): Promise<void> {}
}

class InWorker implements AsyncChecker {
  private readonly worker: threads.Worker;
  private readonly waiting = new Map<number, (response: Response) => void>();
  private next = 0;
  private known: readonly string[] = [];
  private crashed: Error | undefined;

  constructor(
    readonly kind: checking.SourceChecker['kind'],
    file: string,
    setup: Setup,
  ) {
    this.worker = new threads.Worker(file, { workerData: setup });
    this.worker.unref();
    this.worker.on('message', (response: Response) => {
      this.waiting.get(response.id)?.(response);
      this.waiting.delete(response.id);
    });
    const fail = (error: Error): void => {
      this.crashed = error;
      for (const [id, resolve] of this.waiting) resolve({ id, result: failure(error), files: this.known });
      this.waiting.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', () => fail(new Error('the checker has stopped')));
  }

  async check(): Promise<checking.CheckResult> {
    if (this.crashed) return failure(this.crashed);
    const id = this.next++;
    const response = await new Promise<Response>((resolve) => {
      this.waiting.set(id, resolve);
      this.worker.postMessage({ id } satisfies Request);
    });
    this.known = response.files;
    return response.result;
  }

  files(): readonly string[] {
    return this.known;
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}

/** The worker's loop: one checker, one request at a time (messages are handled in order). */
function serve(port: threads.MessagePort, setup: Setup): void {
  let checker: checking.SourceChecker | undefined;
  port.on('message', (request: Request) => {
    let result: checking.CheckResult;
    try {
      checker ??= checking.createChecker(setup.cwd, setup.entries);
      result = checker.check();
    } catch (error) {
      result = failure(error);
    }
    port.postMessage({ id: request.id, result, files: checker?.files() ?? [] } satisfies Response);
  });
}

if (!threads.isMainThread && threads.parentPort && (threads.workerData as Setup | undefined)?.mark === WORKER_MARK) {
  serve(threads.parentPort, threads.workerData as Setup);
}
