/**
 * Scenario A-17 (the original's `15-timers`): two idle timers on the reference object, run through
 * the scenario harness (section 8.0's `kopf run … --verbose` through the test runner) against the
 * devcluster — on a `VirtualClock` instead of the ~40 s of real time the scenario describes, so the
 * gaps between pings are asserted as exact virtual durations.
 *
 * Virtual time moves only when the test moves it, one due sleep at a time; before each step the test
 * waits until the operator has processed the object's newest version. It learns that through an
 * observer added to the scenario's registry: an on-event handler whose `when` filter notes the
 * resource version of every processed event and never matches (so it is never invoked and logs
 * nothing; on-event handlers are no change handlers, so every event still resets the idle clocks).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import { Calls } from '../../../fixtures/operators/calls.js';
import * as a17 from '../../../fixtures/operators/a17-timers.js';
import * as clocks from '../../../runtime/cogs/aio/clocks.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as h from '../../support/scenarios.js';

type Json = Record<string, unknown>;
const EPOCH = Date.parse('2030-01-01T00:00:00Z');

interface Ping {
  readonly timer: 'sync' | 'async';
  readonly at: number;
  readonly field: unknown;
}

describe('timers', () => {
  let cluster: DevCluster;

  beforeAll(async () => {
    cluster = await h.startCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('A-17 idle timers ping after the object has been idle (sync 5 s, async 10 s), then every 2 s / 4 s; a change restarts the idling; deletion stops them', async () => {
    const clock = new clocks.VirtualClock({ start: EPOCH });
    const calls = new Calls();
    const registry = a17.register(new OperatorRegistry(), calls);
    let processed: string | undefined;
    on.event(
      'kopfexamples',
      {
        registry,
        when: ({ body }) => {
          processed = body.metadata?.resourceVersion;
          return false;
        },
      },
      function observer() {
        throw new Error('The observer never matches.');
      },
    );

    const op = await h.startOperator(cluster, { registry, clock });
    const version = (): string | undefined => (h.getObject(cluster)?.['metadata'] as Json | undefined)?.['resourceVersion'] as string | undefined;
    const caughtUp = (): Promise<void> => h.eventually(() => version() === undefined || processed === version(), 'the operator to process the newest event');
    const now = (): number => clock.now() - EPOCH;
    const pings: Ping[] = [];
    const collect = (): void => {
      for (const call of calls.all.slice(pings.length)) {
        pings.push({ timer: call.id === 'every_few_seconds_sync' ? 'sync' : 'async', at: now(), field: call.args['field'] });
      }
    };
    /** Moves virtual time to `ms`, one due sleep at a time, noting when each ping happened. */
    const runTo = async (ms: number): Promise<void> => {
      for (;;) {
        await caughtUp();
        collect();
        const next = clock.nextDue();
        if (next === undefined || next > EPOCH + ms) break;
        await clock.advanceTo(next);
      }
      await clock.advanceTo(EPOCH + ms);
      await caughtUp();
      collect();
    };
    const of = (timer: Ping['timer'], from: number, to = Infinity): Ping[] => pings.filter((p) => p.timer === timer && p.at >= from && p.at < to);
    const gaps = (list: Ping[]): number[] => list.slice(1).map((p, i) => p.at - list[i]!.at);

    // Apply; the operator adds its finalizer (the object's last event) at t=0.
    await h.apply(cluster, h.referenceObject());
    await h.eventually(() => h.finalizersOf(h.getObject(cluster)).includes(h.FINALIZER), 'the finalizer');
    const lastEvent = now();
    await runTo(20_000);
    const beforeSync = of('sync', 0);
    const beforeAsync = of('async', 0);
    expect(beforeSync[0]!.at - lastEvent).toBeGreaterThanOrEqual(5000);
    expect(gaps(beforeSync)).toEqual([2000, 2000, 2000, 2000, 2000, 2000, 2000]);
    expect(beforeAsync[0]!.at - lastEvent).toBeGreaterThanOrEqual(10_000);
    expect(gaps(beforeAsync)).toEqual([4000, 4000]);
    expect(pings.every((p) => p.field === 'value')).toBe(true);

    // Merge-patch spec.field=other at t=20 s: both idle periods start again.
    await h.mergePatch(cluster, { spec: { field: 'other' } });
    const patched = now();
    await runTo(35_000);
    const afterSync = of('sync', patched);
    const afterAsync = of('async', patched);
    expect(afterSync[0]!.at - patched).toBeGreaterThanOrEqual(5000);
    expect(gaps(afterSync)).toEqual([2000, 2000, 2000, 2000, 2000]);
    expect(afterAsync[0]!.at - patched).toBeGreaterThanOrEqual(10_000);
    expect(gaps(afterAsync)).toEqual([4000]);
    expect([...afterSync, ...afterAsync].every((p) => p.field === 'other')).toBe(true);
    // The whole schedule, exactly (virtual seconds since the object was applied).
    expect(pings.map((p) => `${p.timer}@${p.at / 1000}`)).toEqual([
      'sync@5',
      'sync@7',
      'sync@9',
      'async@10',
      'sync@11',
      'sync@13',
      'async@14',
      'sync@15',
      'sync@17',
      'async@18',
      'sync@19',
      'sync@25',
      'sync@27',
      'sync@29',
      'async@30',
      'sync@31',
      'sync@33',
      'async@34',
      'sync@35',
    ]);
    expect(op.output.count('Ping from a sync timer: field=value')).toBe(8);
    expect(op.output.count('Ping from a sync timer: field=other')).toBe(6);
    expect(op.output.count('Ping from an async timer: field=value')).toBe(3);
    expect(op.output.count('Ping from an async timer: field=other')).toBe(2);

    // Deletion: the timers stop, the finalizer goes, the object disappears; no pings any more.
    const total = pings.length;
    await h.remove(cluster);
    await h.eventually(() => h.getObject(cluster) === undefined, 'the object to disappear');
    await runTo(60_000);
    expect(pings).toHaveLength(total);
    expect(op.output.linesWith('[default/kopf-example-1] Removing the finalizer, thus allowing the actual deletion.')).toHaveLength(1);
    await op.stop();
    h.genericChecks(op);
  });
});
