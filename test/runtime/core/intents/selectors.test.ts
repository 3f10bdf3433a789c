import { describe, expect, it } from 'vitest';
import { makeResource, resourceName, type Resource } from '../../../../runtime/cogs/structs/references.js';
import { resource } from '../../../../runtime/cogs/structs/resources.js';
import * as selectors from '../../../../runtime/core/intents/selectors.js';
import { EVERYTHING, parseSelector, reviseResources } from '../../../../runtime/core/intents/selectors.js';

const READ_ONLY = ['get', 'list', 'watch'];
// A fake discovery list.
const discovered: Resource[] = [
  makeResource({ group: '', version: 'v1', plural: 'pods', kind: 'Pod', shortcuts: ['po'], categories: ['all'] }),
  makeResource({ group: '', version: 'v1', plural: 'events', kind: 'Event', shortcuts: ['ev'] }),
  makeResource({ group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', shortcuts: ['cm'] }),
  makeResource({ group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false }),
  makeResource({ group: 'metrics.k8s.io', version: 'v1beta1', plural: 'pods', kind: 'PodMetrics', verbs: READ_ONLY }),
  makeResource({ group: 'events.k8s.io', version: 'v1', plural: 'events', kind: 'Event' }),
  makeResource({ group: 'kopf.dev', version: 'v1', plural: 'kopfexamples', kind: 'KopfExample', shortcuts: ['kex'], categories: ['kopf'] }),
  makeResource({ group: 'kopf.dev', version: 'v1beta1', plural: 'kopfexamples', kind: 'KopfExample', shortcuts: ['kex'], preferred: false }),
  makeResource({ group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', categories: ['all'] }),
  makeResource({ group: 'one.example', version: 'v1', plural: 'widgets', kind: 'Widget' }),
  makeResource({ group: 'two.example', version: 'v1', plural: 'widgets', kind: 'Widget' }),
  makeResource({ group: 'example.com', version: 'v1', plural: 'unwatchables', kind: 'Unwatchable', verbs: ['get', 'list'] }),
  makeResource({ group: 'example.com', version: 'v1', plural: 'unpatchables', kind: 'Unpatchable', verbs: READ_ONLY }),
];

const select = (ref: selectors.ResourceRef): string[] => parseSelector(ref).select(discovered).map(resourceName).sort();

describe('parseSelector', () => {
  it.each<[string, selectors.ResourceRef, Partial<Record<'group' | 'version' | 'anyName', unknown>>]>([
    ['a bare name', 'kopfexamples', { group: null, version: null, anyName: 'kopfexamples' }],
    ['a name with a group', 'kopfexamples.kopf.dev', { group: 'kopf.dev', version: null, anyName: 'kopfexamples' }],
    ['a name with a version and a group', 'kopfexamples.v1.kopf.dev', { group: 'kopf.dev', version: 'v1', anyName: 'kopfexamples' }],
    ['a name with a beta version', 'kopfexamples.v2beta1.kopf.dev', { group: 'kopf.dev', version: 'v2beta1', anyName: 'kopfexamples' }],
    ['a name with a version only', 'pods.v1', { group: null, version: 'v1', anyName: 'pods' }],
    ['a group/version tuple', ['kopf.dev/v1', 'kopfexamples'], { group: 'kopf.dev', version: 'v1', anyName: 'kopfexamples' }],
    ['a core version tuple', ['v1', 'pods'], { group: '', version: 'v1', anyName: 'pods' }],
    ['a group tuple', ['kopf.dev', 'kopfexamples'], { group: 'kopf.dev', version: null, anyName: 'kopfexamples' }],
    ['a triple', ['kopf.dev', 'v1', 'kopfexamples'], { group: 'kopf.dev', version: 'v1', anyName: 'kopfexamples' }],
    ['EVERYTHING', EVERYTHING, { group: null, version: null, anyName: EVERYTHING }],
    ['EVERYTHING in a group', ['kopf.dev', EVERYTHING], { group: 'kopf.dev', version: null, anyName: EVERYTHING }],
    ['EVERYTHING in a group version', ['kopf.dev', 'v1', EVERYTHING], { group: 'kopf.dev', version: 'v1', anyName: EVERYTHING }],
  ])('R-RES-1 parses %s', (_title, ref, expected) => {
    expect(parseSelector(ref)).toMatchObject(expected);
  });

  it('R-RES-1 parses a descriptor as its group, version and plural', () => {
    const Widgets = resource({ group: 'one.example', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });
    expect(parseSelector(Widgets)).toMatchObject({ group: 'one.example', version: 'v1', plural: 'widgets', anyName: null, kind: null });
    expect(parseSelector(Widgets).select(discovered).map(resourceName)).toEqual(['widgets.v1.one.example']);
  });

  it.each<[string, unknown]>([
    ['more than three positional parts', ['a', 'b', 'c', 'd']],
    ['two names in an object selector (A-35)', { kind: 'A', plural: 'b' }],
    ['no name in an object selector', { group: 'kopf.dev' }],
    ['an empty name', ''],
    ['an empty name in a tuple', ['kopf.dev', '']],
    ['an empty kind', { kind: '' }],
    ['an unknown selector key', { plurals: 'x' }],
    ['an empty tuple', []],
    ['a number', 42],
  ])('R-RES-2 rejects %s with a TypeError', (_title, ref) => {
    expect(() => parseSelector(ref as selectors.ResourceRef)).toThrow(TypeError);
  });
});

describe('Selector.select', () => {
  it.each<[string, selectors.ResourceRef, string[]]>([
    ['core priority for pods (R-RES-4)', 'pods', ['pods.v1']],
    ['the short name', 'kex', ['kopfexamples.v1.kopf.dev']],
    ['the kind', 'KopfExample', ['kopfexamples.v1.kopf.dev']],
    ['the singular', 'kopfexample', ['kopfexamples.v1.kopf.dev']],
    ['the plural with a group', 'kopfexamples.kopf.dev', ['kopfexamples.v1.kopf.dev']],
    ['a triple', ['kopf.dev', 'v1', 'kopfexamples'], ['kopfexamples.v1.kopf.dev']],
    ['a group/version tuple', ['kopf.dev/v1', 'kopfexamples'], ['kopfexamples.v1.kopf.dev']],
    ['a non-preferred version only when given (R-RES-3)', ['kopf.dev', 'v1beta1', 'kopfexamples'], ['kopfexamples.v1beta1.kopf.dev']],
    ['the non-core pods by group', 'pods.metrics.k8s.io', ['pods.v1beta1.metrics.k8s.io']],
    ['both widgets for an ambiguous name', 'widgets', ['widgets.v1.one.example', 'widgets.v1.two.example']],
    ['a category (R-RES-6)', { category: 'all' }, ['deployments.v1.apps', 'pods.v1']],
    ['core events when named explicitly', ['v1', 'events'], ['events.v1']],
    ['an explicit kind only by kind', { kind: 'kopfexamples' }, []],
    ['an explicit plural', { plural: 'kopfexamples', version: 'v1beta1' }, ['kopfexamples.v1beta1.kopf.dev']],
    ['an explicit short name', { shortcut: 'cm' }, ['configmaps.v1']],
    ['EVERYTHING in a group (preferred versions only)', ['kopf.dev', EVERYTHING], ['kopfexamples.v1.kopf.dev']],
    ['nothing for an unknown name', 'gadgets', []],
  ])('A-35 selects %s', (_title, ref, expected) => {
    expect(select(ref)).toEqual(expected);
  });

  it('R-RES-6 EVERYTHING never selects v1/events nor events.k8s.io/events', () => {
    const selected = select(EVERYTHING);
    expect(selected).not.toContain('events.v1');
    expect(selected).not.toContain('events.v1.events.k8s.io');
    expect(selected).toContain('pods.v1');
    expect(selected).toContain('pods.v1beta1.metrics.k8s.io');
    expect(selected).not.toContain('kopfexamples.v1beta1.kopf.dev');
  });

  it('R-RES-6 predicates see every version but never events', () => {
    expect(select((r) => r.plural === 'kopfexamples')).toEqual(['kopfexamples.v1.kopf.dev', 'kopfexamples.v1beta1.kopf.dev']);
    expect(select((r) => r.kind === 'Event')).toEqual([]);
  });

  it('R-RES-4 only specific selectors are specific', () => {
    expect(parseSelector('pods').isSpecific).toBe(true);
    expect(parseSelector({ kind: 'Pod' }).isSpecific).toBe(true);
    expect(parseSelector({ category: 'all' }).isSpecific).toBe(false);
    expect(parseSelector(EVERYTHING).isSpecific).toBe(false);
    expect(parseSelector(() => true).isSpecific).toBe(false);
  });
});

describe('reviseResources', () => {
  const sel = (...refs: selectors.ResourceRef[]): selectors.Selector[] => refs.map(parseSelector);

  it('R-RES-5 an ambiguous specific selector is not served and warned about (A-35)', () => {
    const widgets = sel('widgets');
    const result = reviseResources({ watched: widgets, patched: widgets }, discovered);
    expect(result.watched).toEqual([]);
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]).toMatch(/^Ambiguous resources will not be served \(try specifying API groups\): Selector\(any_name='widgets'\) => /);
    expect(result.warnings[0]).toContain('widgets.v1.one.example');
  });

  it('R-RES-5 index-only and webhook-only selectors are exempt from the ambiguity check', () => {
    const result = reviseResources({ watched: [], patched: [], indexed: sel('widgets'), webhooks: sel('widgets') }, discovered);
    expect(result.watched.map(resourceName)).toEqual(['widgets.v1.one.example', 'widgets.v1.two.example']);
    expect(result.webhooks).toHaveLength(2);
    expect(result.warnings).toEqual([]);
  });

  it('R-RES-4 core pods are served without ambiguity', () => {
    const result = reviseResources({ watched: sel('pods'), patched: sel('pods') }, discovered);
    expect(result.watched.map(resourceName)).toEqual(['pods.v1']);
    expect(result.warnings).toEqual([]);
  });

  it('R-RES-9 resources without the watch verb are skipped with a warning (A-35)', () => {
    const result = reviseResources({ watched: sel('unwatchables'), patched: [] }, discovered);
    expect(result.watched).toEqual([]);
    expect(result.warnings).toEqual(['Non-watchable resources will not be served: [unwatchables.v1.example.com]']);
  });

  it('R-RES-9 non-patchable resources are dropped only if a patching handler selects them', () => {
    const watchedOnly = reviseResources({ watched: sel('unpatchables'), patched: [] }, discovered);
    expect(watchedOnly.watched.map(resourceName)).toEqual(['unpatchables.v1.example.com']);
    const patched = reviseResources({ watched: sel('unpatchables'), patched: sel('unpatchables') }, discovered);
    expect(patched.watched).toEqual([]);
    expect(patched.warnings).toEqual(['Non-patchable resources will not be served: [unpatchables.v1.example.com]']);
  });

  it('R-RES-9 selectors matching nothing are warned about', () => {
    const result = reviseResources({ watched: sel('gadgets', 'kex'), patched: [] }, discovered);
    expect(result.watched.map(resourceName)).toEqual(['kopfexamples.v1.kopf.dev']);
    expect(result.warnings).toEqual(["Unresolved resources cannot be served (try creating their CRDs): Selector(any_name='gadgets')"]);
  });

  it('sends the warnings to the logger too', () => {
    const lines: string[] = [];
    const logger = {
      debug() {},
      info() {},
      error() {},
      critical() {},
      warning: (m: string) => {
        lines.push(m);
      },
    };
    reviseResources({ watched: sel('widgets'), patched: [] }, discovered, logger);
    expect(lines).toHaveLength(1);
  });
});

describe('groupsToScan', () => {
  it('R-RES-7 scans the named groups plus the framework groups, or all if a selector has no group', () => {
    expect([...selectors.groupsToScan(parseSelectorList(['kopf.dev', 'v1', 'kopfexamples'], ['apps', 'deployments']))!].sort()).toEqual([
      '',
      'admissionregistration.k8s.io',
      'apiextensions.k8s.io',
      'apps',
      'kopf.dev',
      'zalando.org',
    ]);
    expect(selectors.groupsToScan(parseSelectorList('pods'))).toBeNull();
  });
});

function parseSelectorList(...refs: selectors.ResourceRef[]): selectors.Selector[] {
  return refs.map(parseSelector);
}

describe('uniqueSelectors', () => {
  it('R-RES-5 counts equal references once, so an ambiguous one warns once', () => {
    const isKopf = (r: Resource): boolean => r.group === 'kopf.dev';
    const list = [parseSelector('widgets'), parseSelector('widgets'), parseSelector(isKopf), parseSelector(isKopf), parseSelector(() => true)];
    expect(selectors.uniqueSelectors(list)).toHaveLength(3);
    expect(reviseResources({ watched: list.slice(0, 2), patched: [] }, discovered).warnings).toHaveLength(1);
  });
});
