// Options and settings of engines this version does not have (peering, admission) fail
// loudly before an operator starts anything; auto-detected peering runs standalone and warns once
// when the cluster has Kopf's peering CRDs (R-PEER-2, R-PEER-8).
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../../devcluster/testing.js';
import * as settingsModule from '../../../../runtime/cogs/configs/settings.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import { UnsupportedFeatureError } from '../../../../runtime/core/intents/unsupported.js';
import * as running from '../../../../runtime/core/reactor/running.js';
import { on } from '../../../../runtime/on.js';
import { Captured, startCluster } from './lifecycle.js';

let cluster: DevCluster;
let log: Captured;

beforeAll(async () => {
  cluster = await startCluster();
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

function peeringCrd(scope: 'Cluster' | 'Namespaced', group = 'kopf.dev'): Record<string, unknown> {
  const kind = scope === 'Cluster' ? 'ClusterKopfPeering' : 'KopfPeering';
  const plural = `${kind.toLowerCase()}s`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `${plural}.${group}` },
    spec: {
      scope, group, names: { kind, plural, singular: kind.toLowerCase() },
      versions: [{
        name: 'v1', served: true, storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
      }],
    },
  };
}

/** A registry that logs in to the devcluster and watches pods; `logins` counts the logins. */
function registryWithLogin(logins: string[] = []): OperatorRegistry {
  const registry = new OperatorRegistry();
  on.login({ registry }, function login_fn() {
    logins.push('login');
    return { server: cluster.url, token: cluster.token };
  });
  on.event(['v1', 'pods'], { registry }, function pod_fn() {});
  return registry;
}

function fastSettings(configure?: (s: settingsModule.OperatorSettings) => void): settingsModule.OperatorSettings {
  const settings = new settingsModule.OperatorSettings();
  settings.networking.errorBackoffs = [0.05];
  settings.watching.reconnectBackoff = 0.05;
  settings.queueing.exitTimeout = 0.5;
  configure?.(settings);
  return settings;
}

const PEERING_WARNING = "(Kopf's peering), but this version of kopf-gen does not support peering";

/** Runs an operator (cluster-wide unless told otherwise) until `until` holds, then stops it. */
async function runUntil(options: running.OperatorOptions, until: () => boolean | Promise<boolean>): Promise<void> {
  const stop = new AbortController();
  const done = running.operator({ settings: fastSettings(), clusterwide: true, ...options, stopFlag: stop.signal });
  let failed: unknown;
  void done.catch((error: unknown) => { failed = error; });
  const deadline = Date.now() + 10_000;
  while (!(await until())) {
    if (failed !== undefined) throw failed;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
  stop.abort();
  await done;
}

describe('options of missing engines (R-PEER-2, R-PEER-8, R-ADMISSION-2)', () => {
  it.each<[string, running.OperatorOptions, RegExp]>([
    ['peeringName', { peeringName: 'ring' }, /^The option peeringName is not available in this version of kopf-gen: peering between operators is not implemented yet .*--standalone/],
    ['priority', { priority: 100 }, /^The option priority is not available in this version of kopf-gen: a priority only ranks operators for peering/],
    ['priority 0', { priority: 0 }, /^The option priority is not available/],
    ['identity', { identity: 'me@host' }, /^The option identity is not available/],
    ['settings.peering.mandatory', { settings: fastSettings((s) => { s.peering.mandatory = true; }) }, /^Mandatory peering \(settings.peering.mandatory\) is not available/],
    ['settings.peering.priority', { settings: fastSettings((s) => { s.peering.priority = 10; }) }, /^A peering priority \(settings.peering.priority = 10\) is not available/],
    ['settings.admission.server', { settings: fastSettings((s) => { s.admission.server = async function* serve() { /* never yields */ }; }) }, /^An admission server \(settings.admission.server\) is not available in this version of kopf-gen: admission webhooks are not served yet/],
    ['settings.admission.managed', { settings: fastSettings((s) => { s.admission.managed = 'auto.kopf.dev'; }) }, /^Managing webhook configurations \(settings.admission.managed = 'auto.kopf.dev'\) is not available/],
  ])('R-PEER-2 R-ADMISSION-2 %s makes operator(), run() and spawnTasks() throw before anything starts', async (feature, options, message) => {
    const logins: string[] = [];
    for (const start of [running.operator, running.run, running.spawnTasks]) {
      const error = await start({ registry: registryWithLogin(logins), clusterwide: true, handleSignals: false, ...options }).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(UnsupportedFeatureError);
      expect((error as UnsupportedFeatureError).code).toBe('UnsupportedFeatureError');
      expect((error as UnsupportedFeatureError).feature).toBe(feature.replace(/ 0$/, ''));
      expect((error as Error).message).toMatch(message);
    }
    expect(logins).toEqual([]);
    expect(cluster.requests.all).toEqual([]);
  });

  it('R-PEER-2 mandatory peering in the settings is fine for a standalone operator', async () => {
    const settings = fastSettings((s) => { s.peering.mandatory = true; });
    await runUntil({ registry: registryWithLogin(), settings, standalone: true }, () => cluster.requests.filter((r) => r.resource === 'pods' && r.verb === 'watch').length > 0);
    expect(log.matching('Peering')).toEqual([]);
  });

  it('R-ACTIVITY-1 R-PEER-2 a startup handler asking for peering fails the operator before any API request', async () => {
    const registry = registryWithLogin();
    const cleanups: string[] = [];
    on.startup({ registry }, function configure({ settings }) { settings.peering.priority = 5; });
    on.cleanup({ registry }, function cleanup() { cleanups.push('cleanup'); });
    const error = await running.operator({ registry, settings: fastSettings(), clusterwide: true }).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(UnsupportedFeatureError);
    expect((error as UnsupportedFeatureError).feature).toBe('settings.peering.priority');
    expect(log.matching('Startup activity has failed: A peering priority (settings.peering.priority = 5) is not available in this version of kopf-gen')).toHaveLength(1);
    expect(cleanups).toEqual([]);
    expect(cluster.requests.all).toEqual([]);
  });
});

describe('peering auto-detection (R-PEER-2)', () => {
  // The CRDs are created during these tests and stay: the tests run in order.
  const watchingPods = (): boolean => cluster.requests.filter((r) => r.resource === 'pods' && r.verb === 'watch').length > 0;

  it('R-PEER-2 without peering CRDs, the operator runs standalone and says so at DEBUG only', async () => {
    await runUntil({ registry: registryWithLogin() }, watchingPods);
    expect(log.matching('Peering is not implemented yet and the cluster has no peering resources: the operator runs standalone.')).toHaveLength(1);
    expect(log.records.filter((r) => r.level >= 30).map((r) => r.message)).toEqual([]);
  });

  it('R-PEER-2 a peering CRD created while the operator runs gives one WARNING; the other scope\'s CRD gives none', async () => {
    let loaded = false;
    await runUntil({ registry: registryWithLogin() }, async () => {
      if (!watchingPods()) return false;
      if (!loaded) {
        loaded = true;
        await cluster.load(peeringCrd('Namespaced')); // not the resource of a cluster-wide operator
        await cluster.load(peeringCrd('Cluster'));
      }
      return log.matching(PEERING_WARNING).length > 0;
    });
    const warnings = log.records.filter((r) => r.level >= 30).map((r) => r.message);
    expect(warnings).toEqual([
      "The cluster serves clusterkopfpeerings.kopf.dev (Kopf's peering), but this version of kopf-gen does not support peering: "
      + 'this operator runs standalone and does not coordinate with other replicas or other Kopf operators using clusterkopfpeerings.kopf.dev, '
      + 'so they may handle the same objects at the same time. Run only one operator for these resources, '
      + 'and start it with --standalone (standalone: true) to silence this warning.',
    ]);
  });

  it('R-PEER-2 peering CRDs present at startup give one WARNING per operator, for the resource of its scope', async () => {
    await runUntil({ registry: registryWithLogin(), clusterwide: false, namespaces: ['default'] }, () => watchingPods() && log.matching(PEERING_WARNING).length > 0);
    await new Promise((r) => setTimeout(r, 100));
    expect(log.matching(PEERING_WARNING)).toHaveLength(1);
    expect(log.matching(PEERING_WARNING)[0]).toContain('The cluster serves kopfpeerings.kopf.dev');
    expect(log.matching('Peering is not implemented yet')).toEqual([]);
  });

  it('R-PEER-2 --standalone (standalone: true) silences the warning', async () => {
    await runUntil({ registry: registryWithLogin(), standalone: true }, watchingPods);
    await new Promise((r) => setTimeout(r, 100));
    expect(log.matching('peering')).toEqual([]);
    expect(log.matching('Peering')).toEqual([]);
  });
});
