/**
 * Detecting: which generated descriptors the user's code already registers handlers for.
 *
 * `kopf-gen generate` adds a handler stub only for kinds that have none, and never touches user
 * code; so it must read the user's modules, not write them. This module parses them with ts-morph
 * (syntax only: no type-checking, no file system beyond the texts it is given) and collects the
 * generated modules whose descriptor the code refers to:
 * - `import { Widgets } from '../generated/widgets.example.com.v1.js'` (any alias);
 * - `import { Widgets } from '../generated/index.js'` (a top-level export) or
 *   `import { WidgetV1 } …` (a namespace export of the index);
 * - `import * as g from '../generated/…'` followed by `g.Widgets` or `g.WidgetV1`.
 */
import { Node, Project, SyntaxKind } from 'ts-morph';

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
  const found = new Set<string>();
  if (modules.length === 0) return found;
  const project = new Project({ useInMemoryFileSystem: true, skipLoadingLibFiles: true, skipFileDependencyResolution: true });
  for (const module of modules) {
    const source = project.createSourceFile(`/${module.path}`, module.text, { overwrite: true });
    for (const declaration of source.getImportDeclarations()) {
      const target = generatedTarget(declaration.getModuleSpecifierValue());
      if (target === undefined) continue;
      const candidates = target === 'index' ? exports : exports.filter((entry) => stem(entry.fileName) === target);
      const names = declaration.getNamedImports().map((specifier) => specifier.getName());
      for (const entry of candidates) {
        const visible = target === 'index' ? [entry.namespace, ...(entry.flat ? [entry.descriptor] : [])] : [entry.descriptor];
        if (names.some((name) => visible.includes(name))) found.add(entry.fileName);
      }
      const namespace = declaration.getNamespaceImport()?.getText();
      if (namespace === undefined) continue;
      const accessed = new Set<string>();
      for (const access of source.getDescendantsOfKind(SyntaxKind.PropertyAccessExpression)) {
        const object = access.getExpression();
        if (Node.isIdentifier(object) && object.getText() === namespace) accessed.add(access.getName());
      }
      for (const entry of candidates) {
        const visible = target === 'index' ? [entry.namespace, ...(entry.flat ? [entry.descriptor] : [])] : [entry.descriptor];
        if (visible.some((name) => accessed.has(name))) found.add(entry.fileName);
      }
    }
  }
  return found;
}

/** `'index'`, a generated module's stem, or undefined when the specifier is not into src/generated/. */
function generatedTarget(specifier: string): string | undefined {
  const match = /(?:^|\/)generated(?:\/(.*))?$/.exec(specifier);
  if (!match) return undefined;
  const rest = (match[1] ?? '').replace(/\.(js|ts|mjs|mts)$/, '');
  return rest === '' || rest === 'index' ? 'index' : rest;
}

function stem(fileName: string): string {
  return fileName.replace(/\.ts$/, '');
}
