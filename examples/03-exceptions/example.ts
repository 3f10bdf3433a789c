/**
 * Errors and retries (Kopf's example 03-exceptions, in TypeScript): four creation handlers that
 * fail in the four ways a handler can fail, and what the operator does about each.
 *
 * - A `PermanentError` fails the handler at once, for this change of the object, without a stack
 *   trace: the operator will not retry it.
 * - A `TemporaryError` asks for a retry after its `delay` (seconds), also without a stack trace;
 *   `retry` tells the handler which attempt this is (0 for the first one).
 * - Any other error is unexpected: it is logged with its stack trace and, by default, retried after
 *   the handler's `backoff`, at most `retries` times in all.
 * - With `errors: 'PERMANENT'`, an unexpected error fails the handler at once instead.
 *
 * The handlers run one per processing cycle (the default lifecycle), so one failing handler never
 * holds the others back. When all have succeeded or failed for good, the creation is processed and
 * the failed ones run again only when the object's spec, labels or annotations change.
 */
import { on, PermanentError, TemporaryError } from 'kopf-gen/runtime';

import { KopfExamples } from '../kopfexamples.js';

/** An error of the operator's own, which the framework knows nothing about. */
class MyError extends Error {
  override name = 'MyError';
}

on.create(KopfExamples, function instant_failure_with_only_a_message() {
  throw new PermanentError('Fail once and for all.');
});

on.create(KopfExamples, function eventual_success_with_a_few_messages({ retry }) {
  if (retry < 3) {
    // Attempts 0, 1 and 2 fail; the fourth one (retry 3) succeeds.
    throw new TemporaryError('Expected recoverable error.', { delay: 1 });
  }
});

on.create(KopfExamples, { retries: 3, backoff: 1 }, function eventual_failure_with_tracebacks() {
  throw new MyError('An error that is supposed to be recoverable.');
});

on.create(KopfExamples, { errors: 'PERMANENT', backoff: 1 }, function instant_failure_with_traceback() {
  throw new MyError('An error that is supposed to be recoverable.');
});
