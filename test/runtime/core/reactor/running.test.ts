import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../../devcluster/testing.js';
import * as clocks from '../../../../runtime/cogs/aio/clocks.js';
import * as credentials from '../../../../runtime/cogs/client/credentials.js';
import * as settingsModule from '../../../../runtime/cogs/configs/settings.js';
import * as errors from '../../../../runtime/core/actions/errors.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import * as running from '../../../../runtime/core/reactor/running.js';
import { on } from '../../../../runtime/on.js';
import { Captured, Flag, eventually, startCluster } from './lifecycle.js';
import * as engineErrors from '../../../../runtime/core/engines/errors.js';
import * as reactorErrors from '../../../../runtime/core/reactor/errors.js';

let cluster: DevCluster;
let log: Captured;

beforeAll(async () => {
  cluster = await startCluster({ auth: 'enforced' });
});
afterAll(async () => {
  await cluster.stop();
});
beforeEach(() => {
  log = new Captured();
  cluster.requests.clear();
});
afterEach(() => {
  log.restore();
});

/** Fast settings for tests: quick retries and reconnects. */
function fastSettings(): settingsModule.OperatorSettings {
  const settings = new settingsModule.OperatorSettings();
  settings.networking.errorBackoffs = [0.05];
  settings.watching.reconnectBackoff = 0.05;
  settings.execution.defaultBackoff = 0.1;
  settings.queueing.exitTimeout = 0.5;
  return settings;
}

/** A token with full permissions, known to the cluster. */
function adminToken(name: string): string {
  const token = `${name}-${Math.random().toString(36).slice(2)}`;
  cluster.auth.addToken({ token, username: `user-${token}`, groups: ['system:masters'] });
  return token;
}

/** A registry with a login handler returning a fresh admin token each time, and a pods watcher. */
function baseRegistry(tokens: string[] = []): OperatorRegistry {
  const registry = new OperatorRegistry();
  on.login({ registry }, function login_fn() {
    const token = adminToken('login');
    tokens.push(token);
    return { server: cluster.url, token };
  });
  on.event(['v1', 'pods'], { registry }, function pod_fn() {});
  return registry;
}

describe('startup (R-ACTIVITY-1, R-LIFE-2)', () => {
  it('R-ACTIVITY-1 startup handlers are retried together until done, and no API request is made before', async () => {
    const registry = baseRegistry();
    const seen: Array<{ id: string; retry: number; requests: number }> = [];
    on.startup({ registry }, function startup_fn_simple({ retry }) {
      seen.push({ id: 'simple', retry, requests: cluster.requests.all.length });
    });
    on.startup({ registry }, function startup_fn_retried({ retry }) {
      seen.push({ id: 'retried', retry, requests: cluster.requests.all.length });
      if (retry < 3) throw new errors.TemporaryError(`Going to succeed in ${3 - retry}s`, { delay: 0.05 });
    });
    const stop = new AbortController();
    const ready = new Flag();
    const operator = running.operator({ registry, settings: fastSettings(), clusterwide: true, standalone: true, stopFlag: stop.signal, readyFlag: ready });
    await ready.wait();
    expect(seen.map((s) => `${s.id}#${s.retry}`)).toEqual(['simple#0', 'retried#0', 'retried#1', 'retried#2', 'retried#3']);
    expect(seen.every((s) => s.requests === 0)).toBe(true);
    expect(log.matching("Activity 'startup_fn_retried' failed temporarily: Going to succeed in")).toEqual([
      "Activity 'startup_fn_retried' failed temporarily: Going to succeed in 3s",
      "Activity 'startup_fn_retried' failed temporarily: Going to succeed in 2s",
      "Activity 'startup_fn_retried' failed temporarily: Going to succeed in 1s",
    ]);
    expect(log.matching("Activity 'startup_fn_retried' succeeded.")).toHaveLength(1);
    expect(log.matching("Activity 'startup_fn_simple' succeeded.")).toHaveLength(1);
    await cluster.requests.waitFor((r) => r.resource === 'pods' && r.verb === 'watch', 5000);
    stop.abort();
    await operator;
    expect(log.matching('Stop-flag is raised. Operator is stopping.')).toHaveLength(1);
  });

  it('R-ACTIVITY-1 a permanently failing startup handler fails the operator without cleanup or API calls', async () => {
    const registry = baseRegistry();
    const cleanups: string[] = [];
    on.startup({ registry }, function startup_fn_broken() {
      throw new errors.PermanentError('No way.');
    });
    on.cleanup({ registry }, function cleanup_fn() {
      cleanups.push('cleanup');
    });
    const ready = new Flag();
    const failure = await running.operator({ registry, settings: fastSettings(), clusterwide: true, readyFlag: ready }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(engineErrors.ActivityError);
    expect((failure as Error).cause).toBeInstanceOf(errors.PermanentError);
    expect(log.matching("Activity 'startup_fn_broken' failed permanently: No way.")).toHaveLength(1);
    expect(ready.isSet).toBe(false);
    expect(cleanups).toEqual([]);
    expect(cluster.requests.all).toHaveLength(0);
  });

  it('R-SHARD-111 a startup handler that changes the ring or the identity stops the operator, naming the setting, before any API call', async () => {
    const registry = baseRegistry();
    on.startup({ registry }, function startup_fn_another_ring({ settings }) {
      settings.sharding.leaseDuration = 30; // may be set here: read when the membership starts
      settings.sharding.ring = 'another';
    });
    const failure = await running.operator({ registry, settings: fastSettings(), clusterwide: true, shards: 'r', shardIdentity: 'a' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(reactorErrors.OperatorModeError);
    expect((failure as Error).message).toContain('settings.sharding.ring was changed by a startup handler');
    expect(cluster.requests.all).toHaveLength(0);
  });

  it('R-ACTIVITY-3 the ready flag is raised after the startup activity; stop during startup skips cleanup', async () => {
    const registry = baseRegistry();
    const cleanups: string[] = [];
    const stop = new Flag();
    on.startup({ registry }, async function startup_fn_slow({ signal }) {
      stop.set();
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    });
    on.cleanup({ registry }, function cleanup_fn() {
      cleanups.push('cleanup');
    });
    let readied = 0;
    await running.operator({
      registry,
      settings: fastSettings(),
      clusterwide: true,
      stopFlag: stop,
      readyFlag: () => {
        readied += 1;
      },
    });
    expect(readied).toBe(0);
    expect(cleanups).toEqual([]);
    expect(log.matching("Activity 'startup_fn_slow' is cancelled. Will escalate.")).toHaveLength(1);
    expect(log.matching('Startup activity is only partially executed due to cancellation.')).toHaveLength(1);
    expect(cluster.requests.all).toHaveLength(0);
  });
});

describe('authentication (R-AUTH-1..3)', () => {
  it('R-AUTH-1 credentials of the login handler are used for all requests, with the initial-authentication lines', async () => {
    const tokens: string[] = [];
    const registry = baseRegistry(tokens);
    const stop = new AbortController();
    const operator = running.operator({ registry, settings: fastSettings(), clusterwide: true, standalone: true, stopFlag: stop.signal });
    await cluster.requests.waitFor((r) => r.resource === 'pods' && r.verb === 'watch', 5000);
    stop.abort();
    await operator;
    expect(tokens).toHaveLength(1);
    const used = new Set(cluster.requests.all.map((r) => r.user));
    expect([...used]).toEqual([`user-${tokens[0]}`]);
    expect(cluster.requests.all.every((r) => r.code < 400)).toBe(true);
    expect(log.matching('Initial authentication has been initiated.')).toHaveLength(1);
    expect(log.matching('Initial authentication has finished.')).toHaveLength(1);
    expect(log.matching("Activity 'login_fn' succeeded.")).toHaveLength(1);
    expect(log.records.find((r) => r.message === 'Initial authentication has finished.')?.name).toBe('kopf.activities.authentication');
  });

  it('R-AUTH-3 a revoked token makes the operator re-authenticate and go on with the new credentials', async () => {
    const tokens: string[] = [];
    const registry = baseRegistry(tokens);
    const stop = new AbortController();
    const operator = running.operator({ registry, settings: fastSettings(), clusterwide: true, standalone: true, stopFlag: stop.signal });
    await cluster.requests.waitFor((r) => r.resource === 'pods' && r.verb === 'watch', 5000);
    cluster.auth.revokeToken(tokens[0]!);
    cluster.dropWatches({ resource: 'pods' }, 'end');
    await eventually(() => log.matching('Re-authentication has finished.').length === 1, 're-authentication');
    await cluster.requests.waitFor((r) => r.resource === 'pods' && r.verb === 'watch' && r.user === `user-${tokens[1]}`, 5000);
    stop.abort();
    await operator;
    expect(tokens).toHaveLength(2);
    expect(cluster.requests.filter((r) => r.code === 401).length).toBeGreaterThan(0);
    expect(log.matching('Re-authentication has been initiated.')).toHaveLength(1);
    expect(log.matching("Activity 'login_fn' succeeded.")).toHaveLength(2);
  });

  it('R-AUTH-3 expiring credentials are renewed when they expire', async () => {
    const registry = new OperatorRegistry();
    let logins = 0;
    on.login({ registry }, function login_fn() {
      logins += 1;
      return { server: cluster.url, token: adminToken('expiring'), expiration: new Date(Date.now() + 300) };
    });
    const stop = new AbortController();
    const operator = running.operator({ registry, settings: fastSettings(), clusterwide: true, standalone: true, stopFlag: stop.signal });
    await eventually(() => log.matching('Re-authentication has finished.').length >= 1, 're-authentication after expiry');
    stop.abort();
    await operator;
    expect(logins).toBeGreaterThanOrEqual(2);
    expect(log.matching('Initial authentication has finished.')).toHaveLength(1);
  });

  it('R-AUTH-3 login handlers returning nothing log the warning and the operator fails with LoginError', async () => {
    const registry = new OperatorRegistry();
    on.login({ registry }, function login_fn() {
      return null;
    });
    on.event(['v1', 'pods'], { registry }, function pod_fn() {});
    const failure = await running.operator({ registry, settings: fastSettings(), clusterwide: true, standalone: true }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).name).toBe('LoginError');
    expect(log.matching('Initial authentication has failed: no credentials were retrieved from the login handlers.')).toHaveLength(1);
    expect(log.records.find((r) => r.message.startsWith('Initial authentication has failed'))?.level).toBe(30);
  });

  it('R-AUTH-3 a pre-populated vault is used without an initial login', async () => {
    const registry = baseRegistry();
    let logins = 0;
    const loginHandlers = registry.activityHandlers('authentication');
    expect(loginHandlers).toHaveLength(1);
    const vault = new credentials.Vault();
    vault.populate({ given: { server: cluster.url, token: adminToken('vault') } });
    on.login({ registry }, function other_login() {
      logins += 1;
      return null;
    });
    const stop = new AbortController();
    const operator = running.operator({ registry, vault, settings: fastSettings(), clusterwide: true, standalone: true, stopFlag: stop.signal });
    await cluster.requests.waitFor((r) => r.resource === 'pods' && r.verb === 'watch', 5000);
    stop.abort();
    await operator;
    expect(logins).toBe(0);
    expect(log.matching('Initial authentication')).toEqual([]);
  });
});

describe('graceful stop (R-LIFE-3, R-ACTIVITY-2)', () => {
  it('R-ACTIVITY-2 cleanup runs once, after all other tasks have stopped', async () => {
    const registry = baseRegistry();
    let tasks: running.OperatorTasks | undefined;
    const settledAtCleanup: string[][] = [];
    const settled = new Set<string>();
    on.cleanup({ registry }, function cleanup_fn({ logger }) {
      logger.info('Cleaning up...');
      settledAtCleanup.push([...settled].sort());
    });
    const stop = new AbortController();
    tasks = await running.spawnTasks({ registry, settings: fastSettings(), clusterwide: true, standalone: true, stopFlag: stop.signal });
    for (const task of tasks.tasks) void task.done.finally(() => settled.add(task.name));
    const runner = running.runTasks(tasks);
    await cluster.requests.waitFor((r) => r.resource === 'pods' && r.verb === 'watch', 5000);
    stop.abort();
    await runner;
    expect(settledAtCleanup).toEqual([tasks.tasks.map((task) => task.name).sort()]);
    expect(log.matching('Cleaning up...')).toHaveLength(1);
    expect(log.matching("Activity 'cleanup_fn' succeeded.")).toHaveLength(1);
    expect(tasks.context.signal.aborted).toBe(true);
  });

  it('R-LIFE-3 a failing watcher stops the operator, which rejects with its error after cleanup', async () => {
    const registry = baseRegistry();
    const cleanups: string[] = [];
    on.cleanup({ registry }, function cleanup_fn() {
      cleanups.push('cleanup');
    });
    const boom = new Error('The watcher has exploded.');
    const stopped: string[] = [];
    const failure = await running
      .operator({
        registry,
        settings: fastSettings(),
        clusterwide: true,
        standalone: true,
        watcher: async (_context, resource, _namespace, signal) => {
          signal.addEventListener('abort', () => stopped.push(resource.plural));
          await new Promise((r) => setImmediate(r)); // fails on the next turn, once all watchers have started
          throw boom;
        },
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(failure).toBe(boom);
    expect(cleanups).toEqual(['cleanup']);
    expect(log.matching('Multidimensional multitasker has failed: The watcher has exploded.')).toHaveLength(1);
  });

  it('R-LIFE-3 a real watcher failing on a listing error stops the operator', async () => {
    const registry = baseRegistry();
    const fault = cluster.faults.add({ resource: 'pods', verb: 'list', action: { respond: { code: 404, message: 'No pods today.' } } });
    try {
      const failure = await running.operator({ registry, settings: fastSettings(), clusterwide: true, standalone: true }).then(
        () => null,
        (e: unknown) => e,
      );
      expect((failure as { code?: unknown }).code).toBe('ApiNotFound');
      expect(log.matching('Watcher for pods.v1@cluster-wide has failed: No pods today.')).toHaveLength(1);
    } finally {
      fault.remove();
    }
  });

  it('R-LIFE-3 tasks that do not stop get 5 seconds, then their work is cancelled through the context signal', async () => {
    const clock = new clocks.VirtualClock({ start: Date.now() });
    let cancelledAt: number | undefined;
    const watching = new Flag();
    const stop = new AbortController();
    const operator = running.operator({
      registry: baseRegistry(),
      settings: fastSettings(),
      clusterwide: true,
      standalone: true,
      stopFlag: stop.signal,
      clock,
      watcher: async (context) => {
        watching.set();
        // Ignores its own signal: only the operator-wide cancellation ends it.
        await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
        cancelledAt = clock.now();
      },
    });
    await watching.wait();
    const stoppedAt = clock.now();
    stop.abort();
    await eventually(() => clock.nextDue() !== undefined, 'the wait for hung tasks');
    expect(cancelledAt).toBeUndefined();
    await clock.advance(running.HUNG_TASK_TIMEOUT * 1000);
    await operator;
    expect(cancelledAt).toBe(stoppedAt + 5000);
    expect(log.matching("Root tasks are not stopped in 5 seconds: 'multidimensional multitasker'. Cancelling their work.")).toHaveLength(1);
  });

  it('R-SCOPE-1 clusterwide together with namespaces throws; neither warns and serves cluster-wide', async () => {
    await expect(running.operator({ clusterwide: true, namespaces: ['default'] })).rejects.toBeInstanceOf(reactorErrors.OperatorScopeError);
    expect(running.resolveScope({})).toEqual({ clusterwide: true, namespaces: [] });
    expect(log.matching('Absence of either namespaces or cluster-wide flag will become an error soon.')).toHaveLength(1);
    expect(running.resolveScope({ namespaces: ['a*', /b.*/] })).toEqual({ clusterwide: false, namespaces: ['a*', /b.*/] });
  });

  it('R-LIFE-1 options write standalone and the scope into the settings; peering is auto-detected', async () => {
    const settings = fastSettings();
    const stop = new AbortController();
    const tasks = await running.spawnTasks({ registry: baseRegistry(), settings, namespaces: ['default'], standalone: false, stopFlag: stop.signal });
    expect(settings.peering).toMatchObject({ standalone: false, priority: 0, name: 'default', mandatory: false, clusterwide: false });
    const done = running.runTasks(tasks);
    await cluster.requests.waitFor((r) => r.resource === 'pods' && r.verb === 'watch' && r.namespace === 'default', 5000);
    stop.abort();
    await done;
    await expect(running.runTasks(tasks)).rejects.toThrow('already running');
  });
});

describe('embedding (R-LIFE-5/6, A-24)', () => {
  it('A-24 an embedded operator handles objects between its ready and stop flags, with no signal handlers installed', async () => {
    const registry = baseRegistry();
    const templates = { createTpl: 'Hello, {name}!', deleteTpl: 'Good bye, {name}!' };
    on.create(['kopf.dev', 'v1', 'kopfexamples'], { registry }, function create_fn({ memo, name, logger }) {
      logger.info((memo as unknown as typeof templates).createTpl.replace('{name}', name));
    });
    on.delete(['kopf.dev', 'v1', 'kopfexamples'], { registry }, function delete_fn({ memo, name, logger }) {
      logger.info((memo as unknown as typeof templates).deleteTpl.replace('{name}', name));
    });
    const hostWork = new AbortController();
    // The host program's own timer (its work, which the operator must leave alone), not a wait of the test.
    const hostTimer = new Promise<string>((resolve) => setTimeout(() => resolve(hostWork.signal.aborted ? 'cancelled' : 'intact'), 50));
    const signalsBefore = [process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')];
    const ready = new Flag();
    const stop = new Flag();
    const operator = running.operator({
      registry,
      memo: { ...templates },
      settings: fastSettings(),
      readyFlag: ready,
      stopFlag: stop,
      clusterwide: true,
      standalone: true,
    });
    await ready.wait();
    expect([process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')]).toEqual(signalsBefore);
    await cluster.requests.waitFor((r) => r.resource === 'kopfexamples' && r.verb === 'watch', 5000);
    const ref = { apiVersion: 'kopf.dev/v1', kind: 'KopfExample' };
    for (const n of [0, 1, 2]) {
      const name = `kopf-example-${n}`;
      await cluster.store.create({ apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name, namespace: 'default' }, spec: {} });
      await eventually(() => log.matching(`Hello, ${name}!`).length === 1, `creation of ${name}`);
      await eventually(
        () =>
          ((cluster.store.get(ref, name, 'default')?.['metadata'] as { finalizers?: unknown[] } | undefined)?.finalizers ?? []).length > 0 &&
          log.matching("Handler 'create_fn' succeeded.").length === n + 1,
        `handling of ${name}`,
      );
      await cluster.store.delete(ref, name, { namespace: 'default' });
      await eventually(() => log.matching(`Good bye, ${name}!`).length === 1, `deletion of ${name}`);
    }
    await eventually(() => cluster.store.list(ref, 'default').length === 0, 'finalizers released');
    const stopping = Date.now();
    stop.set();
    await operator;
    expect(Date.now() - stopping).toBeLessThan(3000);
    expect(log.matching('Stop-flag is raised. Operator is stopping.')).toHaveLength(1);
    expect([process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')]).toEqual(signalsBefore);
    expect(await hostTimer).toBe('intact');
  });

  it('R-LIFE-5 two operators in one process have their own settings, memos and vaults', async () => {
    const memos: object[] = [];
    const make = (name: string): OperatorRegistry => {
      const registry = baseRegistry();
      on.startup({ registry, id: `startup_${name}` }, ({ memo, settings }) => {
        memos.push(memo);
        settings.posting.reportingInstance = name;
      });
      return registry;
    };
    const [s1, s2] = [fastSettings(), fastSettings()];
    const [stop1, stop2] = [new AbortController(), new AbortController()];
    const [r1, r2] = [new Flag(), new Flag()];
    const op1 = running.operator({ registry: make('one'), settings: s1, clusterwide: true, standalone: true, stopFlag: stop1.signal, readyFlag: r1 });
    const op2 = running.operator({ registry: make('two'), settings: s2, clusterwide: true, standalone: true, stopFlag: stop2.signal, readyFlag: r2 });
    await Promise.all([r1.wait(), r2.wait()]);
    stop1.abort();
    await op1;
    expect(log.matching('Stop-flag is raised. Operator is stopping.')).toHaveLength(1);
    await cluster.requests.waitFor((r) => r.resource === 'pods' && r.verb === 'watch', 5000);
    stop2.abort();
    await op2;
    expect([s1.posting.reportingInstance, s2.posting.reportingInstance]).toEqual(['one', 'two']);
    expect(memos).toHaveLength(2);
    expect(memos[0]).not.toBe(memos[1]);
  });
});

describe('signals (R-LIFE-3/4)', () => {
  it('R-LIFE-3 run() installs SIGINT/SIGTERM handlers while it runs and removes them afterwards', async () => {
    const before = process.listenerCount('SIGTERM');
    const stop = new AbortController();
    const ready = new Flag();
    const operator = running.run({
      registry: baseRegistry(),
      settings: fastSettings(),
      clusterwide: true,
      standalone: true,
      stopFlag: stop.signal,
      readyFlag: ready,
    });
    await ready.wait();
    expect(process.listenerCount('SIGTERM')).toBe(before + 1);
    expect(process.listenerCount('SIGINT')).toBeGreaterThan(0);
    stop.abort();
    await operator;
    expect(process.listenerCount('SIGTERM')).toBe(before);
  });

  it('R-LIFE-4 a termination signal stops the operator and forces the exit if it is still alive after the timeout', async () => {
    const clock = new clocks.VirtualClock({ start: Date.now() });
    const registry = baseRegistry();
    const cleaning = new Flag();
    let cleaned = (): void => undefined;
    on.cleanup({ registry }, async function cleanup_fn() {
      cleaning.set();
      // Still cleaning when the forced exit is due.
      await new Promise<void>((resolve) => {
        cleaned = resolve;
      });
    });
    const settings = fastSettings();
    settings.process.ultimateExitingTimeout = 0.2;
    const exits: Array<{ code: number; at: number }> = [];
    const ready = new Flag();
    let stopped = false;
    const operator = running
      .run({
        registry,
        settings,
        clusterwide: true,
        standalone: true,
        readyFlag: ready,
        clock,
        exit: (code) => exits.push({ code, at: clock.now() }),
      })
      .finally(() => {
        stopped = true;
      });
    await ready.wait();
    expect(process.listenerCount('SIGTERM')).toBe(1);
    const signalled = clock.now();
    process.emit('SIGTERM', 'SIGTERM');
    await cleaning.wait();
    await clock.advance(199);
    expect(exits).toEqual([]);
    await clock.advance(1);
    expect(exits).toEqual([{ code: 1, at: signalled + 200 }]);
    cleaned();
    while (!stopped) await clock.advance(100);
    await operator;
    expect(log.matching('Signal SIGTERM is received. Operator is stopping.')).toHaveLength(1);
    expect(exits).toHaveLength(1);
    expect(process.listenerCount('SIGTERM')).toBe(0);
  });

  it('R-LIFE-4 no forced exit when the stop comes from the stop flag, or when the timeout is disabled', async () => {
    const clock = new clocks.VirtualClock({ start: Date.now() });
    const exits: number[] = [];
    running.scheduleUltimateExit(null, (code) => exits.push(code), clock);
    expect(clock.pending).toBe(0);
    const settings = fastSettings();
    settings.process.ultimateExitingTimeout = 0.05;
    let stopped = false;
    const operator = running
      .run({
        registry: baseRegistry(),
        settings,
        clusterwide: true,
        standalone: true,
        stopFlag: Promise.resolve(),
        clock,
        exit: (code) => exits.push(code),
      })
      .finally(() => {
        stopped = true;
      });
    while (!stopped) await clock.advance(100);
    await operator;
    // Far past the forced exit's deadline on the operator's clock: nothing was scheduled to fire.
    await clock.advance(10_000);
    expect(exits).toEqual([]);
  });
});
