/**
 * Filtering handlers (Kopf's example 11-filtering-handlers, in TypeScript): handlers that run only
 * for the objects, and the changes, that their filters accept.
 *
 * Every handler here logs one line when it runs; which lines appear for the reference object
 * (fixtures/objects/kopf-example-1.yaml) shows which filters matched. A filter is given at
 * registration, next to the handler:
 *
 * - `labels` and `annotations`: an exact value, `PRESENT`, `ABSENT`, or a callback that gets the
 *   value (or `null` when the key is absent) and the handler's arguments;
 * - `when`: a callback that gets the handler's arguments and decides on the whole object;
 * - `field` with `value`: the value at a field of the object (a literal compared deeply,
 *   `PRESENT`, `ABSENT`, or a callback); for change handlers also `old` and `new`;
 * - the same filters on a daemon: it runs while the filters match, and is stopped once they stop
 *   matching.
 *
 * The callbacks are typed from the resource: `spec` below is a `KopfExampleSpec`, and a dotted
 * `field` is checked against the object's type (the array form, `['spec', 'inexistent']`, names a
 * field the type does not know).
 */
import { ABSENT, on, PRESENT } from 'kopf-gen/runtime';

import { KopfExamples } from '../kopfexamples.js';

// Labels.
on.create(KopfExamples, { labels: { somelabel: 'somevalue' } }, function create_with_labels_matching({ logger }) {
  logger.info('Label is matching.');
});
on.create(KopfExamples, { labels: { somelabel: PRESENT } }, function create_with_labels_present({ logger }) {
  logger.info('Label is present.');
});
on.create(KopfExamples, { labels: { nonexistent: ABSENT } }, function create_with_labels_absent({ logger }) {
  logger.info('Label is absent.');
});
// A callback gets the value (`null` when absent) and the handler's arguments, typed: `spec` is a KopfExampleSpec.
on.create(
  KopfExamples,
  { labels: { somelabel: (value, { spec }) => value === 'somevalue' && spec.field !== undefined } },
  function create_with_labels_callback_matching({ logger }) {
    logger.info('Label callback matching.');
  },
);

// Annotations.
on.create(KopfExamples, { annotations: { someannotation: 'somevalue' } }, function create_with_annotations_matching({ logger }) {
  logger.info('Annotation is matching.');
});
on.create(KopfExamples, { annotations: { someannotation: PRESENT } }, function create_with_annotations_present({ logger }) {
  logger.info('Annotation is present.');
});
on.create(KopfExamples, { annotations: { nonexistent: ABSENT } }, function create_with_annotations_absent({ logger }) {
  logger.info('Annotation is absent.');
});
on.create(
  KopfExamples,
  { annotations: { someannotation: (value, { spec }) => value === 'somevalue' && spec.field === 'not-this-value-for-sure' } },
  function create_with_annotations_callback_matching({ logger }) {
    logger.info('Annotation callback mismatch.'); // never: the callback never accepts the object
  },
);

// Whole-object callbacks.
on.create(KopfExamples, { when: ({ body }) => body.kind === 'KopfExample' }, function create_with_filter_satisfied({ logger }) {
  logger.info('Filter satisfied.');
});
on.create(KopfExamples, { when: () => false }, function create_with_filter_not_satisfied({ logger }) {
  logger.info('Filter not satisfied.'); // never
});

// Field values.
on.create(KopfExamples, { field: 'spec.field', value: 'value' }, function create_with_field_value_satisfied({ logger }) {
  logger.info('Field value is satisfied.');
});
on.create(KopfExamples, { field: 'spec.field', value: 'something-else' }, function create_with_field_value_not_satisfied({ logger }) {
  logger.info('Field value is not satisfied.'); // never
});
on.create(KopfExamples, { field: 'spec.field', value: PRESENT }, function create_with_field_presence_satisfied({ logger }) {
  logger.info('Field presence is satisfied.');
});
on.create(KopfExamples, { field: ['spec', 'inexistent'], value: PRESENT }, function create_with_field_presence_not_satisfied({ logger }) {
  logger.info('Field presence is not satisfied.'); // never
});

// Field changes: only when `spec.field` goes from `value` to `changed`. `old` and `new` are the
// field's values, typed as the field (`string`).
on.update(KopfExamples, { field: 'spec.field', old: 'value', new: 'changed' }, function update_with_field_change_satisfied({ logger, old, new: after }) {
  logger.info(`Field change is satisfied: ${old} → ${after}.`);
});

// A daemon for as long as `spec.field` is `value`: changing the field stops it.
on.daemon(KopfExamples, { field: 'spec.field', value: 'value' }, async function daemon_with_field({ stopped, logger }) {
  while (!stopped.isSet()) {
    logger.info('Field daemon is satisfied.');
    await stopped.wait(1); // on the operator's clock: a second of virtual time in tests
  }
});
