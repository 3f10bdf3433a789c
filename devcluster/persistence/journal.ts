/**
 * The journal writer of a state folder (D-PERSIST-302): every write of the store becomes one JSON
 * line appended to the current journal.
 *
 * The request path only queues the change (the store's objects are never mutated once written, so
 * holding the reference is enough); a timer a few milliseconds later serialises the queued changes,
 * appends them in one write and asks for an fdatasync, one at a time (group commit). A process
 * killed meanwhile loses those last milliseconds of writes, never the consistency of what is kept:
 * the journal is a prefix of the writes, and a line cut short is ignored at the next start. A
 * process that exits without stopping the cluster (`process.exit()`) still writes the queue on its
 * way out (without the fdatasync: the system writes it back).
 *
 * When the journal has grown by `snapshotEvery` records it is closed and a new one opened, and a
 * snapshot of the store at that moment is written in slices between requests; once it is on disk
 * the journals before it are deleted, so the folder stays proportional to the objects it holds.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as revisions from '../store/revisions.js';
import * as format from './format.js';
import * as snapshots from './snapshots.js';

export interface JournalOptions {
  /** How long changes are gathered before they are written (ms, default 5). */
  flushMs?: number;
  /** Records after which the journal is compacted into a snapshot (default 10,000). */
  snapshotEvery?: number;
  /** Told about a failed write (the cluster keeps serving; the folder then lags behind). */
  warn: (message: string) => void;
}

type Pending = { readonly change: revisions.Change } | { readonly drop: string; readonly rev: number };

/** What the writer needs of the store: its objects and revision, for snapshots. */
export interface StoreView {
  readonly revision: number;
  dump(): revisions.StoredEntry[];
}

export class JournalWriter {
  private fd: number;
  private seq: number;
  private pending: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | undefined;
  private dirty = false;
  private records = 0;
  private job: snapshots.SnapshotJob | undefined;
  private stepping: NodeJS.Immediate | undefined;
  private failed = false;
  private closed = false;
  private readonly flushMs: number;
  private readonly snapshotEvery: number;
  private readonly onExit = (): void => this.flush();

  /** Opens journal `seq` (a new file) in `dir`. */
  constructor(
    private readonly dir: string,
    seq: number,
    private readonly store: StoreView,
    private readonly options: JournalOptions,
  ) {
    this.flushMs = options.flushMs ?? 5;
    this.snapshotEvery = options.snapshotEvery ?? 10_000;
    this.seq = seq;
    this.fd = openJournal(dir, seq);
    process.on('exit', this.onExit);
  }

  /** Queues a change of the store (a store listener: called on the request path). */
  written(change: revisions.Change): void {
    this.queue({ change });
  }

  /** Queues a dropped storage. */
  dropped(storage: string): void {
    this.queue({ drop: storage, rev: this.store.revision });
  }

  private queue(entry: Pending): void {
    if (this.closed) return;
    this.pending.push(entry);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, this.flushMs);
  }

  /** Appends the queued changes now and asks for them to reach the disk. */
  flush(): void {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    let text = '';
    for (const p of batch) text += line(p);
    try {
      fs.writeSync(this.fd, text);
    } catch (err) {
      this.fail(err);
      return;
    }
    this.records += batch.length;
    this.requestSync();
    if (this.records >= this.snapshotEvery && !this.job) this.rotate();
  }

  private requestSync(): void {
    if (this.syncing) {
      this.dirty = true;
      return;
    }
    const fd = this.fd;
    this.syncing = new Promise<void>((resolve) => {
      fs.fdatasync(fd, (err) => {
        if (err && !this.closed) this.fail(err);
        resolve();
      });
    }).then(() => {
      this.syncing = undefined;
      if (this.dirty && !this.closed) {
        this.dirty = false;
        this.requestSync();
      }
    });
  }

  /** Closes the journal for a new one and snapshots the store at this moment, in slices. */
  private rotate(): void {
    try {
      fs.fdatasyncSync(this.fd);
      fs.closeSync(this.fd);
      this.seq += 1;
      this.fd = openJournal(this.dir, this.seq);
      this.records = 0;
      this.job = new snapshots.SnapshotJob(this.dir, this.store.revision, this.seq, this.store.dump());
    } catch (err) {
      this.fail(err);
      return;
    }
    const step = (): void => {
      this.stepping = undefined;
      try {
        if (this.job?.step() === false) this.stepping = setImmediate(step);
        else this.job = undefined;
      } catch (err) {
        this.job?.abandon();
        this.job = undefined;
        this.fail(err);
      }
    };
    this.stepping = setImmediate(step);
  }

  private fail(err: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.options.warn(`cannot write the state folder ${this.dir}: ${err instanceof Error ? err.message : String(err)}; later writes may not be kept`);
  }

  /** Writes everything queued, finishes a snapshot in progress, and closes the journal (D-PERSIST-302). */
  async close(): Promise<void> {
    if (this.closed) return;
    process.off('exit', this.onExit);
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.flush();
    this.closed = true;
    if (this.stepping) clearImmediate(this.stepping);
    this.stepping = undefined;
    await this.syncing;
    try {
      this.job?.finish();
      fs.fdatasyncSync(this.fd);
    } catch (err) {
      this.fail(err);
    } finally {
      this.job = undefined;
      fs.closeSync(this.fd);
    }
  }
}

/** Creates journal `seq` with its header, durable before anything is appended. */
function openJournal(dir: string, seq: number): number {
  const fd = fs.openSync(path.join(dir, format.journalName(seq)), 'wx', 0o600);
  fs.writeSync(fd, format.journalHeader(seq));
  fs.fdatasyncSync(fd);
  snapshots.syncFolder(dir);
  return fd;
}

function line(p: Pending): string {
  if ('drop' in p) return `${JSON.stringify({ r: p.rev, drop: p.drop })}\n`;
  const c = p.change;
  return c.type === 'DELETED'
    ? `${JSON.stringify({ r: c.rev, s: c.storage, k: c.key })}\n`
    : `${JSON.stringify({ r: c.rev, s: c.storage, k: c.key, o: c.object })}\n`;
}
