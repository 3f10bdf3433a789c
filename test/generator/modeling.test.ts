import { describe, expect, it } from 'vitest';
import * as loading from '../../generator/loading.js';
import * as modeling from '../../generator/modeling.js';
import * as support from './support.js';

function model(...sources: Parameters<typeof loading.loadCrdSources>[0]): modeling.GeneratorModel {
  return modeling.buildModel(loading.loadCrdSources(sources).crds);
}

describe('buildModel', () => {
  it('models each served version with names, scope and subresources; skips the others with a note', () => {
    const { crds, notes } = model(support.fixture('gadgets.yaml'));
    const [gadget] = crds;
    expect(gadget!.versions.map((version) => version.version)).toEqual(['v1', 'v1beta1']);
    const [v1, v1beta1] = gadget!.versions;
    expect(v1).toMatchObject({
      group: 'example.com',
      kind: 'Gadget',
      plural: 'gadgets',
      singular: 'gadget',
      listKind: 'GadgetList',
      shortNames: ['gd'],
      categories: ['toys'],
      scope: 'Cluster',
      namespaced: false,
      statusSubresource: true,
      storage: true,
      deprecated: false,
      names: {
        body: 'Gadget',
        input: 'GadgetInput',
        spec: 'GadgetSpec',
        status: 'GadgetStatus',
        patch: 'GadgetPatch',
        view: 'GadgetPatchView',
        list: 'GadgetList',
        descriptor: 'Gadgets',
      },
    });
    expect(v1beta1).toMatchObject({ statusSubresource: false, storage: false, deprecated: true });
    expect(notes).toEqual(['fixtures/gadgets.yaml, document 0: skipped version v1alpha1 of Gadget (not served)']);
  });

  it('names nested object types after kind and path, breadth-first, collisions suffixed in a stable order', () => {
    const [oddity] = model(support.fixture('oddities.yaml')).crds;
    const names = oddity!.versions[0]!.nestedTypes.map((type) => [type.path, type.name]);
    expect(names).toEqual([
      ['patch', 'OddityPatch2'],
      ['list', 'OddityList2'],
      ['spec["rbd-mirror"]', 'OdditySpecRbdMirror'],
      ['spec.properties', 'OdditySpecProperties'],
      ['spec.fooBar', 'OdditySpecFooBar'],
      ['spec.foo', 'OdditySpecFoo'],
      ['spec.tls', 'OdditySpecTls'],
      ['spec.level1', 'OdditySpecLevel1'],
      ['spec.foo.bar', 'OdditySpecFooBar2'],
      ['spec.tls.tlsConfig', 'OdditySpecTlsConfig'],
      ['spec.level1.level2', 'OdditySpecLevel1Level2'],
      ['spec.level1.level2.level3', 'OdditySpecLevel1Level2Level3'],
      ['spec.level1.level2.level3.level4', 'OdditySpecLevel1Level2Level3Level4'],
      ['spec.level1.level2.level3.level4.level5', 'OdditySpecLevel1Level2Level3Level4Level5'],
      ['spec.level1.level2.level3.level4.level5.level6', 'OdditySpecLevel1Level2Level3Level4Level5Level6'],
      ['spec.level1.level2.level3.level4.level5.level6.level7', 'OdditySpecLevel1Level2Level3Level4Level5Level6Level7'],
      ['spec.level1.level2.level3.level4.level5.level6.level7.level8', 'OdditySpecLevel1Level2Level3Level4Level5Level6Level7Level8'],
    ]);
  });

  it('names array items and map values after the property that holds them', () => {
    const spec = {
      type: 'object',
      properties: {
        ports: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
        servers: { type: 'object', additionalProperties: { type: 'object', properties: { url: { type: 'string' } } } },
      },
    };
    const [widget] = model(support.source([support.crd(spec)])).crds;
    expect(widget!.versions[0]!.nestedTypes.map((type) => [type.path, type.name])).toEqual([
      ['spec.ports[]', 'WidgetSpecPorts'],
      ['spec.servers{}', 'WidgetSpecServers'],
    ]);
  });

  it('gives an input twin to each named type with a default or an embedded resource below it, and to no other', () => {
    const [writable] = model(support.fixture('writables.yaml')).crds;
    const version = writable!.versions[0]!;
    expect(version.nestedTypes.map((type) => type.name)).toEqual([
      'WritableSpecAffinity',
      'WritableSpecOwner',
      'WritableSpecService',
      'WritableSpecDeep',
      'WritableSpecPlain',
      'WritableSpecListeners',
      'WritableSpecRoutes',
      'WritableSpecServiceSpec',
      'WritableSpecDeepLevel1',
      'WritableSpecListenersTls',
      'WritableSpecDeepLevel1Level2',
    ]);
    expect(version.inputTypes.map((type) => [type.path, type.name])).toEqual([
      ['spec', 'WritableSpecInput'],
      ['status', 'WritableStatusInput'],
      ['spec.service', 'WritableSpecServiceInput'],
      ['spec.deep', 'WritableSpecDeepInput'],
      ['spec.listeners[]', 'WritableSpecListenersInput'],
      ['spec.routes{}', 'WritableSpecRoutesInput'],
      ['spec.deep.level1', 'WritableSpecDeepLevel1Input'],
      ['spec.listeners[].tls', 'WritableSpecListenersTlsInput'],
      ['spec.deep.level1.level2', 'WritableSpecDeepLevel1Level2Input'],
    ]);
    const plain = version.nestedTypes.find((type) => type.name === 'WritableSpecPlain')!;
    expect(version.inputTypeNames.get(plain.schema)).toBe('WritableSpecPlain');
  });

  it('makes kinds that TypeScript cannot declare into names it can', () => {
    expect(modeling.reservedNames('string', 'strings')).toMatchObject({ body: 'string_', input: 'stringInput', spec: 'stringSpec', descriptor: 'strings' });
    expect(modeling.reservedNames('typ', 'typeof')).toMatchObject({ body: 'typ', descriptor: 'typeof_' });
  });

  it('is deterministic: the same input gives the same names', () => {
    const first = model(support.fixture('oddities.yaml')).crds[0]!.versions[0]!.nestedTypes.map((type) => type.name);
    const second = model(support.fixture('oddities.yaml')).crds[0]!.versions[0]!.nestedTypes.map((type) => type.name);
    expect(second).toEqual(first);
  });

  it('sanitises kinds into identifiers for the reserved names', () => {
    expect(modeling.reservedNames('Widget', 'widgets')).toEqual({
      body: 'Widget',
      input: 'WidgetInput',
      spec: 'WidgetSpec',
      status: 'WidgetStatus',
      patch: 'WidgetPatch',
      view: 'WidgetPatchView',
      list: 'WidgetList',
      descriptor: 'Widgets',
    });
  });
});
