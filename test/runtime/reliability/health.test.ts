/**
 * The liveness and readiness endpoints of a real operator (R-ACTIVITY-4, R-INDEX-7, R-WATCH-5),
 * over loopback HTTP, with the operator on a virtual clock serving the devcluster through its real
 * client, and the devcluster's fault controls breaking its watch-streams: a stream that is accepted
 * but never sends anything (stalled), a watch that is never answered (hanging), a listing that
 * hangs or keeps failing, and an indexer that never finishes (the readiness barrier never opens).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../devcluster/testing.js';
import * as clocks from '../../../runtime/cogs/aio/clocks.js';
import type * as settingsModule from '../../../runtime/cogs/configs/settings.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';
import { flushed, until } from '../../support/waiting.js';
import { virtualSettings } from '../../support/virtualtime.js';

const EPOCH = Date.parse('2030-01-01T00:00:00Z');
const STREAM = 'kopfexamples.v1.kopf.dev cluster-wide';

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

async function get(url: string): Promise<Answer> {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** An operator on a virtual clock with the liveness endpoint on a free loopback port. */
interface HealthOperator {
  readonly clock: clocks.VirtualClock;
  /** Resolve once the endpoints listen. */
  readonly liveness: () => string;
  readonly readiness: () => string;
  readonly served: boolean;
  readonly error: unknown;
  stop(): Promise<void>;
}

/**
 * Starts an operator (`operators.startOperator`) on a virtual clock with the liveness and readiness
 * endpoints on a free loopback port; resolves once they listen (unless `wait: false`).
 */
async function startOperator(
  cluster: DevCluster,
  registry: OperatorRegistry,
  options: { readonly settings?: settingsModule.OperatorSettings; readonly wait?: boolean } = {},
): Promise<HealthOperator> {
  // Hung requests (a hanging listing) must not hold virtual time for long.
  const clock = new clocks.VirtualClock({ start: EPOCH, quiescenceTimeout: 50 });
  const urls = new Map<string, string>();
  const op = await fx.startOperator({
    cluster,
    registry,
    settings: options.settings ?? virtualSettings(),
    clock,
    waitForWatch: false,
    livenessEndpoint: 'http://127.0.0.1:0/healthz',
    onServing: (served) => {
      for (const { name, url } of served) urls.set(name, url);
    },
  });
  if (options.wait !== false) await fx.eventually(() => op.stopped || urls.size > 0, 'the liveness endpoint');
  return {
    clock,
    liveness: () => urls.get('liveness')!,
    readiness: () => urls.get('readiness')!,
    get served() {
      return urls.size > 0;
    },
    get error() {
      return op.error;
    },
    stop: () => op.stop({ stepMs: 1000, pauseMs: 10 }),
  };
}

/**
 * Moves virtual time in steps; each step waits (in the clock) for the operator's API requests it
 * started, and lets their callbacks run before the next one (reconnects happen on the way).
 */
async function advance(op: HealthOperator, ms: number, step = 10_000): Promise<void> {
  for (let left = ms; left > 0; left -= step) {
    await flushed();
    await op.clock.advance(Math.min(step, left));
  }
  await flushed();
}

/** Waits (real time, a few seconds at most) until the liveness endpoint answers 200. */
async function healthy(op: HealthOperator): Promise<void> {
  await until(async () => ((await get(op.liveness())).status === 200 ? true : undefined), 'the operator to be healthy', 5_000, 50);
}

describe('the liveness endpoint with probes (R-ACTIVITY-4)', () => {
  let cluster: DevCluster;
  let op: HealthOperator | undefined;
  const logs = new fx.LogCapture();
  beforeEach(async () => {
    cluster = await fx.startCluster();
    logs.install();
  });
  afterEach(async () => {
    await op?.stop();
    op = undefined;
    logs.uninstall();
    await cluster.stop();
  });

  it('R-ACTIVITY-4 R-ACTIVITY-1 the endpoint is served only after the startup activity, then answers { probe id: result }', async () => {
    const registry = new OperatorRegistry();
    const gate = fx.deferred();
    let starting = false;
    on.startup({ registry }, async function slow_startup() {
      starting = true;
      await gate.promise;
    });
    on.probe({ registry }, function pods_count() {
      return 3;
    });
    on.probe({ registry }, function status() {
      return { mood: 'fine' };
    });
    on.probe({ registry }, function nothing() {
      return null;
    });
    on.event('kopfexamples', { registry }, function seen() {});
    op = await startOperator(cluster, registry, { wait: false });
    // The signal: the startup handler is running (and waits); what would be served or requested
    // alongside it starts in memory, so it would have started by the end of this turn.
    await fx.eventually(() => starting, 'the startup handler');
    await flushed();
    expect(op.served).toBe(false);
    expect(cluster.requests.all).toEqual([]);
    gate.resolve();
    await fx.eventually(() => op!.served, 'the liveness endpoint');
    expect(await get(op.liveness())).toEqual({ status: 200, body: { pods_count: 3, status: { mood: 'fine' } } });
    expect(op.liveness()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/healthz$/);
    expect(op.readiness()).toBe(op.liveness().replace(/healthz$/, 'readyz'));
  });

  it('R-ACTIVITY-4 without probes the endpoint answers {}; HEAD works; other paths are 404', async () => {
    const registry = new OperatorRegistry();
    on.event('kopfexamples', { registry }, function seen() {});
    op = await startOperator(cluster, registry);
    expect(await get(op.liveness())).toEqual({ status: 200, body: {} });
    expect((await fetch(op.liveness(), { method: 'HEAD' })).status).toBe(200);
    expect((await fetch(op.liveness().replace(/healthz$/, 'other'))).status).toBe(404);
  });

  it('R-ACTIVITY-4 results are cached for 10 seconds and concurrent requests share one evaluation', async () => {
    const registry = new OperatorRegistry();
    let calls = 0;
    on.probe({ registry }, async function counter() {
      calls += 1;
      // A slow probe (a fake's deliberate delay, not a wait of the test): the three concurrent
      // requests arrive while its one evaluation runs.
      await new Promise((r) => setTimeout(r, 50));
      return calls;
    });
    on.event('kopfexamples', { registry }, function seen() {});
    op = await startOperator(cluster, registry);
    const concurrent = await Promise.all([get(op.liveness()), get(op.liveness()), get(op.liveness())]);
    expect(concurrent.map((a) => a.body)).toEqual([{ counter: 1 }, { counter: 1 }, { counter: 1 }]);
    await op.clock.advance(9_000);
    expect((await get(op.liveness())).body).toEqual({ counter: 1 });
    expect(calls).toBe(1);
    await op.clock.advance(1_000);
    expect((await get(op.liveness())).body).toEqual({ counter: 2 });
    expect(calls).toBe(2);
  });

  it('R-ACTIVITY-4 R-SEC-14 a failing probe makes the endpoint answer 500 naming it, without its error text (which goes to the log) or a stack trace', async () => {
    const registry = new OperatorRegistry();
    const secret = 'postgres://app:s3cr3t-passw0rd@db.internal:5432/app';
    on.probe({ registry }, function fine() {
      return 'ok';
    });
    on.probe({ registry }, function database() {
      throw new Error(`cannot connect to ${secret}: connection refused`);
    });
    on.event('kopfexamples', { registry }, function seen() {});
    op = await startOperator(cluster, registry);
    const answer = await get(op.liveness());
    expect(answer).toEqual({
      status: 500,
      body: {
        status: 'unhealthy',
        problems: [{ kind: 'probe', name: 'database', reason: "failed (the operator's log has the error)" }],
        probes: { fine: 'ok' },
      },
    });
    expect(JSON.stringify(answer.body)).not.toContain('s3cr3t');
    expect(JSON.stringify(answer.body)).not.toMatch(/\bat .*\.ts:\d+/);
    // Asked again (the same cached evaluation): still nothing of the error, and no new log lines.
    expect(JSON.stringify((await get(op.liveness())).body)).not.toContain('s3cr3t');
    expect(logs.grep(`Activity 'database' has failed: cannot connect to ${secret}: connection refused`, fx.ERROR)).toHaveLength(1);
    expect(logs.grep(`The operator is unhealthy: probe database: failed: cannot connect to ${secret}`, fx.WARNING)).toHaveLength(1);
  });

  it('R-SEC-14 with settings.health.details, a caller on the loopback interface gets the error text of a failing probe', async () => {
    const registry = new OperatorRegistry();
    on.probe({ registry }, function database() {
      throw new Error('connection refused by the database');
    });
    on.event('kopfexamples', { registry }, function seen() {});
    const settings = virtualSettings();
    settings.health.details = true;
    op = await startOperator(cluster, registry, { settings });
    const answer = await get(op.liveness());
    expect(answer.status).toBe(500);
    expect(answer.body['problems']).toEqual([{ kind: 'probe', name: 'database', reason: 'failed: connection refused by the database' }]);
  });

  it('R-ACTIVITY-4 a probe that never resolves: the endpoint still answers at the deadline, naming it, and keeps the cache rules', async () => {
    const registry = new OperatorRegistry();
    let calls = 0;
    on.probe({ registry }, function fine() {
      return 'ok';
    });
    on.probe({ registry }, function forever() {
      calls += 1;
      return new Promise(() => undefined);
    });
    on.event('kopfexamples', { registry }, function seen() {});
    op = await startOperator(cluster, registry, {
      settings: virtualSettings((s) => {
        s.health.probeTimeout = 4;
      }),
    });
    const pending = get(op.liveness());
    await fx.eventually(() => calls === 1, 'the probe to be invoked');
    await op.clock.advance(4_000);
    const problem = { kind: 'probe', name: 'forever', reason: 'not finished within 4 s (running for 4 s)' };
    expect(await pending).toEqual({ status: 500, body: { status: 'unhealthy', problems: [problem], probes: { fine: 'ok' } } });
    // Within 10 s: the same answer at once, nothing re-run.
    expect(await get(op.liveness())).toEqual({ status: 500, body: { status: 'unhealthy', problems: [problem], probes: { fine: 'ok' } } });
    expect(calls).toBe(1);
  });
});

describe('watch health in liveness, and readiness (R-WATCH-5, R-INDEX-7)', () => {
  let cluster: DevCluster;
  let op: HealthOperator | undefined;
  const logs = new fx.LogCapture();
  // Frequent bookmarks: a quiet but working stream is heard from all the time.
  beforeEach(async () => {
    cluster = await fx.startCluster({ bookmarkIntervalMs: 100 });
    logs.install();
  });
  afterEach(async () => {
    await op?.stop();
    op = undefined;
    logs.uninstall();
    await cluster.stop();
  });

  function watching(): OperatorRegistry {
    const registry = new OperatorRegistry();
    on.event('kopfexamples', { registry }, function seen() {});
    return registry;
  }

  it('R-WATCH-5 a stream accepted but never sending anything (stalled) is unhealthy after the silence budget, and healthy again after recovery', async () => {
    op = await startOperator(cluster, watching());
    await fx.eventually(() => fx.watchRequests(cluster).length > 0, 'the watch');
    expect((await get(op.readiness())).status).toBe(200);
    expect(await get(op.liveness())).toEqual({ status: 200, body: {} });

    const stall = cluster.faults.add({ resource: 'kopfexamples', watch: true, action: { watch: { stall: true } } });
    cluster.dropWatches({ resource: 'kopfexamples' }, 'end');
    await advance(op, 300_000);
    expect((await get(op.liveness())).status).toBe(200); // within the budget, despite reconnects every 70 s
    expect(fx.watchRequests(cluster).length).toBeGreaterThanOrEqual(5);
    await advance(op, 2_000, 1_000);
    const unhealthy = await get(op.liveness());
    expect(unhealthy.status).toBe(500);
    expect(unhealthy.body).toEqual({
      status: 'unhealthy',
      problems: [{ kind: 'stream', name: STREAM, reason: expect.stringMatching(/^silent for 30[12] s: no event or bookmark \(budget 300 s\)$/) as unknown }],
    });
    expect(logs.grep(`The operator is unhealthy: stream ${STREAM}: silent for`, fx.WARNING)).toHaveLength(1);
    // Readiness is about the initial listing only: still ready.
    expect((await get(op.readiness())).status).toBe(200);

    stall.remove();
    await advance(op, 70_000); // the inactivity timeout reconnects; the new stream gets bookmarks
    await healthy(op);
    expect(await get(op.liveness())).toEqual({ status: 200, body: {} });
    expect(logs.grep('The operator is healthy again.', fx.INFO)).toHaveLength(1);
  });

  it('R-WATCH-5 a watch that is never answered (hanging) is unhealthy after the downtime budget, and healthy again after recovery', async () => {
    op = await startOperator(cluster, watching());
    await fx.eventually(() => fx.watchRequests(cluster).length > 0, 'the watch');
    const hang = cluster.faults.add({ resource: 'kopfexamples', watch: true, action: { hang: true } });
    cluster.dropWatches({ resource: 'kopfexamples' }, 'end');
    await advance(op, 300_000);
    expect((await get(op.liveness())).status).toBe(200);
    await advance(op, 2_000, 1_000);
    const unhealthy = await get(op.liveness());
    expect(unhealthy.body).toEqual({
      status: 'unhealthy',
      problems: [{ kind: 'stream', name: STREAM, reason: expect.stringMatching(/^no watch connection for 30[12] s \(budget 300 s\)$/) as unknown }],
    });
    expect(unhealthy.status).toBe(500);

    hang.remove();
    await advance(op, 70_000); // the inactivity timeout gives up on the hung request and reconnects
    await healthy(op);
    expect(await get(op.liveness())).toEqual({ status: 200, body: {} });
  });

  it('R-WATCH-1 readiness is 503 naming the stream until its initial listing completes, then 200', async () => {
    const failing = cluster.faults.add({ resource: 'kopfexamples', verb: 'list', reset: 'before' });
    op = await startOperator(cluster, watching(), {
      settings: virtualSettings((s) => {
        s.watching.reconnectBackoff = 1;
      }),
    });
    await fx.eventually(() => cluster.requests.all.some((r) => r.resource === 'kopfexamples' && r.verb === 'list'), 'a listing');
    await advance(op, 3_000, 1_000);
    expect(await get(op.readiness())).toEqual({ status: 503, body: { status: 'not ready', waiting: [`the initial listing of ${STREAM}`] } });
    expect((await get(op.liveness())).status).toBe(200); // within the listing budget
    failing.remove();
    await advance(op, 2_000, 1_000);
    await fx.eventually(() => fx.watchRequests(cluster).length > 0, 'the watch after the listing');
    expect(await get(op.readiness())).toEqual({ status: 200, body: { status: 'ready' } });
  });

  it('R-WATCH-1 a listing that hangs is unhealthy after the listing budget', async () => {
    const hang = cluster.faults.add({ resource: 'kopfexamples', verb: 'list', hang: true });
    op = await startOperator(cluster, watching());
    await fx.eventually(() => hang.applied() > 0, 'the listing to hang'); // the listing budget counts from here
    await advance(op, 300_000, 50_000);
    expect((await get(op.liveness())).status).toBe(200);
    await advance(op, 2_000, 1_000);
    const unhealthy = await get(op.liveness());
    expect(unhealthy.status).toBe(500);
    expect(unhealthy.body).toEqual({
      status: 'unhealthy',
      problems: [{ kind: 'stream', name: STREAM, reason: expect.stringMatching(/^the listing is not complete after 30[12] s \(budget 300 s\)$/) as unknown }],
    });
    expect((await get(op.readiness())).status).toBe(503);
  });

  it('R-INDEX-7 a readiness barrier that never opens (an indexer that never finishes) is unhealthy after the listing budget', async () => {
    await cluster.store.create(fx.kopfExample('kex-stuck'));
    const registry = watching();
    let indexing = 0;
    on.index('kopfexamples', { registry }, function byName() {
      indexing += 1;
      return new Promise(() => undefined);
    });
    // Virtual time runs faster than the devcluster's real-time bookmarks: only the barrier is judged here.
    op = await startOperator(cluster, registry, {
      settings: virtualSettings((s) => {
        s.health.silenceBudget = null;
      }),
    });
    await fx.eventually(() => indexing > 0, 'the indexer');
    expect(await get(op.readiness())).toEqual({ status: 503, body: { status: 'not ready', waiting: ['the indexing of the initial listings'] } });
    await advance(op, 300_000, 50_000);
    expect((await get(op.liveness())).status).toBe(200);
    await advance(op, 2_000, 1_000);
    const unhealthy = await get(op.liveness());
    expect(unhealthy.status).toBe(500);
    expect(unhealthy.body).toEqual({
      status: 'unhealthy',
      problems: [
        {
          kind: 'barrier',
          name: 'indices',
          reason: expect.stringMatching(/^the initial listings are not indexed after 30[12] s \(budget 300 s; 1 listed objects still to index\)$/) as unknown,
        },
      ],
    });
  });
});
