/**
 * The lock of a state folder (D-PERSIST-305): two devclusters writing the same journal would
 * interleave their revisions, so a folder belongs to one running devcluster at a time. The lock is
 * a file created exclusively, holding the owner's pid; a lock whose pid no longer runs (the owner
 * was killed) is stale and taken over.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as format from './format.js';

/** A held lock; `release()` removes the file if it is still ours. */
export interface Lock {
  release(): void;
}

/** Whether a process with this pid runs (one we may not signal still runs). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid written in a lock file, or undefined when it holds none (a half-written lock). */
function ownerOf(file: string): number | undefined {
  try {
    const pid = Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the lock of `dir` (which must exist).
 *
 * @throws format.StateLockedError when a running process holds it — this one included, for a
 * second devcluster on the same folder.
 */
export function acquire(dir: string): Lock {
  const file = path.join(dir, format.LOCK);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(file, 'wx', 0o600);
      fs.writeSync(fd, `${process.pid}\n`);
      fs.closeSync(fd);
      return {
        release() {
          if (ownerOf(file) === process.pid) fs.rmSync(file, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const pid = ownerOf(file);
    if (pid !== undefined && alive(pid)) throw new format.StateLockedError(dir, pid);
    fs.rmSync(file, { force: true }); // stale: its owner is gone
  }
  throw new format.StateLockedError(dir, ownerOf(file) ?? 0);
}

/** The pid of a running holder of `dir`'s lock, or undefined when it is free or stale. */
export function holder(dir: string): number | undefined {
  const pid = ownerOf(path.join(dir, format.LOCK));
  return pid !== undefined && alive(pid) ? pid : undefined;
}
