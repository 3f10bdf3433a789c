/**
 * K8s-events of your own (Kopf's example 04-events, in TypeScript): a creation handler that posts
 * events about its object, shown by `kubectl describe` under "Events".
 *
 * `event()` posts an event of any type; `info()`, `warn()` and `exception()` are the shortcuts for
 * the conventional types `Normal`, `Warning` and `Error`. `exception()` appends the error's message
 * to the event's message (and takes the error's class name as the reason if none is given). All
 * four only queue the event and return at once; the operator posts it in the background, so a
 * slow or failing API never slows down or fails the handler. They accept the handler's `body` (or
 * any other object, or an array of objects) as the object the event is about.
 */
import { event, exception, info, on, warn } from 'kopf-gen/runtime';

import { KopfExamples } from '../kopfexamples.js';

on.create(KopfExamples, function create_fn({ body }) {
  // The all-purpose function for the event creation.
  event(body, { type: 'SomeType', reason: 'SomeReason', message: 'Some message' });

  // The shortcuts for the conventional events and common cases.
  info(body, { reason: 'SomeReason', message: 'Some message' });
  warn(body, { reason: 'SomeReason', message: 'Some message' });

  try {
    throw new Error('Exception text.');
  } catch (error) {
    exception(body, { reason: 'SomeReason', message: 'Some exception:', exc: error });
  }
});
