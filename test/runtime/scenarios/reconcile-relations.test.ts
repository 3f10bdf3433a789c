/**
 * Reconcile handlers and what they read besides their own object, through a real operator on a
 * devcluster over loopback (R-RECONCILE): a watched Secret referenced by name, Kopf's cause
 * handlers on the same resource, the call's own client writes whose watch echo beats their
 * response, an owned kind discovered only after the start, and a cluster-scoped reconciled kind
 * owning a namespaced one in an operator that serves only some namespaces. Every wait is on a
 * signal or on the operator coming to rest, never a real sleep that hopes nothing happens.
 */
import { describe, expect, it } from 'vitest';

import { builtins, on, OperatorRegistry, resource } from '../../../runtime/index.js';
import * as fx from '../../support/operators.js';
import { startVirtual } from '../../support/virtualtime.js';

type Json = Record<string, any>;
const KOPF_ANNOTATION = /^kopf\.zalando\.org\//;
const KOPF = resource<{ apiVersion: string; kind: string; metadata: Json }, Json, unknown, true>({
  group: 'kopf.dev',
  version: 'v1',
  plural: 'kopfexamples',
  kind: 'KopfExample',
  namespaced: true,
});
const KOPF_RESOURCE = { group: 'kopf.dev', version: 'v1', plural: 'kopfexamples', kind: 'KopfExample', namespaced: true } as never;
const ODDITIES = resource<{ apiVersion: string; kind: string; metadata: Json }, Json, unknown, true>({
  group: 'kopf.dev',
  version: 'v1',
  plural: 'oddities',
  kind: 'Oddity',
  namespaced: true,
});

/** Whether the operator's reconcile handlers have nothing queued, running or scheduled. */
function atRest(op: { readonly context: { readonly reconcilers?: { readonly size: number } } }): boolean {
  return (op.context.reconcilers?.size ?? 1) === 0;
}

describe('reconcile handlers and related objects', () => {
  const env = fx.clusterPerTest();

  it('R-RECONCILE-203: a watched Secret referenced by name reconciles its referrer when it appears and when it changes', async () => {
    const { cluster } = env;
    await cluster.store.create(fx.kopfExample('w', { spec: { secretName: 'creds' } }));
    await cluster.store.create(fx.kopfExample('other', { spec: { secretName: 'elsewhere' } }));
    const registry = new OperatorRegistry();
    const referrers = new Map<string, string>(); // secret name → referrer name (what the calls saw)
    const seen: string[] = [];
    on.reconcile(
      'kopfexamples',
      {
        registry,
        id: 'referrer',
        watches: [
          {
            resource: builtins.Secrets,
            map: (secret) => (referrers.has(secret.metadata?.name ?? '') ? { name: referrers.get(secret.metadata!.name!)! } : null),
          },
        ],
      },
      async ({ name, spec, client, namespace }) => {
        const secretName = String((spec as Json)['secretName']);
        referrers.set(secretName, name);
        const secret = await client.get(builtins.Secrets, secretName, { namespace: namespace ?? undefined }).catch(() => undefined);
        seen.push(`${name}:${secret?.data?.['token'] ?? 'missing'}`);
      },
    );
    const op = await startVirtual({ cluster, registry });
    try {
      await fx.eventually(() => seen.length === 2 && atRest(op), 'the resync');
      expect([...seen].sort()).toEqual(['other:missing', 'w:missing']);
      await cluster.store.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: 'default' }, data: { token: 'b25l' } });
      await fx.eventually(() => seen.length === 3 && atRest(op), 'the reconcile of the referrer');
      expect(seen[2]).toBe('w:b25l');
      await cluster.store.patch(
        { group: '', version: 'v1', resource: 'secrets' },
        'creds',
        { data: { token: 'dHdv' } },
        { namespace: 'default', type: 'merge-patch' },
      );
      await fx.eventually(() => seen.length === 4 && atRest(op), 'the reconcile after the change');
      expect(seen[3]).toBe('w:dHdv');
      expect(seen.filter((s) => s.startsWith('other:'))).toEqual(['other:missing']);
    } finally {
      await op.stop();
    }
  });

  it("R-RECONCILE-214: with a cause handler on the same resource both run; Kopf's bookkeeping triggers a reconcile; the reconcile writes no Kopf annotations", async () => {
    const { cluster } = env;
    const registry = new OperatorRegistry();
    const release = fx.deferred();
    const created: string[] = [];
    const reconciled: { annotations: string[] }[] = [];
    on.create('kopfexamples', { registry, id: 'creation' }, async ({ name }) => {
      await release.promise;
      created.push(name);
    });
    on.reconcile('kopfexamples', { registry, id: 'level' }, ({ meta, patch }) => {
      reconciled.push({ annotations: Object.keys(meta.annotations ?? {}) });
      (patch as Json)['status'] = { level: reconciled.length };
    });
    const op = await startVirtual({ cluster, registry });
    try {
      await cluster.store.create(fx.kopfExample('both'));
      // The reconcile runs while Kopf's create handler is still held back: neither waits for the other.
      await fx.eventually(() => reconciled.length >= 1 && atRest(op), 'a reconcile call during the processing cycle');
      expect(created).toEqual([]);
      const before = reconciled.length;
      release.resolve();
      await fx.eventually(() => created.length === 1, 'the create handler');
      // Kopf's bookkeeping after the handler (its last-handled-configuration) is a change like any other.
      await fx.eventually(() => reconciled.some((call) => call.annotations.includes(fx.LHC)) && atRest(op), "a reconcile call after Kopf's bookkeeping");
      expect(reconciled.length).toBeGreaterThan(before);
      // What the reconcile handler sent: its status only, no Kopf annotation, no Kopf finalizer.
      const sent = cluster.requests.all
        .filter((r) => r.method === 'PATCH' && r.resource === 'kopfexamples' && r.name === 'both' && r.body?.includes('"level"'))
        .map((r) => JSON.parse(r.body!) as Json);
      expect(sent.length).toBeGreaterThanOrEqual(1);
      for (const body of sent) {
        expect(Object.keys(body)).toEqual(['status']);
        expect(Object.keys(body['status'])).toEqual(['level']);
      }
      const body = cluster.store.get(fx.KEX, 'both', 'default') as Json;
      expect(
        Object.keys(body['metadata']['annotations'] ?? {}).filter((key) => KOPF_ANNOTATION.test(key) && !key.endsWith('last-handled-configuration')),
      ).toEqual([]);
      expect(body['metadata']['finalizers'] ?? []).toEqual([]);
    } finally {
      await op.stop();
    }
  });

  it("R-RECONCILE-211 R-CACHE-801: a client write of the call's own object is no trigger even when its watch echo arrives before its response", async () => {
    const { cluster } = env;
    await cluster.store.create(fx.kopfExample('echo'));
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    on.reconcile('kopfexamples', { registry, id: 'labeller' }, async ({ name, client, namespace, labels }) => {
      calls.push(`${name}:${labels['touched'] ?? '-'}`);
      if (labels['touched'] === undefined) await client.patch(KOPF, name, { metadata: { labels: { touched: 'yes' } } }, { namespace: namespace ?? undefined });
    });
    // The response of the label patch comes late: the watch's echo of it is in the cache first.
    const late = cluster.faults.add({ method: 'PATCH', resource: 'kopfexamples', name: 'echo', delay: { afterMs: 300 } });
    const op = await startVirtual({ cluster, registry });
    try {
      await fx.eventually(() => late.applied() === 1 && atRest(op), 'the labelling call and rest');
      expect(op.context.cache?.get(KOPF_RESOURCE, 'default', 'echo')?.metadata?.labels?.['touched']).toBe('yes');
      expect(calls).toEqual(['echo:-']);
    } finally {
      late.remove();
      await op.stop();
    }
  });

  it('R-RECONCILE-802: no call starts before every owned kind is discovered; the first call sees the children', async () => {
    const { cluster } = env;
    const parent = (await cluster.store.create(fx.kopfExample('late'))) as Json;
    const registry = new OperatorRegistry();
    const owned: number[] = [];
    on.reconcile('kopfexamples', { registry, id: 'owner', owns: [ODDITIES] }, ({ owned: [oddities] }) => {
      owned.push(oddities.length);
    });
    // The listing of the new kind comes late, so that the child surely exists when it is served.
    const slow = cluster.faults.add({ resource: 'oddities', verb: 'list', delay: { beforeMs: 200 } });
    const logs = new fx.LogCapture().install();
    const op = await startVirtual({ cluster, registry });
    try {
      await fx.eventually(() => logs.grep("Reconcile handler 'owner' waits for", fx.INFO).length === 1, 'the wait to be logged');
      expect(logs.grep("Reconcile handler 'owner' waits for", fx.INFO)[0]).toContain("plural='oddities'");
      expect(owned).toEqual([]);
      await cluster.load(fx.ODDITIES_CRD);
      await cluster.store.create({
        apiVersion: 'kopf.dev/v1',
        kind: 'Oddity',
        metadata: {
          name: 'late-child',
          namespace: 'default',
          ownerReferences: [{ apiVersion: 'kopf.dev/v1', kind: 'KopfExample', name: 'late', uid: parent['metadata']['uid'], controller: true }],
        },
      });
      await fx.eventually(() => owned.length >= 1 && atRest(op), 'the first call');
      expect(owned).toEqual([1]);
    } finally {
      slow.remove();
      logs.uninstall();
      await op.stop();
    }
  });

  it('R-RECONCILE-803: a cluster-scoped kind owning a namespaced one is reconciled when the operator serves only some namespaces', async () => {
    const { cluster } = env;
    const namespace = cluster.store.get({ group: '', version: 'v1', resource: 'namespaces' }, 'default') as Json;
    await cluster.store.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'marker',
        namespace: 'default',
        ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: 'default', uid: namespace['metadata']['uid'], controller: true }],
      },
    });
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    on.reconcile(builtins.Namespaces, { registry, id: 'spaces', owns: [builtins.ConfigMaps] }, ({ name, namespace: none, owned: [maps] }) => {
      calls.push(`${name}:${String(none)}:${maps.map((map) => map.metadata?.name).join(',')}`);
    });
    const op = await fx.startOperator({ cluster, registry, namespaces: ['default'], waitForWatch: 'configmaps' });
    try {
      await fx.eventually(() => calls.some((call) => call.startsWith('default:')) && atRest(op), 'the reconcile of the namespace');
      expect(calls.filter((call) => call.startsWith('default:'))).toEqual(['default:null:marker']);
    } finally {
      await op.stop();
    }
  });
});
