/**
 * Probe of issue 33, items 1 and 6: an operator under its generated RBAC, enforced, with PATCH
 * responses lost.
 *
 * A project is generated from the kopfexamples CRD (`kopf-gen init`); its deploy/rbac.yaml is
 * applied to a devcluster in RBAC mode, and the operator runs in this process, over HTTP on
 * loopback, with a token of the project's service account (as in its pod). N objects are created
 * while a share of the PATCH requests of the objects is stored by the server and its response
 * reset (the client sees a broken connection). The figures: create-handler runs per object
 * (target 1), objects whose handler ran more than once (target 0), ERROR/WARNING lines mentioning
 * a 403 or `forbidden` (target 0), the 403 responses the server sent (target 0), and objects still
 * in progress at the end — without the diff-base that marks a handled creation (target 0).
 *
 * Options: `--objects N` (default 200), `--lost P` (the share of PATCH responses lost, default
 * 0.3), `--without-get` (take `get` out of the generated role: the situation, to compare:
 * then the 403 figures are what one report per verb, resource and namespace gives), `--timeout S`
 * (how long the objects may take, default 60).
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as YAML from 'yaml';
import { DevCluster } from '../../devcluster/testing.js';
import * as generator from '../../generator/index.js';
import * as settingsModule from '../../runtime/cogs/configs/settings.js';
import * as logging from '../../runtime/core/actions/logging.js';
import { OperatorRegistry } from '../../runtime/core/intents/registry.js';
import * as running from '../../runtime/core/reactor/running.js';
import { on } from '../../runtime/on.js';
import type * as report from '../report.js';

const KEX = { group: 'kopf.dev', version: 'v1', resource: 'kopfexamples' } as const;
const LHC = 'kopf.zalando.org/last-handled-configuration';
const CRD_FILE = path.resolve(import.meta.dirname, '../../fixtures/crds/kopfexamples.yaml');

function option(args: readonly string[], name: string, fallback: number): number {
  const index = args.indexOf(name);
  const value = index >= 0 ? Number(args[index + 1]) : Number.NaN;
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

interface Rule {
  apiGroups: string[];
  resources?: string[];
  verbs: string[];
}

/** The generated project's RBAC documents, optionally without `get` on the served resource. */
async function generatedRbac(dir: string, withoutGet: boolean): Promise<Record<string, unknown>[]> {
  await generator.init({ crds: [CRD_FILE], out: dir });
  const documents = YAML.parseAllDocuments(fs.readFileSync(path.join(dir, 'deploy/rbac.yaml'), 'utf8')).map((doc) => doc.toJS() as Record<string, unknown>);
  if (!withoutGet) return documents;
  return documents.map((doc) => {
    const rules = doc['rules'] as Rule[] | undefined;
    if (!rules) return doc;
    return {
      ...doc,
      rules: rules.map((rule) => (rule.resources?.includes('kopfexamples') ? { ...rule, verbs: rule.verbs.filter((verb) => verb !== 'get') } : rule)),
    };
  });
}

export async function run(args: readonly string[]): Promise<report.Result> {
  const count = option(args, '--objects', 200);
  const lost = Math.min(0.9, option(args, '--lost', 0.3));
  const timeout = option(args, '--timeout', 60);
  const withoutGet = args.includes('--without-get');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-rbac-probe-'));
  const kube = 'rbac-probe';
  const cluster = await DevCluster.start({ tls: false, authorization: 'rbac' });
  const lines: { level: number; line: string }[] = [];
  const restoreSink = logging.setLogSink((line, record) => lines.push({ level: record.level, line }));
  const stopper = new AbortController();
  let done: Promise<void> | undefined;
  try {
    await cluster.load(fs.readFileSync(CRD_FILE, 'utf8'));
    await cluster.load((await generatedRbac(path.join(dir, kube), withoutGet)) as never);
    const token = cluster.auth.serviceAccountToken({ namespace: kube, name: kube });
    const runs = new Map<string, number>();
    const registry = new OperatorRegistry();
    on.login({ registry }, function login_fn() {
      return { server: cluster.url, token };
    });
    on.create('kopfexamples', { registry }, function create_fn({ name }: { name: string }) {
      runs.set(name, (runs.get(name) ?? 0) + 1);
      return { created: true };
    });
    const settings = new settingsModule.OperatorSettings({ warn: () => undefined });
    settings.posting.enabled = false;
    settings.persistence.consistencyTimeout = 2;
    settings.networking.errorBackoffs = [0.1, 0.2, 0.5, 1, 1, 1, 1, 1];
    done = running.operator({ registry, settings, clusterwide: true, standalone: true, stopFlag: stopper.signal });
    await until(() => cluster.requests.all.some((r) => r.resource === 'kopfexamples' && /watch=(true|1)/.test(r.query)), 30_000);

    const since = cluster.requests.all.length;
    cluster.faults.add({ method: 'PATCH', resource: 'kopfexamples', probability: lost, action: { reset: 'after' } });
    const names = Array.from({ length: count }, (_, i) => `kex-${i}`);
    const started = Date.now();
    for (const name of names)
      await cluster.store.create({ apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name, namespace: 'default' }, spec: {} });
    const handled = (name: string): boolean => {
      const body = cluster.store.get(KEX, name, 'default') as { metadata?: { annotations?: Record<string, string> } } | undefined;
      return body?.metadata?.annotations?.[LHC] !== undefined;
    };
    await until(() => names.every(handled), timeout * 1000);
    const seconds = (Date.now() - started) / 1000;
    cluster.faults.clear();
    const requests = cluster.requests.all.slice(since);
    const runCounts = names.map((name) => runs.get(name) ?? 0);
    const important = lines.filter((entry) => entry.level >= 30);
    return {
      name: `security: RBAC (${count} objects, ${Math.round(lost * 100)}% PATCH responses lost${withoutGet ? ', get removed from the role' : ''})`,
      figures: {
        createRunsPerObject: runCounts.reduce((a, b) => a + b, 0) / count,
        objectsHandledMoreThanOnce: runCounts.filter((n) => n > 1).length,
        forbiddenLogLines: important.filter((entry) => /forbidden|\b403\b/i.test(entry.line)).length,
        forbiddenResponses: requests.filter((r) => r.code === 403).length,
        objectsInProgress: names.filter((name) => !handled(name)).length,
        patchResponsesLost: requests.filter((r) => r.method === 'PATCH' && r.code === 0).length,
        rereads: requests.filter((r) => r.method === 'GET' && r.resource === 'kopfexamples' && r.name !== undefined).length,
        seconds,
      },
      targets: {
        createRunsPerObject: { max: 1 },
        objectsHandledMoreThanOnce: { max: 0 },
        forbiddenLogLines: { max: withoutGet ? 1 : 0 },
        forbiddenResponses: withoutGet ? {} : { max: 0 },
        objectsInProgress: { max: 0 },
      },
      notes: {
        setup: `deploy/rbac.yaml of a project generated from fixtures/crds/kopfexamples.yaml, applied to a devcluster in RBAC mode; the operator runs as its service account over HTTP`,
        faults: `each PATCH of the objects is, with probability ${lost}, stored and its connection reset before the response`,
        forbiddenLogLines: 'ERROR/WARNING lines that mention a 403 or "forbidden"',
        objectsInProgress: `objects without a diff-base (a handled creation) after ${timeout} s`,
      },
    };
  } finally {
    stopper.abort();
    await done?.catch(() => undefined);
    restoreSink();
    await cluster.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
