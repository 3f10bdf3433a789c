/**
 * Sub-handlers (Kopf's example 07-subhandlers, in TypeScript): one creation handler splits its work
 * into one sub-handler per item of `spec.items`, each retried and recorded on its own.
 *
 * The sub-handlers are registered with the `subhandler` of the parent's own arguments, so they are
 * typed for the parent's body (`spec`, `patch`, … of a `KopfExample`). Their ids are
 * `create_fn/<item>`. With the default lifecycle (`asap`) one sub-handler runs per invocation of
 * the parent, so for two items `create_fn` runs twice, each time registering both sub-handlers and
 * running the next unfinished one; a parent must therefore do nothing but register them. (Kopf's
 * original prints to stdout; here the line goes to the object's log.)
 */
import { on } from 'kopf-gen/runtime';

import { KopfExamples } from '../kopfexamples.js';

on.create(KopfExamples, async function create_fn({ spec, subhandler }) {
  for (const item of spec.items ?? []) {
    subhandler({ id: item }, async function create_item_fn({ logger }) {
      logger.info(`=== Handling creation for ${item}. ===`);
    });
  }
});
