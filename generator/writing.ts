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
 * same file system, so the final moves are renames.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
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

/** Writes a plan; returns the written paths, relative to the root, sorted. */
export function applyPlan(plan: WritePlan): string[] {
  const root = path.resolve(plan.root);
  const exists = fs.existsSync(root);
  const parent = exists ? root : path.dirname(root);
  fs.mkdirSync(parent, { recursive: true });
  const staging = fs.mkdtempSync(path.join(parent, exists ? '.kopf-gen-staging-' : `.${path.basename(root)}.kopf-gen-`));
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
