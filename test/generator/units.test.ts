/**
 * The pure helpers behind init/generate: field manifests and change summaries, the status-pruning
 * check, handler detection, sample objects, input file naming, namespace names and scope flags.
 */
import { describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import * as detecting from '../../generator/detecting.js';
import * as fields from '../../generator/fields.js';
import * as inputs from '../../generator/inputs.js';
import * as loading from '../../generator/loading.js';
import * as projects from '../../generator/projects.js';
import * as pruning from '../../generator/pruning.js';
import * as samples from '../../generator/samples.js';
import * as scaffolding from '../../generator/scaffolding.js';
import * as support from './support.js';

function versionOf(root: Record<string, unknown>): ReturnType<typeof support.generate>['model']['crds'][number]['versions'][number] {
  return support.generate([support.source([support.crd(undefined, { root })])]).model.crds[0]!.versions[0]!;
}

describe('fields', () => {
  it.each([
    [{ type: 'integer' }, 'integer'],
    [{ type: 'string', enum: ['a', 'b'] }, '"a" | "b"'],
    [{ 'x-kubernetes-int-or-string': true }, 'int-or-string'],
    [{ type: 'object', additionalProperties: { type: 'string' } }, 'map'],
    [{ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, 'object (open)'],
    [{ type: 'string', nullable: true }, 'string | null'],
    [{ 'x-kubernetes-preserve-unknown-fields': true }, 'unknown'],
  ])('summarises %j as %s', (schema, summary) => {
    expect(fields.typeSummary(schema)).toBe(summary);
  });

  it('lists nested fields with their presence: required, optional (`?`) or defaulted (`=`)', () => {
    const root = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          required: ['a'],
          properties: {
            a: { type: 'string' },
            b: { type: 'integer', default: 1 },
            c: { type: 'array', items: { type: 'object', properties: { d: { type: 'boolean' } } } },
          },
        },
      },
    };
    expect(fields.fieldsOf(root)).toEqual({
      spec: 'object?',
      'spec.a': 'string',
      'spec.b': 'integer=',
      'spec.c': 'array?',
      'spec.c[]': 'object',
      'spec.c[].d': 'boolean?',
    });
  });

  it('compares manifests: kinds, versions and fields added, removed or changed', () => {
    const entry = (crdName: string, version: string, map: Record<string, string>): fields.VersionFields => ({ crdName, kind: 'W', version, fields: map });
    const previous: fields.Manifest = {
      generatorVersion: '1',
      versions: {
        'ws.x/v1': entry('ws.x', 'v1', { 'spec.a': 'string?', 'spec.b': 'integer', 'spec.c': 'string' }),
        'ws.x/v1beta1': entry('ws.x', 'v1beta1', {}),
        'gone.x/v1': entry('gone.x', 'v1', {}),
      },
    };
    const next: fields.Manifest = {
      generatorVersion: '1',
      versions: {
        'ws.x/v1': entry('ws.x', 'v1', { 'spec.a': 'string', 'spec.b': 'string', 'spec.d': 'boolean?' }),
        'ws.x/v2': entry('ws.x', 'v2', {}),
        'new.x/v1': entry('new.x', 'v1', {}),
      },
    };
    const summary = fields.compare(previous, next);
    expect(summary).toMatchObject({ kindsAdded: ['new.x'], kindsRemoved: ['gone.x'], versionsAdded: ['ws.x/v2'], versionsRemoved: ['ws.x/v1beta1'] });
    expect(summary.fields.map((change) => `${change.path}:${change.change}`).sort()).toEqual([
      'spec.a:optionality',
      'spec.b:type',
      'spec.c:removed',
      'spec.d:added',
    ]);
    expect(fields.isEmpty(fields.compare(next, next))).toBe(true);
    expect([...fields.compare(undefined, next).kindsAdded].sort()).toEqual(['new.x', 'ws.x']);
  });

  it('says "defaulted" where a field has a default, and reads an older manifest (no marks) without reporting its defaulted fields', () => {
    const entry = (map: Record<string, string>): fields.VersionFields => ({ crdName: 'ws.x', kind: 'W', version: 'v1', fields: map });
    const next: fields.Manifest = {
      generatorVersion: '2',
      format: 2,
      versions: { 'ws.x/v1': entry({ 'spec.a': 'integer=', 'spec.b': 'string=', 'spec.c': 'string=' }) },
    };
    const previous: fields.Manifest = { generatorVersion: '2', format: 2, versions: { 'ws.x/v1': entry({ 'spec.b': 'string', 'spec.c': 'integer?' }) } };
    expect(fields.renderSummary(fields.compare(previous, next))).toEqual([
      '+ W v1: spec.a (integer, defaulted)',
      '~ W v1: spec.b: required → defaulted',
      '~ W v1: spec.c: type integer, optional → string, defaulted',
    ]);
    const older: fields.Manifest = { generatorVersion: '1', versions: { 'ws.x/v1': entry({ 'spec.a': 'integer', 'spec.b': 'string', 'spec.c': 'string?' }) } };
    expect(fields.renderSummary(fields.compare(older, next))).toEqual(['~ W v1: spec.c: optional → defaulted']);
  });

  it('reads back the manifest it renders, and ignores garbage', () => {
    const manifest = fields.buildManifest(
      support.generate([support.source([support.crd({ type: 'object', properties: { a: { type: 'string' } } })])]).model,
      '9',
    );
    expect(fields.parseManifest(fields.renderManifest(manifest))).toMatchObject(manifest);
    expect(fields.parseManifest('not json')).toBeUndefined();
  });
});

describe('P-1 status pruning', () => {
  it.each([
    ['fixed status fields', { type: 'object', properties: { status: { type: 'object', properties: { phase: { type: 'string' } } } } }, false],
    ['no status, closed root', { type: 'object', properties: { spec: { type: 'object' } } }, false],
    ['status preserving unknown fields', { type: 'object', properties: { status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }, true],
    ['no status, open root', { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, true],
    [
      'status as a map of open values',
      { type: 'object', properties: { status: { type: 'object', additionalProperties: { 'x-kubernetes-preserve-unknown-fields': true } } } },
      true,
    ],
  ])('%s: keeps results = %s', (_, root, keeps) => {
    expect(pruning.keepsStatusResults(versionOf(root))).toBe(keeps);
  });
});

describe('handler detection', () => {
  const exports: detecting.DescriptorExport[] = [
    { fileName: 'widgets.x.v1.ts', descriptor: 'Widgets', flat: true, namespace: 'WidgetV1' },
    { fileName: 'widgets.x.v2.ts', descriptor: 'Widgets', flat: false, namespace: 'WidgetV2' },
  ];
  it.each([
    ["import { Widgets } from '../generated/widgets.x.v2.js';", ['widgets.x.v2.ts']],
    ["import { Widgets as W } from '../generated/index.js';", ['widgets.x.v1.ts']],
    ["import { WidgetV2 } from '../generated/index.js';", ['widgets.x.v2.ts']],
    ["import * as g from '../generated/index.js'; on.create(g.WidgetV2.Widgets, f);", ['widgets.x.v2.ts']],
    ["import * as g from '../generated/widgets.x.v1.js'; on.create(g.Widgets, f);", ['widgets.x.v1.ts']],
    ["import { Widgets } from './elsewhere.js';", []],
    ['// import { Widgets } from "../generated/index.js"', []],
    ["export { Widgets } from '../generated/index.js';", ['widgets.x.v1.ts']],
    ["export { Widgets as W } from '../generated/widgets.x.v2.js';", ['widgets.x.v2.ts']],
  ])('%s → %j', (text, expected) => {
    expect([...detecting.referencedModules([{ path: 'src/handlers/a.ts', text }], exports)].sort()).toEqual(expected);
  });
});

describe('imports of what is no longer generated', () => {
  const exports: detecting.DescriptorExport[] = [{ fileName: 'widgets.x.v2.ts', descriptor: 'Widgets', flat: true, namespace: 'WidgetV2' }];
  const indexNames = new Set(['Widgets', 'Widget', 'WidgetV2']);
  it('names the file, line and specifier of a vanished module, and each name the index no longer exports', () => {
    const text = [
      "import { on } from 'kopf-gen/runtime';",
      "import { Widgets } from '../generated/widgets.x.v1.js';",
      "import { Widget, WidgetV1 } from '../generated/index.js';",
      "import * as g from '../generated/index.js';",
      'on.create(g.WidgetV1beta1.Widgets, f);',
      "import '../generated/handlers.js';",
    ].join('\n');
    const { stale, referenced } = detecting.scanReferences([{ path: 'src/a.ts', text }], exports, indexNames);
    expect(stale).toEqual([
      { path: 'src/a.ts', line: 2, specifier: '../generated/widgets.x.v1.js', target: 'widgets.x.v1' },
      { path: 'src/a.ts', line: 3, specifier: '../generated/index.js', target: 'index', name: 'WidgetV1' },
      { path: 'src/a.ts', line: 5, specifier: '../generated/index.js', target: 'index', name: 'WidgetV1beta1' },
    ]);
    expect([...referenced.keys()]).toEqual([]);
  });

  it('reads the names a generated module exports from its text', () => {
    const text =
      'import { resource } from "kopf-gen/runtime";\nexport interface Widget {\n}\nexport type WidgetPatch = X;\nexport const Widgets = 1;\nexport { A as B, type C };\n';
    expect(detecting.exportedNames(text).sort()).toEqual(['B', 'C', 'Widget', 'WidgetPatch', 'Widgets']);
  });
});

describe('index names', () => {
  const widgets = (group: string): Record<string, unknown> => {
    const document = support.crd({ type: 'object', properties: { a: { type: 'string' } } });
    const spec = document['spec'] as Record<string, unknown>;
    return { ...document, metadata: { name: `widgets.${group}` }, spec: { ...spec, group } };
  };
  const both = support.generate([support.source([widgets('acme.io')], 'crds/a.yaml'), support.source([widgets('example.com')], 'crds/b.yaml')]);

  it('exports neither of two new kinds with the same names at the top level, and names the second namespace after its group', () => {
    const entries = scaffolding.indexEntries(both.model, both.modules);
    expect(entries.map(({ crdName, flat, namespace }) => ({ crdName, flat, namespace }))).toEqual([
      { crdName: 'widgets.acme.io', flat: false, namespace: 'WidgetV1' },
      { crdName: 'widgets.example.com', flat: false, namespace: 'WidgetV1ExampleCom' },
    ]);
  });

  it('keeps the names the previous index gave, and reports what the newcomer did not get', () => {
    const previous: Record<string, fields.IndexRecord> = {
      'widgets.example.com.v1.ts': { crdName: 'widgets.example.com', version: 'v1', descriptor: 'Widgets', namespace: 'WidgetV1', flat: true },
    };
    const entries = scaffolding.indexEntries(both.model, both.modules, previous);
    expect(entries.map(({ crdName, flat, namespace }) => ({ crdName, flat, namespace }))).toEqual([
      { crdName: 'widgets.acme.io', flat: false, namespace: 'WidgetV1AcmeIo' },
      { crdName: 'widgets.example.com', flat: true, namespace: 'WidgetV1' },
    ]);
    expect(entries[0]!.withheld).toMatchObject({ namespace: 'WidgetV1', holders: ['widgets.example.com'] });
    expect(entries[0]!.withheld?.flat).toContain('Widgets');
    expect(entries[1]!.withheld).toBeUndefined();
  });
});

describe('samples', () => {
  it('fills required fields within bounds, enums and lengths, with their defaults where they have one', () => {
    const schema = {
      type: 'object',
      required: ['n', 'e', 's', 'l', 'd', 'o'],
      properties: {
        n: { type: 'integer', minimum: 5 },
        e: { type: 'string', enum: ['x', 'y'] },
        s: { type: 'string', minLength: 10 },
        l: { type: 'array', minItems: 2, items: { type: 'string' } },
        d: { type: 'integer', default: 7 },
        o: { type: 'object', required: ['t'], properties: { t: { type: 'boolean' }, u: { type: 'string' } } },
        skipped: { type: 'string' },
      },
    };
    expect(samples.sampleObject(schema)).toEqual({ n: 5, e: 'x', s: 'examplexxx', l: ['example', 'example1'], d: 7, o: { t: false } });
  });
});

describe('crds/ file names', () => {
  it('keeps the source name, avoids taken names, and names stdin after the CRD', () => {
    const text = yaml.stringify(support.crd(undefined));
    const sources = [
      { path: 'in/widgets.yaml', text },
      { path: inputs.STDIN_NAME, text: text.replace(/widgets/g, 'gizmos').replace(/Widget/g, 'Gizmo') },
    ];
    const loaded = loading.loadCrdSources(sources).crds;
    expect(inputs.crdFiles(sources, loaded, [], ['widgets.yaml']).map((file) => file.fileName)).toEqual(['widgets-2.yaml', 'gizmos.example.com.yaml']);
  });
});

describe('namespace names', () => {
  it('accepts DNS-1123 labels and drops repetitions, keeping the order', () => {
    expect(projects.checkNamespaces(['team-b', 'a', '0x1', 'team-b', 'x'.repeat(63)])).toEqual(['team-b', 'a', '0x1', 'x'.repeat(63)]);
    expect(projects.checkNamespaces([])).toEqual([]);
  });

  it.each([
    ['Team-A', 'DNS-1123 label'],
    ['team_a', 'DNS-1123 label'],
    ['-team', 'DNS-1123 label'],
    ['team-', 'DNS-1123 label'],
    ['team.a', 'DNS-1123 label'],
    ['', 'DNS-1123 label'],
    ['x'.repeat(64), 'at most 63 characters'],
    ['team-*', 'patterns are not supported'],
    ['team-?', 'patterns are not supported'],
  ])('rejects %j, naming it (%s)', (name, why) => {
    let error: unknown;
    try {
      projects.checkNamespaces(['ok', name]);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(projects.ProjectError);
    expect(error).toMatchObject({ code: 'invalid-namespace' });
    expect((error as Error).message).toContain(JSON.stringify(name));
    expect((error as Error).message).toContain(why);
  });
});

describe('scope flags', () => {
  it('are -A for all namespaces and -n NS for each chosen namespace', () => {
    expect(scaffolding.scopeArgs([])).toEqual(['-A']);
    expect(scaffolding.scopeArgs(['team-a', 'team-b'])).toEqual(['-n', 'team-a', '-n', 'team-b']);
  });
});
