import { describe, expect, it } from 'vitest';
import * as references from '../../../../runtime/cogs/structs/references.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import { EVERYTHING } from '../../../../runtime/core/intents/selectors.js';
import * as observation from '../../../../runtime/core/reactor/observation.js';
import { on } from '../../../../runtime/on.js';
import { RecordingLogger } from './observing.js';

const ALL_VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];

/** A fake discovery answer with the traps of A-35. */
const DISCOVERY: readonly references.Resource[] = [
  references.makeResource({ group: '', version: 'v1', plural: 'pods', kind: 'Pod', shortcuts: ['po'], categories: ['all'] }),
  references.makeResource({ group: '', version: 'v1', plural: 'services', kind: 'Service', shortcuts: ['svc'], categories: ['all'] }),
  references.makeResource({ group: '', version: 'v1', plural: 'events', kind: 'Event', shortcuts: ['ev'] }),
  references.makeResource({ group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false }),
  references.makeResource({ group: 'events.k8s.io', version: 'v1', plural: 'events', kind: 'Event', shortcuts: ['ev'] }),
  references.makeResource({ group: 'metrics.k8s.io', version: 'v1beta1', plural: 'pods', kind: 'PodMetrics', verbs: ['get', 'list'] }),
  references.makeResource({
    group: 'kopf.dev',
    version: 'v1',
    plural: 'kopfexamples',
    kind: 'KopfExample',
    shortcuts: ['kopfexes', 'kopfex', 'kexes', 'kex'],
    categories: ['all'],
  }),
  references.makeResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', shortcuts: ['wd'] }),
  references.makeResource({ group: 'example.com', version: 'v2alpha1', plural: 'widgets', kind: 'Widget', shortcuts: ['wd'], preferred: false }),
  references.makeResource({ group: 'a.example', version: 'v1', plural: 'foos', kind: 'Foo' }),
  references.makeResource({ group: 'b.example', version: 'v1', plural: 'foos', kind: 'Foo' }),
  references.makeResource({ group: 'x.example', version: 'v1', plural: 'nowatches', kind: 'NoWatch', verbs: ['get', 'list', 'patch'] }),
  references.makeResource({ group: 'x.example', version: 'v1', plural: 'nopatches', kind: 'NoPatch', verbs: ['get', 'list', 'watch'] }),
  references.makeResource({
    group: 'apiextensions.k8s.io',
    version: 'v1',
    plural: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    namespaced: false,
    verbs: ALL_VERBS,
  }),
];

const names = (list: readonly references.Resource[]): string[] => list.map(references.resourceName);

function setup(register: (registry: OperatorRegistry) => void): { picture: observation.Insights; logger: RecordingLogger; warnings: string[] } {
  const registry = new OperatorRegistry();
  register(registry);
  const logger = new RecordingLogger();
  const picture = new observation.Insights({ registry, logger });
  const warnings = picture.reviseResources(DISCOVERY, null);
  return { picture, logger, warnings };
}

/** The watched resources when one on-event handler selects `ref`. */
function watchedBy(ref: Parameters<typeof on.event>[0]): string[] {
  return names(
    setup((registry) => {
      on.event(ref, { registry }, function handler() {});
    }).picture.watched,
  );
}

describe('Insights: selection of watched resources (A-35)', () => {
  it("R-RES-4 A-35 'pods' selects v1/pods although metrics.k8s.io serves pods too", () => {
    const { picture, warnings } = setup((registry) => {
      on.event('pods', { registry }, function podsHandler() {});
    });
    expect(names(picture.watched)).toEqual(['pods.v1']);
    expect(warnings).toEqual([]);
  });

  for (const ref of ['kex', 'KopfExample', 'kopfexample', 'kopfexamples.kopf.dev'] as const) {
    it(`R-RES-1 R-RES-2 A-35 '${ref}' selects the reference CRD`, () => {
      expect(watchedBy(ref)).toEqual(['kopfexamples.v1.kopf.dev']);
    });
  }

  it('R-RES-1 A-35 tuples with a group and version select the reference CRD', () => {
    expect(watchedBy(['kopf.dev', 'v1', 'kopfexamples'])).toEqual(['kopfexamples.v1.kopf.dev']);
    expect(watchedBy(['kopf.dev/v1', 'kopfexamples'])).toEqual(['kopfexamples.v1.kopf.dev']);
  });

  it('R-RES-5 A-35 a name served by two non-core groups is not watched and warns about the ambiguity', () => {
    const { picture, logger } = setup((registry) => {
      on.event('foos', { registry }, function foosHandler() {});
    });
    expect(picture.watched).toEqual([]);
    expect(logger.messages('warning')).toEqual([
      "Ambiguous resources will not be served (try specifying API groups): Selector(any_name='foos') => [foos.v1.a.example, foos.v1.b.example]",
    ]);
    expect(watchedBy(['a.example', 'foos'])).toEqual(['foos.v1.a.example']);
  });

  it('R-RES-5 an ambiguous selector does not take down an unambiguous one of another handler', () => {
    const { picture } = setup((registry) => {
      on.event('foos', { registry }, function ambiguous() {});
      on.event('kex', { registry }, function clear() {});
    });
    expect(names(picture.watched)).toEqual(['kopfexamples.v1.kopf.dev']);
  });

  it("R-RES-6 A-35 {category: 'all'} selects every resource in the category, with no ambiguity check", () => {
    const { picture, warnings } = setup((registry) => {
      on.event({ category: 'all' }, { registry }, function everyAll() {});
    });
    expect(names(picture.watched)).toEqual(['pods.v1', 'services.v1', 'kopfexamples.v1.kopf.dev']);
    expect(warnings).toEqual([]);
  });

  it("R-RES-6 A-35 EVERYTHING never selects events, ['v1', 'events'] does", () => {
    const everything = watchedBy(EVERYTHING);
    expect(everything).toContain('pods.v1');
    expect(everything).toContain('widgets.v1.example.com');
    expect(everything.filter((name) => name.startsWith('events.'))).toEqual([]);
    expect(watchedBy(['v1', 'events'])).toEqual(['events.v1']);
  });

  it('R-RES-6 a predicate never selects events, but sees non-preferred versions', () => {
    expect(watchedBy((r: references.Resource) => r.plural === 'events' || r.plural === 'widgets')).toEqual([
      'widgets.v1.example.com',
      'widgets.v2alpha1.example.com',
    ]);
  });

  it('R-RES-3 A-35 a non-preferred version is selected only when the version is given', () => {
    expect(watchedBy('widgets')).toEqual(['widgets.v1.example.com']);
    expect(watchedBy('widgets.v2alpha1.example.com')).toEqual(['widgets.v2alpha1.example.com']);
  });

  it('R-RES-9 A-35 a resource without the watch verb is skipped with a warning', () => {
    const { picture, logger } = setup((registry) => {
      on.event('nowatches', { registry }, function nw() {});
    });
    expect(picture.watched).toEqual([]);
    expect(logger.messages('warning')).toEqual(['Non-watchable resources will not be served: [nowatches.v1.x.example]']);
  });

  it('R-RES-9 a non-patchable resource is skipped for change handlers, but served for on-event and index handlers', () => {
    const changed = setup((registry) => {
      on.create('nopatches', { registry }, function created() {});
    });
    expect(changed.picture.watched).toEqual([]);
    expect(changed.logger.messages('warning')).toEqual(['Non-patchable resources will not be served: [nopatches.v1.x.example]']);
    const watchedOnly = setup((registry) => {
      on.event('nopatches', { registry }, function seen() {});
      on.index('nopatches', { registry }, function indexed() {});
    });
    expect(names(watchedOnly.picture.watched)).toEqual(['nopatches.v1.x.example']);
    expect(watchedOnly.warnings).toEqual([]);
  });

  it('R-RES-9 selectors that match nothing warn as unresolved', () => {
    const { picture, logger } = setup((registry) => {
      on.event('ghosts', { registry }, function ghosts() {});
    });
    expect(picture.watched).toEqual([]);
    expect(logger.messages('warning')).toEqual(["Unresolved resources cannot be served (try creating their CRDs): Selector(any_name='ghosts')"]);
  });

  it('R-RES-5 webhook-only selectors are not watched and not checked for ambiguity', () => {
    const { picture, warnings } = setup((registry) => {
      on.validate('foos', { registry }, function check() {});
    });
    expect(picture.watched).toEqual([]);
    expect(names(picture.webhooks)).toEqual(['foos.v1.a.example', 'foos.v1.b.example']);
    expect(warnings).toEqual([]);
  });

  it('A-35 {kind, plural} throws at registration', () => {
    const registry = new OperatorRegistry();
    expect(() => on.event({ kind: 'A', plural: 'b' }, { registry }, function twoNames() {})).toThrow(TypeError);
  });
});

describe('Insights: revisions', () => {
  it('R-RES-7 scans only the needed groups plus the framework ones, or all of them for group-less selectors', () => {
    const grouped = setup((registry) => {
      on.event(['example.com', 'widgets'], { registry }, function w() {});
    }).picture;
    expect([...grouped.groupsToScan()!].sort()).toEqual(['', 'admissionregistration.k8s.io', 'apiextensions.k8s.io', 'example.com', 'kopf.dev', 'zalando.org']);
    const loose = setup((registry) => {
      on.event('widgets', { registry }, function w() {});
    }).picture;
    expect(loose.groupsToScan()).toBeNull();
  });

  it('R-RES-8 a re-scan of one group replaces only that group, keeps identities and bumps the revision on changes', async () => {
    const { picture } = setup((registry) => {
      on.event('widgets', { registry }, function w() {});
      on.event('kex', { registry }, function k() {});
    });
    const widgets = picture.watched.find((r) => r.plural === 'widgets')!;
    const before = picture.revision;
    const changed = picture.waitForChange(before);

    picture.reviseResources(
      DISCOVERY.filter((r) => r.group === 'kopf.dev').map((r) => ({ ...r })),
      ['kopf.dev'],
    );
    expect(picture.revision).toBe(before); // same content: no change
    expect(picture.watched.find((r) => r.plural === 'widgets')).toBe(widgets);

    picture.reviseResources([], ['kopf.dev']); // the CRD is gone
    expect(names(picture.watched)).toEqual(['widgets.v1.example.com']);
    expect(picture.revision).toBe(before + 1);
    await expect(changed).resolves.toBe(before + 1);
  });

  it('R-RES-9 warnings are logged again only when they change', () => {
    const { picture, logger } = setup((registry) => {
      on.event('ghosts', { registry }, function ghosts() {});
    });
    picture.reviseResources([], ['example.com']);
    expect(logger.messages('warning')).toHaveLength(1);
    picture.reviseResources([references.makeResource({ group: 'g.example', version: 'v1', plural: 'ghosts' })], ['g.example']);
    expect(names(picture.watched)).toEqual(['ghosts.v1.g.example']);
    picture.reviseResources([], ['g.example']);
    expect(logger.messages('warning')).toHaveLength(2);
  });

  it('keeps the framework resources in the backbone', () => {
    const { picture } = setup(() => undefined);
    expect(picture.backbone('crds')?.plural).toBe('customresourcedefinitions');
    expect(picture.backbone('namespaces')?.group).toBe('');
    expect(picture.backbone('clusterKopfPeerings')).toBeUndefined();
  });

  it('R-RES-8 waits for framework resources to appear in the backbone, e.g. a peering CRD created at run time', async () => {
    const { picture } = setup(() => undefined);
    expect((await picture.waitForBackbone(['clusterKopfPeerings', 'crds'])).plural).toBe('customresourcedefinitions');
    const waiting = picture.waitForBackbone(['clusterKopfPeerings', 'clusterZalandoPeerings']);
    const aborted = new AbortController();
    const cancelled = picture.waitForBackbone(['namespacedKopfPeerings'], aborted.signal);
    picture.reviseResources([references.makeResource({ group: 'kopf.dev', version: 'v1', plural: 'kopfexamples', kind: 'KopfExample' })], ['kopf.dev']);
    aborted.abort(new Error('stopped'));
    await expect(cancelled).rejects.toThrow('stopped');
    picture.reviseResources(
      [references.makeResource({ group: 'zalando.org', version: 'v1', plural: 'clusterkopfpeerings', kind: 'ClusterKopfPeering', namespaced: false })],
      ['zalando.org'],
    );
    expect(references.resourceName(await waiting)).toBe('clusterkopfpeerings.v1.zalando.org');
  });

  it('R-SCOPE-3 namespace changes bump the revision only when the set changes', async () => {
    const { picture } = setup(() => undefined);
    const start = picture.revision;
    picture.setNamespaces(['a', 'b']);
    picture.setNamespaces(['b', 'a']);
    picture.addNamespace('a');
    expect(picture.revision).toBe(start + 1);
    picture.addNamespace('c');
    picture.removeNamespace('x');
    picture.removeNamespace('a');
    expect([...picture.namespaces].sort()).toEqual(['b', 'c']);
    expect(picture.revision).toBe(start + 3);
    const controller = new AbortController();
    const waiting = picture.waitForChange(picture.revision, controller.signal);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
  });

  it('is ready only when both resources and namespaces are', () => {
    const { picture } = setup(() => undefined);
    picture.readyResources.turnOn();
    expect(picture.ready.isOn()).toBe(false);
    picture.readyNamespaces.turnOn();
    expect(picture.ready.isOn()).toBe(true);
  });
});
