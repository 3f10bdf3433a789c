/**
 * The timers engine (R-TIMER-1..4, R-PATCH-8; scenarios) on virtual time: a real
 * operator serves the devcluster over loopback HTTP while a `VirtualClock` decides when timers wake
 * up, so schedules are asserted as exact virtual timestamps (milliseconds since the object was
 * created) — grids, idle periods, retry delays, initial delays — and nothing waits in real time.
 *
 * Before each step of virtual time the test waits until the operator has processed the object's
 * newest version (see `virtualtime.ts`), so "the object's last event" happens at a known time.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../../devcluster/testing.js';
import { PermanentError, TemporaryError } from '../../../../runtime/core/actions/errors.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import { reasonNames, type DaemonStopped } from '../../../../runtime/core/intents/stoppers.js';
import { on } from '../../../../runtime/on.js';
import * as fx from '../../../support/operators.js';
import * as vt from '../../../support/virtualtime.js';

type Json = Record<string, unknown>;
const NAME = 'kopf-example-1';
const FINALIZER = 'kopf.zalando.org/KopfFinalizerMarker';

describe('timers on virtual time', () => {
  let cluster: DevCluster;
  let op: vt.VirtualOperator | undefined;
  const logs = new fx.LogCapture();
  beforeEach(async () => {
    cluster = await fx.startCluster();
    logs.install();
    op = undefined;
  });
  afterEach(async () => {
    if (op && !op.stopped) await op.stop();
    logs.uninstall();
    await cluster.stop();
  });

  /** Virtual milliseconds since the start (the object is created at 0). */
  const now = (): number => op!.clock.now() - vt.EPOCH;
  /** Moves virtual time to `ms` after the start, step by step, with the operator caught up. */
  const runTo = async (ms: number): Promise<void> => {
    await vt.runTo(op!, vt.EPOCH + ms, () => vt.caughtUp(op!, cluster));
  };
  const stored = (): Json | undefined => cluster.store.get(fx.KEX, NAME, 'default');
  const finalizers = (): string[] => ((stored()?.['metadata'] as Json | undefined)?.['finalizers'] ?? []) as string[];
  const status = (): Json => (stored()?.['status'] ?? {}) as Json;
  const mergePatch = async (patch: Json): Promise<void> => {
    await cluster.store.patch(fx.KEX, NAME, patch, { namespace: 'default', type: 'merge-patch' });
    await vt.caughtUp(op!, cluster);
  };
  const start = async (registry: OperatorRegistry, configure?: Parameters<typeof vt.virtualSettings>[0]): Promise<vt.VirtualOperator> => {
    op = await vt.startVirtual({ cluster, registry, settings: vt.virtualSettings(configure) });
    return op;
  };
  const create = async (extra: Json = {}): Promise<void> => {
    await cluster.store.create(fx.kopfExample(NAME, extra));
    await fx.eventually(() => vt.memoryOf(op!, NAME) !== undefined, 'the first cycle');
    await vt.caughtUp(op!, cluster);
  };

  describe('R-TIMER-2 schedule', () => {
    it.each([
      ['regular', false, [0, 1300, 2600, 3900]],
      ['sharp', true, [0, 1000, 2000, 3000]],
    ])('A-18 R-TIMER-2 a %s timer with interval 1 s whose invocation takes 0.3 s', async (_title, sharp, expected) => {
      const registry = new OperatorRegistry();
      const calls: number[] = [];
      on.timer('kopfexamples', { registry, interval: 1, sharp }, async function tick() {
        calls.push(now());
        await op!.clock.sleep(300);
      });
      await start(registry);
      await create();
      await runTo(3950);
      // Regular: the second invocation starts 1 s after the first ended (t=1.3 s); sharp: on the grid (t=1.0 s).
      expect(calls).toEqual(expected);
    });

    it.each([
      ['regular', false, [0, 3500, 7000]],
      ['sharp', true, [0, 3000, 6000]],
    ])('R-TIMER-2 a %s timer never overlaps itself: a function slower than its interval delays the next invocation', async (_title, sharp, expected) => {
      const registry = new OperatorRegistry();
      const calls: number[] = [];
      let active = 0;
      let most = 0;
      on.timer('kopfexamples', { registry, interval: 1, sharp }, async function slow() {
        calls.push(now());
        most = Math.max(most, ++active);
        await op!.clock.sleep(2500);
        active -= 1;
      });
      await start(registry);
      await create();
      await runTo(8000);
      expect(calls).toEqual(expected);
      expect(most).toBe(1);
    });

    it('R-TIMER-2 initialDelay is slept once per object per process: not again after a re-spawn, again in a new operator', async () => {
      const registry = new OperatorRegistry();
      const calls: number[] = [];
      on.timer('kopfexamples', { registry, interval: 1, initialDelay: 2, labels: { run: 'yes' } }, function delayed() {
        calls.push(now());
      });
      await start(registry);
      await create({ metadata: { labels: { run: 'yes' } } });
      await runTo(4500);
      expect(calls).toEqual([2000, 3000, 4000]);
      await mergePatch({ metadata: { labels: { run: null } } }); // stopped: the filters mismatch
      await runTo(6500);
      await mergePatch({ metadata: { labels: { run: 'yes' } } }); // re-spawned: no initial delay this time
      await runTo(8000);
      expect(calls).toEqual([2000, 3000, 4000, 6500, 7500]);

      await op!.stop();
      calls.length = 0;
      await start(registry); // a new operator has a new memory of the object: the delay applies again
      await vt.caughtUp(op!, cluster);
      await fx.eventually(() => vt.memoryOf(op!, NAME) !== undefined, 'the listing');
      await runTo(3500);
      expect(calls).toEqual([2000, 3000]);
    });

    it('R-TIMER-2 R-TIMER-3 with change handlers, an idle timer waits until the object has been unchanged for `idle` seconds; status patches are no changes', async () => {
      const registry = new OperatorRegistry();
      const calls: string[] = [];
      on.create('kopfexamples', { registry }, function create_fn() {
        return undefined;
      });
      let count = 0;
      on.timer('kopfexamples', { registry, idle: 5, interval: 1 }, function idler({ spec }) {
        calls.push(`${now()} field=${String(spec['field'])}`);
        return { count: ++count }; // goes to status.idler: not part of the essence
      });
      await start(registry);
      await create();
      await runTo(10_500);
      expect(calls).toEqual(['5000 field=value', '6000 field=value', '7000 field=value', '8000 field=value', '9000 field=value', '10000 field=value']);
      expect(status()['idler']).toEqual({ count: 6 });
      await mergePatch({ spec: { field: 'other' } }); // an essential change at t=10.5 s
      await runTo(18_000);
      expect(calls.slice(6)).toEqual(['15500 field=other', '16500 field=other', '17500 field=other']);
    });

    it.each([
      ['returns a result (a status patch each time)', true, [5000, 10_000, 15_000, 20_000]],
      ['returns nothing', false, [5000, 6000, 7000, 8000, 9000, 10_000, 11_000, 12_000, 13_000, 14_000, 15_000, 16_000, 17_000, 18_000, 19_000, 20_000]],
    ])('R-TIMER-3 P-23 without change handlers every event resets the idle clock: a timer that %s', async (_title, patches, expected) => {
      const registry = new OperatorRegistry();
      const calls: number[] = [];
      on.timer('kopfexamples', { registry, idle: 5, interval: 1 }, function idler() {
        calls.push(now());
        return patches ? { at: now() } : undefined;
      });
      await start(registry);
      await create();
      await runTo(20_500);
      // Each result is a patch, its event resets the idle clock: the timer fires once per idle period.
      expect(calls).toEqual(expected);
    });

    it('R-TIMER-2 an idle-only timer is invoked once per idle period, then waits for the next change', async () => {
      const registry = new OperatorRegistry();
      const calls: number[] = [];
      on.timer('kopfexamples', { registry, idle: 3 }, function quiet() {
        calls.push(now());
      });
      await start(registry);
      await create();
      await runTo(20_000);
      expect(calls).toEqual([3000]);
      await mergePatch({ spec: { field: 'other' } });
      await runTo(40_000);
      expect(calls).toEqual([3000, 23_000]);
    });

    it('R-TIMER-2 a timer with neither interval nor idle is a one-shot: it exits on its own, is not re-spawned, and the finalizer goes', async () => {
      const registry = new OperatorRegistry();
      const calls: number[] = [];
      on.timer('kopfexamples', { registry }, function once() {
        calls.push(now());
      });
      await start(registry);
      await create();
      await fx.eventually(() => logs.grep("Timer 'once' has exited on its own and will not be retried or restarted.", fx.DEBUG).length === 1, 'the exit');
      await mergePatch({ spec: { field: 'other' } }); // the next event: the finalizer is no longer required
      await fx.eventually(() => !finalizers().includes(FINALIZER), 'the finalizer to go');
      await runTo(30_000);
      await mergePatch({ spec: { field: 'again' } });
      await runTo(60_000);
      expect(calls).toEqual([0]);
      expect(finalizers()).toEqual([]);
    });

    it('R-TIMER-2 R-PATCH-8 the patch and the result of every invocation are applied right after it, also after a failure', async () => {
      const registry = new OperatorRegistry();
      const seen: string[] = [];
      let ticks = 0;
      on.timer('kopfexamples', { registry, interval: 2 }, function ticker({ retry, patch }) {
        // What the cluster holds when an invocation starts: the previous invocation's patch.
        seen.push(`${now()}: ${String(status()['message'])} / ${JSON.stringify(status()['ticker'])}`);
        if (seen.length <= 2) {
          patch.status['message'] = `Failed ${retry + 1} times.`;
          throw new TemporaryError('Simulated failure.', { delay: 1 });
        }
        ticks += 1;
        patch.status['message'] = `Tick ${ticks}.`;
        return { ticks };
      });
      await start(registry);
      await create();
      await runTo(6500);
      expect(seen).toEqual([
        '0: undefined / undefined',
        '1000: Failed 1 times. / undefined',
        '2000: Failed 2 times. / undefined',
        '4000: Tick 1. / {"ticks":1}',
        '6000: Tick 2. / {"ticks":2}',
      ]);
      expect(status()).toMatchObject({ message: 'Tick 3.', ticker: { ticks: 3 } });
      const statusPatches = fx.patchBodies(cluster, NAME, 'status').map((body) => (body as { status?: Json }).status);
      expect(statusPatches).toEqual([
        { message: 'Failed 1 times.' },
        { message: 'Failed 2 times.' },
        { message: 'Tick 1.', ticker: { ticks: 1 } },
        { message: 'Tick 2.', ticker: { ticks: 2 } },
        { message: 'Tick 3.', ticker: { ticks: 3 } },
      ]);
    });
  });

  describe('R-TIMER-4 errors', () => {
    it('A-19 R-TIMER-4 interval 10, backoff 5, TEMPORARY: invocations at t = 0, 5, 10, 15 with retry 0..3, then t = 25 with retry 0', async () => {
      const registry = new OperatorRegistry();
      const calls: { at: number; retry: number; started: number; runtime: number }[] = [];
      on.timer('kopfexamples', { registry, interval: 10, backoff: 5, errors: 'TEMPORARY' }, function flaky({ retry, started, runtime }) {
        calls.push({ at: now(), retry, started: started.getTime() - vt.EPOCH, runtime });
        if (calls.length < 4) throw new Error('Simulated failure.');
      });
      await start(registry);
      await create();
      await runTo(30_000);
      // The retry cycle (retry, started, runtime) covers one cycle and starts afresh after a success.
      expect(calls).toEqual([
        { at: 0, retry: 0, started: 0, runtime: 0 },
        { at: 5000, retry: 1, started: 0, runtime: 5 },
        { at: 10_000, retry: 2, started: 0, runtime: 10 },
        { at: 15_000, retry: 3, started: 0, runtime: 15 },
        { at: 25_000, retry: 0, started: 25_000, runtime: 0 },
      ]);
      expect(logs.grep("Timer 'flaky' failed with an exception and will try again in 5 seconds: Simulated failure.")).toHaveLength(3);
    });

    it.each([
      [
        'a PermanentError',
        {},
        () => {
          throw new PermanentError('Never again.');
        },
        1,
      ],
      [
        'an arbitrary error with errors=PERMANENT',
        { errors: 'PERMANENT' },
        () => {
          throw new Error('Never again.');
        },
        1,
      ],
      [
        'exhausted retries',
        { retries: 2 },
        () => {
          throw new TemporaryError('Not yet.', { delay: 1 });
        },
        2,
      ],
    ] as const)(
      'R-TIMER-4 after a final failure (%s) the timer stops for the object until the operator restarts; its finalizer goes on the next event',
      async (_title, options, fail, attempts) => {
        const registry = new OperatorRegistry();
        const calls: number[] = [];
        on.timer('kopfexamples', { registry, interval: 1, ...options }, function doomed() {
          calls.push(now());
          fail();
        });
        await start(registry);
        await create();
        await runTo(30_000);
        expect(
          logs.grep("Timer 'doomed' has failed for good and will not be invoked again for this object until the operator restarts.", fx.DEBUG),
        ).toHaveLength(1);
        expect(calls).toHaveLength(attempts); // not retried with the backoff, not restarted by the interval
        await mergePatch({ spec: { field: 'other' } }); // an event: the finalizer is no longer required
        await fx.eventually(() => !finalizers().includes(FINALIZER), 'the finalizer to go');
        expect(logs.grep(`[default/${NAME}] Removing the finalizer, as there are no handlers requiring it.`)).toHaveLength(1);
        await runTo(60_000);
        expect(calls).toHaveLength(attempts);

        // After a restart, the timer runs again for the object (and requires the finalizer again).
        await op!.stop();
        calls.length = 0;
        await start(registry);
        await fx.eventually(() => calls.length > 0, 'the timer to run again');
        await runTo(30_000);
        expect(calls).toHaveLength(attempts);
        expect(logs.grep(`[default/${NAME}] Adding the finalizer, thus preventing the actual deletion.`)).toHaveLength(2);
      },
    );
  });

  describe('R-TIMER-1 spawning and stopping, like daemons', () => {
    it('R-TIMER-1 a timer starts in the first cycle with the finalizer added; on deletion it stops (RESOURCE_DELETED), the finalizer goes, the object disappears', async () => {
      const registry = new OperatorRegistry();
      const calls: number[] = [];
      let stopped: DaemonStopped | undefined;
      on.timer('kopfexamples', { registry, interval: 1 }, function tick(args) {
        calls.push(now());
        stopped = args.stopped;
      });
      await start(registry);
      await create();
      await fx.eventually(() => finalizers().includes(FINALIZER), 'the finalizer');
      expect(calls).toEqual([0]);
      expect(finalizers()).toEqual([FINALIZER]);
      expect(logs.grep(`[default/${NAME}] Adding the finalizer, thus preventing the actual deletion.`)).toHaveLength(1);
      await runTo(3500);
      expect(stopped!.isSet()).toBe(false);
      await cluster.store.delete(fx.KEX, NAME, { namespace: 'default' });
      await fx.eventually(() => stored() === undefined, 'the object to disappear');
      expect(reasonNames(stopped!.reason)).toContain('RESOURCE_DELETED');
      expect(logs.grep("Timer 'tick' has exited on request and will not be retried or restarted.", fx.DEBUG)).toHaveLength(1);
      await runTo(20_000);
      expect(calls).toEqual([0, 1000, 2000, 3000]);
    });

    it('R-TIMER-1 a timer busy in its function at deletion has no graceful/forced stages: it is polled every cancellationPolling seconds and holds the finalizer until it exits', async () => {
      const registry = new OperatorRegistry();
      const calls: number[] = [];
      on.timer('kopfexamples', { registry, interval: 1 }, async function slow() {
        calls.push(now());
        await op!.clock.sleep(30_000); // ignores the stop flag
      });
      await start(registry, (s) => {
        s.background.cancellationPolling = 10;
      });
      await create();
      await runTo(5000);
      await cluster.store.delete(fx.KEX, NAME, { namespace: 'default' });
      await vt.caughtUp(op!, cluster);
      await runTo(34_900);
      expect(finalizers()).toEqual([FINALIZER]);
      expect(logs.grep("Timer 'slow' is still exiting. The next check is in 10 seconds.", fx.DEBUG)).toHaveLength(3); // at 5, 15, 25 s
      await runTo(35_100); // the function ended at 30 s; the check at 35 s releases the finalizer
      await fx.eventually(() => stored() === undefined, 'the object to disappear');
      expect(logs.grep('is signalled to exit')).toEqual([]);
      expect(logs.grep('did not exit in time')).toEqual([]);
      expect(calls).toEqual([0]);
    });

    it('R-TIMER-1 a timer stops on a filter mismatch (FILTERS_MISMATCH) and the finalizer goes in that cycle; it is re-spawned when the filters match again', async () => {
      const registry = new OperatorRegistry();
      const calls: number[] = [];
      let first: DaemonStopped | undefined;
      let last: DaemonStopped | undefined;
      on.timer('kopfexamples', { registry, interval: 1, labels: { run: 'yes' } }, function tick({ stopped }) {
        calls.push(now());
        first ??= stopped;
        last = stopped;
      });
      await start(registry);
      await create({ metadata: { labels: { run: 'yes' } } });
      await runTo(2500);
      expect(finalizers()).toEqual([FINALIZER]);
      await mergePatch({ metadata: { labels: { run: null } } });
      await fx.eventually(() => !finalizers().includes(FINALIZER), 'the finalizer to go');
      expect(reasonNames(first!.reason)).toContain('FILTERS_MISMATCH');
      expect(logs.grep(`[default/${NAME}] Removing the finalizer, as there are no handlers requiring it.`)).toHaveLength(1);
      await runTo(10_500);
      await mergePatch({ metadata: { labels: { run: 'yes' } } });
      await fx.eventually(() => finalizers().includes(FINALIZER), 'the finalizer again');
      await runTo(12_000);
      expect(calls).toEqual([0, 1000, 2000, 10_500, 11_500]);
      expect(last!.isSet()).toBe(false); // a new instance, while the old one stays stopped
      expect(reasonNames(first!.reason)).toContain('FILTERS_MISMATCH');
    });

    it('R-TIMER-1 a timer stops on operator exit (OPERATOR_EXITING), without patching anything', async () => {
      const registry = new OperatorRegistry();
      const calls: number[] = [];
      let stopped: DaemonStopped | undefined;
      on.timer('kopfexamples', { registry, interval: 1 }, function tick(args) {
        calls.push(now());
        stopped = args.stopped;
      });
      await start(registry);
      await create();
      await runTo(2500);
      const since = cluster.requests.all.length;
      await op!.stop();
      expect(reasonNames(stopped!.reason)).toContain('OPERATOR_EXITING');
      expect(logs.grep("Timer 'tick' has exited on request and will not be retried or restarted.", fx.DEBUG)).toHaveLength(1);
      expect(calls).toEqual([0, 1000, 2000]);
      expect(cluster.requests.all.slice(since).filter((r) => r.method === 'PATCH')).toEqual([]);
      expect(finalizers()).toEqual([FINALIZER]); // kept: the next operator's timer needs it
    });
  });
});
