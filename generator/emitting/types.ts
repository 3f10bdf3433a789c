/**
 * Emitting types: one TypeScript module per served CRD version, from the model.
 *
 * Each module declares, for one kind and version:
 * - `<Kind>`: the object body — literal `apiVersion` and `kind`, `metadata` as the runtime's
 *   `ObjectMeta` (never regenerated from the CRD), `spec`/`status` (required only if the schema
 *   says so), and any other top-level field the schema declares;
 * - `<Kind>Spec`, `<Kind>Status` and every nested named type the model lists, in that order;
 * - `<Kind>Patch`: a JSON merge patch of the body (deep partial, `null` removes, lists replaced);
 * - `<Kind>PatchView` and a view per named type: what handlers write through (views.ts);
 * - the typed resource descriptor `<Plural> = resource<Kind, Input, <Kind>PatchView>({...})`.
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
 * - `x-kubernetes-embedded-resource` → `KubernetesObject & …` (the runtime's object envelope);
 * - `additionalProperties: <schema>` → `{ [key: string]: T }`; objects without it stay closed
 *   (no index signature; an object with no properties at all is `Record<string, never>`);
 * - `required` → non-optional; a property with a `default` is non-optional too (the API server
 *   always fills it in) and the default is documented with `@default`;
 * - `description`, `format`, numeric/length/pattern constraints and `x-kubernetes-validations`
 *   (CEL) rules → TSDoc;
 * - `allOf`/`anyOf`/`oneOf`/`not` → nothing (in structural schemas they only validate);
 * - property names that are not identifiers are quoted, so nothing is lost (`"-Xms"`, `"rbd-mirror"`).
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
  /** The names the module exports (body, spec, status, patch, descriptor; `list` is reserved only). */
  readonly names: modeling.ModuleNames;
  readonly text: string;
}

/** Where the runtime is imported from in generated code. */
export const RUNTIME_MODULE = 'kopf-gen/runtime';

/** Emits the modules of every served version of every CRD in the model, in model order. */
export function emitAllTypes(model: modeling.GeneratorModel): EmittedModule[] {
  return model.crds.flatMap((crd) => emitCrdTypes(crd));
}

/** Emits one module per served version of a CRD; identical schemas share their declarations. */
export function emitCrdTypes(crd: modeling.CrdModel): EmittedModule[] {
  const cache = new Map<string, Declarations>();
  return crd.versions.map((version) => {
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
  /** Spec, status and nested declarations, printed. */
  readonly text: string;
  readonly usesKubernetesObject: boolean;
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

function startEmission(version: modeling.VersionModel): Emission {
  const normalise: normalising.NormaliseContext = { typeNames: version.typeNames, originals: new WeakMap(), usesKubernetesObject: false };
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
    transform: (schema) => markedType(schema, normalise),
    postTransform: undefined,
    transformProperty: (property, schema) => {
      properties.push([property, schema]);
      return property;
    },
  };
  const sourceFile = ts.createSourceFile('generated.ts', '', ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS);
  return { normalise, ctx, properties, printer: ts.createPrinter({ newLine: ts.NewLineKind.LineFeed }), sourceFile };
}

/** The transform hook: the type of a marked node (see normalising.ts), or `undefined`. */
function markedType(schema: SchemaObject, context: normalising.NormaliseContext): ts.TypeNode | undefined {
  const found = normalising.markerOf(schema);
  if (!found) return undefined;
  const { marker, nullable } = found;
  let type: ts.TypeNode;
  if (marker.kind === 'ref') {
    type = ts.factory.createTypeReferenceNode(marker.name);
  } else if (marker.kind === 'int-or-string') {
    type = ts.factory.createUnionTypeNode([keyword(ts.SyntaxKind.NumberKeyword), keyword(ts.SyntaxKind.StringKeyword)]);
  } else {
    context.usesKubernetesObject = true;
    const object = ts.factory.createTypeReferenceNode('KubernetesObject');
    type = marker.open ? ts.factory.createIntersectionTypeNode([object, openRecord()]) : object;
  }
  if (!nullable) return type;
  const members = ts.isUnionTypeNode(type) ? [...type.types] : [type];
  return ts.factory.createUnionTypeNode([...members, ts.factory.createLiteralTypeNode(ts.factory.createNull())]);
}

function emitDeclarations(version: modeling.VersionModel): Declarations {
  const emission = startEmission(version);
  const statements: ts.Statement[] = [];
  const { names } = version;
  const rootOpen = schemas.flag(version.schema, schemas.PRESERVE_UNKNOWN_FIELDS);
  for (const [name, schema, role] of [
    [names.spec, version.specSchema, 'spec'],
    [names.status, version.statusSchema, 'status'],
  ] as const) {
    statements.push(schema ? declare(emission, name, schema) : absent(name, role, rootOpen));
  }
  for (const nested of version.nestedTypes) statements.push(declare(emission, nested.name, nested.schema, [`\`${nested.path}\``]));
  return { text: print(emission, statements), usesKubernetesObject: emission.normalise.usesKubernetesObject };
}

/** Declares one named type: an interface when it is a plain object, else a type alias. */
function declare(emission: Emission, name: string, schema: schemas.Schema, lead: string[] = []): ts.Statement {
  const type = convert(emission, normalising.normalise(schema, emission.normalise, true), name);
  const embedded = schemas.flag(schema, schemas.EMBEDDED_RESOURCE);
  const members = embedded ? undefined : membersOf(type);
  const exported = [ts.factory.createModifier(ts.SyntaxKind.ExportKeyword)];
  let statement: ts.Statement;
  if (members) {
    statement = ts.factory.createInterfaceDeclaration(exported, name, undefined, undefined, members);
  } else {
    if (embedded) emission.normalise.usesKubernetesObject = true;
    const body = embedded ? ts.factory.createIntersectionTypeNode([ts.factory.createTypeReferenceNode('KubernetesObject'), type]) : type;
    statement = ts.factory.createTypeAliasDeclaration(exported, name, undefined, body);
  }
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
  const type = rootOpen
    ? openRecord()
    : ts.factory.createTypeReferenceNode('Record', [keyword(ts.SyntaxKind.StringKeyword), keyword(ts.SyntaxKind.NeverKeyword)]);
  const statement = ts.factory.createTypeAliasDeclaration([ts.factory.createModifier(ts.SyntaxKind.ExportKeyword)], name, undefined, type);
  const why = rootOpen ? 'the object keeps any fields it is given' : 'the API server prunes any it is given';
  return comments.attach(statement, [`The schema declares no \`${role}\`; ${why}.`]);
}

/** Declares `<Kind>`: the body with literal apiVersion/kind and the runtime's ObjectMeta. */
function declareBody(emission: Emission, version: modeling.VersionModel): ts.Statement {
  const root = version.schema;
  const { names } = version;
  const context = emission.normalise;
  const originals = new Map(schemas.propertiesOf(root));
  const literal = (value: string, original: schemas.Schema | undefined): SchemaObject => {
    const node = { enum: [value] } as SchemaObject;
    if (original) context.originals.set(node, original);
    return node;
  };
  const properties: Record<string, SchemaObject> = {
    apiVersion: literal(`${version.group}/${version.version}`, originals.get('apiVersion')),
    kind: literal(version.kind, originals.get('kind')),
    metadata: normalising.refNode('ObjectMeta', originals.get('metadata'), context),
    spec: version.specSchema ? normalising.normalise(version.specSchema, context) : normalising.refNode(names.spec, undefined, context),
    status: version.statusSchema ? normalising.normalise(version.statusSchema, context) : normalising.refNode(names.status, undefined, context),
  };
  const required = new Set(['apiVersion', 'kind']);
  for (const name of schemas.requiredOf(root)) if (name !== 'metadata') required.add(name);
  for (const [name, child] of originals) {
    if (schemas.hasDefault(child) && name !== 'metadata') required.add(name);
    if (!Object.hasOwn(properties, name)) normalising.define(properties, name, normalising.normalise(child, context));
  }
  const normalised = { type: 'object', properties, required: [...required] } as Record<string, unknown>;
  if (schemas.flag(root, schemas.PRESERVE_UNKNOWN_FIELDS)) normalised['additionalProperties'] = true;
  const type = convert(emission, normalised as SchemaObject, names.body);
  const members = membersOf(type) ?? [];
  const statement = ts.factory.createInterfaceDeclaration([ts.factory.createModifier(ts.SyntaxKind.ExportKeyword)], names.body, undefined, undefined, members);
  const scope = version.namespaced ? 'namespaced' : 'cluster-scoped';
  return comments.attach(
    statement,
    comments.docLines(root, [`${version.kind} (${version.group}/${version.version}): a ${scope} custom resource, \`${version.plural}.${version.group}\`.`]),
  );
}

function assemble(version: modeling.VersionModel, declarations: Declarations): EmittedModule {
  const emission = startEmission(version);
  const body = print(emission, [declareBody(emission, version)]);
  const { names } = version;
  const usesKubernetesObject = declarations.usesKubernetesObject || emission.normalise.usesKubernetesObject;
  const view = views.emitView(version);
  const viewTypes = ['InputOf', ...view.runtimeTypes];
  const source = version.file.split(/[\\/]/).pop() ?? version.file;
  const header = [
    '/**',
    ` * ${version.kind}, version ${version.version} of ${version.plural}.${version.group}: types and the typed resource descriptor.`,
    ' *',
    ` * Generated by kopf-gen from ${escapeComment(source)}. DO NOT EDIT: \`kopf-gen generate\` rewrites this file.`,
    ' */',
    `import { resource } from "${RUNTIME_MODULE}";`,
    `import type { ${usesKubernetesObject ? 'KubernetesObject, ObjectMeta' : 'ObjectMeta'} } from "${RUNTIME_MODULE}";`,
    `import type { ${viewTypes.join(', ')} } from "${RUNTIME_MODULE}";`,
  ].join('\n');
  const patch = [
    `/** A JSON merge patch of ${version.kind}: every field optional, \`null\` removes a field, lists are replaced whole. */`,
    `export type ${names.patch} = MergePatch<${names.body}>;`,
    '',
    '/** Deep partial with `null` for removal, as in JSON merge patches (RFC 7386). */',
    'type MergePatch<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: MergePatch<T[K]> | null } : T;',
  ].join('\n');
  return {
    crdName: version.crdName,
    group: version.group,
    version: version.version,
    kind: version.kind,
    fileName: `${version.plural}.${version.group}.${version.version}.ts`,
    names,
    text: `${header}\n\n${body}\n\n${declarations.text}\n\n${patch}\n\n${view.text}\n\n${descriptor(version)}\n`,
  };
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
  return `${opening}\nexport const ${version.names.descriptor} = resource<${version.names.body}, InputOf<${version.names.body}>, ${version.names.view}>({\n${fields.map((field) => `  ${field},`).join('\n')}\n});`;
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

function openRecord(): ts.TypeLiteralNode {
  const key = ts.factory.createParameterDeclaration(undefined, undefined, 'key', undefined, keyword(ts.SyntaxKind.StringKeyword));
  return ts.factory.createTypeLiteralNode([ts.factory.createIndexSignature(undefined, [key], keyword(ts.SyntaxKind.UnknownKeyword))]);
}

function escapeComment(text: string): string {
  return text.replace(/\*\//g, '*\\/');
}
