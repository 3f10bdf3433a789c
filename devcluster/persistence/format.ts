/**
 * The files of a devcluster state folder and their format (D-PERSIST-301..306).
 *
 * A state folder holds a snapshot (every object at one revision) and journals (every write since,
 * one JSON line each, appended). Both are JSON Lines whose first line is a header naming the format
 * and its version, so a folder written by another version of the devcluster is recognised and
 * refused instead of being misread. This module knows the names, the header and the records; it
 * does no I/O. The errors it defines carry literal codes and name the folder and how to reset it.
 */
import * as path from 'node:path';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

/** The format marker of every file's header. */
export const FORMAT = 'kopf-gen-devcluster-state';
/** The version this devcluster reads and writes; another one is refused (D-PERSIST-304). */
export const VERSION = 1;

export const SNAPSHOT = 'snapshot.jsonl';
export const SNAPSHOT_TMP = 'snapshot.jsonl.tmp';
export const CREDENTIALS = 'credentials.json';
export const LOCK = 'devcluster.lock';
const JOURNAL = /^journal-(\d+)\.jsonl$/;

/** The file name of the journal with sequence number `seq`. */
export function journalName(seq: number): string {
  return `journal-${String(seq).padStart(8, '0')}.jsonl`;
}

/** The sequence number of a journal file name, or undefined for other files. */
export function journalSeq(name: string): number | undefined {
  const m = JOURNAL.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** Every file this devcluster may create in a state folder (what a reset removes). */
export function isStateFile(name: string): boolean {
  return name === SNAPSHOT || name === SNAPSHOT_TMP || name === CREDENTIALS || name === LOCK || journalSeq(name) !== undefined;
}

/** The snapshot's header: the revision it was taken at and the first journal that follows it. */
export interface SnapshotHeader {
  readonly format: typeof FORMAT;
  readonly version: number;
  readonly file: 'snapshot';
  readonly revision: number;
  readonly journal: number;
}

export interface JournalHeader {
  readonly format: typeof FORMAT;
  readonly version: number;
  readonly file: 'journal';
  readonly seq: number;
}

/** One journal line: a write (with `o`), a deletion (without), or a dropped storage (`drop`). */
export type JournalRecord =
  | { readonly r: number; readonly s: string; readonly k: string; readonly o?: JsonObject }
  | { readonly r: number; readonly drop: string };

/** One snapshot line. */
export interface SnapshotRecord {
  readonly s: string;
  readonly k: string;
  readonly o: JsonObject;
}

/** The codes of the state errors; `StateError` is the base, caught as any of them. */
export type StateErrorCode = 'StateError' | 'StateVersionMismatch' | 'StateCorrupt' | 'StateLocked';

/** What every state error has: a literal code, the folder, and the way out in the message. */
export class StateError extends Error {
  readonly code: StateErrorCode = 'StateError';
  constructor(
    readonly dir: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** How to start afresh, quoted in every error that asks for it. */
export function resetHint(dir: string): string {
  return `to start with an empty state, delete it: kopf-gen devcluster --state-dir ${dir} --reset (or DevCluster.resetState(${JSON.stringify(dir)}))`;
}

/** The folder was written by another version of the devcluster (D-PERSIST-304). */
export class StateVersionError extends StateError {
  override readonly code = 'StateVersionMismatch' as const;
  constructor(dir: string, file: string, found: unknown) {
    super(
      dir,
      `devcluster state in ${dir} (${file}) has format version ${JSON.stringify(found)}; this devcluster reads version ${VERSION} only. ` +
        `Its objects are left untouched; ${resetHint(dir)}`,
    );
  }
}

/** A file of the folder cannot be read as this format (D-PERSIST-306). */
export class StateCorruptError extends StateError {
  override readonly code = 'StateCorrupt' as const;
  constructor(dir: string, file: string, line: number, problem: string) {
    super(dir, `devcluster state in ${dir} is corrupt: ${file} line ${line}: ${problem}. Nothing was changed; ${resetHint(dir)}`);
  }
}

/** Another running devcluster holds the folder (D-PERSIST-305). */
export class StateLockedError extends StateError {
  override readonly code = 'StateLocked' as const;
  constructor(
    dir: string,
    readonly pid: number,
  ) {
    super(
      dir,
      `devcluster state in ${dir} is in use by another running devcluster (process ${pid}, lock file ${path.join(dir, LOCK)}); ` +
        'stop that one first, or give this one another --state-dir',
    );
  }
}

export function snapshotHeader(revision: number, journal: number): string {
  const header: SnapshotHeader = { format: FORMAT, version: VERSION, file: 'snapshot', revision, journal };
  return `${JSON.stringify(header)}\n`;
}

export function journalHeader(seq: number): string {
  const header: JournalHeader = { format: FORMAT, version: VERSION, file: 'journal', seq };
  return `${JSON.stringify(header)}\n`;
}

/**
 * Checks a header line: the format marker, then the version (a foreign version is refused before
 * anything else is read), then the fields of that file kind.
 */
export function parseHeader(dir: string, file: string, line: string | undefined, kind: 'snapshot' | 'journal'): JsonObject {
  const value = parseLine(line ?? '');
  if (!value || value['format'] !== FORMAT) throw new StateCorruptError(dir, file, 1, `not a ${FORMAT} header`);
  if (value['version'] !== VERSION) throw new StateVersionError(dir, file, value['version']);
  if (value['file'] !== kind) throw new StateCorruptError(dir, file, 1, `a ${String(value['file'])} header where a ${kind} was expected`);
  const numbers = kind === 'snapshot' ? ['revision', 'journal'] : ['seq'];
  for (const n of numbers) {
    if (!Number.isSafeInteger(value[n]) || (value[n] as number) < 0) throw new StateCorruptError(dir, file, 1, `header field ${n} is not a count`);
  }
  return value;
}

/** A line as a JSON object, or undefined when it is not one (a torn or damaged line). */
export function parseLine(line: string): JsonObject | undefined {
  try {
    const value = JSON.parse(line) as unknown;
    return json.isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A journal record read back, or a description of what is wrong with it. */
export function asJournalRecord(value: JsonObject | undefined): JournalRecord | string {
  if (!value) return 'not a JSON object';
  if (!Number.isSafeInteger(value['r'])) return 'no revision';
  const r = value['r'] as number;
  if (typeof value['drop'] === 'string') return { r, drop: value['drop'] };
  if (typeof value['s'] !== 'string' || typeof value['k'] !== 'string') return 'no storage or key';
  if (value['o'] !== undefined && !json.isObject(value['o'])) return 'an object that is not one';
  return value['o'] === undefined ? { r, s: value['s'], k: value['k'] } : { r, s: value['s'], k: value['k'], o: value['o'] };
}

export function asSnapshotRecord(value: JsonObject | undefined): SnapshotRecord | string {
  if (!value) return 'not a JSON object';
  if (typeof value['s'] !== 'string' || typeof value['k'] !== 'string' || !json.isObject(value['o'])) return 'no storage, key or object';
  return { s: value['s'], k: value['k'], o: value['o'] };
}
