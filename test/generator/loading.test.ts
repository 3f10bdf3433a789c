import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as loading from '../../generator/loading.js';
import type * as errors from '../../generator/errors.js';
import * as generator from '../../generator/index.js';
import * as pipeline from '../../generator/pipeline.js';
import * as support from './support.js';
import * as ps from './projects-support.js';

const loadError = (text: string, file = 'crds/bad.yaml'): errors.GeneratorError => support.loadError(text, file);

describe('loadCrdSources', () => {
  it('keeps every CRD of a multi-document file with its path and document index', () => {
    const widget = support.crd({ type: 'object' });
    const gadget = support.crd({ type: 'object' }, { kind: 'Gadget' });
    const { crds } = loading.loadCrdSources([support.source([widget, gadget], 'crds/two.yaml')]);
    expect(crds.map((crd) => [crd.file, crd.documentIndex, (crd.document['spec'] as { names: { kind: string } }).names.kind])).toEqual([
      ['crds/two.yaml', 0, 'Widget'],
      ['crds/two.yaml', 1, 'Gadget'],
    ]);
  });

  it('skips empty documents and objects of other kinds with a note naming file and document', () => {
    const text = `${support.source([support.crd({ type: 'object' })]).text}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n`;
    const { crds, notes } = loading.loadCrdSources([{ path: 'crds/mixed.yaml', text }]);
    expect(crds).toHaveLength(1);
    expect(notes).toEqual([
      'crds/mixed.yaml, document 1: skipped (ConfigMap v1, not a CustomResourceDefinition)',
      'crds/mixed.yaml, document 2: skipped (empty document)',
    ]);
  });

  it("loads Kopf's peering file: two CRDs, then the two custom resources skipped with a note", () => {
    const text = fs.readFileSync(path.join(support.REPO_ROOT, 'fixtures/crds/peering.yaml'), 'utf8');
    const { crds, notes } = loading.loadCrdSources([{ path: 'crds/peering.yaml', text }]);
    expect(crds.map((crd) => crd.documentIndex)).toEqual([0, 1]);
    expect(notes).toEqual([
      'crds/peering.yaml, document 2: skipped (ClusterKopfPeering kopf.dev/v1, not a CustomResourceDefinition)',
      'crds/peering.yaml, document 3: skipped (KopfPeering kopf.dev/v1, not a CustomResourceDefinition)',
    ]);
  });

  it('loads a file with two CRDs, a custom resource and a trailing empty document', () => {
    const { crds, notes } = loading.loadCrdSources([support.fixture('releases.yaml')]);
    expect(crds.map((crd) => crd.documentIndex)).toEqual([0, 1]);
    expect(notes).toEqual([
      'fixtures/releases.yaml, document 2: skipped (Release deploy.example.net/v2, not a CustomResourceDefinition)',
      'fixtures/releases.yaml, document 3: skipped (empty document)',
    ]);
  });

  it('not-yaml: names the file and the document that does not parse', () => {
    const good = support.source([support.crd({ type: 'object' })]).text;
    const error = loadError(`${good}---\nkind: x\nspec: b: c\n`);
    expect(error.code).toBe('not-yaml');
    expect(error.documentIndex).toBe(1);
    const line = good.split('\n').length - 1 + 3;
    expect(error.message).toBe(`crds/bad.yaml, document 1: not valid YAML (line ${line}, column 8): bad indentation of a mapping entry`);
  });

  it('not-yaml: rejects duplicate keys, at the second one', () => {
    const error = loadError('apiVersion: v1\napiVersion: v2\n');
    expect(error.code).toBe('not-yaml');
    expect(error.message).toBe('crds/bad.yaml, document 0: not valid YAML (line 2, column 1): duplicated mapping key');
  });

  it('not-yaml: content after a document without a separator is an error of that document', () => {
    const good = support.source([support.crd({ type: 'object' })]).text;
    const error = loadError(`${good}---\na: b\n- c\n---\nd: e\n`);
    expect(error).toMatchObject({ code: 'not-yaml', documentIndex: 1 });
  });

  it('not-yaml: the documents before the one that does not parse are looked at first', () => {
    const error = loadError('- a list\n---\nkind: [unclosed\n');
    expect(error).toMatchObject({ code: 'not-a-crd', documentIndex: 0 });
  });

  it('not-yaml: aliases that repeat nodes without bound are refused, and quickly', () => {
    const names = 'abcdefghi'; // nine levels of ten: a billion nodes once expanded
    const levels = [...names].map(
      (name, index) =>
        `${name}: &${name} [${Array(10)
          .fill(index === 0 ? '1' : `*${names[index - 1]}`)
          .join(', ')}]`,
    );
    const error = loadError(`${levels.join('\n')}\n`);
    expect(error.code).toBe('not-yaml');
    expect(error.message).toMatch(/^crds\/bad\.yaml, document 0: not usable YAML: its aliases repeat more than 1000000 nodes/);
  });

  it('reads YAML 1.2 core types only: timestamps, yes/no and tagged binaries are not converted', () => {
    const crd = support.source([support.crd({ type: 'object' })]).text;
    const { crds } = loading.loadCrdSources([{ path: 'crds/types.yaml', text: `${crd}extra: {date: 2024-01-01, flag: yes, count: 0o17, big: 1e3}\n` }]);
    expect(crds[0]!.document['extra']).toEqual({ date: '2024-01-01', flag: 'yes', count: 15, big: 1000 });
    expect(loadError(`${crd}extra: !!binary aGk=\n`).code).toBe('not-yaml');
  });

  it('a file of nothing but comments holds no document', () => {
    const error = loadError('# nothing here\n\n', 'crds/comments.yaml');
    expect(error.message).toBe('crds/comments.yaml, document 0: the file contains no CustomResourceDefinition');
  });

  it('not-a-crd: rejects a document that is not a Kubernetes object', () => {
    const error = loadError('- just\n- a list\n');
    expect(error.code).toBe('not-a-crd');
    expect(error.message).toBe('crds/bad.yaml, document 0: not a Kubernetes object: the document is a list, not a mapping');
  });

  it('not-a-crd: rejects a file without any CustomResourceDefinition', () => {
    const error = loadError('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n', 'crds/configmap.yaml');
    expect(error.code).toBe('not-a-crd');
    expect(error.file).toBe('crds/configmap.yaml');
    expect(error.message).toBe('crds/configmap.yaml, document 0: the file contains no CustomResourceDefinition');
  });
});

describe('YAML aliases', () => {
  const root = ps.tempDir('kopf-gen-aliases-');
  afterAll(() => ps.cleanup(root));

  /** A Widget CRD whose spec schema is anchored as `&spec`; `inside` goes under its properties. */
  const aliased = (inside: string, after = ''): string =>
    [
      'apiVersion: apiextensions.k8s.io/v1',
      'kind: CustomResourceDefinition',
      'metadata: {name: widgets.example.com}',
      'spec:',
      '  group: example.com',
      '  scope: Namespaced',
      '  names: {kind: Widget, plural: widgets, singular: widget}',
      '  versions:',
      '  - name: v1',
      '    served: true',
      '    storage: true',
      '    schema:',
      '      openAPIV3Schema:',
      '        type: object',
      '        properties:',
      '          spec: &spec',
      '            type: object',
      '            properties:',
      `              ${inside}`,
      after,
    ].join('\n');

  it('cyclic-alias: an alias inside the node it names is refused with file, document and path, and nothing written', async () => {
    const good = support.source([support.crd({ type: 'object' }, { kind: 'Gadget' })]).text;
    const text = `${good}---\n${aliased('child: *spec')}\n`;
    const error = loadError(text, 'crds/cyclic.yaml');
    expect(error.code).toBe('cyclic-alias');
    expect(error.documentIndex).toBe(1);
    expect(error.jsonPath).toBe('spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.child');
    expect(error.message).toMatch(
      /^crds\/cyclic\.yaml, document 1, spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\.spec\.properties\.child: a YAML alias refers to a node that contains it.*replace the alias with a copy/,
    );
    const file = ps.write(path.join(root, 'inputs/cyclic.yaml'), text);
    const out = path.join(root, 'cyclic', 'project');
    await expect(generator.init({ crds: [file], out })).rejects.toMatchObject({ code: 'cyclic-alias', file, documentIndex: 1 });
    expect(fs.existsSync(path.dirname(out))).toBe(false);
  });

  it('cyclic-alias: through a list too', () => {
    const error = loadError('a: &x [1, *x]\n');
    expect(error).toMatchObject({ code: 'cyclic-alias', documentIndex: 0, jsonPath: 'a[1]' });
  });

  it('an alias that repeats a node elsewhere (as real CRDs do) loads and generates', async () => {
    const text = aliased('size: {type: integer}', '          status: *spec\n');
    const { crds } = loading.loadCrdSources([{ path: 'crds/shared.yaml', text }]);
    const properties = (crds[0]!.document['spec'] as { versions: { schema: { openAPIV3Schema: { properties: Record<string, unknown> } } }[] }).versions[0]!
      .schema.openAPIV3Schema.properties;
    expect(properties['status']).toEqual(properties['spec']);
    const file = ps.write(path.join(root, 'inputs/shared.yaml'), text);
    const out = path.join(root, 'shared');
    await generator.init({ crds: [file], out });
    const module = fs.readFileSync(path.join(out, 'src/generated/widgets.example.com.v1.ts'), 'utf8');
    expect(module).toMatch(/size\?: number;[\s\S]*size\?: number;/); // once in spec, once in status
  });
});

describe('too-deep: documents nested deeper than MAX_DEPTH', () => {
  /** The head of a Widget CRD in block YAML, down to `openAPIV3Schema.properties.spec:` (level 8 is its value). */
  const HEAD = [
    'apiVersion: apiextensions.k8s.io/v1',
    'kind: CustomResourceDefinition',
    'metadata: {name: widgets.example.com}',
    'spec:',
    '  group: example.com',
    '  scope: Namespaced',
    '  names: {kind: Widget, plural: widgets, singular: widget}',
    '  versions:',
    '  - name: v1',
    '    served: true',
    '    storage: true',
    '    schema:',
    '      openAPIV3Schema:',
    '        type: object',
    '        properties:',
    '          spec:',
  ];

  /** A Widget CRD whose spec holds `levels` nested objects `a`, written line by line (no recursive serialiser). */
  const deepBlock = (levels: number): string => {
    const lines = [...HEAD];
    let indent = 12;
    for (let level = 0; level < levels; level += 1) {
      lines.push(`${' '.repeat(indent)}type: object`, `${' '.repeat(indent)}properties:`, `${' '.repeat(indent + 2)}a:`);
      indent += 4;
    }
    lines.push(`${' '.repeat(indent)}type: string`);
    return `${lines.join('\n')}\n`;
  };

  /** The same CRD as one line of JSON, built from the inside out. */
  const deepJson = (levels: number): string => {
    let schema = '{"type": "string"}';
    for (let level = 0; level < levels; level += 1) schema = `{"type": "object", "properties": {"a": ${schema}}}`;
    const root = `{"type": "object", "properties": {"spec": ${schema}}}`;
    return `{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Widget", "plural": "widgets", "singular": "widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": ${root}}}]}}\n`;
  };

  /** Level 101: the first `properties` below the 46th nested `a` (spec's schema is level 8, each object adds two). */
  const CROSSING = `spec.versions[0].schema.openAPIV3Schema.properties.spec${'.properties.a'.repeat(46)}.properties`;

  it('too-deep: a schema 600 levels deep is refused with the depth, the CRD, the version, the JSON path and the limit (block YAML)', () => {
    expect(generator.MAX_DEPTH).toBe(100);
    const error = loadError(deepBlock(600), 'crds/deep.yaml');
    expect(error.code).toBe('too-deep');
    expect(error.documentIndex).toBe(0);
    expect(error.jsonPath).toBe(CROSSING);
    expect(error.message).toBe(
      `crds/deep.yaml, document 0, ${CROSSING}: nested more than 100 levels deep (CRD widgets.example.com, version v1): the generator reads documents nested up to 100 levels of mappings and lists (the deepest real CRDs nest under 40); make the schema flatter, or replace a deep part with \`x-kubernetes-preserve-unknown-fields: true\``,
    );
    expect(error.message).not.toMatch(/call stack|not valid YAML/);
  });

  it('too-deep: the same in JSON (flow style), and for depths from just past the limit to 20,000 levels', () => {
    for (const levels of [47, 600, 20_000]) {
      const error = loadError(deepJson(levels), 'crds/deep.json');
      expect(error).toMatchObject({ code: 'too-deep', documentIndex: 0, jsonPath: CROSSING });
      expect(error.detail).toMatch(/^nested more than 100 levels deep \(CRD widgets\.example\.com, version v1\)/);
    }
  });

  it('too-deep: names the document of a multi-document file', () => {
    const good = support.source([support.crd({ type: 'object' }, { kind: 'Gadget' })]).text;
    const error = loadError(`${good}---\n${deepBlock(600)}`);
    expect(error).toMatchObject({ code: 'too-deep', documentIndex: 1, jsonPath: CROSSING });
  });

  it('too-deep: aliases that nest the data deeper than its text are refused too, by the walk of the data', () => {
    // Each level refers to the one before it: the text is 12 levels deep, the data 6 + 2 × 60.
    const levels = Array.from({ length: 60 }, (_, index) =>
      index === 0 ? '          l0: &l0 {type: string}' : `          l${index}: &l${index} {type: object, properties: {x: *l${index - 1}}}`,
    );
    const text = `${HEAD.slice(0, -1).join('\n')}\n${levels.join('\n')}\n`;
    const error = loadError(text);
    expect(error.code).toBe('too-deep');
    expect(error.jsonPath).toMatch(/^spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\.l\d+(\.properties\.x)+\.properties$/);
    expect(error.jsonPath.replace('[0]', '.[0]').split('.')).toHaveLength(100); // `spec` is level 2, the crossing level 101
  });

  it('too-deep: a cyclic alias is still named as such', () => {
    const text = `${HEAD.slice(0, -1).join('\n')}\n          spec: &s {type: object, properties: {child: *s}}\n`;
    expect(loadError(text).code).toBe('cyclic-alias');
  });

  it('a schema nested exactly to the limit loads, and every later stage (validating, modeling, emitting) handles it', () => {
    // 46 objects below spec: the innermost is level 8 + 2 × 46 = 100.
    for (const text of [deepBlock(46), deepJson(46)]) {
      const analysis = pipeline.analyse([{ path: 'crds/deepest.yaml', text }]);
      expect(analysis.modules).toHaveLength(1);
    }
  });
});
