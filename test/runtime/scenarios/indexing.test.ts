/**
 * Scenario A-20 (the original's `16-indexing`): indices of pods (`is_running` keyed by
 * `[namespace, name]`, `by_label` keyed by `[label, value]`) and a timer on `kex` objects writing
 * the running pods to `status['running-pods']` every 5 s — through the scenario harness (section
 * 8.0's `kopf run … --verbose` through the test runner) against the devcluster, on a `VirtualClock`
 * so that the timer's ticks are exact and quick.
 *
 * Left out: the probes `pod_count` and `pod_names` and the `--liveness` endpoint serving them;
 * they come with the probes of a later version (admission and probes), and so does that part of
 * the scenario.
 *
 * The tests know that the operator has processed the newest version of an object through
 * observers added to the scenario's registry (on-event handlers whose `when` filters note the
 * processed versions and never match; on-event handlers run after indexing in a cycle).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import { Calls } from '../../../fixtures/operators/calls.js';
import * as a20 from '../../../fixtures/operators/a20-indexing.js';
import * as clocks from '../../../runtime/cogs/aio/clocks.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as vt from '../../support/virtualtime.js';
import * as h from '../../support/scenarios.js';

type Json = Record<string, unknown>;
const EPOCH = Date.parse('2030-01-01T00:00:00Z');

interface Pod {
  readonly name: string;
  readonly namespace?: string;
  readonly phase?: string;
  readonly labels?: Record<string, string>;
}

describe('indices', () => {
  let cluster: DevCluster;

  beforeEach(async () => {
    cluster = await h.startCluster();
  });
  afterEach(async () => {
    await cluster?.stop();
  });

  /** A run of the A-20 operator on a virtual clock, with the helpers the scenario needs. */
  async function scenario(pods: readonly Pod[], options: a20.A20Options & { beforeStart?: () => void } = {}) {
    for (const pod of pods) await createPod(pod);
    await h.apply(cluster, h.referenceObject());
    const clock = new clocks.VirtualClock({ start: EPOCH });
    const calls = new Calls();
    const registry = a20.register(new OperatorRegistry(), calls, options);
    const kexes = new vt.Observer(registry, 'kopfexamples');
    const observed = new vt.Observer(registry, 'pods');
    // `by_label` looked up by value, with a fresh array key, as a handler would.
    const lookups: string[][] = [];
    on.event('kex', { registry }, function lookup({ by_label: labelled }) {
      lookups.push([...(labelled?.get(['app', 'web']) ?? [])].sort());
    });
    options.beforeStart?.();
    const op = await h.startOperator(cluster, { registry, clock });
    const now = (): number => clock.now() - EPOCH;
    const sync = async (): Promise<void> => {
      await kexes.caughtUp(cluster, 'kopf-example-1');
      for (const pod of pods) await observed.caughtUp(cluster, pod.name, h.PODS, pod.namespace ?? 'default');
    };
    /** The pods each timer invocation wrote, with its virtual time. */
    const ticks = (): string[] => calls.of('intervalled').map((call) => JSON.stringify(call.args['pods']));
    /** Moves virtual time to `ms`, one due sleep at a time, with the operator caught up. */
    const runTo = async (ms: number): Promise<void> => {
      for (;;) {
        await sync();
        const next = clock.nextDue();
        if (next === undefined || next > EPOCH + ms) break;
        await clock.advanceTo(next);
      }
      await clock.advanceTo(EPOCH + ms);
      await sync();
    };
    const running = (): unknown => (h.getObject(cluster)?.['status'] as Json | undefined)?.['running-pods'];
    const finish = async (): Promise<void> => {
      await h.remove(cluster);
      await h.eventually(() => h.getObject(cluster) === undefined, 'the kex object to disappear');
      await op.stop();
      for (const pod of pods) {
        if (cluster.store.get(h.PODS, pod.name, pod.namespace ?? 'default')) {
          await cluster.store.delete(h.PODS, pod.name, { namespace: pod.namespace ?? 'default', gracePeriodSeconds: 0 });
        }
      }
    };
    return { op, clock, calls, lookups, now, sync, ticks, runTo, running, finish };
  }

  async function createPod(pod: Pod): Promise<void> {
    const namespace = pod.namespace ?? 'default';
    await cluster.store.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: pod.name, namespace, labels: pod.labels ?? {} },
      spec: { containers: [{ name: 'main', image: 'busybox' }] },
    });
    if (pod.phase) await setPhase(pod.name, pod.phase, namespace);
  }

  async function setPhase(name: string, phase: string, namespace = 'default'): Promise<void> {
    await cluster.store.patch(h.PODS, name, { status: { phase } }, { namespace, subresource: 'status', type: 'merge-patch' });
  }

  async function patchPod(name: string, patch: Json, namespace = 'default'): Promise<void> {
    await cluster.store.patch(h.PODS, name, patch, { namespace, type: 'merge-patch' });
  }

  it('A-20 the timer writes the running pods of kube-system and default every 5 s; by_label is looked up by value', async () => {
    await cluster.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'elsewhere' } });
    const s = await scenario([
      { name: 'web-1', phase: 'Running', labels: { app: 'web' } },
      { name: 'web-2', phase: 'Pending', labels: { app: 'web' } },
      { name: 'dns-1', namespace: 'kube-system', phase: 'Running', labels: { app: 'dns' } },
      { name: 'job-1', namespace: 'elsewhere', phase: 'Running', labels: { app: 'job' } },
    ]);
    await h.eventually(() => s.running() !== undefined, "the first tick's patch");
    expect(s.running()).toEqual(['default::web-1', 'kube-system::dns-1']);
    await setPhase('web-2', 'Running');
    await s.runTo(10_000);
    expect(s.calls.of('intervalled').length).toBe(3); // at 0, 5 and 10 s
    expect(s.ticks()).toEqual([
      '["default::web-1","kube-system::dns-1"]',
      '["default::web-1","default::web-2","kube-system::dns-1"]',
      '["default::web-1","default::web-2","kube-system::dns-1"]',
    ]);
    expect(s.running()).toEqual(['default::web-1', 'default::web-2', 'kube-system::dns-1']);
    expect(s.lookups.at(-1)).toEqual(['web-1', 'web-2']);
    expect(s.op.output.count('Pods by label: [')).toBe(3);
    await s.finish();
    h.genericChecks(s.op, { skipG4: true }); // the lookup is an on-event handler: it succeeds on every event
  });

  it('A-20 (simulation) with 3 pods listed slowly, no kex handler runs before all 3 pods are indexed', async () => {
    const pods = [1, 2, 3].map((i) => ({ name: `pod-${i}`, phase: 'Running', labels: { app: 'web' } }));
    const s = await scenario(pods, {
      beforeStart: () => {
        cluster.faults.add({ resource: 'pods', verb: 'list', times: 1, action: { delay: { beforeMs: 1500 } } });
      },
    });
    await h.eventually(() => s.ticks().length > 0, 'the first tick');
    const order = s.calls.ids;
    const firstTick = order.indexOf('intervalled');
    for (const name of ['pod-1', 'pod-2', 'pod-3']) {
      const indexed = s.calls.all.findIndex((call) => call.id === 'is_running' && call.args['name'] === name);
      expect(indexed).toBeGreaterThanOrEqual(0);
      expect(indexed).toBeLessThan(firstTick);
    }
    expect(s.ticks()[0]).toBe('["default::pod-1","default::pod-2","default::pod-3"]');
    expect(s.lookups[0]).toEqual(['pod-1', 'pod-2', 'pod-3']);
    await s.finish();
    h.genericChecks(s.op, { skipG4: true });
  });

  it('A-20 (simulation) deleting a pod removes its keys; an index handler throwing a plain error keeps the previous values (IGNORED)', async () => {
    const failing = new Set<string>();
    const pods = [1, 2, 3].map((i) => ({ name: `pod-${i}`, phase: 'Running', labels: { app: 'web' } }));
    const s = await scenario(pods, { failing });
    await h.eventually(() => s.ticks().length > 0, 'the first tick');
    await s.sync();
    await cluster.store.delete(h.PODS, 'pod-3', { namespace: 'default', gracePeriodSeconds: 0 });
    failing.add('pod-2');
    await setPhase('pod-2', 'Pending'); // is_running fails for it: its previous value (running) stays
    await s.runTo(5000);
    expect(s.ticks()).toEqual(['["default::pod-1","default::pod-2","default::pod-3"]', '["default::pod-1","default::pod-2"]']);
    expect(s.lookups.at(-1)).toEqual(['pod-1', 'pod-2']); // pod-3's keys are gone from by_label, too
    expect(s.op.output.count("Indexer 'is_running' failed with an exception and will ignore it: Simulated failure for pod-2.")).toBe(1);
    failing.delete('pod-2');
    await patchPod('pod-2', { metadata: { labels: { touched: 'yes' } } });
    await s.runTo(10_000);
    expect(s.ticks().at(-1)).toBe('["default::pod-1"]'); // indexed again: pod-2 is pending
    await s.finish();
    h.genericChecks(s.op, { skipG4: true, skipG6: true });
  });

  it("A-20 (simulation) with errors=PERMANENT a failing pod's values disappear and the function is not called again for that pod", async () => {
    const failing = new Set<string>();
    const pods = [1, 2, 3].map((i) => ({ name: `pod-${i}`, phase: 'Running', labels: { app: 'web' } }));
    const s = await scenario(pods, { failing, errors: 'PERMANENT' });
    await h.eventually(() => s.ticks().length > 0, 'the first tick');
    await s.sync();
    failing.add('pod-2');
    await patchPod('pod-2', { metadata: { labels: { touched: 'once' } } }); // still running, but is_running fails
    await s.runTo(5000);
    expect(s.ticks().at(-1)).toBe('["default::pod-1","default::pod-3"]');
    const invoked = s.calls.of('is_running').filter((call) => call.args['name'] === 'pod-2').length;
    failing.delete('pod-2');
    await patchPod('pod-2', { metadata: { labels: { touched: 'twice' } } });
    await setPhase('pod-2', 'Running');
    await s.runTo(10_000);
    expect(s.calls.of('is_running').filter((call) => call.args['name'] === 'pod-2')).toHaveLength(invoked);
    expect(s.ticks().at(-1)).toBe('["default::pod-1","default::pod-3"]');
    expect(s.lookups.at(-1)).toEqual(['pod-1', 'pod-2', 'pod-3']); // by_label (another index) still has pod-2
    expect(s.op.output.count("Indexer 'is_running' failed with an exception and will stop now: Simulated failure for pod-2.")).toBe(1);
    await s.finish();
    h.genericChecks(s.op, { skipG4: true, skipG5: true, skipG6: true });
  });
});
