/**
 * Reading a state folder back (D-PERSIST-301, 303, 304, 306): the snapshot, then every journal that
 * follows it, replayed in order into tables of objects. The newest journal may end in a torn line
 * (the process died in the middle of a write): that line is ignored and reported so the writer can
 * cut it off. Anything else that does not parse — a damaged line inside a file, a missing header, a
 * gap in the journals — is corruption and refused, never skipped: dropping it would silently lose
 * or resurrect objects.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as revisions from '../store/revisions.js';
import type { JsonObject } from '../json.js';
import * as format from './format.js';

/** What a folder holds. */
export interface LoadedState {
  /** The objects, storage → key → object. */
  readonly tables: Map<string, Map<string, JsonObject>>;
  /** The revision of the last write kept (0 for an empty folder). */
  readonly revision: number;
  /** The journals read, in order (to delete once a new snapshot covers them). */
  readonly journals: readonly number[];
  /** The next journal number to use. */
  readonly nextJournal: number;
  /** Whether the folder held any state at all. */
  readonly found: boolean;
  /** A torn last line that was ignored: the file and the byte length of its good part. */
  readonly torn: { readonly file: string; readonly goodBytes: number } | undefined;
}

/** Reads the state of `dir` (an existing folder). */
export function load(dir: string): LoadedState {
  const tables = new Map<string, Map<string, JsonObject>>();
  let revision = 0;
  let firstJournal = 0;
  let found = false;
  const snapshotFile = path.join(dir, format.SNAPSHOT);
  if (fs.existsSync(snapshotFile)) {
    found = true;
    const lines = splitLines(fs.readFileSync(snapshotFile, 'utf8'));
    if (!lines.complete) throw new format.StateCorruptError(dir, format.SNAPSHOT, lines.lines.length, 'the last line is cut short');
    const header = format.parseHeader(dir, format.SNAPSHOT, lines.lines[0], 'snapshot');
    revision = header['revision'] as number;
    firstJournal = header['journal'] as number;
    for (let i = 1; i < lines.lines.length; i++) {
      const record = format.asSnapshotRecord(format.parseLine(lines.lines[i]!));
      if (typeof record === 'string') throw new format.StateCorruptError(dir, format.SNAPSHOT, i + 1, record);
      tableOf(tables, record.s).set(record.k, record.o);
    }
  }
  const journals = fs
    .readdirSync(dir)
    .map((name) => format.journalSeq(name))
    .filter((seq): seq is number => seq !== undefined && seq >= firstJournal)
    .sort((a, b) => a - b);
  let torn: LoadedState['torn'];
  journals.forEach((seq, index) => {
    found = true;
    if (index === 0 ? seq !== firstJournal && fs.existsSync(snapshotFile) : seq !== journals[index - 1]! + 1) {
      throw new format.StateCorruptError(dir, format.journalName(seq), 1, 'a journal before it is missing');
    }
    const last = index === journals.length - 1;
    const result = replayJournal(dir, seq, tables, revision, last);
    revision = result.revision;
    if (result.torn) torn = result.torn;
  });
  const nextJournal = journals.length ? journals[journals.length - 1]! + 1 : firstJournal;
  return { tables, revision, journals, nextJournal, found, torn };
}

/** Applies one journal to `tables`; returns the revision reached and a torn tail, if any. */
function replayJournal(
  dir: string,
  seq: number,
  tables: Map<string, Map<string, JsonObject>>,
  from: number,
  last: boolean,
): { revision: number; torn: LoadedState['torn'] } {
  const name = format.journalName(seq);
  const text = fs.readFileSync(path.join(dir, name), 'utf8');
  const { lines, complete } = splitLines(text);
  let revision = from;
  let torn: LoadedState['torn'];
  if (lines.length === 0 || (lines.length === 1 && !complete)) {
    // Died while writing the header: an empty journal.
    if (!last) throw new format.StateCorruptError(dir, name, 1, 'no header');
    return { revision, torn: { file: name, goodBytes: 0 } };
  }
  format.parseHeader(dir, name, lines[0], 'journal');
  let goodBytes = Buffer.byteLength(lines[0]!) + 1;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const record = format.asJournalRecord(format.parseLine(line));
    const isTail = i === lines.length - 1 && (!complete || typeof record === 'string');
    if (typeof record === 'string' || (isTail && !complete)) {
      if (last && isTail) {
        torn = { file: name, goodBytes };
        break;
      }
      throw new format.StateCorruptError(dir, name, i + 1, typeof record === 'string' ? record : 'the line is cut short');
    }
    goodBytes += Buffer.byteLength(line) + 1;
    revision = Math.max(revision, record.r);
    if ('drop' in record) {
      tables.delete(record.drop);
      continue;
    }
    if (record.o === undefined) tables.get(record.s)?.delete(record.k);
    else tableOf(tables, record.s).set(record.k, record.o);
  }
  return { revision, torn };
}

/** The lines of a text; `complete` is false when the last one has no line end (it was cut short). */
function splitLines(text: string): { lines: string[]; complete: boolean } {
  if (text === '') return { lines: [], complete: true };
  const complete = text.endsWith('\n');
  const lines = (complete ? text.slice(0, -1) : text).split('\n');
  return { lines, complete };
}

function tableOf(tables: Map<string, Map<string, JsonObject>>, storage: string): Map<string, JsonObject> {
  let table = tables.get(storage);
  if (!table) {
    table = new Map();
    tables.set(storage, table);
  }
  return table;
}

/** The loaded tables as store entries. */
export function* entries(state: LoadedState): Iterable<revisions.StoredEntry> {
  for (const [storage, table] of state.tables) for (const [key, object] of table) yield { storage, key, object };
}
