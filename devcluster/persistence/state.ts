/**
 * A devcluster's state folder as a whole (D-PERSIST-301..307): what `DevCluster` calls to open one
 * at start, keep it up to date while it runs, close it at stop, and reset it.
 *
 * Opening takes the folder's lock, reads the snapshot and journals, and at once writes a new
 * snapshot of what it read with a fresh journal after it, so the run starts from one compact,
 * well-formed file whatever the previous run left (a torn line, many journals). The credentials —
 * the CA and the admin's token — are kept beside the objects, so a kubeconfig written by the
 * previous run keeps working when the port is the same (D-PERSIST-303).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as json from '../json.js';
import type * as revisions from '../store/revisions.js';
import * as format from './format.js';
import * as journal from './journal.js';
import * as loading from './loading.js';
import * as lock from './lock.js';
import * as snapshots from './snapshots.js';

/** What is kept of the cluster's identity besides its objects. */
export interface Credentials {
  readonly adminToken: string;
  readonly adminUid: string;
  /** The CA (PEM) of a TLS cluster. */
  readonly ca?: { readonly certPem: string; readonly keyPem: string };
}

export interface OpenOptions extends Omit<journal.JournalOptions, 'warn'> {
  warn: (message: string) => void;
}

/** An open state folder. */
export class StateFolder {
  private writer: journal.JournalWriter | undefined;
  private detach: (() => void) | undefined;
  private released = false;
  /** A process that exits without `close()` frees the folder on its way out (after the journal's own flush). */
  private readonly onExit = (): void => this.held.release();

  private constructor(
    readonly dir: string,
    /** The state read at open. */
    readonly loaded: loading.LoadedState,
    /** The credentials read at open, if the folder had any. */
    readonly credentials: Credentials | undefined,
    private readonly held: lock.Lock,
    private readonly options: OpenOptions,
  ) {}

  /**
   * Opens `dir` (created if missing): locks it, reads it and rewrites it as one snapshot.
   *
   * @throws format.StateLockedError, format.StateVersionError, format.StateCorruptError
   */
  static open(dir: string, options: OpenOptions): StateFolder {
    const absolute = path.resolve(dir);
    fs.mkdirSync(absolute, { recursive: true });
    const held = lock.acquire(absolute);
    try {
      const loaded = loading.load(absolute);
      const credentials = readCredentials(absolute);
      if (loaded.torn) options.warn(`state folder ${absolute}: ignored the last line of ${loaded.torn.file}, cut short when the previous run stopped`);
      fs.rmSync(path.join(absolute, format.SNAPSHOT_TMP), { force: true });
      return new StateFolder(absolute, loaded, credentials, held, options);
    } catch (err) {
      held.release();
      throw err;
    }
  }

  /** Whether the folder held objects from an earlier run. */
  get restoring(): boolean {
    return this.loaded.found && (this.loaded.revision > 0 || this.loaded.tables.size > 0);
  }

  /**
   * Starts keeping `store` in the folder: writes the snapshot of the loaded state, opens the next
   * journal and subscribes to every later write. Call it after the restored objects were loaded
   * into the store and announced, so only new writes are journaled.
   */
  attach(store: revisions.Store): void {
    const seq = this.loaded.nextJournal;
    this.writer = new journal.JournalWriter(this.dir, seq, store, this.options);
    const job = new snapshots.SnapshotJob(this.dir, this.loaded.revision, seq, [...loading.entries(this.loaded)]);
    job.finish();
    const writer = this.writer;
    const offChanges = store.subscribe((change) => writer.written(change));
    const offDrops = store.subscribeDrops((storage) => writer.dropped(storage));
    process.on('exit', this.onExit);
    this.detach = () => {
      offChanges();
      offDrops();
      process.off('exit', this.onExit);
    };
  }

  /** Keeps the credentials (file mode 0600: it holds the CA's key and the admin's token). */
  saveCredentials(credentials: Credentials): void {
    const file = path.join(this.dir, format.CREDENTIALS);
    const tmp = `${file}.tmp`;
    const body = { format: format.FORMAT, version: format.VERSION, file: 'credentials', ...credentials };
    fs.writeFileSync(tmp, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
    const fd = fs.openSync(tmp, 'r');
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(tmp, file);
    snapshots.syncFolder(this.dir);
  }

  /** Writes what is queued, and releases the folder. */
  async close(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.detach?.();
    try {
      await this.writer?.close();
    } finally {
      this.held.release();
    }
  }
}

function readCredentials(dir: string): Credentials | undefined {
  const file = path.join(dir, format.CREDENTIALS);
  if (!fs.existsSync(file)) return undefined;
  const value = format.parseLine(fs.readFileSync(file, 'utf8'));
  if (!value || value['format'] !== format.FORMAT) throw new format.StateCorruptError(dir, format.CREDENTIALS, 1, 'not a credentials file');
  if (value['version'] !== format.VERSION) throw new format.StateVersionError(dir, format.CREDENTIALS, value['version']);
  const { adminToken, adminUid, ca } = value;
  if (typeof adminToken !== 'string' || typeof adminUid !== 'string') throw new format.StateCorruptError(dir, format.CREDENTIALS, 1, 'no admin token');
  if (ca === undefined) return { adminToken, adminUid };
  if (!json.isObject(ca) || typeof ca['certPem'] !== 'string' || typeof ca['keyPem'] !== 'string') {
    throw new format.StateCorruptError(dir, format.CREDENTIALS, 1, 'a CA without its certificate or key');
  }
  return { adminToken, adminUid, ca: { certPem: ca['certPem'], keyPem: ca['keyPem'] } };
}

/**
 * Deletes the state of `dir` (D-PERSIST-307): the files a devcluster writes there, and the folder
 * if nothing else is left in it. Other files are kept. A folder in use is refused.
 *
 * @throws format.StateLockedError when a running devcluster holds the folder.
 */
export function reset(dir: string): void {
  const absolute = path.resolve(dir);
  if (!fs.existsSync(absolute)) return;
  const pid = lock.holder(absolute);
  if (pid !== undefined) throw new format.StateLockedError(absolute, pid);
  for (const name of fs.readdirSync(absolute)) {
    if (format.isStateFile(name) || name === `${format.CREDENTIALS}.tmp`) fs.rmSync(path.join(absolute, name), { force: true });
  }
  if (fs.readdirSync(absolute).length === 0) fs.rmdirSync(absolute);
}
