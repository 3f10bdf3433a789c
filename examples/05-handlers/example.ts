/**
 * The kinds of change handlers (Kopf's example 05-handlers, in TypeScript): creation, update,
 * deletion and resuming, several of a kind, and a handler of one field's changes.
 *
 * Handlers of one kind run in the order of registration, one per processing cycle, each once per
 * change of the object. Resume handlers run for the objects that already exist when the operator
 * starts; update handlers get the old and new "essence" of the object (its spec, labels and
 * annotations) and the `diff` between them. A field handler runs whenever that one field changes,
 * whatever the cause — on creation too, when the field appears — and gets the field's old and new
 * values. The deletion handlers make the operator put a finalizer on every object, so that the
 * object stays until they have run. (Kopf's original prints to stdout; here the lines go to the
 * object's log.)
 */
import { on } from 'kopf-gen/runtime';

import { KopfExamples } from '../kopfexamples.js';

on.resume(KopfExamples, function resume_fn_1({ logger }) {
  logger.info('RESUMED 1st');
});

on.create(KopfExamples, function create_fn_1({ logger }) {
  logger.info('CREATED 1st');
});

on.resume(KopfExamples, function resume_fn_2({ logger }) {
  logger.info('RESUMED 2nd');
});

on.create(KopfExamples, function create_fn_2({ logger }) {
  logger.info('CREATED 2nd');
});

// `oldValue` and `newValue` are the essences, typed from the resource; `diff` lists what changed.
on.update(KopfExamples, function update_fn({ oldValue, newValue, diff, logger }) {
  logger.info(`UPDATED: spec.field ${oldValue?.spec?.field} -> ${newValue?.spec?.field}`);
  for (const { operation, field, old, new: value } of diff) {
    logger.info(`  ${operation} ${field.join('.')}: ${JSON.stringify(old) ?? 'undefined'} -> ${JSON.stringify(value) ?? 'undefined'}`);
  }
});

on.delete(KopfExamples, function delete_fn_1({ logger }) {
  logger.info('DELETED 1st');
});

on.delete(KopfExamples, function delete_fn_2({ logger }) {
  logger.info('DELETED 2nd');
});

// The field's path is checked against the resource's type; `oldValue`/`newValue` are its values.
on.field(KopfExamples, 'spec.field', function field_fn({ oldValue, newValue, logger }) {
  logger.info(`FIELD CHANGED: ${oldValue} -> ${newValue}`);
});
