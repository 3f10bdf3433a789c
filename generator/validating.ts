/**
 * Validation: the gate between "some YAML that looks like a CRD" and the model.
 *
 * The generator only promises types for what it understands and for what the API server accepts,
 * so anything else stops the run here with a `GeneratorError` naming the file, the document index
 * and the JSON path — before a single file is written. The checks follow the API server's own
 * validation of apiextensions.k8s.io/v1 CRDs: names (crdnames.ts), one storage version, and a
 * *structural schema* — a `type` at every node except int-or-string and preserve-unknown-fields
 * nodes, no `$ref`, value-validation combinators (`allOf`, `anyOf`, `oneOf`, `not`) that only
 * validate and never declare types, defaults, descriptions or Kubernetes extensions, no
 * `additionalProperties: false`, no `uniqueItems: true`, a top-level `metadata` that restricts
 * only `name` and `generateName`, embedded resources and list/map extensions used the way the
 * server requires — plus enum values and defaults that fit their schema (defaults.ts), and a size
 * the generated types can carry (limits.ts).
 *
 * Only served versions are checked, because only served versions are emitted (modeling.ts skips
 * the rest). loading.ts raises the errors that happen before a document is a CRD (`not-yaml`,
 * `cyclic-alias`, `not-a-crd`); this module raises the others, except the conflicts between the
 * CRDs of one group, which need all the CRDs at once (`crdnames.checkNameConflicts`).
 */
import * as crdnames from './crdnames.js';
import * as defaults from './defaults.js';
import * as errors from './errors.js';
import * as limits from './limits.js';
import * as loading from './loading.js';
import * as schemas from './schemas.js';

const MAX_DEPTH = 128;
const FORBIDDEN_IN_JUNCTORS = [
  'type',
  'description',
  'default',
  'additionalProperties',
  'nullable',
  'title',
  schemas.PRESERVE_UNKNOWN_FIELDS,
  schemas.EMBEDDED_RESOURCE,
  schemas.INT_OR_STRING,
  schemas.LIST_TYPE,
  schemas.LIST_MAP_KEYS,
  schemas.MAP_TYPE,
  schemas.VALIDATIONS,
];
/** OpenAPI keywords the API server does not support in CRD schemas at all. */
const UNSUPPORTED = ['id', '$schema', 'patternProperties', 'dependencies', 'additionalItems', 'definitions'];
/** The fields of a resource's type and object metadata, at the root and in embedded resources. */
const META_FIELDS = ['apiVersion', 'kind', 'metadata'];
/** What a top-level `metadata` schema may hold besides `type: object` and its name and generateName. */
const ROOT_METADATA_ALLOWED = new Set(['type', 'properties', 'example', 'externalDocs']);

/**
 * Checks one loaded CRD document and throws a `GeneratorError` on the first problem.
 *
 * @throws GeneratorError `unsupported-version` (not apiextensions.k8s.io/v1, e.g. v1beta1),
 *   `invalid-crd` (names, group, scope or versions missing or malformed, or names the API server
 *   refuses), `no-schema` (a served version without `schema.openAPIV3Schema`), `non-structural`,
 *   `ref-not-allowed`, `unknown-type`, `invalid-enum` (an enum value of another type than its
 *   node's), `invalid-default` (a default the schema refuses, or one where defaults are forbidden),
 *   `too-many-fields` (a schema with more field paths than the types can carry, limits.ts).
 */
export function validateCrd(loaded: loading.LoadedCrd): void {
  const fail = (code: errors.GeneratorErrorCode, jsonPath: string, detail: string): never => {
    throw new errors.GeneratorError(code, loading.locate(loaded, jsonPath), detail);
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
  crdnames.checkNames(doc, fail);
  const scope = schemas.own(spec, 'scope');
  if (scope !== 'Namespaced' && scope !== 'Cluster') {
    fail('invalid-crd', 'spec.scope', `scope must be "Namespaced" or "Cluster", not ${JSON.stringify(scope)}`);
  }
  const versions = schemas.own(spec, 'versions');
  if (!Array.isArray(versions) || versions.length === 0) throw fail('invalid-crd', 'spec.versions', 'spec.versions must be a non-empty list');
  checkVersionNames(versions, fail);
  versions.forEach((version: unknown, index) => {
    const path = `spec.versions[${index}]`;
    if (!schemas.isRecord(version)) throw fail('invalid-crd', path, 'a version must be a mapping');
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
    if (schemas.own(root, 'nullable') === true) fail('non-structural', `${rootPath}.nullable`, 'the root of the schema must not be nullable; remove nullable');
    if (Object.hasOwn(root, 'additionalProperties')) {
      fail(
        'non-structural',
        `${rootPath}.additionalProperties`,
        'additionalProperties must not be used at the root of the schema; declare spec and status as properties',
      );
    }
    checkNode(root, () => rootPath, ROOT_WALK, fail);
    if (limits.countFieldPaths(root) > limits.MAX_FIELD_PATHS) {
      const { jsonPath, count } = limits.largestObject(root, rootPath);
      fail(
        'too-many-fields',
        jsonPath,
        `${String(names['plural'])}.${String(spec['group'])} ${String(version['name'])}: ${count.toLocaleString('en-US')} field paths here, more than the ` +
          `${limits.MAX_FIELD_PATHS.toLocaleString('en-US')} the generated types can carry (TypeScript cannot check the union of a body's field paths ` +
          'past that: error TS2590); split the object, or drop the properties of a large part and mark it `x-kubernetes-preserve-unknown-fields: true`',
      );
    }
  });
}

const ROOT_WALK: Walk = { inJunctor: false, intOrString: false, depth: 0, root: true, topMeta: undefined, resourceMeta: false, underAdditional: false };

/** Version names are DNS-1035 labels, unique, and exactly one version is the storage version. */
function checkVersionNames(versions: readonly unknown[], fail: Fail): void {
  const seen = new Map<string, number>();
  let storage = 0;
  versions.forEach((version, index) => {
    const path = `spec.versions[${index}]`;
    if (!schemas.isRecord(version)) throw fail('invalid-crd', path, 'a version must be a mapping');
    requireString(version, 'name', `${path}.name`, fail);
    const name = version['name'] as string;
    if (!crdnames.isLabel(name)) {
      fail(
        'invalid-crd',
        `${path}.name`,
        `version name ${JSON.stringify(name)} must be lower-case letters, digits and "-", starting with a letter (e.g. "v1", "v1beta2")`,
      );
    }
    const before = seen.get(name);
    if (before !== undefined)
      fail('invalid-crd', `${path}.name`, `version ${JSON.stringify(name)} is already declared as spec.versions[${before}]; version names must be unique`);
    seen.set(name, index);
    const stored = schemas.own(version, 'storage');
    if (stored !== undefined && typeof stored !== 'boolean') fail('invalid-crd', `${path}.storage`, 'storage must be true or false');
    if (stored === true) storage += 1;
  });
  if (storage !== 1) {
    fail('invalid-crd', 'spec.versions', `exactly one version must have storage: true (found ${storage}); the API server stores objects in that version`);
  }
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
  /** The schema's root node (not in a combinator). */
  readonly root: boolean;
  /** Inside the top-level `apiVersion`, `kind` or `metadata` (its name), where defaults are refused. */
  readonly topMeta: string | undefined;
  /** Inside the `apiVersion`, `kind` or `metadata` of the resource or of an embedded resource. */
  readonly resourceMeta: boolean;
  /** Below an `additionalProperties` schema, where the server does not validate defaults. */
  readonly underAdditional: boolean;
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
  for (const key of UNSUPPORTED) {
    if (Object.hasOwn(node, key)) fail('non-structural', schemas.childPath(at(), key), `${key} is not supported in CRD schemas; remove it`);
  }
  checkType(node, at, fail);
  const intOrString = schemas.flag(node, schemas.INT_OR_STRING);
  const preserve = schemas.flag(node, schemas.PRESERVE_UNKNOWN_FIELDS);
  const embedded = schemas.flag(node, schemas.EMBEDDED_RESOURCE);
  const type = schemas.typeOf(node);
  if (walk.inJunctor) {
    for (const key of FORBIDDEN_IN_JUNCTORS) {
      const allowedType = key === 'type' && walk.intOrString && (type === 'integer' || type === 'string');
      if (Object.hasOwn(node, key) && !allowedType) {
        fail('non-structural', schemas.childPath(at(), key), `${key} must not be set inside allOf, anyOf, oneOf or not`);
      }
    }
    const properties = schemas.own(node, 'properties');
    if (schemas.isRecord(properties) && Object.hasOwn(properties, 'metadata')) {
      fail(
        'non-structural',
        schemas.childPath(schemas.childPath(at(), 'properties'), 'metadata'),
        'metadata must not be restricted inside allOf, anyOf, oneOf or not',
      );
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
    checkExtensions(node, at, walk, fail);
    checkLists(node, at, fail);
    checkEnum(node, at, fail);
    checkDefault(node, at, walk, fail);
  }
  checkShapes(node, at, fail);
  const inner: Walk = { ...walk, depth: walk.depth + 1, intOrString: false, root: false };
  for (const [name, child] of schemas.propertiesOf(node)) {
    const childAt = (): string => schemas.childPath(schemas.childPath(at(), 'properties'), name);
    const meta = !walk.inJunctor && (walk.root || embedded) && META_FIELDS.includes(name);
    if (meta) checkMetaField(name, child, childAt, walk.root, fail);
    const childWalk: Walk = meta ? { ...inner, resourceMeta: true, topMeta: walk.root ? name : walk.topMeta } : inner;
    checkNode(child, childAt, childWalk, fail);
  }
  const items = schemas.itemsOf(node);
  if (items) checkNode(items, () => `${at()}.items`, inner, fail);
  else if (type === 'array' && !walk.inJunctor) fail('non-structural', `${at()}.items`, 'an array must declare its items schema');
  const additional = schemas.additionalSchemaOf(node);
  if (additional) checkNode(additional, () => `${at()}.additionalProperties`, { ...inner, underAdditional: true }, fail);
  const junctorWalk: Walk = { ...inner, inJunctor: true, intOrString: intOrString || walk.intOrString };
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

/**
 * The `apiVersion`, `kind` and `metadata` of the resource (and of embedded resources) describe
 * fields the API server owns: `apiVersion` and `kind` are strings, `metadata` an object, and at the
 * top level `metadata` may restrict only `name` and `generateName`.
 */
function checkMetaField(name: string, node: schemas.Schema, at: At, root: boolean, fail: Fail): void {
  const type = schemas.own(node, 'type');
  const expected = name === 'metadata' ? 'object' : 'string';
  if (type !== expected) fail('non-structural', `${at()}.type`, `${name} must have type "${expected}", not ${JSON.stringify(type ?? null)}`);
  if (!root || name !== 'metadata') return;
  for (const key of Object.keys(node)) {
    if (key === 'properties') {
      const properties = node[key];
      for (const property of schemas.isRecord(properties) ? Object.keys(properties) : []) {
        if (property !== 'name' && property !== 'generateName') {
          fail(
            'non-structural',
            schemas.childPath(schemas.childPath(at(), 'properties'), property),
            `the top-level metadata may restrict only name and generateName, not ${property} (the API server validates the rest of metadata itself); remove it`,
          );
        }
      }
    } else if (!ROOT_METADATA_ALLOWED.has(key)) {
      fail(
        'non-structural',
        schemas.childPath(at(), key),
        `${key} must not be set on the top-level metadata: only type "object" and schemas for name and generateName are allowed there; remove it`,
      );
    }
  }
}

/** The Kubernetes extensions of one node (outside combinators), as the API server restricts them. */
function checkExtensions(node: schemas.Schema, at: At, walk: Walk, fail: Fail): void {
  const type = schemas.typeOf(node);
  const preserveValue = schemas.own(node, schemas.PRESERVE_UNKNOWN_FIELDS);
  if (preserveValue !== undefined && preserveValue !== true) {
    fail('non-structural', schemas.childPath(at(), schemas.PRESERVE_UNKNOWN_FIELDS), 'x-kubernetes-preserve-unknown-fields must be true or left out');
  }
  const intOrString = schemas.flag(node, schemas.INT_OR_STRING);
  if (intOrString && preserveValue === true) {
    fail(
      'non-structural',
      schemas.childPath(at(), schemas.PRESERVE_UNKNOWN_FIELDS),
      'x-kubernetes-preserve-unknown-fields must not be set on an x-kubernetes-int-or-string node',
    );
  }
  if (schemas.flag(node, schemas.EMBEDDED_RESOURCE)) {
    if (intOrString)
      fail(
        'non-structural',
        schemas.childPath(at(), schemas.EMBEDDED_RESOURCE),
        'x-kubernetes-embedded-resource must not be set on an x-kubernetes-int-or-string node',
      );
    if (type !== 'object') fail('non-structural', at(), 'x-kubernetes-embedded-resource requires type "object"');
    if (walk.resourceMeta)
      fail(
        'non-structural',
        schemas.childPath(at(), schemas.EMBEDDED_RESOURCE),
        'x-kubernetes-embedded-resource must not be used inside apiVersion, kind or metadata',
      );
    if (Object.hasOwn(node, 'additionalProperties')) {
      fail(
        'non-structural',
        `${at()}.additionalProperties`,
        'additionalProperties must not be used on an x-kubernetes-embedded-resource node; declare its properties',
      );
    }
    if (preserveValue !== true && !schemas.hasProperties(node)) {
      fail(
        'non-structural',
        `${at()}.properties`,
        'an x-kubernetes-embedded-resource node needs properties, or x-kubernetes-preserve-unknown-fields: true to keep any resource',
      );
    }
  }
  const mapType = schemas.own(node, schemas.MAP_TYPE);
  if (mapType !== undefined) {
    if (type !== 'object') fail('non-structural', `${at()}.type`, 'x-kubernetes-map-type requires type "object"');
    if (mapType !== 'atomic' && mapType !== 'granular') {
      fail('non-structural', schemas.childPath(at(), schemas.MAP_TYPE), `x-kubernetes-map-type must be "atomic" or "granular", not ${JSON.stringify(mapType)}`);
    }
  }
}

/** `x-kubernetes-list-type` and `x-kubernetes-list-map-keys`, as the API server restricts them. */
function checkLists(node: schemas.Schema, at: At, fail: Fail): void {
  const listType = schemas.own(node, schemas.LIST_TYPE);
  const keys = schemas.own(node, schemas.LIST_MAP_KEYS);
  const listTypeAt = (): string => schemas.childPath(at(), schemas.LIST_TYPE);
  const keysAt = (): string => schemas.childPath(at(), schemas.LIST_MAP_KEYS);
  if (keys !== undefined && !(Array.isArray(keys) && keys.every((key) => typeof key === 'string'))) {
    fail('non-structural', keysAt(), 'x-kubernetes-list-map-keys must be a list of property names');
  }
  const keyList = (keys ?? []) as string[];
  if (keyList.length > 0 && listType !== 'map')
    fail('non-structural', listTypeAt(), 'x-kubernetes-list-type must be "map" when x-kubernetes-list-map-keys is set');
  if (listType === undefined) return;
  if (schemas.typeOf(node) !== 'array') fail('non-structural', `${at()}.type`, 'x-kubernetes-list-type requires type "array"');
  if (listType !== 'atomic' && listType !== 'set' && listType !== 'map') {
    fail('non-structural', listTypeAt(), `x-kubernetes-list-type must be "atomic", "set" or "map", not ${JSON.stringify(listType)}`);
  }
  const items = schemas.itemsOf(node);
  if (items === undefined || listType === 'atomic') return;
  if (schemas.own(items, 'nullable') === true)
    fail('non-structural', `${at()}.items.nullable`, `the items of an x-kubernetes-list-type: ${listType} list must not be nullable`);
  if (listType === 'set') {
    const itemType = schemas.typeOf(items);
    const itemListType = schemas.own(items, schemas.LIST_TYPE);
    if (itemType === 'array' && itemListType !== undefined && itemListType !== 'atomic') {
      fail('non-structural', schemas.childPath(`${at()}.items`, schemas.LIST_TYPE), 'lists inside an x-kubernetes-list-type: set list must be atomic');
    }
    if (itemType === 'object' && schemas.own(items, schemas.MAP_TYPE) !== 'atomic') {
      fail(
        'non-structural',
        schemas.childPath(`${at()}.items`, schemas.MAP_TYPE),
        'objects inside an x-kubernetes-list-type: set list must have x-kubernetes-map-type: atomic',
      );
    }
    return;
  }
  if (keyList.length === 0)
    fail('non-structural', keysAt(), 'x-kubernetes-list-type: map needs x-kubernetes-list-map-keys naming the key properties of the items');
  if (schemas.typeOf(items) !== 'object')
    fail('non-structural', `${at()}.items.type`, 'the items of an x-kubernetes-list-type: map list must have type "object"');
  const properties = new Map(schemas.propertiesOf(items));
  const required = new Set(schemas.requiredOf(items));
  const seen = new Set<string>();
  keyList.forEach((key, index) => {
    const property = properties.get(key);
    if (property === undefined) fail('non-structural', `${keysAt()}[${index}]`, `list map key ${JSON.stringify(key)} is not a property of the items`);
    if (seen.has(key)) fail('non-structural', `${keysAt()}[${index}]`, `list map key ${JSON.stringify(key)} is named twice`);
    seen.add(key);
    const propertyAt = schemas.childPath(`${at()}.items.properties`, key);
    const propertyType = schemas.typeOf(property!);
    if (propertyType === 'array' || propertyType === 'object')
      fail('non-structural', `${propertyAt}.type`, `list map key ${JSON.stringify(key)} must have a scalar type`);
    if (!required.has(key) && !schemas.hasDefault(property!)) {
      fail('non-structural', propertyAt, `list map key ${JSON.stringify(key)} must be required by the items or have a default`);
    }
    if (schemas.own(property!, 'nullable') === true)
      fail('non-structural', `${propertyAt}.nullable`, `list map key ${JSON.stringify(key)} must not be nullable`);
  });
}

/** Enum values must have the node's type: a value of another type could never validate. */
function checkEnum(node: schemas.Schema, at: At, fail: Fail): void {
  const enumeration = schemas.own(node, 'enum');
  if (!Array.isArray(enumeration)) return;
  const typed = schemas.typeOf(node) !== undefined || schemas.flag(node, schemas.INT_OR_STRING);
  enumeration.forEach((value: unknown, index) => {
    let problem: string | undefined;
    if (value !== null) problem = defaults.typeMismatch(value, node);
    else if (typed && schemas.own(node, 'nullable') !== true) problem = 'is null, but the node is not nullable';
    if (problem !== undefined) {
      fail(
        'invalid-enum',
        `${at()}.enum[${index}]`,
        `enum value ${JSON.stringify(value)} ${problem}; quote it or fix the type so that every value has the node's type`,
      );
    }
  });
}

/**
 * A node's default: refused inside the top-level `apiVersion`, `kind` and `metadata` and inside
 * maps of resource metadata (labels, annotations), and elsewhere checked against the node's schema.
 */
function checkDefault(node: schemas.Schema, at: At, walk: Walk, fail: Fail): void {
  if (!schemas.hasDefault(node)) return;
  const where = (): string => `${at()}.default`;
  if (walk.topMeta !== undefined) {
    fail('invalid-default', where(), `defaults are not allowed in the top-level ${walk.topMeta} (the API server sets it); remove the default`);
  }
  if (walk.underAdditional && walk.resourceMeta) {
    fail('invalid-default', where(), 'defaults are not allowed in maps of resource metadata (labels, annotations); remove the default');
  }
  if (walk.underAdditional) return; // the server does not validate these defaults
  const problem = defaults.valueProblem(node['default'], node, where());
  if (problem) fail('invalid-default', problem.path, `the default ${problem.detail}; the API server refuses defaults that do not fit their schema`);
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
  if (additional === false) {
    fail(
      'non-structural',
      `${at()}.additionalProperties`,
      'additionalProperties: false is not allowed in CRD schemas (the API server prunes unknown fields instead of refusing them); remove it',
    );
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
  if (schemas.own(node, 'uniqueItems') === true) {
    fail('non-structural', `${at()}.uniqueItems`, 'uniqueItems: true is not allowed in CRD schemas; use x-kubernetes-list-type: set for lists of unique items');
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
