/**
 * Writing: the generator's only stage with side effects, run after every other stage succeeded.
 *
 * A plan (files as texts, plus directories whose content is replaced wholesale) is first written
 * to a staging directory; only when all of it is there does it move into place:
 * - a project directory that does not exist yet is built in the staging directory, then renamed;
 * - in an existing project, each replaced directory (`src/generated/`) is swapped for its staged
 *   copy, so files of kinds that disappeared go too, and every other file is moved over its old
 *   version; files listed for removal (generated files that no longer apply) are deleted; any
 *   other file not in the plan is left alone.
 * The staging directory lives beside the project (or inside it, for existing projects), on the
 * same file system, so the final moves are renames. When it cannot be made (the place is below a
 * file, read-only, not writable, or a file system such as /proc that refuses new directories), the
 * run is refused in one line naming the place and the problem, and the parent directories created
 * on the way are removed again: nothing is written. Likewise, in an existing project no path is
 * written, moved or deleted through a symbolic link that leads outside the project
 * (containment.ts): such a plan is refused before the staging directory is made.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as containment from './containment.js';
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
 * In an existing project every path is first resolved through the symbolic links on its way
 * (containment.ts): one that leads outside the project refuses the whole run before anything is
 * written. A new project is written into a fresh directory, so nothing in it is a link; its
 * directories and files get the modes `mkdir` and `open` give by default (0777 and 0666, less the
 * process's umask), like any file the user creates.
 *
 * @throws projects.ProjectError `output-not-writable` when the staging directory cannot be made,
 *   `symlink-escape` when a path of the plan leads outside the project through a symbolic link.
 */
export function applyPlan(plan: WritePlan): string[] {
  const root = path.resolve(plan.root);
  if (!fs.existsSync(root)) {
    const container = makeStaging(root, path.dirname(root), false);
    try {
      const stage = path.join(container, 'project');
      fs.mkdirSync(stage);
      writeFiles(stage, plan.files);
      fs.renameSync(stage, root);
    } finally {
      fs.rmSync(container, { recursive: true, force: true });
    }
    return plan.files.map((file) => file.path).sort();
  }
  const realRoot = fs.realpathSync(root);
  const replaced = plan.replaceDirs.map((dir) => `${dir}/`);
  const places = {
    dirs: plan.replaceDirs.map((dir) => containment.resolveInside(realRoot, dir)),
    files: plan.files
      .filter((file) => !replaced.some((dir) => file.path.startsWith(dir)))
      .map((file) => ({ file, target: containment.resolveInside(realRoot, file.path) })),
    removed: (plan.removeFiles ?? [])
      .filter((file) => !plan.files.some((planned) => planned.path === file))
      .map((file) => containment.resolveInside(realRoot, file)),
  };
  const container = makeStaging(root, realRoot, true);
  try {
    const stage = path.join(container, 'project');
    fs.mkdirSync(stage);
    writeFiles(stage, plan.files);
    for (const [index, dir] of plan.replaceDirs.entries()) {
      const staged = path.join(stage, ...dir.split('/'));
      const target = places.dirs[index]!;
      if (!fs.existsSync(staged)) fs.mkdirSync(staged, { recursive: true });
      fs.mkdirSync(path.dirname(target), { recursive: true });
      if (fs.existsSync(target)) fs.renameSync(target, path.join(container, `.replaced-${index}`));
      fs.renameSync(staged, target);
    }
    for (const { file, target } of places.files) {
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.renameSync(path.join(stage, ...file.path.split('/')), target);
    }
    for (const target of places.removed) fs.rmSync(target, { force: true });
  } finally {
    fs.rmSync(container, { recursive: true, force: true });
  }
  return plan.files.map((file) => file.path).sort();
}

/** Writes the files of a plan below a (fresh) staging directory. */
function writeFiles(stage: string, files: readonly scaffolding.PlannedFile[]): void {
  for (const file of files) {
    const target = path.join(stage, ...file.path.split('/'));
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, file.text);
  }
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
