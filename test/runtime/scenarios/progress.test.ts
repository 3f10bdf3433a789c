/**
 * Scenarios A-5 (several handlers, one per cycle, with visible progress: trace 4.3) and A-37 (long
 * handler ids and hashed annotation keys, R-STORAGE-6/7/11), audited on the PATCH requests the
 * devcluster received.
 *
 * Also scenario A-13 (the original's `07-subhandlers` example): sub-handlers per item, with the
 * parent's record listing them and each persisting its own progress (R-HANDLERS-13).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import * as twohandlers from '../../../fixtures/operators/a05-two-handlers.js';
import * as subhandlers from '../../../fixtures/operators/a13-subhandlers.js';
import * as longids from '../../../fixtures/operators/a37-long-ids.js';
import { Calls } from '../../../fixtures/operators/calls.js';
import * as diffbase from '../../../runtime/cogs/configs/diffbase.js';
import * as progress from '../../../runtime/cogs/configs/progress.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as h from '../../support/scenarios.js';

type Annotations = Record<string, string | null>;
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/;

function annotationsIn(body: unknown): Annotations {
  return (body as { metadata?: { annotations?: Annotations } }).metadata?.annotations ?? {};
}

describe('progress records', () => {
  let cluster: DevCluster;

  beforeAll(async () => {
    cluster = await h.startCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('A-5 two create handlers run one per cycle; the first patch shows the progress, the second purges it', async () => {
    const calls = new Calls();
    const op = await h.startOperator(cluster, { registry: twohandlers.register(new OperatorRegistry(), calls) });
    const since = cluster.requests.all.length;
    await h.apply(cluster, h.referenceObject());
    await op.output.waitFor('Creation is processed:');
    await op.output.waitFor('Something has changed, but we are not interested');
    await op.output.waitFor(h.AT_REST);

    const patches = h.patchesOf(cluster, { since });
    expect(patches.map((p) => [p.contentType, p.subresource ?? null])).toEqual([
      ['application/merge-patch+json', null],
      ['application/merge-patch+json', null],
    ]);
    // Cycle 1: A ran and succeeded; B is selected, not yet run (trace 4.3, step 1).
    const first = annotationsIn(patches[0]!.body);
    expect(Object.keys(first).sort()).toEqual(['kopf.zalando.org/A', 'kopf.zalando.org/B']);
    expect(Object.keys(patches[0]!.body as object)).toEqual(['metadata']);
    const a = JSON.parse(first['kopf.zalando.org/A']!) as Record<string, unknown>;
    const b = JSON.parse(first['kopf.zalando.org/B']!) as Record<string, unknown>;
    expect(Object.keys(a)).toEqual(['started', 'stopped', 'purpose', 'retries', 'success', 'failure']);
    expect(a).toMatchObject({ purpose: 'create', retries: 1, success: true, failure: false });
    expect(Object.keys(b)).toEqual(['started', 'purpose', 'retries', 'success', 'failure']);
    expect(b).toMatchObject({ purpose: 'create', retries: 0, success: false, failure: false });
    for (const stamp of [a['started'], a['stopped'], b['started']]) expect(stamp).toMatch(TIMESTAMP);
    expect(b['started']).toBe(a['started']);
    // Cycle 2: B ran; both records nulled and the diff-base written (trace 4.3, step 2).
    const second = annotationsIn(patches[1]!.body);
    expect(second['kopf.zalando.org/A']).toBeNull();
    expect(second['kopf.zalando.org/B']).toBeNull();
    expect(second[h.LHC]).toMatch(/^\{"spec":.*\}\n$/);
    expect(Object.keys(second).sort()).toEqual(['kopf.zalando.org/A', 'kopf.zalando.org/B', h.LHC].sort());

    expect(calls.ids).toEqual(['A', 'B']);
    expect(calls.of('A')[0]!.args['resourceVersion']).not.toBe(calls.of('B')[0]!.args['resourceVersion']);
    expect(op.output.count("Handler 'A' succeeded.")).toBe(1);
    expect(op.output.count("Handler 'B' succeeded.")).toBe(1);

    await h.remove(cluster);
    await op.output.waitFor('Deleted, really deleted, and we are notified.');
    await op.stop();
    h.genericChecks(op, { created: true, deleted: true });
  });

  it('A-37 long ids go to hashed V2 and V1 keys with identical values; all are nulled at the end', async () => {
    const calls = new Calls();
    const op = await h.startOperator(cluster, { registry: longids.register(new OperatorRegistry(), calls) });
    const since = cluster.requests.all.length;
    await h.apply(cluster, h.referenceObject());
    await op.output.waitFor('Creation is processed: 2 succeeded; 0 failed.', { timeoutMs: 15_000 });
    await op.output.waitFor('Something has changed, but we are not interested');

    // The test vectors of R-STORAGE-6 (prefix `kopf.zalando.org`).
    const keys = [
      { v1: `kopf.zalando.org/${'a'.repeat(39)}-koaVtw`, v2: `kopf.zalando.org/${'a'.repeat(50)}` },
      {
        v1: 'kopf.zalando.org/create_fn.spec.items.very-long-sub-hand-zlF-7g',
        v2: 'kopf.zalando.org/create_fn.spec.items.very-long-sub-handler-identifier-fo-1Zgo2w',
      },
    ];
    const written = h.patchesOf(cluster, { since }).map((p) => annotationsIn(p.body));
    for (const { v1, v2 } of keys) {
      const writes = written.filter((annotations) => typeof annotations[v2] === 'string');
      expect(writes.length).toBeGreaterThan(0);
      for (const annotations of writes) expect(annotations[v1]).toBe(annotations[v2]);
      const last = written.filter((annotations) => v2 in annotations).pop()!;
      expect(last[v2]).toBeNull();
      expect(last[v1]).toBeNull();
      expect(h.annotationsOf(h.getObject(cluster))[v2]).toBeUndefined();
      expect(h.annotationsOf(h.getObject(cluster))[v1]).toBeUndefined();
    }
    expect(calls.count(longids.LONG_IDS[0])).toBe(2);
    expect(calls.count(longids.LONG_IDS[1])).toBe(2);
    await h.purge(cluster);
    await op.output.waitFor('Deleted, really deleted, and we are notified.');
    await op.stop();
    h.genericChecks(op, { created: true, deleted: true });
  });

  it('A-37 a custom prefix marks its ownership once and stays out of the essence', async () => {
    const prefix = 'my-op.example.com';
    const calls = new Calls();
    const op = await h.startOperator(cluster, {
      registry: longids.register(new OperatorRegistry(), calls),
      configure: (settings) => {
        settings.persistence.progressStorage = new progress.AnnotationsProgressStorage({ prefix });
        settings.persistence.diffbaseStorage = new diffbase.AnnotationsDiffBaseStorage({ prefix });
      },
    });
    const since = cluster.requests.all.length;
    await h.apply(cluster, h.referenceObject());
    await op.output.waitFor('Creation is processed: 2 succeeded; 0 failed.', { timeoutMs: 15_000 });
    await op.output.waitFor('Something has changed, but we are not interested');

    const written = h.patchesOf(cluster, { since }).map((p) => annotationsIn(p.body));
    expect(written.filter((annotations) => `${prefix}/kopf-managed` in annotations).map((annotations) => annotations[`${prefix}/kopf-managed`])).toEqual([
      'yes',
    ]);
    const stored = h.annotationsOf(h.getObject(cluster));
    expect(stored[`${prefix}/kopf-managed`]).toBe('yes');
    const essence = JSON.parse(stored[`${prefix}/last-handled-configuration`]!) as { metadata: { annotations: Record<string, string> } };
    expect(essence.metadata.annotations).toEqual({ someannotation: 'somevalue' });
    // No update was ever detected from the operator's own annotations (no ping-pong).
    expect(op.output.count('Updating is in progress')).toBe(0);
    await h.purge(cluster);
    await op.output.waitFor('Deleted, really deleted, and we are notified.');
    await op.stop();
    h.genericChecks(op, { created: true, deleted: true });
  });
});

describe('sub-handlers', () => {
  let cluster: DevCluster;

  beforeAll(async () => {
    cluster = await h.startCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('A-13 the parent runs twice, each sub-handler once; the progress of all three is stored, then purged', async () => {
    const calls = new Calls();
    const op = await h.startOperator(cluster, { registry: subhandlers.register(new OperatorRegistry(), calls) });
    const since = cluster.requests.all.length;
    await h.apply(cluster, h.referenceObject());
    await op.output.waitFor('Creation is processed:');
    await op.output.waitFor('Something has changed, but we are not interested');

    expect(calls.count('create_fn')).toBe(2);
    expect(calls.count('create_fn/item1')).toBe(1);
    expect(calls.count('create_fn/item2')).toBe(1);
    expect(op.output.count("Handler 'create_fn/item1' succeeded.")).toBe(1);
    expect(op.output.count("Handler 'create_fn/item2' succeeded.")).toBe(1);
    expect(op.output.count('=== Handling creation for item1. ===')).toBe(1);
    expect(op.output.count('=== Handling creation for item2. ===')).toBe(1);
    expect(op.output.count('Creation is processed: 1 succeeded; 0 failed.')).toBe(1);

    const patches = h.patchesOf(cluster, { since }).map((p) => (p.body as { metadata?: { annotations?: Annotations } }).metadata?.annotations ?? {});
    const first = patches[0]!;
    const parent = JSON.parse(first['kopf.zalando.org/create_fn']!) as Record<string, unknown>;
    expect(parent).toMatchObject({ success: false, subrefs: ['create_fn/item1', 'create_fn/item2'] });
    expect(JSON.parse(first['kopf.zalando.org/create_fn.item1']!)).toMatchObject({ success: true });
    expect(JSON.parse(first['kopf.zalando.org/create_fn.item2']!)).toMatchObject({ retries: 0, success: false });
    const last = patches[patches.length - 1]!;
    for (const key of ['kopf.zalando.org/create_fn', 'kopf.zalando.org/create_fn.item1', 'kopf.zalando.org/create_fn.item2']) {
      expect(last[key]).toBeNull();
      expect(h.annotationsOf(h.getObject(cluster))[key]).toBeUndefined();
    }
    await h.remove(cluster);
    await op.output.waitFor('Deleted, really deleted, and we are notified.');
    await op.stop();
    h.genericChecks(op, { created: true, deleted: true });
  });
});
