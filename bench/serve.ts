/**
 * A devcluster in its own process for benchmarks: started by the parent with IPC (see
 * `servers.ts`), it reports its URL, answers `rss` and `cpu` queries, seeds objects through its store on
 * request, writes its kubeconfig where asked, counts logged requests per verb and resource (all
 * of them, or those in a time window, optionally leaving out one user agent), tells when the first
 * request about given objects arrived, announces the first watch of a resource as soon as it
 * arrives (`await-watch`: the startup benchmark's ready signal), and stops on `stop` (or when its
 * parent goes away).
 * It serves plain HTTP with the Kopf example and widget CRDs, and keeps no request bodies.
 *
 * For the admission benchmark it also seeds Kopf example objects (`seed-kopfexamples`) and, when
 * started with `DEVCLUSTER_WEBHOOK_CALLS=1`, keeps every webhook call it makes (when it ended, how
 * long it took, whether it succeeded) and hands over those of a time window (`webhook-calls`).
 *
 * For the chaos benchmark it injects faults on request: it installs fault rules (`add-faults`,
 * with the rules' RegExps sent as their source text, since RegExps do not cross IPC), removes them
 * (`remove-faults`, `clear-faults`), drops open watches with a mode, optionally only those opened
 * with a matching user agent (`drop-watches`), compacts its history (`compact`), and tells how
 * many requests each rule installed so far has acted on (`rule-counts`). These messages carry a
 * `reply` type chosen by the caller (`servers.call`), so concurrent questions get their own
 * answers. `DEVCLUSTER_SEED` seeds the cluster's random source (fault probabilities, UIDs).
 */
import * as path from 'node:path';
import { DevCluster, type FaultHandle, type FaultRule } from '../devcluster/testing.js';

/** A time window of the request log, in epoch milliseconds, and a user agent to leave out. */
export interface CountsQuery {
  since?: number;
  until?: number;
  excludeUserAgent?: string;
  /** Also count requests outside the resource API (discovery, version); resources only by default. */
  everything?: boolean;
}

type Message =
  | { type: 'rss' }
  | { type: 'cpu' }
  | { type: 'stop' }
  | { type: 'seed'; count: number; prefix: string; namespace: string }
  | ({ type: 'counts' } & CountsQuery)
  | { type: 'kubeconfig'; file: string }
  | { type: 'first'; names: string[]; since: number; excludeUserAgent?: string }
  | AwaitWatch
  | { type: 'seed-kopfexamples'; count: number; prefix: string; namespace: string }
  | { type: 'webhook-calls'; since: number; until: number }
  | ChaosMessage;

/** A fault rule as it crosses IPC: `path` and `userAgent` are the source text of their RegExps. */
export type WireFaultRule = FaultRule extends infer R
  ? R extends unknown
    ? Omit<R, 'path' | 'userAgent'> & { path?: string; userAgent?: string }
    : never
  : never;

/** How open watches end when dropped (D-FAULT-6): a clean end, a broken connection, or ERROR 410 then end. */
export type DropMode = 'end' | 'abort' | 'expire';

/** Which open watches to drop; `userAgent` is the source text of a RegExp. */
export interface WireDropMatch {
  group?: string;
  resource?: string;
  namespace?: string;
  userAgent?: string;
}

/** The fault-injection messages; each is answered with one message of type `reply`. */
export type ChaosMessage =
  | { type: 'add-faults'; rules: WireFaultRule[]; reply: string }
  | { type: 'remove-faults'; ids: number[]; reply: string }
  | { type: 'clear-faults'; reply: string }
  | { type: 'drop-watches'; match: WireDropMatch; mode: DropMode; reply: string }
  | { type: 'compact'; reply: string }
  | { type: 'rule-counts'; ids: number[]; reply: string };

/** Answers: `add-faults` → the rules' ids; `drop-watches` → streams dropped; `compact` → the revision compacted to; `rule-counts` → counts. */
export interface ChaosReply {
  type: string;
  ids?: number[];
  count?: number;
  revision?: number;
  /** Per rule id: how many requests the rule has acted on (removed and expired rules included). */
  counts?: Record<number, number>;
}

/** One webhook call the devcluster made: when it ended (epoch ms), its wall time, its outcome. */
export interface WebhookCall {
  at: number;
  name: string;
  ms: number;
  ok: boolean;
}

/**
 * Asks for the first watch request of `resource` that arrived at or after `since` (epoch ms):
 * answered with `{ type: reply, time }` as soon as the request is logged (a watch is logged when
 * its response headers are sent, stamped with its arrival time), or `time: null` after `timeoutMs`.
 * The caller picks `reply` so that a late answer cannot be taken for another question's.
 */
export interface AwaitWatch {
  type: 'await-watch';
  resource: string;
  since: number;
  timeoutMs: number;
  reply: string;
}

const webhookCalls: WebhookCall[] = [];
const recordCalls = process.env['DEVCLUSTER_WEBHOOK_CALLS'] === '1';
const seed = process.env['DEVCLUSTER_SEED'];
const cluster = await DevCluster.start({
  tls: false,
  ...(seed !== undefined && seed !== '' ? { seed: Number(seed) } : {}),
  historyLimit: Number(process.env['DEVCLUSTER_HISTORY'] ?? 10_000),
  ...(recordCalls
    ? {
        onWebhookCall: (call: { name: string; ms: number; ok: boolean }) => {
          webhookCalls.push({ at: Date.now(), name: call.name, ms: call.ms, ok: call.ok });
        },
      }
    : {}),
});
cluster.requests.keepBodies = false;
await cluster.load(path.resolve(import.meta.dirname, '../fixtures/crds/kopfexamples.yaml'));
await cluster.load(path.resolve(import.meta.dirname, '../fixtures/crds/widgets.yaml'));
const send = (m: unknown): void => {
  process.send?.(m);
};
const installed = new Map<number, FaultHandle>();
let nextRuleId = 1;
const regexp = (source: string | undefined): RegExp | undefined => (source === undefined ? undefined : new RegExp(source));

/** Acts on a fault-injection message; returns the reply's fields. */
function chaos(m: ChaosMessage): Omit<ChaosReply, 'type'> {
  switch (m.type) {
    case 'add-faults': {
      const ids: number[] = [];
      for (const wire of m.rules) {
        const { path: pathSource, userAgent, ...rest } = wire;
        const rule = { ...rest, path: regexp(pathSource), userAgent: regexp(userAgent) } as FaultRule;
        const id = nextRuleId++;
        installed.set(id, cluster.faults.add(rule));
        ids.push(id);
      }
      return { ids };
    }
    case 'remove-faults':
      for (const id of m.ids) installed.get(id)?.remove();
      return {};
    case 'clear-faults':
      // The handles stay: their counts remain readable.
      cluster.faults.clear();
      return {};
    case 'drop-watches': {
      const { userAgent, ...match } = m.match;
      return { count: cluster.dropWatches({ ...match, userAgent: regexp(userAgent) }, m.mode) };
    }
    case 'compact': {
      const revision = cluster.revision;
      cluster.compact(revision);
      return { revision };
    }
    case 'rule-counts':
      return { counts: Object.fromEntries(m.ids.map((id) => [id, installed.get(id)?.applied() ?? 0])) };
  }
}

const CHAOS_TYPES: ReadonlySet<string> = new Set(['add-faults', 'remove-faults', 'clear-faults', 'drop-watches', 'compact', 'rule-counts']);
send({ type: 'ready', url: cluster.url });
// A devcluster whose parent is gone (it crashed, or a test runner gave up on it) has nobody to serve.
process.on('disconnect', () => process.exit(0));
process.on('message', (m: Message) => {
  void (async () => {
    if (CHAOS_TYPES.has(m.type)) {
      const c = m as ChaosMessage;
      send({ type: c.reply, ...chaos(c) });
    } else if (m.type === 'rss') {
      globalThis.gc?.();
      send({ type: 'rss', rss: process.memoryUsage().rss });
    } else if (m.type === 'cpu') {
      // CPU time used so far (user + system, microseconds): per-request cost independent of machine load.
      const usage = process.cpuUsage();
      send({ type: 'cpu', micros: usage.user + usage.system });
    } else if (m.type === 'seed') {
      for (let i = 0; i < m.count; i++) {
        await cluster.store.create(
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: `${m.prefix}-${i}`, namespace: m.namespace, labels: { bench: 'yes' } },
            data: { key: `value-${i}` },
          },
          { admission: false },
        );
      }
      send({ type: 'seeded' });
    } else if (m.type === 'seed-kopfexamples') {
      for (let i = 0; i < m.count; i++) {
        await cluster.store.create(
          {
            apiVersion: 'kopf.dev/v1',
            kind: 'KopfExample',
            metadata: { name: `${m.prefix}-${i}`, namespace: m.namespace },
            spec: { field: 'value', items: ['item1', 'item2'] },
          },
          { admission: false },
        );
      }
      send({ type: 'seeded' });
    } else if (m.type === 'webhook-calls') {
      send({ type: 'webhook-calls', calls: webhookCalls.filter((c) => c.at >= m.since && c.at < m.until) });
    } else if (m.type === 'counts') {
      const since = m.since ?? -Infinity;
      const until = m.until ?? Infinity;
      const counts = cluster.requests.counts(
        (r) =>
          (m.everything || r.resource !== undefined) &&
          r.time >= since &&
          r.time < until &&
          (m.excludeUserAgent === undefined || r.headers.userAgent !== m.excludeUserAgent),
      );
      send({ type: 'counts', counts, total: cluster.requests.all.length });
    } else if (m.type === 'first') {
      // For each object name: when the first request about it (from anyone but the excluded agent) arrived.
      const wanted = new Set(m.names);
      const times: Record<string, number> = {};
      for (const r of cluster.requests.all) {
        if (r.time < m.since || r.name === undefined || !wanted.has(r.name) || r.headers.userAgent === m.excludeUserAgent) continue;
        if (times[r.name] === undefined || r.time < times[r.name]!) times[r.name] = r.time;
      }
      send({ type: 'first', times });
    } else if (m.type === 'await-watch') {
      const seen = await cluster.requests
        .waitFor((r) => r.verb === 'watch' && r.resource === m.resource && r.time >= m.since, m.timeoutMs)
        .then(
          (r) => r.time,
          () => null,
        );
      send({ type: m.reply, time: seen });
    } else if (m.type === 'kubeconfig') {
      cluster.writeKubeconfig(m.file);
      send({ type: 'kubeconfig', file: m.file });
    } else if (m.type === 'stop') {
      await cluster.stop();
      process.exit(0);
    }
  })();
});
