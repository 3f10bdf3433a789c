/**
 * Loading: source texts in, CRD documents out — the first of the generator's pure stages.
 *
 * Input files are multi-document YAML as people keep them: several CRDs per file, CRDs mixed with
 * the custom resources that use them, comments, empty trailing documents. The loader parses every
 * document, keeps the CustomResourceDefinitions with their source path and document index (so
 * every later error can point back at them), and skips everything else with a note.
 *
 * It does no file I/O (the caller reads files) and checks nothing beyond "is this YAML (with a JSON
 * form: no alias inside the node it names)" and "is this a Kubernetes object": validating.ts
 * decides whether a CRD is usable. Parsing is the `yaml` package's (YAML 1.2, core schema, unique
 * keys); its errors are reported with the file, the document index and the line and column.
 */
import * as yaml from 'yaml';
import * as errors from './errors.js';
import * as schemas from './schemas.js';

/** One input file: its path (used only in messages) and its text. */
export interface SourceText {
  readonly path: string;
  readonly text: string;
}

/** A CustomResourceDefinition document as found in a source. */
export interface LoadedCrd {
  /** The source path as given. */
  readonly file: string;
  /** 0-based index of the YAML document in its file. */
  readonly documentIndex: number;
  /** The document as JSON data (never mutated by later stages). */
  readonly document: schemas.Schema;
}

/** What the loader found: the CRDs, and a note for every document it skipped. */
export interface LoadResult {
  readonly crds: LoadedCrd[];
  readonly notes: string[];
}

const CRD_GROUP = 'apiextensions.k8s.io/';

/**
 * Parses the sources and returns their CRD documents in input order.
 *
 * Empty documents and Kubernetes objects of other kinds are skipped with a note.
 *
 * @throws errors.GeneratorError `not-yaml` when a document does not parse, `cyclic-alias` when a
 *   YAML alias sits inside the node it refers to, and `not-a-crd` when a document is not a
 *   Kubernetes object at all or a file holds no CRD.
 */
export function loadCrdSources(inputs: readonly SourceText[]): LoadResult {
  const crds: LoadedCrd[] = [];
  const notes: string[] = [];
  for (const input of inputs) {
    const found = loadOne(input, notes);
    if (found.length === 0) {
      throw new errors.GeneratorError('not-a-crd', { file: input.path, documentIndex: 0, jsonPath: '' }, 'the file contains no CustomResourceDefinition');
    }
    crds.push(...found);
  }
  return { crds, notes };
}

function loadOne(input: SourceText, notes: string[]): LoadedCrd[] {
  const found: LoadedCrd[] = [];
  let documentIndex = 0;
  for (const data of documentsOf(input)) {
    const where = { file: input.path, documentIndex, jsonPath: '' };
    const index = documentIndex;
    documentIndex += 1;
    if (data === null || data === undefined) {
      notes.push(`${input.path}, document ${index}: skipped (empty document)`);
      continue;
    }
    if (!schemas.isRecord(data)) {
      throw new errors.GeneratorError(
        'not-a-crd',
        where,
        `not a Kubernetes object: the document is ${Array.isArray(data) ? 'a list' : `a ${typeof data}`}, not a mapping`,
      );
    }
    const apiVersion = schemas.own(data, 'apiVersion');
    const kind = schemas.own(data, 'kind');
    if (typeof apiVersion !== 'string' || typeof kind !== 'string') {
      throw new errors.GeneratorError('not-a-crd', where, 'not a Kubernetes object: apiVersion and kind are missing');
    }
    if (kind !== 'CustomResourceDefinition' || !apiVersion.startsWith(CRD_GROUP)) {
      notes.push(`${input.path}, document ${index}: skipped (${kind} ${apiVersion}, not a CustomResourceDefinition)`);
      continue;
    }
    found.push({ file: input.path, documentIndex: index, document: data });
  }
  return found;
}

/**
 * The data of each document of a source, in order, parsed by the `yaml` package. Documents are
 * converted one at a time, so a YAML error is reported only once the documents before it have
 * been looked at.
 */
function* documentsOf(input: SourceText): Generator<unknown> {
  const documents = yaml.parseAllDocuments(input.text, { uniqueKeys: true, prettyErrors: false });
  const list = Array.isArray(documents) ? documents : [];
  for (const [documentIndex, document] of list.entries()) {
    const where = { file: input.path, documentIndex, jsonPath: '' };
    const problem = document.errors[0];
    if (problem) {
      const at = ` (${linePosition(input.text, problem.pos[0])})`;
      throw new errors.GeneratorError('not-yaml', where, `not valid YAML${at}: ${firstLine(problem.message)}`, { cause: problem });
    }
    let data: unknown;
    try {
      data = document.toJS({ maxAliasCount: 1000 });
    } catch (error) {
      throw new errors.GeneratorError('not-yaml', where, `not usable YAML: ${firstLine(String(error))}`, { cause: error });
    }
    const cycle = cyclePath(data);
    if (cycle !== undefined) {
      throw new errors.GeneratorError(
        'cyclic-alias',
        { ...where, jsonPath: cycle },
        'a YAML alias refers to a node that contains it, so the document has no JSON form (the API server refuses it too); replace the alias with a copy of the part it should repeat',
      );
    }
    yield data;
  }
}

/**
 * The JSON path of the first node that contains itself (through a YAML alias that refers to one
 * of its own ancestors), or `undefined` when the data is a tree. Aliases that repeat a node
 * elsewhere (real CRDs use them for shared schemas) are fine: only an ancestor counts.
 */
function cyclePath(data: unknown): string | undefined {
  const ancestors = new Set<object>();
  const walk = (node: unknown, path: string): string | undefined => {
    if (typeof node !== 'object' || node === null) return undefined;
    if (ancestors.has(node)) return path;
    ancestors.add(node);
    const entries: [string | number, unknown][] = Array.isArray(node) ? node.map((item, index) => [index, item]) : Object.entries(node);
    for (const [key, child] of entries) {
      const found = walk(child, schemas.childPath(path, key));
      if (found !== undefined) return found;
    }
    ancestors.delete(node);
    return undefined;
  };
  return walk(data, '');
}

/** `line L, column C` (1-based) of a character offset. */
function linePosition(text: string, offset: number): string {
  const before = text.slice(0, Math.max(0, offset));
  const lineStart = before.lastIndexOf('\n') + 1;
  const line = before.length - before.replaceAll('\n', '').length + 1;
  return `line ${line}, column ${offset - lineStart + 1}`;
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}
