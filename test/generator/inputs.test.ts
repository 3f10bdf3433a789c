/**
 * Bad input never writes anything: every kind of unusable CRD (with the file, document index and
 * JSON path in the error), a missing --crd file, a project without kopf-gen.json, a non-empty
 * output directory; and the input forms that are fine: several CRDs and other documents in one
 * file (skipped with a note), and standard input.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import * as cli from '../../generator/cli.js';
import * as generator from '../../generator/index.js';
import * as support from './support.js';
import * as ps from './projects-support.js';

const root = ps.tempDir();
afterAll(() => ps.cleanup(root));

const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: 'b' } };
const widget = support.crd({ type: 'object', properties: { size: { type: 'integer' } } });
const withSpec = (spec: Record<string, unknown>): Record<string, unknown> => support.crd(spec);
const specPath = 'spec.versions[0].schema.openAPIV3Schema.properties.spec';

const BAD: readonly { name: string; documents: unknown[] | string; code: string; documentIndex: number; jsonPath: string }[] = [
  { name: 'not YAML', documents: 'kind: [unclosed\n', code: 'not-yaml', documentIndex: 0, jsonPath: '' },
  { name: 'not a CRD', documents: [configMap], code: 'not-a-crd', documentIndex: 0, jsonPath: '' },
  {
    name: 'a v1beta1 CRD',
    documents: [configMap, { ...widget, apiVersion: 'apiextensions.k8s.io/v1beta1' }],
    code: 'unsupported-version',
    documentIndex: 1,
    jsonPath: 'apiVersion',
  },
  {
    name: 'no schema',
    documents: [support.crd(undefined, { versions: [{ name: 'v1', served: true, storage: true }] })],
    code: 'no-schema',
    documentIndex: 0,
    jsonPath: 'spec.versions[0].schema.openAPIV3Schema',
  },
  {
    name: 'a non-structural schema',
    documents: [widget, withSpec({ type: 'object', properties: { size: { description: 'no type' } } })],
    code: 'non-structural',
    documentIndex: 1,
    jsonPath: `${specPath}.properties.size`,
  },
  {
    name: '$ref',
    documents: [withSpec({ type: 'object', properties: { size: { $ref: '#/definitions/size' } } })],
    code: 'ref-not-allowed',
    documentIndex: 0,
    jsonPath: `${specPath}.properties.size.$ref`,
  },
  {
    name: 'an unknown type',
    documents: [withSpec({ type: 'object', properties: { size: { type: 'integr' } } })],
    code: 'unknown-type',
    documentIndex: 0,
    jsonPath: `${specPath}.properties.size.type`,
  },
];

function text(documents: unknown[] | string): string {
  return typeof documents === 'string' ? documents : documents.map((document) => yaml.stringify(document)).join('---\n');
}

describe('bad CRDs', () => {
  it.each(BAD)('$name: a clear error with file, document and JSON path, and nothing written', async ({ name, documents, code, documentIndex, jsonPath }) => {
    const file = ps.write(path.join(root, 'bad', `${name.replace(/\W+/g, '-')}.yaml`), text(documents));
    const out = path.join(root, 'out', name.replace(/\W+/g, '-'));
    const error = await generator.init({ crds: [file], out }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(generator.GeneratorError);
    const problem = error as InstanceType<typeof generator.GeneratorError>;
    expect(problem.code).toBe(code);
    expect(problem).toMatchObject({ file, documentIndex, jsonPath });
    expect(problem.message).toContain(`${file}, document ${documentIndex}`);
    expect(fs.existsSync(path.dirname(out))).toBe(false); // not even the parent of the output directory
  });

  it('a bad CRD among good ones in crds/ stops generate before it writes anything', async () => {
    const good = ps.write(path.join(root, 'inputs/widgets.yaml'), yaml.stringify(widget));
    const project = path.join(root, 'regen-bad');
    await generator.init({ crds: [good], out: project });
    ps.write(path.join(project, 'crds/broken.yaml'), text([support.crd({ type: 'object', properties: { size: { type: 'integr' } } }, { kind: 'Broken' })]));
    const before = ps.snapshot(project);
    await expect(generator.generate({ project })).rejects.toMatchObject({ code: 'unknown-type', file: 'crds/broken.yaml' });
    expect(ps.snapshot(project)).toEqual(before);
  });
});

describe('bad commands', () => {
  it('a missing --crd file is named, and nothing is written', async () => {
    const out = path.join(root, 'missing');
    await expect(generator.init({ crds: [path.join(root, 'nope.yaml')], out })).rejects.toMatchObject({
      code: 'missing-input',
      message: expect.stringContaining('nope.yaml: no such file'),
    });
    expect(fs.existsSync(out)).toBe(false);
  });

  it('a directory without kopf-gen.json is not a project, for generate and add', async () => {
    const dir = path.join(root, 'not-a-project');
    ps.write(path.join(dir, 'readme.txt'), 'x');
    const good = ps.write(path.join(root, 'inputs/widgets.yaml'), yaml.stringify(widget));
    await expect(generator.generate({ project: dir })).rejects.toMatchObject({ code: 'not-a-project' });
    await expect(generator.add({ project: dir, crds: [good] })).rejects.toMatchObject({ code: 'not-a-project' });
    expect(ps.snapshot(dir)).toEqual({ 'readme.txt': 'x' });
  });

  it('exit codes: 0 on success, 1 on failure (with the reason), 2 on usage errors', async () => {
    const good = ps.write(path.join(root, 'inputs/widgets.yaml'), yaml.stringify(widget));
    const ok = ps.capture();
    expect(await cli.main(['init', '--crd', good, '--out', path.join(root, 'cli-ok')], ok)).toBe(0);
    expect(ok.stdout()).toContain('added handler stub src/handlers/widget.ts');
    expect(ok.stdout()).toContain('added sample object samples/widget.yaml');
    expect(ok.stdout()).toContain('npm run typecheck');
    expect(ok.stderr()).not.toContain('warning: '); // P-1: the stubs return nothing, so nothing is pruned
    const occupied = ps.capture();
    expect(await cli.main(['init', '--crd', good, '--out', path.join(root, 'cli-ok')], occupied)).toBe(1);
    expect(occupied.stderr()).toContain('--force');
    const usage = ps.capture();
    expect(await cli.main(['init', '--out', path.join(root, 'cli-usage')], usage)).toBe(2);
    expect(usage.stderr()).toContain('--crd');
    expect(fs.existsSync(path.join(root, 'cli-usage'))).toBe(false);
    expect(await cli.main(['generate', '--bogus'], ps.capture())).toBe(2);
  });

  it.each([
    { title: 'kopf-gen', command: [] },
    { title: 'init', command: ['init'] },
    { title: 'generate', command: ['generate'] },
    { title: 'add', command: ['add'] },
  ])('--help and --version work for $title', async ({ command }) => {
    const help = ps.capture();
    expect(await cli.main([...command, '--help'], help)).toBe(0);
    expect(help.stdout()).toContain('Usage: kopf-gen');
    const version = ps.capture();
    expect(await cli.main([...command, '--version'], version)).toBe(0);
    expect(version.stdout().trim()).toBe(generator.GENERATOR_VERSION);
  });
});

describe('input forms', () => {
  it('takes several CRDs and other documents from one file, skipping the others with a note', async () => {
    const gadget = support.crd({ type: 'object', properties: { color: { type: 'string' } } }, { kind: 'Gadget' });
    const file = ps.write(path.join(root, 'inputs/mixed.yaml'), text([configMap, widget, null, gadget]));
    const out = path.join(root, 'mixed');
    const report = await generator.init({ crds: [file], out });
    expect(report.notes.join('\n')).toContain('document 0: skipped (ConfigMap v1');
    expect([...report.stubsAdded].sort()).toEqual(['src/handlers/gadget.ts', 'src/handlers/widget.ts']);
    const copied = yaml
      .parseAllDocuments(fs.readFileSync(path.join(out, 'crds/mixed.yaml'), 'utf8'))
      .map((document) => (document.toJS() as { kind: string }).kind);
    expect(copied).toEqual(['CustomResourceDefinition', 'CustomResourceDefinition']);
    const again = await generator.generate({ project: out });
    expect(generator.renderSummary(again.summary)).toEqual([]);
    expect(again.notes).toEqual([]);
  });

  it('reads a CRD from standard input with --crd -', async () => {
    const out = path.join(root, 'stdin');
    const io = ps.capture(yaml.stringify(widget));
    expect(await cli.main(['init', '--crd', '-', '--out', out], io)).toBe(0);
    expect(fs.readdirSync(path.join(out, 'crds'))).toEqual(['widgets.example.com.yaml']);
    expect(fs.existsSync(path.join(out, 'src/generated/widgets.example.com.v1.ts'))).toBe(true);
  });

  it('names <stdin> in errors about standard input', async () => {
    const io = ps.capture('kind: [unclosed\n');
    const out = path.join(root, 'stdin-bad');
    expect(await cli.main(['init', '--crd', '-', '--out', out], io)).toBe(1);
    expect(io.stderr()).toContain('<stdin>, document 0');
    expect(fs.existsSync(out)).toBe(false);
  });
});
