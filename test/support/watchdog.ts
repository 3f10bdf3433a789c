/**
 * A watchdog for every test worker (installed by `setupFiles` in vitest.config.ts): a test must fail
 * when its feature breaks, never hang, and a loop that never yields (a `for (;;)` or an async loop
 * that only awaits settled promises) blocks the event loop, so neither vitest's test timeout nor its
 * own RPC timers can fire. This module writes a heartbeat into shared memory from the worker's
 * event loop and starts a thread (watchdog-thread.mjs) that, when the heartbeat is older than the
 * limit, terminates the running JavaScript and reports the test that was running and where it was
 * stuck; the test then fails with that report (its own timeout ends it, and the `afterEach` hook
 * here throws the report). When terminating does not free the worker, the thread kills it.
 *
 * The limit (`KOPF_GEN_TEST_WATCHDOG_S`, default 45 s) stays below vitest's 60-second RPC timeout
 * between a worker and the main process: an event loop blocked that long also makes the worker
 * miss the main process's answers. With `KOPF_GEN_TEST_BLOCKS=<file>`, every test (or hook) that
 * held the event loop for more than a second appends a JSON line to that file, to find them.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';

const DEFAULT_LIMIT_S = 45;
const BEAT_MS = 100;
/** How long a test file may take to finish after a termination: past its test and hook timeouts. */
const GRACE_MS = 120_000;

/** The watchdog of this worker process: started once, whatever the number of files it runs. */
interface Watchdog {
  /** Tells the thread what is running now (a file, a hook, a test), for its report. */
  running(what: string): void;
  /** The longest the event loop went without a heartbeat since the last call, in milliseconds. */
  takeLongestBlock(): number;
  /** The reports of the terminations since the last call. */
  takeReports(): string[];
}

const KEY = Symbol.for('kopf-gen.test.watchdog');

function limitMs(): number {
  const text = process.env['KOPF_GEN_TEST_WATCHDOG_S'];
  const seconds = text === undefined || text === '' ? DEFAULT_LIMIT_S : Number(text);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new Error(`KOPF_GEN_TEST_WATCHDOG_S must be a positive number of seconds, not ${JSON.stringify(text)}`);
  return seconds * 1000;
}

async function start(): Promise<Watchdog> {
  const heartbeat = new SharedArrayBuffer(Float64Array.BYTES_PER_ELEMENT);
  const beat = new Float64Array(heartbeat);
  let last = Date.now();
  let longest = 0;
  beat[0] = last;
  // The timer is unref'd and the thread too: the watchdog never keeps a finished worker alive.
  setInterval(() => {
    const now = Date.now();
    longest = Math.max(longest, now - last - BEAT_MS);
    last = now;
    beat[0] = now;
  }, BEAT_MS).unref();
  const workerData = { heartbeat, limitMs: limitMs(), graceMs: GRACE_MS };
  const thread = new Worker(fileURLToPath(new URL('./watchdog-thread.mjs', import.meta.url)), { workerData });
  thread.unref();
  let reports: string[] = [];
  thread.on('message', (report: string) => reports.push(report));
  await new Promise<void>((resolve, reject) => {
    thread.once('online', resolve);
    thread.once('error', reject);
  });
  return {
    running: (what) => thread.postMessage(what),
    takeLongestBlock: () => {
      const now = Date.now();
      const value = Math.max(longest, now - last - BEAT_MS);
      // This call is itself a sign of life: the next interval measures from here.
      longest = 0;
      last = now;
      beat[0] = now;
      return value;
    },
    takeReports: () => {
      const taken = reports;
      reports = [];
      return taken;
    },
  };
}

const registry = globalThis as { [KEY]?: Promise<Watchdog> };
registry[KEY] ??= start();
const watchdog = await registry[KEY];

/** Appends the longest block of `what` to the blocks file, when asked for and longer than a second. */
function recordBlocks(what: string): void {
  const longest = watchdog.takeLongestBlock();
  const file = process.env['KOPF_GEN_TEST_BLOCKS'];
  if (file && longest > 1000) fs.appendFileSync(file, `${JSON.stringify({ what, longestBlockMs: longest })}\n`);
}

let fileName = 'a test file';

beforeAll((suite) => {
  fileName = 'filepath' in suite && typeof suite.filepath === 'string' ? path(suite.filepath) : suite.name;
  recordBlocks(`${fileName} (loading)`);
  watchdog.running(`${fileName} (beforeAll hooks)`);
});

beforeEach((context) => {
  recordBlocks(`${fileName} (hooks)`);
  watchdog.running(`${fileName} > ${testName(context.task)}`);
});

afterEach((context) => {
  recordBlocks(`${fileName} > ${testName(context.task)}`);
  watchdog.running(`${fileName} (after ${testName(context.task)})`);
  failOnReports();
});

afterAll(() => {
  recordBlocks(`${fileName} (afterAll hooks)`);
  watchdog.running(`${fileName} (finished)`);
  failOnReports();
});

/** Fails the test (or the file's hooks) during which the watchdog terminated a blocked loop. */
function failOnReports(): void {
  const reports = watchdog.takeReports();
  if (reports.length > 0) throw new Error(reports.join('\n'));
}

/** `describe > … > it`, without the file. */
function testName(task: { name: string; suite?: { name: string; suite?: unknown } }): string {
  const names = [task.name];
  for (let suite = task.suite; suite?.suite; suite = suite.suite as typeof task.suite) names.unshift(suite.name);
  return names.join(' > ');
}

function path(file: string): string {
  const root = process.cwd();
  return file.startsWith(`${root}/`) ? file.slice(root.length + 1) : file;
}
