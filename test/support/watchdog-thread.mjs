/**
 * The watchdog's own thread (see watchdog.ts): it lives beside the test worker's main thread, so it
 * keeps running when that thread's event loop is blocked by a loop that never yields, which no
 * timer of the test runner can interrupt. It reads the heartbeat the main thread writes into shared
 * memory; when the heartbeat is older than the limit, it pauses the main thread through the
 * inspector (which interrupts running JavaScript), notes where it was stuck, terminates the running
 * JavaScript and hands the report to the main thread, which fails the test with it. When that cannot
 * free the worker (the loop runs inside the test runner's own call, or is entered again, or the file
 * never finishes after it), the thread prints the report and kills the worker process instead, which
 * ends the vitest run with an error: the suite fails, it never hangs.
 */
import fs from 'node:fs';
import inspector from 'node:inspector';
import { parentPort, workerData } from 'node:worker_threads';

/** @type {{ heartbeat: SharedArrayBuffer, limitMs: number, graceMs: number }} */
const { heartbeat, limitMs, graceMs } = workerData;
// Terminating JavaScript that runs inside a timer or an I/O callback leaves Node's async-hooks stack
// unbalanced, which Node treats as fatal unless its checks are off: without the flag, kill instead.
const canTerminate = process.execArgv.includes('--no-force-async-hooks-checks');
const beat = new Float64Array(heartbeat);
/** How many times the running JavaScript is terminated before the process is killed instead. */
const TERMINATIONS = 3;
/** How many steps the inspector may take out of Node's own code to show the loop's. */
const STEPS = 50;
/** How long the inspector may take to pause the main thread before the process is killed. */
const CAPTURE_MS = 5_000;

/** What the main thread last said it was running: a file, a hook or a test. */
let running = 'the test file (while loading)';
let terminations = 0;
/** When the test file must have finished after a termination (its timeouts have fired by then). */
let deadline = Number.POSITIVE_INFINITY;
let busy = false;

parentPort?.on('message', (message) => {
  if (typeof message !== 'string') return;
  running = message;
  if (message.endsWith('(finished)')) deadline = Number.POSITIVE_INFINITY;
});

setInterval(
  () => {
    if (busy) return;
    const now = Date.now();
    if (now > deadline) return kill(`[watchdog] ${running}: the test file did not finish within ${graceMs / 1000} s of the watchdog's last report; killing the test worker.`);
    const blockedMs = now - beat[0];
    if (blockedMs >= limitMs) fire(blockedMs);
  },
  Math.min(250, limitMs / 4),
);

/** Pauses the main thread, notes its stack, then terminates the running JavaScript (or kills the process). */
function fire(blockedMs) {
  busy = true;
  terminations += 1;
  const head = `[watchdog] ${running}: the event loop has not answered for ${(blockedMs / 1000).toFixed(1)} s (limit ${limitMs / 1000} s)`;
  const last = terminations > TERMINATIONS;
  const fallback = setTimeout(() => kill(`${head}; the main thread could not be paused; killing the test worker.`), CAPTURE_MS);
  try {
    const session = new inspector.Session();
    session.connectToMainThread();
    /** @type {Map<string, string>} */
    const scripts = new Map();
    session.on('Debugger.scriptParsed', (message) => scripts.set(message.params.scriptId, message.params.url));
    let steps = 0;
    session.on('Debugger.paused', (message) => {
      // Paused between two callbacks (only Node's own queue code on the stack): step into the next
      // one, which is the loop's own code when the loop only awaits settled promises.
      const urls = message.params.callFrames.map((frame) => frame.url || scripts.get(frame.location.scriptId) || '');
      if (urls.every((url) => url.startsWith('node:')) && steps < STEPS) {
        steps += 1;
        return session.post('Debugger.stepInto');
      }
      // Paused inside an async hook: a termination there ends with the hook's call and the loop
      // goes on, so step out of the hook into the code that created the promise first.
      if (urls.some((url) => url.includes('async_hooks')) && steps < STEPS) {
        steps += 1;
        return session.post('Debugger.stepOut');
      }
      session.removeAllListeners('Debugger.paused');
      clearTimeout(fallback);
      const stack = frames(message.params.callFrames, scripts);
      if (last) return kill(`${head}, again (${terminations} times); killing the test worker.\n[watchdog] stuck at:\n${stack}`);
      // A loop called synchronously by the test runner (a test's synchronous body) cannot be
      // terminated alone: the runner's own frames would go with it and the file would never end.
      if (message.params.callFrames.some((frame) => (frame.url || scripts.get(frame.location.scriptId) || '').includes('/@vitest/runner/')))
        return kill(`${head}, in the test runner's own call; killing the test worker.\n[watchdog] stuck at:\n${stack}`);
      if (!canTerminate) return kill(`${head}; killing the test worker (it runs without --no-force-async-hooks-checks).\n[watchdog] stuck at:\n${stack}`);
      const report = `${head}; its JavaScript was terminated.\n[watchdog] stuck at:\n${stack}`;
      fs.writeSync(2, `\n${report}\n`);
      // V8 answers the termination once it has happened, that is after the resumption that follows.
      const stuck = setTimeout(() => kill(`${head}; its JavaScript could not be terminated; killing the test worker.`), CAPTURE_MS);
      session.post('Runtime.terminateExecution', () => {
        clearTimeout(stuck);
        session.disconnect();
        deadline = Date.now() + graceMs;
        parentPort?.postMessage(report);
        beat[0] = Date.now();
        busy = false;
      });
      session.post('Debugger.resume');
    });
    session.post('Debugger.enable', () => session.post('Debugger.pause'));
  } catch (error) {
    clearTimeout(fallback);
    kill(`${head}; no inspector (${String(error)}); killing the test worker.`);
  }
}

/** The innermost frames, one per line, as `function (file:line:column)` of the code the worker ran. */
function frames(callFrames, scripts) {
  return callFrames
    .slice(0, 12)
    .map((frame) => {
      const url = frame.url || scripts.get(frame.location.scriptId) || '<unknown>';
      const where = `${url.replace(/^file:\/\//, '')}:${frame.location.lineNumber + 1}:${(frame.location.columnNumber ?? 0) + 1}`;
      return `    at ${frame.functionName || '<anonymous>'} (${where})`;
    })
    .join('\n');
}

function kill(report) {
  fs.writeSync(2, `\n${report}\n`);
  process.kill(process.pid, 'SIGKILL');
}
