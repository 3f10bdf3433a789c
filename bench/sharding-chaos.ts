/**
 * The sharded variant of the chaos benchmark: `npm run bench -- chaos --sharded [options]`. Does
 * a sharded operator handle every object, never twice without a crash to explain it, and never
 * run two daemons of one object at once, while its ring changes under the workload?
 *
 * Processes: a devcluster in its own process (`serve.ts`), replicas of the compiled
 * `fixtures/operators/bench-sharding.ts` as processes of their own (`replicas.ts`, each joining the
 * ring `bench` with its own identity and ledger), and this process as the load generator with its
 * own list+watch of the objects. Four replicas start (`r0`…`r3`); the workload is the chaos
 * benchmark's: N objects (`--objects`, default 1,000) created, each changed once at rest
 * (`spec.field` `value` → `changed`), each deleted at rest again, 8 requests at a time, each phase
 * waiting (at most `--phase-timeout` s, default 300) until every object is at rest (`chaos.atRest`)
 * or gone.
 *
 * The ring changes `--ring-events` times (default 6) during the workload, at seeded fractions
 * (5 %–90 %) of the expected handler runs (`create_fn`, `update_fn`, `delete_fn` per object, repeats
 * not counted), in a seeded rotation of: scale up (a new replica `r<k>` starts, as a Deployment's
 * new pod would), SIGKILL (a seeded running replica's process group; it is not restarted), and
 * scale down (SIGTERM to a seeded running replica: a graceful leave); never below 2 or above 6
 * replicas (the rotation skips an action that would). The API server injects no faults here: the
 * ring's changes are the chaos. After the workload, at most `--grace` s (default 30) more for
 * objects not yet gone; then every replica stops gracefully and the ledgers are read.
 *
 * Figures (targets in brackets): expected runs (3 N), runs, exactly once, missing [0] (a pair with
 * no run: an object not handled), repeats explained by a kill (the replica that ran the previous
 * run was SIGKILLed between it and the repeat), repeats not explained [0] (a re-run after a
 * graceful leave, on a live replica, or by a second replica while the first lived), daemon overlaps
 * [0] (two replicas ran a daemon of the same object at the same time, by the ledgers' monotonic
 * intervals; a killed replica's daemons end when its exit was seen), daemon overlaps within one
 * replica [0], stuck [0] (not at rest or not gone when a phase's wait ended), objects wedged [0]
 * (still present at the end), resume runs (a new owner resumes an object: expected with every
 * handoff), kills, scale-ups, scale-downs, unexpected exits [0], seconds per phase.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as util from 'node:util';
import * as ids from '../devcluster/ids.js';
import * as chaos from './chaos.js';
import * as clients from './clients.js';
import { wholeNumber } from './options.js';
import * as replicas from './replicas.js';
import type * as report from './report.js';
import * as servers from './servers.js';
import * as ledger from './sharding-ledger.js';
import * as tracking from './tracking.js';

const NAMESPACE = 'default';
const COLLECTION = `/apis/kopf.dev/v1/namespaces/${NAMESPACE}/kopfexamples`;
const HANDLERS = ['create_fn', 'update_fn', 'delete_fn'] as const;
const MIN_REPLICAS = 2;
const MAX_REPLICAS = 6;

export type RingAction = 'up' | 'kill' | 'down';
const ROTATION: readonly RingAction[] = ['up', 'kill', 'down', 'kill', 'up', 'up', 'kill', 'down'];

export interface Options {
  objects: number;
  ringEvents: number;
  seed: number;
  leaseDuration: number | undefined;
  concurrency: number;
  phaseTimeoutS: number;
  graceS: number;
  keep: boolean;
}

export function parseOptions(args: readonly string[]): Options {
  const { values } = util.parseArgs({
    args: [...args],
    strict: false,
    allowPositionals: true,
    options: {
      objects: { type: 'string' },
      'ring-events': { type: 'string' },
      seed: { type: 'string' },
      'lease-duration': { type: 'string' },
      concurrency: { type: 'string' },
      'phase-timeout': { type: 'string' },
      grace: { type: 'string' },
      keep: { type: 'boolean' },
    },
  });
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v : undefined);
  const lease = str(values['lease-duration']);
  return {
    objects: wholeNumber(str(values['objects'])?.split(',')[0], 1000, 'objects'),
    ringEvents: wholeNumber(str(values['ring-events']), 6, 'ring-events', 0),
    seed: wholeNumber(str(values['seed']), 13, 'seed', 0),
    leaseDuration: lease === undefined ? undefined : wholeNumber(lease, 0, 'lease-duration', 3),
    concurrency: wholeNumber(str(values['concurrency']), 8, 'concurrency'),
    phaseTimeoutS: wholeNumber(str(values['phase-timeout']), 300, 'phase-timeout'),
    graceS: wholeNumber(str(values['grace']), 30, 'grace', 0),
    keep: values['keep'] === true,
  };
}

/**
 * The actions of the ring's changes in order: the rotation, skipping an action that would take the
 * ring below `MIN_REPLICAS` or above `MAX_REPLICAS`, starting from `start` replicas.
 */
export function ringPlan(events: number, start: number): RingAction[] {
  const plan: RingAction[] = [];
  let alive = start;
  for (let i = 0; plan.length < events; i++) {
    const action = ROTATION[i % ROTATION.length]!;
    if (action === 'up' ? alive >= MAX_REPLICAS : alive <= MIN_REPLICAS) continue;
    alive += action === 'up' ? 1 : -1;
    plan.push(action);
  }
  return plan;
}

/** The session's figures. */
export interface ShardedChaosFigures {
  objects: number;
  expected_runs: number;
  runs: number;
  exactly_once: number;
  missing: number;
  repeats_explained_by_kill: number;
  repeats_not_explained: number;
  daemon_overlaps: number;
  daemon_overlaps_within_a_replica: number;
  stuck: number;
  objects_wedged: number;
  resume_runs: number;
  kills: number;
  scale_ups: number;
  scale_downs: number;
  unexpected_exits: number;
  unreadable_ledger_lines: number;
  create_s: number;
  update_s: number;
  delete_s: number;
  total_s: number;
}

interface ObjectState {
  object: tracking.TrackedObject | undefined;
  uid: string | undefined;
  removedAt: number | undefined;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

function body(name: string): Record<string, unknown> {
  return { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name, namespace: NAMESPACE }, spec: { field: 'value', items: ['item1', 'item2'] } };
}

/** Runs the workload on 4 replicas while the ring changes; tallies the ledgers. */
export async function session(o: Options): Promise<{ figures: ShardedChaosFigures; notes: Record<string, string> }> {
  const random = ids.createIds(o.seed + 1).random;
  const names = Array.from({ length: o.objects }, (_, i) => `chaos-${i}`);
  const notes: Record<string, string> = {};
  const server = await servers.startServer({ DEVCLUSTER_SEED: String(o.seed), DEVCLUSTER_HISTORY: String(Math.max(10_000, o.objects * 20)) });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-chaos-sharded-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  await servers.ask(server.child, { type: 'kubeconfig', file: kubeconfig }, 'kubeconfig');
  const states = new Map<string, ObjectState>(names.map((n) => [n, { object: undefined, uid: undefined, removedAt: undefined }]));
  const client = new clients.Client(server.url, o.concurrency);
  const tracker = new tracking.Tracker(server.url, client, (key, object) => {
    const state = states.get(key.slice(NAMESPACE.length + 1));
    if (!state) return;
    state.object = object;
    if (object?.metadata?.uid) state.uid = object.metadata.uid;
    if (!object) state.removedAt ??= Date.now();
  });
  const env: Record<string, string> = { NODE_OPTIONS: '' };
  if (o.leaseDuration !== undefined) env['BENCH_SHARDING_LEASE_DURATION'] = String(o.leaseDuration);
  const fleet = new replicas.Fleet(replicas.shardedCommand(o.leaseDuration), env, dir, kubeconfig);
  const plan = ringPlan(o.ringEvents, 4);
  const expected = o.objects * HANDLERS.length;
  const points = chaos.killPoints(random, plan.length, expected);
  const done: { action: RingAction; replica: string; at: number; progress: number }[] = [];
  const stuck = new Set<string>();
  const times = { create_s: Number.NaN, update_s: Number.NaN, delete_s: Number.NaN };
  const t0 = Date.now();
  let next = 4;
  let failed = false;
  let busy = false;
  const pairs = new Set<string>();
  let seenLines = 0;
  const progress = (): number => {
    fleet.ledgers.poll();
    const lines = fleet.ledgers.lines;
    for (; seenLines < lines.length; seenLines++) {
      const l = lines[seenLines]!;
      if (l.kind === 'handler' && (HANDLERS as readonly string[]).includes(l.handler)) pairs.add(`${l.uid}\u0000${l.handler}`);
    }
    return pairs.size;
  };
  const act = async (action: RingAction): Promise<void> => {
    const running = fleet.running();
    if (action === 'up') {
      const id = `r${next++}`;
      fleet.start(id);
      done.push({ action, replica: id, at: Date.now(), progress: pairs.size });
      return;
    }
    const victim = running[Math.floor(random() * running.length)]!;
    done.push({ action, replica: victim.id, at: Date.now(), progress: pairs.size });
    if (action === 'kill') await victim.kill();
    else await victim.stop();
  };
  const ticker = setInterval(() => {
    if (busy) return;
    busy = true;
    void (async () => {
      try {
        const due = points[done.length];
        if (due !== undefined && progress() >= due) await act(plan[done.length]!);
      } finally {
        busy = false;
      }
    })();
  }, 200);
  const waitUntil = async (subset: readonly string[], ok: (name: string) => boolean, ms: number): Promise<string[]> => {
    await tracker.waitAll(
      subset.map((n) => `${NAMESPACE}/${n}`),
      (s) => s !== undefined && ok(s.key.slice(NAMESPACE.length + 1)),
      ms,
    );
    return subset.filter((n) => !ok(n));
  };
  const restingAt = (field: string) => (n: string) => chaos.atRest(states.get(n)!.object, field);
  const gone = (n: string): boolean => states.get(n)!.removedAt !== undefined;
  const phaseMs = o.phaseTimeoutS * 1000;
  try {
    for (let i = 0; i < 4; i++) fleet.start(`r${i}`);
    const start = Date.now();
    while ((await replicas.ringHolders(client)).length < 4) {
      if (Date.now() - start > 120_000)
        throw new Error(`the ring's 4 Leases were not held within 120 s; last output:\n${fleet.replicas.get('r0')!.process.logTail()}`);
      await replicas.sleep(250);
    }
    await tracker.start();
    let t = Date.now();
    await clients.pool(o.concurrency, names.length, async (i) => {
      await client.expect([201], 'POST', COLLECTION, body(names[i]!));
    });
    for (const n of await waitUntil(names, restingAt('value'), phaseMs)) stuck.add(n);
    times.create_s = (Date.now() - t) / 1000;
    t = Date.now();
    await clients.pool(o.concurrency, names.length, async (i) => {
      await client.expect([200], 'PATCH', `${COLLECTION}/${names[i]}`, { spec: { field: 'changed' } }, 'application/merge-patch+json');
    });
    for (const n of await waitUntil(names, restingAt('changed'), phaseMs)) stuck.add(n);
    times.update_s = (Date.now() - t) / 1000;
    t = Date.now();
    await clients.pool(o.concurrency, names.length, async (i) => {
      await client.expect([200, 202], 'DELETE', `${COLLECTION}/${names[i]}`);
    });
    for (const n of await waitUntil(names, gone, phaseMs)) stuck.add(n);
    times.delete_s = (Date.now() - t) / 1000;
  } catch (err) {
    failed = true;
    notes['error'] = message(err);
  }
  clearInterval(ticker);
  while (busy) await replicas.sleep(20);
  const remaining = names.filter((n) => !gone(n));
  if (remaining.length) await waitUntil(remaining, gone, o.graceS * 1000);
  const total = (Date.now() - t0) / 1000;
  const unexpected = [...fleet.replicas.values()].filter((r) => r.process.exited && r.end === undefined);
  for (const r of unexpected) notes[`unexpected_exit_${r.id}`] = r.process.logTail(15);
  await fleet.stopAll();
  tracker.stop();
  client.close();
  await servers.stopServer(server.child);

  const uids = new Map<string, string>();
  for (const [n, s] of states) if (s.uid) uids.set(s.uid, n);
  const ends = fleet.ends();
  const lines = fleet.ledgers.lines;
  const runs = ledger.tallyRuns(lines, uids, HANDLERS, ends);
  const found = ledger.overlaps(ledger.daemonIntervals(lines, ends));
  const removed = names.filter(gone).length;
  const figures: ShardedChaosFigures = {
    objects: o.objects,
    expected_runs: runs.expected + (names.length - uids.size) * HANDLERS.length,
    runs: runs.runs,
    exactly_once: runs.exactlyOnce,
    missing: runs.missing + (names.length - uids.size) * HANDLERS.length,
    repeats_explained_by_kill: runs.repeatsExplainedByKill,
    repeats_not_explained: runs.repeatsNotExplained,
    daemon_overlaps: found.across.length,
    daemon_overlaps_within_a_replica: found.within.length,
    stuck: stuck.size,
    objects_wedged: names.length - removed,
    resume_runs: lines.filter((l) => l.kind === 'handler' && l.handler === 'resume_fn' && uids.has(l.uid)).length,
    kills: done.filter((d) => d.action === 'kill').length,
    scale_ups: done.filter((d) => d.action === 'up').length,
    scale_downs: done.filter((d) => d.action === 'down').length,
    unexpected_exits: unexpected.length,
    unreadable_ledger_lines: fleet.ledgers.unreadable,
    ...times,
    total_s: total,
  };
  notes['ring_events'] =
    done.map((d) => `${d.action} ${d.replica} at ${new Date(d.at).toISOString().slice(11, 23)} (${d.progress} pairs)`).join(', ') || 'none';
  if (runs.examples.missing.length) notes['examples_missing'] = runs.examples.missing.join('; ');
  if (runs.examples.unexplained.length) notes['examples_repeats_not_explained'] = runs.examples.unexplained.join('; ');
  if (found.across.length)
    notes['examples_daemon_overlaps'] = found.across
      .slice(0, 5)
      .map(
        (x) =>
          `${x.name}: ${x.a.replica} [${x.a.start.toFixed(0)}, ${x.a.end.toFixed(0)}] and ${x.b.replica} [${x.b.start.toFixed(0)}, ${x.b.end.toFixed(0)}] ms`,
      )
      .join('; ');
  if (stuck.size) notes['stuck_objects'] = [...stuck].slice(0, 10).join(', ');
  const flawed = failed || figures.missing + figures.repeats_not_explained + figures.daemon_overlaps + figures.stuck + figures.objects_wedged > 0;
  if (o.keep || flawed) notes['folder'] = `${dir} (ledger-<id>.jsonl, <id>.log)`;
  else fs.rmSync(dir, { recursive: true, force: true });
  return { figures, notes };
}

const ZERO: report.Target = { min: 0, max: 0 };
const ROWS: { label: string; figure: keyof ShardedChaosFigures; target?: (o: Options) => report.Target; digits?: number }[] = [
  { label: 'expected handler runs (N x 3)', figure: 'expected_runs' },
  { label: 'handler runs in the ledgers', figure: 'runs' },
  { label: 'exactly once', figure: 'exactly_once' },
  { label: 'missing', figure: 'missing', target: () => ZERO },
  { label: 'repeats explained by a kill', figure: 'repeats_explained_by_kill' },
  { label: 'handler runs not explained by a kill', figure: 'repeats_not_explained', target: () => ZERO },
  { label: 'two replicas running a daemon of one object at once', figure: 'daemon_overlaps', target: () => ZERO },
  { label: 'one replica running two daemons of one object at once', figure: 'daemon_overlaps_within_a_replica', target: () => ZERO },
  { label: 'stuck', figure: 'stuck', target: () => ZERO },
  { label: 'objects wedged', figure: 'objects_wedged', target: () => ZERO },
  { label: 'resume runs (handoffs)', figure: 'resume_runs' },
  { label: 'SIGKILLs', figure: 'kills' },
  { label: 'scale-ups', figure: 'scale_ups' },
  { label: 'scale-downs (graceful)', figure: 'scale_downs' },
  { label: 'unexpected exits', figure: 'unexpected_exits', target: () => ZERO },
  { label: 'create phase s', figure: 'create_s', digits: 1 },
  { label: 'update phase s', figure: 'update_s', digits: 1 },
  { label: 'delete phase s', figure: 'delete_s', digits: 1 },
  { label: 'total s', figure: 'total_s', digits: 1 },
];

/** `chaos --sharded`: one session, its figures in a table with their targets. */
export async function run(args: readonly string[]): Promise<report.Result> {
  const o = parseOptions(args);
  const notes: Record<string, string> = {};
  try {
    notes['runtime_resolved_to'] = replicas.prepare();
  } catch (err) {
    process.stderr.write(`chaos --sharded: ${message(err)}\n`);
    process.exit(1);
  }
  if (!replicas.shardingSupported()) {
    process.stderr.write('chaos --sharded: the compiled runtime has no --shards (build the sharding runtime first)\n');
    process.exit(1);
  }
  notes['command'] = `${replicas.shardedCommand(o.leaseDuration)}  (per replica)`;
  notes['machine'] = `${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? 'unknown'}, Node ${process.version}`;
  notes['schedule'] =
    `seed ${o.seed}; 4 replicas, then ${o.ringEvents} ring changes (${ringPlan(o.ringEvents, 4).join(', ')}) at seeded fractions of the expected runs; ` +
    `Lease duration ${o.leaseDuration ?? 15} s; no API faults`;
  const outcome = await session(o);
  Object.assign(notes, outcome.notes);
  notes['load_average_1m'] = os.loadavg()[0]!.toFixed(2);
  const figures: Record<string, number> = {};
  const targets: Record<string, report.Target> = {};
  const prefix = `sharded_n${o.objects}_`;
  for (const [k, v] of Object.entries(outcome.figures)) figures[`${prefix}${k}`] = v;
  const rows: report.ComparisonRow[] = ROWS.map((spec) => {
    const v = outcome.figures[spec.figure];
    const t = spec.target?.(o);
    if (t) targets[`${prefix}${spec.figure}`] = t;
    const met = t ? (t.min === undefined || v >= t.min) && (t.max === undefined || v <= t.max) : undefined;
    return { label: spec.label, values: [v], digits: spec.digits, target: t ? `= ${t.max}` : '', met };
  });
  return {
    name: 'chaos',
    figures,
    targets,
    notes,
    tables: [{ title: `chaos, sharded, N = ${o.objects} (seed ${o.seed}, ${o.ringEvents} ring changes)`, columns: ['kopf-gen'], rows }],
  };
}
