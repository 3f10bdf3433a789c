import { describe, expect, it } from 'vitest';
import * as loading from '../../generator/loading.js';
import * as errors from '../../generator/errors.js';
import * as validating from '../../generator/validating.js';
import * as support from './support.js';

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
