/**
 * Reading kubeconfig files: what kubectl reads, without a Kubernetes client library.
 *
 * The runtime needs a kubeconfig only to find one context's cluster, user and namespace (R-AUTH-2).
 * A full client library costs an operator tens of megabytes on disk and a slow start for that, so
 * this module reads the files itself and follows kubectl's rules. The YAML parser is `js-yaml`,
 * not the `yaml` package the devcluster and the generator use for whole manifests: a kubeconfig
 * needs only parsing, and js-yaml adds about 3 MB to an operator's memory where `yaml` adds about
 * 9 MB (a sixth of a running operator's footprint). The rules:
 *
 * - `$KUBECONFIG` is a path list (the OS path separator; empty entries ignored, missing files
 *   skipped); without it, `~/.kube/config`;
 * - merging: for every cluster, user and context name, the first file defining it wins; the
 *   current context is the first non-empty `current-context`;
 * - relative file paths (`certificate-authority`, `client-certificate`, `client-key`, `tokenFile`,
 *   and an exec `command` containing a path separator) are relative to the folder of the file that
 *   defined the entry.
 *
 * A file that is not YAML or not a kubeconfig, or an entry of the wrong shape, is a `LoginError`
 * naming the file and the entry; so is a context naming an unknown cluster or user when resolved.
 * `logins` turns a resolved context into `ConnectionInfo`.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as jsYaml from 'js-yaml';
import * as dicts from '../structs/dicts.js';
import * as errors from './errors.js';

/** One cluster entry (kubectl's `clusters[].cluster`), with file paths made absolute. */
export interface KubeconfigCluster {
  readonly name: string;
  /** The kubeconfig file that defined the entry. */
  readonly source: string;
  readonly server?: string;
  /** `certificate-authority`: a CA bundle file. */
  readonly certificateAuthority?: string;
  /** `certificate-authority-data`: Base64 of a PEM CA bundle. */
  readonly certificateAuthorityData?: string;
  readonly insecureSkipTlsVerify?: boolean;
  readonly proxyUrl?: string;
  /** `tls-server-name`: the name to verify the server's certificate against (and to send as SNI). */
  readonly tlsServerName?: string;
  /** The `client.authentication.k8s.io/exec` extension, passed to exec plugins as `spec.cluster.config`. */
  readonly execExtension?: unknown;
}

/** An `exec` credential plugin of a user entry (client.authentication.k8s.io). */
export interface ExecConfig {
  /** The ExecCredential API version, e.g. `client.authentication.k8s.io/v1`. */
  readonly apiVersion?: string;
  /** The executable: a name looked up in `PATH`, or a path (made absolute). */
  readonly command: string;
  readonly args: readonly string[];
  /** Variables added to the plugin's environment. */
  readonly env: ReadonlyArray<{ readonly name: string; readonly value: string }>;
  /** Shown when the command is not found. */
  readonly installHint?: string;
  /** Pass the cluster's details in `KUBERNETES_EXEC_INFO`. */
  readonly provideClusterInfo: boolean;
  /** `Never`, `IfAvailable` or `Always`; an operator is never interactive. */
  readonly interactiveMode?: string;
}

/** A legacy `auth-provider` of a user entry (e.g. `oidc`, `gcp`, `azure`). */
export interface AuthProviderConfig {
  readonly name: string;
  readonly config: Readonly<Record<string, string>>;
}

/** One user entry (kubectl's `users[].user`), with file paths made absolute. */
export interface KubeconfigUser {
  readonly name: string;
  /** The kubeconfig file that defined the entry. */
  readonly source: string;
  readonly clientCertificate?: string;
  readonly clientCertificateData?: string;
  readonly clientKey?: string;
  readonly clientKeyData?: string;
  readonly token?: string;
  readonly tokenFile?: string;
  readonly username?: string;
  readonly password?: string;
  readonly exec?: ExecConfig;
  readonly authProvider?: AuthProviderConfig;
  /** The impersonation fields present (`as`, `as-groups`, …), which the runtime does not support. */
  readonly impersonation: readonly string[];
}

/** One context entry (kubectl's `contexts[].context`). */
export interface KubeconfigContext {
  readonly name: string;
  /** The kubeconfig file that defined the entry. */
  readonly source: string;
  readonly cluster: string;
  readonly user?: string;
  readonly namespace?: string;
}

/** Kubeconfig files merged by kubectl's rules. */
export interface Kubeconfig {
  /** The files that were read, in order. */
  readonly files: readonly string[];
  readonly clusters: ReadonlyMap<string, KubeconfigCluster>;
  readonly users: ReadonlyMap<string, KubeconfigUser>;
  readonly contexts: ReadonlyMap<string, KubeconfigContext>;
  /** The first non-empty `current-context` of the files. */
  readonly currentContext?: string;
}

/** A context with the entries it names. */
export interface ResolvedContext {
  readonly context: KubeconfigContext;
  readonly cluster: KubeconfigCluster;
  /** Absent for contexts without a user (anonymous access). */
  readonly user?: KubeconfigUser;
}

/** The default kubeconfig file: `~/.kube/config` (`$HOME` first, as kubectl does). */
export function defaultKubeconfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env['HOME'] || os.homedir(), '.kube', 'config');
}

/** The kubeconfig files to read: `$KUBECONFIG` (a path list, empty entries ignored) or `~/.kube/config`. */
export function kubeconfigPaths(env: NodeJS.ProcessEnv = process.env): string[] {
  const list = env['KUBECONFIG'];
  if (list) return list.split(path.delimiter).filter(Boolean);
  return [defaultKubeconfigPath(env)];
}

type Raw = Readonly<Record<string, unknown>>;

/** Reads the fields of one entry, failing with the file and the entry's place in the message. */
class Fields {
  constructor(
    private readonly raw: Raw,
    private readonly where: string,
    private readonly folder: string,
  ) {}

  private fail(key: string, expected: string): never {
    throw new errors.LoginError(`${this.where}: "${key}" must be ${expected}, got ${JSON.stringify(this.raw[key])}.`);
  }

  /** A string; empty strings count as absent (as in kubectl). */
  string(key: string): string | undefined {
    const value = this.raw[key];
    if (value === undefined || value === null || value === '') return undefined;
    return typeof value === 'string' ? value : this.fail(key, 'a string');
  }

  boolean(key: string): boolean | undefined {
    const value = this.raw[key];
    if (value === undefined || value === null) return undefined;
    return typeof value === 'boolean' ? value : this.fail(key, 'true or false');
  }

  /** A file path, made absolute relative to the kubeconfig's folder. */
  path(key: string): string | undefined {
    const value = this.string(key);
    return value === undefined ? undefined : path.resolve(this.folder, value);
  }

  mapping(key: string): Raw | undefined {
    const value = this.raw[key];
    if (value === undefined || value === null) return undefined;
    return dicts.isObject(value) ? value : this.fail(key, 'a mapping');
  }

  list(key: string): readonly unknown[] {
    const value = this.raw[key];
    if (value === undefined || value === null) return [];
    return Array.isArray(value) ? value : this.fail(key, 'a list');
  }

  strings(key: string): string[] {
    return this.list(key).map((item) => (typeof item === 'string' ? item : this.fail(key, 'a list of strings')));
  }
}

const IMPERSONATION = ['as', 'as-uid', 'as-groups', 'as-user-extra'];

function readCluster(raw: Raw, name: string, where: string, source: string): KubeconfigCluster {
  const fields = new Fields(raw, where, path.dirname(source));
  const extensions = fields.list('extensions').filter(dicts.isObject);
  const exec = extensions.find((item) => item['name'] === 'client.authentication.k8s.io/exec');
  return {
    name,
    source,
    server: fields.string('server'),
    certificateAuthority: fields.path('certificate-authority'),
    certificateAuthorityData: fields.string('certificate-authority-data'),
    insecureSkipTlsVerify: fields.boolean('insecure-skip-tls-verify'),
    proxyUrl: fields.string('proxy-url'),
    tlsServerName: fields.string('tls-server-name'),
    execExtension: exec?.['extension'],
  };
}

function readExec(raw: Raw, where: string, folder: string): ExecConfig {
  const fields = new Fields(raw, where, folder);
  const command = fields.string('command');
  if (command === undefined) throw new errors.LoginError(`${where}: the exec plugin has no "command".`);
  const env = fields.list('env').map((item, index) => {
    const entry = dicts.isObject(item) ? new Fields(item, `${where}.env[${index}]`, folder) : undefined;
    const name = entry?.string('name');
    if (entry === undefined || name === undefined) throw new errors.LoginError(`${where}: "env[${index}]" must be a mapping with a name and a value.`);
    return { name, value: entry.string('value') ?? '' };
  });
  return {
    apiVersion: fields.string('apiVersion'),
    // kubectl: a command with a path separator is a path relative to the kubeconfig; a bare name is looked up in PATH.
    command: command.includes('/') || command.includes(path.sep) ? path.resolve(folder, command) : command,
    args: fields.strings('args'),
    env,
    installHint: fields.string('installHint'),
    provideClusterInfo: fields.boolean('provideClusterInfo') ?? false,
    interactiveMode: fields.string('interactiveMode'),
  };
}

function readUser(raw: Raw, name: string, where: string, source: string): KubeconfigUser {
  const folder = path.dirname(source);
  const fields = new Fields(raw, where, folder);
  const exec = fields.mapping('exec');
  const provider = fields.mapping('auth-provider');
  let authProvider: AuthProviderConfig | undefined;
  if (provider) {
    const inner = new Fields(provider, `${where}.auth-provider`, folder);
    const config: Record<string, string> = {};
    for (const [key, value] of Object.entries(inner.mapping('config') ?? {})) {
      if (typeof value === 'string') config[key] = value;
    }
    authProvider = { name: inner.string('name') ?? '', config };
  }
  return {
    name,
    source,
    clientCertificate: fields.path('client-certificate'),
    clientCertificateData: fields.string('client-certificate-data'),
    clientKey: fields.path('client-key'),
    clientKeyData: fields.string('client-key-data'),
    token: fields.string('token'),
    tokenFile: fields.path('tokenFile'),
    username: fields.string('username'),
    password: fields.string('password'),
    exec: exec ? readExec(exec, `${where}.exec`, folder) : undefined,
    authProvider,
    impersonation: IMPERSONATION.filter((key) => raw[key] !== undefined && raw[key] !== null && raw[key] !== ''),
  };
}

function readContext(raw: Raw, name: string, where: string, source: string): KubeconfigContext {
  const fields = new Fields(raw, where, path.dirname(source));
  const cluster = fields.string('cluster');
  if (cluster === undefined) throw new errors.LoginError(`${where}: the context names no cluster.`);
  return { name, source, cluster, user: fields.string('user'), namespace: fields.string('namespace') };
}

/** One parsed kubeconfig file: its named entries in order, and its current context. */
export interface KubeconfigFile {
  readonly clusters: readonly KubeconfigCluster[];
  readonly users: readonly KubeconfigUser[];
  readonly contexts: readonly KubeconfigContext[];
  readonly currentContext?: string;
}

function readEntries<T>(file: string, document: Raw, section: string, inner: string, read: (raw: Raw, name: string, where: string, source: string) => T): T[] {
  const list = new Fields(document, file, path.dirname(file)).list(section);
  return list.map((item, index) => {
    const at = `${file}: ${section}[${index}]`;
    if (!dicts.isObject(item)) throw new errors.LoginError(`${at} must be a mapping with "name" and "${inner}".`);
    const name = item['name'];
    if (typeof name !== 'string' || name === '') throw new errors.LoginError(`${at} has no name.`);
    const body = item[inner] ?? {};
    if (!dicts.isObject(body)) throw new errors.LoginError(`${at} (${JSON.stringify(name)}): "${inner}" must be a mapping.`);
    return read(body, name, `${file}: ${inner} ${JSON.stringify(name)}`, file);
  });
}

/**
 * Parses the text of one kubeconfig file (an empty file is an empty kubeconfig).
 *
 * @throws errors.LoginError if it is not YAML, not a kubeconfig, or has malformed entries.
 */
export function parseKubeconfig(text: string, file: string): KubeconfigFile {
  let document: unknown;
  try {
    document = jsYaml.load(text, { filename: file });
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
    throw new errors.LoginError(`${file} is not a valid YAML file: ${reason}`, { cause });
  }
  if (document === null || document === undefined) return { clusters: [], users: [], contexts: [] };
  if (!dicts.isObject(document) || (document['kind'] !== undefined && document['kind'] !== 'Config')) {
    const what = dicts.isObject(document) ? `kind ${JSON.stringify(document['kind'])}` : `a ${Array.isArray(document) ? 'list' : typeof document}`;
    throw new errors.LoginError(`${file} is not a kubeconfig (kind Config with clusters, users, contexts): it is ${what}.`);
  }
  const current = document['current-context'];
  if (current !== undefined && current !== null && typeof current !== 'string') {
    throw new errors.LoginError(`${file}: "current-context" must be a string, got ${JSON.stringify(current)}.`);
  }
  return {
    clusters: readEntries(file, document, 'clusters', 'cluster', readCluster),
    users: readEntries(file, document, 'users', 'user', readUser),
    contexts: readEntries(file, document, 'contexts', 'context', readContext),
    currentContext: current || undefined,
  };
}

function firstByName<T extends { readonly name: string }>(lists: readonly (readonly T[])[]): Map<string, T> {
  const merged = new Map<string, T>();
  for (const list of lists) for (const item of list) if (!merged.has(item.name)) merged.set(item.name, item);
  return merged;
}

/**
 * Loads and merges kubeconfig files with kubectl's rules (the first file defining a name or the
 * current context wins); missing files are skipped. Returns `null` if none exists.
 *
 * @throws errors.LoginError for a file that cannot be read, is not YAML or not a kubeconfig.
 */
export function loadKubeconfig(paths: readonly string[]): Kubeconfig | null {
  const files: string[] = [];
  const parsed: KubeconfigFile[] = [];
  for (const file of paths) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw new errors.LoginError(`Cannot read the kubeconfig ${file}: ${(cause as Error).message}`, { cause });
    }
    files.push(file);
    parsed.push(parseKubeconfig(text, file));
  }
  if (files.length === 0) return null;
  return {
    files,
    clusters: firstByName(parsed.map((p) => p.clusters)),
    users: firstByName(parsed.map((p) => p.users)),
    contexts: firstByName(parsed.map((p) => p.contexts)),
    currentContext: parsed.map((p) => p.currentContext).find(Boolean),
  };
}

/**
 * The current (or given) context with its cluster and user.
 *
 * @throws errors.LoginError when there is no current context, or the context, its cluster or its
 *   user is not defined, or the cluster has no server.
 */
export function resolveContext(config: Kubeconfig, contextName?: string): ResolvedContext {
  const files = config.files.join(', ');
  const name = contextName ?? config.currentContext;
  if (!name) throw new errors.LoginError(`The kubeconfig has no current context (${files}).`);
  const context = config.contexts.get(name);
  if (!context) throw new errors.LoginError(`The kubeconfig's context ${JSON.stringify(name)} is not defined (${files}).`);
  const cluster = config.clusters.get(context.cluster);
  if (!cluster) {
    throw new errors.LoginError(`${context.source}: context ${JSON.stringify(name)} names an unknown cluster ${JSON.stringify(context.cluster)} (${files}).`);
  }
  if (!cluster.server) throw new errors.LoginError(`${cluster.source}: cluster ${JSON.stringify(cluster.name)} has no server.`);
  if (context.user === undefined) return { context, cluster };
  const user = config.users.get(context.user);
  if (!user) {
    throw new errors.LoginError(`${context.source}: context ${JSON.stringify(name)} names an unknown user ${JSON.stringify(context.user)} (${files}).`);
  }
  return { context, cluster, user };
}
