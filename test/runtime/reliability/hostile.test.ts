/**
 * Hostile objects (R-STORAGE-16, R-PATCH-11): an object carrying a 200 KiB annotation, a status that
 * is not an object, 10,000 spec keys, 50 objects created and deleted within a second, and an object
 * the server stores but refuses to patch. Each is handled, or reported with one clear log line,
 * while a canary object of the same resource is handled as usual meanwhile; no object keeps its
 * finalizer, and no error reaches other objects.
 */
import { describe, expect, it } from 'vitest';
import * as bounds from '../../../runtime/cogs/configs/bounds.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

const LHC = 'kopf.zalando.org/last-handled-configuration';
const FINALIZER = 'kopf.zalando.org/KopfFinalizerMarker';
const CRDS = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' } as const;

type Json = Record<string, unknown>;
type Calls = { created: string[]; updated: { name: string; diff: unknown }[]; deleted: string[] };

/** Create, update and delete handlers of a resource that record what they were called for. */
function recordingRegistry(resource: string): { registry: OperatorRegistry; calls: Calls } {
  const registry = new OperatorRegistry();
  const calls: Calls = { created: [], updated: [], deleted: [] };
  on.create(resource, { registry }, function create_fn({ name }: { name: string }) {
    calls.created.push(name);
    return { created: true };
  });
  on.update(resource, { registry }, function update_fn({ name, diff }: { name: string; diff: unknown }) {
    calls.updated.push({ name, diff: JSON.parse(JSON.stringify(diff)) });
  });
  on.delete(resource, { registry }, function delete_fn({ name }: { name: string }) {
    calls.deleted.push(name);
  });
  return { registry, calls };
}

/** Waits until a canary created now is handled (its diff-base written), and returns how long it took. */
async function canaryHandled(cluster: fx.ClusterPerTest['cluster'], name: string, create: () => Promise<unknown>): Promise<number> {
  const started = Date.now();
  await create();
  await fx.eventually(() => fx.annotationsOf(cluster, name)[LHC] !== undefined, `the canary ${name}`);
  return Date.now() - started;
}

describe('hostile objects', () => {
  const suite = fx.clusterPerTest();
  const { logs } = suite;

  it('R-STORAGE-16 a 200 KiB annotation: handled with its diff-base bounded, one warning, changes detected, deletion completes', async () => {
    const { registry, calls } = recordingRegistry('kopfexamples');
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    const huge = 'h'.repeat(200 * 1024);
    await suite.cluster.store.create(fx.kopfExample('kex-huge', { metadata: { annotations: { huge } } }));
    const canary = await canaryHandled(suite.cluster, 'kex-canary', () => suite.cluster.store.create(fx.kopfExample('kex-canary')));
    await fx.eventually(() => fx.annotationsOf(suite.cluster, 'kex-huge')[LHC] !== undefined, 'the huge object handled');
    await fx.atRest(logs, 'kex-huge');

    const stored = JSON.parse(fx.annotationsOf(suite.cluster, 'kex-huge')[LHC]!) as { metadata: { annotations: Record<string, string> } };
    expect(bounds.isDigest(stored.metadata.annotations['huge'])).toBe(true);
    expect(stored.metadata).toEqual({ labels: { somelabel: 'somevalue' }, annotations: { huge: bounds.digestOf(huge) } });
    // An unchanged large value is no change; a change elsewhere is seen as it is, a change of the value as a changed digest.
    await suite.cluster.store.patch(fx.KEX, 'kex-huge', { spec: { field: 'changed' } }, { namespace: 'default' });
    await fx.eventually(() => calls.updated.length === 1, 'the update of the field');
    await fx.atRest(logs, 'kex-huge');
    await suite.cluster.store.patch(fx.KEX, 'kex-huge', { metadata: { annotations: { huge: 'H'.repeat(200 * 1024) } } }, { namespace: 'default' });
    await fx.eventually(() => calls.updated.length === 2, 'the update of the huge annotation');
    await fx.atRest(logs, 'kex-huge');

    await suite.cluster.store.delete(fx.KEX, 'kex-huge', { namespace: 'default' });
    await fx.eventually(() => suite.cluster.store.get(fx.KEX, 'kex-huge', 'default') === undefined, 'the deletion of the huge object');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(canary).toBeLessThan(5_000);
    expect(calls.created.sort()).toEqual(['kex-canary', 'kex-huge']);
    expect(calls.updated[0]).toEqual({ name: 'kex-huge', diff: [['change', ['spec', 'field'], 'value', 'changed']] });
    expect(calls.updated[1]).toEqual({
      name: 'kex-huge',
      diff: [['change', ['metadata', 'annotations', 'huge'], bounds.digestOf(huge), bounds.digestOf('H'.repeat(200 * 1024))]],
    });
    expect(calls.deleted).toEqual(['kex-huge']);
    const warnings = logs.lines(fx.WARNING);
    expect(warnings).toEqual([
      "[default/kex-huge] The operator's state does not fit this object as it is. The diff-base would exceed the API server's limit of 262144 bytes for all annotations of an object, so it is stored with 1 value as sha-256 digests (metadata.annotations.huge). (Logged once per object.)",
    ]);
    expect(logs.lines(fx.ERROR)).toEqual([]);
    // Every write the operator made was accepted.
    expect(suite.cluster.requests.filter((r) => r.method === 'PATCH' && r.code !== 200)).toEqual([]);
  });

  it('R-STORAGE-16 annotations so close to the limit that no diff-base fits: kept in memory, the handlers run once, not on every event', async () => {
    const { registry, calls } = recordingRegistry('kopfexamples');
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    // The object's own annotations leave less room than even a digest-only diff-base needs.
    const full = 'f'.repeat(bounds.ANNOTATIONS_LIMIT - 120);
    await suite.cluster.store.create(fx.kopfExample('kex-full', { metadata: { annotations: { full } } }));
    const canary = await canaryHandled(suite.cluster, 'kex-canary', () => suite.cluster.store.create(fx.kopfExample('kex-canary')));
    await fx.eventually(() => calls.created.includes('kex-full'), 'the full object handled');
    await fx.atRest(logs, 'kex-full');
    // A foreign change that is no change of the essence: its cycle ends at rest, nothing runs again.
    const before = logs.records.length;
    const ignored = { 'kubectl.kubernetes.io/last-applied-configuration': '{}' }; // not part of the essence
    await suite.cluster.store.patch(fx.KEX, 'kex-full', { metadata: { annotations: ignored } }, { namespace: 'default' });
    await fx.eventually(() => logs.records.slice(before).some((r) => r.line === `[default/kex-full] ${fx.AT_REST}`), 'the cycle of the foreign change at rest');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(canary).toBeLessThan(5_000);
    expect(fx.annotationsOf(suite.cluster, 'kex-full')[LHC]).toBeUndefined();
    expect(calls.created.sort()).toEqual(['kex-canary', 'kex-full']);
    expect(calls.updated).toEqual([]);
    expect(logs.lines(fx.WARNING)).toEqual([
      "[default/kex-full] The operator's state does not fit this object as it is. The diff-base would exceed the API server's limit of 262144 bytes for all annotations of an object even with its values as digests, so it is not stored (kept in memory). (Logged once per object.)",
    ]);
  });

  it('R-STORAGE-16 a deletion whose patch the server refuses as too long still releases the finalizer, with a warning', async () => {
    const registry = new OperatorRegistry();
    const deleted: string[] = [];
    on.create('kopfexamples', { registry }, function create_fn() {});
    on.delete('kopfexamples', { registry }, function delete_fn({ name, patch }: { name: string; patch: { metadata: { annotations: Json } } }) {
      deleted.push(name);
      // Nothing the operator can shrink: the handler's own write breaks the annotations' limit.
      if (name === 'kex-overflow') patch.metadata.annotations['overflow'] = 'o'.repeat(300 * 1024);
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    await suite.cluster.store.create(fx.kopfExample('kex-overflow'));
    await suite.cluster.store.create(fx.kopfExample('kex-canary'));
    await fx.eventually(
      () => fx.annotationsOf(suite.cluster, 'kex-overflow')[LHC] !== undefined && fx.annotationsOf(suite.cluster, 'kex-canary')[LHC] !== undefined,
      'both handled',
    );
    await suite.cluster.store.delete(fx.KEX, 'kex-overflow', { namespace: 'default' });
    await suite.cluster.store.delete(fx.KEX, 'kex-canary', { namespace: 'default' });
    await fx.eventually(() => suite.cluster.store.list(fx.KEX, 'default').length === 0, 'both deleted');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(deleted.sort()).toEqual(['kex-canary', 'kex-overflow']);
    expect(logs.lines(fx.WARNING)).toEqual([
      `[default/kex-overflow] The server refused to store the operator's state: KopfExample.kopf.dev "kex-overflow" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes: ` +
        `patch kopf.dev/v1/kopfexamples "kex-overflow" in namespace "default" (PATCH ${suite.cluster.url}/apis/kopf.dev/v1/namespaces/default/kopfexamples/kex-overflow). Releasing the finalizer without it.`,
    ]);
    expect(logs.lines(fx.ERROR)).toEqual([]);
  });

  it('R-KWARGS-1 a status that is a string or a list: handled, the result replaces it, deletion completes', async () => {
    await suite.cluster.load(fx.ODDITIES_CRD);
    const { registry, calls } = recordingRegistry('oddities');
    const op = await fx.startOperator({ cluster: suite.cluster, registry, waitForWatch: 'oddities' });
    const oddity = (name: string, status: unknown): Json => ({
      apiVersion: 'kopf.dev/v1',
      kind: 'Oddity',
      metadata: { name, namespace: 'default' },
      spec: { a: 1 },
      status,
    });
    const stored = (name: string): Json | undefined => suite.cluster.store.get(fx.ODD, name, 'default') as Json | undefined;
    const handled = (name: string): boolean => (stored(name)?.['metadata'] as { annotations?: Json } | undefined)?.annotations?.[LHC] !== undefined;
    await suite.cluster.store.create(oddity('text-status', 'text'));
    await suite.cluster.store.create(oddity('list-status', [1, 2]));
    const started = Date.now();
    await suite.cluster.store.create(oddity('canary', { ok: true }));
    await fx.eventually(() => handled('canary'), 'the canary');
    const canary = Date.now() - started;
    await fx.eventually(() => handled('text-status') && handled('list-status'), 'the odd ones');
    for (const name of ['text-status', 'list-status']) {
      expect(stored(name)!['status']).toEqual({ create_fn: { created: true } });
      await suite.cluster.store.delete(fx.ODD, name, { namespace: 'default' });
    }
    await fx.eventually(() => stored('text-status') === undefined && stored('list-status') === undefined, 'both deleted');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(canary).toBeLessThan(5_000);
    expect(calls.created.sort()).toEqual(['canary', 'list-status', 'text-status']);
    expect(calls.deleted.sort()).toEqual(['list-status', 'text-status']);
    expect(logs.lines(fx.ERROR)).toEqual([]);
    expect(logs.lines(fx.WARNING)).toEqual([]);
  });

  it('R-ESSENCE-1 10,000 spec keys: handled, an update of one key is a diff of that key, deletion completes', async () => {
    const { registry, calls } = recordingRegistry('kopfexamples');
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    const spec = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`key-${i}`, `value-${i}`]));
    await suite.cluster.store.create(fx.kopfExample('kex-wide', { spec }));
    const canary = await canaryHandled(suite.cluster, 'kex-canary', () => suite.cluster.store.create(fx.kopfExample('kex-canary')));
    await fx.eventually(() => fx.annotationsOf(suite.cluster, 'kex-wide')[LHC] !== undefined, 'the wide object');
    await fx.atRest(logs, 'kex-wide');
    await suite.cluster.store.patch(fx.KEX, 'kex-wide', { spec: { 'key-5000': 'changed' } }, { namespace: 'default' });
    await fx.eventually(() => calls.updated.length === 1, 'the update');
    await suite.cluster.store.delete(fx.KEX, 'kex-wide', { namespace: 'default' });
    await fx.eventually(() => suite.cluster.store.get(fx.KEX, 'kex-wide', 'default') === undefined, 'the deletion');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(canary).toBeLessThan(5_000);
    expect(calls.updated).toEqual([{ name: 'kex-wide', diff: [['change', ['spec', 'key-5000'], 'value-5000', 'changed']] }]);
    expect(calls.deleted).toEqual(['kex-wide']);
    // Within the limits, the diff-base is the whole essence, as Kopf stores it.
    expect(logs.lines(fx.WARNING)).toEqual([]);
    expect(logs.lines(fx.ERROR)).toEqual([]);
  });

  it('R-QUEUE-6 50 objects created and deleted within a second: all handled or skipped, none left with a finalizer, none remembered', async () => {
    const { registry, calls } = recordingRegistry('kopfexamples');
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    const names = Array.from({ length: 50 }, (_, i) => `kex-flash-${i}`);
    const started = Date.now();
    for (const name of names) await suite.cluster.store.create(fx.kopfExample(name));
    for (const name of names) await suite.cluster.store.delete(fx.KEX, name, { namespace: 'default' });
    expect(Date.now() - started).toBeLessThan(1_000);
    const canary = await canaryHandled(suite.cluster, 'kex-canary', () => suite.cluster.store.create(fx.kopfExample('kex-canary')));
    await fx.eventually(() => suite.cluster.store.list(fx.KEX, 'default').length === 1, 'all flashes gone');
    await fx.eventually(() => op.context.memories.size === 1, 'only the canary remembered');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(canary).toBeLessThan(5_000);
    // A deletion handler runs only for an object that got the finalizer, and only once.
    for (const name of calls.deleted) expect(names).toContain(name);
    expect(new Set(calls.deleted).size).toBe(calls.deleted.length);
    expect(new Set(calls.created.filter((name) => name !== 'kex-canary')).size).toBe(calls.created.length - 1);
    expect(logs.lines(fx.ERROR)).toEqual([]);
    expect(logs.grep('Throttling')).toEqual([]);
    const left = suite.cluster.store.list(fx.KEX, 'default').map((body) => (body['metadata'] as { name: string }).name);
    expect(left).toEqual(['kex-canary']);
  });

  it('R-PATCH-11 an object the server stores but refuses to patch: one error with the reason per event, other objects go on', async () => {
    const registry = new OperatorRegistry();
    const created: string[] = [];
    on.create('kopfexamples', { registry }, function create_fn({ name }: { name: string }) {
      created.push(name);
    });
    // Only labelled objects get the finalizer: their first patch is the finalizer's JSON-patch.
    on.delete('kopfexamples', { registry, labels: { final: 'yes' } }, function delete_fn() {});
    const tooLong = 'a-value-longer-than-the-new-schema-allows';
    await suite.cluster.store.create(fx.kopfExample('kex-refused-json', { metadata: { labels: { final: 'yes' } }, spec: { field: tooLong } }));
    await suite.cluster.store.create(fx.kopfExample('kex-refused-merge', { spec: { field: tooLong } }));
    // The schema becomes stricter: the stored objects break it, and every write to them is refused.
    const crd = suite.cluster.store.get(CRDS, 'kopfexamples.kopf.dev') as { spec: { versions: Json[] } };
    const versions = structuredClone(crd.spec.versions) as { schema: { openAPIV3Schema: { properties: { spec: Json } } } }[];
    versions[0]!.schema.openAPIV3Schema.properties.spec['properties'] = { field: { type: 'string', maxLength: 10 } };
    await suite.cluster.store.patch(CRDS, 'kopfexamples.kopf.dev', { spec: { versions } });
    await suite.cluster.settle();

    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    const canary = await canaryHandled(suite.cluster, 'kex-canary', () =>
      suite.cluster.store.create(fx.kopfExample('kex-canary', { metadata: { labels: { final: 'yes' } } })),
    );
    await fx.eventually(() => logs.grep('The server refused to patch the object').length === 2, 'both refusals reported');
    await fx.atRest(logs, 'kex-canary');
    await op.stop();
    // Deleting needs no patch: the objects that broke the schema can go (they have no finalizer).
    await suite.cluster.store.delete(fx.KEX, 'kex-refused-json', { namespace: 'default' });
    await suite.cluster.store.delete(fx.KEX, 'kex-refused-merge', { namespace: 'default' });

    expect(op.error).toBeUndefined();
    expect(canary).toBeLessThan(5_000);
    const refusals = logs.records.filter((r) => r.message.startsWith('The server refused to patch the object'));
    expect(refusals.map((r) => r.level)).toEqual([fx.ERROR, fx.ERROR]);
    expect(refusals.map((r) => r.line).sort()).toEqual(
      ['kex-refused-json', 'kex-refused-merge'].map(
        (name) =>
          `[default/${name}] The server refused to patch the object: KopfExample.kopf.dev "${name}" is invalid: spec.field: Too long: may not be more than 10 bytes: ` +
          `patch kopf.dev/v1/kopfexamples "${name}" in namespace "default" (PATCH ${suite.cluster.url}/apis/kopf.dev/v1/namespaces/default/kopfexamples/${name}). Nothing is stored until the object changes.`,
      ),
    );
    // No finalizer could be added: no handler ran for that one; the other's ran once (and could not store its outcome).
    expect(created.sort()).toEqual(['kex-canary', 'kex-refused-merge']);
    expect(logs.grep('Throttling')).toEqual([]);
    expect(logs.grep('Could not apply the patch in full')).toEqual([]);
    expect(logs.lines(fx.ERROR).filter((line) => !line.includes('The server refused to patch the object'))).toEqual([]);
    expect((suite.cluster.store.get(fx.KEX, 'kex-canary', 'default') as { metadata: { finalizers: string[] } }).metadata.finalizers).toEqual([FINALIZER]);
  });
});
