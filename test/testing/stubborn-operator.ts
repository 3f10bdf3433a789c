/**
 * An operator whose daemon ignores its stop flag and only yields to cancellation (its sleep honours
 * `stopped.signal`), with a graceful stage of 1 second and a forced one of 0.5 seconds: stopping
 * it takes virtual time. Used by test/testing/virtualtime.test.ts.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { on } from 'kopf-gen/runtime';

on.daemon('kopfexamples', { cancellationBackoff: 1, cancellationTimeout: 0.5 }, async function stubborn({ signal, logger }) {
  logger.info('Running until cancelled.');
  await sleep(3_600_000, undefined, { signal });
});
