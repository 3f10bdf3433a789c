// The peering engine on virtual time against an in-memory peering object: keep-alives with their
// jitter and their last patch (R-PEER-5), the evaluation of every event with Kopf's log lines,
// dead-entry removal and the sleep until the earliest deadline (R-PEER-6, R-PEER-8), and what
// must never stop peering: malformed entries, a missing object, failing PATCHes.
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../../runtime/cogs/aio/clocks.js';
import { Toggle } from '../../../../runtime/cogs/aio/toggles.js';
import type * as api from '../../../../runtime/cogs/client/api.js';
import * as errors from '../../../../runtime/cogs/client/errors.js';
import * as settingsModule from '../../../../runtime/cogs/configs/settings.js';
import type * as bodies from '../../../../runtime/cogs/structs/bodies.js';
import type * as loggers from '../../../../runtime/cogs/structs/loggers.js';
import * as references from '../../../../runtime/cogs/structs/references.js';
import * as peering from '../../../../runtime/core/engines/peering.js';
import * as peers from '../../../../runtime/core/engines/peers.js';

const START = Date.UTC(2026, 10, 24, 10, 0, 0);
const CLUSTER_PEERINGS = references.makeResource({
  group: 'kopf.dev',
  version: 'v1',
  plural: 'clusterkopfpeerings',
  kind: 'ClusterKopfPeering',
  namespaced: false,
  verbs: ['get', 'list', 'watch', 'patch'],
});

type Json = Record<string, unknown>;

/** One peering object in memory, served as list/watch/patch; records every PATCH. */
class PeeringObject implements api.KubeApi {
  body: bodies.RawBody | undefined;
  readonly patches: Array<{ readonly name: string; readonly body: Json }> = [];
  /** The next PATCHes fail with HTTP 500 while this is positive. */
  failing = 0;
  private rv = 1;
  private readonly streams = new Set<(line: api.WatchLine) => void>();

  /** @param status the object's status, or `null` for no object at all. */
  constructor(status: Json | null) {
    if (status !== null) this.body = { apiVersion: 'kopf.dev/v1', kind: 'ClusterKopfPeering', metadata: { name: 'default', resourceVersion: '1' }, status };
  }

  get status(): Json {
    return (this.body?.['status'] ?? {}) as Json;
  }

  /** Writes the status as another program would (one MODIFIED event). */
  write(status: Json, name = 'default'): void {
    this.rv += 1;
    const body = { apiVersion: 'kopf.dev/v1', kind: 'ClusterKopfPeering', metadata: { name, resourceVersion: String(this.rv) }, status };
    if (name === 'default') this.body = body;
    this.emit('MODIFIED', body);
  }

  private emit(type: string, body: bodies.RawBody): void {
    for (const push of [...this.streams]) push({ type, object: structuredClone(body) });
  }

  async scanResources(): Promise<references.Resource[]> {
    return [CLUSTER_PEERINGS];
  }
  async get(): Promise<bodies.RawBody> {
    throw new Error('not used');
  }
  async create(): Promise<bodies.RawBody> {
    throw new Error('not used');
  }

  async list(): Promise<api.Listing> {
    return { items: this.body ? [structuredClone(this.body)] : [], resourceVersion: String(this.rv) };
  }

  async patch(_resource: references.Resource, _namespace: string | null, name: string, body: unknown): Promise<bodies.RawBody> {
    this.patches.push({ name, body: structuredClone(body) as Json });
    if (this.failing > 0) {
      this.failing -= 1;
      throw new errors.ApiServerError(500, { kind: 'Status', reason: 'InternalError', message: 'etcd is unhappy' });
    }
    if (this.body === undefined || name !== 'default') throw new errors.ApiNotFoundError(404, { kind: 'Status', reason: 'NotFound', message: 'not found' });
    const status = { ...this.status };
    for (const [key, value] of Object.entries((body as { status?: Json }).status ?? {})) {
      if (value === null) delete status[key];
      else status[key] = value;
    }
    this.rv += 1;
    this.body = { ...this.body, metadata: { ...this.body.metadata, resourceVersion: String(this.rv) }, status };
    this.emit('MODIFIED', this.body);
    return structuredClone(this.body);
  }

  async watch(_resource: references.Resource, _namespace: string | null, options?: api.WatchRequestOptions): Promise<AsyncIterable<api.WatchLine>> {
    const queue: api.WatchLine[] = [];
    let wake: () => void = () => undefined;
    const push = (line: api.WatchLine): void => {
      queue.push(line);
      wake();
    };
    this.streams.add(push);
    const streams = this.streams;
    const signal = options?.signal;
    return {
      async *[Symbol.asyncIterator]() {
        try {
          while (!signal?.aborted) {
            if (queue.length === 0) {
              await new Promise<void>((resolve) => {
                wake = resolve;
                signal?.addEventListener('abort', () => resolve(), { once: true });
              });
              continue;
            }
            yield queue.shift()!;
          }
        } finally {
          streams.delete(push);
        }
      },
    };
  }
}

/** Captures log lines by level. */
class Lines implements loggers.Logger {
  readonly lines: Array<[string, string]> = [];
  /** The errors given with ERROR lines (their stack follows the message in the log). */
  readonly errors: unknown[] = [];
  debug(m: string): void {
    this.lines.push(['debug', m]);
  }
  info(m: string): void {
    this.lines.push(['info', m]);
  }
  warning(m: string): void {
    this.lines.push(['warning', m]);
  }
  error(m: string, extra?: loggers.LogExtra): void {
    this.lines.push(['error', m]);
    if (extra?.['error'] !== undefined) this.errors.push(extra['error']);
  }
  critical(m: string): void {
    this.lines.push(['critical', m]);
  }
  grep(text: string, level?: string): string[] {
    return this.lines.filter(([l, m]) => m.includes(text) && (level === undefined || l === level)).map(([, m]) => m);
  }
}

function settings(configure?: (s: settingsModule.OperatorSettings) => void): settingsModule.OperatorSettings {
  const s = new settingsModule.OperatorSettings({ warn: () => undefined });
  s.watching.serverTimeout = null;
  s.watching.clientTimeout = null;
  s.watching.inactivityTimeout = 100_000;
  s.networking.errorBackoffs = [];
  configure?.(s);
  return s;
}

interface Setup {
  readonly clock: VirtualClock;
  readonly object: PeeringObject;
  readonly log: Lines;
  readonly scope: peering.PeeringScope;
}

function setup(options: { status?: Json | null; identity?: string; priority?: number; configure?: (s: settingsModule.OperatorSettings) => void } = {}): Setup {
  const clock = new VirtualClock({ start: START });
  const object = new PeeringObject(options.status === undefined ? {} : options.status);
  const log = new Lines();
  const s = settings((x) => {
    x.peering.priority = options.priority ?? 0;
    options.configure?.(x);
  });
  return {
    clock,
    object,
    log,
    scope: { api: object, settings: s, resource: CLUSTER_PEERINGS, namespace: null, identity: options.identity ?? 'me', logger: log, clock },
  };
}

const stoppers: AbortController[] = [];
const running: Array<Promise<void>> = [];
afterEach(async () => {
  for (const stopper of stoppers.splice(0)) stopper.abort();
  await Promise.all(running.splice(0));
});

function background(fn: (signal: AbortSignal) => Promise<void>): { stop(): Promise<void> } {
  const stopper = new AbortController();
  const done = fn(stopper.signal);
  stoppers.push(stopper);
  running.push(done);
  return {
    async stop() {
      stopper.abort();
      await done;
    },
  };
}

const entry = (priority: number, lifetime: number, lastseen: number): Json => ({ priority, lifetime, lastseen: peers.formatLastseen(lastseen) });

describe('R-PEER-5 keep-alive', () => {
  it('R-PEER-5 patches the entry at once, then every lifetime − random(5..10) seconds; the exit patch is null', async () => {
    const { clock, object, log, scope } = setup();
    const jitters = [0, 0.99, 0.5]; // 5, 10, 8 seconds
    let n = 0;
    const task = background((signal) => peering.keepAlive(scope, { signal, random: () => jitters[n++ % 3]! }));
    await clock.advance(0);
    expect(object.patches).toEqual([{ name: 'default', body: { status: { me: { priority: 0, lifetime: 60, lastseen: '2026-11-24T10:00:00+00:00' } } } }]);
    await clock.advance(54_999);
    expect(object.patches).toHaveLength(1);
    await clock.advance(1); // 60 − 5
    expect(object.patches).toHaveLength(2);
    expect(object.patches[1]!.body).toEqual({ status: { me: { priority: 0, lifetime: 60, lastseen: '2026-11-24T10:00:55+00:00' } } });
    await clock.advance(50_000); // 60 − 10
    expect(object.patches).toHaveLength(3);
    await clock.advance(52_000); // 60 − 8
    expect(object.patches).toHaveLength(4);
    expect(log.grep("Keep-alive in 'default' cluster-wide: ok.", 'debug')).toHaveLength(4);
    await task.stop();
    expect(object.patches.at(-1)).toEqual({ name: 'default', body: { status: { me: null } } });
    expect(object.status).toEqual({});
  });

  it('R-PEER-5 the interval is at least 1 second and at most the lifetime', () => {
    expect(peering.keepAliveInterval(60, () => 0)).toBe(55);
    expect(peering.keepAliveInterval(60, () => 0.999)).toBe(50);
    expect(peering.keepAliveInterval(7, () => 0.999)).toBe(1);
    expect(peering.keepAliveInterval(1, () => 0)).toBe(1);
  });

  it('R-PEER-5 stealth: keep-alives are not logged; a missing object still is', async () => {
    const { clock, log, scope } = setup({
      configure: (s) => {
        s.peering.stealth = true;
      },
    });
    const task = background((signal) => peering.keepAlive(scope, { signal, random: () => 0 }));
    await clock.advance(120_000);
    expect(log.lines).toEqual([]);
    await task.stop();
    const missing = setup({
      status: null,
      configure: (s) => {
        s.peering.stealth = true;
      },
    });
    expect(await peering.touch(missing.scope)).toBe('not found');
    expect(missing.log.lines).toEqual([['debug', "Keep-alive in 'default' cluster-wide: not found."]]);
  });

  it("R-PEER-2 a missing object: DEBUG `Keep-alive in 'default' cluster-wide: not found.` and nothing else", async () => {
    const { clock, object, log, scope } = setup({ status: null });
    const task = background((signal) => peering.keepAlive(scope, { signal, random: () => 0 }));
    await clock.advance(60_000);
    await task.stop();
    expect(object.patches).toHaveLength(3); // two keep-alives and the exit
    expect(log.lines).toEqual(Array(3).fill(['debug', "Keep-alive in 'default' cluster-wide: not found."]));
  });

  it('R-PEER-5 a failing PATCH is one ERROR line and is retried within 10 seconds; the task goes on', async () => {
    const { clock, object, log, scope } = setup();
    object.failing = 1;
    const task = background((signal) => peering.keepAlive(scope, { signal, random: () => 0 }));
    await clock.advance(0);
    expect(log.grep("Keep-alive in 'default' cluster-wide has failed: etcd is unhappy", 'error')).toHaveLength(1);
    await clock.advance(10_000);
    expect(object.patches).toHaveLength(2);
    expect(object.status['me']).toMatchObject({ priority: 0, lifetime: 60 });
    await clock.advance(55_000);
    expect(object.patches).toHaveLength(3);
    object.failing = 1;
    await task.stop(); // the exit patch fails: logged, not thrown
    // Kopf's line verbatim; the error goes with it (its stack follows the line).
    expect(log.grep("Couldn't remove self from the peering. Ignoring.", 'error')).toEqual(["Couldn't remove self from the peering. Ignoring."]);
    expect(log.errors.map((error) => String((error as Error).message))).toEqual([expect.stringContaining('etcd is unhappy')]);
  });
});

describe('R-PEER-6 evaluation of the events', () => {
  function observe(s: Setup, conflicts = new Toggle(false)): { conflicts: Toggle; stop(): Promise<void> } {
    const task = background((signal) => peering.observePeering(s.scope, { conflicts, signal }));
    return { conflicts, stop: () => task.stop() };
  }

  it('R-PEER-6 R-PEER-8 a higher priority pauses (INFO), its expiry resumes (INFO) after a touch at its deadline', async () => {
    const s = setup({ status: { boss: entry(100, 60, START) } });
    const observer = observe(s);
    await s.clock.advance(0);
    expect(observer.conflicts.isOn()).toBe(true);
    expect(s.log.grep('Pausing operations in favour of', 'info')).toEqual([
      "Pausing operations in favour of [<Peer boss: priority=100, lifetime=60, lastseen='2026-11-24T10:00:00+00:00'>].",
    ]);
    expect(s.object.patches).toEqual([]); // nothing to do until the boss's deadline
    await s.clock.advance(59_999);
    expect(s.object.patches).toEqual([]);
    await s.clock.advance(1);
    // At the deadline: a touch of our own entry; its event finds the boss dead: removed, resumed.
    expect(s.object.patches.map((p) => p.body)).toEqual([
      { status: { me: { priority: 0, lifetime: 60, lastseen: '2026-11-24T10:01:00+00:00' } } },
      { status: { boss: null } },
    ]);
    expect(observer.conflicts.isOn()).toBe(false);
    expect(s.log.grep('Resuming operations after the pause. Conflicting operators with the same priority are gone.', 'info')).toHaveLength(1);
    expect(s.object.status).toEqual({ me: { priority: 0, lifetime: 60, lastseen: '2026-11-24T10:01:00+00:00' } });
  });

  it('R-PEER-6 a newer event interrupts the sleep: a refreshed peer keeps the pause, without an extra touch', async () => {
    const s = setup({ status: { boss: entry(100, 60, START) } });
    const observer = observe(s);
    await s.clock.advance(50_000);
    s.object.write({ boss: entry(100, 60, START + 50_000) }); // the boss's keep-alive
    await s.clock.advance(20_000); // past the first deadline, before the second
    expect(s.object.patches).toEqual([]);
    expect(observer.conflicts.isOn()).toBe(true);
    expect(s.log.grep('Pausing operations')).toHaveLength(1); // logged once, not per event
    await s.clock.advance(40_000); // the second deadline
    expect(observer.conflicts.isOn()).toBe(false);
  });

  it('R-PEER-6 equal priorities: WARNING `Possibly conflicting …`, WARNING `Pausing all operators, including self: …`', async () => {
    const s = setup({ status: { twin: entry(0, 60, START), me: entry(0, 60, START) } });
    const observer = observe(s);
    await s.clock.advance(0);
    expect(observer.conflicts.isOn()).toBe(true);
    const twin = "<Peer twin: priority=0, lifetime=60, lastseen='2026-11-24T10:00:00+00:00'>";
    const me = "<Peer me: priority=0, lifetime=60, lastseen='2026-11-24T10:00:00+00:00'>";
    expect(s.log.lines.filter(([level]) => level === 'warning')).toEqual([
      ['warning', `Possibly conflicting operators with the same priority: [${twin}].`],
      ['warning', `Pausing all operators, including self: [${twin}, ${me}]`],
    ]);
  });

  it('R-PEER-6 lower priorities do not pause; dead entries are removed in one patch; other objects are ignored', async () => {
    const s = setup({ priority: 10, status: { low: entry(1, 60, START), gone1: entry(99, 10, START - 10_000), gone2: entry(0, 5, START - 60_000) } });
    const observer = observe(s);
    await s.clock.advance(0);
    expect(observer.conflicts.isOn()).toBe(false);
    expect(s.object.patches.map((p) => p.body)).toEqual([{ status: { gone1: null, gone2: null } }]);
    s.object.write({ boss: entry(100, 60, START) }, 'another-name');
    await s.clock.advance(1000);
    expect(observer.conflicts.isOn()).toBe(false);
    expect(s.log.grep('Pausing')).toEqual([]);
  });

  it('R-PEER-2 mandatory: a toggle that starts on is turned off by the first evaluation (INFO resume)', async () => {
    const s = setup({ status: {} });
    const observer = observe(s, new Toggle(true));
    await s.clock.advance(0);
    expect(observer.conflicts.isOn()).toBe(false);
    expect(s.log.grep('Resuming operations after the pause.', 'info')).toHaveLength(1);
  });

  it('R-PEER-4 malformed entries: one WARNING each, never removed, never pausing, no crash', async () => {
    const s = setup({ status: { odd: { priority: 'high' }, weird: 'alive', when: { priority: 999, lastseen: 'yesterday' } } });
    const observer = observe(s);
    await s.clock.advance(0);
    s.object.write({ ...s.object.status, boss: entry(100, 60, START) });
    await s.clock.advance(0);
    expect(observer.conflicts.isOn()).toBe(true);
    expect(s.log.grep("Ignoring the peering entry 'odd' in 'default' cluster-wide: priority is not a number: \"high\".", 'warning')).toHaveLength(1);
    expect(s.log.grep("Ignoring the peering entry 'weird'", 'warning')).toHaveLength(1);
    expect(s.log.grep("Ignoring the peering entry 'when' in 'default' cluster-wide: lastseen is not an ISO-8601 time", 'warning')).toHaveLength(1);
    await s.clock.advance(60_000);
    expect(observer.conflicts.isOn()).toBe(false);
    expect(Object.keys(s.object.status).sort()).toEqual(['me', 'odd', 'weird', 'when']);
    expect(s.log.grep('failed')).toEqual([]);
  });

  it('R-PEER-6 a failing clean-up PATCH is one ERROR line; the evaluation is retried and succeeds', async () => {
    const s = setup({ status: { dead: entry(0, 1, START - 5000) } });
    s.object.failing = 1;
    const observer = observe(s);
    await s.clock.advance(0);
    expect(s.log.grep("Peering evaluation in 'default' cluster-wide has failed: etcd is unhappy", 'error')).toHaveLength(1);
    await s.clock.advance(1000);
    expect(s.object.status).toEqual({});
    expect(observer.conflicts.isOn()).toBe(false);
  });
});
