/**
 * Emitting types: one TypeScript module per served CRD version, from the model.
 *
 * Each module declares, for one kind and version:
 * - `<Kind>`: the object body as the API server returns it — literal `apiVersion` and `kind`,
 *   `metadata` as the runtime's `ObjectMeta` (never regenerated from the CRD), `spec`/`status`
 *   (required only if the schema says so), and any other top-level field the schema declares;
 * - `<Kind>Input`: the object as a user writes it (to create or apply it, or inside a patch) —
 *   literal `apiVersion` and `kind`, required; `metadata` as the runtime's `ObjectMetaInput` with a
 *   `name` or a `generateName` (what the API server needs to name it); `status` optional; fields
 *   with a default optional at every depth;
 * - `<Kind>Spec`, `<Kind>Status` and every nested named type the model lists, in that order, each
 *   followed by its input twin `<Name>Input` when it has one (see modeling.ts);
 * - `<Kind>Patch = MergePatch<<Kind>Input>`: a JSON merge patch as plain data (the runtime's
 *   `MergePatch`: deep partial, `null` only where the server can remove, lists replaced whole);
 * - `<Kind>PatchView` and a view per named type: what handlers write through as `patch` (views.ts);
 * - the typed resource descriptor `<Plural> = resource<<Kind>, <Kind>Input, <Kind>PatchView, <namespaced>>({...})`.
 *
 * Engine: openapi-typescript's `transformSchemaObject` turns each named type's schema into a type
 * node, with its `transform` hook producing the Kubernetes-specific types that normalising.ts marks,
 * and its `transformProperty` hook collecting properties so their TSDoc can be replaced by ours
 * (comments.ts). The TypeScript printer prints the nodes. We chose the hooks over openapi-typescript's
 * document-level `openapiTS()` because a CRD is not an OpenAPI document: named types here are
 * interfaces with their own names, not `components["schemas"][…]` lookups.
 *
 * Mapping rules (schema → TypeScript):
 * - `type: string|integer|number|boolean` → `string` / `number` / `boolean`; `array` → `T[]`;
 * - `enum` → union of literals; `nullable: true` → `| null`;
 * - `x-kubernetes-int-or-string` → `number | string`;
 * - `x-kubernetes-preserve-unknown-fields` → open record `{ [key: string]: unknown }`, intersected
 *   with (added to) the declared properties; on an untyped node, `unknown`;
 * - `x-kubernetes-embedded-resource` → an object with `apiVersion: string` and `kind: string`
 *   (required: the API server requires them) and `metadata?` (`ObjectMeta`; `ObjectMetaInput` in
 *   input types), then the declared properties;
 * - `additionalProperties: <schema>` → `{ [key: string]: T }`; objects without it stay closed
 *   (no index signature; an object with no properties at all is `{ [key: string]: never }`);
 * - `required` → non-optional; a property with a `default` is non-optional in body types (the API
 *   server always fills it in) and optional in input types (a user may leave it out, even when
 *   `required` names it: the server applies defaults before it validates), and the default is
 *   documented with `@default`;
 * - `description`, `format`, numeric/length/pattern constraints and `x-kubernetes-validations`
 *   (CEL) rules → TSDoc;
 * - `allOf`/`anyOf`/`oneOf`/`not` → nothing (in structural schemas they only validate);
 * - property names that are not identifiers are quoted, so nothing is lost (`"-Xms"`, `"rbd-mirror"`).
 *
 * Names can never break compilation. The runtime is imported as one namespace, `$kopf`, a name no
 * generated identifier can take (they are `[A-Za-z0-9_]`), and no global type is referred to by name
 * (`{ [key: string]: never }`, not `Record<string, never>`), so kinds named `ObjectMeta`,
 * `MergePatch`, `Record` or `Object` shadow nothing that is used. An *optional* property named like
 * a member of `Object.prototype` (`constructor`, `toString`, `valueOf`, `hasOwnProperty`,
 * `isPrototypeOf`, `propertyIsEnumerable`, `toLocaleString`) is widened by that member's type —
 * `constructor?: string | {}["constructor"]`: every object literal has the member through its
 * prototype, and TypeScript checks it against the property's type even when the literal does not
 * set it, so without the widening no literal would be assignable. It is also what reading the
 * property of an object that lacks it returns. (`__proto__` needs nothing: it is an ordinary
 * property name in types; write it in literals as a computed key, `["__proto__"]`.)
 *
 * Versions of one kind with identical schemas reuse the declarations emitted for the first one
 * (only the body and the descriptor differ), which keeps multi-version CRDs cheap to emit.
 */
import ts from 'typescript';
import { transformSchemaObject } from 'openapi-typescript';
import type { GlobalContext, SchemaObject } from 'openapi-typescript';
import type * as modeling from '../modeling.js';
import * as schemas from '../schemas.js';
import * as comments from './comments.js';
import * as normalising from './normalising.js';
import * as views from './views.js';

/** One generated module. */
export interface EmittedModule {
  readonly crdName: string;
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** A collision-free file name for the module: `<plural>.<group>.<version>.ts`. */
  readonly fileName: string;
  /** The reserved names of the module (the nested types and input twins are in the version's model). */
  readonly names: modeling.ModuleNames;
  readonly text: string;
}

/** Where the runtime is imported from in generated code. */
export const RUNTIME_MODULE = 'kopf-gen/runtime';

/** The namespace generated code imports the runtime as; its types are `$kopf.<Name>` (`normalising.runtimeType`). */
export const RUNTIME_ALIAS = normalising.RUNTIME_ALIAS;

/** Emits the modules of every served version of every CRD in the model, in model order. */
export function emitAllTypes(model: modeling.GeneratorModel): EmittedModule[] {
  return model.crds.flatMap((crd) => emitCrdTypes(crd));
}

/** Emits one module per served version of a CRD; identical schemas share their declarations. */
export function emitCrdTypes(crd: modeling.CrdModel): EmittedModule[] {
  const cache = new Map<string, Declarations>();
  return crd.versions.map((version) => {
    // A memo key, not an equality of values: key order is the order of the emitted properties (json.ts).
    const key = JSON.stringify(version.schema);
    let declarations = cache.get(key);
    if (!declarations) {
      declarations = emitDeclarations(version);
      cache.set(key, declarations);
    }
    return assemble(version, declarations);
  });
}

/** Emits the module of one served version. */
export function emitTypes(version: modeling.VersionModel): EmittedModule {
  return assemble(version, emitDeclarations(version));
}

interface Declarations {
  /** Spec, status and nested declarations, each followed by its input twin, printed. */
  readonly text: string;
}

/** Per-module emission state: the normalisation context and openapi-typescript's context. */
interface Emission {
  readonly normalise: normalising.NormaliseContext;
  readonly ctx: GlobalContext;
  /** Properties openapi-typescript created since the last declaration, with their normalised schemas. */
  readonly properties: [ts.PropertySignature, SchemaObject][];
  readonly printer: ts.Printer;
  readonly sourceFile: ts.SourceFile;
}

/** The members of `Object.prototype`: optional properties of these names are widened (see the header). */
const PROTOTYPE_MEMBERS = new Set(['constructor', 'toString', 'toLocaleString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable']);

function startEmission(version: modeling.VersionModel, mode: normalising.NormaliseContext['mode']): Emission {
  const typeNames = mode === 'input' ? version.inputTypeNames : version.typeNames;
  const normalise: normalising.NormaliseContext = { typeNames, mode, originals: new WeakMap() };
  const properties: [ts.PropertySignature, SchemaObject][] = [];
  const ctx: GlobalContext = {
    additionalProperties: false,
    alphabetize: false,
    arrayLength: false,
    defaultNonNullable: false,
    discriminators: { objects: {}, refsHandled: [] },
    emptyObjectsUnknown: false,
    enum: false,
    enumValues: false,
    conditionalEnums: false,
    dedupeEnums: false,
    excludeDeprecated: false,
    exportType: false,
    immutable: false,
    injectFooter: [],
    pathParamsAsTypes: false,
    propertiesRequiredByDefault: false,
    rootTypes: false,
    rootTypesNoSchemaPrefix: false,
    rootTypesKeepCasing: false,
    redoc: {} as GlobalContext['redoc'],
    silent: true,
    makePathsEnum: false,
    generatePathParams: false,
    readWriteMarkers: false,
    resolve: () => undefined,
    transform: (schema) => markedType(schema),
    postTransform: undefined,
    transformProperty: (property, schema) => {
      const widened = widenPrototypeMember(property);
      properties.push([widened, schema]);
      return widened;
    },
  };
  const sourceFile = ts.createSourceFile('generated.ts', '', ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS);
  return { normalise, ctx, properties, printer: ts.createPrinter({ newLine: ts.NewLineKind.LineFeed }), sourceFile };
}

/** `constructor?: T` → `constructor?: T | {}["constructor"]` (see the header); other properties unchanged. */
function widenPrototypeMember(property: ts.PropertySignature): ts.PropertySignature {
  const name = ts.isIdentifier(property.name) || ts.isStringLiteral(property.name) ? property.name.text : undefined;
  if (!property.questionToken || name === undefined || !PROTOTYPE_MEMBERS.has(name) || !property.type) return property;
  const member = ts.factory.createIndexedAccessTypeNode(
    ts.factory.createTypeLiteralNode([]),
    ts.factory.createLiteralTypeNode(ts.factory.createStringLiteral(name)),
  );
  const members = ts.isUnionTypeNode(property.type) ? [...property.type.types] : [property.type];
  const type = ts.factory.createUnionTypeNode([...members, member]);
  return ts.factory.updatePropertySignature(property, property.modifiers, property.name, property.questionToken, type);
}

/** The transform hook: the type of a marked node (see normalising.ts), or `undefined`. */
function markedType(schema: SchemaObject): ts.TypeNode | undefined {
  const found = normalising.markerOf(schema);
  if (!found) return undefined;
  const { marker, nullable } = found;
  let type: ts.TypeNode;
  if (marker.kind === 'ref') {
    type = reference(marker.name);
  } else if (marker.kind === 'intersection') {
    type = ts.factory.createIntersectionTypeNode(marker.names.map(reference));
  } else if (marker.kind === 'int-or-string') {
    type = ts.factory.createUnionTypeNode([keyword(ts.SyntaxKind.NumberKeyword), keyword(ts.SyntaxKind.StringKeyword)]);
  } else {
    type = closedRecord();
  }
  if (!nullable) return type;
  const members = ts.isUnionTypeNode(type) ? [...type.types] : [type];
  return ts.factory.createUnionTypeNode([...members, ts.factory.createLiteralTypeNode(ts.factory.createNull())]);
}

/** A reference to a declared type (`WidgetSpec`) or a runtime one (`$kopf.ObjectMeta`). */
function reference(name: string): ts.TypeReferenceNode {
  const [first, ...rest] = name.split('.');
  const qualified = rest.reduce<ts.EntityName>((left, right) => ts.factory.createQualifiedName(left, right), ts.factory.createIdentifier(first!));
  return ts.factory.createTypeReferenceNode(qualified);
}

function emitDeclarations(version: modeling.VersionModel): Declarations {
  const body = startEmission(version, 'body');
  const input = startEmission(version, 'input');
  const twins = new Map(version.inputTypes.map((twin) => [twin.schema, twin]));
  const statements: ts.Statement[] = [];
  const { names } = version;
  const rootOpen = schemas.flag(version.schema, schemas.PRESERVE_UNKNOWN_FIELDS);
  const named: [string, schemas.Schema | undefined, string, 'spec' | 'status' | undefined][] = [
    [names.spec, version.specSchema, 'spec', 'spec'],
    [names.status, version.statusSchema, 'status', 'status'],
    ...version.nestedTypes.map((nested): [string, schemas.Schema, string, undefined] => [nested.name, nested.schema, nested.path, undefined]),
  ];
  for (const [name, schema, path, role] of named) {
    if (!schema) {
      statements.push(absent(name, role!, rootOpen));
      continue;
    }
    statements.push(declare(body, name, schema, role ? [] : [`\`${path}\``]));
    const twin = twins.get(schema);
    if (twin) statements.push(declare(input, twin.name, schema, [`\`${path}\` as a user writes it: fields with a default may be left out.`]));
  }
  return { text: print(body, statements) };
}

/** Declares one named type: an interface when it is a plain object, else a type alias. */
function declare(emission: Emission, name: string, schema: schemas.Schema, lead: string[] = []): ts.Statement {
  const normalised = normalising.normalise(schema, emission.normalise, true);
  const type = convert(emission, normalised, name);
  const members = normalising.markerOf(normalised) ? undefined : membersOf(type);
  const exported = [ts.factory.createModifier(ts.SyntaxKind.ExportKeyword)];
  const statement = members
    ? ts.factory.createInterfaceDeclaration(exported, name, undefined, undefined, members)
    : ts.factory.createTypeAliasDeclaration(exported, name, undefined, type);
  return comments.attach(statement, comments.docLines(schema, lead));
}

/** Runs openapi-typescript on a normalised schema and replaces its property comments with ours. */
function convert(emission: Emission, normalised: SchemaObject, name: string): ts.TypeNode {
  emission.properties.length = 0;
  const type = transformSchemaObject(normalised, { path: `#/${name}`, ctx: emission.ctx });
  for (const [property, schema] of emission.properties) {
    const original = emission.normalise.originals.get(schema);
    comments.attach(property, original ? comments.docLines(original) : [], original ? comments.docTags(original) : []);
  }
  return type;
}

/** The members of a type literal, or of an intersection of type literals (merged); else undefined. */
function membersOf(type: ts.TypeNode): ts.TypeElement[] | undefined {
  if (ts.isTypeLiteralNode(type)) return [...type.members];
  if (ts.isIntersectionTypeNode(type) && type.types.every(ts.isTypeLiteralNode)) {
    return type.types.flatMap((part) => [...(part as ts.TypeLiteralNode).members]);
  }
  return undefined;
}

/** `<Kind>Spec`/`<Kind>Status` when the schema declares none. */
function absent(name: string, role: 'spec' | 'status', rootOpen: boolean): ts.Statement {
  const type = rootOpen ? openRecord() : closedRecord();
  const statement = ts.factory.createTypeAliasDeclaration([ts.factory.createModifier(ts.SyntaxKind.ExportKeyword)], name, undefined, type);
  const why = rootOpen ? 'the object keeps any fields it is given' : 'the API server prunes any it is given';
  return comments.attach(statement, [`The schema declares no \`${role}\`; ${why}.`]);
}

/**
 * Declares `<Kind>` (mode `body`: as read) or `<Kind>Input` (mode `input`: as written), with literal
 * apiVersion/kind and the runtime's metadata type.
 */
function declareBody(emission: Emission, version: modeling.VersionModel): ts.Statement {
  const root = version.schema;
  const { names } = version;
  const context = emission.normalise;
  const input = context.mode === 'input';
  const originals = new Map(schemas.propertiesOf(root));
  const literal = (value: string, original: schemas.Schema | undefined): SchemaObject => {
    const node = { enum: [value] } as SchemaObject;
    if (original) context.originals.set(node, original);
    return node;
  };
  const section = (schema: schemas.Schema | undefined, name: string): SchemaObject =>
    schema ? normalising.normalise(schema, context) : normalising.refNode(name, undefined, context);
  const properties: Record<string, SchemaObject> = {
    apiVersion: literal(`${version.group}/${version.version}`, originals.get('apiVersion')),
    kind: literal(version.kind, originals.get('kind')),
    metadata: input
      ? normalising.intersectionNode([normalising.metadataType('input'), normalising.runtimeType('NameOrGenerateName')], originals.get('metadata'), context)
      : normalising.refNode(normalising.metadataType('body'), originals.get('metadata'), context),
    spec: section(version.specSchema, names.spec),
    status: section(version.statusSchema, names.status),
  };
  const required = new Set(['apiVersion', 'kind']);
  if (input) required.add('metadata');
  for (const name of schemas.requiredOf(root)) {
    if (name === 'metadata' || (input && (name === 'status' || schemas.hasDefault(originals.get(name) ?? {})))) continue;
    required.add(name);
  }
  for (const [name, child] of originals) {
    if (schemas.hasDefault(child) && name !== 'metadata' && !input) required.add(name);
    if (!Object.hasOwn(properties, name)) normalising.define(properties, name, normalising.normalise(child, context));
  }
  const normalised = { type: 'object', properties, required: [...required] } as Record<string, unknown>;
  if (schemas.flag(root, schemas.PRESERVE_UNKNOWN_FIELDS)) normalised['additionalProperties'] = true;
  const name = input ? names.input : names.body;
  const type = convert(emission, normalised as SchemaObject, name);
  const members = membersOf(type) ?? [];
  const statement = ts.factory.createInterfaceDeclaration([ts.factory.createModifier(ts.SyntaxKind.ExportKeyword)], name, undefined, undefined, members);
  const scope = version.namespaced ? 'namespaced' : 'cluster-scoped';
  const title = `${version.kind} (${version.group}/${version.version})`;
  if (input) {
    const lead = [
      `${title} as a user writes it, to create or apply one: fields with a default`,
      'may be left out (the API server fills them in), `metadata` needs a `name` or a `generateName`,',
      'and `status` is optional.',
    ];
    return comments.attach(statement, lead);
  }
  return comments.attach(statement, comments.docLines(root, [`${title}: a ${scope} custom resource, \`${version.plural}.${version.group}\`.`]));
}

function assemble(version: modeling.VersionModel, declarations: Declarations): EmittedModule {
  const emission = startEmission(version, 'body');
  const body = print(emission, [declareBody(emission, version)]);
  const inputEmission = startEmission(version, 'input');
  const input = print(inputEmission, [declareBody(inputEmission, version)]);
  const { names } = version;
  const view = views.emitView(version);
  const source = version.file.split(/[\\/]/).pop() ?? version.file;
  const header = [
    '/**',
    ` * ${version.kind}, version ${version.version} of ${version.plural}.${version.group}: types and the typed resource descriptor.`,
    ' *',
    ` * Generated by kopf-gen from ${escapeComment(source)}. DO NOT EDIT: \`kopf-gen generate\` rewrites this file.`,
    ' */',
    `import * as ${normalising.RUNTIME_ALIAS} from "${RUNTIME_MODULE}";`,
  ].join('\n');
  const patch = [
    `/** A JSON merge patch of ${version.kind}, as plain data: every field optional, \`null\` removes what can be removed, lists are replaced whole. */`,
    `export type ${names.patch} = ${normalising.runtimeType('MergePatch')}<${names.input}>;`,
  ].join('\n');
  const parts = [header, body, input, declarations.text, patch, view.text, descriptor(version)];
  return {
    crdName: version.crdName,
    group: version.group,
    version: version.version,
    kind: version.kind,
    fileName: `${version.plural}.${version.group}.${version.version}.ts`,
    names,
    text: `${parts.join('\n\n')}\n`,
  };
}

/**
 * The type arguments of the descriptor: the body, the input type, the handlers' patch view and the
 * scope (`true`/`false`), which types handlers' `namespace` as a `string` or `null` (R-TYPES-301).
 */
function descriptorTypes(version: modeling.VersionModel): string[] {
  return [version.names.body, version.names.input, version.names.view, String(version.namespaced)];
}

function descriptor(version: modeling.VersionModel): string {
  const quote = (value: string): string => JSON.stringify(value);
  const list = (values: readonly string[]): string => `[${values.map(quote).join(', ')}]`;
  const fields = [
    `group: ${quote(version.group)}`,
    `version: ${quote(version.version)}`,
    `plural: ${quote(version.plural)}`,
    `kind: ${quote(version.kind)}`,
    `namespaced: ${version.namespaced}`,
    `singular: ${quote(version.singular)}`,
    `shortNames: ${list(version.shortNames)}`,
    `categories: ${list(version.categories)}`,
    `statusSubresource: ${version.statusSubresource}`,
  ];
  const summary = `The typed resource descriptor of ${version.kind} ${version.version}: pass it to the registration functions.`;
  const warning = version.deprecationWarning ?? `${version.group}/${version.version} ${version.kind} is deprecated.`;
  const opening = version.deprecated ? `/**\n * ${summary}\n *\n * @deprecated ${escapeComment(warning)}\n */` : `/** ${summary} */`;
  return `${opening}\nexport const ${version.names.descriptor} = ${normalising.runtimeType('resource')}<${descriptorTypes(version).join(', ')}>({\n${fields.map((field) => `  ${field},`).join('\n')}\n});`;
}

function print(emission: Emission, statements: readonly ts.Statement[]): string {
  return statements
    .map((statement) => emission.printer.printNode(ts.EmitHint.Unspecified, statement, emission.sourceFile))
    .join('\n\n')
    .replace(/^(?: {4})+/gm, (indent) => ' '.repeat(indent.length / 2));
}

function keyword(kind: ts.KeywordTypeSyntaxKind): ts.KeywordTypeNode {
  return ts.factory.createKeywordTypeNode(kind);
}

/** `{ [key: string]: never }`: an object that can hold nothing. */
function closedRecord(): ts.TypeLiteralNode {
  const key = ts.factory.createParameterDeclaration(undefined, undefined, 'key', undefined, keyword(ts.SyntaxKind.StringKeyword));
  return ts.factory.createTypeLiteralNode([ts.factory.createIndexSignature(undefined, [key], keyword(ts.SyntaxKind.NeverKeyword))]);
}

function openRecord(): ts.TypeLiteralNode {
  const key = ts.factory.createParameterDeclaration(undefined, undefined, 'key', undefined, keyword(ts.SyntaxKind.StringKeyword));
  return ts.factory.createTypeLiteralNode([ts.factory.createIndexSignature(undefined, [key], keyword(ts.SyntaxKind.UnknownKeyword))]);
}

function escapeComment(text: string): string {
  return text.replace(/\*\//g, '*\\/');
}
