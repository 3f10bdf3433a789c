/**
 * Containment: where a project-relative path really is, and the refusal to write outside the project.
 *
 * A project may hold symbolic links — `deploy/` linked to a shared folder, `src/handlers/` to
 * another checkout, a generated file linked elsewhere. Writing `deploy/rbac.yaml` through such a
 * link would write (or rename, or delete) a file outside the project, which a generator run must
 * never do. So every path the writer touches is first resolved here, one component at a time and
 * following links as the kernel would (`..` after a link goes up from the link's target), and:
 * - a path that stays inside the project (a link from `deploy/` to `ops/deploy/`) is written at
 *   the place it resolves to, so the link stays and its target gets the file;
 * - a path that leads outside the project's real directory, or through a chain of links too long
 *   to follow, is refused with `symlink-escape`, naming the link and where it leads, before
 *   anything is written.
 * Resolution is iterative (a component list and a hop counter), so no layout can make it recurse.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as projects from './projects.js';

/** The most symbolic links one path may pass through (Linux's own bound, beyond which it says ELOOP). */
const MAX_LINK_HOPS = 40;

/** Whether `target` is `dir` or below it (both absolute, resolved). */
export function isInside(dir: string, target: string): boolean {
  const relative = path.relative(dir, target);
  return relative === '' || (!relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative));
}

/**
 * Where a project-relative path (`/`-separated) lands once every symbolic link on the way is
 * followed; the part of it that does not exist yet is appended as it is. `realRoot` is the
 * project's directory with its own links resolved (`fs.realpathSync`).
 *
 * @throws projects.ProjectError `symlink-escape` when it lands outside `realRoot`, or passes
 *   through more than 40 links.
 */
export function resolveInside(realRoot: string, relative: string): string {
  const pending = relative.split('/').filter((part) => part !== '' && part !== '.');
  let current = realRoot;
  let hops = 0;
  /** The first link met among the path's own components, as the user knows it (`deploy`). */
  let firstLink: { readonly shown: string; readonly to: string } | undefined;
  let consumed = 0; // components of `relative` walked so far (before any link was met)
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (firstLink === undefined) consumed += 1;
    if (part === '..') {
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, part);
    let stats: fs.Stats | undefined;
    try {
      stats = fs.lstatSync(next);
    } catch {
      stats = undefined;
    }
    if (stats === undefined) {
      // The rest does not exist yet: it will be created as plain directories and files.
      current = path.join(next, ...pending);
      break;
    }
    if (!stats.isSymbolicLink()) {
      current = next;
      continue;
    }
    hops += 1;
    const link = fs.readlinkSync(next);
    const target = path.resolve(current, link);
    if (firstLink === undefined) firstLink = { shown: relative.split('/').slice(0, consumed).join('/'), to: link };
    if (hops > MAX_LINK_HOPS) {
      throw new projects.ProjectError(
        'symlink-escape',
        `cannot write ${relative}: ${firstLink.shown} starts a chain of more than ${MAX_LINK_HOPS} symbolic links`,
      );
    }
    // Walk the link's target from the file system's root: its own components may be links too.
    pending.unshift(...target.split(path.sep).filter((each) => each !== ''));
    current = path.parse(target).root;
  }
  if (!isInside(realRoot, current)) {
    const through = firstLink === undefined ? '' : `: ${firstLink.shown} is a symbolic link to ${firstLink.to}`;
    throw new projects.ProjectError(
      'symlink-escape',
      `refusing to write ${relative} at ${current}, outside the project ${realRoot}${through}; kopf-gen writes only inside the project (replace the link with a directory or file of the project)`,
    );
  }
  return current;
}
