/**
 * Writing a snapshot of a state folder (D-PERSIST-302): every object at one revision, into a
 * temporary file that replaces `snapshot.jsonl` by a rename only once it is complete and on disk,
 * so a crash leaves either the old snapshot or the new one, never half of one. The journals the new
 * snapshot covers are deleted after the rename.
 *
 * A large store is written a slice at a time (`step()` between requests), so a snapshot taken while
 * the cluster serves does not hold the event loop; `finish()` writes the rest at once (at stop).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as revisions from '../store/revisions.js';
import * as format from './format.js';

/** Objects serialised per `step()`. */
const SLICE = 500;

export class SnapshotJob {
  private fd: number | undefined;
  private next = 0;

  /**
   * @param entries the objects at `revision` (stored objects are never mutated, so references do)
   * @param journal the first journal that follows the snapshot (it must exist already)
   */
  constructor(
    private readonly dir: string,
    private readonly revision: number,
    private readonly journal: number,
    private readonly entries: readonly revisions.StoredEntry[],
  ) {
    this.fd = fs.openSync(path.join(dir, format.SNAPSHOT_TMP), 'w', 0o600);
    fs.writeSync(this.fd, format.snapshotHeader(revision, journal));
  }

  get done(): boolean {
    return this.fd === undefined;
  }

  /** Writes the next slice; commits after the last one. Returns whether the job is done. */
  step(): boolean {
    if (this.fd === undefined) return true;
    const end = Math.min(this.entries.length, this.next + SLICE);
    let text = '';
    for (let i = this.next; i < end; i++) {
      const e = this.entries[i]!;
      text += `${JSON.stringify({ s: e.storage, k: e.key, o: e.object })}\n`;
    }
    if (text) fs.writeSync(this.fd, text);
    this.next = end;
    if (end < this.entries.length) return false;
    this.commit(this.fd);
    return true;
  }

  /** Writes whatever is left and commits. */
  finish(): void {
    while (!this.step());
  }

  /** Drops an unfinished snapshot (the folder keeps the previous one and its journals). */
  abandon(): void {
    if (this.fd === undefined) return;
    fs.closeSync(this.fd);
    this.fd = undefined;
    fs.rmSync(path.join(this.dir, format.SNAPSHOT_TMP), { force: true });
  }

  private commit(fd: number): void {
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    this.fd = undefined;
    fs.renameSync(path.join(this.dir, format.SNAPSHOT_TMP), path.join(this.dir, format.SNAPSHOT));
    syncFolder(this.dir);
    for (const name of fs.readdirSync(this.dir)) {
      const seq = format.journalSeq(name);
      if (seq !== undefined && seq < this.journal) fs.rmSync(path.join(this.dir, name), { force: true });
    }
  }

  /** The revision the snapshot holds. */
  get at(): number {
    return this.revision;
  }
}

/** Makes a rename or a new file in `dir` durable (where the platform allows opening folders). */
export function syncFolder(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Some platforms cannot fsync a folder; the rename is then as durable as they make it.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
