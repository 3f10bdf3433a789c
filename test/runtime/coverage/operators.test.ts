/**
 * Operators as a whole: the operator memo of activity handlers (R-MEMO-3), the startup order
 * (R-LIFE-2), no signal handlers when embedded (R-LIFE-6), and the permissions a generated project
 * grants its operator (R-LIFE-7).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as YAML from 'yaml';

import type { DevCluster } from '../../../devcluster/testing.js';
import * as generator from '../../../generator/index.js';
import type * as credentials from '../../../runtime/cogs/client/credentials.js';
import { Memo } from '../../../runtime/core/intents/memos.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as running from '../../../runtime/core/reactor/running.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';
import { flushed } from '../../support/waiting.js';

type Json = Record<string, unknown>;

/** Registers a login handler that connects to the devcluster as its admin; records its calls. */
function login(registry: OperatorRegistry, cluster: DevCluster, calls: string[], memos: unknown[] = []): void {
  on.login({ registry }, function login_fn({ memo }: { memo: unknown }): credentials.ConnectionInfo {
    calls.push('login');
    memos.push(memo);
    return { server: cluster.url, token: cluster.token };
  });
}

function signalListeners(): { SIGINT: number; SIGTERM: number } {
  return { SIGINT: process.listenerCount('SIGINT'), SIGTERM: process.listenerCount('SIGTERM') };
}

describe('operators', () => {
  const suite = fx.clusterPerTest();

  it('R-MEMO-3 activity handlers get the operator memo itself — any object an embedded operator passes; objects get copies', async () => {
    class OwnMemo {
      counter = 0;
      readonly tags: string[] = [];
    }
    const memo = new OwnMemo();
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    const loginMemos: unknown[] = [];
    const seen: Record<string, unknown> = {};
    login(registry, suite.cluster, calls, loginMemos);
    on.startup({ registry }, function startup_fn({ memo }: { memo: unknown }) {
      const m = memo as OwnMemo;
      seen['startup'] = m;
      m.counter += 1;
      m.tags.push('started');
    });
    on.cleanup({ registry }, function cleanup_fn({ memo }: { memo: unknown }) {
      const m = memo as OwnMemo;
      seen['cleanup'] = m;
      m.counter += 10;
    });
    on.create('kopfexamples', { registry }, function create_fn({ memo }: { memo: unknown }) {
      seen['create'] = memo;
    });
    const stop = new AbortController();
    const done = running.operator({ registry, settings: fx.fastSettings(), memo, clusterwide: true, standalone: true, stopFlag: stop.signal });
    await fx.eventually(() => fx.watchRequests(suite.cluster).length > 0, 'the watch');
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => seen['create'] !== undefined, 'the create handler');
    stop.abort();
    await done;

    expect(seen['startup']).toBe(memo);
    expect(seen['cleanup']).toBe(memo);
    expect(loginMemos.length).toBeGreaterThan(0);
    for (const m of loginMemos) expect(m).toBe(memo);
    expect(memo.counter).toBe(11);
    // Resource handlers get a per-object (shallow) copy, not the operator memo itself (R-MEMO-2).
    expect(seen['create']).not.toBe(memo);
    expect((seen['create'] as OwnMemo).tags).toBe(memo.tags);
  });

  it('R-MEMO-3 without a memo option, activity handlers get a fresh Memo, the same one in startup and cleanup', async () => {
    const registry = new OperatorRegistry();
    const seen: unknown[] = [];
    login(registry, suite.cluster, []);
    on.startup({ registry }, function startup_fn({ memo }: { memo: unknown }) {
      seen.push(memo);
    });
    on.cleanup({ registry }, function cleanup_fn({ memo }: { memo: unknown }) {
      seen.push(memo);
    });
    on.event('kopfexamples', { registry }, function ev_fn() {
      return undefined;
    });
    const stop = new AbortController();
    const done = running.operator({ registry, settings: fx.fastSettings(), clusterwide: true, standalone: true, stopFlag: stop.signal });
    await fx.eventually(() => fx.watchRequests(suite.cluster).length > 0, 'the watch');
    stop.abort();
    await done;
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBeInstanceOf(Memo);
    expect(seen[1]).toBe(seen[0]);
  });

  it('R-LIFE-2 no API call happens before the startup activity completes; then login, discovery and watching follow', async () => {
    const registry = new OperatorRegistry();
    const order: string[] = [];
    login(registry, suite.cluster, order);
    const requestsAtStart: number[] = [];
    on.startup({ registry }, async function startup_fn() {
      order.push('startup begins');
      requestsAtStart.push(suite.cluster.requests.all.length);
      // Every API call needs credentials first: a login running alongside the startup would be
      // called by now (it is in memory up to the handler), and would stand before 'startup ends'.
      await flushed();
      requestsAtStart.push(suite.cluster.requests.all.length);
      order.push('startup ends');
    });
    on.create('kopfexamples', { registry }, function create_fn() {
      return undefined;
    });
    const before = suite.cluster.requests.all.length;
    const stop = new AbortController();
    const done = running.operator({ registry, settings: fx.fastSettings(), clusterwide: true, standalone: true, stopFlag: stop.signal });
    await fx.eventually(() => fx.watchRequests(suite.cluster).length > 0, 'the watch');
    stop.abort();
    await done;

    expect(requestsAtStart).toEqual([before, before]);
    expect(order.slice(0, 3)).toEqual(['startup begins', 'startup ends', 'login']);
    const after = suite.cluster.requests.all.slice(before);
    expect(after.length).toBeGreaterThan(0);
    expect(after.some((r) => r.resource === 'kopfexamples' && r.verb === 'list')).toBe(true);
  });

  it('R-LIFE-6 an embedded operator installs no signal handlers; run() (owning the process) does', async () => {
    const registry = new OperatorRegistry();
    login(registry, suite.cluster, []);
    const duringStartup: { SIGINT: number; SIGTERM: number }[] = [];
    on.startup({ registry }, function startup_fn() {
      duringStartup.push(signalListeners());
    });
    on.event('kopfexamples', { registry }, function ev_fn() {
      return undefined;
    });
    const initial = signalListeners();

    const embedded = new AbortController();
    const done = running.operator({ registry, settings: fx.fastSettings(), clusterwide: true, standalone: true, stopFlag: embedded.signal });
    await fx.eventually(() => fx.watchRequests(suite.cluster).length > 0, 'the watch');
    const whileEmbedded = signalListeners();
    embedded.abort();
    await done;
    expect([duringStartup[0], whileEmbedded, signalListeners()]).toEqual([initial, initial, initial]);

    // The control: run() installs one handler per signal, and removes them when it stops.
    const owning = new AbortController();
    const watches = fx.watchRequests(suite.cluster).length;
    const ran = running.run({ registry, settings: fx.fastSettings(), clusterwide: true, standalone: true, stopFlag: owning.signal, exit: () => undefined });
    await fx.eventually(() => fx.watchRequests(suite.cluster).length > watches, 'the watch of run()');
    const whileOwning = signalListeners();
    owning.abort();
    await ran;
    expect(whileOwning).toEqual({ SIGINT: initial.SIGINT + 1, SIGTERM: initial.SIGTERM + 1 });
    expect(signalListeners()).toEqual(initial);
  });
});

describe('generated permissions', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-coverage-'));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  interface Rule {
    apiGroups: string[];
    resources: string[];
    verbs: string[];
  }

  function allows(rules: readonly Rule[], group: string, resource: string, verbs: readonly string[]): boolean {
    return verbs.every((verb) => rules.some((rule) => rule.apiGroups.includes(group) && rule.resources.includes(resource) && rule.verbs.includes(verb)));
  }

  it('R-LIFE-7 the RBAC of a project generated for the Kopf example CRD grants what the runtime needs', async () => {
    const crd = path.resolve(import.meta.dirname, '../../../fixtures/crds/kopfexamples.yaml');
    const out = path.join(root, 'kopfexamples-operator');
    await generator.init({ crds: [crd], out });
    const documents = YAML.parseAllDocuments(fs.readFileSync(path.join(out, 'deploy/rbac.yaml'), 'utf8')).map((d) => d.toJS() as Json);
    const roles = documents.filter((d) => d['kind'] === 'ClusterRole' || d['kind'] === 'Role');
    const rules = roles.flatMap((role) => (role['rules'] ?? []) as Rule[]);
    expect(roles.length).toBeGreaterThan(0);
    // The served resource: observed and patched (also its status subresource).
    expect(allows(rules, 'kopf.dev', 'kopfexamples', ['list', 'watch', 'patch'])).toBe(true);
    expect(allows(rules, 'kopf.dev', 'kopfexamples/status', ['patch'])).toBe(true);
    // Posting k8s-events, and discovery of namespaces and CRDs.
    expect(allows(rules, '', 'events', ['create'])).toBe(true);
    expect(allows(rules, '', 'namespaces', ['list', 'watch'])).toBe(true);
    expect(allows(rules, 'apiextensions.k8s.io', 'customresourcedefinitions', ['list', 'watch'])).toBe(true);
    // Peering objects (cluster-wide and per namespace).
    expect(allows(rules, 'kopf.dev', 'clusterkopfpeerings', ['get', 'list', 'watch', 'patch'])).toBe(true);
    expect(allows(rules, 'kopf.dev', 'kopfpeerings', ['get', 'list', 'watch', 'patch'])).toBe(true);
    // Bound to the operator's service account.
    const bindings = documents.filter((d) => d['kind'] === 'ClusterRoleBinding' || d['kind'] === 'RoleBinding');
    expect(bindings.length).toBeGreaterThan(0);
  });
});
