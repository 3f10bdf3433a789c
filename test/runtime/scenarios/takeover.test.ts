/**
 * Scenario A-30: taking over objects as a Python Kopf 1.44 operator left them — fully handled,
 * in the middle of a change (progress in annotations, or in the legacy status storage with an
 * offset-less timestamp), and with a diff-base in the old spaced format — and leaving them in a
 * state that Kopf reads as handled.
 *
 * The hand-back to a real Python Kopf operator is not run here (no Python Kopf in the test
 * environment); instead, the state left behind is checked to be exactly what Kopf writes and
 * reads as "handled": the compact diff-base with the newline, no progress records.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import { Calls } from '../../../fixtures/operators/calls.js';
import * as takeover from '../../../fixtures/operators/a30-takeover.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as h from '../../support/scenarios.js';

type Json = Record<string, unknown>;

/** Python Kopf's timestamps: UTC, microseconds, `+00:00` (or without an offset, as legacy records). */
function pythonTime(ms: number, offset = true): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, `.$1000${offset ? '+00:00' : ''}`);
}

const ESSENCE = {
  spec: { duration: '1m', field: 'value', items: ['item1', 'item2'] },
  metadata: { labels: { somelabel: 'somevalue' }, annotations: { someannotation: 'somevalue' } },
};
const DELAY_MS = 2000;

function prepared(name: string, annotations: Record<string, string>): Json {
  const body = h.referenceObject({ name });
  const meta = body['metadata'] as { annotations: Record<string, string>; finalizers?: string[] };
  meta.annotations = { ...meta.annotations, ...annotations };
  meta.finalizers = [h.FINALIZER];
  return body;
}

function progressKeys(body: Json | undefined): string[] {
  return Object.keys(h.annotationsOf(body)).filter((key) => key.startsWith('kopf.zalando.org/') && key !== h.LHC);
}

describe('takeover from Python Kopf', () => {
  let cluster: DevCluster;

  beforeAll(async () => {
    cluster = await h.startCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('A-30 continues where Kopf stopped and leaves what Kopf reads as handled', async () => {
    const now = Date.now();
    const done1 = JSON.stringify({
      started: pythonTime(now - 60_000),
      stopped: pythonTime(now - 59_000),
      purpose: 'create',
      retries: 1,
      success: true,
      failure: false,
    });
    const delayed2 = {
      started: '2024-01-01T00:00:00.000000+00:00',
      delayed: pythonTime(now + DELAY_MS),
      purpose: 'create',
      retries: 2,
      success: false,
      failure: false,
      message: 'Not yet.',
    };

    await cluster.store.create(prepared('kopf-example-a', { [h.LHC]: `${JSON.stringify(ESSENCE)}\n` }));
    await cluster.store.create(prepared('kopf-example-b', { 'kopf.zalando.org/create_fn_1': done1, 'kopf.zalando.org/create_fn_2': JSON.stringify(delayed2) }));
    await cluster.store.create(prepared('kopf-example-c', { 'kopf.zalando.org/create_fn_1': done1 }));
    const legacy = { ...delayed2, started: '2024-01-01T00:00:00.000000', delayed: pythonTime(now + DELAY_MS, false) };
    await cluster.store.patch(
      h.KEX,
      'kopf-example-c',
      { status: { kopf: { progress: { create_fn_2: legacy } } } },
      { namespace: 'default', subresource: 'status' },
    );
    const spaced =
      '{"spec": {"duration": "1m", "field": "value", "items": ["item1", "item2"]}, "metadata": {"labels": {"somelabel": "somevalue"}, "annotations": {"someannotation": "somevalue"}}}';
    await cluster.store.create(prepared('kopf-example-d', { [h.LHC]: spaced }));
    const rvA = (h.getObject(cluster, 'kopf-example-a')!['metadata'] as Json)['resourceVersion'];

    const calls = new Calls();
    const since = cluster.requests.all.length;
    const op = await h.startOperator(cluster, { registry: takeover.register(new OperatorRegistry(), calls) });
    for (const name of ['kopf-example-b', 'kopf-example-c']) {
      await h.eventually(() => h.annotationsOf(h.getObject(cluster, name))[h.LHC] !== undefined, `the diff-base of ${name}`, 10_000);
    }
    // Every object at rest: its last line is the end of a cycle that changed nothing, so every patch
    // of the handling (the status one after the main one included) came back before it.
    const atRest = (name: string): boolean => op.output.entries.filter((e) => e.object === `default/${name}`).at(-1)?.message === h.AT_REST;
    for (const name of ['kopf-example-a', 'kopf-example-b', 'kopf-example-c']) await h.eventually(() => atRest(name), `${name} at rest`);

    // (a) fully handled: nothing runs, nothing is patched.
    expect(calls.all.filter((call) => call.args['name'] === 'kopf-example-a')).toEqual([]);
    expect(h.patchesOf(cluster, { since, name: 'kopf-example-a' })).toEqual([]);
    expect((h.getObject(cluster, 'kopf-example-a')!['metadata'] as Json)['resourceVersion']).toBe(rvA);

    // (b) and (c): the finished handler is not re-run; the delayed one runs once, after its delay, as the 3rd attempt.
    for (const name of ['kopf-example-b', 'kopf-example-c']) {
      const mine = calls.all.filter((call) => call.args['name'] === name);
      expect(mine.map((call) => [call.id, call.args['retry']])).toEqual([['create_fn_2', 2]]);
      expect(mine[0]!.time).toBeGreaterThanOrEqual(now + DELAY_MS - 50);
      const final = h
        .patchesOf(cluster, { since, name })
        .filter((p) => !p.subresource && p.contentType === 'application/merge-patch+json')
        .pop()!;
      const annotations = (final.body as { metadata: { annotations: Record<string, unknown> } }).metadata.annotations;
      expect(annotations['kopf.zalando.org/create_fn_1']).toBeNull();
      expect(annotations[h.LHC]).toBe(`${JSON.stringify(ESSENCE)}\n`);
      if (name === 'kopf-example-b') expect(annotations['kopf.zalando.org/create_fn_2']).toBeNull();
      expect(progressKeys(h.getObject(cluster, name))).toEqual([]);
    }
    const statusC = h.getObject(cluster, 'kopf-example-c')!['status'] as { kopf?: { progress?: Json } } | undefined;
    expect(statusC?.kopf?.progress?.['create_fn_2']).toBeUndefined();
    const statusNulls = h.patchesOf(cluster, { since, name: 'kopf-example-c' }).filter((p) => p.subresource === 'status');
    expect(statusNulls.map((p) => p.body)).toContainEqual({ status: { kopf: { progress: { create_fn_2: null } } } });

    // (d) the spaced diff-base without the newline is the same essence: no update.
    expect(calls.all.filter((call) => call.args['name'] === 'kopf-example-d')).toEqual([]);
    expect(op.output.count('Updating is in progress')).toBe(0);

    // Hand-back: after an update of (a), the state is what Python Kopf writes and reads as handled.
    await h.mergePatch(cluster, { spec: { field: 'changed' } }, 'kopf-example-a');
    await op.output.waitFor('Updating is processed: 1 succeeded; 0 failed.');
    await h.eventually(() => h.annotationsOf(h.getObject(cluster, 'kopf-example-a'))[h.LHC]?.includes('changed') === true, 'the new diff-base');
    const handed = h.getObject(cluster, 'kopf-example-a');
    const changed = { ...ESSENCE, spec: { ...ESSENCE.spec, field: 'changed' } };
    expect(h.annotationsOf(handed)[h.LHC]).toBe(`${JSON.stringify(changed)}\n`);
    expect(progressKeys(handed)).toEqual([]);
    expect(h.finalizersOf(handed)).toEqual([h.FINALIZER]);

    for (const name of ['kopf-example-a', 'kopf-example-b', 'kopf-example-c', 'kopf-example-d']) await h.remove(cluster, name);
    await op.output.waitFor('Deleted, really deleted, and we are notified.', { times: 4 });
    expect(calls.count('delete_fn')).toBe(4);
    await op.stop();
    for (const name of ['a', 'b', 'c', 'd']) h.genericChecks(op, { object: `default/kopf-example-${name}`, deleted: true, deletionHandled: true });
  });
});
