/**
 * Accesses: what the user's code does with each kind, read from the code, for the generated RBAC.
 *
 * kubebuilder asks the author for an RBAC marker per verb and kind; kopf-gen reads the handlers
 * instead, and permissions.ts grants what is found and nothing more (runtime reference
 * R-SEC-401…404). The scan is syntactic (ts-morph, no type-checking), as detecting.ts's:
 * - cause handlers (`on.create`, `update`, `delete`, `resume`, `field`, `daemon`, `timer`) store
 *   their progress on the object: get, list, watch, patch, and patch of the status subresource
 *   when the kind has one;
 * - observers: `on.event` and `on.index` get, list, watch — an event handler that reads `patch` or
 *   returns a value (stored in its status) patches too; `on.reconcile`'s resource gets get, list,
 *   watch, plus patch and status patch when the handler reads `patch`, and patch when it has
 *   `finalize` (its finalizer is patched); its `owns: [...]` and `watches: [{ resource }]` kinds
 *   get, list, watch;
 * - client calls, `client.create/replace/patch/apply/delete/get/list/watch/iterate/pages(<descriptor>, …)`
 *   on a client that is a handler argument (`{ client }`, `args.client`) or a `connect()` result:
 *   that verb (apply → patch, replace → update, iterate/pages → list), on `<plural>/<sub>` with
 *   `{ subresource: '<sub>' }`.
 * A descriptor is `builtins.X` (any import form detecting.ts knows) or a generated descriptor
 * imported from src/generated/ — directly, through a module of the user's that re-exports it, or
 * through a `const` of the same module. What the scan cannot follow — a resource in a variable, a
 * computed verb or subresource, options not written inline — is reported (file and line) and left
 * to the user's own manifest.
 */
import { posix } from 'node:path';
import { Node, SyntaxKind, VariableDeclarationKind, type SourceFile } from 'ts-morph';
import * as builtins from './builtins.js';
import * as detecting from './detecting.js';

/** The RBAC verbs the code can need, in kubebuilder's order. */
export const VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] as const;
export type Verb = (typeof VERBS)[number];

/** The kind an access is to: a built-in resource, or one of the project's CRDs (by its name). */
export type KindRef = { readonly builtin: builtins.BuiltinResource } | { readonly crd: string };

/** One thing the code does with a kind, and where. */
export interface Access extends detecting.Place {
  readonly kind: KindRef;
  readonly verbs: readonly Verb[];
  /** A subresource (`status`): the verbs are on `<plural>/<subresource>`. */
  readonly subresource?: string;
  /** Only when the kind has that subresource (a handler's status writes); else always (an explicit client call). */
  readonly ifPresent?: boolean;
  /** What needs it: `on.create`, `on.reconcile owns`, `client.delete`, … */
  readonly by: string;
}

/** Something the scan cannot follow: its rules are the user's to write. */
export interface Unfollowed extends detecting.Place {
  readonly message: string;
}

export interface Scan {
  readonly accesses: readonly Access[];
  readonly unfollowed: readonly Unfollowed[];
}

/** A generated descriptor as the index exports it, with the CRD it describes. */
export interface GeneratedDescriptor extends detecting.DescriptorExport {
  readonly crdName: string;
}

/** The verbs of observing a kind: list and watch it, re-read one object. */
const OBSERVE_VERBS: readonly Verb[] = ['get', 'list', 'watch'];

/** Registrations whose handlers store progress on the object. */
const CAUSE_REGISTRARS = new Set(['create', 'update', 'delete', 'resume', 'field', 'daemon', 'timer']);
/** Registrations that only observe (an event handler may still patch). */
const OBSERVING_REGISTRARS = new Set(['event', 'index', 'reconcile']);
/** Registrations the runtime also exports on their own (`import { daemon } from 'kopf-gen/runtime'`). */
const ALIASED_REGISTRARS = new Set(['daemon', 'timer', 'index']);

/** The typed client's methods and the RBAC verb each needs. */
const CLIENT_VERBS: Readonly<Record<string, Verb>> = {
  create: 'create',
  replace: 'update',
  patch: 'patch',
  apply: 'patch',
  delete: 'delete',
  get: 'get',
  list: 'list',
  watch: 'watch',
  iterate: 'list',
  pages: 'list',
};

/** Scans the user's modules for what they do with each kind (see the module's header). */
export function scan(modules: readonly detecting.UserModule[], generated: readonly GeneratedDescriptor[] = []): Scan {
  const accesses: Access[] = [];
  const unfollowed: Unfollowed[] = [];
  const sorted = [...modules].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const sources = detecting.parse(sorted);
  const reexported = reexports(sources);
  for (const source of sources) new ModuleScan(source, generated, reexported, accesses, unfollowed).run();
  return { accesses, unfollowed };
}

/** What src/generated/ imports name: the generated module's stem (or `index`) and the exported name. */
interface GeneratedImport {
  readonly target: string;
  readonly name: string;
}

/** The user modules' re-exports of generated names (`export { Widgets } from '../generated/index.js'`), by module path without extension. */
function reexports(sources: readonly SourceFile[]): Map<string, Map<string, GeneratedImport>> {
  const found = new Map<string, Map<string, GeneratedImport>>();
  for (const source of sources) {
    const names = new Map<string, GeneratedImport>();
    for (const declaration of source.getExportDeclarations()) {
      const specifier = declaration.getModuleSpecifierValue();
      const target = specifier === undefined ? undefined : detecting.generatedTarget(specifier);
      if (target === undefined) continue;
      for (const named of declaration.getNamedExports()) names.set(named.getAliasNode()?.getText() ?? named.getName(), { target, name: named.getName() });
    }
    if (names.size > 0) found.set(withoutExtension(source.getFilePath().slice(1)), names);
  }
  return found;
}

function withoutExtension(file: string): string {
  return file.replace(/\.(js|ts|mjs|mts)$/, '');
}

/** The built-in resources the code does anything with, in the runtime's order. */
export function builtinReferences(modules: readonly detecting.UserModule[]): builtins.BuiltinResource[] {
  return builtinKinds(scan(modules).accesses);
}

/** The built-in resources among the accesses, in the runtime's order. */
export function builtinKinds(accesses: readonly Access[]): builtins.BuiltinResource[] {
  const found = new Set(accesses.flatMap((access) => ('builtin' in access.kind ? [access.kind.builtin] : [])));
  return builtins.BUILTIN_RESOURCES.filter((resource) => found.has(resource));
}

/** The warning of an unfollowed use, for the generation report. */
export function describeUnfollowed(each: Unfollowed): string {
  return `${each.path}:${each.line}: ${each.message}; deploy/rbac.yaml has no rule for it: grant what it needs in deploy/rbac-handlers.yaml.`;
}

/** One module's scan: its imports, clients and aliases, then its registrations and client calls. */
class ModuleScan {
  readonly #path: string;
  readonly #names: detecting.RuntimeNames;
  /** Local name → the runtime's registration alias it imports (`timer as t` → `timer`). */
  readonly #registrars = new Map<string, string>();
  /** Local name → what it imports from src/generated/: the module's stem (or `index`) and the name. */
  readonly #imports = new Map<string, GeneratedImport>();
  /** Namespace imports of src/generated/ modules: local name → stem (or `index`). */
  readonly #namespaces = new Map<string, string>();
  /** `const X = <expression>` of the module (descriptors kept in constants). */
  readonly #constants = new Map<string, Node>();
  /** `const { Jobs, Pods: P } = builtins`: local name → descriptor name. */
  readonly #destructured = new Map<string, string>();
  /** Names bound to a typed client: `{ client }`, `const c = args.client`, `const c = await connect()`. */
  readonly #clients = new Set<string>();

  constructor(
    readonly source: SourceFile,
    readonly generated: readonly GeneratedDescriptor[],
    readonly reexported: ReadonlyMap<string, ReadonlyMap<string, GeneratedImport>>,
    readonly accesses: Access[],
    readonly unfollowed: Unfollowed[],
  ) {
    this.#path = source.getFilePath().slice(1);
    this.#names = detecting.runtimeNames(source);
  }

  run(): void {
    this.#collectNames();
    for (const call of this.source.getDescendantsOfKind(SyntaxKind.CallExpression)) {
      const registrar = this.#registrarOf(call.getExpression());
      if (registrar !== undefined) this.#registration(registrar, call.getArguments(), call.getStartLineNumber());
      else this.#clientCall(call.getExpression(), call.getArguments(), call.getStartLineNumber());
    }
  }

  #collectNames(): void {
    for (const declaration of this.source.getImportDeclarations()) {
      const specifier = declaration.getModuleSpecifierValue();
      if (specifier === 'kopf-gen/runtime' || specifier === 'kopf-gen') {
        for (const named of declaration.getNamedImports()) {
          if (ALIASED_REGISTRARS.has(named.getName())) this.#registrars.set(named.getAliasNode()?.getText() ?? named.getName(), named.getName());
        }
        continue;
      }
      const target = detecting.generatedTarget(specifier);
      if (target === undefined) {
        // A module of the user's that re-exports generated descriptors (one level).
        const from = specifier.startsWith('.') ? this.reexported.get(withoutExtension(posix.join(posix.dirname(this.#path), specifier))) : undefined;
        for (const named of from === undefined ? [] : declaration.getNamedImports()) {
          const imported = from?.get(named.getName());
          if (imported !== undefined) this.#imports.set(named.getAliasNode()?.getText() ?? named.getName(), imported);
        }
        continue;
      }
      for (const named of declaration.getNamedImports())
        this.#imports.set(named.getAliasNode()?.getText() ?? named.getName(), { target, name: named.getName() });
      const namespace = declaration.getNamespaceImport()?.getText();
      if (namespace !== undefined) this.#namespaces.set(namespace, target);
    }
    for (const declaration of this.source.getDescendantsOfKind(SyntaxKind.VariableDeclaration)) {
      const initializer = declaration.getInitializer();
      if (initializer === undefined) continue;
      const name = declaration.getNameNode();
      const value = unwrap(initializer);
      if (Node.isIdentifier(name)) {
        if (isConst(declaration)) this.#constants.set(name.getText(), initializer);
        if (this.#isClient(value)) this.#clients.add(name.getText());
      } else if (Node.isObjectBindingPattern(name) && this.#isBuiltins(value)) {
        for (const element of name.getElements()) {
          const property = element.getPropertyNameNode();
          const descriptor = property === undefined ? element.getName() : (detecting.literalString(property) ?? property.getText());
          this.#destructured.set(element.getName(), descriptor);
        }
      }
    }
    for (const pattern of this.source.getDescendantsOfKind(SyntaxKind.ObjectBindingPattern)) {
      for (const element of pattern.getElements()) {
        const property = element.getPropertyNameNode()?.getText() ?? element.getName();
        if (property === 'client' && Node.isIdentifier(element.getNameNode())) this.#clients.add(element.getName());
      }
    }
  }

  /** The registration a callee is (`on.create`, `kopf.on.reconcile`, an imported `daemon`), or undefined. */
  #registrarOf(callee: Node): string | undefined {
    if (Node.isIdentifier(callee)) return this.#registrars.get(callee.getText());
    if (!Node.isPropertyAccessExpression(callee)) return undefined;
    const method = callee.getName();
    const object = callee.getExpression();
    if (detecting.isImported(object, this.#names.on, this.#names.namespaces, 'on')) return method;
    return ALIASED_REGISTRARS.has(method) && Node.isIdentifier(object) && this.#names.namespaces.has(object.getText()) ? method : undefined;
  }

  #registration(registrar: string, args: readonly Node[], line: number): void {
    if (!CAUSE_REGISTRARS.has(registrar) && !OBSERVING_REGISTRARS.has(registrar)) return;
    const by = `on.${registrar}`;
    const kinds = this.#resourceOf(args[0], by, line);
    const handler = args.length > 1 ? args.at(-1) : undefined;
    const options = args.slice(1, -1).find((arg) => Node.isObjectLiteralExpression(arg));
    let patches: boolean;
    let finalizes = false;
    if (CAUSE_REGISTRARS.has(registrar)) patches = true;
    else if (registrar === 'index') patches = false;
    else if (registrar === 'event') patches = handler === undefined || this.#usesPatch(handler) || detecting.mayReturnValue(handler, this.source);
    else {
      patches = handler === undefined || this.#usesPatch(handler);
      const finalize = options === undefined ? undefined : property(options, 'finalize');
      if (finalize !== undefined) {
        finalizes = true;
        patches ||= this.#usesPatch(finalize);
      }
      this.#reconcileRelations(options, args, line);
    }
    for (const kind of kinds) {
      const verbs: Verb[] = [...OBSERVE_VERBS, ...(patches || finalizes ? (['patch'] as const) : [])];
      this.#add({ kind, verbs, by: finalizes && !patches ? `${by} (finalize)` : by, line });
      if (patches) this.#add({ kind, verbs: ['patch'], subresource: 'status', ifPresent: true, by, line });
    }
  }

  /** A reconcile registration's `owns` and `watches` kinds: observed (get, list, watch). */
  #reconcileRelations(options: Node | undefined, args: readonly Node[], line: number): void {
    if (options === undefined) {
      if (args.length > 2) this.#unfollow(line, 'on.reconcile: its options are not written inline, so their owns/watches kinds are not followed');
      return;
    }
    const owns = property(options, 'owns');
    if (owns !== undefined) {
      if (!Node.isArrayLiteralExpression(owns)) this.#unfollow(owns.getStartLineNumber(), 'on.reconcile owns: not an array written inline');
      else for (const element of owns.getElements()) this.#observed(element, 'on.reconcile owns');
    }
    const watches = property(options, 'watches');
    if (watches === undefined) return;
    if (!Node.isArrayLiteralExpression(watches)) {
      this.#unfollow(watches.getStartLineNumber(), 'on.reconcile watches: not an array written inline');
      return;
    }
    for (const entry of watches.getElements()) {
      const resource = Node.isObjectLiteralExpression(entry) ? property(entry, 'resource') : undefined;
      if (resource === undefined) this.#unfollow(entry.getStartLineNumber(), 'on.reconcile watches: an entry without an inline `resource`');
      else this.#observed(resource, 'on.reconcile watches');
    }
  }

  #observed(node: Node, by: string): void {
    const line = node.getStartLineNumber();
    for (const kind of this.#resourceOf(node, by, line)) this.#add({ kind, verbs: OBSERVE_VERBS, by, line });
  }

  /** The kinds a registration's resource argument names: a descriptor, or a literal reference to built-ins. */
  #resourceOf(node: Node | undefined, by: string, line: number): KindRef[] {
    if (node === undefined) return [];
    const kind = this.#descriptorOf(node);
    if (kind !== undefined) return [kind];
    const reference = detecting.literalReference(unwrap(node));
    if (reference !== undefined) {
      const found = builtins.resolveReference(reference);
      if (found.length === 0) {
        this.#unfollow(line, `${by}(${node.getText()}): names no built-in kind (register the project's own kinds with their generated descriptor)`);
      }
      return found.map((builtin) => ({ builtin }));
    }
    this.#unfollow(
      line,
      `${by}(${node.getText()}): the resource is not a descriptor kopf-gen can follow (builtins.X, a generated descriptor, or a literal reference)`,
    );
    return [];
  }

  /** A `client.<method>(<descriptor>, …)` call: that verb on that kind. */
  #clientCall(callee: Node, args: readonly Node[], line: number): void {
    let method: string | undefined;
    if (Node.isPropertyAccessExpression(callee) && this.#isClient(unwrap(callee.getExpression()))) method = callee.getName();
    else if (Node.isElementAccessExpression(callee) && this.#isClient(unwrap(callee.getExpression()))) {
      method = detecting.literalString(callee.getArgumentExpression());
      if (method === undefined) {
        this.#unfollow(line, `${callee.getText()}(…): a computed client method`);
        return;
      }
    }
    const verb = method === undefined ? undefined : CLIENT_VERBS[method];
    if (verb === undefined) return;
    const by = `client.${method}`;
    const first = args[0];
    // A literal is never a descriptor: a method of some other client (`cache.client.get('key')`).
    if (first !== undefined && isLiteral(unwrap(first))) return;
    const kind = first === undefined ? undefined : this.#descriptorOf(first);
    if (kind === undefined) {
      this.#unfollow(line, `${by}(${first?.getText() ?? ''}, …): the resource is not a descriptor kopf-gen can follow (builtins.X or a generated descriptor)`);
      return;
    }
    let subresource: string | undefined;
    for (const arg of args.slice(1)) {
      if (!Node.isObjectLiteralExpression(arg)) continue;
      const given = property(arg, 'subresource');
      if (given === undefined) continue;
      subresource = detecting.literalString(unwrap(given));
      if (subresource === undefined) {
        this.#unfollow(line, `${by}(…, { subresource: ${given.getText()} }): a computed subresource`);
        return;
      }
    }
    this.#add({ kind, verbs: [verb], ...(subresource === undefined ? {} : { subresource }), by, line });
  }

  /** The kind an expression's descriptor is, or undefined when it is not one the scan can follow. */
  #descriptorOf(node: Node, depth = 0): KindRef | undefined {
    const expression = unwrap(node);
    if (Node.isIdentifier(expression)) {
      const name = expression.getText();
      const imported = this.#imports.get(name);
      if (imported !== undefined) return this.#generated(imported.target, imported.name);
      const destructured = this.#destructured.get(name);
      if (destructured !== undefined) return builtinRef(destructured);
      const constant = this.#constants.get(name);
      return constant !== undefined && depth < 4 ? this.#descriptorOf(constant, depth + 1) : undefined;
    }
    if (Node.isPropertyAccessExpression(expression)) {
      const object = unwrap(expression.getExpression());
      const name = expression.getName();
      if (this.#isBuiltins(object)) return builtinRef(name);
      if (Node.isIdentifier(object) && this.#namespaces.has(object.getText())) return this.#generated(this.#namespaces.get(object.getText())!, name);
      const entry = this.#generatedNamespace(object);
      return entry !== undefined && entry.descriptor === name ? { crd: entry.crdName } : undefined;
    }
    if (Node.isElementAccessExpression(expression) && this.#isBuiltins(unwrap(expression.getExpression()))) {
      const name = detecting.literalString(expression.getArgumentExpression());
      return name === undefined ? undefined : builtinRef(name);
    }
    return undefined;
  }

  /** The CRD of the descriptor `name` exported by a generated module (stem) or the index. */
  #generated(target: string, name: string): KindRef | undefined {
    const entry = this.generated.find((each) =>
      target === 'index' ? each.flat && each.descriptor === name : each.fileName.replace(/\.ts$/, '') === target && each.descriptor === name,
    );
    return entry === undefined ? undefined : { crd: entry.crdName };
  }

  /** The generated module an expression names as the index's namespace export (`WidgetV1`, `g.WidgetV1`). */
  #generatedNamespace(node: Node): GeneratedDescriptor | undefined {
    let name: string | undefined;
    if (Node.isIdentifier(node)) {
      const imported = this.#imports.get(node.getText());
      if (imported?.target === 'index') name = imported.name;
    } else if (Node.isPropertyAccessExpression(node)) {
      const object = node.getExpression();
      if (Node.isIdentifier(object) && this.#namespaces.get(object.getText()) === 'index') name = node.getName();
    }
    return name === undefined ? undefined : this.generated.find((each) => each.namespace === name);
  }

  #isBuiltins(node: Node): boolean {
    return detecting.isImported(node, this.#names.builtins, this.#names.namespaces, 'builtins');
  }

  /** Whether an expression is a typed client: a name bound to one, `<anything>.client`, or `connect(…)`. */
  #isClient(node: Node): boolean {
    if (Node.isIdentifier(node)) return this.#clients.has(node.getText());
    if (Node.isPropertyAccessExpression(node)) return node.getName() === 'client';
    return Node.isCallExpression(node) && detecting.isImported(node.getExpression(), this.#names.connect, this.#names.namespaces, 'connect');
  }

  /**
   * Whether a handler may write through `patch`: its first parameter destructures `patch` (or the
   * rest), or reads `.patch` of it, or hands it on whole. A handler the module does not define is
   * assumed to.
   */
  #usesPatch(handler: Node): boolean {
    let target: Node | undefined = unwrap(handler);
    if (Node.isIdentifier(target)) {
      const name = target.getText();
      target = this.source.getFunction(name) ?? this.source.getVariableDeclaration(name)?.getInitializer();
      if (target === undefined) return true;
      target = unwrap(target);
    }
    if (!Node.isArrowFunction(target) && !Node.isFunctionExpression(target) && !Node.isFunctionDeclaration(target) && !Node.isMethodDeclaration(target)) {
      return true;
    }
    const parameter = target.getParameters()[0];
    if (parameter === undefined) return false;
    const name = parameter.getNameNode();
    if (Node.isObjectBindingPattern(name)) return bindsPatch(name);
    if (!Node.isIdentifier(name)) return true;
    const body = target.getBody();
    if (body === undefined) return false;
    return body
      .getDescendantsOfKind(SyntaxKind.Identifier)
      .filter((identifier) => identifier.getText() === name.getText())
      .some((identifier) => readsPatch(identifier));
  }

  #add(access: Omit<Access, 'path'>): void {
    this.accesses.push({ ...access, path: this.#path });
  }

  #unfollow(line: number, message: string): void {
    this.unfollowed.push({ path: this.#path, line, message });
  }
}

/** Whether a destructuring of handler arguments takes `patch` (or everything else, `...rest`). */
function bindsPatch(pattern: Node): boolean {
  if (!Node.isObjectBindingPattern(pattern)) return false;
  return pattern
    .getElements()
    .some((element) => element.getDotDotDotToken() !== undefined || (element.getPropertyNameNode()?.getText() ?? element.getName()) === 'patch');
}

/** Whether a use of the handler's argument object reads `patch` (or may: it is handed on whole). */
function readsPatch(identifier: Node): boolean {
  const parent = identifier.getParent();
  if (parent === undefined) return true;
  if (Node.isPropertyAccessExpression(parent) && parent.getExpression() === identifier) return parent.getName() === 'patch';
  if (Node.isElementAccessExpression(parent) && parent.getExpression() === identifier) {
    const key = detecting.literalString(parent.getArgumentExpression());
    return key === undefined || key === 'patch';
  }
  if (Node.isVariableDeclaration(parent) && parent.getInitializer() === identifier) return bindsPatch(parent.getNameNode());
  // A property name that happens to be spelled the same (`{ args: 1 }`, `x.args`) is not a use.
  if (Node.isPropertyAccessExpression(parent) || Node.isPropertyAssignment(parent)) return false;
  return true;
}

/** Whether an expression is a literal value (a string, number, template, object or array literal). */
function isLiteral(node: Node): boolean {
  return (
    Node.isStringLiteral(node) ||
    Node.isNumericLiteral(node) ||
    Node.isTemplateExpression(node) ||
    Node.isNoSubstitutionTemplateLiteral(node) ||
    Node.isObjectLiteralExpression(node) ||
    Node.isArrayLiteralExpression(node)
  );
}

function builtinRef(descriptor: string): KindRef | undefined {
  const builtin = builtins.byDescriptor(descriptor);
  return builtin === undefined ? undefined : { builtin };
}

/** The value of an object literal's property `name` (the function of a method, the name of a shorthand). */
function property(object: Node, name: string): Node | undefined {
  if (!Node.isObjectLiteralExpression(object)) return undefined;
  const found = object.getProperty(name);
  if (found === undefined) return undefined;
  if (Node.isPropertyAssignment(found)) return found.getInitializer();
  if (Node.isShorthandPropertyAssignment(found)) return found.getNameNode();
  if (Node.isMethodDeclaration(found)) return found;
  return undefined;
}

/** The expression inside parentheses, `await`, `as`, `satisfies` and `!`. */
function unwrap(node: Node): Node {
  let current = node;
  for (;;) {
    if (
      Node.isParenthesizedExpression(current) ||
      Node.isAwaitExpression(current) ||
      Node.isAsExpression(current) ||
      Node.isSatisfiesExpression(current) ||
      Node.isNonNullExpression(current)
    ) {
      current = current.getExpression();
    } else {
      return current;
    }
  }
}

function isConst(declaration: Node): boolean {
  return declaration.getParentIfKind(SyntaxKind.VariableDeclarationList)?.getDeclarationKind() === VariableDeclarationKind.Const;
}
