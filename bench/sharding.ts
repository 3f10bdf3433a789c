/**
 * Sharding benchmark: `npm run bench -- sharding [options]`. Does adding replicas of a sharded
 * operator add capacity, how much moves when the ring changes, and how soon are a killed replica's
 * objects handled again? The figures of the horizontal scale-out issue, each next to its target.
 *
 * Processes (loopback only): a devcluster in its own process (`serve.ts`, plain HTTP, the Kopf
 * example CRD), each replica as a process of its own (`replicas.ts`: the compiled
 * `fixtures/operators/bench-sharding.ts` on the compiled runtime, `kopf-gen run … --shards bench
 * --shard-id r<i>`, its ledger a side-channel file), and this process as the load generator with
 * its own list+watch of the objects (`tracking.ts`), which also follows each object's owner label
 * `shard.kopf-gen.dev/bench`. `dist/` must be built and fresh.
 *
 * Scaling, for each R of `--replicas` (default 1,2,4) on N = `--objects` (default 20,000), on a
 * fresh devcluster: R replicas start; ready when the ring's R Leases are held, then a warm-up object
 * is created, handled and deleted, and 2 s pass; each replica's RSS then is its ready RSS. N objects
 * are created (8 at a time) and the phase lasts until every object is handled (`status.create_fn`
 * and the diff-base annotation, as the operator benchmark's `handled`). Figures:
 *   - `r<R>_objects_per_s`: N ÷ (first create → last object handled), the aggregate throughput;
 *   - `r<R>_devcluster_cpu_pct`: the devcluster's CPU in the phase (% of one core: near 100 means
 *     the devcluster is the bottleneck), `r<R>_load_average_1m` at the end of the phase;
 *   - `r<R>_rss_growth_kb_per_obj_max` / `_mean`: per replica (peak RSS − ready RSS) ÷ N, the
 *     largest and the mean over the replicas; `r<R>_rss_growth_vs_single` = the largest ÷ R = 1's
 *     (target ≤ 1.2 / R); `r<R>_objects_per_replica_min` / `_max` from the ledgers (who ran
 *     create_fn);
 *   - `null_objects_per_s` (with `--null`, on by default): the null operator (`null-operator.ts`,
 *     the requests of the reference traces and nothing else) on the same N: the API's ceiling;
 *     `r<R>_objects_per_s_vs_null` the ratio.
 * With R = 1 the replica runs sharded too (a ring of one: the same claim patch per object), unless
 * the compiled runtime has no `--shards` (then it runs plain, `--standalone`, R > 1 and the ring
 * parts are skipped, and a note says so).
 *
 * Rebalance (in the session of the largest R, 4 by default, after its scaling phase): with the
 * ring settled, a 5th replica starts. From the load generator's watch of the owner labels:
 * `rebalance_moved_fraction` = objects whose owner changed ÷ N (target ≤ 0.25),
 * `rebalance_moved_not_to_new` = objects that moved between the old replicas (target 0),
 * `rebalance_relabelled_objects` = objects with any owner change meanwhile (one moved back counts),
 * `rebalance_settled_s` = start → the last owner change (once none for `--quiet` seconds, default
 * 5), `rebalance_handled_s` = start → the last moved object's daemon start on the new replica, and
 * `rebalance_moved_unhandled` = moved objects with no daemon start there (target 0). Then the 5th
 * replica stops gracefully (SIGTERM: it leaves the ring): `leave_settled_s` likewise.
 *
 * SIGKILL (same session, 4 replicas again): `r0` is killed (its process group, SIGKILL). Its
 * objects are those whose owner label named it then. `kill_takeover_max_s` = the longest time from
 * the kill to an object's first handler run or daemon start on another replica (target ≤ the Lease
 * duration + 5 s), `kill_takeover_p50_s`, `kill_objects` and `kill_not_taken_over` (objects with
 * nothing on another replica within Lease duration + 60 s; target 0). The Lease duration is 15 s
 * (the default) or `--lease-duration <s>`: then the replicas run through `sharding-launcher.ts`
 * (`kopf-gen run` with settings made beforehand), given `BENCH_SHARDING_LEASE_DURATION`.
 *
 * In that whole session the ledgers are checked for two replicas running a daemon of the same
 * object at the same time (`daemon_overlaps`, target 0; a killed replica's daemons end when its
 * exit was seen).
 *
 * Options: `--objects 20000`, `--replicas 1,2,4`, `--skip rebalance,kill,null`,
 * `--lease-duration <s>` (default: the runtime's 15), `--concurrency 8`, `--timeout <s>` (each
 * wait; default 600), `--quiet <s>` (default 5), `--command <shell>` (a replica's command; `{id}`,
 * `{ring}`, `{kubeconfig}` substituted; the ledger file and the replica id come in
 * `BENCH_SHARDING_LEDGER` and `BENCH_SHARDING_REPLICA`), `--keep` (keep the folders with ledgers
 * and logs).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as util from 'node:util';
import * as clients from './clients.js';
import * as compiling from './compiling.js';
import { skippedParts, wholeNumber } from './options.js';
import * as processes from './processes.js';
import * as replicas from './replicas.js';
import * as report from './report.js';
import * as servers from './servers.js';
import * as ledger from './sharding-ledger.js';
import * as tracking from './tracking.js';

const NAMESPACE = 'default';
const COLLECTION = `/apis/kopf.dev/v1/namespaces/${NAMESPACE}/kopfexamples`;
const NULL_COMPILED = 'bench/.build/sharding/null-operator.js';
const KIB = 1024;
const PARTS = ['rebalance', 'kill', 'null'] as const;

export interface Options {
  objects: number;
  replicas: number[];
  skip: ReadonlySet<(typeof PARTS)[number]>;
  leaseDuration: number | undefined;
  concurrency: number;
  timeoutMs: number;
  quietMs: number;
  command: string | undefined;
  keep: boolean;
}

export function parseOptions(args: readonly string[]): Options {
  const { values } = util.parseArgs({
    args: [...args],
    strict: false,
    allowPositionals: true,
    options: {
      objects: { type: 'string' },
      replicas: { type: 'string' },
      skip: { type: 'string' },
      'lease-duration': { type: 'string' },
      concurrency: { type: 'string' },
      timeout: { type: 'string' },
      quiet: { type: 'string' },
      command: { type: 'string' },
      keep: { type: 'boolean' },
    },
  });
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v : undefined);
  const lease = str(values['lease-duration']);
  return {
    objects: wholeNumber(str(values['objects']), 20_000, 'objects'),
    replicas: (str(values['replicas']) ?? '1,2,4')
      .split(',')
      .filter(Boolean)
      .map((r) => wholeNumber(r, 1, 'replicas')),
    skip: skippedParts(str(values['skip']), PARTS),
    leaseDuration: lease === undefined ? undefined : wholeNumber(lease, 0, 'lease-duration', 3),
    concurrency: wholeNumber(str(values['concurrency']), 8, 'concurrency'),
    timeoutMs: wholeNumber(str(values['timeout']), 600, 'timeout') * 1000,
    quietMs: wholeNumber(str(values['quiet']), 5, 'quiet') * 1000,
    command: str(values['command']),
    keep: values['keep'] === true,
  };
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));
const handled = (s: tracking.Seen | undefined): boolean => !!s && !s.gone && s.createResult !== undefined && s.hasDiffBase;
const gone = (s: tracking.Seen | undefined): boolean => !s || s.gone;

function body(name: string): Record<string, unknown> {
  return { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name, namespace: NAMESPACE }, spec: { field: 'value', items: ['item1', 'item2'] } };
}

/** One owner-label change seen by the load generator's watch. */
interface OwnerChange {
  name: string;
  from: string | undefined;
  to: string | undefined;
  mono: number;
}

/** A devcluster, the load generator's client and watch, and the owner label of every object. */
class Cluster {
  readonly client: clients.Client;
  readonly tracker: tracking.Tracker;
  /** Per object name: its owner label now, and its uid. */
  readonly owners = new Map<string, { owner: string | undefined; uid: string | undefined }>();
  readonly changes: OwnerChange[] = [];

  private constructor(
    readonly server: servers.Server,
    readonly dir: string,
    readonly kubeconfig: string,
    concurrency: number,
  ) {
    this.client = new clients.Client(server.url, concurrency);
    this.tracker = new tracking.Tracker(server.url, this.client, (key, object) => {
      const name = key.slice(NAMESPACE.length + 1);
      const known = this.owners.get(name);
      if (!object) {
        this.owners.delete(name);
        return;
      }
      const owner = object.metadata?.labels?.[replicas.OWNER_LABEL] || undefined;
      if (known && known.owner !== owner) this.changes.push({ name, from: known.owner, to: owner, mono: replicas.mono() });
      this.owners.set(name, { owner, uid: object.metadata?.uid });
    });
  }

  static async open(n: number, concurrency: number): Promise<Cluster> {
    const server = await servers.startServer({ DEVCLUSTER_HISTORY: String(Math.max(100_000, n * 12)) });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-bench-sharding-'));
    const kubeconfig = path.join(dir, 'kubeconfig');
    await servers.ask(server.child, { type: 'kubeconfig', file: kubeconfig }, 'kubeconfig');
    const cluster = new Cluster(server, dir, kubeconfig, concurrency);
    await cluster.tracker.start();
    return cluster;
  }

  devclusterCpu(): number {
    return processes.measureTree(this.server.child.pid ?? -1).cpuSeconds;
  }

  async close(keep: boolean): Promise<void> {
    this.tracker.stop();
    this.client.close();
    await servers.stopServer(this.server.child);
    if (!keep) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Polls `done` every 250 ms until it is true or `ms` passed; whether it became true. */
async function until(done: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await done()) return true;
    if (Date.now() >= end) return false;
    await replicas.sleep(250);
  }
}

/** Waits until the ring's Leases are held by exactly `ids` (sharded), then a warm-up object is handled and deleted. */
async function ready(c: Cluster, fleet: replicas.Fleet, ids: readonly string[], sharded: boolean, timeoutMs: number): Promise<void> {
  const want = [...ids].sort().join(',');
  if (sharded && !(await until(async () => (await replicas.ringHolders(c.client)).sort().join(',') === want, timeoutMs))) {
    throw new Error(`the ring's Leases were not held by ${want} within ${timeoutMs / 1000} s`);
  }
  await c.client.expect([201], 'POST', COLLECTION, body('warm-up'));
  const warm = await c.tracker.waitAll([`${NAMESPACE}/warm-up`], handled, timeoutMs);
  if (warm.pending) throw new Error(`no replica handled a first object; last output:\n${[...fleet.replicas.values()][0]?.process.logTail()}`);
  await c.client.expect([200, 202], 'DELETE', `${COLLECTION}/warm-up`);
  await c.tracker.waitAll([`${NAMESPACE}/warm-up`], gone, timeoutMs);
  await replicas.sleep(2000);
}

/**
 * Waits until the owner labels changed since `sinceMono` and then not for `quietMs`, or, when
 * none changes, for `noChangeMs` (at most `timeoutMs` in all); returns the last change's time, if any.
 */
async function settle(c: Cluster, sinceMono: number, quietMs: number, timeoutMs: number, noChangeMs: number): Promise<number | undefined> {
  const lastSince = (): number | undefined => {
    const last = c.changes.at(-1)?.mono;
    return last !== undefined && last >= sinceMono ? last : undefined;
  };
  await until(() => {
    const now = replicas.mono();
    const last = lastSince();
    return last === undefined ? now - sinceMono >= noChangeMs : now - last >= quietMs;
  }, timeoutMs);
  return lastSince();
}

interface Context {
  opts: Options;
  sharded: boolean;
  command: string;
  figures: Record<string, number>;
  notes: Record<string, string>;
  targets: Record<string, report.Target>;
}

/** One scaling session of `r` replicas; with the ring parts when `ringParts`. */
/**
 * The creation burst: N objects created `--concurrency` at a time, until every one is handled.
 * Returns its seconds (first create → last handled), the objects left unhandled at the timeout, and
 * the devcluster's CPU meanwhile (% of one core).
 */
async function burst(c: Cluster, n: number, opts: Options): Promise<{ seconds: number; pending: number; cpuPct: number }> {
  const names = Array.from({ length: n }, (_, i) => `kex-${i}`);
  const cpu0 = c.devclusterCpu();
  const t0 = Date.now();
  await clients.pool(opts.concurrency, n, async (i) => {
    await c.client.expect([201], 'POST', COLLECTION, body(names[i]!));
  });
  const result = await c.tracker.waitAll(
    names.map((name) => `${NAMESPACE}/${name}`),
    handled,
    opts.timeoutMs,
  );
  const seconds = (result.endedAt - t0) / 1000;
  return { seconds, pending: result.pending, cpuPct: ((c.devclusterCpu() - cpu0) / seconds) * 100 };
}

async function scaling(ctx: Context, r: number, ringParts: boolean): Promise<void> {
  const { opts, figures, notes } = ctx;
  const n = opts.objects;
  const p = `r${r}_`;
  const c = await Cluster.open(n, opts.concurrency);
  const env: Record<string, string> = { NODE_OPTIONS: '' };
  if (opts.leaseDuration !== undefined) env['BENCH_SHARDING_LEASE_DURATION'] = String(opts.leaseDuration);
  const fleet = new replicas.Fleet(ctx.command, env, c.dir, c.kubeconfig);
  let failed = false;
  try {
    const ids = Array.from({ length: r }, (_, i) => `r${i}`);
    for (const id of ids) fleet.start(id);
    await ready(c, fleet, ids, ctx.sharded, opts.timeoutMs);
    const readyRss = new Map(ids.map((id) => [id, fleet.replicas.get(id)!.process.usage().rssBytes]));
    const { seconds, pending, cpuPct } = await burst(c, n, opts);
    figures[`${p}seconds`] = seconds;
    figures[`${p}objects_per_s`] = pending ? Number.NaN : n / seconds;
    if (pending) figures[`${p}unhandled_objects`] = pending;
    figures[`${p}devcluster_cpu_pct`] = cpuPct;
    figures[`${p}load_average_1m`] = os.loadavg()[0]!;
    await replicas.sleep(1000);
    const growth = ids.map((id) => {
      const u = fleet.replicas.get(id)!.process.usage();
      return (u.peakRssBytes - readyRss.get(id)!) / n / KIB;
    });
    figures[`${p}rss_growth_kb_per_obj_max`] = Math.max(...growth);
    figures[`${p}rss_growth_kb_per_obj_mean`] = growth.reduce((a, b) => a + b, 0) / growth.length;
    figures[`${p}ready_rss_mb_max`] = Math.max(...readyRss.values()) / (KIB * KIB);
    fleet.ledgers.poll();
    const perReplica = new Map<string, Set<string>>(ids.map((id) => [id, new Set()]));
    for (const l of fleet.ledgers.lines) if (l.kind === 'handler' && l.handler === 'create_fn' && l.name !== 'warm-up') perReplica.get(l.replica)?.add(l.uid);
    const counts = [...perReplica.values()].map((s) => s.size);
    figures[`${p}objects_per_replica_min`] = Math.min(...counts);
    figures[`${p}objects_per_replica_max`] = Math.max(...counts);
    if (ringParts) await ringChanges(ctx, c, fleet);
    fleet.ledgers.poll();
    const found = ledger.overlaps(ledger.daemonIntervals(fleet.ledgers.lines, fleet.ends()));
    figures[`${p}daemon_overlaps`] = found.across.length;
    figures[`${p}daemon_overlaps_within_a_replica`] = found.within.length;
    ctx.targets[`${p}daemon_overlaps`] = { max: 0 };
    if (found.across.length)
      notes[`${p}overlap_examples`] = found.across
        .slice(0, 5)
        .map((o) => `${o.name}: ${o.a.replica} ${o.a.start.toFixed(0)}-${o.a.end.toFixed(0)} and ${o.b.replica} ${o.b.start.toFixed(0)}-${o.b.end.toFixed(0)}`)
        .join('; ');
  } catch (err) {
    failed = true;
    notes[`${p}error`] = message(err);
  } finally {
    await fleet.stopAll();
    if (failed || opts.keep) notes[`${p}folder`] = `${c.dir} (ledger-<id>.jsonl, <id>.log)`;
    await c.close(failed || opts.keep);
  }
}

/** The rebalance (a 5th replica joins, then leaves) and the SIGKILL of `r0`, on a settled ring. */
async function ringChanges(ctx: Context, c: Cluster, fleet: replicas.Fleet): Promise<void> {
  const { opts, figures, notes, targets } = ctx;
  const n = opts.objects;
  const lease = opts.leaseDuration ?? 15;
  // A ring change shows within a few retry periods; without any owner change for this long, nothing moves.
  const noChange = Math.max(30, 2 * lease) * 1000;
  if (!opts.skip.has('rebalance')) {
    const before = new Map([...c.owners].map(([name, o]) => [name, o.owner]));
    const newcomer = `r${fleet.replicas.size}`;
    const t5 = replicas.mono();
    fleet.start(newcomer);
    const last = await settle(c, t5, opts.quietMs, opts.timeoutMs, noChange);
    let moved = 0;
    let elsewhere = 0;
    const movedUids = new Set<string>();
    for (const [name, o] of c.owners) {
      const was = before.get(name);
      if (was === undefined || was === o.owner) continue;
      moved++;
      if (o.owner !== newcomer) elsewhere++;
      else if (o.uid) movedUids.add(o.uid);
    }
    fleet.ledgers.poll();
    const started = ledger.takeoverDelays(
      fleet.ledgers.lines.filter((l) => l.replica === newcomer && l.kind === 'daemon-start'),
      movedUids,
      '',
      t5,
    );
    const delays = [...started.values()].filter((d): d is number => d !== undefined);
    figures['rebalance_replicas_before'] = fleet.replicas.size - 1;
    figures['rebalance_moved_fraction'] = moved / n;
    figures['rebalance_relabelled_objects'] = new Set(c.changes.filter((ch) => ch.mono >= t5).map((ch) => ch.name)).size;
    figures['rebalance_moved_not_to_new'] = elsewhere;
    figures['rebalance_settled_s'] = last === undefined ? Number.NaN : (last - t5) / 1000;
    figures['rebalance_handled_s'] = delays.length ? Math.max(...delays) / 1000 : Number.NaN;
    figures['rebalance_moved_unhandled'] = started.size - delays.length;
    Object.assign(targets, { rebalance_moved_fraction: { max: 0.25 }, rebalance_moved_not_to_new: { max: 0 }, rebalance_moved_unhandled: { max: 0 } });
    // The newcomer leaves gracefully: its objects go back.
    const tLeave = replicas.mono();
    await fleet.replicas.get(newcomer)!.stop();
    const back = await settle(c, tLeave, opts.quietMs, opts.timeoutMs, noChange);
    figures['leave_settled_s'] = back === undefined ? Number.NaN : (back - tLeave) / 1000;
    figures['leave_objects_still_on_leaver'] = [...c.owners.values()].filter((o) => o.owner === newcomer).length;
    targets['leave_objects_still_on_leaver'] = { max: 0 };
  }
  if (!opts.skip.has('kill')) {
    const victim = 'r0';
    const owned = new Set([...c.owners.values()].filter((o) => o.owner === victim && o.uid).map((o) => o.uid!));
    const killMono = await fleet.replicas.get(victim)!.kill();
    const limit = (lease + 60) * 1000;
    let delays = new Map<string, number | undefined>();
    await until(() => {
      fleet.ledgers.poll();
      delays = ledger.takeoverDelays(fleet.ledgers.lines, owned, victim, killMono);
      return [...delays.values()].every((d) => d !== undefined);
    }, limit);
    const known = [...delays.values()].filter((d): d is number => d !== undefined);
    figures['kill_lease_duration_s'] = lease;
    figures['kill_objects'] = owned.size;
    figures['kill_takeover_max_s'] = known.length ? Math.max(...known) / 1000 : Number.NaN;
    figures['kill_takeover_p50_s'] = known.length ? report.percentile(known, 50) / 1000 : Number.NaN;
    figures['kill_not_taken_over'] = owned.size - known.length;
    figures['kill_load_average_1m'] = os.loadavg()[0]!;
    targets['kill_takeover_max_s'] = { max: lease + 5 };
    targets['kill_not_taken_over'] = { max: 0 };
    if (!owned.size) notes['kill'] = `no object was labelled with ${victim} when it was killed: nothing to take over`;
  }
}

/** The null operator on the same N: the API's ceiling. */
async function ceiling(ctx: Context): Promise<void> {
  const { opts, figures, notes } = ctx;
  const n = opts.objects;
  const c = await Cluster.open(n, opts.concurrency);
  const operator = new processes.OperatorProcess(`exec node ${NULL_COMPILED}`, { KUBECONFIG: c.kubeconfig, NODE_OPTIONS: '' }, path.join(c.dir, 'null.log'));
  try {
    await c.client.expect([201], 'POST', COLLECTION, body('warm-up'));
    if ((await c.tracker.waitAll([`${NAMESPACE}/warm-up`], handled, 60_000)).pending)
      throw new Error(`the null operator handled nothing:\n${operator.logTail()}`);
    const { seconds, pending, cpuPct } = await burst(c, n, opts);
    figures['null_objects_per_s'] = pending ? Number.NaN : n / seconds;
    figures['null_devcluster_cpu_pct'] = cpuPct;
    figures['null_load_average_1m'] = os.loadavg()[0]!;
  } catch (err) {
    notes['null_error'] = message(err);
  } finally {
    await operator.stop();
    await c.close(false);
  }
}

export async function run(args: readonly string[] = []): Promise<report.Result> {
  const opts = parseOptions(args);
  const figures: Record<string, number> = {};
  const notes: Record<string, string> = {};
  const targets: Record<string, report.Target> = {};
  try {
    compiling.requireFreshDistribution();
    if (!opts.command) notes['runtime_resolved_to'] = replicas.prepare();
    if (!opts.skip.has('null')) compiling.transpile('bench/null-operator.ts', NULL_COMPILED);
  } catch (err) {
    process.stderr.write(`sharding: ${message(err)}\n`);
    process.exit(1);
  }
  const sharded = opts.command !== undefined || replicas.shardingSupported();
  const command = opts.command ?? (sharded ? replicas.shardedCommand(opts.leaseDuration) : replicas.PLAIN_COMMAND);
  const sizes = sharded ? opts.replicas : opts.replicas.filter((r) => r === 1);
  if (!sharded)
    notes['sharding'] =
      'the compiled runtime has no --shards: only R = 1 ran, unsharded (--standalone); R > 1, the rebalance and the kill need the sharding runtime';
  notes['command'] = `${command}  (per replica: sh -c, cwd = package folder, KUBECONFIG, BENCH_SHARDING_LEDGER, BENCH_SHARDING_REPLICA set)`;
  notes['machine'] = `${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? 'unknown'}, Node ${process.version}`;
  notes['lease_duration'] = opts.leaseDuration === undefined ? '15 s (the default)' : `${opts.leaseDuration} s (BENCH_SHARDING_LEASE_DURATION)`;
  const ctx: Context = { opts, sharded, command, figures, notes, targets };
  const largest = Math.max(...sizes);
  for (const r of sizes) await scaling(ctx, r, sharded && r === largest && r >= 2 && !(opts.skip.has('rebalance') && opts.skip.has('kill')));
  if (!opts.skip.has('null')) await ceiling(ctx);
  const single = figures['r1_rss_growth_kb_per_obj_max'];
  for (const r of sizes) {
    if (r > 1 && single !== undefined) {
      figures[`r${r}_rss_growth_vs_single`] = figures[`r${r}_rss_growth_kb_per_obj_max`]! / single;
      targets[`r${r}_rss_growth_vs_single`] = { max: 1.2 / r };
    }
    if (figures['null_objects_per_s'] !== undefined) figures[`r${r}_objects_per_s_vs_null`] = figures[`r${r}_objects_per_s`]! / figures['null_objects_per_s'];
  }
  notes['definitions'] =
    'objects/s = N / (first create → last object handled, the load generator’s watch); RSS growth per object = (peak − ready RSS) / N per replica; ' +
    'growth vs single = the largest replica’s growth / R = 1’s (target ≤ 1.2 / R); moved = objects whose owner label changed; ' +
    'takeover = SIGKILL → first handler run or daemon start of the object on another replica (ledgers, monotonic clock)';
  return { name: 'sharding', figures, targets, notes };
}
