/**
 * Validation: the gate between "some YAML that looks like a CRD" and the model.
 *
 * The generator only promises types for what it understands, so anything it cannot map faithfully
 * stops the run here with a `GeneratorError` naming the file, the document index and the JSON
 * path — before a single file is written. The checks follow the API server's own notion of a
 * *structural schema* (apiextensions.k8s.io/v1): a `type` at every node except int-or-string and
 * preserve-unknown-fields nodes, no `$ref`, value-validation combinators (`allOf`, `anyOf`,
 * `oneOf`, `not`) that only validate and never declare types, defaults or descriptions.
 *
 * Only served versions are checked, because only served versions are emitted (modeling.ts skips
 * the rest). loading.ts raises the two errors that happen before a document is a CRD
 * (`not-yaml`, `not-a-crd`); this module raises the others.
 */
import * as errors from './errors.js';
import type * as loading from './loading.js';
import * as schemas from './schemas.js';

const MAX_DEPTH = 128;
const FORBIDDEN_IN_JUNCTORS = ['type', 'description', 'default', 'additionalProperties', 'nullable', 'title'];

/**
 * Checks one loaded CRD document and throws a `GeneratorError` on the first problem.
 *
 * @throws GeneratorError `unsupported-version` (not apiextensions.k8s.io/v1, e.g. v1beta1),
 *   `invalid-crd` (names, group, scope or versions missing or malformed), `no-schema` (a served
 *   version without `schema.openAPIV3Schema`), `non-structural`, `ref-not-allowed`, `unknown-type`.
 */
export function validateCrd(loaded: loading.LoadedCrd): void {
  const fail = (code: errors.GeneratorErrorCode, jsonPath: string, detail: string): never => {
    throw new errors.GeneratorError(code, { file: loaded.file, documentIndex: loaded.documentIndex, jsonPath }, detail);
  };
  const doc = loaded.document;
  const apiVersion = schemas.own(doc, 'apiVersion');
  if (apiVersion !== 'apiextensions.k8s.io/v1') {
    fail(
      'unsupported-version',
      'apiVersion',
      `unsupported CustomResourceDefinition version ${JSON.stringify(apiVersion)}; only apiextensions.k8s.io/v1 is supported (convert v1beta1 CRDs first)`,
    );
  }
  const spec = schemas.own(doc, 'spec');
  if (!schemas.isRecord(spec)) throw fail('invalid-crd', 'spec', 'a CustomResourceDefinition needs a spec mapping');
  requireString(spec, 'group', 'spec.group', fail);
  const names = schemas.own(spec, 'names');
  if (!schemas.isRecord(names)) throw fail('invalid-crd', 'spec.names', 'spec.names must be a mapping');
  requireString(names, 'kind', 'spec.names.kind', fail);
  requireString(names, 'plural', 'spec.names.plural', fail);
  const scope = schemas.own(spec, 'scope');
  if (scope !== 'Namespaced' && scope !== 'Cluster') {
    fail('invalid-crd', 'spec.scope', `scope must be "Namespaced" or "Cluster", not ${JSON.stringify(scope)}`);
  }
  const versions = schemas.own(spec, 'versions');
  if (!Array.isArray(versions) || versions.length === 0) throw fail('invalid-crd', 'spec.versions', 'spec.versions must be a non-empty list');
  versions.forEach((version: unknown, index) => {
    const path = `spec.versions[${index}]`;
    if (!schemas.isRecord(version)) throw fail('invalid-crd', path, 'a version must be a mapping');
    requireString(version, 'name', `${path}.name`, fail);
    if (typeof schemas.own(version, 'served') !== 'boolean') fail('invalid-crd', `${path}.served`, 'served must be true or false');
    if (schemas.own(version, 'served') !== true) return; // non-served versions are skipped, not checked
    const schema = schemas.own(version, 'schema');
    const root = schemas.isRecord(schema) ? schemas.own(schema, 'openAPIV3Schema') : undefined;
    const rootPath = `${path}.schema.openAPIV3Schema`;
    if (root === undefined) return fail('no-schema', rootPath, `served version ${JSON.stringify(version['name'])} has no schema.openAPIV3Schema`);
    if (!schemas.isRecord(root)) return fail('non-structural', rootPath, 'the schema must be a mapping');
    if (schemas.typeOf(root) !== 'object') {
      checkType(root, () => rootPath, fail);
      fail('non-structural', `${rootPath}.type`, 'the root of a structural schema must have type "object"');
    }
    checkNode(root, () => rootPath, { inJunctor: false, intOrString: false, depth: 0 }, fail);
  });
}

type Fail = (code: errors.GeneratorErrorCode, jsonPath: string, detail: string) => never;

/** A node's rendered JSON path, built only when a check fails (most nodes never need it). */
type At = () => string;

interface Walk {
  /** Inside `allOf`/`anyOf`/`oneOf`/`not`: a value validation, not a type declaration. */
  readonly inJunctor: boolean;
  /** Inside the combinators of an int-or-string node, where `type: integer|string` is allowed. */
  readonly intOrString: boolean;
  readonly depth: number;
}

function requireString(node: schemas.Schema, key: string, path: string, fail: Fail): void {
  const value = schemas.own(node, key);
  if (typeof value !== 'string' || value === '') fail('invalid-crd', path, `${key} must be a non-empty string`);
}

function checkType(node: schemas.Schema, at: At, fail: Fail): void {
  if (!Object.hasOwn(node, 'type')) return;
  const type = node['type'];
  if (schemas.typeOf(node) === undefined) fail('unknown-type', `${at()}.type`, `unknown type ${JSON.stringify(type)}`);
}

function checkNode(node: schemas.Schema, at: At, walk: Walk, fail: Fail): void {
  if (walk.depth > MAX_DEPTH) fail('non-structural', at(), `the schema is nested more than ${MAX_DEPTH} levels deep (or recursive)`);
  if (Object.hasOwn(node, '$ref')) fail('ref-not-allowed', schemas.childPath(at(), '$ref'), '$ref is not allowed in CRD schemas; inline the referenced schema');
  checkType(node, at, fail);
  const intOrString = schemas.flag(node, schemas.INT_OR_STRING);
  const preserve = schemas.flag(node, schemas.PRESERVE_UNKNOWN_FIELDS);
  const type = schemas.typeOf(node);
  if (walk.inJunctor) {
    for (const key of FORBIDDEN_IN_JUNCTORS) {
      const allowedType = key === 'type' && walk.intOrString && (type === 'integer' || type === 'string');
      if (Object.hasOwn(node, key) && !allowedType) {
        fail('non-structural', schemas.childPath(at(), key), `${key} must not be set inside allOf, anyOf, oneOf or not`);
      }
    }
  } else {
    if (type === undefined && !intOrString && !preserve) {
      fail(
        'non-structural',
        at(),
        'type is required (a structural schema needs a type at every node that is not x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields)',
      );
    }
    if (intOrString && type !== undefined) fail('non-structural', `${at()}.type`, 'type must be empty when x-kubernetes-int-or-string is true');
    if (schemas.flag(node, schemas.EMBEDDED_RESOURCE) && type !== 'object') {
      fail('non-structural', at(), 'x-kubernetes-embedded-resource requires type "object"');
    }
  }
  checkShapes(node, at, fail);
  const inner: Walk = { ...walk, depth: walk.depth + 1, intOrString: false };
  for (const [name, child] of schemas.propertiesOf(node)) {
    checkNode(child, () => schemas.childPath(schemas.childPath(at(), 'properties'), name), inner, fail);
  }
  const items = schemas.itemsOf(node);
  if (items) checkNode(items, () => `${at()}.items`, inner, fail);
  else if (type === 'array' && !walk.inJunctor) fail('non-structural', `${at()}.items`, 'an array must declare its items schema');
  const additional = schemas.additionalSchemaOf(node);
  if (additional) checkNode(additional, () => `${at()}.additionalProperties`, inner, fail);
  const junctorWalk: Walk = { inJunctor: true, intOrString: intOrString || walk.intOrString, depth: walk.depth + 1 };
  for (const junctor of schemas.JUNCTORS) {
    if (!Object.hasOwn(node, junctor)) continue;
    const value = node[junctor];
    if (junctor === 'not') {
      if (!schemas.isRecord(value)) fail('non-structural', `${at()}.not`, 'not must be a schema');
      else checkNode(value, () => `${at()}.not`, junctorWalk, fail);
      continue;
    }
    if (!Array.isArray(value)) fail('non-structural', `${at()}.${junctor}`, `${junctor} must be a list of schemas`);
    (value as unknown[]).forEach((branch, index) => {
      const branchPath = (): string => `${at()}.${junctor}[${index}]`;
      if (!schemas.isRecord(branch)) fail('non-structural', branchPath(), 'a combinator branch must be a schema');
      else checkNode(branch, branchPath, junctorWalk, fail);
    });
  }
}

/** Checks that keywords have the JSON shapes the later stages rely on. */
function checkShapes(node: schemas.Schema, at: At, fail: Fail): void {
  const properties = schemas.own(node, 'properties');
  if (properties !== undefined) {
    if (!schemas.isRecord(properties)) fail('non-structural', `${at()}.properties`, 'properties must be a mapping');
    for (const [name, child] of Object.entries(properties as schemas.Schema)) {
      if (!schemas.isRecord(child)) fail('non-structural', schemas.childPath(`${at()}.properties`, name), 'a property schema must be a mapping');
    }
  }
  const additional = schemas.own(node, 'additionalProperties');
  if (additional !== undefined && typeof additional !== 'boolean' && !schemas.isRecord(additional)) {
    fail('non-structural', `${at()}.additionalProperties`, 'additionalProperties must be a boolean or a schema');
  }
  if (schemas.hasProperties(node) && (additional === true || schemas.isRecord(additional))) {
    fail('non-structural', `${at()}.additionalProperties`, 'properties and additionalProperties are mutually exclusive');
  }
  const items = schemas.own(node, 'items');
  if (items !== undefined && !schemas.isRecord(items)) fail('non-structural', `${at()}.items`, 'items must be a single schema (tuples are not structural)');
  const required = schemas.own(node, 'required');
  if (required !== undefined && !(Array.isArray(required) && required.every((name) => typeof name === 'string'))) {
    fail('non-structural', `${at()}.required`, 'required must be a list of property names');
  }
  const nullable = schemas.own(node, 'nullable');
  if (nullable !== undefined && typeof nullable !== 'boolean') fail('non-structural', `${at()}.nullable`, 'nullable must be true or false');
  const enumeration = schemas.own(node, 'enum');
  if (enumeration !== undefined && !Array.isArray(enumeration)) fail('non-structural', `${at()}.enum`, 'enum must be a list');
  const validations = schemas.own(node, schemas.VALIDATIONS);
  if (validations !== undefined && !(Array.isArray(validations) && validations.every(schemas.isRecord))) {
    fail('non-structural', schemas.childPath(at(), schemas.VALIDATIONS), 'x-kubernetes-validations must be a list of rules');
  }
}
