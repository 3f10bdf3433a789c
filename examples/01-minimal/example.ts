/**
 * The minimal operator (Kopf's example 01-minimal, in TypeScript): one creation handler for the
 * KopfExample resource, and nothing else.
 *
 * It shows the least an operator needs: a typed resource descriptor, one handler registered with
 * `on.create`, and a result. Whatever the handler returns is stored in the object's status under
 * the handler's id (`status.create_fn`), so `kubectl get kopfexamples` shows the message in its
 * MESSAGE column. There is no deletion handler, so the operator never puts a finalizer on the
 * object: deleting it is not delayed by the operator at all.
 */
import { on } from 'kopf-gen/runtime';

import { KopfExamples } from '../kopfexamples.js';

// The handler's id is the function's name: it names the result in the status and the log lines.
on.create(KopfExamples, function create_fn({ spec, logger }) {
  // `spec` is typed from the resource: `spec.field` is a `string | undefined` here.
  logger.info(`And here we are! Creating: ${JSON.stringify(spec)}`);
  return { message: 'hello world' }; // will be the new status.create_fn
});
