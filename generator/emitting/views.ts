/**
 * Emitting patch views: the type of the `patch` argument handlers of a generated kind receive.
 *
 * Handlers change objects by writing into an auto-vivifying JSON merge patch. A merge patch has
 * rules a body type cannot express: `null` removes a property, a nested object may be written
 * partially (the server merges it), a list is replaced whole (an index write would be sent as a map
 * with the key `"0"`). A mapped type over the body cannot give one property a reading type and a
 * different writing type, but accessors in an interface can, and the generator knows the schema.
 * So every version's module declares `<Kind>PatchView` and one `<Type>PatchView` per named object
 * type, with one accessor pair per property:
 *
 * | property                    | reading gives                      | writing accepts                               |
 * |-----------------------------|------------------------------------|-----------------------------------------------|
 * | object (named type)         | its view, always there             | `${MERGE_PATCH}<write type>` (partial)            |
 * | map (`additionalProperties`)| index signature: scalar `T \| null`, objects their view, lists read-only | `${MERGE_PATCH}<{ [key: string]: … }>` |
 * | open object                 | `{ [key: string]: unknown }`       | the same                                      |
 * | embedded resource           | a view with `apiVersion`, `kind`, `metadata` | `${MERGE_PATCH}<…>`                     |
 * | list                        | `${READONLY_DEEP}<list> \| undefined`  | the whole list of write-typed items           |
 * | scalar                      | `T \| undefined`                   | `T`                                           |
 *
 * Writing also accepts `null` where merge patch may remove the property: it is optional or
 * nullable; never a required non-nullable property, never `apiVersion`/`kind`. Reading a removable
 * property may give `null` back (what was written). Entries of maps of objects cannot be removed
 * through the view (their index type is the entry's view): use `patch.setAt(path, null)` or assign
 * the whole map.
 *
 * Write types are the types users write with (defaults optional); `writeTypeName()` is the one
 * place that maps a named schema node to that type's name. Scalars are printed directly; the types
 * of anything else without a named type inside are taken from the read types by indexed access
 * (`(WidgetSpec["template"] & {})`, which is what `NonNullable` is, without naming a global
 * type a generated declaration could shadow), so the two emitters cannot disagree.
 *
 * The runtime intersects a view with the accumulator (`PatchBase<Body> & <Kind>PatchView`): the
 * accumulator brings `metadata`, `fns`, `setAt()` and the other methods, so the view leaves out the
 * top-level properties named like them.
 */
import type * as modeling from '../modeling.js';
import * as naming from '../naming.js';
import * as schemas from '../schemas.js';
import * as normalising from './normalising.js';

/** A module's patch views. */
export interface EmittedView {
  readonly text: string;
}

const MERGE_PATCH = normalising.runtimeType('MergePatch');
const READONLY_DEEP = normalising.runtimeType('ReadonlyDeep');

/**
 * Top-level names the runtime's patch accumulator uses itself (its methods, `metadata`/`meta`):
 * the accumulator's own members win, and such body properties stay writable through `setAt()`.
 */
export const ACCUMULATOR_MEMBERS: readonly string[] = [
  'fns',
  'metadata',
  'meta',
  'section',
  'isEmpty',
  'toMergePatch',
  'toJSON',
  'split',
  'toJsonPatch',
  'setAt',
  'getAt',
  'hasAt',
  'removeAt',
  'clear',
];

/**
 * Property names the runtime's views answer themselves when read (`toJSON` and `toString` render
 * the patch, `constructor` is `Object`, `then` is nothing, so a view is never taken for a promise):
 * such a property is written like any other, but reading it never gives its view or value, so its
 * reading type is `unknown`. Write it whole, or with `patch.setAt()`.
 */
export const VIEW_OWN_MEMBERS: readonly string[] = ['toJSON', 'toString', 'constructor', 'then'];

/**
 * The name of the type users write for a named schema node, e.g. inside lists a patch replaces
 * whole: its input twin (defaulted fields optional) where it has one, else the read type.
 */
export function writeTypeName(version: modeling.VersionModel, node: schemas.Schema): string {
  const name = version.inputTypeNames.get(node);
  if (name === undefined) throw new Error('writeTypeName() is only for named schema nodes');
  return name;
}

/** How a schema node is viewed. */
type Shape =
  | { readonly kind: 'named'; readonly name: string }
  | { readonly kind: 'map'; readonly value: schemas.Schema }
  | { readonly kind: 'open' }
  | { readonly kind: 'embedded'; readonly open: boolean }
  | { readonly kind: 'list'; readonly items: schemas.Schema | undefined }
  | { readonly kind: 'scalar'; readonly text: string | undefined };

const OPEN = '{ [key: string]: unknown }';

/** Emits the patch views of one served version (`version.names.view` and one per named type). */
export function emitView(version: modeling.VersionModel): EmittedView {
  return new ViewEmitter(version).emit();
}

class ViewEmitter {
  private readonly viewNames = new Map<schemas.Schema, string>();
  /** The named nodes whose views the members being built refer to. */
  private referenced = new Set<schemas.Schema>();

  constructor(private readonly version: modeling.VersionModel) {
    const registry = new naming.NameRegistry([...Object.values(version.names), ...version.typeNames.values(), ...version.inputTypeNames.values()]);
    for (const [node, name] of this.namedNodes()) this.viewNames.set(node, registry.claim(`${name}PatchView`));
  }

  /**
   * The root view, then the views it reaches, in the model's order. Types that only occur inside
   * lists (written whole, never viewed) get no view.
   */
  emit(): EmittedView {
    const root = this.rootView();
    const reached = new Map<schemas.Schema, string>();
    const named = new Map(this.namedNodes().map(([node, name, path]) => [node, { name, path }]));
    const queue = [...this.referenced];
    while (queue.length > 0) {
      const node = queue.shift()!;
      if (reached.has(node)) continue;
      const { name, path } = named.get(node)!;
      this.referenced = new Set();
      const doc = `/** The patch view of \`${path}\` (${name}): read to write into it, assign merge-patch values. */`;
      reached.set(node, `${doc}\n${this.interfaceOf(this.viewNames.get(node)!, this.objectMembers(node, name))}`);
      queue.push(...this.referenced);
    }
    const blocks = [root, ...[...named.keys()].filter((node) => reached.has(node)).map((node) => reached.get(node)!)];
    return { text: blocks.join('\n\n') };
  }

  /** The view of a named node (and a note that it is needed). */
  private viewOf(node: schemas.Schema): string {
    this.referenced.add(node);
    return this.viewNames.get(node)!;
  }

  /** Spec, status and the nested named types, in the model's order, with their data paths. */
  private namedNodes(): [schemas.Schema, string, string][] {
    const { version } = this;
    const nodes: [schemas.Schema, string, string][] = [];
    if (version.specSchema) nodes.push([version.specSchema, version.names.spec, 'spec']);
    if (version.statusSchema) nodes.push([version.statusSchema, version.names.status, 'status']);
    for (const nested of version.nestedTypes) nodes.push([nested.schema, nested.name, nested.path]);
    return nodes;
  }

  private rootView(): string {
    const { version } = this;
    const { names } = version;
    const root = version.schema;
    const apiVersion = JSON.stringify(`${version.group}/${version.version}`);
    const kind = JSON.stringify(version.kind);
    const members = [...accessor('apiVersion', `${apiVersion} | undefined`, apiVersion), ...accessor('kind', `${kind} | undefined`, kind)];
    const required = new Set(schemas.requiredOf(root));
    const rootOpen = schemas.flag(root, schemas.PRESERVE_UNKNOWN_FIELDS);
    const declared = new Set<string>();
    for (const [property, child] of schemas.propertiesOf(root)) {
      declared.add(property);
      if (property === 'apiVersion' || property === 'kind' || ACCUMULATOR_MEMBERS.includes(property)) continue;
      members.push(...this.property(property, child, names.body, required.has(property)));
    }
    for (const section of ['spec', 'status']) {
      if (!declared.has(section) && rootOpen) members.push(...accessor(section, OPEN, `${OPEN} | null`));
    }
    if (rootOpen) members.push(`[key: string]: unknown;`);
    const doc = [
      '/**',
      ` * What handlers of ${version.kind} write through as \`patch\` (with the accumulator's \`metadata\`, \`setAt()\`, …):`,
      ' * `null` removes what merge patch can remove, nested objects are written into or assigned partially,',
      ' * lists are assigned whole.',
      ' */',
    ].join('\n');
    return `${doc}\n${this.interfaceOf(names.view, members)}`;
  }

  /** The members of a named object type's view. */
  private objectMembers(node: schemas.Schema, typeName: string): string[] {
    const members: string[] = [];
    const required = new Set(schemas.requiredOf(node));
    const declared = new Set<string>();
    for (const [property, child] of schemas.propertiesOf(node)) {
      declared.add(property);
      members.push(...this.property(property, child, typeName, required.has(property)));
    }
    if (schemas.flag(node, schemas.EMBEDDED_RESOURCE)) members.unshift(...this.envelope(declared));
    if (schemas.flag(node, schemas.PRESERVE_UNKNOWN_FIELDS) || schemas.own(node, 'additionalProperties') === true) {
      members.push('[key: string]: unknown;');
    }
    return members;
  }

  /** `apiVersion`, `kind` (required by the API server: never removable) and `metadata` of an embedded resource. */
  private envelope(declared: ReadonlySet<string>): string[] {
    const members: string[] = [];
    for (const name of ['apiVersion', 'kind']) if (!declared.has(name)) members.push(...accessor(name, 'string | undefined', 'string'));
    if (!declared.has('metadata')) {
      members.push(
        ...accessor('metadata', normalising.runtimeType('ObjectMetaPatchView'), `${MERGE_PATCH}<${normalising.runtimeType('ObjectMetaInput')}> | null`),
      );
    }
    return members;
  }

  /** The accessor pair of one property of a parent type (its read type is `parent`). */
  private property(name: string, child: schemas.Schema, parent: string, required: boolean): string[] {
    // A defaulted property is removable even when required: the server puts the default back.
    const removable = !required || schemas.flag(child, 'nullable') || schemas.hasDefault(child);
    const orNull = removable ? ' | null' : '';
    const read = `(${parent}[${JSON.stringify(name)}] & {})`;
    const [get, set] = this.accessorTypes(child, read, orNull, VIEW_OWN_MEMBERS.includes(name));
    return accessor(name, get, set);
  }

  /**
   * The reading and writing types of a property (`read` is its read type). A property the runtime's
   * view answers itself (`own`) reads as `unknown`, and no view is emitted for it.
   */
  private accessorTypes(child: schemas.Schema, read: string, orNull: string, own: boolean): [string, string] {
    const reading = (type: () => string): string => (own ? 'unknown' : type());
    const shape = this.shapeOf(child);
    switch (shape.kind) {
      case 'named':
        return [reading(() => this.viewOf(child)), `${MERGE_PATCH}<${writeTypeName(this.version, child)}>${orNull}`];
      case 'map':
        return [reading(() => this.mapView(shape.value, read)), `${MERGE_PATCH}<${this.writeType(child, read)}>${orNull}`];
      case 'open':
        return [reading(() => OPEN), `${OPEN}${orNull}`];
      case 'embedded':
        return [reading(() => this.embeddedView(shape.open)), `${MERGE_PATCH}<${read}>${orNull}`];
      case 'list': {
        const whole = this.writeType(child, read);
        return [reading(() => `${READONLY_DEEP}<${whole}>${orNull} | undefined`), `${whole}${orNull}`];
      }
      case 'scalar': {
        const type = shape.text ?? read;
        return [reading(() => `${type}${orNull} | undefined`), `${type}${orNull}`];
      }
    }
  }

  /** What indexing a map gives: entries' views for objects, read-only lists, scalars; `null` removes. */
  private mapView(value: schemas.Schema, mapRead: string): string {
    const read = `(${mapRead}[string] & {})`;
    const shape = this.shapeOf(value);
    let entry: string;
    if (shape.kind === 'named') entry = this.viewOf(value);
    else if (shape.kind === 'map') entry = this.mapView(shape.value, read);
    else if (shape.kind === 'open') entry = OPEN;
    else if (shape.kind === 'embedded') entry = this.embeddedView(shape.open);
    else if (shape.kind === 'list') {
      entry = `${READONLY_DEEP}<${this.writeType(value, read)}> | null`;
    } else entry = `${shape.text ?? read} | null`;
    return `{ [key: string]: ${entry} }`;
  }

  /** The view of an embedded resource without declared properties (a type literal inside an interface). */
  private embeddedView(open: boolean): string {
    const members = this.envelope(new Set());
    if (open) members.push('[key: string]: unknown;');
    return `{\n${members.map((member) => `    ${member}`).join('\n')}\n  }`;
  }

  /** The type of a whole value users write for a node (not null); `read` is its read type. */
  private writeType(node: schemas.Schema, read: string): string {
    const shape = this.shapeOf(node);
    const orNull = (child: schemas.Schema): string => (schemas.flag(child, 'nullable') ? ' | null' : '');
    switch (shape.kind) {
      case 'named':
        return writeTypeName(this.version, node);
      case 'map':
        return `{ [key: string]: ${this.writeType(shape.value, `(${read}[string] & {})`)}${orNull(shape.value)} }`;
      case 'open':
        return OPEN;
      case 'embedded':
        return read;
      case 'list': {
        if (!shape.items) return 'unknown[]';
        const item = `${this.writeType(shape.items, `(${read}[number] & {})`)}${orNull(shape.items)}`;
        return topLevelOperator(item) ? `(${item})[]` : `${item}[]`;
      }
      case 'scalar':
        return shape.text ?? read;
    }
  }

  private shapeOf(node: schemas.Schema): Shape {
    const name = this.version.typeNames.get(node);
    if (name !== undefined) return { kind: 'named', name };
    const type = schemas.typeOf(node);
    const enumeration = schemas.own(node, 'enum');
    if (Array.isArray(enumeration) && type !== 'object' && type !== 'array') return { kind: 'scalar', text: enumText(enumeration) };
    if (schemas.flag(node, schemas.INT_OR_STRING)) return { kind: 'scalar', text: 'number | string' };
    if (type === undefined) return { kind: 'scalar', text: 'unknown' };
    if (type === 'object') {
      if (schemas.flag(node, schemas.EMBEDDED_RESOURCE)) return { kind: 'embedded', open: schemas.flag(node, schemas.PRESERVE_UNKNOWN_FIELDS) };
      const value = schemas.additionalSchemaOf(node);
      if (value) return { kind: 'map', value };
      if (schemas.own(node, 'additionalProperties') === true || schemas.flag(node, schemas.PRESERVE_UNKNOWN_FIELDS)) return { kind: 'open' };
      return { kind: 'scalar', text: undefined };
    }
    if (type === 'array') return { kind: 'list', items: schemas.itemsOf(node) };
    return { kind: 'scalar', text: type === 'string' ? 'string' : type === 'boolean' ? 'boolean' : 'number' };
  }

  private interfaceOf(name: string, members: readonly string[]): string {
    return `export interface ${name} {\n${members.map((member) => `  ${member}`).join('\n')}\n}`;
  }
}

/** A pair of accessors with their reading and writing types. */
function accessor(name: string, get: string, set: string): string[] {
  const key = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
  return [`get ${key}(): ${get};`, `set ${key}(value: ${set});`];
}

/** Whether a type's text has a union or intersection outside brackets (then `[]` needs parentheses). */
function topLevelOperator(text: string): boolean {
  let depth = 0;
  let quoted = false;
  for (const [index, char] of [...text].entries()) {
    if (char === '"' && text[index - 1] !== '\\') quoted = !quoted;
    if (quoted) continue;
    if ('<{(['.includes(char)) depth += 1;
    else if ('>})]'.includes(char)) depth -= 1;
    else if (depth === 0 && (char === '|' || char === '&')) return true;
  }
  return false;
}

/** An enum of scalars as a union of literals (as the read types print it); undefined if it has other values. */
function enumText(values: readonly unknown[]): string | undefined {
  if (values.length === 0 || !values.every((value) => ['string', 'number', 'boolean'].includes(typeof value))) return undefined;
  return values.map((value) => JSON.stringify(value)).join(' | ');
}
