/**
 * Lease election end to end: two whole operators (`spawnTasks` + `runTasks`, the real HTTP client)
 * against the devcluster over loopback, on one virtual clock, each logging in with its own token so
 * that the request log tells them apart. Only the Lease's holder lists, watches and handles
 * (R-PEER-7, R-WATCH-6 in Lease mode); a graceful stop of the leader releases the Lease and the
 * standby takes over — every change is handled exactly once, by one of them.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import * as clocks from '../../../runtime/cogs/aio/clocks.js';
import type * as toggles from '../../../runtime/cogs/aio/toggles.js';
import type * as credentials from '../../../runtime/cogs/client/credentials.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as stoppers from '../../../runtime/core/intents/stoppers.js';
import * as running from '../../../runtime/core/reactor/running.js';
import { on } from '../../../runtime/on.js';
import { KEX, LogCapture, fastSettings, kopfExample, startCluster } from '../../support/operators.js';
import { advanceUntil, advanceUntilSettled } from '../../support/waiting.js';

const EPOCH = Date.parse('2030-01-01T00:00:00Z');

interface Replica {
  readonly identity: string;
  readonly user: string;
  readonly tasks: running.OperatorTasks;
  readonly done: Promise<void>;
  readonly stop: AbortController;
  /** Virtual times at which it resumed (true) and paused (false). */
  readonly history: Array<[number, boolean]>;
  active(): boolean;
  error?: unknown;
}

describe('Lease election: two operators', () => {
  let cluster: DevCluster;
  let clock: clocks.VirtualClock;
  const calls: string[] = [];
  const replicas: Replica[] = [];

  beforeEach(async () => {
    cluster = await startCluster({ auth: 'enforced' });
    clock = new clocks.VirtualClock({ start: EPOCH });
    calls.length = 0;
    daemonRuns.length = 0;
  });
  afterEach(async () => {
    for (const replica of replicas.splice(0)) {
      replica.stop.abort();
      await untilSettled(replica.done);
    }
    await cluster.stop();
  });

  /** Moves virtual time on while real I/O happens, until `promise` settles. */
  async function untilSettled(promise: Promise<unknown>): Promise<void> {
    await advanceUntilSettled(clock, promise, { stepMs: 100, pauseMs: 5 });
  }

  /** Moves virtual time on (100 ms steps) until `predicate` holds; returns the virtual ms taken. */
  function runUntil(predicate: () => boolean, what: string, limitMs = 60_000): Promise<number> {
    return advanceUntil(clock, predicate, what, { stepMs: 100, limitMs });
  }

  /** Daemon runs: who ran it, for which object, from when to when (virtual ms), and why it stopped. */
  const daemonRuns: Array<{ identity: string; name: string; from: number; to?: number; reasons?: string[] }> = [];

  /** The endpoints each replica serves (by identity), once they listen. */
  const served = new Map<string, Map<string, string>>();

  async function start(identity: string, options: { daemon?: boolean; health?: boolean } = {}): Promise<Replica> {
    const user = `user-${identity}`;
    const token = `token-${identity}`;
    cluster.auth.addToken({ token, username: user, groups: ['system:masters'] });
    const registry = new OperatorRegistry();
    on.login({ registry }, function login(): credentials.ConnectionInfo {
      return { server: cluster.url, token };
    });
    on.create('kopfexamples', { registry }, function created({ name }: { name: string }) {
      calls.push(`${identity}: ${name}`);
    });
    if (options.daemon) {
      on.daemon('kopfexamples', { registry }, async function monitor({ name, stopped }: { name: string; stopped: stoppers.DaemonStopped }) {
        const run: (typeof daemonRuns)[number] = { identity, name, from: clock.now() };
        daemonRuns.push(run);
        await stopped.wait();
        run.to = clock.now();
        run.reasons = stoppers.reasonNames(stopped.reason);
      });
    }
    if (options.health) {
      on.index('kopfexamples', { registry }, function by_name({ name }: { name: string }) {
        return { [name]: identity };
      });
    }
    const stop = new AbortController();
    const tasks = await running.spawnTasks({
      registry,
      settings: fastSettings((s) => {
        s.health.listingBudget = 10;
      }),
      clusterwide: true,
      clock,
      stopFlag: stop.signal,
      leaseName: 'my-operator',
      leaseNamespace: 'default',
      identity,
      ...(options.health
        ? {
            livenessEndpoint: 'http://127.0.0.1:0/healthz',
            onServing: (endpoints: readonly { name: string; url: string }[]) => {
              served.set(identity, new Map(endpoints.map((e) => [e.name, e.url])));
            },
          }
        : {}),
    });
    const history: Array<[number, boolean]> = [];
    const paused = tasks.context.paused as toggles.ToggleSet;
    paused.subscribe(() => history.push([clock.now(), paused.isOff()]));
    const replica: Replica = {
      identity,
      user,
      tasks,
      stop,
      history,
      done: running.runTasks(tasks).catch((error: unknown) => {
        replica.error = error;
      }),
      active: () => tasks.context.paused?.isOn() === false,
    };
    replicas.push(replica);
    return replica;
  }

  /** The virtual spans in which a replica was active (resumed), until now. */
  function spans(replica: Replica): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    let since: number | undefined;
    for (const [at, active] of replica.history) {
      if (active) since = at;
      else if (since !== undefined) {
        out.push([since, at]);
        since = undefined;
      }
    }
    if (since !== undefined) out.push([since, Infinity]);
    return out;
  }

  function expectNeverBothActive(a: Replica, b: Replica): void {
    for (const [a0, a1] of spans(a)) for (const [b0, b1] of spans(b)) expect(a0 < b1 && b0 < a1, `[${a0}, ${a1}) overlaps [${b0}, ${b1})`).toBe(false);
  }

  const requestsOf = (user: string, verb: string): number =>
    cluster.requests.filter((r) => r.user === user && r.verb === verb && r.resource === KEX.resource).length;

  async function createExample(name: string): Promise<void> {
    const response = await fetch(`${cluster.url}/apis/kopf.dev/v1/namespaces/default/kopfexamples`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cluster.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(kopfExample(name)),
    });
    expect(response.status).toBe(201);
  }

  it('Lease election: R-PEER-7 R-WATCH-6 only the leader lists, watches and handles; after its graceful stop the standby takes over — each change is handled once (failover measured)', async () => {
    const a = await start('op-a');
    expect(a.active()).toBe(false);
    await runUntil(a.active, 'op-a to lead');
    await runUntil(() => requestsOf(a.user, 'watch') > 0, 'op-a to watch');
    const b = await start('op-b');
    await runUntil(() => cluster.requests.filter((r) => r.user === b.user && r.resource === 'leases').length >= 2, 'op-b to read the Lease');
    await createExample('example-1');
    await runUntil(() => calls.length >= 1, 'the create handler');
    await clock.advance(5_000);
    expect(b.active()).toBe(false);
    // The standby never listed or watched the served resource (R-WATCH-6), and handled nothing (R-PEER-7).
    expect(requestsOf(b.user, 'list')).toBe(0);
    expect(requestsOf(b.user, 'watch')).toBe(0);

    const stoppedAt = clock.now();
    a.stop.abort();
    await untilSettled(a.done);
    expect(a.error).toBeUndefined();
    const released = clock.now();
    const takeover = await runUntil(b.active, 'op-b to lead', 30_000);
    console.log(
      `Lease failover between two operators: the leader's graceful stop took ${(released - stoppedAt) / 1000} virtual s, ` +
        `the standby resumed ${takeover / 1000} s after the release (${(clock.now() - stoppedAt) / 1000} s in all; standby read period 2–4.4 s)`,
    );
    expect(takeover).toBeLessThanOrEqual(2000 * 2.2 + 200);
    await runUntil(() => requestsOf(b.user, 'watch') > 0, 'op-b to watch');
    await createExample('example-2');
    await runUntil(() => calls.length >= 2, 'the create handler of op-b');
    await clock.advance(5_000);
    // example-1 was handled by op-a and is not handled again by op-b (its state is persisted).
    expect(calls).toEqual(['op-a: example-1', 'op-b: example-2']);
    expect(b.error).toBeUndefined();
    expectNeverBothActive(a, b);
  });
  it('Lease election: R-WATCH-6 R-PEER-7 a leader cut off from the Lease pauses within renewDeadline and closes its watch; the standby handles the next change, exactly once', async () => {
    const a = await start('op-a');
    await runUntil(a.active, 'op-a to lead');
    await runUntil(() => requestsOf(a.user, 'watch') > 0, 'op-a to watch');
    const b = await start('op-b');
    await runUntil(() => cluster.requests.filter((r) => r.user === b.user && r.resource === 'leases').length >= 2, 'op-b to read the Lease');
    await createExample('example-1');
    await runUntil(() => calls.length >= 1, 'the create handler');

    // Only the Lease is out of reach for op-a: its watch connection would still deliver events.
    const cutAt = clock.now();
    cluster.faults.add({ user: a.user, resource: 'leases', respond: { code: 503, message: 'partitioned' } });
    await runUntil(() => !a.active(), 'op-a to pause', 20_000);
    const pausedAfter = clock.now() - cutAt;
    expect(pausedAfter).toBeLessThanOrEqual(10_000 + 200);
    expect(b.active()).toBe(false);
    await createExample('example-2');
    await runUntil(b.active, 'op-b to lead', 30_000);
    const resumedAfter = clock.now() - cutAt;
    await runUntil(() => calls.length >= 2, 'the create handler of op-b');
    await clock.advance(5_000);
    expect(calls).toEqual(['op-a: example-1', 'op-b: example-2']);
    expectNeverBothActive(a, b);
    console.log(
      `Lease failover after cutting the leader off from the Lease: it paused ${pausedAfter / 1000} virtual s later, the standby resumed ${resumedAfter / 1000} s later`,
    );
  });
  it("Lease election: Kopf peering does not run and the cluster's peering CRDs give no warning", async () => {
    await cluster.load({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'clusterkopfpeerings.kopf.dev' },
      spec: {
        scope: 'Cluster',
        group: 'kopf.dev',
        names: { kind: 'ClusterKopfPeering', plural: 'clusterkopfpeerings', singular: 'clusterkopfpeering' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    });
    const log = new LogCapture().install();
    try {
      const a = await start('op-a');
      await runUntil(() => a.active() && requestsOf(a.user, 'watch') > 0, 'op-a to lead and watch');
      await clock.advance(5_000);
      expect(log.records.filter((r) => /peering/i.test(r.message)).map((r) => r.message)).toEqual([]);
      expect(cluster.requests.filter((r) => r.resource === 'clusterkopfpeerings')).toEqual([]);
    } finally {
      log.uninstall();
    }
  });
  it('Lease election: R-DAEMON-10 a leader that loses the Lease stops its daemons (OPERATOR_PAUSING); the new leader runs them — never two at once', async () => {
    const a = await start('op-a', { daemon: true });
    await runUntil(a.active, 'op-a to lead');
    const b = await start('op-b', { daemon: true });
    await createExample('example-1');
    await runUntil(() => daemonRuns.length >= 1, 'the daemon of op-a');
    expect(daemonRuns[0]).toMatchObject({ identity: 'op-a', name: 'example-1' });
    cluster.faults.add({ user: a.user, resource: 'leases', respond: { code: 503, message: 'partitioned' } });
    await runUntil(() => daemonRuns[0]!.to !== undefined, 'the daemon of op-a to stop', 20_000);
    expect(daemonRuns[0]!.reasons).toEqual(['OPERATOR_PAUSING']);
    await runUntil(() => daemonRuns.length >= 2, 'the daemon of op-b', 30_000);
    expect(daemonRuns[1]).toMatchObject({ identity: 'op-b', name: 'example-1' });
    expect(daemonRuns[1]!.from).toBeGreaterThanOrEqual(daemonRuns[0]!.to!);
    await clock.advance(5_000);
    expect(daemonRuns).toHaveLength(2);
    expectNeverBothActive(a, b);
  });
  it('Lease election: a standby is ready and alive while paused (no listing, indices never filled), for probes of a Deployment', async () => {
    const a = await start('op-a', { health: true });
    await runUntil(a.active, 'op-a to lead');
    const b = await start('op-b', { health: true });
    await runUntil(() => served.has('op-a') && served.has('op-b'), 'the endpoints to listen');
    await createExample('example-1');
    await clock.advance(15_000); // beyond the listing budget (10 s)
    const probe = async (identity: string, name: string): Promise<number> => (await fetch(served.get(identity)!.get(name)!)).status;
    expect(b.active()).toBe(false);
    expect(await probe('op-b', 'readiness')).toBe(200);
    expect(await probe('op-b', 'liveness')).toBe(200);
    expect(await probe('op-a', 'readiness')).toBe(200);
    expect(await probe('op-a', 'liveness')).toBe(200);
  });
});
