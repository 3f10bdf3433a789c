/**
 * Validation refuses every CRD the API server would refuse (names, structural-schema rules, enum
 * values and defaults that do not fit, names claimed twice in a group) with the file, the document
 * index and the JSON path, before anything is written; and it keeps accepting what the server
 * accepts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as crdnames from '../../generator/crdnames.js';
import * as loading from '../../generator/loading.js';
import * as errors from '../../generator/errors.js';
import * as generator from '../../generator/index.js';
import * as limits from '../../generator/limits.js';
import * as pipeline from '../../generator/pipeline.js';
import * as validating from '../../generator/validating.js';
import * as support from './support.js';
import * as ps from './projects-support.js';

const SPEC = 'spec.versions[0].schema.openAPIV3Schema.properties.spec';

/** Validates the documents of one file (the CRD under test is the last one) and returns the error. */
function validationError(documents: readonly unknown[]): errors.GeneratorError {
  const { crds } = loading.loadCrdSources([support.source(documents, 'crds/widget.yaml')]);
  try {
    for (const crd of crds) validating.validateCrd(crd);
  } catch (error) {
    if (error instanceof errors.GeneratorError) return error;
    throw error;
  }
  throw new Error('expected a GeneratorError');
}

/** A valid CRD first, so the failing one is document 1: the index must be reported, not assumed. */
function secondDocumentError(spec: Record<string, unknown>, options: support.CrdOptions = {}): errors.GeneratorError {
  return validationError([support.crd({ type: 'object' }, { kind: 'Gadget' }), support.crd(spec, options)]);
}

describe('validateCrd', () => {
  it('accepts a structural CRD', () => {
    const { crds } = loading.loadCrdSources([support.fixture('gadgets.yaml'), support.fixture('oddities.yaml')]);
    for (const crd of crds) expect(() => validating.validateCrd(crd)).not.toThrow();
  });

  it('unknown-type: names file, document index and JSON path', () => {
    const error = secondDocumentError({ type: 'object', properties: { size: { type: 'integr' } } });
    expect(error.code).toBe('unknown-type');
    expect(error.documentIndex).toBe(1);
    expect(error.jsonPath).toBe(`${SPEC}.properties.size.type`);
    expect(error.message).toBe(`crds/widget.yaml, document 1, ${SPEC}.properties.size.type: unknown type "integr"`);
  });

  it('unsupported-version: rejects apiextensions.k8s.io/v1beta1 CRDs', () => {
    const legacy = { ...support.crd({ type: 'object' }), apiVersion: 'apiextensions.k8s.io/v1beta1' };
    const error = validationError([support.crd({ type: 'object' }, { kind: 'Gadget' }), legacy]);
    expect(error.code).toBe('unsupported-version');
    expect(error.message).toMatch(
      /^crds\/widget\.yaml, document 1, apiVersion: unsupported CustomResourceDefinition version "apiextensions\.k8s\.io\/v1beta1"/,
    );
  });

  it('invalid-crd: rejects a CRD without names.kind', () => {
    const broken = support.crd({ type: 'object' });
    (broken['spec'] as { names: Record<string, unknown> }).names = { plural: 'widgets' };
    const error = validationError([broken]);
    expect(error.code).toBe('invalid-crd');
    expect(error.message).toBe('crds/widget.yaml, document 0, spec.names.kind: kind must be a non-empty string');
  });

  it('no-schema: rejects a served version without openAPIV3Schema', () => {
    const error = secondDocumentError({ type: 'object' }, { versions: [{ name: 'v1', served: true, storage: true }] });
    expect(error.code).toBe('no-schema');
    expect(error.message).toBe('crds/widget.yaml, document 1, spec.versions[0].schema.openAPIV3Schema: served version "v1" has no schema.openAPIV3Schema');
  });

  it('no-schema is not raised for versions that are not served', () => {
    const versions = [
      { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
      { name: 'v0', served: false, storage: false },
    ];
    const { crds } = loading.loadCrdSources([support.source([support.crd(undefined, { versions })])]);
    expect(() => validating.validateCrd(crds[0]!)).not.toThrow();
  });

  it('non-structural: rejects a node without a type', () => {
    const error = secondDocumentError({ type: 'object', properties: { size: { description: 'no type' } } });
    expect(error.code).toBe('non-structural');
    expect(error.message).toMatch(new RegExp(`^crds/widget\\.yaml, document 1, ${escaped(SPEC)}\\.properties\\.size: type is required`));
  });

  it('non-structural: rejects types declared inside anyOf', () => {
    const error = secondDocumentError({ type: 'object', properties: { size: { type: 'string', anyOf: [{ type: 'integer' }] } } });
    expect(error.code).toBe('non-structural');
    expect(error.jsonPath).toBe(`${SPEC}.properties.size.anyOf[0].type`);
  });

  it('non-structural: rejects arrays without items and properties with additionalProperties', () => {
    const array = secondDocumentError({ type: 'object', properties: { list: { type: 'array' } } });
    expect(array.message).toBe(`crds/widget.yaml, document 1, ${SPEC}.properties.list.items: an array must declare its items schema`);
    const both = secondDocumentError({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } });
    expect(both.jsonPath).toBe(`${SPEC}.additionalProperties`);
  });

  it('non-structural: allows untyped int-or-string and preserve-unknown-fields nodes, and types inside int-or-string anyOf', () => {
    const { crds } = loading.loadCrdSources([
      support.source([
        support.crd({
          type: 'object',
          properties: {
            port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
            values: { 'x-kubernetes-preserve-unknown-fields': true },
            exclusive: { type: 'object', properties: { a: { type: 'string' } }, oneOf: [{ required: ['a'] }, { not: { properties: { a: {} } } }] },
          },
        }),
      ]),
    ]);
    expect(() => validating.validateCrd(crds[0]!)).not.toThrow();
  });

  it('ref-not-allowed: rejects $ref with the path of the reference', () => {
    const error = secondDocumentError({ type: 'object', properties: { template: { $ref: '#/definitions/PodTemplate' } } });
    expect(error.code).toBe('ref-not-allowed');
    expect(error.message).toMatch(new RegExp(`^crds/widget\\.yaml, document 1, ${escaped(SPEC)}\\.properties\\.template\\.\\$ref: \\$ref is not allowed`));
  });

  it('reports property names that are not identifiers in brackets', () => {
    const error = secondDocumentError({ type: 'object', properties: { 'rbd-mirror': { type: 'strin' } } });
    expect(error.jsonPath).toBe(`${SPEC}.properties["rbd-mirror"].type`);
  });

  it('carries the error fields on the error object', () => {
    const error = secondDocumentError({ type: 'object', properties: { size: { type: 'integr' } } });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('GeneratorError');
    expect(error.file).toBe('crds/widget.yaml');
    expect(error.detail).toBe('unknown type "integr"');
  });
});

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const ROOT = 'spec.versions[0].schema.openAPIV3Schema';

/** A CRD document whose spec.names (and the object name, kept `<plural>.<group>`) are changed. */
function renamed(names: Record<string, unknown>, options: { group?: string; name?: string } = {}): Record<string, unknown> {
  const document = support.crd({ type: 'object' });
  const spec = document['spec'] as { group: string; names: Record<string, unknown> };
  spec.names = { ...spec.names, ...names };
  if (options.group !== undefined) spec.group = options.group;
  document['metadata'] = { name: options.name ?? `${String(spec.names['plural'])}.${spec.group}` };
  return document;
}

/** A CRD whose only version has the given root schema. */
function withRoot(root: Record<string, unknown>): Record<string, unknown> {
  return support.crd(undefined, { root });
}

/** A CRD whose spec holds one list `ports` with the given list extensions and item schema. */
function withList(list: Record<string, unknown>): Record<string, unknown> {
  return support.crd({ type: 'object', properties: { ports: { type: 'array', ...list } } });
}

const portItems = { type: 'object', required: ['port'], properties: { name: { type: 'string' }, port: { type: 'integer' } } };

interface BadCase {
  readonly name: string;
  /** The documents of each input file (the first file holds a valid Gadget first, so indices are reported, not assumed). */
  readonly files: readonly (readonly unknown[])[];
  readonly code: string;
  readonly file?: number;
  readonly jsonPath: string;
  /** A part of the detail: what is wrong or how to fix it. */
  readonly says: string;
}

const gadget = support.crd({ type: 'object' }, { kind: 'Gadget' });
const single = (document: unknown): (readonly unknown[])[] => [[gadget, document]];

const BAD: readonly BadCase[] = [
  {
    name: 'additionalProperties: false',
    files: single(support.crd({ type: 'object', properties: { labels: { type: 'object', additionalProperties: false } } })),
    code: 'non-structural',
    jsonPath: `${SPEC}.properties.labels.additionalProperties`,
    says: 'additionalProperties: false is not allowed in CRD schemas',
  },
  {
    name: 'additionalProperties: false beside properties',
    files: single(support.crd({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false })),
    code: 'non-structural',
    jsonPath: `${SPEC}.additionalProperties`,
    says: 'remove it',
  },
  {
    name: 'additionalProperties at the root',
    files: single(withRoot({ type: 'object', additionalProperties: { type: 'string' } })),
    code: 'non-structural',
    jsonPath: `${ROOT}.additionalProperties`,
    says: 'must not be used at the root',
  },
  {
    name: 'an enum value of another type',
    files: single(support.crd({ type: 'object', properties: { size: { type: 'string', enum: ['small', 1] } } })),
    code: 'invalid-enum',
    jsonPath: `${SPEC}.properties.size.enum[1]`,
    says: 'enum value 1 must be of type string, not the integer 1; quote it',
  },
  {
    name: 'a default of the wrong type',
    files: single(support.crd({ type: 'object', properties: { replicas: { type: 'integer', default: 'three' } } })),
    code: 'invalid-default',
    jsonPath: `${SPEC}.properties.replicas.default`,
    says: 'the default must be of type integer, not the string "three"',
  },
  {
    name: 'a default outside the enum',
    files: single(support.crd({ type: 'object', properties: { mode: { type: 'string', enum: ['a', 'b'], default: 'c' } } })),
    code: 'invalid-default',
    jsonPath: `${SPEC}.properties.mode.default`,
    says: '"c" is not one of the enum values "a", "b"',
  },
  {
    name: 'a default object whose property has the wrong type',
    files: single(
      support.crd({ type: 'object', properties: { limits: { type: 'object', properties: { cpu: { type: 'integer' } }, default: { cpu: 'lots' } } } }),
    ),
    code: 'invalid-default',
    jsonPath: `${SPEC}.properties.limits.default.cpu`,
    says: 'must be of type integer',
  },
  {
    name: 'a default object without a required field',
    files: single(
      support.crd({
        type: 'object',
        properties: {
          tls: { type: 'object', required: ['secret'], properties: { secret: { type: 'string' }, port: { type: 'integer' } }, default: { port: 443 } },
        },
      }),
    ),
    code: 'invalid-default',
    jsonPath: `${SPEC}.properties.tls.default`,
    says: 'misses the required field "secret"',
  },
  {
    name: 'a default with an unknown field',
    files: single(
      support.crd({ type: 'object', properties: { limits: { type: 'object', properties: { cpu: { type: 'integer' } }, default: { cpu: 1, gpu: 2 } } } }),
    ),
    code: 'invalid-default',
    jsonPath: `${SPEC}.properties.limits.default.gpu`,
    says: 'defaults must not hold unknown fields',
  },
  {
    name: 'a null default item of a non-nullable list',
    files: single(support.crd({ type: 'object', properties: { names: { type: 'array', items: { type: 'string' }, default: ['a', null] } } })),
    code: 'invalid-default',
    jsonPath: `${SPEC}.properties.names.default[1]`,
    says: 'is null, but the field is not nullable',
  },
  {
    name: 'a default in the top-level metadata',
    files: single(
      withRoot({
        type: 'object',
        properties: { metadata: { type: 'object', properties: { name: { type: 'string', default: 'fixed' } } }, spec: { type: 'object' } },
      }),
    ),
    code: 'invalid-default',
    jsonPath: `${ROOT}.properties.metadata.properties.name.default`,
    says: 'defaults are not allowed in the top-level metadata',
  },
  {
    name: 'a top-level metadata restricting labels',
    files: single(withRoot({ type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } })),
    code: 'non-structural',
    jsonPath: `${ROOT}.properties.metadata.properties.labels`,
    says: 'the top-level metadata may restrict only name and generateName',
  },
  {
    name: 'a top-level metadata with other keywords',
    files: single(withRoot({ type: 'object', properties: { metadata: { type: 'object', description: 'Object metadata.' } } })),
    code: 'non-structural',
    jsonPath: `${ROOT}.properties.metadata.description`,
    says: 'only type "object" and schemas for name and generateName are allowed there',
  },
  {
    name: 'a top-level kind that is not a string',
    files: single(withRoot({ type: 'object', properties: { kind: { type: 'integer' } } })),
    code: 'non-structural',
    jsonPath: `${ROOT}.properties.kind.type`,
    says: 'kind must have type "string"',
  },
  {
    name: 'a nullable root',
    files: single(withRoot({ type: 'object', nullable: true })),
    code: 'non-structural',
    jsonPath: `${ROOT}.nullable`,
    says: 'must not be nullable',
  },
  {
    name: 'a kind that is not a DNS label',
    files: single(renamed({ kind: 'Wid-gét', plural: 'widgets', singular: 'widget' })),
    code: 'invalid-crd',
    jsonPath: 'spec.names.kind',
    says: 'kind "Wid-gét" may mix cases but must otherwise be lower-case letters, digits and "-"',
  },
  {
    name: 'an upper-case plural',
    files: single(renamed({ plural: 'Widgets' })),
    code: 'invalid-crd',
    jsonPath: 'spec.names.plural',
    says: 'plural "Widgets" must be lower-case letters',
  },
  {
    name: 'a singular with an underscore',
    files: single(renamed({ singular: 'my_widget' })),
    code: 'invalid-crd',
    jsonPath: 'spec.names.singular',
    says: 'singular "my_widget" must be',
  },
  {
    name: 'a listKind equal to the kind',
    files: single(renamed({ listKind: 'Widget' })),
    code: 'invalid-crd',
    jsonPath: 'spec.names.listKind',
    says: 'listKind must differ from kind "Widget"',
  },
  {
    name: 'a short name that is not a DNS label',
    files: single(renamed({ shortNames: ['wd', 'W'] })),
    code: 'invalid-crd',
    jsonPath: 'spec.names.shortNames[1]',
    says: '"W" must be lower-case letters',
  },
  {
    name: 'an object name other than <plural>.<group>',
    files: single(renamed({}, { name: 'widget.example.com' })),
    code: 'invalid-crd',
    jsonPath: 'metadata.name',
    says: 'the CRD must be named "widgets.example.com" (<plural>.<group>), not "widget.example.com"',
  },
  {
    name: 'a group without a dot',
    files: single(renamed({}, { group: 'example' })),
    code: 'invalid-crd',
    jsonPath: 'spec.group',
    says: 'must be a domain with at least one dot',
  },
  {
    name: 'a group that is not a DNS subdomain',
    files: single(renamed({}, { group: 'Example.com' })),
    code: 'invalid-crd',
    jsonPath: 'spec.group',
    says: 'is not a DNS subdomain',
  },
  {
    name: 'a version name that is not a DNS label',
    files: single(support.crd(undefined, { versions: [{ name: 'V1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }] })),
    code: 'invalid-crd',
    jsonPath: 'spec.versions[0].name',
    says: 'version name "V1" must be lower-case letters',
  },
  {
    name: 'two storage versions',
    files: single(
      support.crd(undefined, {
        versions: [
          { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
          { name: 'v2', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
        ],
      }),
    ),
    code: 'invalid-crd',
    jsonPath: 'spec.versions',
    says: 'exactly one version must have storage: true (found 2)',
  },
  {
    name: 'uniqueItems: true',
    files: single(support.crd({ type: 'object', properties: { tags: { type: 'array', items: { type: 'string' }, uniqueItems: true } } })),
    code: 'non-structural',
    jsonPath: `${SPEC}.properties.tags.uniqueItems`,
    says: 'use x-kubernetes-list-type: set',
  },
  {
    name: 'x-kubernetes-int-or-string with a type',
    files: single(support.crd({ type: 'object', properties: { port: { type: 'string', 'x-kubernetes-int-or-string': true } } })),
    code: 'non-structural',
    jsonPath: `${SPEC}.properties.port.type`,
    says: 'type must be empty when x-kubernetes-int-or-string is true',
  },
  {
    name: 'x-kubernetes-int-or-string with preserve-unknown-fields',
    files: single(support.crd({ type: 'object', properties: { port: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-preserve-unknown-fields': true } } })),
    code: 'non-structural',
    jsonPath: `${SPEC}.properties.port["x-kubernetes-preserve-unknown-fields"]`,
    says: 'must not be set on an x-kubernetes-int-or-string node',
  },
  {
    name: 'x-kubernetes-preserve-unknown-fields: false',
    files: single(support.crd({ type: 'object', properties: { extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': false } } })),
    code: 'non-structural',
    jsonPath: `${SPEC}.properties.extra["x-kubernetes-preserve-unknown-fields"]`,
    says: 'must be true or left out',
  },
  {
    name: 'x-kubernetes-embedded-resource without type object',
    files: single(support.crd({ type: 'object', properties: { template: { type: 'string', 'x-kubernetes-embedded-resource': true } } })),
    code: 'non-structural',
    jsonPath: `${SPEC}.properties.template`,
    says: 'x-kubernetes-embedded-resource requires type "object"',
  },
  {
    name: 'x-kubernetes-embedded-resource without properties',
    files: single(support.crd({ type: 'object', properties: { template: { type: 'object', 'x-kubernetes-embedded-resource': true } } })),
    code: 'non-structural',
    jsonPath: `${SPEC}.properties.template.properties`,
    says: 'or x-kubernetes-preserve-unknown-fields: true',
  },
  {
    name: 'an array without items',
    files: single(support.crd({ type: 'object', properties: { list: { type: 'array' } } })),
    code: 'non-structural',
    jsonPath: `${SPEC}.properties.list.items`,
    says: 'an array must declare its items schema',
  },
  {
    name: 'x-kubernetes-list-type: map without keys',
    files: single(withList({ 'x-kubernetes-list-type': 'map', items: portItems })),
    code: 'non-structural',
    jsonPath: `${SPEC}.properties.ports["x-kubernetes-list-map-keys"]`,
    says: 'needs x-kubernetes-list-map-keys',
  },
  {
    name: 'a list map key that is not a property',
    files: single(withList({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['protocol'], items: portItems })),
    code: 'non-structural',
    jsonPath: `${SPEC}.properties.ports["x-kubernetes-list-map-keys"][0]`,
    says: 'list map key "protocol" is not a property of the items',
  },
  {
    name: 'a list map key that is neither required nor defaulted',
    files: single(withList({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: portItems })),
    code: 'non-structural',
    jsonPath: `${SPEC}.properties.ports.items.properties.name`,
    says: 'must be required by the items or have a default',
  },
  {
    name: 'a list map key that is nullable',
    files: single(
      withList({
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['port'],
        items: { ...portItems, properties: { port: { type: 'integer', nullable: true } } },
      }),
    ),
    code: 'non-structural',
    jsonPath: `${SPEC}.properties.ports.items.properties.port.nullable`,
    says: 'must not be nullable',
  },
  {
    name: 'x-kubernetes-list-map-keys without list type map',
    files: single(withList({ 'x-kubernetes-list-map-keys': ['port'], items: portItems })),
    code: 'non-structural',
    jsonPath: `${SPEC}.properties.ports["x-kubernetes-list-type"]`,
    says: 'must be "map" when x-kubernetes-list-map-keys is set',
  },
  {
    name: 'one kind under two plurals of a group, in two files',
    files: [[gadget], [support.crd({ type: 'object' }), support.crd({ type: 'object' }, { kind: 'Gadget', plural: 'gizmos' })]],
    file: 1,
    code: 'names-conflict',
    jsonPath: 'spec.names.kind',
    says: 'kind "Gadget" is already taken by gadgets.example.com (crds/file-0.yaml, document 0) in group example.com',
  },
];

/** The inputs of a case as sources named `crds/file-<i>.yaml`. */
function sourcesOf(files: readonly (readonly unknown[])[]): loading.SourceText[] {
  return files.map((documents, index) => support.source(documents, `crds/file-${index}.yaml`));
}

describe('validation like the API server', () => {
  const root = ps.tempDir('kopf-gen-validating-');
  afterAll(() => ps.cleanup(root));

  it.each(BAD)('$name: $code with file, document and JSON path, and nothing written', async (bad) => {
    const fileIndex = bad.file ?? 0;
    const documentIndex = bad.files[fileIndex]!.length - 1;
    const sources = sourcesOf(bad.files);
    let error: unknown;
    try {
      pipeline.check(sources);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(errors.GeneratorError);
    const problem = error as errors.GeneratorError;
    expect(problem.code).toBe(bad.code);
    expect(problem).toMatchObject({ file: `crds/file-${fileIndex}.yaml`, documentIndex, jsonPath: bad.jsonPath });
    expect(problem.message.startsWith(`crds/file-${fileIndex}.yaml, document ${documentIndex}, ${bad.jsonPath}: `)).toBe(true);
    expect(problem.detail).toContain(bad.says);

    const dir = path.join(root, bad.name.replace(/\W+/g, '-'));
    const files = sources.map((source) => ps.write(path.join(dir, 'inputs', path.basename(source.path)), source.text));
    const out = path.join(dir, 'out', 'project');
    await expect(generator.init({ crds: files, out })).rejects.toMatchObject({ code: bad.code, file: files[fileIndex], documentIndex, jsonPath: bad.jsonPath });
    expect(fs.existsSync(path.dirname(out))).toBe(false);
  });

  it('a kind the project already has, under another plural, is refused for the new CRD', () => {
    const present = loading.loadCrdSources([support.source([gadget], 'crds/gadgets.yaml')]).crds;
    const given = loading.loadCrdSources([support.source([support.crd({ type: 'object' }, { kind: 'Gadget', plural: 'gizmos' })], 'new/gizmos.yaml')]).crds;
    expect(() => crdnames.checkNameConflicts(given, present)).toThrow(
      expect.objectContaining({ code: 'names-conflict', file: 'new/gizmos.yaml', documentIndex: 0, jsonPath: 'spec.names.kind' }),
    );
    expect(() => crdnames.checkNameConflicts(given)).not.toThrow();
  });

  it('`add` of a CRD whose kind the project already has under another plural writes nothing', async () => {
    const dir = ps.tempDir('kopf-gen-add-conflict-');
    try {
      const project = path.join(dir, 'project');
      await generator.init({ crds: [{ path: 'gadgets.yaml', text: support.source([gadget]).text }], out: project });
      const before = ps.snapshot(project);
      const gizmos = ps.write(path.join(dir, 'gizmos.yaml'), support.source([support.crd({ type: 'object' }, { kind: 'Gadget', plural: 'gizmos' })]).text);
      await expect(generator.add({ project, crds: [gizmos] })).rejects.toMatchObject({ code: 'names-conflict', jsonPath: 'spec.names.kind' });
      expect(ps.snapshot(project)).toEqual(before);
    } finally {
      ps.cleanup(dir);
    }
  });

  it('names of one group conflict by plural, singular, short names and list kind, as the naming check decides', () => {
    const claim = (kind: string, plural: string, names: Record<string, unknown> = {}): loading.LoadedCrd => ({
      file: `crds/${plural}.yaml`,
      documentIndex: 0,
      document: renamed({ kind, plural, singular: kind.toLowerCase(), ...names }),
    });
    const pathOf = (first: loading.LoadedCrd, second: loading.LoadedCrd): string | undefined => {
      try {
        crdnames.checkNameConflicts([first, second]);
        return undefined;
      } catch (error) {
        return (error as errors.GeneratorError).jsonPath;
      }
    };
    const widget = claim('Widget', 'widgets', { shortNames: ['wd'] });
    expect(pathOf(widget, claim('Gizmo', 'gizmos', { shortNames: ['wd'] }))).toBe('spec.names.shortNames[0]');
    expect(pathOf(widget, claim('Gizmo', 'gizmos', { singular: 'widgets' }))).toBe('spec.names.singular');
    expect(pathOf(widget, claim('Gizmo', 'wd'))).toBe('spec.names.plural');
    expect(pathOf(widget, claim('Gizmo', 'gizmos', { listKind: 'WidgetList' }))).toBe('spec.names.listKind');
    expect(pathOf(widget, claim('Gizmo', 'gizmos'))).toBeUndefined();
    const otherGroup = { ...claim('Widget', 'widgets'), document: renamed({}, { group: 'other.example.com' }) };
    expect(pathOf(widget, otherGroup)).toBeUndefined(); // another group may reuse every name
  });

  it('accepts what the API server accepts: nested defaults that fit, open objects, list maps with defaulted keys, default: null', () => {
    const spec = {
      type: 'object',
      properties: {
        limits: {
          type: 'object',
          required: ['cpu'],
          properties: {
            cpu: { type: 'integer' },
            mode: { type: 'string', enum: ['fast', 'slow'] },
            extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          },
          default: { cpu: 1, mode: 'fast', extra: { anything: [1, 'two'] } },
        },
        labels: { type: 'object', additionalProperties: { type: 'string' }, default: { team: 'a' } },
        port: { 'x-kubernetes-int-or-string': true, default: 'http' },
        size: { type: 'integer', enum: [1, 2, null], nullable: true, default: 2 },
        note: { type: 'string', default: null },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { ...portItems, properties: { ...portItems.properties, name: { type: 'string', default: 'main' } } },
        },
        template: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          'x-kubernetes-preserve-unknown-fields': true,
          default: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' } },
        },
      },
    };
    const root = { type: 'object', properties: { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 20 } } }, spec } };
    expect(() => pipeline.check([support.source([support.crd(undefined, { root })])])).not.toThrow();
    const { modules } = support.generate([support.source([support.crd(undefined, { root })])]);
    expect(modules[0]!.text).toMatch(/\bnote\?: string;/); // default: null is no default: the field stays optional
  });
});

describe('a schema larger than the generated types can carry', () => {
  // TypeScript refuses the union of an object's field paths at 100,000 members (TS2590, reproduced
  // with 110,000 properties: 4 minutes of generation, then 79 s of tsc to fail). Running tsc on
  // such a project is too slow for a test, so these check the property the refusal guards — the
  // number of field paths the runtime's FieldPathOf spells out — and that it is refused before
  // anything is emitted.
  const wide = (count: number, extra: Record<string, unknown> = {}): Record<string, unknown> => {
    const properties: Record<string, unknown> = { ...extra };
    for (let index = Object.keys(extra).length; index < count; index += 1) properties[`f${index}`] = { type: 'string' };
    return { type: 'object', properties };
  };
  /** The CRD document directly (no YAML round trip: fast even at 200,000 properties). */
  const loaded = (spec: Record<string, unknown>): loading.LoadedCrd => ({ file: 'crds/widget.yaml', documentIndex: 0, document: support.crd(spec) });

  it('too-many-fields: 205,764 properties in spec are refused, naming the CRD, the version and spec', () => {
    const error = (() => {
      try {
        validating.validateCrd(loaded(wide(205_764)));
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(errors.GeneratorError);
    expect(error).toMatchObject({ code: 'too-many-fields', file: 'crds/widget.yaml', documentIndex: 0, jsonPath: SPEC });
    expect((error as Error).message).toContain('widgets.example.com v1: 205,764 field paths here, more than the 50,000');
    expect((error as Error).message.split('\n')).toHaveLength(1);
    // (How long this takes is a benchmark's business, not a test's: it failed on a busy machine.)
  });

  it('counts paths as FieldPathOf does: nested objects and maps count, list items and levels past nine do not', () => {
    const leaf = { type: 'string' };
    const nested = { type: 'object', properties: { a: leaf, b: { type: 'object', properties: { c: leaf } } } };
    const list = { type: 'array', items: { type: 'object', properties: { x: leaf, y: leaf } } };
    const map = { type: 'object', additionalProperties: { type: 'object', properties: { z: leaf } } };
    expect(limits.countFieldPaths({ type: 'object', properties: { nested, list, map } })).toBe(4 + 1 + 3);
    let deep: Record<string, unknown> = leaf;
    for (let level = 0; level < 12; level += 1) deep = { type: 'object', properties: { d: deep } };
    expect(limits.countFieldPaths(deep)).toBe(9);
  });

  it('accepts a body of exactly the limit (49,990 properties type-check), refuses one path more, naming the deepest object past it', () => {
    // The body: spec, status, status.phase, and spec's properties.
    const atLimit = limits.MAX_FIELD_PATHS - 3;
    expect(() => validating.validateCrd(loaded(wide(atLimit)))).not.toThrow();
    // Spread over spec and status, no one object is past the limit: the schema's root is named.
    const root = 'spec.versions[0].schema.openAPIV3Schema';
    expect(() => validating.validateCrd(loaded(wide(atLimit + 1)))).toThrow(expect.objectContaining({ code: 'too-many-fields', jsonPath: root }));
    const inner = wide(limits.MAX_FIELD_PATHS + 1);
    expect(() => validating.validateCrd(loaded(wide(1, { inner })))).toThrow(
      expect.objectContaining({ code: 'too-many-fields', jsonPath: `${SPEC}.properties.inner` }),
    );
  });
});
