/**
 * Scenario A-36: namespace patterns (R-SCOPE-2..4) — globs with exclusions and re-inclusions,
 * namespaces created and deleted while the operator runs, and the fallback to the plain names
 * among the patterns when namespaces may not be listed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import { Calls } from '../../../fixtures/operators/calls.js';
import * as minimal from '../../../fixtures/operators/a01-minimal.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as h from '../../support/scenarios.js';

const NAMESPACES = ['myapp-live', 'myapp-pr-123', 'myapp-pr-456', 'otherapp-pr-123'];

async function createNamespace(cluster: DevCluster, name: string): Promise<void> {
  await cluster.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

/** The namespaces in which the object of that name was handled (its creation processed). */
function handledIn(op: h.RunningOperator, name: string): string[] {
  return op.output
    .matching('Creation is processed:')
    .filter((e) => e.object?.endsWith(`/${name}`))
    .map((e) => e.object!.split('/')[0]!)
    .sort();
}

/**
 * The namespaces whose kopfexamples watchers were started. The first watchers start together once
 * the served namespaces are known, so when the expected ones have started, a wrongly served
 * namespace would be in this list too: the explicit signal that replaces a quiet period.
 */
function watchersIn(op: h.RunningOperator): string[] {
  return op.output
    .matching(/^Starting the watcher for kopfexamples\.v1\.kopf\.dev@/)
    .map((e) => /@(\S+)\.$/.exec(e.message)![1]!)
    .sort();
}

/** Waits until the object of that name is at rest (its cycle over) in each of the namespaces. */
async function atRest(op: h.RunningOperator, name: string, namespaces: readonly string[]): Promise<void> {
  for (const namespace of namespaces) {
    await h.eventually(() => op.output.matching(h.AT_REST).some((e) => e.object === `${namespace}/${name}`), `${namespace}/${name} at rest`);
  }
}

describe('namespace patterns', () => {
  let cluster: DevCluster;
  const registry = minimal.register(new OperatorRegistry(), new Calls());

  beforeAll(async () => {
    cluster = await h.startCluster();
    for (const namespace of NAMESPACES) {
      await createNamespace(cluster, namespace);
      await h.apply(cluster, h.referenceObject({ namespace }));
    }
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('A-36 globs with exclusions serve the matching namespaces, also ones created at run time', async () => {
    const op = await h.startOperator(cluster, { registry, namespaces: ['myapp-*,!*-pr-*,*-pr-123'] });
    await h.eventually(() => handledIn(op, 'kopf-example-1').length >= 2, 'two objects handled');
    await atRest(op, 'kopf-example-1', ['myapp-live', 'myapp-pr-123']);
    expect(watchersIn(op)).toEqual(['myapp-live', 'myapp-pr-123']);
    expect(handledIn(op, 'kopf-example-1')).toEqual(['myapp-live', 'myapp-pr-123']);

    await createNamespace(cluster, 'myapp-dev');
    await h.apply(cluster, h.referenceObject({ namespace: 'myapp-dev' }));
    await h.eventually(() => handledIn(op, 'kopf-example-1').includes('myapp-dev'), 'the object in the new namespace', 10_000);
    await op.stop();
    expect(handledIn(op, 'kopf-example-1')).toEqual(['myapp-dev', 'myapp-live', 'myapp-pr-123']);
    for (const namespace of ['myapp-dev', 'myapp-live', 'myapp-pr-123']) h.genericChecks(op, { object: `${namespace}/kopf-example-1`, created: true });
  });

  it('A-36 without permission to list namespaces, only the plain names among the patterns are served', async () => {
    cluster.auth.authorizer.setRules([{ effect: 'deny', apiGroups: [''], resources: ['namespaces'], verbs: ['list', 'watch'] }]);
    try {
      const since = cluster.requests.all.length;
      const op = await h.startOperator(cluster, {
        registry,
        namespaces: ['myapp-live', 'myapp-*'],
        configure: (settings) => {
          settings.networking.errorBackoffs = [0.1];
        }, // short back-offs for the other requests (403s are not retried: R-SEC-1)
      });
      // After the fallback the namespaces are not observed any more; the watcher of the served one is the last thing to start.
      await op.output.waitFor('Not enough permissions to list namespaces.');
      await cluster.requests.waitFor(
        (r) => r.resource === 'kopfexamples' && r.verb === 'watch' && r.namespace === 'myapp-live' && cluster.requests.all.indexOf(r) >= since,
        10_000,
      );
      expect(watchersIn(op)).toEqual(['myapp-live']);
      await op.stop();
      expect(
        op.output
          .matching('Not enough permissions to list namespaces. ' + "Falling back to a list of namespaces which are assumed to exist: ['myapp-live']")
          .map((e) => e.level),
      ).toEqual(['WARNING']);
      const served = cluster.requests.all.slice(since).filter((r) => r.resource === 'kopfexamples' && (r.verb === 'watch' || r.verb === 'list'));
      expect(served.length).toBeGreaterThan(0);
      expect([...new Set(served.map((r) => r.namespace))]).toEqual(['myapp-live']);
      h.genericChecks(op, { skipG6: true }); // the client logs the refused requests with their traces
    } finally {
      cluster.auth.authorizer.setRules([]);
    }
  });

  it('A-36 a leading exclusion means "all but"; deleting a served namespace stops its watcher', async () => {
    const op = await h.startOperator(cluster, { registry, namespaces: ['!*-pr-*,*pr-123'] });
    for (const namespace of [...NAMESPACES, 'myapp-dev']) await h.apply(cluster, h.referenceObject({ name: 'kopf-example-2', namespace }));
    await h.eventually(() => handledIn(op, 'kopf-example-2').length >= 4, 'four objects handled', 10_000);
    await atRest(op, 'kopf-example-2', ['myapp-dev', 'myapp-live', 'myapp-pr-123', 'otherapp-pr-123']);
    expect(watchersIn(op)).toEqual(expect.arrayContaining(['myapp-dev', 'myapp-live', 'myapp-pr-123', 'otherapp-pr-123']));
    expect(watchersIn(op)).not.toContain('myapp-pr-456');
    expect(handledIn(op, 'kopf-example-2')).toEqual(['myapp-dev', 'myapp-live', 'myapp-pr-123', 'otherapp-pr-123']);

    await cluster.store.delete(h.NAMESPACES, 'myapp-live');
    await op.output.waitFor('Stopping the watcher for kopfexamples.v1.kopf.dev@myapp-live.', { timeoutMs: 10_000 });
    await op.stop();
    h.genericChecks(op, { object: 'otherapp-pr-123/kopf-example-2', created: true });
  });
});
