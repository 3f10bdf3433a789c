/**
 * Writing: the generator's only stage with side effects, run after every other stage succeeded.
 *
 * A plan (files as texts, plus directories whose content is replaced wholesale) is first written
 * to a staging directory; only when all of it is there does it move into place:
 * - a project directory that does not exist yet is the staging directory, renamed;
 * - in an existing project, each replaced directory (`src/generated/`) is swapped for its staged
 *   copy, so files of kinds that disappeared go too, and every other file is moved over its old
 *   version; files listed for removal (generated files that no longer apply) are deleted; any
 *   other file not in the plan is left alone.
 * The staging directory lives beside the project (or inside it, for existing projects), on the
 * same file system, so the final moves are renames. When it cannot be made (the place is below a
 * file, read-only, not writable, or a file system such as /proc that refuses new directories), the
 * run is refused in one line naming the place and the problem, and the parent directories created
 * on the way are removed again: nothing is written.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as projects from './projects.js';
import type * as scaffolding from './scaffolding.js';

/** What to write. */
export interface WritePlan {
  /** The project directory (created if absent). */
  readonly root: string;
  /** Files relative to the root (`/`-separated). */
  readonly files: readonly scaffolding.PlannedFile[];
  /** Directories (relative to the root) whose previous content is removed: every file in them comes from the plan. */
  readonly replaceDirs: readonly string[];
  /** Files (relative to the root) to delete if they exist; never a file of `files`. */
  readonly removeFiles?: readonly string[];
}

/**
 * Writes a plan; returns the written paths, relative to the root, sorted.
 *
 * @throws projects.ProjectError `output-not-writable` when the staging directory cannot be made.
 */
export function applyPlan(plan: WritePlan): string[] {
  const root = path.resolve(plan.root);
  const exists = fs.existsSync(root);
  const parent = exists ? root : path.dirname(root);
  const staging = makeStaging(root, parent, exists);
  try {
    for (const file of plan.files) {
      const target = path.join(staging, ...file.path.split('/'));
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, file.text);
    }
    if (!exists) {
      fs.renameSync(staging, root);
    } else {
      for (const [index, dir] of plan.replaceDirs.entries()) {
        const staged = path.join(staging, ...dir.split('/'));
        const target = path.join(root, ...dir.split('/'));
        if (!fs.existsSync(staged)) fs.mkdirSync(staged, { recursive: true });
        fs.mkdirSync(path.dirname(target), { recursive: true });
        if (fs.existsSync(target)) fs.renameSync(target, path.join(staging, `.replaced-${index}`));
        fs.renameSync(staged, target);
      }
      const replaced = plan.replaceDirs.map((dir) => `${dir}/`);
      for (const file of plan.files) {
        if (replaced.some((dir) => file.path.startsWith(dir))) continue;
        const target = path.join(root, ...file.path.split('/'));
        fs.mkdirSync(path.dirname(target), { recursive: true });
        fs.renameSync(path.join(staging, ...file.path.split('/')), target);
      }
      for (const file of plan.removeFiles ?? []) {
        if (plan.files.some((planned) => planned.path === file)) continue;
        fs.rmSync(path.join(root, ...file.split('/')), { force: true });
      }
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return plan.files.map((file) => file.path).sort();
}

/** Creates the parent directories and the staging directory, or undoes what it created and refuses. */
function makeStaging(root: string, parent: string, exists: boolean): string {
  let created: string | undefined;
  try {
    // One level at a time: a recursive mkdir loops forever where the file system answers ENOENT
    // for a directory whose parent exists (/proc).
    for (const dir of missingDirs(parent)) {
      fs.mkdirSync(dir);
      created ??= dir;
    }
    return fs.mkdtempSync(path.join(parent, exists ? '.kopf-gen-staging-' : `.${path.basename(root)}.kopf-gen-`));
  } catch (error) {
    if (created !== undefined) fs.rmSync(created, { recursive: true, force: true });
    const what = exists ? 'write the project at' : 'create the project at';
    throw new projects.ProjectError('output-not-writable', `cannot ${what} ${root}: ${projects.unwritableReason(root, error)}`, { cause: error });
  }
}

/** The directories to create for `dir` to exist, outermost first. */
function missingDirs(dir: string): string[] {
  const missing: string[] = [];
  for (let current = dir; !fs.existsSync(current); current = path.dirname(current)) {
    missing.unshift(current);
    if (path.dirname(current) === current) break;
  }
  return missing;
}
