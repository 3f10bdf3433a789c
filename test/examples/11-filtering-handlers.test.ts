/**
 * A-27 with examples/11-filtering-handlers (Kopf's 11-filtering-handlers in TypeScript): loaded from
 * its file as `kopf-gen run examples/11-filtering-handlers/example.ts` loads it, run in-process with
 * `KopfRunner` on a virtual clock against a devcluster with the reference CRD. Only the handlers
 * whose label, annotation, `when` and field filters accept the reference object run; the update
 * handler runs for its exact field change; the field-filtered daemon logs once a virtual second
 * until the field changes, and then is stopped.
 */
import { describe, expect, it } from 'vitest';

import { VirtualClock } from 'kopf-gen/testing';

import { eventually, KEX, objectMessages, START, startExample, useExampleCluster, referenceObject } from './support.js';

describe('examples/11-filtering-handlers', () => {
  const example = useExampleCluster();

  it('A-27 11-filtering-handlers: only matching handlers run; the field change runs the update handler; the field daemon stops when its field changes', async () => {
    const clock = new VirtualClock({ start: START });
    const runner = await startExample('11-filtering-handlers', example.kubeconfig, { clock });
    /** Log messages about the object, without the `[default/kopf-example-1] ` prefix. */
    const messages = (): string[] => objectMessages(runner, 'default/kopf-example-1');
    const count = (text: string): number => messages().filter((m) => m === text).length;
    try {
      // The reference object: fixtures/objects/kopf-example-1.yaml.
      await example.cluster.store.create(referenceObject());
      await eventually(() => count('Creation is processed: 10 succeeded; 0 failed.') === 1, 'the creation to be processed');
      for (const line of [
        'Label is matching.',
        'Label is present.',
        'Label is absent.',
        'Label callback matching.',
        'Annotation is matching.',
        'Annotation is present.',
        'Annotation is absent.',
        'Filter satisfied.',
        'Field value is satisfied.',
        'Field presence is satisfied.',
      ])
        expect({ line, times: count(line) }).toEqual({ line, times: 1 });
      // Handlers with a field filter have the field in their ids.
      expect(count("Handler 'create_with_field_value_satisfied/spec.field' succeeded.")).toBe(1);

      // The daemon logs at once, then once a (virtual) second while `spec.field` is `value`.
      await eventually(() => count('Field daemon is satisfied.') === 1, 'the first line of the daemon');
      await clock.advance(3_000);
      expect(count('Field daemon is satisfied.')).toBe(4);

      // The field changes from `value` to `changed`: the update handler's filter matches, the
      // daemon's no longer does, and the daemon is stopped.
      await example.cluster.store.patch(KEX, 'kopf-example-1', { spec: { field: 'changed' } }, { namespace: 'default', type: 'merge-patch' });
      await eventually(() => count('Updating is processed: 1 succeeded; 0 failed.') === 1, 'the update to be processed');
      expect(count('Field change is satisfied: value → changed.')).toBe(1);
      await eventually(
        () => count("Daemon 'daemon_with_field/spec.field' has exited on request and will not be retried or restarted.") === 1,
        'the daemon to stop',
      );
      await clock.advance(5_000);
      expect(count('Field daemon is satisfied.')).toBe(4);

      await example.cluster.store.delete(KEX, 'kopf-example-1', { namespace: 'default' });
      await eventually(() => example.cluster.store.get(KEX, 'kopf-example-1', 'default') === undefined, 'the object to be deleted');
    } finally {
      await runner.stop();
    }
    expect(runner.exitCode).toBe(0);
    expect(runner.exception).toBeNull();
    // The handlers whose filters never match the object never ran.
    for (const line of ['Annotation callback mismatch.', 'Filter not satisfied.', 'Field value is not satisfied.', 'Field presence is not satisfied.'])
      expect({ line, times: count(line) }).toEqual({ line, times: 0 });
    expect(messages().filter((m) => m.includes('failed'))).toEqual([
      'Creation is processed: 10 succeeded; 0 failed.',
      'Updating is processed: 1 succeeded; 0 failed.',
    ]);
  });
});
