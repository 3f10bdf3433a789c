/**
 * An operator holds state for the objects that exist, not for every object it has ever seen.
 *
 * Two thousand objects go through their whole life (created, updated, deleted) on the devcluster,
 * handled by change handlers, an index and a timer through the real HTTP client. Afterwards the
 * runtime's own count of its per-object structures (`inventory.takeCensus`) must be back where it was
 * before the first object: no object memories, no queue streams or queued events once the idle
 * workers have expired, no timers, no index entries, no followers of the stop signal left over.
 * (RSS would not show this reliably: V8 returns freed memory to the system at its own pace.)
 *
 * The same holds for daemons and timers at scale (the memory guard of R-PERF-101): a thousand
 * objects each with a daemon that sleeps on its stop flag and a timer that fires every second leave
 * no daemon record, no follower of the stop signal and no due time on the operator's scheduler
 * behind once they are deleted.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../devcluster/testing.js';
import * as logging from '../../../runtime/core/actions/logging.js';
import type { DaemonStopped } from '../../../runtime/core/intents/stoppers.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as inventory from '../../../runtime/core/reactor/inventory.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

const COUNT = 2000;
/** Objects of the daemons-and-timers guard: each has a daemon and a timer. */
const ENGINE_COUNT = 1000;
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
    restoreLogs = logging.setLogSink(() => undefined);
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
    await fx.eventually(() => handled.updated.size === COUNT, 'all objects updated and handled', 120_000);
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

  it('R-PERF-101 R-DAEMON-7 R-TIMER-1 daemons and timers of 1,000 objects leave no per-object structures once the objects are deleted', async () => {
    const registry = new OperatorRegistry();
    const daemonsRunning = new Set<string>();
    const daemonsExited = new Set<string>();
    const timerCalls = new Map<string, number>();
    on.event('kopfexamples', { registry }, function seen() {
      /* every object is watched and remembered, as with change handlers */
    });
    // Sleeps on its stop flag in a loop: each sleep is a due time while the daemon runs.
    on.daemon('kopfexamples', { registry }, async function sleeper({ name, stopped }: { name: string; stopped: DaemonStopped }) {
      daemonsRunning.add(name);
      try {
        while (!stopped.isSet()) await stopped.wait(3600);
      } finally {
        daemonsExited.add(name);
      }
    });
    // Fires for real (the test waits for the calls, not for time to pass).
    on.timer('kopfexamples', { registry, interval: 1 }, function beat({ name }: { name: string }) {
      timerCalls.set(name, (timerCalls.get(name) ?? 0) + 1);
    });
    const op = await fx.startOperator({ cluster, registry });
    const before = inventory.takeCensus(op.context);

    const names = Array.from({ length: ENGINE_COUNT }, (_, i) => `kex-${i}`);
    await inBatches(names, (name) => cluster.store.create(fx.kopfExample(name)));
    await fx.eventually(
      () => daemonsRunning.size === ENGINE_COUNT && timerCalls.size === ENGINE_COUNT,
      'every daemon running and every timer fired at least once',
      120_000,
    );
    const busy = inventory.takeCensus(op.context);
    await inBatches(names, (name) => cluster.store.delete(fx.KEX, name, { namespace: 'default' }));
    await fx.eventually(
      () => daemonsExited.size === ENGINE_COUNT && names.every((n) => cluster.store.get(fx.KEX, n, 'default') === undefined),
      'every daemon exited and every object gone',
      120_000,
    );
    // Timers stop after their objects' deletion, and idle workers expire after `idleTimeout` (1 s here).
    await fx.eventually(
      () => {
        const now = inventory.takeCensus(op.context);
        return now.streams === 0 && now.daemons === 0 && now.scheduled === before.scheduled && now.followers === before.followers;
      },
      'the daemons, timers and idle workers to be gone',
      30_000,
    );
    const after = inventory.takeCensus(op.context);
    await op.stop();

    expect(op.error).toBeUndefined();
    // The census did see them while they existed: a daemon and a timer per object.
    expect(busy.memories).toBe(ENGINE_COUNT);
    expect(busy.daemons).toBe(2 * ENGINE_COUNT);
    // Every daemon sleeps on the scheduler and every timer waits there for its next tick (R-PERF-302).
    expect(busy.scheduled).toBeGreaterThanOrEqual(2 * ENGINE_COUNT);
    expect(after).toEqual(before);
  }, 300_000);
});
