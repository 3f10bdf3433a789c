/**
 * The Lease elector (`engines/leadership`) against the devcluster over loopback, through the real
 * HTTP client, on a virtual clock shared by the replicas (the devcluster keeps real time; the
 * Lease's times come from the electors' clock). Each replica logs in with its own token, so the
 * devcluster's request log and fault rules tell the replicas apart: a fault on one replica's user
 * is a network partition of that replica. A replica is "active" while its pause toggle is off;
 * every test records the toggles' history and checks that no two replicas were ever active at
 * the same virtual moment.
 *
 * SIGKILL of the leader is simulated by cutting all its requests off at the network (resetting its
 * connections) at the moment of the "kill": from the Lease's and the standbys' side this is exactly
 * a process that stopped renewing without releasing. (The partitioned process itself also pauses,
 * which is what the partition tests check.)
 */
import * as childprocess from 'node:child_process';
import * as https from 'node:https';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as YAML from 'yaml';

import { DevCluster } from '../../../../devcluster/testing.js';
import * as clocks from '../../../../runtime/cogs/aio/clocks.js';
import * as toggles from '../../../../runtime/cogs/aio/toggles.js';
import * as api from '../../../../runtime/cogs/client/api.js';
import * as credentials from '../../../../runtime/cogs/client/credentials.js';
import * as settings from '../../../../runtime/cogs/configs/settings.js';
import * as leadership from '../../../../runtime/core/engines/leadership.js';
import * as leases from '../../../../runtime/core/engines/leases.js';
import { requireKubectl } from '../../../support/kubectl.js';
import { RecordingLogger, tempDir } from '../../cogs/client/helpers.js';
import * as configErrors from '../../../../runtime/cogs/configs/errors.js';

const EPOCH = Date.parse('2030-01-01T00:00:00Z');
const LEASE = 'my-operator';
const MICROTIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
type Json = Record<string, unknown>;

/** Runs kubectl (asynchronously: the devcluster answers it from this process). */
async function kubectl(kubeconfig: string, args: string[], input?: string): Promise<string> {
  const binary = requireKubectl();
  const run = promisify(childprocess.execFile);
  if (input === undefined) return (await run(binary, ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', timeout: 30_000 })).stdout;
  return await new Promise<string>((resolve, reject) => {
    const child = childprocess.execFile(binary, ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', timeout: 30_000 }, (error, stdout) =>
      error ? reject(error) : resolve(stdout),
    );
    child.stdin!.end(input);
  });
}

interface Replica {
  readonly identity: string;
  readonly user: string;
  readonly toggle: toggles.Toggle;
  readonly logger: RecordingLogger;
  readonly api: api.HttpKubeApi;
  /** Virtual times (ms since EPOCH) at which it became active / inactive. */
  readonly history: Array<[number, boolean]>;
  readonly done: Promise<void>;
  stop(): Promise<void>;
  active(): boolean;
}

describe('Lease election: the elector', () => {
  let cluster: DevCluster;
  let clock: clocks.VirtualClock;
  const replicas: Replica[] = [];

  beforeEach(async () => {
    cluster = await DevCluster.start({ auth: 'enforced' }); // TLS: kubectl sends no token over plain HTTP
    clock = new clocks.VirtualClock({ start: EPOCH });
  });
  afterEach(async () => {
    cluster.faults.clear();
    for (const replica of replicas.splice(0)) await replica.stop();
    await cluster.stop();
  });

  const now = (): number => clock.now() - EPOCH;

  function start(identity: string, configure?: (s: settings.LeaderElectionSettings) => void): Replica {
    const user = `user-${identity}`;
    const token = `token-${identity}`;
    cluster.auth.addToken({ token, username: user, groups: ['system:masters'] });
    const s = new settings.OperatorSettings({ warn: () => undefined });
    s.networking.errorBackoffs = [0.05, 0.05];
    configure?.(s.leaderElection);
    const vault = new credentials.Vault({ clock });
    vault.populate({ static: { server: cluster.url, token, caData: cluster.caPem } });
    const logger = new RecordingLogger();
    const client = new api.HttpKubeApi({ vault, settings: s, logger: new RecordingLogger(), clock });
    const toggle = new toggles.Toggle(true, identity);
    const history: Array<[number, boolean]> = [];
    toggle.subscribe(() => history.push([now(), toggle.isOff()]));
    const stopper = new AbortController();
    const done = leadership.runElection({
      api: client,
      name: LEASE,
      namespace: 'default',
      identity,
      settings: s.leaderElection,
      clock,
      paused: toggle,
      logger,
      signal: stopper.signal,
      random: () => 0.5,
    });
    const replica: Replica = {
      identity,
      user,
      toggle,
      logger,
      api: client,
      history,
      done,
      async stop() {
        stopper.abort();
        await done;
        client.close();
      },
      active: () => toggle.isOff(),
    };
    replicas.push(replica);
    return replica;
  }

  /** Advances virtual time in steps of `step` ms (the electors' requests complete at each step). */
  async function run(ms: number, step = 100): Promise<void> {
    for (let t = 0; t < ms; t += step) await clock.advance(Math.min(step, ms - t));
  }

  /** Runs until `predicate` holds (at most `limit` virtual ms); returns the virtual time taken. */
  async function runUntil(predicate: () => boolean, what: string, limit = 60_000, step = 100): Promise<number> {
    const since = clock.now();
    while (!predicate()) {
      if (clock.now() - since > limit) throw new Error(`${what}: not within ${limit} virtual ms`);
      await clock.advance(step);
    }
    return clock.now() - since;
  }

  /** A request of the cluster's admin (trusting the cluster's CA). */
  async function adminFetch(
    url: string,
    init: { method?: string; body?: string },
  ): Promise<{ status: number; json(): Promise<unknown>; text(): Promise<string> }> {
    const agent = new https.Agent({ ca: cluster.caPem });
    return await new Promise((resolve, reject) => {
      const request = https.request(
        url,
        { method: init.method ?? 'GET', agent, headers: { authorization: `Bearer ${cluster.token}`, 'content-type': 'application/json' } },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: response.statusCode ?? 0, json: async () => JSON.parse(text) as unknown, text: async () => text });
          });
        },
      );
      request.on('error', reject);
      request.end(init.body);
    });
  }

  async function storedLease(): Promise<Json> {
    const response = await adminFetch(`${cluster.url}/apis/coordination.k8s.io/v1/namespaces/default/leases/${LEASE}`, {});
    expect(response.status).toBe(200);
    return (await response.json()) as Json;
  }

  async function writeLease(method: 'POST' | 'PUT' | 'DELETE', body?: Json): Promise<number> {
    const url = `${cluster.url}/apis/coordination.k8s.io/v1/namespaces/default/leases${method === 'POST' ? '' : `/${LEASE}`}`;
    const response = await adminFetch(url, { method, body: body && JSON.stringify(body) });
    await response.text();
    return response.status;
  }

  /** Fails if two replicas were ever active at the same virtual moment. */
  function expectNeverTwoActive(): void {
    const intervals = replicas.map((r) => {
      const spans: Array<[number, number]> = [];
      let since: number | undefined;
      for (const [at, active] of r.history) {
        if (active) since = at;
        else if (since !== undefined) {
          spans.push([since, at]);
          since = undefined;
        }
      }
      if (since !== undefined) spans.push([since, Infinity]);
      return spans;
    });
    for (let i = 0; i < intervals.length; i++) {
      for (let j = i + 1; j < intervals.length; j++) {
        for (const [a0, a1] of intervals[i]!) {
          for (const [b0, b1] of intervals[j]!)
            expect(a0 < b1 && b0 < a1, `${replicas[i]!.identity} [${a0}, ${a1}) overlaps ${replicas[j]!.identity} [${b0}, ${b1})`).toBe(false);
        }
      }
    }
  }

  it("Lease election: the first replica creates the Lease with client-go's fields (MicroTimes, duration, transitions) and resumes; kubectl reads it", async () => {
    const a = start('replica-a');
    expect(a.active()).toBe(false);
    await runUntil(a.active, 'replica-a to lead');
    const lease = await storedLease();
    const spec = lease['spec'] as Json;
    expect(spec).toEqual({
      holderIdentity: 'replica-a',
      leaseDurationSeconds: 15,
      leaseTransitions: 0,
      acquireTime: '2030-01-01T00:00:00.000000Z',
      renewTime: '2030-01-01T00:00:00.000000Z',
    });
    await run(4_100);
    const renewed = (await storedLease())['spec'] as Json;
    expect(renewed['acquireTime']).toBe('2030-01-01T00:00:00.000000Z');
    expect(renewed['renewTime']).toMatch(MICROTIME);
    expect(Date.parse(renewed['renewTime'] as string) - EPOCH).toBeGreaterThanOrEqual(4000);
    expect(a.logger.messages('info')).toContain("Became the leader in Lease 'default/my-operator' as 'replica-a': resuming operations.");

    // kubectl reads it as any Lease; the fields are those client-go writes.
    const kubeconfig = cluster.writeKubeconfig(path.join(tempDir(), 'config'));
    const yaml = await kubectl(kubeconfig, ['get', 'lease', LEASE, '-n', 'default', '-o', 'yaml']);
    const read = YAML.parse(yaml) as Json;
    expect(read['kind']).toBe('Lease');
    expect(read['apiVersion']).toBe('coordination.k8s.io/v1');
    expect(Object.keys(read['spec'] as Json).sort()).toEqual(['acquireTime', 'holderIdentity', 'leaseDurationSeconds', 'leaseTransitions', 'renewTime']);
    expect((read['spec'] as Json)['holderIdentity']).toBe('replica-a');
  });

  it('Lease election: two replicas — only one is active; the leader renews with ≤ 1 request per retryPeriod, the standby reads ≤ 1 per retryPeriod', async () => {
    const a = start('replica-a');
    await runUntil(a.active, 'replica-a to lead');
    const b = start('replica-b');
    await run(1000);
    cluster.requests.clear();
    const period = 60_000;
    await run(period);
    expect(a.active()).toBe(true);
    expect(b.active()).toBe(false);
    const byUser = (user: string): Record<string, number> => cluster.requests.counts((r) => r.user === user);
    const retryPeriods = period / 2000;
    const leader = byUser(a.user);
    const standby = byUser(b.user);
    expect(leader).toEqual({ 'update leases': expect.any(Number) });
    expect(leader['update leases']).toBeLessThanOrEqual(retryPeriods);
    expect(leader['update leases']).toBeGreaterThanOrEqual(retryPeriods - 1);
    expect(Object.keys(standby)).toEqual(['get leases']);
    expect(standby['get leases']).toBeLessThanOrEqual(retryPeriods);
    console.log(`Lease renewal over ${period / 1000} virtual s (retryPeriod 2 s): leader ${JSON.stringify(leader)}, standby ${JSON.stringify(standby)}`);
    expect(b.logger.messages('info')).toContain("New leader observed in Lease 'default/my-operator': 'replica-a'.");
    expectNeverTwoActive();
  });

  it('Lease election: a graceful stop releases the Lease (holder "", duration 1) and the standby takes over at its next read — failover measured', async () => {
    const a = start('replica-a');
    await runUntil(a.active, 'replica-a to lead');
    const b = start('replica-b');
    await run(10_000);
    const stoppedAt = now();
    await a.stop();
    const released = (await storedLease())['spec'] as Json;
    expect(released).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 0 });
    expect(a.logger.messages('info')).toContain("Released Lease 'default/my-operator'.");
    const failover = await runUntil(b.active, 'replica-b to lead', 30_000, 50);
    console.log(`Lease failover after a graceful stop: ${failover / 1000} virtual s (retryPeriod 2 s, standby reads every 2–4.4 s)`);
    expect(failover).toBeLessThanOrEqual(2000 * (1 + leadership.JITTER_FACTOR));
    const taken = (await storedLease())['spec'] as Json;
    expect(taken).toMatchObject({ holderIdentity: 'replica-b', leaseDurationSeconds: 15, leaseTransitions: 1 });
    expect(now()).toBeGreaterThan(stoppedAt);
    expectNeverTwoActive();
  });

  it('Lease election: when the leader stops renewing without releasing (SIGKILL, simulated by cutting its connections), the standby takes over after leaseDuration — failover measured', async () => {
    const a = start('replica-a');
    await runUntil(a.active, 'replica-a to lead');
    const b = start('replica-b');
    await run(10_000);
    const lastRenewal = Date.parse(((await storedLease())['spec'] as Json)['renewTime'] as string) - EPOCH;
    cluster.faults.add({ user: a.user, reset: 'before' });
    const failover = await runUntil(b.active, 'replica-b to lead', 60_000, 50);
    console.log(
      `Lease failover after the leader's loss (no release): ${failover / 1000} virtual s after the kill, ` +
        `${(now() - lastRenewal) / 1000} s after its last renewal (leaseDuration 15 s, retryPeriod 2 s)`,
    );
    expect(now() - lastRenewal).toBeGreaterThanOrEqual(15_000);
    expect(failover).toBeLessThanOrEqual(15_000 + 2 * 2000 * (1 + leadership.JITTER_FACTOR));
    expect((await storedLease())['spec'] as Json).toMatchObject({ holderIdentity: 'replica-b', leaseTransitions: 1 });
    expectNeverTwoActive();
  });

  it('Lease election: a partitioned leader pauses within renewDeadline of its last renewal, before the standby takes over (never two active); after healing it follows the new leader', async () => {
    const a = start('replica-a');
    await runUntil(a.active, 'replica-a to lead');
    const b = start('replica-b');
    await run(10_000);
    const lastRenewal = Date.parse(((await storedLease())['spec'] as Json)['renewTime'] as string) - EPOCH;
    const fault = cluster.faults.add({ user: a.user, respond: { code: 503, message: 'partitioned' } });
    await runUntil(() => !a.active(), 'replica-a to pause', 30_000, 50);
    const pausedAt = now();
    expect(pausedAt - lastRenewal).toBeLessThanOrEqual(10_000);
    expect(a.logger.messages('info').some((m) => m.startsWith("Lost leadership in Lease 'default/my-operator': it was not renewed for 10 s"))).toBe(true);
    expect(a.logger.messages('warning').some((m) => m.startsWith("Failed to renew Lease 'default/my-operator'"))).toBe(true);
    await runUntil(b.active, 'replica-b to lead', 30_000, 50);
    expect(now() - lastRenewal).toBeGreaterThanOrEqual(15_000);
    fault.remove();
    await run(20_000);
    expect(a.active()).toBe(false);
    expect(b.active()).toBe(true);
    expect(a.logger.messages('info')).toContain("New leader observed in Lease 'default/my-operator': 'replica-b'.");
    expectNeverTwoActive();
  });

  it('Lease election: a hanging API (no answer at all) pauses the leader at its renewDeadline, not later', async () => {
    // Virtual time waits for requests in flight before it moves on; hung ones are waited for briefly.
    clock = new clocks.VirtualClock({ start: EPOCH, quiescenceTimeout: 50 });
    const a = start('replica-a');
    await runUntil(a.active, 'replica-a to lead');
    await run(5_000);
    const lastRenewal = Date.parse(((await storedLease())['spec'] as Json)['renewTime'] as string) - EPOCH;
    cluster.faults.add({ user: a.user, hang: true });
    await runUntil(() => !a.active(), 'replica-a to pause', 30_000, 250);
    expect(now() - lastRenewal).toBeLessThanOrEqual(10_000 + 250);
    expect(a.logger.messages('warning').some((m) => m.includes('no answer before the deadline'))).toBe(true);
  });

  it('Lease election: a Lease stolen by someone else pauses the leader at its next renewal; the thief is respected until its record is older than leaseDuration', async () => {
    const a = start('replica-a');
    await runUntil(a.active, 'replica-a to lead');
    await run(3_000);
    const lease = await storedLease();
    const stolenAt = now();
    expect(
      await writeLease('PUT', {
        ...lease,
        spec: { ...(lease['spec'] as Json), holderIdentity: 'thief', leaseDurationSeconds: 15, renewTime: '2029-12-31T23:00:00.000000Z' },
      }),
    ).toBe(200);
    await runUntil(() => !a.active(), 'replica-a to pause', 10_000, 50);
    expect(now() - stolenAt).toBeLessThanOrEqual(2_100);
    expect(a.logger.messages('info')).toContain("Lost leadership in Lease 'default/my-operator': it is held by 'thief'. Pausing operations.");
    expect(a.logger.messages('info')).toContain("New leader observed in Lease 'default/my-operator': 'thief'.");
    // The thief's old renewTime does not matter: the wait runs on the local clock since the change was seen.
    const waited = await runUntil(a.active, 'replica-a to take over again', 60_000, 50);
    expect(now() - stolenAt).toBeGreaterThanOrEqual(15_000);
    console.log(`Lease taken back from a silent thief ${waited / 1000} virtual s after losing it`);
    expect((await storedLease())['spec'] as Json).toMatchObject({ holderIdentity: 'replica-a', leaseTransitions: 1 }); // the thief did not count its transition
  });

  it('Lease election: a Lease held by another tool (written by kubectl) is respected for leaseDurationSeconds as observed locally, then taken with leaseTransitions + 1', async () => {
    const kubeconfig = cluster.writeKubeconfig(path.join(tempDir(), 'config'));
    const manifest = YAML.stringify({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: LEASE, namespace: 'default', labels: { team: 'ops' } },
      spec: {
        holderIdentity: 'go-controller-7f9c',
        leaseDurationSeconds: 20,
        acquireTime: '2030-01-01T00:00:00.000000Z',
        renewTime: '2030-01-01T00:00:00.000000Z',
        leaseTransitions: 4,
      },
    });
    await kubectl(kubeconfig, ['apply', '-f', '-'], manifest);
    const a = start('replica-a');
    await run(19_000);
    expect(a.active()).toBe(false);
    expect(a.logger.messages('info')).toContain("New leader observed in Lease 'default/my-operator': 'go-controller-7f9c'.");
    await runUntil(a.active, 'replica-a to take over', 10_000, 50);
    expect(now()).toBeGreaterThanOrEqual(20_000);
    const taken = await storedLease();
    expect(taken['spec']).toMatchObject({ holderIdentity: 'replica-a', leaseTransitions: 5, leaseDurationSeconds: 15 });
    expect((taken['metadata'] as Json)['labels']).toEqual({ team: 'ops' }); // the rest of the object is kept
  });

  it('Lease election: a Lease deleted by someone else is created again by the leader, which stays the leader', async () => {
    const a = start('replica-a');
    await runUntil(a.active, 'replica-a to lead');
    await run(3_000);
    expect(await writeLease('DELETE')).toBe(200);
    await run(4_000);
    expect(a.active()).toBe(true);
    expect(a.history.filter(([, active]) => !active)).toEqual([]);
    expect((await storedLease())['spec'] as Json).toMatchObject({ holderIdentity: 'replica-a', leaseTransitions: 0 });
    expect(a.logger.messages('warning')).toContain("Lease 'default/my-operator' is gone (deleted by someone else); creating it again.");
  });

  it('Lease election: a 409 on the renewal, and a few API errors shorter than renewDeadline, do not cost the leadership', async () => {
    const a = start('replica-a');
    await runUntil(a.active, 'replica-a to lead');
    await run(3_000);
    cluster.faults.add({
      user: a.user,
      verb: 'update',
      resource: 'leases',
      times: 1,
      respond: { code: 409, reason: 'Conflict', message: 'the object has been modified' },
    });
    await run(4_000);
    cluster.faults.add({ user: a.user, resource: 'leases', times: 6, respond: { code: 500, message: 'etcd is down' } });
    await run(10_000);
    expect(a.active()).toBe(true);
    expect(a.history.filter(([, active]) => !active)).toEqual([]);
    expect(a.logger.messages('warning').some((m) => m.startsWith("Failed to renew Lease 'default/my-operator': ApiServerError"))).toBe(true);
  });

  it('Lease election: a release that meets a conflict reads the Lease and releases it if it is still held', async () => {
    const a = start('replica-a');
    await runUntil(a.active, 'replica-a to lead');
    await run(3_000);
    cluster.faults.add({
      user: a.user,
      verb: 'update',
      resource: 'leases',
      times: 1,
      respond: { code: 409, reason: 'Conflict', message: 'the object has been modified' },
    });
    await a.stop();
    expect((await storedLease())['spec'] as Json).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
    expect(a.logger.messages('info')).toContain("Released Lease 'default/my-operator'.");
  });

  it('Lease election: two replicas starting at once — one creates the Lease, the other gets the conflict and stands by', async () => {
    const a = start('replica-a');
    const b = start('replica-b');
    await runUntil(() => a.active() || b.active(), 'a leader');
    await run(20_000);
    expect([a.active(), b.active()].filter(Boolean)).toHaveLength(1);
    expectNeverTwoActive();
  });

  it('Lease election: invalid timings are refused with a clear error', () => {
    const s = new settings.LeaderElectionSettings();
    s.renewDeadline = 15;
    expect(() => s.validate()).toThrow('leaderElection.renewDeadline (15 s) must be less than leaderElection.leaseDuration (15 s).');
    s.renewDeadline = 10;
    s.retryPeriod = 10;
    expect(() => s.validate()).toThrow('leaderElection.retryPeriod (10 s) must be less than leaderElection.renewDeadline (10 s).');
    s.retryPeriod = -1;
    expect(() => s.validate()).toThrow('leaderElection.retryPeriod must be a positive number of seconds, got -1.');
    s.retryPeriod = 2;
    s.leaseDuration = 15.5;
    expect(() => s.validate()).toThrow(configErrors.SettingsError);
    s.leaseDuration = 15;
    expect(() => s.validate()).not.toThrow();
  });
});

describe('Lease election: records', () => {
  it('Lease election: MicroTimes have six fractional digits and Z', () => {
    expect(leases.formatMicroTime(Date.parse('2030-01-02T03:04:05.678Z'))).toBe('2030-01-02T03:04:05.678000Z');
    expect(leases.formatMicroTime(Date.parse('2030-01-02T03:04:05.678Z') + 0.5)).toBe('2030-01-02T03:04:05.678500Z');
  });

  it('Lease election: garbage in a Lease reads as absent fields (no holder, zero seconds), never as an error', () => {
    expect(leases.recordOf({ spec: { holderIdentity: 42, leaseDurationSeconds: 'x', leaseTransitions: 1.5, renewTime: '' } })).toEqual({
      holderIdentity: '',
      leaseDurationSeconds: 0,
      acquireTime: null,
      renewTime: null,
      leaseTransitions: 0,
    });
    expect(leases.recordOf({})).toMatchObject({ holderIdentity: '' });
  });

  it('Lease election: the namespace defaults to $POD_NAMESPACE, then the service account\'s, then "default"', () => {
    expect(leadership.defaultLeaseNamespace({ POD_NAMESPACE: 'ops' }, () => 'sa-ns')).toBe('ops');
    expect(leadership.defaultLeaseNamespace({}, () => 'sa-ns\n')).toBe('sa-ns');
    expect(leadership.defaultLeaseNamespace({}, () => undefined)).toBe('default');
  });
});
