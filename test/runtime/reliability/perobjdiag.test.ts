/**
 * An operator holds state for the objects that exist, not for every object it has ever seen.
 *
 * Two thousand objects go through their whole life (created, updated, deleted) on the devcluster,
 * handled by change handlers, an index and a timer through the real HTTP client. Afterwards the
 * runtime's own count of its per-object structures (`inventory.takeCensus`) must be back where it was
 * before the first object: no object memories, no queue streams or queued events once the idle
 * workers have expired, no timers, no index entries, no followers of the stop signal left over.
 * (RSS would not show this reliably: V8 returns freed memory to the system at its own pace.)
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../devcluster/testing.js';
import * as logging from '../../../runtime/core/actions/logging.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as inventory from '../../../runtime/core/reactor/inventory.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

const COUNT = 2000;
/** How many objects are written at once (the devcluster is in this process: keep the loop fair). */
const BATCH = 100;

async function inBatches(names: readonly string[], write: (name: string) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < names.length; i += BATCH) await Promise.all(names.slice(i, i + BATCH).map(write));
}

describe('per-object state', () => {
  let cluster: DevCluster;
  let restoreLogs: () => void = () => undefined;
  // Thousands of INFO lines would only slow the test down.
  beforeEach(async () => {
    cluster = await fx.startCluster();
    logging.configure({ debug: true } as any); const L: string[] = []; (globalThis as any).__L = L; restoreLogs = logging.setLogSink((line: string) => { L.push(line); });
  });
  afterEach(async () => {
    restoreLogs();
    await cluster.stop();
  });

  it('R-QUEUE-1 R-MEMO-2 R-INDEX-3 R-DAEMON-7 nothing is held for 2,000 objects after they are created, updated and deleted', async () => {
    const registry = new OperatorRegistry();
    const handled = { created: new Set<string>(), updated: new Set<string>(), deleted: new Set<string>() };
    on.create('kopfexamples', { registry }, function create_fn({ name }: { name: string }) {
      handled.created.add(name);
      return { ok: true };
    });
    on.update('kopfexamples', { registry }, function update_fn({ name }: { name: string }) {
      handled.updated.add(name);
    });
    on.delete('kopfexamples', { registry }, function delete_fn({ name }: { name: string }) {
      handled.deleted.add(name);
    });
    on.index('kopfexamples', { registry }, function by_field({ spec, name }) {
      return { [String(spec['field'])]: name };
    });
    on.timer('kopfexamples', { registry, interval: 3600, initialDelay: 3600 }, function never_due() {
      /* never due */
    });
    const op = await fx.startOperator({ cluster, registry });
    const before = inventory.takeCensus(op.context);

    const names = Array.from({ length: COUNT }, (_, i) => `kex-${i}`);
    await inBatches(names, (name) => cluster.store.create(fx.kopfExample(name)));
    await fx.eventually(() => handled.created.size === COUNT, 'all objects created and handled', 120_000);
    const busy = inventory.takeCensus(op.context);
    await inBatches(names, (name) => cluster.store.patch(fx.KEX, name, { spec: { field: 'changed' } }, { namespace: 'default' }));
    try { await fx.eventually(() => handled.updated.size === COUNT, 'all objects updated and handled', 60_000); } catch (e) {
      const missing = names.filter((n) => !handled.updated.has(n));
      console.log('UPDATED', handled.updated.size, 'missing', missing.slice(0, 5), '');
      console.log('CENSUS', JSON.stringify(inventory.takeCensus(op.context)));
      const L2 = ((globalThis as any).__L as string[]); console.log('LOGS\n' + L2.filter((l) => l.includes(missing[0]! + ']') || l.includes(missing[0]! + ' ') || l.includes(missing[0]! + "'") ).map((l) => l.slice(0, 400)).join('\n'));
      throw e; }
    await inBatches(names, (name) => cluster.store.delete(fx.KEX, name, { namespace: 'default' }));
    await fx.eventually(
      () => handled.deleted.size === COUNT && names.every((n) => cluster.store.get(fx.KEX, n, 'default') === undefined),
      'all objects deleted and gone',
      120_000,
    );

    // Idle workers expire after `idleTimeout` (1 s in these settings); wait until they have.
    await fx.eventually(() => inventory.takeCensus(op.context).streams === 0, 'the idle workers to expire', 30_000);
    const after = inventory.takeCensus(op.context);
    await op.stop();

    expect(op.error).toBeUndefined();
    // The census did see the objects while they existed: it counts what it claims to count.
    expect(busy.memories).toBe(COUNT);
    expect(busy.daemons).toBe(COUNT);
    expect(busy.indexed).toBe(COUNT);
    expect(after).toEqual({ ...before, memories: 0, streams: 0, queuedEvents: 0, daemons: 0, indexed: 0, barrier: 0 });
  }, 300_000);
});
