/**
 * Scenario A-35 (simulation): resource references against discovery (R-RES-1..9). The devcluster
 * serves the discovery documents (with extra CRDs standing in for `metrics.k8s.io`, ambiguous
 * names, categories and multi-version groups), read through the runtime's HTTP client; a
 * non-watchable resource, which neither the devcluster nor CRDs can serve, is faked into the
 * discovered list. Operators then show which resources get watchers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster, RequestRecord } from '../../../devcluster/testing.js';
import * as references from '../../../runtime/cogs/structs/references.js';
import { on } from '../../../runtime/on.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as selectors from '../../../runtime/core/intents/selectors.js';
import { clientFor } from '../core/reactor/observing.js';
import * as h from '../../support/scenarios.js';

type Json = Record<string, unknown>;

/**
 * Waits until every watcher the operator started has sent its watch request. The first watchers
 * start together (each logs it), so once the request log holds a watch of every started watcher,
 * the set of watched resources is complete: the explicit signal instead of a quiet period.
 */
async function allWatching(cluster: DevCluster, op: h.RunningOperator, since: number): Promise<void> {
  const wanted = (): string[] =>
    op.output.matching(/^Starting the watcher for /).map((e) => {
      const [plural, version, ...group] = /^Starting the watcher for ([^@]+)@/.exec(e.message)![1]!.split('.');
      return group.length ? `/apis/${group.join('.')}/${version}/${plural}` : `/api/${version}/${plural}`;
    });
  const watched = (): Set<string> =>
    new Set(
      cluster.requests.all
        .slice(since)
        .filter((r) => r.verb === 'watch')
        .map((r) => r.path.split('?')[0]!),
    );
  await h.eventually(() => wanted().length > 0 && wanted().every((path) => watched().has(path)), 'a watch request of every started watcher');
}

function crd(options: { group: string; plural: string; kind: string; versions?: string[]; categories?: string[] }): Json {
  const versions = options.versions ?? ['v1'];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${options.plural}.${options.group}` },
    spec: {
      group: options.group,
      scope: 'Namespaced',
      names: {
        plural: options.plural,
        singular: options.kind.toLowerCase(),
        kind: options.kind,
        ...(options.categories ? { categories: options.categories } : {}),
      },
      versions: versions.map((name, index) => ({
        name,
        served: true,
        storage: index === 0,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      })),
    },
  };
}

const EXTRA = [
  crd({ group: 'metrics.k8s.io', plural: 'pods', kind: 'PodMetrics', versions: ['v1beta1'] }),
  crd({ group: 'a.example.com', plural: 'gadgets', kind: 'Gadget' }),
  crd({ group: 'b.example.com', plural: 'gadgets', kind: 'Gadget' }),
  crd({ group: 'c.example.com', plural: 'widgets', kind: 'Widget', categories: ['kopf-test'] }),
  crd({ group: 'c.example.com', plural: 'gizmos', kind: 'Gizmo', categories: ['kopf-test', 'all'] }),
  crd({ group: 'd.example.com', plural: 'multis', kind: 'Multi', versions: ['v1', 'v2'] }),
];

const id = (r: references.Resource): string => `${r.group}/${r.version}/${r.plural}`;

describe('resource references', () => {
  let cluster: DevCluster;
  let discovered: references.Resource[];

  beforeAll(async () => {
    cluster = await h.startCluster({ extraCrds: EXTRA });
    discovered = await clientFor(cluster).api.scanResources(null);
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const select = (ref: selectors.ResourceRef): string[] => selectors.parseSelector(ref).select(discovered).map(id).sort();

  it('A-35 names select the core resource first, and the reference CRD in every spelling', () => {
    expect(discovered.map(id)).toContain('metrics.k8s.io/v1beta1/pods');
    expect(select('pods')).toEqual(['/v1/pods']);
    for (const ref of [
      'kex',
      'KopfExample',
      'kopfexample',
      'kopfexamples.kopf.dev',
      ['kopf.dev', 'v1', 'kopfexamples'],
      ['kopf.dev/v1', 'kopfexamples'],
    ] as const) {
      expect({ ref, selected: select(ref) }).toEqual({ ref, selected: ['kopf.dev/v1/kopfexamples'] });
    }
  });

  it('A-35 categories select all their members; everything never selects events unless named', () => {
    expect(select({ category: 'kopf-test' })).toEqual(['c.example.com/v1/gizmos', 'c.example.com/v1/widgets']);
    const all = select({ category: 'all' });
    expect(all).toEqual(expect.arrayContaining(['/v1/pods', '/v1/services', 'apps/v1/deployments', 'c.example.com/v1/gizmos']));
    expect(all).not.toContain('c.example.com/v1/widgets');
    const everything = select(selectors.EVERYTHING);
    expect(everything).toEqual(expect.arrayContaining(['/v1/pods', 'kopf.dev/v1/kopfexamples']));
    expect(everything).not.toContain('/v1/events');
    expect(everything).not.toContain('events.k8s.io/v1/events');
    expect(select(['v1', 'events'])).toEqual(['/v1/events']);
  });

  it('A-35 a non-preferred version is selected only when the version is given', () => {
    const multis = discovered.filter((r) => r.plural === 'multis');
    expect(multis.map((r) => r.version).sort()).toEqual(['v1', 'v2']);
    const preferred = multis.find((r) => r.preferred)!;
    const other = multis.find((r) => !r.preferred)!;
    expect(select('multis')).toEqual([id(preferred)]);
    expect(select(['d.example.com', other.version, 'multis'])).toEqual([id(other)]);
  });

  it('A-35 ambiguous and non-watchable resources are not served, with warnings', () => {
    const nonWatchable = references.makeResource({
      group: 'e.example.com',
      version: 'v1',
      plural: 'readonlies',
      kind: 'ReadOnly',
      namespaced: true,
      verbs: ['get', 'list'],
    });
    const usage = {
      watched: ['gadgets', 'readonlies', 'kopfexamples'].map((ref) => selectors.parseSelector(ref)),
      patched: [],
    };
    const revised = selectors.reviseResources(usage, [...discovered, nonWatchable]);
    expect(revised.watched.map(id)).toEqual(['kopf.dev/v1/kopfexamples']);
    expect(revised.warnings).toEqual([
      "Ambiguous resources will not be served (try specifying API groups): Selector(any_name='gadgets') => [gadgets.v1.a.example.com, gadgets.v1.b.example.com]",
      'Non-watchable resources will not be served: [readonlies.v1.e.example.com]',
    ]);
  });

  it('A-35 a selector with two names is rejected at registration', () => {
    expect(() =>
      on.event({ kind: 'A', plural: 'b' }, { registry: new OperatorRegistry() }, function f() {
        /* never */
      }),
    ).toThrow(TypeError);
  });

  it('A-35 an operator watches exactly the selected resources', async () => {
    const registry = new OperatorRegistry();
    for (const ref of ['pods', 'gadgets', { category: 'kopf-test' }, ['d.example.com', 'v1', 'multis'], 'kex'] as const) {
      on.event(ref, { registry }, function spy() {
        /* events only */
      });
    }
    const since = cluster.requests.all.length;
    const op = await h.startOperator(cluster, { registry });
    await allWatching(cluster, op, since);
    const watched = (r: RequestRecord): boolean => r.verb === 'watch' && r.resource !== 'customresourcedefinitions';
    const targets = cluster.requests.all
      .slice(since)
      .filter(watched)
      .map((r) => `${r.group ?? ''}/${r.resource}${r.path.includes('/v2/') ? '@v2' : ''}`);
    expect([...new Set(targets)].sort()).toEqual(['/pods', 'c.example.com/gizmos', 'c.example.com/widgets', 'd.example.com/multis', 'kopf.dev/kopfexamples']);
    expect(op.output.matching(/^Ambiguous resources will not be served/).map((e) => e.level)).toEqual(['WARNING']);
    await op.stop();
    h.genericChecks(op);
  });

  it('A-35 an operator for everything does not watch events', async () => {
    const registry = new OperatorRegistry();
    on.event(selectors.EVERYTHING, { registry }, function spy() {
      /* events only */
    });
    const since = cluster.requests.all.length;
    const op = await h.startOperator(cluster, { registry });
    await allWatching(cluster, op, since);
    const resources = new Set(
      cluster.requests.all
        .slice(since)
        .filter((r) => r.verb === 'watch')
        .map((r) => `${r.group ?? ''}/${r.resource}`),
    );
    expect(resources).toContain('/pods');
    expect(resources).toContain('kopf.dev/kopfexamples');
    expect(resources).not.toContain('/events');
    expect(resources).not.toContain('events.k8s.io/events');
    await op.stop();
    h.genericChecks(op);
  });
});
