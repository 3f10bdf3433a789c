/**
 * Peering between operators in one process against one devcluster over loopback HTTP, through the
 * runtime's real client (R-PEER-1..9, A-25, A-26, R-WATCH-6, R-DAEMON-10). Each operator logs in
 * with a token of its own user, so the devcluster's request log tells whose request is whose.
 *
 * A SIGKILLed operator is simulated by stopping it while the devcluster breaks the connections of
 * that user's PATCHes to the peering object: what the cluster then has is exactly what a killed
 * process leaves — an entry that is neither refreshed nor removed — while the process lives on.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../devcluster/testing.js';
import * as clocks from '../../../runtime/cogs/aio/clocks.js';
import * as credentials from '../../../runtime/cogs/client/credentials.js';
import type * as settingsModule from '../../../runtime/cogs/configs/settings.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import type * as inventory from '../../../runtime/core/reactor/inventory.js';
import * as running from '../../../runtime/core/reactor/running.js';
import * as cli from '../../../runtime/kits/launching/commands.js';
import { reasonNames } from '../../../runtime/core/intents/stoppers.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';
import { advanceUntilSettled, flushed } from '../../support/waiting.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const PEERING = fs.readFileSync(path.join(ROOT, 'fixtures/crds/peering.yaml'), 'utf8');
const CLUSTER_PEERING = { group: 'kopf.dev', version: 'v1', resource: 'clusterkopfpeerings' } as const;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?\+00:00$/;

type Json = Record<string, unknown>;

interface Peer {
  readonly name: string;
  readonly context: inventory.OperatorContext;
  readonly settings: settingsModule.OperatorSettings;
  /** Names of the objects whose create handler ran in this operator. */
  readonly created: string[];
  readonly done: Promise<void>;
  readonly error: unknown;
  stop(): Promise<void>;
}

let cluster: DevCluster;
let logs: fx.LogCapture;
const peers: Peer[] = [];

async function startPeer(
  name: string,
  options: Partial<running.OperatorOptions> & {
    configure?: (s: settingsModule.OperatorSettings) => void;
    register?: (registry: OperatorRegistry) => void;
  } = {},
): Promise<Peer> {
  const token = `token-${name}`;
  cluster.auth.addToken({ token, username: name, groups: ['system:masters'] });
  const registry = new OperatorRegistry();
  on.login({ registry, id: 'login' }, () => ({ server: cluster.url, token }));
  const created: string[] = [];
  on.create(['kopf.dev', 'v1', 'kopfexamples'], { registry, id: 'create_fn' }, ({ name: objectName }) => {
    created.push(String(objectName));
  });
  options.register?.(registry);
  const { configure, register: _, ...rest } = options;
  const settings = fx.fastSettings(configure);
  const stopper = new AbortController();
  const spawned = await running.spawnTasks({ registry, settings, clusterwide: true, identity: name, stopFlag: stopper.signal, ...rest });
  let error: unknown;
  const done = running.runTasks(spawned).catch((e: unknown) => {
    error = e;
  });
  const peer: Peer = {
    name,
    context: spawned.context,
    settings,
    created,
    done,
    get error() {
      return error;
    },
    async stop() {
      stopper.abort();
      await done;
    },
  };
  peers.push(peer);
  return peer;
}

function status(): Json {
  const body = cluster.store.get(CLUSTER_PEERING, 'default') as { status?: Json } | undefined;
  return body?.status ?? {};
}

/** The PATCHes of one operator to the peering objects. */
function peeringPatches(user: string): Array<{ time: number; body: Json }> {
  return cluster.requests
    .filter((r) => r.method === 'PATCH' && r.user === user && /kopfpeerings$/.test(r.resource ?? ''))
    .map((r) => ({ time: r.time, body: JSON.parse(r.body ?? 'null') as Json }));
}

function listings(user: string): number {
  return cluster.requests.filter((r) => r.user === user && r.resource === 'kopfexamples' && r.verb === 'list').length;
}

async function createExample(name: string): Promise<void> {
  await cluster.store.create(fx.kopfExample(name));
}

beforeAll(async () => {
  cluster = await fx.startCluster({ auth: 'enforced' });
});
afterAll(async () => {
  await cluster?.stop();
});
beforeEach(() => {
  logs = new fx.LogCapture().install();
});
afterEach(async () => {
  await Promise.all(peers.splice(0).map((peer) => peer.stop()));
  logs.uninstall();
  cluster.faults.clear();
});

const CRDS = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' } as const;

/** Deletes the peering CRDs if they exist (their objects go with them). */
async function removePeeringCrds(): Promise<void> {
  for (const name of ['clusterkopfpeerings.kopf.dev', 'kopfpeerings.kopf.dev']) {
    if (cluster.store.get(CRDS, name) !== undefined) await cluster.store.delete(CRDS, name);
  }
  await fx.eventually(
    () => cluster.store.get(CRDS, 'kopfpeerings.kopf.dev') === undefined && cluster.store.get(CRDS, 'clusterkopfpeerings.kopf.dev') === undefined,
    'the CRDs to be gone',
  );
}

describe('without peering CRDs (A-26)', () => {
  afterEach(async () => {
    await Promise.all(peers.splice(0).map((peer) => peer.stop()));
    await removePeeringCrds();
  });

  it('A-26 R-PEER-2 auto-detection: the operator runs normally, sends no keep-alive PATCH, never pauses', async () => {
    const a = await startPeer('solo');
    await fx.eventually(() => listings('solo') > 0, 'the listing of kopfexamples');
    await createExample('solo-1');
    await fx.eventually(() => a.created.includes('solo-1'), 'the create handler');
    expect(a.context.paused!.isOn()).toBe(false);
    expect(peeringPatches('solo')).toEqual([]);
    expect(logs.grep('Pausing')).toEqual([]);
  });

  it('A-26 R-PEER-2 mandatory (--peering default): nothing is listed until the peering CRDs appear, then it resumes and handles', async () => {
    const a = await startPeer('strict', { peeringName: 'default' });
    expect(a.settings.peering).toMatchObject({ mandatory: true, name: 'default' });
    expect(a.context.paused!.isOn()).toBe(true); // from the very start
    await createExample('strict-1');
    await fx.eventually(
      () => cluster.requests.filter((r) => r.user === 'strict' && r.resource === 'customresourcedefinitions' && r.verb === 'watch').length > 0,
      'the CRD watch',
    );
    expect(listings('strict')).toBe(0);
    await cluster.load(PEERING);
    await fx.eventually(() => a.created.includes('strict-1'), 'the create handler after the peering CRDs were applied');
    expect(status()['strict']).toMatchObject({ priority: 0, lifetime: 60 });
    expect(logs.grep('Resuming operations after the pause.')).toHaveLength(1);
    await a.stop();
    expect(status()['strict']).toBeUndefined();
  });

  it('R-PEER-2 auto-detection follows the CRD: created later → keep-alives; deleted and re-created → no crash, keep-alives again', async () => {
    const a = await startPeer('follower', {
      configure: (s) => {
        s.peering.lifetime = 7;
      },
    });
    await fx.eventually(() => listings('follower') > 0, 'the listing of kopfexamples');
    await cluster.load(PEERING);
    await fx.eventually(() => status()['follower'] !== undefined, 'the first keep-alive');
    await removePeeringCrds();
    await fx.eventually(() => logs.grep('Stopping the watch-stream for clusterkopfpeerings').length > 0, 'the peering tasks to stop');
    await cluster.load(PEERING);
    const before = peeringPatches('follower').length;
    await fx.eventually(() => peeringPatches('follower').length > before && status()['follower'] !== undefined, 'keep-alives on the re-created CRD');
    expect(a.error).toBeUndefined();
    expect(a.context.paused!.isOn()).toBe(false);
    await createExample('follower-1');
    await fx.eventually(() => a.created.includes('follower-1'), 'the create handler');
  });
});

describe('with the peering fixture (A-25)', () => {
  beforeAll(async () => {
    await cluster.load(PEERING);
  });

  it('R-PEER-1 R-PEER-4 R-PEER-7 R-WATCH-6 A-25 the lower priority pauses, the handler runs once in total, a graceful stop resumes it', async () => {
    const a = await startPeer('op-a', { priority: 0 });
    await fx.eventually(() => status()['op-a'] !== undefined && listings('op-a') > 0, "A's keep-alive and listing");
    const b = await startPeer('op-b', { priority: 100 });
    await fx.eventually(() => a.context.paused!.isOn(), 'A to pause');
    expect(logs.grep("Pausing operations in favour of [<Peer op-b: priority=100, lifetime=60, lastseen='", fx.INFO)).toHaveLength(1);
    expect(status()['op-a']).toEqual({ priority: 0, lifetime: 60, lastseen: expect.stringMatching(ISO) as unknown });
    expect(status()['op-b']).toEqual({ priority: 100, lifetime: 60, lastseen: expect.stringMatching(ISO) as unknown });
    expect(b.context.paused!.isOn()).toBe(false);

    // R-WATCH-6: A closed its streams, and lists nothing while paused.
    const aListings = listings('op-a');
    await createExample('a25-1');
    await fx.eventually(() => b.created.includes('a25-1'), "B's create handler");
    await createExample('a25-2');
    await fx.eventually(() => b.created.includes('a25-2'), "B's create handler");
    expect(listings('op-a')).toBe(aListings);
    expect(a.created).toEqual([]);

    await b.stop();
    expect(status()['op-b']).toBeUndefined();
    await fx.eventually(() => a.context.paused!.isOn() === false, 'A to resume');
    expect(logs.grep('Resuming operations after the pause. Conflicting operators with the same priority are gone.', fx.INFO)).toHaveLength(1);
    // The re-listing after the pause (R-PEER-7): handled objects are not handled again.
    await fx.eventually(() => listings('op-a') > aListings, "A's re-listing");
    await createExample('a25-3');
    await fx.eventually(() => a.created.includes('a25-3'), "A's create handler");
    expect(a.created).toEqual(['a25-3']);
    expect([...a.created, ...b.created].sort()).toEqual(['a25-1', 'a25-2', 'a25-3']);
  });

  it('A-25 a killed operator (no exit patch) leaves its entry; the lower one resumes within lifetime + jitter and removes it', async () => {
    const a = await startPeer('low', { priority: 0 });
    const b = await startPeer('high', {
      priority: 100,
      configure: (s) => {
        s.peering.lifetime = 3;
      },
    });
    await fx.eventually(() => a.context.paused!.isOn(), 'the lower one to pause');
    cluster.faults.add({ method: 'PATCH', user: 'high', resource: 'clusterkopfpeerings', reset: 'before' });
    const killed = Date.now();
    await b.stop();
    expect(status()['high']).toMatchObject({ priority: 100, lifetime: 3 }); // left behind
    await fx.eventually(() => a.context.paused!.isOn() === false, 'the lower one to resume', 10_000);
    // Within the lifetime (3 s) plus the keep-alive's jitter, with room for a loaded machine.
    expect(Date.now() - killed).toBeLessThan(3000 + 4000);
    expect(status()['high']).toBeUndefined();
    expect(peeringPatches('low').some((p) => JSON.stringify(p.body) === '{"status":{"high":null}}')).toBe(true);
  });

  it('A-25 R-PEER-6 equal priorities: both warn about each other and both pause', async () => {
    const a = await startPeer('twin-a');
    const b = await startPeer('twin-b');
    await fx.eventually(() => a.context.paused!.isOn() && b.context.paused!.isOn(), 'both to pause');
    expect(logs.grep('Possibly conflicting operators with the same priority: [<Peer twin-b:', fx.WARNING).length).toBeGreaterThan(0);
    expect(logs.grep('Possibly conflicting operators with the same priority: [<Peer twin-a:', fx.WARNING).length).toBeGreaterThan(0);
    expect(logs.grep('Pausing all operators, including self: [', fx.WARNING)).toHaveLength(2);
  });

  it('A-25 two replicas never both run a handler for the same change (different priorities, many objects)', async () => {
    const a = await startPeer('rep-a', { priority: 1 });
    const b = await startPeer('rep-b', { priority: 2 });
    await fx.eventually(() => a.context.paused!.isOn(), 'the lower replica to pause');
    const names = Array.from({ length: 20 }, (_, i) => `rep-${i}`);
    for (const name of names.slice(0, 10)) await createExample(name);
    await b.stop(); // the higher one goes away mid-way; the lower one takes over
    for (const name of names.slice(10)) await createExample(name);
    await fx.eventually(() => a.created.length + b.created.length >= names.length, 'all objects to be handled');
    expect([...a.created, ...b.created].sort()).toEqual([...names].sort());
    expect(a.created.filter((name) => b.created.includes(name))).toEqual([]);
  });

  it('R-PEER-9 A-25 R-CLI-603 freeze pauses the operator, resume resumes it (kopf-gen freeze/resume)', async () => {
    const a = await startPeer('frozen');
    await fx.eventually(() => status()['frozen'] !== undefined, 'the keep-alive');
    const vault = new credentials.Vault();
    vault.populate([['admin', { server: cluster.url, token: cluster.token }]]);
    let out = '';
    const output = {
      out: (t: string) => {
        out += t;
      },
      err: (t: string) => {
        out += t;
      },
    };
    expect(await cli.touchCommand('freeze', ['--peering', 'default', '--lifetime', '60', '-A', '--id', 'admin@desk'], { output, vault })).toBe(0);
    expect(out).toBe("Frozen 'default' cluster-wide (clusterkopfpeerings.kopf.dev) for 60 seconds: the entry of admin@desk has priority 100.\n");
    expect(status()['admin@desk']).toEqual({ priority: 100, lifetime: 60, lastseen: expect.stringMatching(ISO) as unknown });
    await fx.eventually(() => a.context.paused!.isOn(), 'the operator to pause');
    // R-CLI-603: Kopf's line, naming the toggle that holds the pause (Kopf's `<peering>@<namespace>`).
    await fx.eventually(
      () => logs.grep('Pausing the watch-stream for kopfexamples.v1.kopf.dev cluster-wide (blockers: default@None).', fx.DEBUG).length > 0,
      "Kopf's pausing line",
    );
    out = '';
    expect(await cli.touchCommand('resume', ['--peering', 'default', '-A', '--id', 'admin@desk'], { output, vault })).toBe(0);
    expect(out).toBe("Resumed 'default' cluster-wide (clusterkopfpeerings.kopf.dev): the entry of admin@desk is removed.\n");
    await fx.eventually(() => !a.context.paused!.isOn(), 'the operator to resume');
    // The identity defaults to <user>@<host>, the same for both commands.
    out = '';
    expect(await cli.touchCommand('freeze', ['-P', 'default', '-t', '30', '--dev', '-A'], { output, vault, env: { USER: 'ops' } })).toBe(0);
    expect(Object.keys(status()).filter((key) => key.startsWith('ops@'))).toHaveLength(1);
    expect(await cli.touchCommand('resume', ['-A'], { output, vault, env: { USER: 'ops', KOPF_RESUME_PEERING: 'default' } })).toBe(0);
    expect(Object.keys(status()).filter((key) => key.startsWith('ops@'))).toEqual([]);
  });

  it('R-PEER-9 R-CLI-2 R-CLI-602 freeze: a missing object is exit code 0 (as Kopf) with a line naming it; usage errors are one line with exit code 2', async () => {
    const vault = new credentials.Vault();
    vault.populate([['admin', { server: cluster.url, token: cluster.token }]]);
    let out = '';
    const output = {
      out: (t: string) => {
        out += t;
      },
      err: (t: string) => {
        out += t;
      },
    };
    expect(await cli.touchCommand('freeze', ['-P', 'nonexistent', '-t', '60', '-A'], { output, vault })).toBe(0);
    expect(out).toBe("kopf-gen freeze: The peering object 'nonexistent' cluster-wide (clusterkopfpeerings.kopf.dev) does not exist: nothing to freeze.\n");
    for (const [argv, message] of [
      [['-P', 'x', '-A'], "required option '-t, --lifetime <seconds>' not specified"],
      [
        ['-t', '60', '-A'],
        "required option '-P, --peering <name>' not specified (or the environment variable KOPF_FREEZE_PEERING or KOPF_FREEZE_PEERING_NAME)",
      ],
      [['-P', 'x', '-t', '0', '-A'], 'Must be at least 1 second.'],
      [['-P', 'x', '-t', '9', '-A', '--dev', '-p', '5'], "option '--dev' and option '-p, --priority <priority>' cannot be used together"],
      [['-P', 'x', '-t', '9', '-A', '-n', 'ns'], "option '-A, --all-namespaces' cannot be used with option '-n, --namespace <pattern>'"],
    ] as const) {
      out = '';
      expect(await cli.touchCommand('freeze', argv, { output, vault, env: {} })).toBe(2);
      expect(out).toContain(message);
    }
  });

  it('R-PEER-1 namespaced operators use KopfPeering in every served namespace', async () => {
    const a = await startPeer('ns-op', { clusterwide: false, namespaces: ['default'] });
    const get = (): Json =>
      (cluster.store.get({ group: 'kopf.dev', version: 'v1', resource: 'kopfpeerings' }, 'default', 'default') as { status?: Json }).status ?? {};
    // The line is logged once the PATCH's response has arrived, after the store has the entry.
    await fx.eventually(() => logs.grep("Keep-alive in 'default' in 'default': ok.", fx.DEBUG).length > 0, 'the keep-alive in the namespace');
    expect(get()['ns-op']).toBeDefined();
    expect(status()['ns-op']).toBeUndefined();
    await a.stop();
    expect(get()['ns-op']).toBeUndefined();
  });

  it('R-DAEMON-10 pausing stops daemons with OPERATOR_PAUSING; the re-listing after the pause spawns them again', async () => {
    const reasons: number[] = [];
    let spawned = 0;
    const a = await startPeer('daemons', {
      register: (registry) => {
        on.daemon(['kopf.dev', 'v1', 'kopfexamples'], { registry, id: 'worker' }, async ({ stopped, name }) => {
          if (name !== 'daemon-1') return; // objects of earlier tests
          spawned += 1;
          await stopped.wait();
          reasons.push(Number(stopped.reason));
        });
      },
    });
    await createExample('daemon-1');
    await fx.eventually(() => spawned === 1, 'the daemon to start');
    const vault = new credentials.Vault();
    vault.populate([['admin', { server: cluster.url, token: cluster.token }]]);
    const output = { out: () => undefined, err: () => undefined };
    expect(await cli.touchCommand('freeze', ['-P', 'default', '-t', '60', '-A', '-i', 'freezer'], { output, vault })).toBe(0);
    await fx.eventually(() => reasons.length === 1, 'the daemon to stop');
    expect(reasonNames(reasons[0]!)).toContain('OPERATOR_PAUSING');
    expect(a.context.paused!.isOn()).toBe(true);
    expect(await cli.touchCommand('resume', ['-P', 'default', '-A', '-i', 'freezer'], { output, vault })).toBe(0);
    await fx.eventually(() => spawned === 2, 'the daemon to be spawned again by the re-listing');
  });

  it('R-PEER-5 faults on peering PATCHes: one ERROR line each, no crash, keep-alives go on', async () => {
    cluster.faults.add({ method: 'PATCH', user: 'faulty', resource: 'clusterkopfpeerings', times: 4, respond: { code: 500, message: 'etcd is unhappy' } });
    const a = await startPeer('faulty', {
      configure: (s) => {
        s.networking.errorBackoffs = [0.01];
        s.peering.lifetime = 7;
      },
    });
    await fx.eventually(() => logs.grep("Keep-alive in 'default' cluster-wide has failed", fx.ERROR).length > 0, 'a failed keep-alive');
    await fx.eventually(() => status()['faulty'] !== undefined, 'a keep-alive after the faults', 15_000);
    expect(a.error).toBeUndefined();
    await createExample('faulty-1');
    await fx.eventually(() => a.created.includes('faulty-1'), 'the create handler');
  });

  it('R-PEER-4 garbage entries written by others never crash an operator', async () => {
    await cluster.store.patch(CLUSTER_PEERING, 'default', {
      status: {
        junk: 'text',
        odd: { priority: 'high' },
        when: { lastseen: 'soon', priority: 1000 },
        extra: { priority: 5, lifetime: 60, lastseen: '2000-01-01T00:00:00+00:00', note: 'x' },
      },
    });
    const a = await startPeer('robust');
    await fx.eventually(() => status()['robust'] !== undefined && status()['extra'] === undefined, 'the keep-alive and the removal of the dead entry');
    expect(a.context.paused!.isOn()).toBe(false);
    expect(logs.grep("Ignoring the peering entry 'odd'", fx.WARNING)).toHaveLength(1);
    expect(a.error).toBeUndefined();
    await cluster.store.patch(CLUSTER_PEERING, 'default', { status: { junk: null, odd: null, when: null } });
  });
});

describe('request count on virtual time (R-PEER-5)', () => {
  beforeAll(async () => {
    if (cluster.store.get(CRDS, 'clusterkopfpeerings.kopf.dev') === undefined) await cluster.load(PEERING);
  });

  it('R-PEER-5 at most one peering PATCH per keep-alive period per replica, with two replicas over 10 minutes', async () => {
    const clock = new clocks.VirtualClock({ start: Date.UTC(2030, 0, 1) });
    const a = await startPeer('count-a', {
      clock,
      priority: 5,
      configure: (s) => {
        s.watching.serverTimeout = null;
        s.watching.clientTimeout = null;
        s.networking.errorBackoffs = [];
      },
    });
    const b = await startPeer('count-b', {
      clock,
      priority: 1,
      configure: (s) => {
        s.watching.serverTimeout = null;
        s.watching.clientTimeout = null;
        s.networking.errorBackoffs = [];
      },
    });
    await fx.eventually(() => b.context.paused!.isOn() && status()['count-a'] !== undefined, 'b to pause');
    const since = { a: peeringPatches('count-a').length, b: peeringPatches('count-b').length };
    // Each step waits (in the clock) for the keep-alive patches it wakes; their watch events are
    // not needed here, only how many patches each replica sends.
    for (let t = 0; t < 600; t += 5) {
      await clock.advance(5000);
      await flushed();
    }
    // One period is at least 60 − 10 = 50 s: at most 12 in 600 s, for each replica.
    const patches = { a: peeringPatches('count-a').length - since.a, b: peeringPatches('count-b').length - since.b };
    expect(patches.a).toBeLessThanOrEqual(12);
    expect(patches.b).toBeLessThanOrEqual(12);
    expect(patches.a).toBeGreaterThanOrEqual(10); // every 55 s at the latest
    expect(b.context.paused!.isOn()).toBe(true);
    await Promise.all([a.stop(), b.stop()].map((stopping) => advanceUntilSettled(clock, stopping)));
  });
});
