/**
 * Samples: the object of each kind that a generated project writes to `samples/<kind>.yaml` and
 * creates in its test. Unit tests for each schema constraint the sampler meets (and the notes for
 * those it cannot), then projects generated from every repository CRD whose samples the real
 * kubectl applies to a devcluster, and the rule that samples are written once.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import * as generator from '../../generator/index.js';
import * as patterns from '../../generator/patterns.js';
import * as samples from '../../generator/samples.js';
import { startTestCluster, type TestCluster } from '../support/cluster.js';
import { requireKubectl } from '../support/kubectl.js';
import { run } from '../support/processes.js';
import * as ps from './projects-support.js';
import * as support from './support.js';

type Json = Record<string, unknown>;

const root = ps.tempDir('kopf-gen-samples-');
afterAll(() => ps.cleanup(root));

/** The sampled `spec` of a spec schema. */
function specOf(properties: Json, required: readonly string[], extra: Json = {}): Json {
  const schema = { type: 'object', properties: { spec: { type: 'object', required, properties, ...extra } } };
  const sample = samples.sampleResource(schema, { apiVersion: 'example.com/v1', kind: 'Widget', name: 'example' });
  return sample.value['spec'] as Json;
}

/** The notes of a spec schema's sample. */
function notesOf(properties: Json, required: readonly string[], extra: Json = {}): readonly string[] {
  const schema = { type: 'object', properties: { spec: { type: 'object', required, properties, ...extra } } };
  return samples.sampleResource(schema, { apiVersion: 'example.com/v1', kind: 'Widget', name: 'example' }).notes;
}

describe('sample values', () => {
  it('has apiVersion, kind, metadata (with the namespace only when given) and spec, even when nothing is required', () => {
    const schema = { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } };
    expect(samples.sampleResource(schema, { apiVersion: 'example.com/v1', kind: 'Widget', name: 'example' }).value).toEqual({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'example' },
      spec: {},
    });
    expect(samples.sampleResource(schema, { apiVersion: 'example.com/v1', kind: 'Widget', name: 'x', namespace: 'apps' }).value['metadata']).toEqual({
      name: 'x',
      namespace: 'apps',
    });
  });

  it('gives required fields with a default their default, leaves optional ones out, and fills required fields of list items and nested objects', () => {
    const spec = specOf(
      {
        mode: { type: 'string', default: 'auto' },
        level: { type: 'integer', default: 3 },
        rules: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            required: ['match'],
            properties: { match: { type: 'object', required: ['path'], properties: { path: { type: 'string' } } } },
          },
        },
      },
      ['mode', 'rules'],
    );
    expect(spec).toEqual({ mode: 'auto', rules: [{ match: { path: 'example' } }] });
  });

  it('meets bounds, exclusive bounds and multipleOf, for integers and numbers', () => {
    const spec = specOf(
      {
        a: { type: 'integer', minimum: 10, exclusiveMinimum: true, multipleOf: 5 },
        b: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true },
        c: { type: 'integer', maximum: -3 },
        d: { type: 'integer', minimum: 1, maximum: 9, multipleOf: 4 },
      },
      ['a', 'b', 'c', 'd'],
    );
    expect(spec).toEqual({ a: 15, b: 0.5, c: -3, d: 4 });
  });

  it('takes the first non-null enum value, and int-or-string as a number', () => {
    expect(specOf({ e: { type: 'string', nullable: true, enum: [null, 'On', 'Off'] }, p: { 'x-kubernetes-int-or-string': true } }, ['e', 'p'])).toEqual({
      e: 'On',
      p: 1,
    });
  });

  it('meets lengths, formats and simple patterns', () => {
    const spec = specOf(
      {
        long: { type: 'string', minLength: 10 },
        short: { type: 'string', maxLength: 3 },
        when: { type: 'string', format: 'date-time' },
        mail: { type: 'string', format: 'email' },
        net: { type: 'string', format: 'cidr' },
        id: { type: 'string', format: 'uuid' },
        label: { type: 'string', pattern: '^[a-z]([-a-z0-9]*[a-z0-9])?$', minLength: 9 },
        code: { type: 'string', pattern: '^[A-Z]{3}-\\d{4}$' },
        quantity: { type: 'string', pattern: '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE])?$' },
      },
      ['long', 'short', 'when', 'mail', 'net', 'id', 'label', 'code', 'quantity'],
    );
    expect(spec).toEqual({
      long: 'examplexxx',
      short: 'exa',
      when: '2024-01-01T00:00:00Z',
      mail: 'user@example.com',
      net: '192.0.2.0/24',
      id: '123e4567-e89b-12d3-a456-426614174000',
      label: 'examplexx',
      code: 'AAA-0000',
      quantity: '0',
    });
  });

  it('makes set items and list-map keys distinct, and fills maps and objects up to minProperties', () => {
    const spec = specOf(
      {
        tags: { type: 'array', minItems: 2, 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        ports: {
          type: 'array',
          minItems: 2,
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name', 'protocol'],
          items: {
            type: 'object',
            required: ['name'],
            properties: { name: { type: 'string', pattern: '^[a-z]+$' }, protocol: { type: 'string', enum: ['TCP', 'UDP'], default: 'TCP' } },
          },
        },
        labels: { type: 'object', minProperties: 2, additionalProperties: { type: 'string' } },
        limits: { type: 'object', minProperties: 1, properties: { cpu: { type: 'string' }, memory: { type: 'string' } } },
      },
      ['tags', 'ports', 'labels', 'limits'],
    );
    expect(spec).toEqual({
      tags: ['example', 'example1'],
      ports: [
        { name: 'example', protocol: 'TCP' },
        { name: 'a', protocol: 'UDP' },
      ],
      labels: { key0: 'example', key1: 'example1' },
      limits: { cpu: 'example' },
    });
  });

  it('takes required fields from allOf and from the first oneOf branch, and gives embedded resources apiVersion and kind', () => {
    const spec = specOf(
      {
        target: {
          type: 'object',
          oneOf: [{ required: ['service'] }, { required: ['url'] }],
          allOf: [{ required: ['port'] }],
          properties: { service: { type: 'string' }, url: { type: 'string' }, port: { type: 'integer' } },
        },
        optional: { type: 'object', anyOf: [{ required: ['a'] }, {}], properties: { a: { type: 'string' } } },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
      },
      ['target', 'optional', 'template'],
    );
    expect(spec).toEqual({ target: { service: 'example', port: 1 }, optional: {}, template: { apiVersion: 'v1', kind: 'ConfigMap' } });
  });

  it('notes what it cannot meet: CEL rules of sampled nodes, unsolvable patterns, and impossible bounds', () => {
    const notes = notesOf(
      {
        replicas: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self > 5' }] },
        digest: { type: 'string', pattern: '^sha256:(?i)[a-f0-9]{64}$' },
        odd: { type: 'integer', minimum: 2, maximum: 2, multipleOf: 3 },
        skipped: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self != ""' }] },
      },
      ['replicas', 'digest', 'odd'],
      { 'x-kubernetes-validations': [{ rule: 'self.replicas <= 10' }] },
    );
    expect(notes).toEqual([
      'spec: the validation rule "self.replicas <= 10" is not checked by the sample',
      'spec.replicas: the validation rule "self > 5" is not checked by the sample',
      'spec.digest: no sample value found that meets pattern "^sha256:(?i)[a-f0-9]{64}$"',
      'spec.odd: no sample number found within the bounds',
    ]);
  });
});

describe('strings matching a pattern', () => {
  it.each([
    ['^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', 0, 'a'],
    ['^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', 5, 'aaaaaa'],
    ['^v[0-9]+\\.[0-9]+$', 0, 'v0.0'],
    ['^(Always|Never|IfNotPresent)$', 0, 'Always'],
    ['^\\S+@\\S+$', 0, 'a@a'],
    ['[^/]+/[^/]+', 0, 'a/a'],
    ['^(?:https?)://.{3,}$', 0, 'http://aaa'],
    ['^x{2,3}$', 0, 'xx'],
  ])('%s (min length %d) → %s', (pattern, minLength, expected) => {
    expect(patterns.matchingString(pattern, minLength)).toBe(expected);
    expect(new RegExp(pattern).test(expected)).toBe(true);
  });

  it.each(['^(?i)abc$', '^(a)\\1$', '^(?=a)a$', '\\pL+'])('gives up on %s', (pattern) => {
    expect(patterns.matchingString(pattern)).toBeUndefined();
  });
});

/** The CRD files of the repository whose projects' samples are applied (file names relative to fixtures/crds/). */
const CRD_FILES = [
  ...support.fixtureFiles().map((name) => `generator/${name}`),
  ...support.yamlFiles(path.join(support.REPO_ROOT, 'fixtures/crds')),
  ...support.yamlFiles(path.join(support.REPO_ROOT, 'fixtures/crds/samples')).map((name) => `samples/${name}`),
];

/**
 * A fixture as the devcluster takes it: without the conversion webhook (the devcluster has no
 * webhook conversion) and without `uniqueItems` (which API servers refuse in CRDs, and one
 * fixture keeps for the generator's own tests). Neither changes the sample.
 */
function servable(text: string): string {
  const documents = yaml.parseAllDocuments(text).map((document) => document.toJS() as unknown);
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.entries(value).flatMap(([key, child]) => (key === 'uniqueItems' ? [] : [[key, strip(child)]])));
  };
  return documents
    .filter((document) => document !== null && document !== undefined)
    .map((document) => {
      const copy = strip(document) as Json;
      const spec = copy['spec'] as Json | undefined;
      if (copy['kind'] === 'CustomResourceDefinition' && spec) delete spec['conversion'];
      return yaml.stringify(copy, { version: '1.1' });
    })
    .join('---\n');
}

describe('samples of generated projects, applied with kubectl to a devcluster', () => {
  let test: TestCluster;
  const projects = new Map<string, string>();

  const kubectl = (...args: string[]) =>
    run('kubectl', ['--kubeconfig', test.kubeconfig, '--cache-dir', path.join(test.dir, 'kubectl-cache'), ...args], { cwd: root, timeoutMs: 30_000 });

  beforeAll(async () => {
    requireKubectl();
    test = await startTestCluster({ prefix: 'kopf-gen-samples-cluster-' });
    for (const file of CRD_FILES) {
      const input = ps.write(path.join(root, 'inputs', file), servable(fs.readFileSync(path.join(support.REPO_ROOT, 'fixtures/crds', file), 'utf8')));
      const out = path.join(root, 'projects', file.replace(/\//g, '-').replace(/\.yaml$/, ''));
      await generator.init({ crds: [input], out });
      projects.set(file, out);
    }
  }, 120_000);

  afterAll(async () => {
    await test?.stop();
    if (test) ps.cleanup(test.dir);
  });

  it.each(CRD_FILES)(
    '%s: kubectl apply -f samples/ is accepted',
    async (file) => {
      const project = projects.get(file)!;
      const crds = await kubectl('create', '-f', path.join(project, 'crds'));
      expect(crds.code, crds.output).toBe(0);
      const sampleFiles = fs.readdirSync(path.join(project, 'samples'));
      expect(sampleFiles.length).toBeGreaterThan(0);
      const applied = await kubectl('apply', '-f', path.join(project, 'samples'));
      expect(applied.code, applied.output).toBe(0);
      for (const name of sampleFiles) {
        const sample = yaml.parse(fs.readFileSync(path.join(project, 'samples', name), 'utf8')) as { kind: string; apiVersion: string };
        const group = sample.apiVersion.split('/')[0]!;
        expect(applied.output).toMatch(
          new RegExp(`^${sample.kind.toLowerCase()}\\.${group.replace(/\./g, '\\.')}/example (created|unchanged|configured)$`, 'm'),
        );
      }
    },
    60_000,
  );

  it('the samples of a project for given namespaces go to the first of them', async () => {
    const input = path.join(root, 'inputs', 'samples/constraints.yaml');
    const out = path.join(root, 'projects', 'namespaced');
    await generator.init({ crds: [input], out, namespaces: ['team-a', 'team-b'] });
    const text = fs.readFileSync(path.join(out, 'samples/constraint.yaml'), 'utf8');
    expect((yaml.parse(text) as { metadata: Json }).metadata).toEqual({ name: 'example', namespace: 'team-a' });
    expect(text).not.toMatch(/current namespace/);
    expect((await kubectl('create', 'namespace', 'team-a')).code).toBe(0);
    const applied = await kubectl('apply', '-f', path.join(out, 'samples'));
    expect(applied.code, applied.output).toBe(0);
    const got = await kubectl('get', 'constraints.samples.example.com', 'example', '-n', 'team-a', '-o', 'name');
    expect(got.output.trim()).toBe('constraint.samples.example.com/example');
  }, 60_000);
});

describe('samples/ in a project', () => {
  const crd = ps.widgetCrd(
    {
      size: { type: 'integer', minimum: 3 },
      color: { type: 'string', enum: ['red', 'blue'] },
      name: { type: 'string', pattern: '^[a-z]+$', 'x-kubernetes-validations': [{ rule: "self != 'forbidden'" }] },
    },
    { required: ['size', 'color', 'name'] },
  );

  it('init writes samples/<kind>.yaml and a test whose typed sample is the same object', async () => {
    const out = path.join(root, 'same');
    const report = await generator.init({ crds: [ps.write(path.join(root, 'inputs/widgets.yaml'), crd)], out });
    expect(report.written).toContain('samples/widget.yaml');
    const text = fs.readFileSync(path.join(out, 'samples/widget.yaml'), 'utf8');
    expect(text.split('\n')[0]).toBe('# A sample Widget (example.com/v1), written once by kopf-gen: yours to edit.');
    const fromYaml = yaml.parse(text) as unknown;
    expect(fromYaml).toEqual({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'example' }, spec: { size: 3, color: 'red', name: 'example' } });
    const testText = fs.readFileSync(path.join(out, 'test/widget.test.ts'), 'utf8');
    expect(testText).toContain('import { Widgets, type WidgetInput } from "../src/generated/widgets.example.com.v1.js";');
    const literal = /^const sample: WidgetInput = (\{[\s\S]*?\n\});$/m.exec(testText)?.[1];
    expect(literal, testText).toBeDefined();
    expect(new Function(`return (${literal});`)()).toEqual(fromYaml);
    expect(testText).toMatch(/client\.create\(Widgets, \{ \.\.\.sample, metadata: \{ \.\.\.sample\.metadata, namespace: NAMESPACE \} \}\)/);
  });

  it('says in the file and in the report what the sample may not meet', async () => {
    const out = path.join(root, 'notes');
    const report = await generator.init({ crds: [path.join(root, 'inputs/widgets.yaml')], out });
    const note = `spec.name: the validation rule "self != 'forbidden'" is not checked by the sample`;
    expect(report.notes).toContain(`samples/widget.yaml: ${note}`);
    expect(fs.readFileSync(path.join(out, 'samples/widget.yaml'), 'utf8')).toContain(`# - ${note}\n`);
  });

  it('are written once: regeneration keeps an edited sample byte-identical and does not bring back a deleted one', async () => {
    const out = path.join(root, 'once');
    await generator.init({ crds: [path.join(root, 'inputs/widgets.yaml')], out });
    const sample = path.join(out, 'samples/widget.yaml');
    const edited = `${fs.readFileSync(sample, 'utf8').replace('size: 3', 'size: 7')}# my own note\n`;
    fs.writeFileSync(sample, edited);
    const report = await generator.generate({ project: out });
    expect(report.written).not.toContain('samples/widget.yaml');
    expect(fs.readFileSync(sample, 'utf8')).toBe(edited);
    fs.rmSync(sample);
    await generator.generate({ project: out });
    expect(fs.existsSync(sample)).toBe(false);
  });

  it('add writes the sample of a new kind beside its stub, and leaves the others alone', async () => {
    const out = path.join(root, 'added');
    await generator.init({ crds: [path.join(root, 'inputs/widgets.yaml')], out });
    const before = fs.readFileSync(path.join(out, 'samples/widget.yaml'), 'utf8');
    const gizmos = ps.write(path.join(root, 'inputs/gizmos.yaml'), yaml.stringify(support.crd(undefined, { kind: 'Gizmo', scope: 'Cluster' })));
    const report = await generator.add({ project: out, crds: [gizmos] });
    expect(report.written).toContain('samples/gizmo.yaml');
    expect(report.written).not.toContain('samples/widget.yaml');
    expect(fs.readFileSync(path.join(out, 'samples/widget.yaml'), 'utf8')).toBe(before);
    const gizmo = yaml.parse(fs.readFileSync(path.join(out, 'samples/gizmo.yaml'), 'utf8')) as Json;
    expect(gizmo['metadata']).toEqual({ name: 'example' });
  });
});
