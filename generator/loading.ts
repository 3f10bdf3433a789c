/**
 * Loading: source texts in, CRD documents out — the first of the generator's pure stages.
 *
 * Input files are multi-document YAML as people keep them: several CRDs per file, CRDs mixed with
 * the custom resources that use them, comments, empty trailing documents — and what kubectl prints:
 * `kubectl get crd a b -o yaml` is one `kind: List` document whose `items` are the CRDs. The loader
 * parses every document, opens Lists (`v1` `List`, or a `CustomResourceDefinitionList`) into their
 * items, keeps the CustomResourceDefinitions with their source path, document index and, inside a
 * List, their item (so every later error can point back at them), and skips everything else —
 * documents or List items — with a note.
 *
 * It does no file I/O (the caller reads files) and checks nothing beyond "is this YAML (with a JSON
 * form: no alias inside the node it names, and no deeper than the later stages read)" and "is this
 * a Kubernetes object": validating.ts decides whether a CRD is usable. Parsing is js-yaml's (YAML
 * 1.2, core schema, unique keys); its errors are reported with the file, the document index and
 * the line and column. Nesting deeper than `limits.MAX_DEPTH` stops the parser itself (it
 * recurses once per level) and is reported as `too-deep`, with the JSON path (nesting.ts).
 */
import * as jsYaml from 'js-yaml';
import * as errors from './errors.js';
import * as limits from './limits.js';
import * as nesting from './nesting.js';
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
  /** Inside a List document: the item's JSON path in it (`items[2]`); absent for a document of its own. */
  readonly itemPath?: string | undefined;
}

/** Where a CRD was found: its file, its document and, inside a List, its item. */
export interface CrdPlace {
  readonly file: string;
  readonly documentIndex: number;
  readonly itemPath?: string | undefined;
}

/** A CRD's place for messages: `crds/a.yaml, document 0` or `crds/a.yaml, document 0, items[2]`. */
export function placeOf(crd: CrdPlace): string {
  return `${crd.file}, document ${crd.documentIndex}${crd.itemPath === undefined ? '' : `, ${crd.itemPath}`}`;
}

/** The location of a JSON path inside a CRD (inside a List: below its item). */
export function locate(crd: CrdPlace, jsonPath: string): errors.SourceLocation {
  const inItem = crd.itemPath === undefined ? jsonPath : jsonPath === '' ? crd.itemPath : `${crd.itemPath}${jsonPath.startsWith('[') ? '' : '.'}${jsonPath}`;
  return { file: crd.file, documentIndex: crd.documentIndex, jsonPath: inItem };
}

/** What the loader found: the CRDs, and a note for every document it skipped. */
export interface LoadResult {
  readonly crds: LoadedCrd[];
  readonly notes: string[];
}

const CRD_GROUP = 'apiextensions.k8s.io/';

/**
 * Whether a Kubernetes object is a list of objects as kubectl prints and reads them: `v1` `List`
 * (`kubectl get … -o yaml` of several objects), or the API's own list of CRDs.
 */
function isList(apiVersion: string, kind: string): boolean {
  return (apiVersion === 'v1' && kind === 'List') || (apiVersion.startsWith(CRD_GROUP) && kind === 'CustomResourceDefinitionList');
}

/**
 * Parses the sources and returns their CRD documents in input order.
 *
 * Empty documents and Kubernetes objects of other kinds are skipped with a note.
 *
 * @throws errors.GeneratorError `not-yaml` when a document does not parse, `too-deep` when it
 *   nests deeper than `limits.MAX_DEPTH`, `cyclic-alias` when a YAML alias sits inside the node it
 *   refers to, and `not-a-crd` when a document is not a Kubernetes object at all or a file holds
 *   no CRD.
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
    const index = documentIndex;
    documentIndex += 1;
    if (data === null || data === undefined) {
      notes.push(`${input.path}, document ${index}: skipped (empty document)`);
      continue;
    }
    const place = { file: input.path, documentIndex: index };
    const object = kubernetesObject(data, place);
    if (isList(object.apiVersion, object.kind)) found.push(...listItems(object.data, place, notes));
    else if (isCrd(object, place, notes)) found.push({ ...place, document: object.data });
  }
  return found;
}

/** A document or List item that is a Kubernetes object, with its type. */
interface TypedObject {
  readonly data: schemas.Schema;
  readonly apiVersion: string;
  readonly kind: string;
}

/**
 * The data as a Kubernetes object: a mapping with `apiVersion` and `kind`.
 *
 * @throws errors.GeneratorError `not-a-crd` when it is not one.
 */
function kubernetesObject(data: unknown, place: CrdPlace): TypedObject {
  const where = locate(place, '');
  const what = place.itemPath === undefined ? 'the document' : 'the item';
  if (!schemas.isRecord(data)) {
    throw new errors.GeneratorError(
      'not-a-crd',
      where,
      `not a Kubernetes object: ${what} is ${Array.isArray(data) ? 'a list' : data === null ? 'null' : `a ${typeof data}`}, not a mapping`,
    );
  }
  const apiVersion = schemas.own(data, 'apiVersion');
  const kind = schemas.own(data, 'kind');
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') {
    throw new errors.GeneratorError('not-a-crd', where, 'not a Kubernetes object: apiVersion and kind are missing');
  }
  return { data, apiVersion, kind };
}

/** Whether an object is a CRD; when not, a note says it was skipped. */
function isCrd(object: TypedObject, place: CrdPlace, notes: string[]): boolean {
  if (object.kind === 'CustomResourceDefinition' && object.apiVersion.startsWith(CRD_GROUP)) return true;
  notes.push(`${placeOf(place)}: skipped (${object.kind} ${object.apiVersion}, not a CustomResourceDefinition)`);
  return false;
}

/**
 * The CRDs among the items of a List document, each with its item's path; other objects are
 * skipped with a note, as other documents are, and so is an empty List.
 *
 * @throws errors.GeneratorError `not-a-crd` when `items` is not a list, or an item is not a
 *   Kubernetes object (a List inside a List included: kubectl prints none).
 */
function listItems(list: schemas.Schema, place: CrdPlace, notes: string[]): LoadedCrd[] {
  const items = schemas.own(list, 'items');
  if (items === null || items === undefined || (Array.isArray(items) && items.length === 0)) {
    notes.push(`${placeOf(place)}: skipped (an empty List)`);
    return [];
  }
  if (!Array.isArray(items)) {
    throw new errors.GeneratorError('not-a-crd', locate(place, 'items'), 'a List whose items are not a list of Kubernetes objects');
  }
  const found: LoadedCrd[] = [];
  for (const [index, item] of items.entries()) {
    const itemPlace = { ...place, itemPath: `items[${index}]` };
    const object = kubernetesObject(item, itemPlace);
    if (isList(object.apiVersion, object.kind)) {
      throw new errors.GeneratorError('not-a-crd', locate(itemPlace, ''), `a ${object.kind} inside a List: give its items in the outer List`);
    }
    if (isCrd(object, itemPlace, notes)) found.push({ ...itemPlace, document: object.data });
  }
  return found;
}

/**
 * The data of each document of a source, in order, parsed by js-yaml with its core schema (YAML
 * 1.2's JSON-compatible types: no timestamps or other YAML 1.1 types) and duplicate keys refused.
 * When a document does not parse, the documents before it are still yielded first, so that their
 * own errors come before it, as they would reading the file from the top.
 */
function* documentsOf(input: SourceText): Generator<unknown> {
  const { documents, failure } = parseDocuments(input.text);
  for (const [documentIndex, data] of documents.entries()) {
    checkShape(data, { file: input.path, documentIndex, jsonPath: '' });
    yield data;
  }
  if (failure !== undefined) {
    const where = { file: input.path, documentIndex: documents.length, jsonPath: '' };
    const { error } = failure;
    if (error instanceof jsYaml.YAMLException && error.reason.startsWith(TOO_DEEP)) {
      const crossing = nesting.firstTooDeepInText(input.text, where.documentIndex, limits.MAX_DEPTH);
      const at = crossing === undefined ? ` (line ${error.mark.line + 1}, column ${error.mark.column + 1})` : '';
      throw tooDeep({ ...where, jsonPath: crossing === undefined ? '' : nesting.renderCrossing(crossing) }, crossing, at, error);
    }
    if (error instanceof jsYaml.YAMLException) {
      const at = ` (line ${error.mark.line + 1}, column ${error.mark.column + 1})`;
      throw new errors.GeneratorError('not-yaml', where, `not valid YAML${at}: ${firstLine(error.reason)}`, { cause: error });
    }
    throw new errors.GeneratorError('not-yaml', where, `not usable YAML: ${firstLine(String(error))}`, { cause: error });
  }
}

/**
 * The parser's depth counts its own nested calls: scalars, and one more call in some styles, so
 * it is the nesting of mappings and lists plus one or two (measured for block and flow styles,
 * anchors, tags and explicit keys). With this bound a document nested `MAX_DEPTH` levels parses in
 * every style; one nested deeper either stops the parser (then its text is walked for the place)
 * or parses and is refused by the walk of its data.
 */
const LOAD_OPTIONS = { schema: jsYaml.CORE_SCHEMA, json: false, maxDepth: limits.MAX_DEPTH + 2 } as const;

/** The start of js-yaml's message when a document nests deeper than `maxDepth`. */
const TOO_DEEP = 'nesting exceeded maxDepth';

/** The `too-deep` refusal: where the limit is crossed (`at`: a line and column when no JSON path is known). */
function tooDeep(where: errors.SourceLocation, crossing: nesting.Crossing | undefined, at: string, cause?: unknown): errors.GeneratorError {
  const names = [crossing?.crdName && `CRD ${crossing.crdName}`, crossing?.version && `version ${crossing.version}`].filter(Boolean).join(', ');
  return new errors.GeneratorError(
    'too-deep',
    where,
    `nested more than ${limits.MAX_DEPTH} levels deep${at}${names ? ` (${names})` : ''}: the generator reads documents nested up to ${limits.MAX_DEPTH} levels of mappings and lists (the deepest real CRDs nest under 40); make the schema flatter, or replace a deep part with \`x-kubernetes-preserve-unknown-fields: true\``,
    cause === undefined ? undefined : { cause },
  );
}

/** js-yaml's message for text after a document's node that starts no new document. */
const TRAILING_CONTENT = 'end of the stream or a document separator is expected';

/** The documents that parse, and, when one does not, its error (it is the next document). */
interface Parsed {
  readonly documents: unknown[];
  readonly failure?: { readonly error: unknown };
}

/**
 * Parses every document of a text. js-yaml parses a whole stream or throws, without telling which
 * document failed; so, only when it throws, the text is parsed again with a listener that counts
 * the documents as they open and keeps each one as it closes, which tells where the error is.
 */
function parseDocuments(text: string): Parsed {
  try {
    return { documents: withoutBlankStream(text, jsYaml.loadAll(text, undefined, LOAD_OPTIONS)) };
  } catch {
    // Parsed again below, to find the failing document.
  }
  const complete: unknown[] = [];
  let opened = 0;
  let depth = 0;
  const listener = (event: jsYaml.EventType, state: jsYaml.State): void => {
    if (event === 'open') {
      if (depth === 0) opened += 1;
      depth += 1;
      return;
    }
    depth -= 1;
    if (depth === 0) complete.push(state.result);
  };
  try {
    jsYaml.loadAll(text, undefined, { ...LOAD_OPTIONS, listener });
  } catch (error) {
    // An error outside any node is either content after a document's node (in that document) or
    // a bad directive before the next one.
    const inLastDocument = depth > 0 || (error instanceof jsYaml.YAMLException && error.reason === TRAILING_CONTENT);
    const failed = inLastDocument ? opened - 1 : opened;
    return { documents: complete.slice(0, Math.max(0, failed)), failure: { error } };
  }
  throw new Error('js-yaml refused a text once and accepted it the second time');
}

/**
 * js-yaml reads a text of nothing but blank lines and comments as one empty document; YAML has
 * none there (the `yaml` package agrees), and neither has this loader.
 */
function withoutBlankStream(text: string, documents: unknown[]): unknown[] {
  if (documents.length !== 1 || documents[0] !== null) return documents;
  return text.split(/\r?\n/).every((line) => /^\s*(#.*)?$/.test(line)) ? [] : documents;
}

/** How many nodes the aliases of one document may repeat, in all (an alias repeats a whole node). */
const REPEATED_NODES_LIMIT = 1_000_000;

/**
 * Refuses a document that nests too deep (through aliases: the text's own nesting stops the
 * parser), that has no JSON form, or whose aliases would expand it without bound.
 *
 * js-yaml does not copy the node an alias refers to: it shares it, so a document can contain
 * itself, and a few nested aliases can stand for billions of nodes to every later stage.
 */
function checkShape(data: unknown, where: errors.SourceLocation): void {
  // First the depth, without recursion: the walk below recurses once per level.
  const crossing = nesting.firstTooDeep(data, limits.MAX_DEPTH);
  if (crossing !== undefined) throw tooDeep({ ...where, jsonPath: nesting.renderCrossing(crossing) }, crossing, '');
  const found = walkShape(data);
  if (found?.kind === 'cycle') {
    throw new errors.GeneratorError(
      'cyclic-alias',
      { ...where, jsonPath: found.path },
      'a YAML alias refers to a node that contains it, so the document has no JSON form (the API server refuses it too); replace the alias with a copy of the part it should repeat',
    );
  }
  if (found?.kind === 'expansion') {
    throw new errors.GeneratorError(
      'not-yaml',
      where,
      `not usable YAML: its aliases repeat more than ${REPEATED_NODES_LIMIT} nodes, which only a resource exhaustion attack needs`,
    );
  }
}

/** What is wrong with the shape of a document's data, if anything. */
type ShapeProblem = { readonly kind: 'cycle'; readonly path: string } | { readonly kind: 'expansion' };

/**
 * Finds the first node that contains itself (through a YAML alias that refers to one of its own
 * ancestors), with its JSON path; or else whether the aliases repeat too many nodes. Aliases that
 * repeat a node elsewhere (real CRDs use them for shared schemas) are fine: only an ancestor counts.
 * Every node is walked once: the size of a repeated node is remembered, not walked again.
 */
function walkShape(data: unknown): ShapeProblem | undefined {
  const ancestors = new Set<object>();
  const sizes = new Map<object, number>();
  let cycle: string | undefined;
  let written = 1; // nodes as the text writes them: the root, and each child once in its first parent
  /** The node's size as a tree (aliases expanded), or -1 once a cycle is found. */
  const sizeOf = (node: unknown, path: string): number => {
    if (typeof node !== 'object' || node === null) return 1;
    const known = sizes.get(node);
    if (known !== undefined) return known;
    if (ancestors.has(node)) {
      cycle = path;
      return -1;
    }
    ancestors.add(node);
    let size = 1;
    const entries: [string | number, unknown][] = Array.isArray(node) ? node.map((item, index) => [index, item]) : Object.entries(node);
    written += entries.length;
    for (const [key, child] of entries) {
      const childSize = sizeOf(child, schemas.childPath(path, key));
      if (childSize < 0) return -1;
      size += childSize;
    }
    ancestors.delete(node);
    sizes.set(node, size);
    return size;
  };
  const size = sizeOf(data, '');
  if (cycle !== undefined) return { kind: 'cycle', path: cycle };
  return size - written > REPEATED_NODES_LIMIT ? { kind: 'expansion' } : undefined;
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}
