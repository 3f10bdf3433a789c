/**
 * Scenarios A-8 (an optional deletion handler: no finalizer, no call) and A-38 (an unfinished
 * update superseded by the deletion).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import { Calls } from '../../../fixtures/operators/calls.js';
import * as optional from '../../../fixtures/operators/a08-optional-deletion.js';
import * as superseded from '../../../fixtures/operators/a38-superseded.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as h from '../../support/scenarios.js';

describe('deletion', () => {
  let cluster: DevCluster;

  beforeAll(async () => {
    cluster = await h.startCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('A-8 an optional deletion handler adds no finalizer and is not called, with or without foreign finalizers', async () => {
    const calls = new Calls();
    const op = await h.startOperator(cluster, { registry: optional.register(new OperatorRegistry(), calls) });
    const since = cluster.requests.all.length;

    // Plain: created, handled (the diff-base is stored: the handler makes the object non-stealth), deleted.
    await h.apply(cluster, h.referenceObject());
    await h.eventually(() => h.annotationsOf(h.getObject(cluster))[h.LHC] !== undefined, 'the diff-base');
    await h.remove(cluster);
    await op.output.waitFor('Deleted, really deleted, and we are notified.');

    // Held by a foreign finalizer: the operator sees the deletion, but does not care.
    const held = h.referenceObject();
    (held['metadata'] as Record<string, unknown>)['finalizers'] = ['example.com/hold'];
    await h.apply(cluster, held);
    await h.eventually(() => h.annotationsOf(h.getObject(cluster))[h.LHC] !== undefined, 'the diff-base');
    await h.remove(cluster);
    await op.output.waitFor('Deletion, but we are done with it, and we do not care.');
    expect(h.getObject(cluster)).toBeDefined();
    await h.mergePatch(cluster, { metadata: { finalizers: null } });
    await op.output.waitFor('Deleted, really deleted, and we are notified.', { times: 2 });

    expect(calls.count('gone_fn')).toBe(0);
    const patches = h.patchesOf(cluster, { since });
    expect(patches.length).toBeGreaterThan(0);
    expect(patches.map((p) => JSON.stringify(p.body)).join('\n')).not.toContain(h.FINALIZER);
    expect(op.output.count('Adding the finalizer')).toBe(0);
    await op.stop();
    h.genericChecks(op, { deleted: true });
  });

  it('A-38 the deletion supersedes an unfinished update; the update is not retried', async () => {
    const calls = new Calls();
    const op = await h.startOperator(cluster, { registry: superseded.register(new OperatorRegistry(), calls) });
    await h.apply(cluster, h.referenceObject());
    await h.eventually(() => h.annotationsOf(h.getObject(cluster))[h.LHC] !== undefined, 'the diff-base');
    await h.mergePatch(cluster, { spec: { field: 'changed' } });
    await op.output.waitFor("Handler 'update_fn' failed temporarily: not yet");
    await op.output.waitFor('Sleeping for');
    expect(h.annotationsOf(h.getObject(cluster))['kopf.zalando.org/update_fn']).toContain('"purpose":"update"');

    await h.remove(cluster);
    await op.output.waitFor('Deleted, really deleted, and we are notified.');
    expect(op.output.count('Updating is superseded by deletion: 0 succeeded; 0 failed; 1 left to the moment.')).toBe(1);
    expect(calls.count('update_fn')).toBe(1);
    expect(calls.count('delete_fn')).toBe(1);
    expect(op.output.count('Removing the finalizer, thus allowing the actual deletion.')).toBe(1);
    const nulled = h.patchesOf(cluster).filter((p) => {
      const annotations = (p.body as { metadata?: { annotations?: Record<string, unknown> } }).metadata?.annotations ?? {};
      return 'kopf.zalando.org/update_fn' in annotations && annotations['kopf.zalando.org/update_fn'] === null;
    });
    expect(nulled).toHaveLength(1);
    await op.stop();
    h.genericChecks(op, { deleted: true, finalizerAdded: true, deletionHandled: true });
  });
});
