/**
 * The membership of a sharded operator's ring (`engines/membership`) against the devcluster over
 * loopback, through the real HTTP client, on a virtual clock shared by the replicas (the Leases'
 * times come from the replicas' clock). Each replica logs in with its own token, so the
 * devcluster's request log and fault rules tell the replicas apart: a fault on one replica's user
 * is a partition of that replica (or, with connections reset, a replica killed without leaving).
 * Every replica's members are recorded with the virtual time of each change.
 */
import * as https from 'node:https';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { DevCluster } from '../../../../devcluster/testing.js';
import * as clocks from '../../../../runtime/cogs/aio/clocks.js';
import * as toggles from '../../../../runtime/cogs/aio/toggles.js';
import * as api from '../../../../runtime/cogs/client/api.js';
import * as credentials from '../../../../runtime/cogs/client/credentials.js';
import * as settings from '../../../../runtime/cogs/configs/settings.js';
import * as membership from '../../../../runtime/core/engines/membership.js';
import { RecordingLogger } from '../../cogs/client/helpers.js';

const EPOCH = Date.parse('2030-01-01T00:00:00Z');
const RING = 'my-operator';
const RETRY = 2_000;
const DURATION = 15_000;
const DEADLINE = 10_000;
type Json = Record<string, unknown>;

interface Replica {
  readonly identity: string;
  readonly user: string;
  readonly toggle: toggles.Toggle;
  readonly logger: RecordingLogger;
  readonly ring: membership.Membership;
  /** Virtual times (ms since EPOCH) and the members seen from then on. */
  readonly history: Array<[number, readonly string[]]>;
  readonly done: Promise<void>;
  stop(): Promise<void>;
  working(): boolean;
}

describe('Sharding: the membership of a ring', () => {
  let cluster: DevCluster;
  let clock: clocks.VirtualClock;
  const replicas: Replica[] = [];

  beforeEach(async () => {
    cluster = await DevCluster.start({ auth: 'enforced' });
    clock = new clocks.VirtualClock({ start: EPOCH });
  });
  afterEach(async () => {
    cluster.faults.clear();
    for (const replica of replicas.splice(0)) await replica.stop();
    await cluster.stop();
  });

  const now = (): number => clock.now() - EPOCH;

  function start(identity: string, options: { readonly namespace?: () => string; readonly beforeRun?: (s: settings.OperatorSettings) => void } = {}): Replica {
    const user = `user-${identity}`;
    const token = `token-${identity}`;
    cluster.auth.addToken({ token, username: user, groups: ['system:masters'] });
    const s = new settings.OperatorSettings({ warn: () => undefined });
    s.networking.errorBackoffs = [0.05, 0.05];
    s.sharding.ring = RING;
    const vault = new credentials.Vault({ clock });
    vault.populate({ static: { server: cluster.url, token, caData: cluster.caPem } });
    const logger = new RecordingLogger();
    const client = new api.HttpKubeApi({ vault, settings: s, logger: new RecordingLogger(), clock });
    const toggle = new toggles.Toggle(false, identity); // the membership turns it on at once
    const stopper = new AbortController();
    const ring = new membership.Membership({
      api: client,
      ring: RING,
      identity,
      namespace: options.namespace ?? 'default',
      settings: s.sharding,
      clock,
      paused: toggle,
      logger,
      signal: stopper.signal,
      random: () => 0.5,
    });
    options.beforeRun?.(s);
    const done = ring.run();
    const history: Array<[number, readonly string[]]> = [[now(), ring.members()]];
    ring.subscribe(() => history.push([now(), ring.members()]));
    let stopped = false;
    const replica: Replica = {
      identity,
      user,
      toggle,
      logger,
      ring,
      history,
      done,
      async stop() {
        if (stopped) return;
        stopped = true;
        stopper.abort();
        await done;
        client.close();
      },
      working: () => toggle.isOff(),
    };
    replicas.push(replica);
    return replica;
  }

  /** Advances virtual time in steps of `step` ms. */
  async function run(ms: number, step = 100): Promise<void> {
    for (let t = 0; t < ms; t += step) await clock.advance(Math.min(step, ms - t));
  }

  /** Runs until `predicate` holds (at most `limit` virtual ms); returns the virtual time taken. */
  async function runUntil(predicate: () => boolean, what: string, limit = 60_000, step = 50): Promise<number> {
    const since = clock.now();
    while (!predicate()) {
      if (clock.now() - since > limit) throw new Error(`${what}: not within ${limit} virtual ms`);
      await clock.advance(step);
    }
    return clock.now() - since;
  }

  /** A request of the cluster's admin (trusting the cluster's CA). */
  async function admin(method: string, path: string, body?: Json): Promise<{ status: number; json: Json }> {
    const agent = new https.Agent({ ca: cluster.caPem });
    return await new Promise((resolve, reject) => {
      const request = https.request(
        `${cluster.url}${path}`,
        { method, agent, headers: { authorization: `Bearer ${cluster.token}`, 'content-type': 'application/json' } },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: response.statusCode ?? 0, json: (text ? JSON.parse(text) : {}) as Json });
          });
        },
      );
      request.on('error', reject);
      request.end(body && JSON.stringify(body));
    });
  }

  const LEASES = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
  const leaseOf = async (identity: string): Promise<{ status: number; json: Json }> => await admin('GET', `${LEASES}/${RING}-${identity}`);
  const renewTimeOf = async (identity: string): Promise<number> => Date.parse(((await leaseOf(identity)).json['spec'] as Json)['renewTime'] as string) - EPOCH;
  const sees =
    (replica: Replica, ...identities: string[]) =>
    (): boolean =>
      identities.every((id) => replica.ring.members().includes(id));
  const lacks = (replica: Replica, identity: string) => (): boolean => !replica.ring.members().includes(identity);

  it('R-SHARD-105 a replica creates its own labelled Lease, reads the ring, joins, and renews with ≤ 1 PUT per retryPeriod', async () => {
    const a = start('replica-a');
    expect(a.toggle.isOn()).toBe(true); // fenced until joined
    expect(a.ring.members()).toEqual([]);
    await runUntil(a.working, 'replica-a to join');
    expect(a.ring.members()).toEqual(['replica-a']);
    expect(a.ring.name).toBe(RING);
    expect(a.ring.label).toBe(`shard.kopf-gen.dev/${RING}`);
    const lease = await leaseOf('replica-a');
    expect(lease.status).toBe(200);
    expect((lease.json['metadata'] as Json)['labels']).toEqual({ 'shard.kopf-gen.dev/ring': RING });
    expect(lease.json['spec']).toEqual({
      holderIdentity: 'replica-a',
      leaseDurationSeconds: 15,
      leaseTransitions: 0,
      acquireTime: '2030-01-01T00:00:00.000000Z',
      renewTime: '2030-01-01T00:00:00.000000Z',
    });
    expect(a.logger.messages('info')).toContain(`Joined the ring '${RING}' as 'replica-a': members ["replica-a"]. Resuming operations.`);
    await run(1_000);
    cluster.requests.clear();
    await run(60_000);
    const counts = cluster.requests.counts((r) => r.user === a.user);
    expect(Object.keys(counts).sort()).toEqual(['list leases', 'update leases']);
    expect(counts['update leases']).toBeLessThanOrEqual(30);
    expect(counts['update leases']).toBeGreaterThanOrEqual(29);
    expect(counts['list leases']).toBeLessThanOrEqual(Math.ceil(60_000 / (RETRY * (1 - 0.5 * membership.POLL_JITTER))));
    const renewed = (await leaseOf('replica-a')).json['spec'] as Json;
    expect(renewed['acquireTime']).toBe('2030-01-01T00:00:00.000000Z');
    expect(await renewTimeOf('replica-a')).toBeGreaterThanOrEqual(59_000);
    expect(a.working()).toBe(true);
  });

  it('R-SHARD-111 the namespace and the timings are read when the membership starts (after the startup handlers), not when it is made', async () => {
    let namespace = 'default';
    const a = start('replica-a', {
      namespace: () => namespace,
      beforeRun: (s) => {
        s.sharding.leaseDuration = 30; // as a startup handler would, between making and starting
        namespace = 'kube-system';
      },
    });
    await runUntil(a.working, 'replica-a to join');
    const lease = await admin('GET', `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/${RING}-replica-a`);
    expect(lease.status).toBe(200);
    expect((lease.json['spec'] as Json)['leaseDurationSeconds']).toBe(30);
    expect((await leaseOf('replica-a')).status).toBe(404); // nothing in the namespace known when it was made
  });

  it('R-SHARD-113 a replica whose identity held the Lease before (a killed process) settles two retry periods before it works; a fresh one does not', async () => {
    const fresh = start('replica-b');
    await runUntil(fresh.working, 'replica-b to join');
    expect(fresh.logger.messages('info').some((m) => m.startsWith('Rejoining'))).toBe(false);
    // What a killed process of the identity 'replica-a' left: its Lease, held, never released.
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: `${RING}-replica-a`, namespace: 'default', labels: { 'shard.kopf-gen.dev/ring': RING } },
      spec: { holderIdentity: 'replica-a', leaseDurationSeconds: 15, renewTime: '2030-01-01T00:00:00.000000Z', leaseTransitions: 0 },
    };
    expect((await admin('POST', LEASES, lease)).status).toBe(201);
    const startedAt = now();
    const a = start('replica-a');
    await runUntil(() => a.logger.messages('info').some((m) => m.startsWith(`Rejoining the ring '${RING}' as 'replica-a'`)), 'replica-a to find its Lease');
    const renewedAt = await renewTimeOf('replica-a');
    expect(renewedAt).toBeGreaterThanOrEqual(startedAt);
    expect(a.working()).toBe(false);
    await runUntil(a.working, 'replica-a to join', 30_000, 10);
    expect(now() - renewedAt).toBeGreaterThanOrEqual(2 * RETRY);
    expect(a.ring.members()).toEqual(['replica-a', 'replica-b']);
  });

  it('R-SHARD-106 two and three replicas see each other within one retryPeriod of joining; members are sorted and alike', async () => {
    const b = start('replica-b');
    await runUntil(b.working, 'replica-b to join');
    await run(700);
    const a = start('replica-a');
    await runUntil(a.working, 'replica-a to join');
    expect(a.ring.members()).toEqual(['replica-a', 'replica-b']); // it read the ring before joining
    expect(await runUntil(sees(b, 'replica-a'), 'replica-b to see replica-a')).toBeLessThanOrEqual(RETRY);
    expect(b.ring.members()).toEqual(['replica-a', 'replica-b']);
    expect(b.logger.messages('info')).toContain(`Member joined the ring '${RING}': 'replica-a'.`);
    await run(1_300);
    const c = start('replica-c');
    await runUntil(c.working, 'replica-c to join');
    const waited = await runUntil(() => sees(a, 'replica-c')() && sees(b, 'replica-c')(), 'the others to see replica-c');
    expect(waited).toBeLessThanOrEqual(RETRY);
    for (const r of [a, b, c]) expect(r.ring.members()).toEqual(['replica-a', 'replica-b', 'replica-c']);
    // Every announced change was a real one.
    for (const r of [a, b, c]) {
      for (let i = 1; i < r.history.length; i++) expect(r.history[i]![1]).not.toEqual(r.history[i - 1]![1]);
    }
  });

  it('R-SHARD-106 a replica that stops renewing (killed: its connections reset) is dropped exactly leaseDuration after its record last changed as seen locally, not before', async () => {
    const a = start('replica-a');
    await runUntil(a.working, 'replica-a to join');
    const b = start('replica-b');
    await runUntil(sees(a, 'replica-b'), 'replica-a to see replica-b');
    await run(5_000);
    cluster.faults.add({ user: b.user, reset: 'before' });
    const killedAt = now();
    await run(500); // its last renewal is stored by now
    const lastRenewal = await renewTimeOf('replica-b');
    expect(lastRenewal).toBeLessThanOrEqual(killedAt);
    await runUntil(lacks(a, 'replica-b'), 'replica-a to drop replica-b', 30_000, 10);
    const droppedAt = a.history.at(-1)![0];
    // a saw the last record at its first read after lastRenewal, within one retryPeriod of it.
    expect(droppedAt - lastRenewal).toBeGreaterThanOrEqual(DURATION);
    expect(droppedAt - lastRenewal).toBeLessThanOrEqual(DURATION + RETRY + 10);
    expect(a.ring.members()).toEqual(['replica-a']);
    expect(a.logger.messages('info')).toContain(`Member left the ring '${RING}': 'replica-b'.`);
    // b fenced itself before anyone dropped it.
    expect(b.working()).toBe(false);
    expect(b.ring.members()).not.toContain('replica-b');
  });

  it('R-SHARD-107 a gracefully stopped replica deletes its Lease and is dropped at the next read of the others', async () => {
    const a = start('replica-a');
    const b = start('replica-b');
    await runUntil(() => sees(a, 'replica-b')() && sees(b, 'replica-a')(), 'the replicas to see each other');
    await run(3_000);
    const stoppedAt = now();
    await b.stop();
    expect((await leaseOf('replica-b')).status).toBe(404);
    expect(b.logger.messages('info')).toContain(`Left the ring '${RING}': deleted Lease 'default/${RING}-replica-b'.`);
    expect(b.toggle.isOn()).toBe(true);
    expect(b.ring.members()).toEqual([]);
    await runUntil(lacks(a, 'replica-b'), 'replica-a to drop replica-b', 30_000, 10);
    expect(now() - stoppedAt).toBeLessThanOrEqual(RETRY + 10);
  });

  it('R-SHARD-107 leaving tolerates a Lease already deleted (404)', async () => {
    const a = start('replica-a');
    await runUntil(a.working, 'replica-a to join');
    expect((await admin('DELETE', `${LEASES}/${RING}-replica-a`)).status).toBe(200);
    cluster.faults.add({ user: a.user, verb: 'update', resource: 'leases', respond: { code: 503, message: 'busy' } });
    cluster.faults.add({ user: a.user, verb: 'get', resource: 'leases', respond: { code: 503, message: 'busy' } });
    await a.stop();
    expect(a.logger.messages('warning').filter((m) => m.startsWith('Failed to delete'))).toEqual([]);
    expect(a.logger.messages('info')).toContain(`Left the ring '${RING}': deleted Lease 'default/${RING}-replica-a'.`);
  });

  it('R-SHARD-108 a replica whose renewals are refused fences itself exactly renewDeadline after its last renewal started, and unfences after the next success', async () => {
    const a = start('replica-a');
    const b = start('replica-b');
    await runUntil(() => sees(a, 'replica-b')() && sees(b, 'replica-a')(), 'the replicas to see each other');
    await run(4_000);
    const fault = cluster.faults.add({ user: a.user, respond: { code: 503, message: 'partitioned' } });
    await runUntil(() => !a.working(), 'replica-a to fence itself', 30_000, 10);
    const fencedAt = now();
    const lastRenewal = await renewTimeOf('replica-a');
    expect(fencedAt - lastRenewal).toBeGreaterThanOrEqual(DEADLINE);
    expect(fencedAt - lastRenewal).toBeLessThanOrEqual(DEADLINE + 10);
    expect(a.ring.members()).toEqual(['replica-b']); // not itself while fenced
    expect(a.logger.messages('info')).toContain(
      `Fenced in the ring '${RING}': Lease 'default/${RING}-replica-a' was not renewed for 10 s (renewDeadline). Pausing operations.`,
    );
    expect(a.logger.messages('warning').some((m) => m.startsWith(`Failed to renew Lease 'default/${RING}-replica-a': ApiServerError`))).toBe(true);
    // b still counts a as a member until a's record is older than leaseDuration: a has stopped by then.
    expect(b.ring.members()).toContain('replica-a');
    fault.remove();
    const removedAt = now();
    await runUntil(a.working, 'replica-a to unfence', 10_000, 10);
    // It settles first (R-SHARD-113): two retry periods after the renewal that ended the fence.
    expect(now() - removedAt).toBeGreaterThanOrEqual(2 * RETRY);
    expect(a.logger.messages('info').some((m) => m.startsWith(`Rejoining the ring '${RING}' as 'replica-a': paused for 4 s more`))).toBe(true);
    expect(a.logger.messages('info')).toContain(`Unfenced in the ring '${RING}': Lease 'default/${RING}-replica-a' is renewed again. Resuming operations.`);
    expect(a.ring.members()).toEqual(['replica-a', 'replica-b']);
  });

  it('R-SHARD-108 a hanging API (no answer at all) fences the replica at its renewDeadline, not later', async () => {
    clock = new clocks.VirtualClock({ start: EPOCH, quiescenceTimeout: 50 });
    const a = start('replica-a');
    await runUntil(a.working, 'replica-a to join');
    await run(5_000);
    const lastRenewal = await renewTimeOf('replica-a');
    cluster.faults.add({ user: a.user, hang: true });
    await runUntil(() => !a.working(), 'replica-a to fence itself', 30_000, 250);
    expect(now() - lastRenewal).toBeLessThanOrEqual(DEADLINE + 250);
    expect(now() - lastRenewal).toBeGreaterThanOrEqual(DEADLINE);
  });

  it('R-SHARD-108 403s are logged as a WARNING once per activity, then at DEBUG', async () => {
    const a = start('replica-a');
    await runUntil(a.working, 'replica-a to join');
    cluster.faults.add({ user: a.user, verb: 'update', resource: 'leases', respond: { code: 403, reason: 'Forbidden', message: 'no' } });
    cluster.faults.add({ user: a.user, verb: 'get', resource: 'leases', respond: { code: 403, reason: 'Forbidden', message: 'no' } });
    await run(8_000);
    expect(a.logger.messages('warning').filter((m) => m.startsWith('Failed to renew'))).toHaveLength(1);
    expect(a.logger.messages('debug').filter((m) => m.startsWith('Failed to renew')).length).toBeGreaterThanOrEqual(2);
  });

  it('R-SHARD-109 isGone: absent and released Leases are gone; a live one is not; a silent one only after leaseDuration of local observation', async () => {
    const a = start('replica-a');
    const b = start('replica-b');
    await runUntil(() => sees(a, 'replica-b')(), 'replica-a to see replica-b');
    const signal = new AbortController().signal;
    expect(await a.ring.isGone('nobody', signal)).toBe(true);
    expect(await a.ring.isGone('replica-b', signal)).toBe(false);
    expect(await a.ring.isGone('replica-a', signal)).toBe(false);

    // A released Lease (holder '') is gone at once.
    const released = (await leaseOf('replica-b')).json;
    await b.stop(); // deletes it; put it back released
    const { resourceVersion: _rv, uid: _uid, creationTimestamp: _ct, ...metadata } = released['metadata'] as Json;
    expect((await admin('POST', LEASES, { ...released, metadata, spec: { ...(released['spec'] as Json), holderIdentity: '' } })).status).toBe(201);
    expect(await a.ring.isGone('replica-b', signal)).toBe(true);

    // A replica killed without leaving: not gone until its record is unchanged for leaseDuration here.
    const c = start('replica-c');
    await runUntil(sees(a, 'replica-c'), 'replica-a to see replica-c');
    cluster.faults.add({ user: c.user, reset: 'before' });
    await run(500);
    const lastRenewal = await renewTimeOf('replica-c');
    expect(await a.ring.isGone('replica-c', signal)).toBe(false);
    await run(DURATION - 2_500);
    expect(await a.ring.isGone('replica-c', signal)).toBe(false); // not observed long enough
    await runUntil(lacks(a, 'replica-c'), 'replica-a to drop replica-c', 30_000, 10);
    expect(now() - lastRenewal).toBeGreaterThanOrEqual(DURATION);
    expect(await a.ring.isGone('replica-c', signal)).toBe(true);
  });
});

describe('Sharding: identities', () => {
  it('R-SHARD-110 the default identity: $POD_NAME, else <hostname>-<pid>, made a label value and a valid part of a Lease name', () => {
    expect(membership.defaultIdentity({ POD_NAME: 'my-operator-7d9f8c6b5-x2q4z' }, 'host', 1)).toBe('my-operator-7d9f8c6b5-x2q4z');
    expect(membership.defaultIdentity({ POD_NAME: '  ' }, 'Build_Host.Local', 4242)).toBe('build-host-local-4242');
    expect(membership.defaultIdentity({}, '-weird--host-', 7)).toBe('weird--host--7');
    const long = membership.defaultIdentity({ POD_NAME: `${'a'.repeat(62)}.b` }, 'h', 1);
    expect(long).toBe('a'.repeat(62));
    expect(long.length).toBeLessThanOrEqual(63);
    expect(membership.defaultIdentity({}, '___', 9)).toBe('9');
    for (const identity of [long, membership.defaultIdentity({}, 'Über Host', 12)]) {
      expect(settings.isShardName(identity)).toBe(true);
      expect(identity).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    }
  });
});
