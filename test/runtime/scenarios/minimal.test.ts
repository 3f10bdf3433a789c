/**
 * Scenarios A-1 (minimal creation) and A-2 (restart without changes) against a devcluster, with
 * the operator of fixtures/operators/a01-minimal.ts (for A-1 loaded as `kopf run <module>` would).
 */
import * as path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import { Calls, shared } from '../../../fixtures/operators/calls.js';
import * as minimal from '../../../fixtures/operators/a01-minimal.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as h from '../../support/scenarios.js';

const MODULE = path.join(h.ROOT, 'fixtures/operators/a01-minimal-main.ts');
const ESSENCE =
  '{"spec":{"duration":"1m","field":"value","items":["item1","item2"]},' +
  '"metadata":{"labels":{"somelabel":"somevalue"},"annotations":{"someannotation":"somevalue"}}}\n';

describe('the minimal operator', () => {
  let cluster: DevCluster;
  const calls = new Calls();
  const registry = minimal.register(new OperatorRegistry(), calls);

  beforeAll(async () => {
    cluster = await h.startCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('A-1 handles the creation once, stores the result and the diff-base, then lets the object go', async () => {
    // As `kopf run <module>`: the module registers its handlers when loaded.
    const op = await h.startOperator(cluster, { registry: new OperatorRegistry(), paths: [MODULE] });
    await h.apply(cluster, h.referenceObject());
    await op.output.waitFor('Something has changed, but we are not interested');

    const stored = h.getObject(cluster)!;
    expect(shared.count('create_fn')).toBe(1);
    expect((stored['status'] as Record<string, unknown>)['create_fn']).toEqual({ message: 'hello world' });
    expect(h.annotationsOf(stored)[h.LHC]).toBe(ESSENCE);
    expect((stored['metadata'] as { finalizers?: unknown }).finalizers).toBeUndefined();
    const patches = h.patchesOf(cluster).map((p) => JSON.stringify(p.body));
    expect(patches.length).toBeGreaterThan(0);
    expect(patches.join('\n')).not.toContain('kopf.zalando.org/create_fn');
    expect(patches.join('\n')).not.toContain(h.FINALIZER);
    expect(op.output.count("Handler 'create_fn' succeeded.")).toBe(1);
    expect(op.output.count('Creation is processed: 1 succeeded; 0 failed.')).toBe(1);

    await h.remove(cluster);
    await op.output.waitFor('Deleted, really deleted, and we are notified.');
    expect(h.getObject(cluster)).toBeUndefined();
    expect(shared.count('create_fn')).toBe(1);
    expect(h.eventsAbout(cluster).filter((e) => e['reason'] === 'Logging')).toEqual([]);
    await op.stop();
    h.genericChecks(op, { created: true, deleted: true });
  });

  it('A-2 resumes without handlers and without patches after a restart', async () => {
    const first = await h.startOperator(cluster, { registry });
    await h.apply(cluster, h.referenceObject());
    await first.output.waitFor('Creation is processed:');
    await first.output.waitFor('Something has changed, but we are not interested');
    await first.stop();
    const invoked = calls.count('create_fn');
    const rv = (h.getObject(cluster)!['metadata'] as { resourceVersion: string }).resourceVersion;
    const since = cluster.requests.all.length;

    const second = await h.startOperator(cluster, { registry });
    await second.output.waitFor('Resuming is in progress:');
    await second.output.waitFor(h.AT_REST); // the resuming cycle is over: nothing may follow it
    expect(second.output.linesWith('[default/kopf-example-1] Resuming is in progress:')).toHaveLength(1);
    expect(calls.count('create_fn')).toBe(invoked);
    expect(h.patchesOf(cluster, { since })).toEqual([]);
    expect((h.getObject(cluster)!['metadata'] as { resourceVersion: string }).resourceVersion).toBe(rv);
    await h.remove(cluster);
    await second.output.waitFor('Deleted, really deleted, and we are notified.');
    await second.stop();
    h.genericChecks(second, { deleted: true });
  });
});
