/**
 * Modeling: validated CRD documents in, the generator's intermediate model out.
 *
 * The model is what every emitter needs and nothing more: for each CRD and each *served* version,
 * the resource's names and scope, its subresources, its schema, and the TypeScript name of every
 * type the emitters will declare. Deciding names here — once, in a stable order — means the types
 * emitter, the handler-stub emitter and the templates all agree on `WidgetSpecTemplate`.
 *
 * Which schema nodes become named types: `spec` and `status` (always, as `<Kind>Spec` and
 * `<Kind>Status`), and every other object node that declares properties. Arrays and maps are not
 * named; their items take the name of the property that holds them. Names are claimed breadth-first
 * in document order, so shallower types keep the unsuffixed name when two paths collide, and a
 * nested name never takes a reserved one (`<Kind>`, `<Kind>Input`, `<Kind>Spec`, `<Kind>Status`,
 * `<Kind>Patch`, `<Kind>PatchView`, `<Kind>List`, the descriptor constant). Runtime names need no
 * reservation: generated modules import the runtime under an alias no generated name can take.
 *
 * Reading and writing differ where the API server fills something in: a named type whose subtree
 * holds a property with a `default`, or an embedded resource (whose metadata a user writes as
 * `ObjectMetaInput`), gets an *input twin*, `<Name>Input`, claimed after every nested name (spec,
 * status, then nested types in claim order) through the same registry. Types whose subtree has
 * nothing of the kind are used as they are in input types too.
 *
 * Input must have passed validating.ts; this stage does not re-check shapes.
 */
import * as loading from './loading.js';
import * as naming from './naming.js';
import * as schemas from './schemas.js';

/** A type the emitters declare, with the schema node it comes from. */
export interface NamedType {
  readonly name: string;
  /** The data path of the node, e.g. `spec.template` or `spec.containers[]` (`''` for the root). */
  readonly path: string;
  readonly schema: schemas.Schema;
}

/** The reserved names of one version's module. */
export interface ModuleNames {
  /** `<Kind>`: the object body as the API server returns it (defaults applied). */
  readonly body: string;
  /** `<Kind>Input`: the object as a user writes it (defaulted fields optional). */
  readonly input: string;
  readonly spec: string;
  readonly status: string;
  /** `<Kind>Patch`: a JSON merge patch of the object, as plain data. */
  readonly patch: string;
  /** `<Kind>PatchView`: the writable view handlers receive as `patch`. */
  readonly view: string;
  readonly list: string;
  /** The descriptor constant, e.g. `Widgets`. */
  readonly descriptor: string;
}

/** One served version of a CRD. */
export interface VersionModel {
  readonly file: string;
  readonly documentIndex: number;
  /** Inside a List document: the CRD's item (`items[2]`). */
  readonly itemPath?: string | undefined;
  /** The CRD's `metadata.name` (`<plural>.<group>`). */
  readonly crdName: string;
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly listKind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly scope: 'Namespaced' | 'Cluster';
  readonly namespaced: boolean;
  readonly statusSubresource: boolean;
  readonly scaleSubresource: boolean;
  readonly storage: boolean;
  readonly deprecated: boolean;
  readonly deprecationWarning: string | undefined;
  /** The version's `openAPIV3Schema`. */
  readonly schema: schemas.Schema;
  readonly names: ModuleNames;
  /** The schema of `spec` / `status`, when the schema declares them. */
  readonly specSchema: schemas.Schema | undefined;
  readonly statusSchema: schemas.Schema | undefined;
  /** Every nested named type (not spec/status), in claim order. */
  readonly nestedTypes: readonly NamedType[];
  /** The TypeScript name of every named schema node (spec, status and nested types). */
  readonly typeNames: ReadonlyMap<schemas.Schema, string>;
  /**
   * The input twins: one per named type that reads differently from how it is written (a default
   * or an embedded resource somewhere in its subtree), named `<Name>Input`, in claim order.
   */
  readonly inputTypes: readonly NamedType[];
  /** The name to use for a named schema node in input types: its twin's if it has one, else its own. */
  readonly inputTypeNames: ReadonlyMap<schemas.Schema, string>;
}

/** One CRD with its served versions (in the CRD's order). */
export interface CrdModel {
  readonly crdName: string;
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
  readonly versions: readonly VersionModel[];
  /** `spec.conversion.strategy` (`None` when absent), for the warning about versions served unconverted. */
  readonly conversionStrategy?: string;
}

export interface GeneratorModel {
  readonly crds: readonly CrdModel[];
  /** Skipped versions and similar remarks, one line each. */
  readonly notes: readonly string[];
}

/** Builds the model of validated CRDs; non-served versions are skipped with a note. */
export function buildModel(loaded: readonly loading.LoadedCrd[]): GeneratorModel {
  const notes: string[] = [];
  const crds = loaded.map((crd) => modelCrd(crd, notes));
  return { crds, notes };
}

/** Builds the model of one validated CRD, appending notes about skipped versions to `notes`. */
export function modelCrd(loaded: loading.LoadedCrd, notes: string[] = []): CrdModel {
  const doc = loaded.document;
  const spec = record(doc, 'spec');
  const names = record(spec, 'names');
  const kind = String(names['kind']);
  const plural = String(names['plural']);
  const group = String(spec['group']);
  const crdName = String(record(doc, 'metadata')['name'] ?? `${plural}.${group}`);
  const scope = spec['scope'] === 'Cluster' ? 'Cluster' : 'Namespaced';
  const versions: VersionModel[] = [];
  const rawVersions = Array.isArray(spec['versions']) ? (spec['versions'] as unknown[]) : [];
  for (const raw of rawVersions) {
    if (!schemas.isRecord(raw)) continue;
    const version = String(raw['name']);
    if (raw['served'] !== true) {
      notes.push(`${loading.placeOf(loaded)}: skipped version ${version} of ${kind} (not served)`);
      continue;
    }
    const schema = record(record(raw, 'schema'), 'openAPIV3Schema');
    const subresources = record(raw, 'subresources');
    const moduleNames = reservedNames(kind, plural);
    const properties = record(schema, 'properties');
    const specSchema = schemas.isRecord(properties['spec']) ? properties['spec'] : undefined;
    const statusSchema = schemas.isRecord(properties['status']) ? properties['status'] : undefined;
    const { nestedTypes, typeNames, inputTypes, inputTypeNames } = nameTypes(schema, moduleNames);
    versions.push({
      file: loaded.file,
      documentIndex: loaded.documentIndex,
      itemPath: loaded.itemPath,
      crdName,
      group,
      version,
      kind,
      plural,
      listKind: typeof names['listKind'] === 'string' ? names['listKind'] : `${kind}List`,
      singular: typeof names['singular'] === 'string' && names['singular'] ? names['singular'] : kind.toLowerCase(),
      shortNames: strings(names['shortNames']),
      categories: strings(names['categories']),
      scope,
      namespaced: scope === 'Namespaced',
      statusSubresource: schemas.isRecord(subresources['status']),
      scaleSubresource: schemas.isRecord(subresources['scale']),
      storage: raw['storage'] === true,
      deprecated: raw['deprecated'] === true,
      deprecationWarning: typeof raw['deprecationWarning'] === 'string' ? raw['deprecationWarning'] : undefined,
      schema,
      names: moduleNames,
      specSchema,
      statusSchema,
      nestedTypes,
      typeNames,
      inputTypes,
      inputTypeNames,
    });
  }
  if (versions.length === 0) notes.push(`${loading.placeOf(loaded)}: ${kind} has no served version; nothing is generated for it`);
  const strategy = record(spec, 'conversion')['strategy'];
  return { crdName, group, kind, plural, versions, conversionStrategy: typeof strategy === 'string' ? strategy : 'None' };
}

/** The reserved names of a kind's module. */
export function reservedNames(kind: string, plural: string): ModuleNames {
  const base = naming.identifier(kind);
  return {
    body: naming.declarable(base),
    input: `${base}Input`,
    spec: `${base}Spec`,
    status: `${base}Status`,
    patch: `${base}Patch`,
    view: `${base}PatchView`,
    list: `${base}List`,
    descriptor: naming.declarable(naming.descriptorName(base, plural)),
  };
}

/**
 * A node waiting in the breadth-first queue. Its path and candidate name are worked out only when
 * needed (for named types and their children): most nodes are leaves that never need either.
 */
interface Pending {
  readonly node: schemas.Schema;
  readonly parent: Pending | undefined;
  /** How the node hangs off its parent: a property name, or `[]` (items) / `{}` (additional properties). */
  readonly step: string;
  readonly viaProperty: boolean;
  /** A name fixed in advance (spec, status). */
  readonly fixed?: string;
  /** The name claimed for the node, once processed (undefined when it is not a named type). */
  scope?: string | undefined;
  candidate?: string;
  path?: string;
}

/** The name this node gets if it is a named type (the parent's name or candidate, then the property). */
function candidateOf(pending: Pending, body: string): string {
  if (pending.candidate === undefined) {
    const { parent } = pending;
    if (!pending.viaProperty) pending.candidate = candidateOf(parent!, body);
    else pending.candidate = naming.childName(parent ? (parent.scope ?? candidateOf(parent, body)) : body, pending.step);
  }
  return pending.candidate;
}

/** The data path of the node, e.g. `spec.template` or `spec.containers[]`. */
function pathOf(pending: Pending): string {
  if (pending.path === undefined) {
    const { parent } = pending;
    if (!parent) pending.path = pending.step;
    else pending.path = pending.viaProperty ? schemas.childPath(pathOf(parent), pending.step) : `${pathOf(parent)}${pending.step}`;
  }
  return pending.path;
}

/** Names the schema's types breadth-first, in document order, then their input twins. */
function nameTypes(root: schemas.Schema, names: ModuleNames): Pick<VersionModel, 'nestedTypes' | 'typeNames' | 'inputTypes' | 'inputTypeNames'> {
  const registry = new naming.NameRegistry([names.body, names.input, names.spec, names.status, names.patch, names.view, names.list, names.descriptor]);
  const typeNames = new Map<schemas.Schema, string>();
  const nestedTypes: NamedType[] = [];
  const queue: Pending[] = [];
  for (const [property, child] of schemas.propertiesOf(root)) {
    if (property === 'apiVersion' || property === 'kind' || property === 'metadata') continue;
    const fixed = property === 'spec' ? names.spec : property === 'status' ? names.status : undefined;
    queue.push({ node: child, parent: undefined, step: property, viaProperty: true, ...(fixed ? { fixed } : {}) });
  }
  for (let index = 0; index < queue.length; index += 1) {
    const pending = queue[index]!;
    const { node, fixed } = pending;
    if (fixed !== undefined) {
      pending.scope = fixed;
      typeNames.set(node, fixed);
    } else if (schemas.hasProperties(node)) {
      const known = typeNames.get(node);
      if (known !== undefined) continue; // the same node reached twice through a YAML alias
      pending.scope = registry.claim(candidateOf(pending, names.body));
      typeNames.set(node, pending.scope);
      nestedTypes.push({ name: pending.scope, path: pathOf(pending), schema: node });
    }
    for (const [property, child] of schemas.propertiesOf(node)) {
      queue.push({ node: child, parent: pending, step: property, viaProperty: true });
    }
    const items = schemas.itemsOf(node);
    if (items) queue.push({ node: items, parent: pending, step: '[]', viaProperty: false });
    const additional = schemas.additionalSchemaOf(node);
    if (additional) queue.push({ node: additional, parent: pending, step: '{}', viaProperty: false });
  }
  const inputTypes: NamedType[] = [];
  const inputTypeNames = new Map(typeNames);
  const differs = differences();
  const fixedTypes = queue
    .filter((pending) => pending.fixed !== undefined)
    .map((pending) => ({ name: pending.fixed!, path: pathOf(pending), schema: pending.node }));
  const seen = new Set<schemas.Schema>();
  for (const type of [...fixedTypes, ...nestedTypes]) {
    if (seen.has(type.schema) || !differs(type.schema)) continue;
    seen.add(type.schema);
    const name = registry.claim(`${typeNames.get(type.schema) ?? type.name}Input`);
    inputTypeNames.set(type.schema, name);
    inputTypes.push({ name, path: type.path, schema: type.schema });
  }
  return { nestedTypes, typeNames, inputTypes, inputTypeNames };
}

/**
 * Whether a node reads differently from how it is written: it or a node below it (through
 * properties, list items and map values) has a default, or is an embedded resource. Memoised per
 * node; a node met again while it is being decided counts as no difference.
 */
function differences(): (node: schemas.Schema) => boolean {
  const known = new Map<schemas.Schema, boolean>();
  const differs = (node: schemas.Schema): boolean => {
    const found = known.get(node);
    if (found !== undefined) return found;
    known.set(node, false);
    let result = schemas.flag(node, schemas.EMBEDDED_RESOURCE);
    for (const [, child] of schemas.propertiesOf(node)) if (!result && (schemas.hasDefault(child) || differs(child))) result = true;
    const items = schemas.itemsOf(node);
    if (!result && items) result = differs(items);
    const additional = schemas.additionalSchemaOf(node);
    if (!result && additional) result = differs(additional);
    known.set(node, result);
    return result;
  };
  return differs;
}

function record(node: schemas.Schema, key: string): schemas.Schema {
  const value = schemas.own(node, key);
  return schemas.isRecord(value) ? value : {};
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}
