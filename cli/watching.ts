/**
 * Watching a project's files for the dev loop of `kopf-gen run --watch`: one recursive watch per
 * source folder (`src/`), one plain watch per folder of a file the entry reaches from elsewhere,
 * and a short quiet period so that one save — which editors turn into several events (write,
 * rename, chmod) — becomes one batch of changed paths.
 *
 * Only the file system's notifications are used (no polling); node_modules, `.git`, `.kopf-gen`
 * and `dist` are never reported, whatever folder they are found in.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** How long a batch waits for the events of the same save, in milliseconds. */
export const QUIET_MS = 25;

/** Path segments whose changes never matter to the dev loop. */
const IGNORED = /(^|[\\/])(node_modules|\.git|\.kopf-gen|dist)([\\/]|$)/;

/** What to watch: folders with everything under them, and single files (their folder is watched). */
export interface WatchTargets {
  readonly trees: readonly string[];
  readonly files: readonly string[];
}

/** Watches folders and files, and hands batches of changed absolute paths to `onChange`. */
export class SourceWatcher {
  private readonly watchers = new Map<string, fs.FSWatcher>();
  private files = new Set<string>();
  private trees: string[] = [];
  private pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly onChange: (paths: readonly string[]) => void) {}

  /** Watches these targets from now on (in addition to nothing: the previous set is replaced). */
  update(targets: WatchTargets): void {
    if (this.closed) return;
    this.trees = targets.trees.map((tree) => path.resolve(tree)).filter((tree) => isDirectory(tree));
    this.files = new Set(targets.files.map((file) => path.resolve(file)));
    const wanted = new Map<string, boolean>();
    for (const tree of this.trees) wanted.set(tree, true);
    for (const file of this.files) {
      const folder = path.dirname(file);
      if (!this.underTree(file) && !wanted.has(folder)) wanted.set(folder, false);
    }
    for (const [key, watcher] of this.watchers) {
      const [folder, recursive] = [key.slice(2), key.startsWith('r:')];
      if (wanted.get(folder) !== recursive) {
        watcher.close();
        this.watchers.delete(key);
      }
    }
    for (const [folder, recursive] of wanted) this.watch(folder, recursive);
  }

  /** What is watched, for people: `src/, crds/ and 2 more files` (relative to `cwd`). */
  summary(cwd: string): string {
    const trees = this.trees.map((tree) => `${path.relative(cwd, tree) || '.'}/`);
    const files = [...this.files].filter((file) => !this.underTree(file) && fs.existsSync(file)).length;
    if (trees.length === 0) return `${files} file${files === 1 ? '' : 's'}`;
    const more = files > 0 ? ` and ${files} more file${files === 1 ? '' : 's'}` : '';
    return `${trees.slice(0, -1).join(', ')}${trees.length > 1 ? `${more ? ', ' : ' and '}` : ''}${trees.at(-1)}${more}`;
  }

  /** Stops watching; no batch is reported after this. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }

  private watch(folder: string, recursive: boolean): void {
    const key = `${recursive ? 'r' : 'f'}:${folder}`;
    if (this.watchers.has(key) || !isDirectory(folder)) return;
    const watcher = fs.watch(folder, { recursive, persistent: false }, (_event, name) => {
      if (name) this.noticed(path.join(folder, name.toString()), recursive);
    });
    // A folder removed under the watcher ends its watch; the next update() watches it again.
    watcher.on('error', () => {
      watcher.close();
      this.watchers.delete(key);
    });
    this.watchers.set(key, watcher);
  }

  private noticed(file: string, recursive: boolean): void {
    if (this.closed || IGNORED.test(file)) return;
    if (!recursive && !this.files.has(file)) return;
    this.pending.add(file);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(), QUIET_MS);
  }

  private flush(): void {
    const paths = [...this.pending].sort();
    this.pending.clear();
    if (!this.closed && paths.length > 0) this.onChange(paths);
  }

  private underTree(file: string): boolean {
    return this.trees.some((tree) => file.startsWith(tree + path.sep));
  }
}

function isDirectory(file: string): boolean {
  try {
    return fs.statSync(file).isDirectory();
  } catch {
    return false;
  }
}
