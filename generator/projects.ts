/**
 * Projects: the layout and the configuration file of a generated project, and the errors about
 * projects (as opposed to errors about CRDs, which validating.ts raises).
 *
 * Everything the generator needs to know about a project on disk is here: where the CRDs, the
 * generated code, the handlers and the tests live, and how `kopf-gen.json` looks. The library
 * (index.ts) reads a project with `readConfig`, the scaffolding (scaffolding.ts) renders it from
 * `templates/kopf-gen.json.hbs`, and both refer to the paths below instead of spelling them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as schemas from './schemas.js';

/** The configuration file of a generated project. */
export const CONFIG_FILE = 'kopf-gen.json';
/** Where the input CRDs are kept. */
export const CRDS_DIR = 'crds';
/** Generated code: rewritten completely by every `kopf-gen generate`. */
export const GENERATED_DIR = 'src/generated';
/** User-owned handler modules: stubs are written once, never modified. */
export const HANDLERS_DIR = 'src/handlers';
/** User-owned tests. */
export const TESTS_DIR = 'test';
/** User-owned sample objects, one per kind: written once, never modified. */
export const SAMPLES_DIR = 'samples';
/** The record of the last generation (fields per version, the index's exports), for change summaries. */
export const MANIFEST_FILE = `${GENERATED_DIR}/manifest.json`;
/** The generated RBAC manifest. */
export const RBAC_FILE = 'deploy/rbac.yaml';
/** The generated webhook manifests (while the user's code registers admission handlers). */
export const WEBHOOKS_FILE = 'deploy/webhooks.yaml';
/** The generated patches of the CRDs the code converts (while it registers converters). */
export const CONVERSION_FILE = 'deploy/conversion.yaml';
/**
 * The rules the operator needs in development only (managed conversion patches the CRDs it
 * converts), for the generated tests to grant its service account: under test/, never deploy/.
 */
export const DEVELOPMENT_RBAC_FILE = 'test/rbac-development.yaml';

/**
 * Whether the generator owns a file: every generation may rewrite (or delete) it. Everything else
 * in a project — handlers, tests, src/main.ts, package.json, the Deployment, the README, crds/,
 * any file of the user's — is written at most once, when it does not exist.
 */
export function isGeneratedFile(file: string): boolean {
  return (
    file.startsWith(`${GENERATED_DIR}/`) ||
    file === CONFIG_FILE ||
    file === RBAC_FILE ||
    file === WEBHOOKS_FILE ||
    file === CONVERSION_FILE ||
    file === DEVELOPMENT_RBAC_FILE
  );
}

/** Why the generator refused to work on a project or an output directory. */
export type ProjectErrorCode =
  | 'output-not-empty'
  | 'missing-input'
  | 'not-a-project'
  | 'invalid-project'
  | 'duplicate-crd'
  | 'no-input'
  | 'invalid-namespace'
  | 'invalid-lease'
  | 'invalid-shards'
  | 'invalid-handlers'
  | 'would-overwrite'
  | 'not-a-file'
  | 'no-output'
  | 'output-not-writable'
  | 'symlink-escape'
  | 'input-too-large';

/** A problem with the project or the command's inputs (not with a CRD's content). */
export class ProjectError extends Error {
  override readonly name = 'ProjectError';

  constructor(
    readonly code: ProjectErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The content of `kopf-gen.json`. */
export interface ProjectConfig {
  /** The npm package name of the project. */
  readonly name: string;
  /** The kopf-gen version that last generated the project. */
  readonly generatorVersion: string;
  /** The CRD files (relative to the project) the last generation read. */
  readonly crds: readonly string[];
  /** The namespaces the operator serves; empty: all namespaces (`"namespaces"` absent or `[]`). */
  readonly namespaces: readonly string[];
  /**
   * The Lease of leader election (`--lease <name>` in the Deployment), which deploy/rbac.yaml lets
   * the operator use in its own namespace; `undefined` (`"lease"` absent or null): none.
   */
  readonly lease?: string;
  /**
   * The ring of sharding (`--shards <ring>` in the Deployment, docs/sharding.md), for which
   * deploy/rbac.yaml lets the operator hold and read the replicas' Leases in its own namespace and
   * label the objects it serves; `undefined` (`"shards"` absent or null): no sharding.
   */
  readonly shards?: string;
  /**
   * The kind of handler stub written for a kind that has none (`init --handlers`): Kopf's cause
   * handlers (`"cause"`, the default: `"handlers"` absent or null) or one reconcile handler.
   */
  readonly handlers?: HandlerStyle;
}

/**
 * The kinds of handler stubs: `cause` — Kopf's create/update/delete/resume handlers, one per
 * change; `reconcile` — one level-based `on.reconcile` handler that owns a Deployment.
 */
export const HANDLER_STYLES = ['cause', 'reconcile'] as const;
export type HandlerStyle = (typeof HANDLER_STYLES)[number];
/** The stubs of a project that names none. */
export const DEFAULT_HANDLER_STYLE: HandlerStyle = 'cause';

/**
 * Checks a kind of handler stubs (`--handlers`, `"handlers"` in kopf-gen.json).
 *
 * @throws ProjectError `invalid-handlers`, naming the value and the choices.
 */
export function checkHandlerStyle(value: string): HandlerStyle {
  const found = HANDLER_STYLES.find((style) => style === value);
  if (found !== undefined) return found;
  throw new ProjectError(
    'invalid-handlers',
    `invalid kind of handler stubs ${JSON.stringify(value)}: the choices are "cause" (Kopf's create/update/delete/resume handlers, the default) and "reconcile" (one level-based on.reconcile handler per kind)`,
  );
}

/**
 * Reads and checks `kopf-gen.json` of a project directory.
 *
 * @throws ProjectError `not-a-project` when the file is absent, `invalid-project` when it is not
 *   the expected JSON.
 */
export function readConfig(projectDir: string): ProjectConfig {
  const file = path.join(projectDir, CONFIG_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new ProjectError('not-a-project', `${projectDir} is not a kopf-gen project: ${CONFIG_FILE} is missing (create one with \`kopf-gen init\`)`, {
      cause: error,
    });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ProjectError('invalid-project', `${file}: not valid JSON (${error instanceof Error ? error.message : String(error)})`, { cause: error });
  }
  if (!schemas.isRecord(data)) throw new ProjectError('invalid-project', `${file}: expected a JSON object`);
  const name = schemas.own(data, 'name');
  const generatorVersion = schemas.own(data, 'generatorVersion');
  const crds = schemas.own(data, 'crds');
  if (typeof name !== 'string' || name === '') throw new ProjectError('invalid-project', `${file}: "name" must be a non-empty string`);
  if (typeof generatorVersion !== 'string') throw new ProjectError('invalid-project', `${file}: "generatorVersion" must be a string`);
  if (!Array.isArray(crds) || !crds.every((entry) => typeof entry === 'string')) {
    throw new ProjectError('invalid-project', `${file}: "crds" must be a list of file paths`);
  }
  const namespaces = schemas.own(data, 'namespaces') ?? [];
  if (!Array.isArray(namespaces) || !namespaces.every((entry) => typeof entry === 'string')) {
    throw new ProjectError('invalid-project', `${file}: "namespaces" must be a list of namespace names`);
  }
  const lease = schemas.own(data, 'lease') ?? undefined;
  if (lease !== undefined && typeof lease !== 'string') throw new ProjectError('invalid-project', `${file}: "lease" must be the name of a Lease, or null`);
  const shards = schemas.own(data, 'shards') ?? undefined;
  if (shards !== undefined && typeof shards !== 'string') throw new ProjectError('invalid-project', `${file}: "shards" must be the name of a ring, or null`);
  const handlers = schemas.own(data, 'handlers') ?? undefined;
  if (handlers !== undefined && typeof handlers !== 'string') {
    throw new ProjectError('invalid-project', `${file}: "handlers" must be one of ${HANDLER_STYLES.map((style) => JSON.stringify(style)).join(', ')}, or null`);
  }
  try {
    return {
      name,
      generatorVersion,
      crds,
      namespaces: checkNamespaces(namespaces),
      ...(lease !== undefined ? { lease: checkLease(lease) } : {}),
      ...(shards !== undefined ? { shards: checkRing(shards) } : {}),
      ...(handlers !== undefined ? { handlers: checkHandlerStyle(handlers) } : {}),
    };
  } catch (error) {
    throw new ProjectError('invalid-project', `${file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** A namespace name: a DNS-1123 label. */
const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Checks the namespaces an operator is created for, and removes repetitions (keeping the order).
 * Exact names only: the RBAC binds the operator's role in each of them, which a pattern cannot say.
 *
 * @throws ProjectError `invalid-namespace`, naming the first bad value.
 */
export function checkNamespaces(names: readonly string[]): string[] {
  for (const name of names) {
    if (NAMESPACE_NAME.test(name) && name.length <= 63) continue;
    const why = /[*?[\]]/.test(name)
      ? 'patterns are not supported, give each namespace by its exact name'
      : 'a namespace name is a DNS-1123 label: at most 63 characters, lower-case letters, digits and "-", starting and ending with a letter or digit';
    throw new ProjectError('invalid-namespace', `invalid namespace ${JSON.stringify(name)}: ${why}`);
  }
  return [...new Set(names)];
}

/** A Lease name: a DNS-1123 subdomain. */
const LEASE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Checks the name of the Lease an operator elects its leader on (`--lease`).
 *
 * @throws ProjectError `invalid-lease`, naming the value.
 */
export function checkLease(name: string): string {
  if (LEASE_NAME.test(name) && name.length <= 253) return name;
  throw new ProjectError(
    'invalid-lease',
    `invalid Lease name ${JSON.stringify(name)}: a Lease name is a DNS-1123 subdomain: at most 253 characters, lower-case letters, digits, "-" and ".", starting and ending with a letter or digit`,
  );
}

/**
 * Checks the name of a sharding ring (`"shards"`, `--shards`). It is the name part of the owner
 * label `shard.kopf-gen.dev/<ring>` and the first part of each replica's Lease name
 * `<ring>-<identity>`, so it must be both: a DNS-1123 label (the stricter of the two).
 *
 * @throws ProjectError `invalid-shards`, naming the value.
 */
export function checkRing(name: string): string {
  if (NAMESPACE_NAME.test(name) && name.length <= 63) return name;
  throw new ProjectError(
    'invalid-shards',
    `invalid ring name ${JSON.stringify(name)}: a ring names a label (shard.kopf-gen.dev/<ring>) and the replicas' Leases (<ring>-<identity>), so it is a DNS-1123 label: at most 63 characters, lower-case letters, digits and "-", starting and ending with a letter or digit`,
  );
}

/** The sections of package.json whose missing entries a regeneration may add. */
const PACKAGE_SECTIONS = ['scripts', 'dependencies', 'devDependencies'] as const;

/** What merging the generated package.json into the user's gave. */
export type PackageMerge =
  /** `text`: the user's package.json with the missing entries added, or undefined when none is missing. */
  { readonly ok: true; readonly text: string | undefined; readonly added: readonly string[] } | { readonly ok: false; readonly reason: string };

/**
 * Adds to the user's package.json the scripts and dependencies the generated project needs and
 * it lacks, changing and dropping nothing (a dependency counts as present in either dependency
 * section, whatever its version). The user's key order and indentation are kept; added entries
 * go at the end of their section. `added` names them (`scripts.generate`, `devDependencies.tsx`).
 */
export function mergePackageJson(userText: string, generatedText: string): PackageMerge {
  let user: unknown;
  try {
    user = JSON.parse(userText);
  } catch (error) {
    return { ok: false, reason: `not valid JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  if (!schemas.isRecord(user)) return { ok: false, reason: 'not a JSON object' };
  const generated = JSON.parse(generatedText) as Record<string, unknown>;
  const merged: Record<string, unknown> = { ...user };
  const added: string[] = [];
  const has = (section: string, key: string): boolean => {
    const entries = merged[section];
    return schemas.isRecord(entries) && Object.hasOwn(entries, key);
  };
  for (const section of PACKAGE_SECTIONS) {
    const wanted = generated[section];
    if (!schemas.isRecord(wanted)) continue;
    const current = merged[section];
    if (current !== undefined && !schemas.isRecord(current)) return { ok: false, reason: `"${section}" is not an object` };
    const entries: Record<string, unknown> = { ...(current ?? {}) };
    for (const [key, value] of Object.entries(wanted)) {
      const present = section === 'scripts' ? has(section, key) : has('dependencies', key) || has('devDependencies', key);
      if (present) continue;
      entries[key] = value;
      added.push(`${section}.${key}`);
    }
    if (added.some((entry) => entry.startsWith(`${section}.`))) merged[section] = entries;
  }
  if (added.length === 0) return { ok: true, text: undefined, added };
  const indent = /^([ \t]+)"/m.exec(userText)?.[1] ?? '  ';
  return { ok: true, text: `${JSON.stringify(merged, null, indent)}\n`, added };
}

/** Turns any text into a valid npm package name (lower case, `-` separated). */
export function packageName(text: string): string {
  const cleaned = text
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+|-+$/g, '');
  return cleaned === '' ? 'operator' : cleaned.slice(0, 214);
}

/** Whether a path is an existing directory with at least one entry. */
export function isNonEmptyDirectory(dir: string): boolean {
  try {
    return fs.readdirSync(dir).length > 0;
  } catch {
    return false;
  }
}

/** Whether a path exists but is not a directory. */
export function isNonDirectory(target: string): boolean {
  try {
    return !fs.statSync(target).isDirectory();
  } catch {
    return false;
  }
}

/** What a path that is not a regular file is, for messages: `a FIFO (named pipe)`, `a directory`, … */
export function fileKind(stats: fs.Stats): string {
  if (stats.isFile()) return 'a regular file';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

/**
 * Why a directory cannot be created or written to, from the error of the attempt: the path it
 * names (`target`, or the nearest existing ancestor that is in the way) and the problem, e.g.
 * `out/x is a file` or `/proc/op: the file system does not allow creating it (ENOENT)`.
 */
export function unwritableReason(target: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const blocker = firstNonDirectory(target);
  if (blocker !== undefined) return `${blocker.path} is ${blocker.kind}`;
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return `permission denied (${code}) at ${nearestExisting(target)}`;
    case 'EROFS':
      return `${nearestExisting(target)} is on a read-only file system (EROFS)`;
    case 'ENOENT':
      return `the file system of ${nearestExisting(target)} does not allow creating directories there (ENOENT)`;
    case 'ENOSPC':
      return `no space left on the device (ENOSPC)`;
    default:
      return code !== undefined ? `${code}: ${firstLine(error)}` : firstLine(error);
  }
}

/**
 * Refuses, before anything is generated, an output directory that cannot be created: one of its
 * ancestors is a file (or another non-directory), or the nearest existing ancestor is not
 * writable. (Places whose refusal only shows when trying, such as /proc, are refused when the
 * write is attempted, by writing.ts, with the same code.)
 *
 * @throws ProjectError `output-not-writable`, naming the path and the problem in one line.
 */
export function checkCreatable(root: string, given: string): void {
  const dangling = danglingLink(root);
  if (dangling !== undefined) {
    throw new ProjectError(
      'output-not-writable',
      `cannot create the project at ${given}: ${dangling.link} is a symbolic link to ${dangling.to}, which does not exist; create that directory or give another --out`,
    );
  }
  const blocker = firstNonDirectory(root);
  if (blocker !== undefined) {
    throw new ProjectError('output-not-writable', `cannot create the project at ${given}: ${blocker.path} is ${blocker.kind}`);
  }
  const existing = nearestExisting(root);
  try {
    fs.accessSync(existing, fs.constants.W_OK | fs.constants.X_OK);
  } catch (error) {
    throw new ProjectError('output-not-writable', `cannot create the project at ${given}: ${unwritableReason(root, error)}`, { cause: error });
  }
}

/**
 * The first symbolic link to nothing on the way to `target` (the path itself or one of its
 * ancestors), with the link's text: creating a project there would fail with a raw `ENOENT` or
 * `ENOTDIR`.
 */
export function danglingLink(target: string): { readonly link: string; readonly to: string } | undefined {
  const chain: string[] = [];
  for (let current = path.resolve(target); ; current = path.dirname(current)) {
    chain.unshift(current);
    if (path.dirname(current) === current) break;
  }
  for (const each of chain) {
    let stats: fs.Stats | undefined;
    try {
      stats = fs.lstatSync(each);
    } catch {
      return undefined;
    }
    if (stats.isSymbolicLink() && !fs.existsSync(each)) return { link: each, to: fs.readlinkSync(each) };
  }
  return undefined;
}

/** The nearest ancestor of `target` (or `target` itself) that exists. */
function nearestExisting(target: string): string {
  let current = path.resolve(target);
  while (!fs.existsSync(current) && path.dirname(current) !== current) current = path.dirname(current);
  return current;
}

/** The nearest existing proper ancestor of `target`, when it is not a directory (it blocks creating `target`). */
function firstNonDirectory(target: string): { path: string; kind: string } | undefined {
  const resolved = path.resolve(target);
  const existing = nearestExisting(path.dirname(resolved));
  let stats: fs.Stats;
  try {
    stats = fs.statSync(existing);
  } catch {
    return undefined;
  }
  return stats.isDirectory() ? undefined : { path: existing, kind: fileKind(stats) };
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0] ?? text;
}
