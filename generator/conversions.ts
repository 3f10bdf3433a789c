/**
 * Conversions: the converter stubs of a CRD that serves several versions.
 *
 * The API server stores a custom object in one version (the storage version) and serves it in
 * every served one; when their schemas differ, only a conversion webhook can translate. kopf-gen
 * takes the storage version as the hub, and writes for every other served version a stub that
 * registers `on.convert(<spoke>, <hub>, { forward, backward })` — user-owned, written once. The
 * stub must compile as generated and lose nothing silently, so it is derived from the two schemas
 * here, level by level, with the field comparison of fields.ts:
 * - fields equal in both versions (same type and presence, same subtree) stay in the spread rest;
 * - an object field present in both whose subtree differs is converted by a function of its own;
 * - a field of the source version the target does not have, or whose type differs, is destructured
 *   out, and the converter throws an Error naming the field and the file when an object carries
 *   it — with a TODO comment above;
 * - a field only the target has is set to its default when it has one, thrown for when the target
 *   requires it (the object cannot be converted until the user maps it), and noted when optional.
 * Identical schemas get a trivial converter (only `apiVersion` changes). The stub's test runs
 * `roundTrip` on each version's sample, and expects the refusal (naming the field) where the
 * generated converter cannot convert that sample yet. Pure.
 */
import * as fields from './fields.js';
import type * as modeling from './modeling.js';
import * as naming from './naming.js';
import * as samples from './samples.js';
import * as schemas from './schemas.js';

/** Where converter stubs go (user-owned: written once, never modified). */
export const CONVERSIONS_DIR = 'src/conversions';

/** Where their tests go (user-owned likewise). */
export const CONVERSION_TESTS_DIR = 'test/conversions';

/** One version of a conversion as the stub names it. */
export interface ConversionSide {
  readonly version: string;
  readonly apiVersion: string;
  /** The index namespace of the version's generated module (`ReleaseV1`). */
  readonly namespace: string;
  /** The generated module's file name. */
  readonly fileName: string;
  /** The descriptor constant (`Releases`). */
  readonly descriptor: string;
  /** The body type (`Release`). */
  readonly body: string;
  /** The version's sample object, defaults applied (a body as the API server returns it). */
  readonly sample: Readonly<Record<string, unknown>>;
}

/** One direction of a converter: its code and what it does not convert yet. */
export interface Direction {
  /** The converter's body, without indentation (one statement per line). */
  readonly lines: readonly string[];
  /** Functions for nested levels, each a block of lines. */
  readonly helpers: readonly (readonly string[])[];
  /** The fields the converter throws for (`spec.chartName`), when an object carries them or always. */
  readonly unconverted: readonly Unconverted[];
}

/** A field the generated converter does not convert. */
export interface Unconverted {
  readonly path: string;
  /** `carried`: throws when the source object has it; `required`: the target requires it, throws always (at that level). */
  readonly when: 'carried' | 'required';
}

/** The converter stub of one non-hub version. */
export interface ConversionPlan {
  readonly crdName: string;
  readonly kind: string;
  readonly group: string;
  readonly plural: string;
  /** Whether the kind's objects live in namespaces. */
  readonly namespaced: boolean;
  readonly spoke: ConversionSide;
  readonly hub: ConversionSide;
  /** `src/conversions/<kind>.<version>.ts`. */
  readonly path: string;
  /** `test/conversions/<kind>.<version>.test.ts`. */
  readonly testPath: string;
  /** The exported constant (`releaseV1`). */
  readonly exportName: string;
  /** Whether the two schemas are identical (a trivial converter). */
  readonly identical: boolean;
  readonly forward: Direction;
  readonly backward: Direction;
}

/** What the stubs need of the index: the namespace of each generated module. */
export interface IndexName {
  readonly fileName: string;
  readonly crdName: string;
  readonly version: string;
  readonly namespace: string;
}

/** The hub of a CRD: its storage version, when it is served. */
export function hubOf(crd: modeling.CrdModel): modeling.VersionModel | undefined {
  return crd.versions.find((version) => version.storage);
}

/**
 * The converter stubs of every CRD with more than one served version and a served storage version
 * (the hub), one per other served version. `fileOf` gives each version's generated module.
 */
export function conversionPlans(model: modeling.GeneratorModel, entries: readonly IndexName[]): ConversionPlan[] {
  const plans: ConversionPlan[] = [];
  for (const crd of model.crds) {
    const hub = hubOf(crd);
    if (crd.versions.length < 2 || hub === undefined) continue;
    const stem = naming.words(crd.kind).join('-').toLowerCase() || 'kind';
    const hubSide = side(crd, hub, entries);
    for (const spoke of crd.versions) {
      if (spoke === hub) continue;
      const spokeSide = side(crd, spoke, entries);
      const identical = JSON.stringify(spoke.schema) === JSON.stringify(hub.schema);
      const file = `${stem}.${spoke.version}`;
      plans.push({
        crdName: crd.crdName,
        kind: crd.kind,
        group: crd.group,
        plural: crd.plural,
        namespaced: hub.namespaced,
        spoke: spokeSide,
        hub: hubSide,
        path: `${CONVERSIONS_DIR}/${file}.ts`,
        testPath: `${CONVERSION_TESTS_DIR}/${file}.test.ts`,
        exportName: naming.identifier(
          `${naming
            .words(crd.kind)
            .join('')
            .replace(/^./, (c) => c.toLowerCase())}${naming.pascal(spoke.version)}`,
        ),
        identical,
        forward: identical ? trivial(hubSide) : direction(spoke, hub, spokeSide, hubSide),
        backward: identical ? trivial(spokeSide) : direction(hub, spoke, hubSide, spokeSide),
      });
    }
  }
  return plans;
}

function side(crd: modeling.CrdModel, version: modeling.VersionModel, entries: readonly IndexName[]): ConversionSide {
  const entry = entries.find((each) => each.crdName === crd.crdName && each.version === version.version)!;
  const apiVersion = `${crd.group}/${version.version}`;
  const sample = samples.sampleResource(version.schema, { apiVersion, kind: crd.kind, name: 'example' }).value;
  return {
    version: version.version,
    apiVersion,
    namespace: entry.namespace,
    fileName: entry.fileName,
    descriptor: version.names.descriptor,
    body: version.names.body,
    sample: withDefaults(version.schema, sample) as Record<string, unknown>,
  };
}

function trivial(to: ConversionSide): Direction {
  return { lines: [`return { ...object, apiVersion: ${JSON.stringify(to.apiVersion)} as const };`], helpers: [], unconverted: [] };
}

/** The fields of an object level the converter does not compare: the API server handles them. */
const OBJECT_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/** Words that cannot name a destructured variable. */
const RESERVED = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends false finally for function if import in ' +
    'instanceof new null return super switch this throw true try typeof var void while with yield let static implements interface package ' +
    'private protected public await arguments eval undefined object value same unconverted required FILE'
  ).split(' '),
);

interface Level {
  readonly source: schemas.Schema;
  readonly target: schemas.Schema;
  /** The data path of the level (`''` for the object, `spec`, `spec.chart`). */
  readonly path: string;
  /** The TypeScript type of the source value at this level. */
  readonly sourceType: string;
}

interface Context {
  readonly from: modeling.VersionModel;
  readonly to: modeling.VersionModel;
  readonly fromSide: ConversionSide;
  readonly toSide: ConversionSide;
  readonly helpers: string[][];
  readonly unconverted: Unconverted[];
  readonly helperNames: Set<string>;
}

function direction(from: modeling.VersionModel, to: modeling.VersionModel, fromSide: ConversionSide, toSide: ConversionSide): Direction {
  const context: Context = { from, to, fromSide, toSide, helpers: [], unconverted: [], helperNames: new Set() };
  const level = { source: from.schema, target: to.schema, path: '', sourceType: `${fromSide.namespace}.${fromSide.body}` };
  const { lines, entries } = convertLevel(level, 'object', context);
  const result = returned([{ text: '...same' }, { text: `apiVersion: ${JSON.stringify(toSide.apiVersion)} as const` }, ...entries]);
  return { lines: [...lines, ...result], helpers: context.helpers, unconverted: context.unconverted };
}

/** An entry of a converted object, with the TODO above it. */
interface Entry {
  readonly text: string;
  readonly todo?: string;
}

/** `return { … };` on one line, or one entry a line when an entry has a TODO. */
function returned(entries: readonly Entry[]): string[] {
  if (entries.every((entry) => entry.todo === undefined)) return [`return { ${entries.map((entry) => entry.text).join(', ')} };`];
  return ['return {', ...entries.flatMap((entry) => [...(entry.todo ? [`  // TODO: ${entry.todo}`] : []), `  ${entry.text},`]), '};'];
}

/**
 * The statements converting one object level held in `variable`, and the entries of the converted
 * object besides `...same` (the fields equal in both versions).
 */
function convertLevel(level: Level, variable: string, context: Context): { lines: string[]; entries: Entry[] } {
  const lines: string[] = [];
  const entries: Entry[] = [];
  const targetProperties = new Map(schemas.propertiesOf(level.target));
  const sourceRequired = new Set(schemas.requiredOf(level.source));
  const targetRequired = new Set(schemas.requiredOf(level.target));
  const taken = new Set<string>();
  const destructured: string[] = [];
  const checks: string[] = [];
  const fromName = context.fromSide.version;
  const toName = context.toSide.version;
  for (const [name, source] of schemas.propertiesOf(level.source)) {
    if (level.path === '' && OBJECT_FIELDS.has(name)) continue;
    const path = schemas.childPath(level.path, name);
    const target = targetProperties.get(name);
    const sourcePresence = presence(source, sourceRequired.has(name));
    if (target !== undefined && sameField(source, target) && sourcePresence === presence(target, targetRequired.has(name))) continue;
    const local = localName(name, taken);
    destructured.push(name === local ? name : `${JSON.stringify(name)}: ${local}`);
    const recurse =
      target !== undefined &&
      isPlainObject(source) &&
      isPlainObject(target) &&
      (sourcePresence === 'required' || presence(target, targetRequired.has(name)) !== 'required');
    if (recurse) {
      const helper = helperName(path, context);
      const sourceType = context.from.typeNames.has(source)
        ? `${context.fromSide.namespace}.${context.from.typeNames.get(source)}`
        : `NonNullable<${level.sourceType}[${JSON.stringify(name)}]>`;
      const inner = convertLevel({ source, target, path, sourceType }, 'value', context);
      const body = [...inner.lines, ...returned([{ text: '...same' }, ...inner.entries])];
      context.helpers.push([`/** ${path}: ${fromName} → ${toName}. */`, `function ${helper}(value: ${sourceType}) {`, ...body.map((line) => `  ${line}`), '}']);
      const key = propertyKey(name);
      entries.push({
        text: sourcePresence === 'required' ? `${key}: ${helper}(${local})` : `...(${local} === undefined ? {} : { ${key}: ${helper}(${local}) })`,
      });
      continue;
    }
    const why =
      target === undefined
        ? `${path} exists in ${fromName} only: map it to ${toName}'s fields`
        : `${path} differs: ${describe(source, sourcePresence)} in ${fromName}, ${describe(target, presence(target, targetRequired.has(name)))} in ${toName}: convert it`;
    checks.push(`// TODO: ${why}.`, `unconverted(${JSON.stringify(path)}, ${local});`);
    context.unconverted.push({ path, when: 'carried' });
    if (target !== undefined && presence(target, targetRequired.has(name)) === 'required') {
      entries.push(requiredEntry(name, target, path, `${path} is required in ${toName} and not converted`, context));
    }
  }
  const sourceNames = new Set(schemas.propertiesOf(level.source).map(([name]) => name));
  for (const [name, target] of targetProperties) {
    if ((level.path === '' && OBJECT_FIELDS.has(name)) || sourceNames.has(name)) continue;
    const path = schemas.childPath(level.path, name);
    const targetPresence = presence(target, targetRequired.has(name));
    if (targetPresence === 'required') {
      entries.push(requiredEntry(name, target, path, `${path} is required in ${toName}, and ${fromName} has no such field`, context));
    } else {
      checks.push(`// TODO: ${path} exists in ${toName} only (optional): set it from ${fromName}'s fields if it should be.`);
    }
  }
  lines.push(destructured.length === 0 ? `const same = ${variable};` : `const { ${[...destructured, '...same'].join(', ')} } = ${variable};`);
  lines.push(...checks);
  return { lines, entries };
}

/** The entry of a field the target requires and the converter does not convert: its default, or a refusal. */
function requiredEntry(name: string, target: schemas.Schema, path: string, why: string, context: Context): Entry {
  const key = propertyKey(name);
  const from = context.fromSide.version;
  if (schemas.hasDefault(target)) {
    return { text: `${key}: ${JSON.stringify(schemas.own(target, 'default'))}`, todo: `${why}: its default, unless ${from}'s fields say otherwise.` };
  }
  context.unconverted.push({ path, when: 'required' });
  return { text: `${key}: required(${JSON.stringify(path)})`, todo: `${why}: fill it in.` };
}

/** An object node with declared properties, not nullable, not open, not an embedded resource: converted field by field. */
function isPlainObject(node: schemas.Schema): boolean {
  return (
    schemas.typeOf(node) === 'object' &&
    schemas.hasProperties(node) &&
    !schemas.flag(node, 'nullable') &&
    !schemas.flag(node, schemas.PRESERVE_UNKNOWN_FIELDS) &&
    !schemas.flag(node, schemas.EMBEDDED_RESOURCE)
  );
}

/** In a body as the API server returns it, a defaulted field is always there. */
function presence(node: schemas.Schema, required: boolean): 'required' | 'optional' {
  return required || schemas.hasDefault(node) ? 'required' : 'optional';
}

/**
 * Whether a field has the same type in both versions, at every depth (fields.ts's summaries, with
 * whether each nested field may be missing; a defaulted field counts as present, as in a body).
 */
export function sameField(source: schemas.Schema, target: schemas.Schema): boolean {
  const summary = (node: schemas.Schema): string =>
    JSON.stringify(Object.entries(fields.fieldsOf({ type: 'object', properties: { field: node } })).map(([path, type]) => [path, type.replace(/=$/, '')]));
  return summary(source) === summary(target);
}

function describe(node: schemas.Schema, presence: 'required' | 'optional'): string {
  return `${presence === 'optional' ? 'optional ' : ''}${fields.typeSummary(node)}`;
}

function localName(name: string, taken: Set<string>): string {
  let local = /^[A-Za-z_$][\w$]*$/.test(name) && !RESERVED.has(name) ? name : naming.identifier(naming.words(name).join('_') || 'field');
  if (RESERVED.has(local)) local = `${local}_`;
  while (taken.has(local)) local = `${local}_`;
  taken.add(local);
  return local;
}

function propertyKey(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) && name !== '__proto__' ? name : name === '__proto__' ? '["__proto__"]' : JSON.stringify(name);
}

function helperName(path: string, context: Context): string {
  const base = naming.identifier(
    `${naming
      .words(path.replace(/[.[\]{}]+/g, ' '))
      .map(naming.pascal)
      .join('')}To${naming.pascal(context.toSide.version)}`,
  );
  let name = `convert${base}`;
  for (let counter = 2; context.helperNames.has(name); counter += 1) name = `convert${base}${counter}`;
  context.helperNames.add(name);
  return name;
}

/**
 * The fields of `direction.unconverted` that make the converter refuse an object (a sample), or
 * an empty list when it converts it: a `carried` field the object has, or a `required` field
 * whose parent level the object has.
 */
export function refusals(direction: Direction, object: Readonly<Record<string, unknown>>): string[] {
  return direction.unconverted
    .filter((field) => {
      const segments = field.path.split('.');
      const parent = valueAt(object, segments.slice(0, -1));
      if (!schemas.isRecord(parent)) return false;
      return field.when === 'required' || parent[segments.at(-1)!] !== undefined;
    })
    .map((field) => field.path);
}

function valueAt(object: unknown, segments: readonly string[]): unknown {
  let value: unknown = object;
  for (const segment of segments) value = schemas.isRecord(value) ? value[segment] : undefined;
  return value;
}

/** A value with the defaults of its schema filled in where absent (as the API server returns an object). */
export function withDefaults(node: schemas.Schema, value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = schemas.itemsOf(node);
    return items ? value.map((item) => withDefaults(items, item)) : value;
  }
  if (!schemas.isRecord(value)) return value;
  const result: Record<string, unknown> = { ...value };
  for (const [name, child] of schemas.propertiesOf(node)) {
    if (result[name] === undefined && schemas.hasDefault(child)) result[name] = schemas.own(child, 'default');
    if (result[name] !== undefined) result[name] = withDefaults(child, result[name]);
  }
  const additional = schemas.additionalSchemaOf(node);
  if (additional)
    for (const [name, item] of Object.entries(result))
      if (!schemas.propertiesOf(node).some(([key]) => key === name)) result[name] = withDefaults(additional, item);
  return result;
}
