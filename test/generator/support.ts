/**
 * Helpers shared by the generator's tests: run the pure stages on texts, build small CRDs inline,
 * pick one declaration out of an emitted module, and type-check emitted modules with the
 * TypeScript compiler API (strict, plus the stricter flags users commonly turn on).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, it } from 'vitest';
import * as yaml from 'yaml';
import * as errors from '../../generator/errors.js';
import * as loading from '../../generator/loading.js';
import * as modeling from '../../generator/modeling.js';
import * as validating from '../../generator/validating.js';
import * as types from '../../generator/emitting/types.js';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const FIXTURES = path.join(REPO_ROOT, 'fixtures/crds/generator');

/** The generator's refusal of one CRD source (`file` names it in the error); fails the test if it loads. */
export function loadError(text: string, file: string): errors.GeneratorError {
  try {
    loading.loadCrdSources([{ path: file, text }]);
  } catch (error) {
    if (error instanceof errors.GeneratorError) return error;
    throw error;
  }
  throw new Error('expected a GeneratorError');
}

/** The environment variable that points the external-corpus suites at a directory of real-world CRDs. */
export const CORPUS_VARIABLE = 'KOPF_GEN_CRD_CORPUS';

/** The title of every suite over the external corpus; when skipped, it says how to run it. */
export const CORPUS_SUITE = `external CRD corpus (set ${CORPUS_VARIABLE} to run)`;

/** The YAML files of a directory, sorted. */
export function yamlFiles(directory: string): string[] {
  return fs
    .readdirSync(directory)
    .filter((name) => name.endsWith('.yaml'))
    .sort();
}

/**
 * The external CRD corpus named by `KOPF_GEN_CRD_CORPUS`, or undefined when the variable is not
 * set: nothing outside the checkout is read unless asked for. A variable that names no directory
 * of YAML files is a mistake and throws, so a misconfigured run fails instead of skipping.
 */
export function externalCorpus(): string | undefined {
  const value = process.env[CORPUS_VARIABLE];
  if (value === undefined || value === '') return undefined;
  const directory = path.resolve(value);
  if (!fs.existsSync(directory) || !fs.statSync(directory).isDirectory()) throw new Error(`${CORPUS_VARIABLE}=${value}: not a directory`);
  if (yamlFiles(directory).length === 0) throw new Error(`${CORPUS_VARIABLE}=${value}: the directory has no .yaml file`);
  return directory;
}

/**
 * Declares a suite over the external corpus, titled `CORPUS_SUITE`. Without the variable the suite
 * is skipped, and holds one placeholder test so that the skip (and its reason) shows in the report.
 */
export function describeCorpus(body: (directory: string) => void): void {
  const corpus = externalCorpus();
  describe.skipIf(corpus === undefined)(CORPUS_SUITE, () => {
    if (corpus === undefined) it(`runs when ${CORPUS_VARIABLE} names a directory of CRD YAML files`, () => {});
    else body(corpus);
  });
}

/** The repository's own generator fixtures (`fixtures/crds/generator/*.yaml`), sorted. */
export function fixtureFiles(): string[] {
  return yamlFiles(FIXTURES);
}

/** Reads a fixture file as a loader input. */
export function fixture(name: string): loading.SourceText {
  return { path: `fixtures/${name}`, text: fs.readFileSync(path.join(FIXTURES, name), 'utf8') };
}

export interface Generated {
  readonly notes: readonly string[];
  readonly model: modeling.GeneratorModel;
  readonly modules: types.EmittedModule[];
}

/** Runs load → validate → model → emit. */
export function generate(sources: readonly loading.SourceText[]): Generated {
  const loaded = loading.loadCrdSources(sources);
  for (const crd of loaded.crds) validating.validateCrd(crd);
  const model = modeling.buildModel(loaded.crds);
  return { notes: [...loaded.notes, ...model.notes], model, modules: types.emitAllTypes(model) };
}

export interface CrdOptions {
  readonly kind?: string;
  readonly plural?: string;
  readonly scope?: 'Namespaced' | 'Cluster';
  readonly root?: Record<string, unknown>;
  readonly versions?: readonly Record<string, unknown>[];
}

/** A CRD document for a kind (default `Widget`) whose v1 `spec` schema is `spec`. */
export function crd(spec: Record<string, unknown> | undefined, options: CrdOptions = {}): Record<string, unknown> {
  const kind = options.kind ?? 'Widget';
  const plural = options.plural ?? `${kind.toLowerCase()}s`;
  const root = options.root ?? {
    type: 'object',
    properties: { ...(spec ? { spec } : {}), status: { type: 'object', properties: { phase: { type: 'string' } } } },
  };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.example.com` },
    spec: {
      group: 'example.com',
      scope: options.scope ?? 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase() },
      versions: options.versions ?? [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: root } }],
    },
  };
}

/** Renders documents as one multi-document YAML source. */
export function source(documents: readonly unknown[], file = 'crds/widgets.yaml'): loading.SourceText {
  return { path: file, text: documents.map((document) => yaml.stringify(document)).join('---\n') };
}

/** Emits the single module of a one-version CRD whose spec schema is `spec`. */
export function emitSpec(spec: Record<string, unknown>, options: CrdOptions = {}): types.EmittedModule {
  const { modules } = generate([source([crd(spec, options)])]);
  if (modules.length !== 1) throw new Error(`expected one module, got ${modules.length}`);
  return modules[0]!;
}

/** The text of one top-level declaration (with its TSDoc) in an emitted module. */
export function declarationOf(moduleText: string, name: string): string {
  const block = moduleText.split('\n\n').find((part) => new RegExp(`^export (interface|type|const) ${name}\\b`, 'm').test(part));
  if (!block) throw new Error(`no declaration of ${name} in:\n${moduleText}`);
  return block;
}

export interface CheckFile {
  readonly fileName: string;
  readonly text: string;
}

/**
 * Type-checks files (written to a temporary folder) with strict settings; `kopf-gen/runtime`
 * maps to this checkout's runtime. Returns the diagnostics of the given files, formatted.
 */
export function typecheck(files: readonly CheckFile[]): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-types-'));
  try {
    fs.writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');
    const names = files.map((file) => path.join(dir, file.fileName));
    files.forEach((file, index) => fs.writeFileSync(names[index]!, file.text));
    const program = ts.createProgram(names, {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2023.d.ts'],
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      noUnusedLocals: true,
      noUnusedParameters: true,
      exactOptionalPropertyTypes: true,
      verbatimModuleSyntax: true,
      isolatedModules: true,
      noPropertyAccessFromIndexSignature: true,
      types: ['node'],
      typeRoots: [path.join(REPO_ROOT, 'node_modules/@types')],
      paths: { 'kopf-gen/runtime': [path.join(REPO_ROOT, 'runtime/index.ts')] },
    });
    const diagnostics = [
      ...program.getOptionsDiagnostics(),
      ...program.getGlobalDiagnostics(),
      ...names.flatMap((name) => {
        const sourceFile = program.getSourceFile(name);
        if (!sourceFile) return [];
        return [...program.getSyntacticDiagnostics(sourceFile), ...program.getSemanticDiagnostics(sourceFile)];
      }),
    ];
    return diagnostics.map((diagnostic) => {
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
      if (!diagnostic.file || diagnostic.start === undefined) return message;
      const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
      return `${path.basename(diagnostic.file.fileName)}:${line + 1}: ${message}`;
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
