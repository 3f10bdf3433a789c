/**
 * The pipeline: the generator's pure stages chained — load → validate → model → emit types —
 * plus the checks that look at all CRDs at once (one CRD given twice). Input is texts, output is values; nothing here reads or writes files, so a failing
 * input stops the run before anything is written.
 */
import * as crdnames from './crdnames.js';
import * as loading from './loading.js';
import * as modeling from './modeling.js';
import * as projects from './projects.js';
import * as validating from './validating.js';
import * as types from './emitting/types.js';

/** Everything the later stages need about a set of CRD sources. */
export interface Analysis {
  readonly sources: readonly loading.SourceText[];
  readonly loaded: readonly loading.LoadedCrd[];
  readonly model: modeling.GeneratorModel;
  /** One module per served version, in model order. */
  readonly modules: readonly types.EmittedModule[];
  /** Skipped documents and versions. */
  readonly notes: readonly string[];
}

/** Loaded and validated CRD documents, with the loader's notes. */
export interface Checked {
  readonly loaded: readonly loading.LoadedCrd[];
  readonly notes: readonly string[];
}

/**
 * Loads and validates CRD sources (the stages that can reject input).
 *
 * @throws GeneratorError on the first unusable document (file, document index, JSON path), and
 *   `names-conflict` when two CRDs of one group claim the same kind or resource name.
 * @throws projects.ProjectError `duplicate-crd` when two documents define the same CRD.
 */
export function check(sources: readonly loading.SourceText[]): Checked {
  const loaded = loading.loadCrdSources(sources);
  for (const crd of loaded.crds) validating.validateCrd(crd);
  checkDuplicates(loaded.crds);
  crdnames.checkNameConflicts(loaded.crds);
  return { loaded: loaded.crds, notes: loaded.notes };
}

/**
 * Models and emits checked CRDs (cannot fail on validated input). The documents are taken in the
 * order of their files' names (then document index) — the order `generate` reads crds/ in — so
 * `init` and `add` emit exactly what a later `generate` would, whatever order the CRDs were given in.
 */
export function analyseChecked(sources: readonly loading.SourceText[], checked: Checked): Analysis {
  const loaded = [...checked.loaded].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.documentIndex - b.documentIndex));
  const model = modeling.buildModel(loaded);
  const modules = types.emitAllTypes(model);
  return {
    sources,
    loaded,
    model,
    modules,
    notes: [...checked.notes, ...model.notes],
  };
}

/**
 * Runs the pure stages on CRD sources: `check`, then `analyseChecked`.
 *
 * @throws as `check` does.
 */
export function analyse(sources: readonly loading.SourceText[]): Analysis {
  return analyseChecked(sources, check(sources));
}

/** A copy of a source (in the project's crds/), with the source. */
export interface Copy {
  readonly copy: loading.SourceText;
  readonly source: loading.SourceText;
  /** When the copy keeps only some documents: their indices in the source, in order. */
  readonly documentIndices?: readonly number[] | undefined;
}

/**
 * The checked CRDs of copies of checked sources, without parsing again: a copy holds its source's
 * CRD documents (all of the source as it is, or, when `documentIndices` is given, its CRDs only,
 * one document each, in order — the items of a List too), so the loaded documents are reused
 * under the copy's path and document index.
 */
export function recheck(copies: readonly Copy[], checked: Checked): Checked {
  const loaded: loading.LoadedCrd[] = [];
  for (const { copy, source, documentIndices } of copies) {
    for (const [ordinal, crd] of checked.loaded.filter((each) => each.file === source.path).entries()) {
      const { itemPath: _, ...document } = crd;
      loaded.push(documentIndices ? { ...document, file: copy.path, documentIndex: ordinal } : { ...crd, file: copy.path });
    }
  }
  return { loaded, notes: [] };
}

/** Throws when two CRD documents share a name (`<plural>.<group>`). */
export function checkDuplicates(crds: readonly loading.LoadedCrd[], existing: ReadonlyMap<string, string> = new Map()): void {
  const seen = new Map(existing);
  for (const crd of crds) {
    const name = crdNameOf(crd);
    const where = loading.placeOf(crd);
    const before = seen.get(name);
    if (before !== undefined) throw new projects.ProjectError('duplicate-crd', `${where}: ${name} is already defined (${before})`);
    seen.set(name, where);
  }
}

/** The name of a (validated) CRD document: `<plural>.<group>`. */
export function crdNameOf(crd: loading.LoadedCrd): string {
  const spec = crd.document['spec'] as { group: string; names: { plural: string } };
  return `${spec.names.plural}.${spec.group}`;
}
