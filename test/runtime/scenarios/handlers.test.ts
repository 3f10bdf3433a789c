/**
 * Scenarios with the port of the original's `05-handlers` example
 * (fixtures/operators/a03-handlers.ts): creation while the operator was down, a change while it
 * was down (update with resume handlers mixed in), an update with diffs, and a deletion with
 * handlers and the finalizer. A-4 continues from A-3's object; A-7 from A-6's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import * as handlers from '../../../fixtures/operators/a03-handlers.js';
import { Calls } from '../../../fixtures/operators/calls.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as h from '../../support/scenarios.js';

type Args = Record<string, unknown>;

describe('the handlers example', () => {
  let cluster: DevCluster;
  const calls = new Calls();
  const registry = handlers.register(new OperatorRegistry(), calls);

  beforeAll(async () => {
    cluster = await h.startCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('A-3 creation during downtime: create and field handlers, one per cycle, after the finalizer', async () => {
    await h.apply(cluster, h.referenceObject());
    const op = await h.startOperator(cluster, { registry });
    await op.output.waitFor('Creation is processed:');
    await op.output.waitFor('Something has changed, but we are not interested');
    await op.stop();

    expect(calls.ids).toEqual(['create_fn_1', 'create_fn_2', 'field_fn']);
    expect(op.output.matching(/^(CREATED|RESUMED|FIELD CHANGED)/).map((e) => e.message)).toEqual([
      'CREATED 1st',
      'CREATED 2nd',
      'FIELD CHANGED: null -> value',
    ]);
    // Each handler in its own cycle: a different version of the object each time.
    const versions = calls.all.map((call) => call.args['resourceVersion']);
    expect(new Set(versions).size).toBe(3);
    // The finalizer first: its JSON-patch is the first patch; every handler saw the finalizer.
    const patches = h.patchesOf(cluster);
    expect(patches[0]!.contentType).toBe('application/json-patch+json');
    expect(patches[0]!.body).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: expect.any(String) },
      { op: 'add', path: '/metadata/finalizers', value: [h.FINALIZER] },
    ]);
    for (const call of calls.all) expect(call.args['finalizers']).toEqual([h.FINALIZER]);
    expect(op.output.count('Creation is processed: 3 succeeded; 0 failed.')).toBe(1);
    expect(op.output.count('Resuming is in progress')).toBe(0);
    h.genericChecks(op, { created: true, finalizerAdded: true });
  });

  it('A-4 change during downtime: an update with the resume handlers mixed in; then a plain resume', async () => {
    calls.all.length = 0;
    await h.mergePatch(cluster, { spec: { field: 'changed' } });
    const op = await h.startOperator(cluster, { registry });
    await op.output.waitFor('Updating is processed:');
    await op.output.waitFor('Something has changed, but we are not interested');
    await op.stop();
    expect(calls.ids).toEqual(['resume_fn_1', 'resume_fn_2', 'update_fn', 'field_fn']);
    expect(new Set(calls.all.map((call) => call.args['resourceVersion'])).size).toBe(4);
    expect(op.output.count('FIELD CHANGED: value -> changed')).toBe(1);
    expect(op.output.count('Updating is processed: 4 succeeded; 0 failed.')).toBe(1);
    h.genericChecks(op);

    calls.all.length = 0;
    const again = await h.startOperator(cluster, { registry });
    await again.output.waitFor('Resuming is processed:');
    await again.output.waitFor(h.AT_REST);
    await again.stop();
    expect(calls.ids).toEqual(['resume_fn_1', 'resume_fn_2']);
    expect(again.output.count('Resuming is processed: 2 succeeded; 0 failed.')).toBe(1);
    h.genericChecks(again);
    await h.purge(cluster);
  });

  describe('with the object handled by a running operator', () => {
    let op: h.RunningOperator;

    it('A-6 an update gets the essences and the diffs, also per field', async () => {
      op = await h.startOperator(cluster, { registry });
      await h.apply(cluster, h.referenceObject());
      await op.output.waitFor('Creation is processed:');
      await op.output.waitFor('Something has changed, but we are not interested');
      calls.all.length = 0;

      await h.mergePatch(cluster, { spec: { field: 'changed' } });
      await op.output.waitFor('Updating is processed:');
      expect(calls.ids).toEqual(['update_fn', 'field_fn']);
      const update = calls.of('update_fn')[0]!.args;
      expect(update['diff']).toEqual([['change', ['spec', 'field'], 'value', 'changed']]);
      const old = update['old'] as Args;
      const now = update['new'] as Args;
      expect((old['spec'] as Args)['field']).toBe('value');
      expect((now['spec'] as Args)['field']).toBe('changed');
      for (const essence of [old, now]) {
        expect(Object.keys(essence).sort()).toEqual(['metadata', 'spec']);
        expect(essence['metadata']).toEqual({ labels: { somelabel: 'somevalue' }, annotations: { someannotation: 'somevalue' } });
      }
      const field = calls.of('field_fn')[0]!.args;
      expect(field['old']).toBe('value');
      expect(field['new']).toBe('changed');
      expect(field['diff']).toEqual([['change', [], 'value', 'changed']]);
      await op.output.waitFor('Something has changed, but we are not interested', { times: 2 });
      expect(h.annotationsOf(h.getObject(cluster))[h.LHC]).toContain('"field":"changed"');
    });

    it('A-7 a deletion runs the delete handlers one per cycle, then releases the finalizer', async () => {
      calls.all.length = 0;
      const since = cluster.requests.all.length;
      await h.remove(cluster);
      await op.output.waitFor('Deleted, really deleted, and we are notified.');
      expect(h.getObject(cluster)).toBeUndefined();
      expect(calls.ids).toEqual(['delete_fn_1', 'delete_fn_2']);
      expect(new Set(calls.all.map((call) => call.args['resourceVersion'])).size).toBe(2);
      expect(op.output.count('Deletion is processed: 2 succeeded; 0 failed.')).toBe(1);
      expect(op.output.count('Removing the finalizer, thus allowing the actual deletion.')).toBe(1);

      const patches = h.patchesOf(cluster, { since });
      // The first cycle stores the progress of both delete handlers with purpose "delete".
      const first = patches[0]!.body as { metadata: { annotations: Record<string, string> } };
      const record1 = JSON.parse(first.metadata.annotations['kopf.zalando.org/delete_fn_1']!) as Args;
      const record2 = JSON.parse(first.metadata.annotations['kopf.zalando.org/delete_fn_2']!) as Args;
      expect(record1).toMatchObject({ purpose: 'delete', retries: 1, success: true, failure: false });
      expect(record2).toMatchObject({ purpose: 'delete', retries: 0, success: false, failure: false });
      const last = patches[patches.length - 1]!;
      expect(last.contentType).toBe('application/json-patch+json');
      expect(last.body).toEqual([
        { op: 'test', path: '/metadata/resourceVersion', value: expect.any(String) },
        { op: 'remove', path: '/metadata/finalizers' },
      ]);
      await op.stop();
      h.genericChecks(op, { created: true, deleted: true, finalizerAdded: true, deletionHandled: true });
    });
  });
});
