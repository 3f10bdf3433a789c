/**
 * Peering (Kopf's example 06-peering, in TypeScript): several operators for the same cluster know
 * about each other through a peering object, and only the one with the highest priority works.
 *
 * The operator itself is ordinary — one create handler. What this example shows happens around
 * it: start it twice and both warn about a same-priority sibling and pause; start one with
 * `--dev` (priority 666) and the other pauses until it exits; `kopf-gen freeze` and
 * `kopf-gen resume` pause and resume all of them by hand. See docs/peering.md.
 */
import { on } from 'kopf-gen/runtime';

import { KopfExamples } from '../kopfexamples.js';

on.create(KopfExamples, function create_fn({ name, logger }) {
  logger.info(`Created ${name}: handled by exactly one of the peering operators.`);
});
