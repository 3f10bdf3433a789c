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

  it('lists nested fields with optionality (required or defaulted fields are not optional)', () => {
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
      'spec.b': 'integer',
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
  ])('%s → %j', (text, expected) => {
    expect([...detecting.referencedModules([{ path: 'src/handlers/a.ts', text }], exports)].sort()).toEqual(expected);
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
