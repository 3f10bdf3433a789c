/**
 * Watch-stream robustness as the operator sees it (R-WATCH-1..4, A-33): streams aborted in the
 * middle of handling, expired resource versions with compaction, bookmarks and fatal watch errors —
 * no event is lost, no handler runs twice after it succeeded, and the wire requests are as specified.
 */
import { describe, expect, it } from 'vitest';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

interface Kw {
  name: string;
  new?: unknown;
  old?: unknown;
}

/** An operator with a create and an update handler (on `spec.field`), recording invocations. */
function recordingRegistry(gate?: Promise<void>): { registry: OperatorRegistry; created: string[]; updated: string[] } {
  const registry = new OperatorRegistry();
  const created: string[] = [];
  const updated: string[] = [];
  on.create('kopfexamples', { registry }, async function create_fn({ name }: Kw) {
    await gate;
    created.push(name);
  });
  on.update('kopfexamples', { registry, field: 'spec.field' }, function update_fn({ name, old, new: now }: Kw) {
    updated.push(`${name}:${String(old)}->${String(now)}`);
  });
  return { registry, created, updated };
}

const query = (q: string): URLSearchParams => new URLSearchParams(q);

describe('watch-streams break while the operator works', () => {
  const suite = fx.clusterPerTest();
  const { logs } = suite;

  it('R-WATCH-4 A-33 a watch-stream aborted mid-handling loses no event and runs no handler twice after success', async () => {
    const gate = fx.deferred();
    const { registry, created, updated } = recordingRegistry(gate.promise);
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    const listsBefore = fx.listRequests(suite.cluster).length;
    // Every watch connection breaks (connection reset) after one event, three times in a row.
    suite.cluster.faults.add({ resource: 'kopfexamples', watch: true, times: 3, action: { watch: { endAfterEvents: 1, mode: 'abort' } } });
    suite.cluster.dropWatches({ resource: 'kopfexamples' }, 'end'); // the open stream predates the fault

    await suite.cluster.store.create(fx.kopfExample('kex-a'));
    await fx.eventually(() => logs.grep("Handler 'create_fn' is invoked.").length === 1, 'create_fn awaiting');
    // While the handler awaits and the stream is broken: another object, and a change of the first.
    await suite.cluster.store.create(fx.kopfExample('kex-b'));
    await suite.cluster.store.patch(fx.KEX, 'kex-a', { spec: { field: 'changed' } }, { namespace: 'default' });
    gate.resolve();

    await fx.eventually(() => updated.length === 1 && created.length === 2, 'both creations and the update');
    // The faults are used up and the stream that follows them is open; both objects are at rest.
    await fx.eventually(() => {
      const watches = fx.watchRequests(suite.cluster);
      return watches.filter((r) => r.fault).length === 3 && !watches.at(-1)!.fault;
    }, 'a watch after the three broken ones');
    for (const name of ['kex-a', 'kex-b']) await fx.atRest(logs, name);
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(fx.tally(created)).toEqual({ 'kex-a': 1, 'kex-b': 1 });
    expect(updated).toEqual(['kex-a:value->changed']);
    expect(logs.grep("Handler 'create_fn' succeeded.").sort()).toEqual([
      "[default/kex-a] Handler 'create_fn' succeeded.",
      "[default/kex-b] Handler 'create_fn' succeeded.",
    ]);
    expect(logs.grep("Handler 'update_fn/spec.field' succeeded.")).toEqual(["[default/kex-a] Handler 'update_fn/spec.field' succeeded."]);
    // Reconnects resume from the last seen version: no re-listing (R-WATCH-4).
    expect(fx.listRequests(suite.cluster).length).toBe(listsBefore);
    const watches = fx.watchRequests(suite.cluster);
    expect(watches.length).toBeGreaterThanOrEqual(5); // the first, after the drop, after 3 broken streams
    for (const watch of watches) {
      const params = query(watch.query);
      expect(params.get('watch')).toBe('true');
      expect(params.get('allowWatchBookmarks')).toBe('true');
      expect(params.get('resourceVersion')).toMatch(/^\d+$/);
    }
    const versions = watches.map((w) => Number(query(w.query).get('resourceVersion')));
    expect([...versions].sort((a, b) => a - b)).toEqual(versions); // never goes back in time
    // Each broken stream delivered one event; the reconnect after it starts from that event's version.
    expect(new Set(versions).size).toBeGreaterThanOrEqual(4);
    expect(logs.grep('Throttling')).toEqual([]);
  });

  it('R-WATCH-3 R-WATCH-4 A-33 an expired watch (410, compacted history) re-lists; changes made meanwhile are handled once, the rest is a no-op', async () => {
    const { registry, created, updated } = recordingRegistry();
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    await suite.cluster.store.create(fx.kopfExample('kex-a'));
    await suite.cluster.store.create(fx.kopfExample('kex-b'));
    await fx.eventually(() => logs.grep('Creation is processed: 1 succeeded; 0 failed.').length === 2, 'creations');
    await fx.eventually(() => logs.grep('Something has changed, but we are not interested').length >= 2, 'consistency');
    const listsBefore = fx.listRequests(suite.cluster).length;
    logs.clear();

    suite.cluster.compact();
    expect(suite.cluster.dropWatches({ resource: 'kopfexamples' }, 'expire')).toBe(1);
    await suite.cluster.store.patch(fx.KEX, 'kex-b', { spec: { field: 'changed' } }, { namespace: 'default' });
    await fx.eventually(() => updated.length === 1, 'the update after the re-listing');
    for (const name of ['kex-a', 'kex-b']) await fx.atRest(logs, name);
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(logs.grep('Restarting the watch-stream for kopfexamples.v1.kopf.dev cluster-wide.', fx.DEBUG)).toHaveLength(1);
    expect(fx.listRequests(suite.cluster).length).toBe(listsBefore + 1);
    expect(fx.tally(created)).toEqual({ 'kex-a': 1, 'kex-b': 1 });
    expect(updated).toEqual(['kex-b:value->changed']);
    // The unchanged object, seen again in the listing, is a no-op.
    expect(logs.grep('[default/kex-a] Something has changed, but we are not interested (the essence is the same).', fx.DEBUG)).toHaveLength(1);
    expect(logs.grep('[default/kex-a] Handler')).toEqual([]);
  });

  it('R-WATCH-3 A-33 bookmarks reach no handler and move the resource version of the next watch request', async () => {
    await suite.restartCluster({ bookmarkIntervalMs: 100 });
    const registry = new OperatorRegistry();
    const seen: string[] = [];
    on.event('kopfexamples', { registry }, function event_fn({ type, name }: { type: string | null; name: string }) {
      seen.push(`${String(type)} ${name}`);
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    await suite.cluster.store.create(fx.kopfExample('kex-a'));
    await fx.eventually(() => seen.length === 1, 'the ADDED event');
    // Changes elsewhere move the global revision; only a bookmark can tell the watcher.
    await suite.cluster.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'elsewhere', namespace: 'default' } });
    const revision = suite.cluster.revision;
    // Every open stream gets a bookmark with the current revision every 100 ms.
    await fx.eventually(() => suite.cluster.watchEvents.filter((e) => e.type === 'BOOKMARK' && Number(e.rv) >= revision).length >= 4, 'bookmarks');
    const watchesBefore = fx.watchRequests(suite.cluster).length;
    suite.cluster.dropWatches({ resource: 'kopfexamples' }, 'end');
    await fx.eventually(() => fx.watchRequests(suite.cluster).length > watchesBefore, 'a reconnect');
    await op.stop();

    expect(seen).toEqual(['ADDED kex-a']);
    const next = fx.watchRequests(suite.cluster)[watchesBefore]!;
    expect(Number(query(next.query).get('resourceVersion'))).toBeGreaterThanOrEqual(revision);
  });

  it('R-WATCH-5 A-33 a silent watch-stream is dropped after the inactivity timeout and resumed from the last version without losing events', async () => {
    const { registry, created } = recordingRegistry();
    const settings = fx.fastSettings((s) => {
      s.watching.inactivityTimeout = 0.5;
    });
    await suite.cluster.store.create(fx.kopfExample('kex-a'));
    const op = await fx.startOperator({ cluster: suite.cluster, registry, settings });
    await fx.eventually(() => created.length === 1, 'the first object');
    const watchesBefore = fx.watchRequests(suite.cluster).length;
    // The next watch connection is accepted but stays silent (no events, no bookmarks).
    suite.cluster.faults.add({ resource: 'kopfexamples', watch: true, times: 1, action: { watch: { stall: true } } });
    suite.cluster.dropWatches({ resource: 'kopfexamples' }, 'end');
    await fx.eventually(() => fx.watchRequests(suite.cluster).length === watchesBefore + 1, 'the stalled watch');
    await suite.cluster.store.create(fx.kopfExample('kex-b'));
    await fx.eventually(() => created.length === 2, 'the object created while the stream was silent', 5000);
    for (const name of ['kex-a', 'kex-b']) await fx.atRest(logs, name);
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(fx.tally(created)).toEqual({ 'kex-a': 1, 'kex-b': 1 });
    expect(logs.grep('Watch-stream for kopfexamples.v1.kopf.dev cluster-wide is inactive, reconnecting.', fx.DEBUG)).toHaveLength(1);
    const [stalled, resumed] = fx.watchRequests(suite.cluster).slice(watchesBefore);
    expect(query(resumed!.query).get('resourceVersion')).toBe(query(stalled!.query).get('resourceVersion'));
    expect(resumed!.time - stalled!.time).toBeGreaterThanOrEqual(450);
  });

  it('R-WATCH-3 A-33 an ERROR event other than 410 fails the watcher and stops the operator', async () => {
    const { registry } = recordingRegistry();
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    suite.cluster.faults.add({ resource: 'kopfexamples', watch: true, times: 1, action: { watch: { errorAfterEvents: 0, error: 500 } } });
    suite.cluster.dropWatches({ resource: 'kopfexamples' }, 'end');
    await fx.eventually(() => op.stopped, 'the operator to stop on its own', 15_000);

    expect(op.error).toBeDefined();
    const failures = logs.grep('Watcher for kopfexamples.v1.kopf.dev@cluster-wide has failed: ', fx.ERROR);
    expect(failures.length).toBeGreaterThanOrEqual(1);
    expect(failures[0]).toContain('Error in the watch-stream');
  });
});
