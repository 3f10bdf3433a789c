/**
 * On-event handlers (Kopf's example 08-events, in TypeScript): silent spies on the raw
 * watch-events of a resource.
 *
 * An on-event handler is called for every event the operator receives about an object: `ADDED`,
 * `MODIFIED`, `DELETED`, and the objects listed when the operator starts (type `null`). Nothing is
 * stored on the object for it — no progress, no diff-base, no finalizer — so it suits objects
 * that belong to someone else and are only watched. It is never retried: its errors are logged
 * (with the stack trace) and ignored. Being called again for the same object is normal (every
 * restart lists it again), so what it does must be safe to repeat. A value it returns would be
 * written to the status, which is one more event, so these handlers return nothing.
 */
import { on } from 'kopf-gen/runtime';

import { KopfExamples } from '../kopfexamples.js';

on.event(KopfExamples, function event_fn_with_error() {
  throw new Error('Oops!');
});

on.event(KopfExamples, function normal_event_fn({ event, logger }) {
  // `event.object` is the object as it was sent, typed as a KopfExample.
  const { metadata, spec } = event.object;
  logger.info(`Event received: type=${JSON.stringify(event.type)}, resourceVersion=${metadata?.resourceVersion}, field=${spec?.field}`);
});
