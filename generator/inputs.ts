/**
 * Inputs: where the CRDs of a run come from and where they go in the project's `crds/` folder.
 *
 * CRDs arrive as file paths or as texts (stdin, given as `-` on the command line, arrives here as
 * a text named `<stdin>`); a folder given as a path stands for its YAML and JSON files, as for
 * `kubectl apply -f DIR`. A file may hold several CRDs and other documents; the loader skips the
 * others with a note, and `crdFiles` keeps only the CRD documents when it copies a source into
 * `crds/` (so the project's tests and devcluster load nothing but CRDs). A source that holds only
 * CRDs is copied byte for byte, comments included. What kubectl prints (`kubectl get crd … -o
 * yaml`: a `List`, objects with their `status`, `uid`, `resourceVersion`, `managedFields`) is
 * copied as plain CRDs instead, one document each, without what the API server set: applying
 * those fields again fails (server-side apply refuses `managedFields`, a stale `resourceVersion`
 * conflicts).
 *
 * Reading is the only I/O here; naming and splitting are pure.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as jsYaml from 'js-yaml';
import * as yaml from 'yaml';
import * as json from './json.js';
import type * as loading from './loading.js';
import * as limits from './limits.js';
import * as naming from './naming.js';
import * as projects from './projects.js';

/** A CRD source: a file path, or a text with the name to show in messages. */
export type CrdSource = string | loading.SourceText;

/** The name messages use for standard input. */
export const STDIN_NAME = '<stdin>';

/** File names the generator reads as CRD inputs in a project's `crds/` folder. */
export const CRD_FILE_PATTERN = /\.(ya?ml|json)$/i;

/**
 * Reads every source: paths are read from disk (relative to `baseDir`), texts pass through.
 *
 * Paths that are not regular files (a FIFO, a socket, a device, a directory) are refused before
 * anything is read: reading one could block forever. So are files larger than `maxBytes`, before
 * they are read (parsing a 59 MB file took 37 s and 2.8 GB), and texts larger than that.
 * Standard input arrives as a text, never as a path.
 *
 * @throws ProjectError `missing-input` when a path cannot be read, `not-a-file` when it is not a
 *   regular file, `input-too-large` when it is larger than `maxBytes`, `no-input` when there is none.
 */
export function readSources(sources: readonly CrdSource[], baseDir = process.cwd(), maxBytes = limits.MAX_INPUT_BYTES): loading.SourceText[] {
  if (sources.length === 0) throw new projects.ProjectError('no-input', 'no CRD given: pass at least one --crd FILE (or --crd - for stdin)');
  return sources.flatMap((source) => {
    if (typeof source !== 'string') {
      // Standard input stops being read past the limit (so its whole size is not known).
      const stdin = source.path === STDIN_NAME;
      checkSize(stdin ? '--crd - (standard input)' : source.path, Buffer.byteLength(source.text), maxBytes, !stdin);
      return [source];
    }
    const file = path.resolve(baseDir, source);
    try {
      // Stat first: reading a FIFO, a socket or a device would block or never end.
      const stats = fs.statSync(file);
      if (stats.isDirectory())
        return folderFiles(source, file).map((name) => readFile(`${source.replace(/[\\/]+$/, '')}/${name}`, path.join(file, name), maxBytes));
      if (!stats.isFile()) {
        throw new projects.ProjectError(
          'not-a-file',
          `--crd ${source}: ${projects.fileKind(stats)}, not a regular file; give a CRD file, or --crd - to read standard input`,
        );
      }
      return [readFile(source, file, maxBytes, stats)];
    } catch (error) {
      if (error instanceof projects.ProjectError) throw error;
      const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
      throw new projects.ProjectError('missing-input', `--crd ${source}: ${reason}`, { cause: error });
    }
  });
}

/** Reads one regular file (stat'ed already, or now), refusing it unread when too large. */
function readFile(shown: string, file: string, maxBytes: number, stats = fs.statSync(file)): loading.SourceText {
  if (!stats.isFile()) {
    throw new projects.ProjectError(
      'not-a-file',
      `--crd ${shown}: ${projects.fileKind(stats)}, not a regular file; give a CRD file, or --crd - to read standard input`,
    );
  }
  checkSize(`--crd ${shown}`, stats.size, maxBytes);
  return { path: shown, text: fs.readFileSync(file, 'utf8') };
}

/**
 * The CRD files of a folder given as `--crd DIR`, sorted: its `*.yaml`, `*.yml` and `*.json`
 * entries, not its subfolders — what `kubectl apply -f DIR` reads (without `-R`).
 *
 * @throws ProjectError `no-input` when it has none.
 */
function folderFiles(shown: string, folder: string): string[] {
  const names = fs
    .readdirSync(folder)
    .filter((name) => CRD_FILE_PATTERN.test(name))
    .sort();
  if (names.length === 0) throw new projects.ProjectError('no-input', `--crd ${shown}: a folder with no *.yaml, *.yml or *.json file`);
  return names;
}

/**
 * Reads a CRD file of a project (`crds/…`), refusing it unread when it is larger than `maxBytes`.
 *
 * @throws ProjectError `input-too-large`.
 */
export function readProjectCrd(file: string, shown: string, maxBytes = limits.MAX_INPUT_BYTES): string {
  checkSize(shown, fs.statSync(file).size, maxBytes);
  return fs.readFileSync(file, 'utf8');
}

/**
 * Refuses an input larger than the limit, naming it, its size and the limit.
 *
 * @throws ProjectError `input-too-large`.
 */
export function checkSize(shown: string, size: number, maxBytes: number, exact = true): void {
  if (size <= maxBytes) return;
  const what = exact ? `${size} bytes${size >= MIB ? ` (${sizeText(size)})` : ''}` : 'larger';
  throw new projects.ProjectError(
    'input-too-large',
    `${shown}: ${what}, more than the ${sizeText(maxBytes)} a CRD file may have (real CRD files are under 2 MiB); split the file, or raise the limit with --max-input-mib`,
  );
}

const MIB = 1024 * 1024;

/** A size for messages: `16 MiB`, `56.3 MiB`, or bytes below 1 MiB. */
function sizeText(bytes: number): string {
  if (bytes < MIB) return `${bytes} bytes`;
  const value = bytes / MIB;
  return `${Number.isInteger(value) ? value : value.toFixed(1)} MiB`;
}

/** A file to place in `crds/`. */
export interface CrdFile {
  /** The file name inside `crds/`. */
  readonly fileName: string;
  readonly text: string;
  /** The source it comes from. */
  readonly source: loading.SourceText;
  /** When only some documents are kept: their indices in the source, in order. */
  readonly documentIndices?: readonly number[];
}

/**
 * Decides the `crds/` files for loaded sources: one per source, named after the source file (or
 * `<plural>.<group>.yaml` for stdin), never colliding with `taken` (names already in `crds/`).
 * `notes` are the loader's: a source it skipped other objects of is split (only its CRDs are kept).
 */
export function crdFiles(
  sources: readonly loading.SourceText[],
  loaded: readonly loading.LoadedCrd[],
  notes: readonly string[],
  taken: Iterable<string> = [],
): CrdFile[] {
  const used = new Set([...taken].map((name) => name.toLowerCase()));
  const files: CrdFile[] = [];
  for (const source of sources) {
    const crds = loaded.filter((crd) => crd.file === source.path);
    if (crds.length === 0) continue;
    const printed = crds.some((crd) => crd.itemPath !== undefined || serverFields(crd.document).length > 0);
    const fileName = claim(used, printed ? asYamlName(baseName(source, crds[0]!)) : baseName(source, crds[0]!));
    const mixed = notes.some((note) => note.startsWith(`${source.path}, document `) && note.includes('not a CustomResourceDefinition'));
    const text = source.text.endsWith('\n') ? source.text : `${source.text}\n`;
    if (printed) files.push({ fileName, text: plainCrds(source, crds), source, documentIndices: crds.map((crd) => crd.documentIndex) });
    else files.push({ fileName, ...(mixed ? onlyCrds(source, crds) : { text }), source });
  }
  return files;
}

function baseName(source: loading.SourceText, first: loading.LoadedCrd): string {
  if (source.path !== STDIN_NAME) {
    const base = path.basename(source.path);
    return CRD_FILE_PATTERN.test(base) ? base : `${base}.yaml`;
  }
  const spec = first.document['spec'] as { group?: unknown; names?: { plural?: unknown } } | undefined;
  const plural = typeof spec?.names?.plural === 'string' ? spec.names.plural : 'crd';
  const group = typeof spec?.group === 'string' ? spec.group : 'local';
  return `${naming.identifier(plural).toLowerCase()}.${group.replace(/[^A-Za-z0-9.-]/g, '')}.yaml`;
}

/** A `.json` name as `.yaml` (the copy of a printed source is YAML). */
function asYamlName(name: string): string {
  return name.replace(/\.json$/i, '.yaml');
}

/** Metadata fields the API server sets on every object, which a copy to apply must not carry. */
const SERVER_METADATA = [
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'managedFields',
  'selfLink',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
];

/** The annotation client-side `kubectl apply` keeps the applied object in (up to 262,144 bytes with the others). */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** The fields of a CRD as kubectl prints it that the API server (or a client-side apply) set, as paths. */
export function serverFields(document: Readonly<Record<string, unknown>>): string[] {
  const found: string[] = Object.hasOwn(document, 'status') ? ['status'] : [];
  const metadata = document['metadata'];
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return found;
  const fields = metadata as Record<string, unknown>;
  found.push(...SERVER_METADATA.filter((name) => Object.hasOwn(fields, name)).map((name) => `metadata.${name}`));
  const annotations = fields['annotations'];
  if (typeof annotations === 'object' && annotations !== null && Object.hasOwn(annotations, LAST_APPLIED)) {
    found.push(`metadata.annotations["${LAST_APPLIED}"]`);
  }
  return found;
}

/** A CRD without the fields of `serverFields` (a copy: the loaded document stays as it is). */
function withoutServerFields(document: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { status: _status, metadata, ...rest } = document;
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return { ...rest, ...(metadata === undefined ? {} : { metadata }) };
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(metadata)) {
    if (SERVER_METADATA.includes(name)) continue;
    if (name === 'annotations' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const { [LAST_APPLIED]: _applied, ...others } = value as Record<string, unknown>;
      if (Object.keys(others).length > 0) kept['annotations'] = others;
      continue;
    }
    Object.defineProperty(kept, name, { value, enumerable: true, writable: true, configurable: true });
  }
  const { apiVersion, kind, ...body } = rest;
  return { apiVersion, kind, metadata: kept, ...body };
}

/**
 * The CRDs of a source as kubectl printed it (a `List`, or objects with what the server set) as
 * plain CRD documents, one each, in order, without the fields of `serverFields`.
 */
function plainCrds(source: loading.SourceText, crds: readonly loading.LoadedCrd[]): string {
  const header = `# The CustomResourceDefinitions of ${source.path === STDIN_NAME ? 'standard input' : path.basename(source.path)} as plain documents, without the fields the API server set.\n`;
  return header + crds.map((crd) => documentText(withoutServerFields(crd.document))).join('---\n');
}

/**
 * One document's YAML, readable alike by YAML 1.1 parsers (kubectl's: `yes` and `on` are booleans
 * there, so such strings are quoted) and by the generator's (YAML 1.2); in the rare case the two
 * would still read it differently, its JSON form (which both read the same).
 */
function documentText(data: Record<string, unknown>): string {
  const text = yaml.stringify(data, { version: '1.1', lineWidth: 0, aliasDuplicateObjects: false });
  return json.sameJson(jsYaml.load(text, { schema: jsYaml.CORE_SCHEMA }), data) ? text : `${JSON.stringify(data, null, 2)}\n`;
}

function claim(used: Set<string>, name: string): string {
  const extension = path.extname(name);
  const stem = name.slice(0, name.length - extension.length);
  let candidate = name;
  for (let counter = 2; used.has(candidate.toLowerCase()); counter += 1) candidate = `${stem}-${counter}${extension}`;
  used.add(candidate.toLowerCase());
  return candidate;
}

/**
 * The source text, or only its CRD documents when it holds other (non-empty) documents too. Splits
 * at the document boundaries of YAML's concrete syntax tree (cheap: nothing is composed), so the
 * kept documents are byte for byte what the source holds, comments included.
 */
function onlyCrds(source: loading.SourceText, crds: readonly loading.LoadedCrd[]): { text: string; documentIndices?: number[] } {
  const starts: number[] = [];
  for (const token of new yaml.Parser().parse(source.text)) if (token.type === 'document') starts.push(token.offset);
  const pieces = starts.map((start, index) => source.text.slice(start, starts[index + 1] ?? source.text.length));
  const wanted = new Set(crds.map((crd) => crd.documentIndex));
  const blank = (piece: string): boolean => piece.split('\n').every((line) => /^\s*(#.*)?$/.test(line) || /^(---|\.\.\.)\s*(#.*)?$/.test(line));
  const others = pieces.some((piece, index) => !wanted.has(index) && !blank(piece));
  if (!others) return { text: source.text.endsWith('\n') ? source.text : `${source.text}\n` };
  const documentIndices = [...wanted].sort((x, y) => x - y);
  const kept = documentIndices.map((index) => {
    const piece = pieces[index]!.replace(/^---[ \t]*\n/, '').replace(/\n\.\.\.\s*$/, '\n');
    return piece.endsWith('\n') ? piece : `${piece}\n`;
  });
  return { text: kept.join('---\n'), documentIndices };
}
