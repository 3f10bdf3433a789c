/**
 * Timers (Kopf's example 15-timers, in TypeScript): two timers per KopfExample object that wait for
 * the object to stay unchanged for a while (`idle`) and then fire every few seconds (`interval`)
 * for as long as it stays unchanged. Any change of the object starts the idle period again.
 *
 * A timer may be a plain function or an `async` one; both run on the operator's event loop.
 * Neither returns a result nor patches the object: a result is written to the status, and as
 * this resource has no change handlers, that would count as a change and restart the idle period.
 */
import { on } from 'kopf-gen/runtime';

import { KopfExamples } from '../kopfexamples.js';

on.timer(KopfExamples, { idle: 5, interval: 2 }, function every_few_seconds_sync({ spec, logger }) {
  logger.info(`Ping from a sync timer: field=${JSON.stringify(spec.field)}`);
});

on.timer(KopfExamples, { idle: 10, interval: 4 }, async function every_few_seconds_async({ spec, logger }) {
  logger.info(`Ping from an async timer: field=${JSON.stringify(spec.field)}`);
});
