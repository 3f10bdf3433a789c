/**
 * Detecting: which resources the user's code refers to — the generated descriptors it registers
 * handlers for, and the built-in resources it watches.
 *
 * `kopf-gen generate` adds a handler stub only for kinds that have none, and never touches user
 * code; so it must read the user's modules, not write them. This module parses them with ts-morph
 * (syntax only: no type-checking, no file system beyond the texts it is given) and collects the
 * generated modules whose descriptor the code refers to:
 * - `import { Widgets } from '../generated/widgets.example.com.v1.js'` (any alias);
 * - `import { Widgets } from '../generated/index.js'` (a top-level export) or
 *   `import { WidgetV1 } …` (a namespace export of the index);
 * - `import * as g from '../generated/…'` followed by `g.Widgets` or `g.WidgetV1`;
 * - `export { Widgets } from '../generated/…'` (a re-export, registered wherever it is imported).
 * A module that refers to a kind's descriptor counts as that kind's handlers, wherever it lives in
 * src/: kopf-gen cannot tell a registration through a helper of the user's from any other use, and
 * a second stub would register the same handler ids again. The same scan finds imports that name
 * generated modules or index exports that no longer exist (after a version was renamed), so that
 * the report can say which file and line to edit.
 *
 * The generated RBAC follows what the code does with each kind (accesses.ts, which shares this
 * module's parsing and import helpers); literal resource references (`'configmaps'`,
 * `['v1', 'pods']`, `{ kind: 'Secret' }`) are read by `literalReference`.
 *
 * A project whose code registers admission handlers gets its webhook manifests and the code that
 * serves them, so `admissionRegistrations` finds the calls of `on.validate` and `on.mutate` —
 * `on` imported from `kopf-gen/runtime` (any alias), or `kopf.on` through a namespace import; and
 * one whose code registers converters between a CRD's versions gets the same server and the CRD
 * patches, so `conversionRegistrations` finds the calls of `on.convert` the same way.
 *
 * The status-pruning warning (pruning.ts) matters only when a handler's result is stored, so
 * `resultHandlers` finds the registrations whose handler returns a value (R-STORAGE-14: change,
 * event, daemon and timer handlers): a function (or arrow) with a `return <value>` of its own (not
 * `return;`, `return undefined`, `return null` or `return void …`), an arrow whose body is an
 * expression, and — since the syntax cannot tell — a handler given by a name that is not a function
 * of the same module, or built by a call.
 */
import { Node, Project, SyntaxKind, type SourceFile } from 'ts-morph';
import type * as builtins from './builtins.js';

/** A descriptor as the generated index exports it. */
export interface DescriptorExport {
  /** The generated module's file name, e.g. `widgets.example.com.v1.ts`. */
  readonly fileName: string;
  /** The descriptor constant, e.g. `Widgets`. */
  readonly descriptor: string;
  /** Whether the index re-exports the module at the top level. */
  readonly flat: boolean;
  /** The namespace the index re-exports the module as, e.g. `WidgetV1`. */
  readonly namespace: string;
}

/** A user module: its project-relative path and text. */
export interface UserModule {
  readonly path: string;
  readonly text: string;
}

/** The file names of the generated modules whose descriptors the given modules refer to. */
export function referencedModules(modules: readonly UserModule[], exports: readonly DescriptorExport[]): Set<string> {
  return new Set(scanReferences(modules, exports).referenced.keys());
}

/** Where a user module refers to something in src/generated/: a module path and its line (from 1). */
export interface Place {
  readonly path: string;
  readonly line: number;
}

/** An import (or re-export) of the user's code that names something src/generated/ no longer has. */
export interface StaleImport extends Place {
  /** The module specifier as written, e.g. `../generated/widgets.example.com.v1.js`. */
  readonly specifier: string;
  /** The generated module's stem (`widgets.example.com.v1`), or `index`. */
  readonly target: string;
  /** The name the index no longer exports (imports from the index only). */
  readonly name?: string;
}

/** What the user's modules refer to in src/generated/. */
export interface References {
  /** Generated module file names whose descriptor is referenced, with where. */
  readonly referenced: ReadonlyMap<string, readonly Place[]>;
  /** References to generated modules that no longer exist, and to names the index no longer exports. */
  readonly stale: readonly StaleImport[];
}

/** The modules of src/generated/ that are not a kind's (the handler imports, the webhook set-up). */
const OTHER_GENERATED = new Set(['handlers', 'admission']);

/**
 * Finds the generated descriptors the given modules refer to (see the module's header) and, when
 * `indexNames` (every name the index now exports) is given, the imports that name generated
 * modules or index exports that no longer exist. Re-exports (`export { Widgets } from …`) count
 * like imports: the descriptor may be registered in the module that imports it from there.
 */
export function scanReferences(modules: readonly UserModule[], exports: readonly DescriptorExport[], indexNames?: ReadonlySet<string>): References {
  const referenced = new Map<string, Place[]>();
  const stale: StaleImport[] = [];
  const stems = new Set(exports.map((entry) => stem(entry.fileName)));
  for (const source of parse(modules)) {
    const path = source.getFilePath().slice(1);
    const declarations = [...source.getImportDeclarations(), ...source.getExportDeclarations()];
    for (const declaration of declarations) {
      const specifier = declaration.getModuleSpecifierValue();
      if (specifier === undefined) continue;
      const target = generatedTarget(specifier);
      if (target === undefined || OTHER_GENERATED.has(target)) continue;
      const line = declaration.getStartLineNumber();
      if (target !== 'index' && !stems.has(target)) {
        if (indexNames !== undefined) stale.push({ path, line, specifier, target });
        continue;
      }
      const candidates = target === 'index' ? exports : exports.filter((entry) => stem(entry.fileName) === target);
      const visibleOf = (entry: DescriptorExport): string[] =>
        target === 'index' ? [entry.namespace, ...(entry.flat ? [entry.descriptor] : [])] : [entry.descriptor];
      const note = (fileName: string, at: number): void => {
        const places = referenced.get(fileName) ?? [];
        places.push({ path, line: at });
        referenced.set(fileName, places);
      };
      const names = Node.isImportDeclaration(declaration)
        ? declaration.getNamedImports().map((specifier) => specifier.getName())
        : declaration.getNamedExports().map((specifier) => specifier.getName());
      for (const entry of candidates) if (names.some((name) => visibleOf(entry).includes(name))) note(entry.fileName, line);
      if (target === 'index' && indexNames !== undefined) {
        for (const name of names) if (!indexNames.has(name)) stale.push({ path, line, specifier, target, name });
      }
      const namespace = Node.isImportDeclaration(declaration) ? declaration.getNamespaceImport()?.getText() : undefined;
      if (namespace === undefined) continue;
      for (const access of source.getDescendantsOfKind(SyntaxKind.PropertyAccessExpression)) {
        const object = access.getExpression();
        if (!Node.isIdentifier(object) || object.getText() !== namespace) continue;
        const name = access.getName();
        const at = access.getStartLineNumber();
        for (const entry of candidates) if (visibleOf(entry).includes(name)) note(entry.fileName, at);
        if (target === 'index' && indexNames !== undefined && !indexNames.has(name)) stale.push({ path, line: at, specifier, target, name });
      }
    }
  }
  return { referenced, stale };
}

/**
 * The names a generated module exports, read from its text: its `export interface|type|const …`
 * declarations and `export { … }` lists (generated modules declare every export at the start of a
 * line, so no parsing is needed).
 */
export function exportedNames(moduleText: string): string[] {
  const names = new Set<string>();
  for (const match of moduleText.matchAll(
    /^export (?:declare )?(?:const|let|var|function|class|interface|type|enum|namespace|abstract class) ([A-Za-z_$][\w$]*)/gm,
  )) {
    names.add(match[1]!);
  }
  for (const match of moduleText.matchAll(/^export (?:type )?\{([^}]*)\}/gm)) {
    for (const part of match[1]!.split(',')) {
      const name = part
        .trim()
        .split(/\s+as\s+/)
        .pop()
        ?.replace(/^type\s+/, '')
        .trim();
      if (name) names.add(name);
    }
  }
  return [...names];
}

/** `'index'`, a generated module's stem, or undefined when the specifier is not into src/generated/. */
export function generatedTarget(specifier: string): string | undefined {
  const match = /(?:^|\/)generated(?:\/(.*))?$/.exec(specifier);
  if (!match) return undefined;
  const rest = (match[1] ?? '').replace(/\.(js|ts|mjs|mts)$/, '');
  return rest === '' || rest === 'index' ? 'index' : rest;
}

function stem(fileName: string): string {
  return fileName.replace(/\.ts$/, '');
}

/** Parses user modules (syntax only) into one in-memory project. */
export function parse(modules: readonly UserModule[]): SourceFile[] {
  if (modules.length === 0) return [];
  const project = new Project({ useInMemoryFileSystem: true, skipLoadingLibFiles: true, skipFileDependencyResolution: true });
  return modules.map((module) => project.createSourceFile(`/${module.path}`, module.text, { overwrite: true }));
}

/** The module specifiers that export the runtime's `builtins` and `on`. */
const RUNTIME_MODULES = new Set(['kopf-gen/runtime', 'kopf-gen']);

/** The registration functions (properties of `on`) whose handlers watch their resource. */
const WATCHING_REGISTRARS = new Set(['create', 'update', 'delete', 'resume', 'field', 'event', 'index', 'daemon', 'timer', 'reconcile']);

/** The registration functions the runtime also exports on their own. */
const ALIASED_REGISTRARS = new Set(['daemon', 'timer', 'index']);

/** The local names under which a module imports the runtime's `builtins`, `on`, registration aliases and `connect`. */
export interface RuntimeNames {
  readonly builtins: Set<string>;
  readonly on: Set<string>;
  readonly registrars: Set<string>;
  readonly connect: Set<string>;
  /** Namespace imports of the runtime (`import * as kopf`). */
  readonly namespaces: Set<string>;
}

export function runtimeNames(source: SourceFile): RuntimeNames {
  const names: RuntimeNames = { builtins: new Set(), on: new Set(), registrars: new Set(), connect: new Set(), namespaces: new Set() };
  for (const declaration of source.getImportDeclarations()) {
    if (!RUNTIME_MODULES.has(declaration.getModuleSpecifierValue())) continue;
    for (const specifier of declaration.getNamedImports()) {
      const imported = specifier.getName();
      const local = specifier.getAliasNode()?.getText() ?? imported;
      if (imported === 'builtins') names.builtins.add(local);
      else if (imported === 'on') names.on.add(local);
      else if (imported === 'connect') names.connect.add(local);
      else if (ALIASED_REGISTRARS.has(imported)) names.registrars.add(local);
    }
    const namespace = declaration.getNamespaceImport()?.getText();
    if (namespace !== undefined) names.namespaces.add(namespace);
  }
  return names;
}

/** An admission handler's (or a converter's) registration in the user's code. */
export interface AdmissionRegistration {
  /** The module (project-relative). */
  readonly path: string;
  /** The call's line, from 1. */
  readonly line: number;
  readonly registration: 'validate' | 'mutate' | 'convert';
}

/** The `on.validate` and `on.mutate` calls of the given modules, by module path, then in source order. */
export function admissionRegistrations(modules: readonly UserModule[]): AdmissionRegistration[] {
  return registrations(modules, ['validate', 'mutate']);
}

/** The `on.convert` calls of the given modules, by module path, then in source order. */
export function conversionRegistrations(modules: readonly UserModule[]): AdmissionRegistration[] {
  return registrations(modules, ['convert']);
}

/** The calls of the given methods of the runtime's `on`, by module path, then in source order. */
function registrations(modules: readonly UserModule[], methods: readonly AdmissionRegistration['registration'][]): AdmissionRegistration[] {
  const sorted = [...modules].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const found: AdmissionRegistration[] = [];
  for (const source of parse(sorted)) {
    const names = runtimeNames(source);
    if (names.on.size === 0 && names.namespaces.size === 0) continue;
    for (const call of source.getDescendantsOfKind(SyntaxKind.CallExpression)) {
      const callee = call.getExpression();
      if (!Node.isPropertyAccessExpression(callee)) continue;
      const method = callee.getName();
      const registration = methods.find((each) => each === method);
      if (registration !== undefined && isImported(callee.getExpression(), names.on, names.namespaces, 'on')) {
        found.push({ path: source.getFilePath().slice(1), line: call.getStartLineNumber(), registration });
      }
    }
  }
  return found;
}

/** Whether `node` is one of `locals`, or `<namespace>.<name>` for one of `namespaces`. */
export function isImported(node: Node, locals: ReadonlySet<string>, namespaces: ReadonlySet<string>, name: string): boolean {
  if (Node.isIdentifier(node)) return locals.has(node.getText());
  if (Node.isPropertyAccessExpression(node)) {
    const object = node.getExpression();
    return node.getName() === name && Node.isIdentifier(object) && namespaces.has(object.getText());
  }
  return false;
}

/** Whether a call's callee is a watching registration function: `on.create`, `daemon`, `kopf.on.timer`, `kopf.index`, … */
function isWatchingRegistrar(callee: Node, names: { on: ReadonlySet<string>; registrars: ReadonlySet<string>; namespaces: ReadonlySet<string> }): boolean {
  if (Node.isIdentifier(callee)) return names.registrars.has(callee.getText());
  if (!Node.isPropertyAccessExpression(callee)) return false;
  const method = callee.getName();
  const object = callee.getExpression();
  if (WATCHING_REGISTRARS.has(method) && isImported(object, names.on, names.namespaces, 'on')) return true;
  return ALIASED_REGISTRARS.has(method) && Node.isIdentifier(object) && names.namespaces.has(object.getText());
}

/** The value of a string literal (or a template literal without substitutions). */
export function literalString(node: Node | undefined): string | undefined {
  if (node === undefined) return undefined;
  if (Node.isStringLiteral(node) || Node.isNoSubstitutionTemplateLiteral(node)) return node.getLiteralValue();
  return undefined;
}

/** A resource reference written entirely as literals, or undefined. */
export function literalReference(node: Node | undefined): builtins.LiteralReference | undefined {
  if (node === undefined) return undefined;
  const text = literalString(node);
  if (text !== undefined) return text;
  if (Node.isArrayLiteralExpression(node)) {
    const parts = node.getElements().map(literalString);
    return parts.every((part) => part !== undefined) ? (parts as string[]) : undefined;
  }
  if (Node.isObjectLiteralExpression(node)) {
    const object: Record<string, string> = {};
    for (const property of node.getProperties()) {
      if (!Node.isPropertyAssignment(property)) return undefined;
      const name = property.getNameNode();
      const key = Node.isIdentifier(name) ? name.getText() : literalString(name);
      const value = literalString(property.getInitializer());
      if (key === undefined || value === undefined) return undefined;
      object[key] = value;
    }
    return object;
  }
  return undefined;
}

/** The registrations whose handler results the runtime stores in `status.<handler id>` (R-STORAGE-14). */
const RESULT_REGISTRARS = new Set(['create', 'update', 'delete', 'resume', 'field', 'event', 'daemon', 'timer']);

/** The registrations of change, event, daemon and timer handlers that return a value (see the module's header), in source order per module. */
export function resultHandlers(modules: readonly UserModule[]): Place[] {
  const found: Place[] = [];
  for (const source of parse(modules)) {
    const names = runtimeNames(source);
    if (names.on.size === 0 && names.registrars.size === 0 && names.namespaces.size === 0) continue;
    for (const call of source.getDescendantsOfKind(SyntaxKind.CallExpression)) {
      const callee = call.getExpression();
      if (!isWatchingRegistrar(callee, names)) continue;
      const registrar = Node.isIdentifier(callee) ? callee.getText() : Node.isPropertyAccessExpression(callee) ? callee.getName() : '';
      if (!RESULT_REGISTRARS.has(registrar)) continue;
      const handler = call.getArguments().at(-1);
      if (handler !== undefined && mayReturnValue(handler, source)) found.push({ path: source.getFilePath().slice(1), line: call.getStartLineNumber() });
    }
  }
  return found;
}

/** Whether a handler argument may return a value (conservative where the syntax cannot tell). */
export function mayReturnValue(handler: Node, source: SourceFile): boolean {
  let target: Node | undefined = handler;
  if (Node.isIdentifier(handler)) {
    const name = handler.getText();
    target = source.getFunction(name) ?? source.getVariableDeclaration(name)?.getInitializer();
    if (target === undefined) return true;
  }
  if (Node.isArrowFunction(target)) {
    const body = target.getBody();
    return Node.isBlock(body) ? returnsValue(body) : isValue(body);
  }
  if (Node.isFunctionExpression(target) || Node.isFunctionDeclaration(target)) {
    const body = target.getBody();
    return body !== undefined && returnsValue(body);
  }
  return true;
}

/** Whether a function body has a `return <value>` of its own (nested functions and classes aside). */
function returnsValue(body: Node): boolean {
  let found = false;
  body.forEachDescendant((node, traversal) => {
    if (Node.isFunctionLikeDeclaration(node) || Node.isClassDeclaration(node) || Node.isClassExpression(node)) {
      traversal.skip();
    } else if (Node.isReturnStatement(node)) {
      const value = node.getExpression();
      if (value !== undefined && isValue(value)) {
        found = true;
        traversal.stop();
      }
    }
  });
  return found;
}

/** Whether an expression is a value the runtime would store: anything but `undefined`, `null` and `void …`. */
function isValue(expression: Node): boolean {
  const inner = Node.isParenthesizedExpression(expression) ? expression.getExpression() : expression;
  if (Node.isVoidExpression(inner) || Node.isNullLiteral(inner)) return false;
  return !(Node.isIdentifier(inner) && inner.getText() === 'undefined');
}
