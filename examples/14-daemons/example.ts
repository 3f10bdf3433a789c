/**
 * Daemons (Kopf's example 14-daemons, in TypeScript): two long-running tasks accompany every
 * KopfExample object for as long as it exists.
 *
 * - `background_sync` cooperates: it sleeps with `stopped.wait()`, which ends early when the daemon
 *   is asked to stop, and checks `stopped.isSet()` in its loop. (Kopf's original is a synchronous
 *   daemon in a thread; in TypeScript every daemon is `async` and runs on the event loop, so the
 *   name is kept only for recognisability.)
 * - `background_async` ignores the stop flag and relies on cancellation instead: its sleeps honour
 *   `stopped.signal`, which is aborted at the forced stage of stopping (`cancellationTimeout`).
 *
 * Both fail three times at first (`TemporaryError`, retried after 1 second), to show in-memory
 * retries: `retry` counts the attempts, and each attempt's patch is applied right after it.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { on, TemporaryError } from 'kopf-gen/runtime';

import { KopfExamples } from '../kopfexamples.js';

// Exits after 3 failed attempts and then 6 pings 5 seconds apart (30 seconds), unless stopped.
on.daemon(KopfExamples, { backoff: 3 }, async function background_sync({ stopped, spec, logger, retry, patch }) {
  if (retry < 3) {
    patch.status.message = `Failed ${retry + 1} times.`;
    throw new TemporaryError('Simulated failure.', { delay: 1 });
  }

  for (let ping = 0; ping < 6 && !stopped.isSet(); ping += 1) {
    // `spec` is a live view: it shows the object's newest spec on every turn of the loop.
    logger.info(`=> Ping from a sync daemon: field=${JSON.stringify(spec.field)}, retry=${retry}`);
    await stopped.wait(5);
  }

  // Applied when the daemon returns: also when it returns because the object is being deleted.
  patch.status.message = 'Accompanying is finished.';
});

// Runs until cancelled, for objects with the annotation only. Fails to start for 3 first times.
on.daemon(
  KopfExamples,
  {
    backoff: 3,
    cancellationBackoff: 1.0,
    cancellationTimeout: 0.5,
    annotations: { someannotation: 'somevalue' },
  },
  async function background_async({ spec, logger, retry, signal }) {
    if (retry < 3) throw new TemporaryError('Simulated failure.', { delay: 1 });

    for (;;) {
      logger.info(`=> Ping from an async daemon: field=${JSON.stringify(spec.field)}`);
      await sleep(5_000, undefined, { signal }); // rejects with an AbortError when cancelled
    }
  },
);
