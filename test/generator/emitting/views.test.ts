/**
 * Patch views: handlers of a generated kind write through `patch` with merge-patch rules.
 *
 * One program compiles the module emitted from the `bundles.yaml` fixture (one property per rule)
 * with the real TypeScript checker, next to one file per rule that writes through the `patch` of a
 * real handler registration; `@ts-expect-error` lines prove what must not compile. Each test asserts
 * that its own file has no diagnostics (an unused `@ts-expect-error` is one). Then the emitter's
 * own choices: which views exist and how they are named, and the generated copy of the fixture's
 * module in fixtures/generated/ that the runtime tests register handlers with.
 */
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import * as views from '../../../generator/emitting/views.js';
import * as patches from '../../../runtime/cogs/structs/patches.js';
import * as support from '../support.js';

const HEAD = `import { on } from 'kopf-gen/runtime';
import { Bundles } from './bundles.example.com.v1.js';
`;

/** One file per rule; each registers a handler and writes through its `patch`. */
const RULES: Record<string, string> = {
  'null-removes': `${HEAD}
on.update(Bundles, async function removing({ patch }) {
  patch.spec.affinity = null; // an optional object
  patch.spec.labels = null; // a map
  patch.spec.values = null; // an open object
  patch.spec.template = null; // an embedded resource
  patch.spec.job = null; // an embedded resource with declared properties
  patch.spec.selector = null; // required, but nullable
  patch.spec.replicas = null; // required, but defaulted: the default comes back
  patch.status = null;
});
`,
  'null-refused': `${HEAD}
on.update(Bundles, async function refusing({ patch }) {
  // @ts-expect-error required and not nullable: merge patch must not remove it
  patch.spec.owner = null;
  // @ts-expect-error a required object
  patch.spec.placement = null;
  // @ts-expect-error the spec is required by the schema
  patch.spec = null;
  // @ts-expect-error the API version is never removed
  patch.apiVersion = null;
  // @ts-expect-error nor the kind
  patch.kind = null;
  // @ts-expect-error an embedded resource keeps its apiVersion
  patch.spec.job.apiVersion = null;
  patch.spec.owner = 'someone';
  patch.apiVersion = 'example.com/v1';
});
`,
  partial: `${HEAD}
on.update(Bundles, async function partially({ patch }) {
  patch.spec.affinity = { enablePodAntiAffinity: true };
  patch.spec.placement = {};
  patch.spec = { note: 'x' };
  patch.spec.job = { spec: { image: 'nginx' } };
  patch.spec.servers = { main: { url: 'http://x' }, old: null };
  // @ts-expect-error partial values keep their types
  patch.spec.affinity = { enablePodAntiAffinity: 'yes' };
});
`,
  nested: `${HEAD}
on.update(Bundles, async function nestedly({ patch }) {
  patch.spec.a.b.c = 1;
  patch.spec.affinity.weight = 3;
  patch.spec.job.spec.image = 'nginx';
  patch.spec.template.kind = 'Pod';
  patch.spec.template['spec'] = { containers: [] };
  patch.status.phase = 'Ready';
  patch.metadata.labels['app'] = null;
  // @ts-expect-error unknown fields of a closed object
  patch.spec.a.b.d = 1;
});
`,
  lists: `${HEAD}
on.update(Bundles, async function wholeLists({ patch }) {
  patch.spec.tags = ['a', 'b'];
  patch.spec.tags = null;
  patch.spec.listeners = [{ name: 'http', port: 80, protocol: 'TCP' }];
  patch.status.conditions = [{ type: 'Ready', status: 'True' }];
  // @ts-expect-error items are whole objects: a required field is missing
  patch.spec.listeners = [{ name: 'http' }];
  // @ts-expect-error items keep their types
  patch.spec.tags = [1];
});
`,
  'lists-defaulted': `${HEAD}
on.update(Bundles, async function defaultedItems({ patch }) {
  patch.spec.listeners = [{ name: 'http', port: 80 }]; // the server fills in the protocol
});
`,
  'no-index-writes': `${HEAD}
on.update(Bundles, async function indexing({ patch }) {
  // @ts-expect-error a never-written list is not there to write into
  patch.spec.listeners[0].name = 'x';
  // @ts-expect-error nor after asserting that it is: what reading gives is read-only
  patch.spec.listeners![0]!.name = 'x';
  // @ts-expect-error no element assignment
  patch.spec.tags![0] = 'x';
  // @ts-expect-error no appending
  patch.spec.tags?.push('x');
  const written = patch.spec.tags;
  return written?.length;
});
`,
  scalars: `${HEAD}
on.update(Bundles, async function scalarly({ patch }) {
  patch.spec.note = null; // optional
  patch.spec.replicas = null; // defaulted: the server defaults it again
  patch.spec.replicas = 3;
  // @ts-expect-error scalars keep their types
  patch.spec.replicas = 'three';
  // @ts-expect-error enums are literal unions
  patch.spec.affinity.weight = '1';
  const replicas: number | null | undefined = patch.spec.replicas;
  return replicas;
});
`,
  maps: `${HEAD}
on.update(Bundles, async function mapping({ patch }) {
  patch.spec.labels['app'] = 'web';
  patch.spec.labels['gone'] = null;
  patch.spec.servers['main'].url = 'http://x';
  patch.spec.servers['main'].weight = null;
  // @ts-expect-error entries of maps of objects are removed with setAt() or by assigning the whole map
  patch.spec.servers['old'] = null;
  patch.setAt(['spec', 'servers', 'old'], null);
  // @ts-expect-error map values keep their types
  patch.spec.labels['app'] = 1;
});
`,
  threading: `${HEAD}
import type { BundlePatchView } from './bundles.example.com.v1.js';
on.create(Bundles, async function parent({ patch, subhandler }) {
  const view: BundlePatchView = patch;
  patch.spec.note = 'x';
  patch.fns.push(() => undefined);
  subhandler({ id: 'child' }, async ({ patch: child }) => {
    child.spec.affinity = null;
  });
  return view.spec.note;
});
on.daemon(Bundles, async function watcher({ patch }) {
  patch.spec.template = null;
});
on.event(Bundles, async function observed({ patch }) {
  patch.status.phase = null;
});
`,
};

let diagnostics: string[] = [];

describe('patch views of a generated kind (type-checked with the real checker)', () => {
  beforeAll(() => {
    const { modules } = support.generate([support.fixture('bundles.yaml')]);
    const files = Object.entries(RULES).map(([name, text]) => ({ fileName: `${name}.ts`, text }));
    diagnostics = support.typecheck([...modules, ...files]);
  }, 120_000);

  const of = (rule: string): string[] => diagnostics.filter((line) => line.startsWith(`${rule}.ts:`));

  it('compiles the emitted module itself without diagnostics', () => {
    expect(diagnostics.filter((line) => !Object.keys(RULES).some((rule) => line.startsWith(`${rule}.ts:`)))).toEqual([]);
  });

  it('R-PATCH-1 null removes an optional object, a map, an open object and embedded resources', () => {
    expect(of('null-removes')).toEqual([]);
  });

  it('R-PATCH-1 null is refused for required non-nullable properties, apiVersion and kind', () => {
    expect(of('null-refused')).toEqual([]);
  });

  it('R-PATCH-1 nested objects may be assigned partially', () => {
    expect(of('partial')).toEqual([]);
  });

  it('R-PATCH-1 reading an object property gives its view to write into (patch.spec.a.b.c = 1)', () => {
    expect(of('nested')).toEqual([]);
  });

  it('R-PATCH-1 lists are assigned whole, with whole items', () => {
    expect(of('lists')).toEqual([]);
  });

  it('R-PATCH-1 list items may leave out defaulted fields', () => {
    expect(of('lists-defaulted')).toEqual([]);
  });

  it('R-PATCH-1 no index writes into lists through the view', () => {
    expect(of('no-index-writes')).toEqual([]);
  });

  it('R-PATCH-1 scalars accept null where removable and keep their types', () => {
    expect(of('scalars')).toEqual([]);
  });

  it('R-PATCH-1 maps: scalar entries take null, object entries are views', () => {
    expect(of('maps')).toEqual([]);
  });

  it('R-PATCH-1 every handler kind and sub-handlers get the view, with the accumulator methods', () => {
    expect(of('threading')).toEqual([]);
  });
});

describe('emitting patch views', () => {
  it('leaves out the top-level names of the accumulator, and knows all of them', () => {
    const patch = new patches.PatchBase();
    const members = new Set([...Object.getOwnPropertyNames(Object.getPrototypeOf(patch)), ...Reflect.ownKeys(patch).filter((key) => typeof key === 'string')]);
    members.delete('constructor');
    members.delete('spec');
    members.delete('status');
    expect([...members].sort()).toEqual([...views.ACCUMULATOR_MEMBERS].sort());
    const module = support.emitSpec(
      { type: 'object', properties: { size: { type: 'integer' } } },
      {
        root: { type: 'object', properties: { spec: { type: 'object' }, fns: { type: 'string' }, data: { type: 'string' } } },
      },
    );
    const root = support.declarationOf(module.text, 'WidgetPatchView');
    expect(root).toContain('  get data(): string | null | undefined;');
    expect(root).not.toContain('fns');
  });

  it('declares views only for object types reached through properties and maps, not list items', () => {
    const module = support.emitSpec({
      type: 'object',
      properties: {
        owner: { type: 'object', properties: { name: { type: 'string' } } },
        parts: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
      },
    });
    expect(module.text).toContain('export interface WidgetSpecOwnerPatchView {');
    expect(module.text).not.toContain('WidgetSpecPartsPatchView');
    expect(support.declarationOf(module.text, 'WidgetSpecPatchView')).toContain('  set parts(value: WidgetSpecParts[] | null);');
  });

  it('properties the runtime view answers itself (toJSON, toString, constructor, then) are written, never read into', () => {
    // What the runtime's views do with these names, whatever the patch holds.
    const patch = new patches.Patch();
    patch.setAt(['spec', 'then'], 'x');
    const spec = (patch as unknown as { spec: Record<string, unknown> }).spec;
    expect(views.VIEW_OWN_MEMBERS.map((name) => typeof spec[name])).toEqual(['function', 'function', 'function', 'undefined']);
    expect(typeof spec['other']).toBe('object');

    const module = support.emitSpec({
      type: 'object',
      properties: {
        constructor: { type: 'object', properties: { a: { type: 'string' } } },
        // biome-ignore lint/suspicious/noThenProperty: a schema property named `then` is what this test is about
        then: { type: 'string' },
        toString: { type: 'integer' },
        toJSON: { type: 'array', items: { type: 'string' } },
      },
    });
    const use = [
      "import type { WidgetSpecPatchView } from './widgets.example.com.v1.js';",
      'export function write(spec: WidgetSpecPatchView): void {',
      "  spec.constructor = { a: 'x' };",
      '  spec.constructor = null;',
      "  spec.then = 'later';",
      '  spec.toString = 1;',
      "  spec.toJSON = ['a'];",
      "  // @ts-expect-error reading gives the runtime view's own member, not a view to write into",
      "  spec.constructor.a = 'x';",
      '}',
    ].join('\n');
    expect(support.typecheck([module, { fileName: 'use.ts', text: use }])).toEqual([]);
    expect(module.text).not.toContain('WidgetSpecConstructorPatchView');
  });

  it('names views through the module registry: a schema type of the same name keeps its name', () => {
    const module = support.emitSpec({ type: 'object', properties: { patchView: { type: 'object', properties: { a: { type: 'string' } } } } });
    expect(module.text).toContain('export interface WidgetSpecPatchView {');
    expect(module.text).toContain('export interface WidgetSpecPatchView2 {');
    expect(support.declarationOf(module.text, 'WidgetSpecPatchView2')).toContain('  get patchView(): WidgetSpecPatchViewPatchView;');
    expect(support.typecheck([module])).toEqual([]);
  });

  it('keeps the generated copy the runtime tests write through current (update with vitest -u)', async () => {
    const [module] = support.generate([support.fixture('bundles.yaml')]).modules;
    await expect(module!.text).toMatchFileSnapshot(path.join(support.REPO_ROOT, 'fixtures/generated', module!.fileName));
  });

  it('the descriptor carries the view as its third type argument', () => {
    const module = support.emitSpec({ type: 'object', properties: { size: { type: 'integer' } } });
    expect(module.text).toContain('export const Widgets = $kopf.resource<Widget, WidgetInput, WidgetPatchView, true>({');
  });

  it('R-TYPES-301: the descriptor carries the scope as its fourth type argument', () => {
    const spec = { type: 'object', properties: { size: { type: 'integer' } } };
    expect(support.emitSpec(spec).text).toMatch(/\$kopf\.resource<Widget, WidgetInput, WidgetPatchView, true>\(\{[^}]*namespaced: true,/);
    expect(support.emitSpec(spec, { scope: 'Cluster' }).text).toMatch(
      /\$kopf\.resource<Widget, WidgetInput, WidgetPatchView, false>\(\{[^}]*namespaced: false,/,
    );
  });
});
