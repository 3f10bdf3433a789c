/**
 * Long synchronous work of a test (the TypeScript compiler, above all) run in a worker thread, so
 * that the test worker's event loop stays free: a test worker whose loop is held for a minute on a
 * busy machine misses the test runner's RPC answers (vitest's 60-second timeout), and the watchdog
 * (watchdog.ts) takes it for a loop that never ends. The thread's module answers requests with
 * `serve`; the test calls it with `call` and awaits the answer.
 */
import { fileURLToPath } from 'node:url';
import { parentPort, Worker } from 'node:worker_threads';

interface Request<T> {
  readonly id: number;
  readonly request: T;
}

type Response<R> = { readonly id: number; readonly result: R } | { readonly id: number; readonly error: string };

/** A thread running one TypeScript module that serves requests of type `T` with answers `R`. */
export interface Thread<T, R> {
  call(request: T): Promise<R>;
  close(): Promise<void>;
}

/** Starts `entry` (a module URL) in a thread; the thread never keeps the process alive when idle. */
export function start<T, R>(entry: URL): Thread<T, R> {
  const worker = new Worker(fileURLToPath(new URL('./tsthread.mjs', import.meta.url)), { workerData: { entry: entry.href } });
  worker.unref();
  const pending = new Map<number, { resolve: (result: R) => void; reject: (error: Error) => void }>();
  let next = 0;
  const settle = (): void => {
    if (pending.size === 0) worker.unref();
  };
  worker.on('message', (response: Response<R>) => {
    const waiting = pending.get(response.id);
    if (!waiting) return;
    pending.delete(response.id);
    settle();
    if ('error' in response) waiting.reject(new Error(response.error));
    else waiting.resolve(response.result);
  });
  worker.on('error', (error) => {
    for (const waiting of pending.values()) waiting.reject(error);
    pending.clear();
  });
  return {
    call: (request) =>
      new Promise<R>((resolve, reject) => {
        next += 1;
        pending.set(next, { resolve, reject });
        worker.ref();
        worker.postMessage({ id: next, request } satisfies Request<T>);
      }),
    close: async () => {
      await worker.terminate();
    },
  };
}

/** In the thread's module: answers every request with `handle` (errors are passed back as messages). */
export function serve<T, R>(handle: (request: T) => R): void {
  if (!parentPort) throw new Error('threads.serve runs in a worker thread started by threads.start');
  const port = parentPort;
  port.on('message', ({ id, request }: Request<T>) => {
    try {
      port.postMessage({ id, result: handle(request) } satisfies Response<R>);
    } catch (error) {
      port.postMessage({ id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies Response<R>);
    }
  });
}
