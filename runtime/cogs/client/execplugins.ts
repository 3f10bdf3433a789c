/**
 * Exec credential plugins of kubeconfig users (client.authentication.k8s.io `ExecCredential`,
 * v1 and v1beta1): cloud CLIs and helpers that print a token or a client certificate.
 *
 * As kubectl does, the plugin is run with its `args` and its `env` over the process's environment,
 * with `KUBERNETES_EXEC_INFO` holding the `ExecCredential` request (`spec.interactive` is false — an
 * operator has no terminal — and `spec.cluster` when the user asks for `provideClusterInfo`). Its
 * stdout is an `ExecCredential` whose `status` has a `token` and/or `clientCertificateData` with
 * `clientKeyData`, and maybe an `expirationTimestamp`.
 *
 * One `ExecCredentials` belongs to one login: it runs the plugin on first use and keeps the result
 * until it expires (without an expiry, for as long as the login's credentials live). A 401 makes the
 * vault drop those credentials and log in again, which creates a new `ExecCredentials` and so runs
 * the plugin afresh (a bounded number of times in a row: the vault's, R-SEC-22). Concurrent requests
 * share one run. A failing plugin is a `LoginError` naming the command, its exit code and a summary of
 * its stderr (R-SEC-23), or its `installHint` when the command does not exist. A plugin that runs
 * longer than its timeout (60 s by default; kubectl and client-go have none, and a hanging plugin
 * would stall every request of the operator) is killed with the processes it started, and the login
 * fails with `ExecPluginTimeoutError` (R-AUTH-7).
 *
 * What a plugin prints is a secret until proven otherwise (R-SEC-23): stdout holds the token, and
 * stderr of a cloud CLI may too. So stdout is read up to `MAX_EXEC_OUTPUT` (beyond, the plugin is
 * killed and the login fails, instead of the operator buffering whatever it prints), and no error
 * ever quotes it — a malformed ExecCredential is described by its position and size only. Of stderr,
 * errors carry one line: its first non-empty line, cut to `STDERR_SUMMARY` characters, with control
 * characters escaped.
 *
 * The process runner and the clock are injectable for tests.
 */

import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import type * as clocks from '../aio/clocks.js';
import * as dicts from '../structs/dicts.js';
import * as certificates from './certificates.js';
import type * as credentials from './credentials.js';
import * as errors from './errors.js';
import type * as kubeconfigs from './kubeconfigs.js';

/** The ExecCredential API versions understood (v1alpha1 was removed from Kubernetes in 1.24). */
export const EXEC_API_VERSIONS: readonly string[] = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'];

/** The most bytes of stdout read from a plugin (R-SEC-23); an ExecCredential is a few KiB. */
export const MAX_EXEC_OUTPUT = 1024 * 1024;

/**
 * Words of stderr that may be credentials (R-SEC-23): 24 or more characters of the Base64, Base64url
 * and JWT alphabets; those with letters and digits are redacted (paths and prose are not).
 */
const CREDENTIAL_LIKE = /[A-Za-z0-9+/=_.~-]{24,}/g;

/** The most bytes of stderr kept (for its first line); the rest is read and dropped. */
const MAX_EXEC_STDERR = 16 * 1024;

/** How many characters of a failed plugin's first stderr line go into the error (R-SEC-23). */
export const STDERR_SUMMARY = 200;

/** How long a plugin may run by default, in seconds (R-AUTH-7; `settings.networking.execPluginTimeout`). */
export const DEFAULT_EXEC_TIMEOUT = 60;

/** What a finished process gave. */
export interface ProcessResult {
  /** The exit code, or null when it was killed by a signal. */
  readonly exitCode: number | null;
  readonly signal?: string | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Set when the runner killed it for running longer than `timeoutMs`. */
  readonly timedOut?: boolean;
  /** Set when the runner killed it for printing more than `maxOutput` bytes on stdout. */
  readonly overflowed?: boolean;
}

/**
 * Runs a command to completion, or until `timeoutMs` (when given) has passed, or until it printed
 * more than `maxOutput` bytes on stdout (when given): then the runner kills it and resolves with
 * `timedOut` or `overflowed`. Rejects (with the `spawn` error, e.g. `code: 'ENOENT'`) when it
 * cannot be started.
 */
export type ProcessRunner = (
  command: string,
  args: readonly string[],
  options: { readonly env: NodeJS.ProcessEnv; readonly timeoutMs?: number; readonly maxOutput?: number },
) => Promise<ProcessResult>;

/** Collects a stream's bytes up to a limit; `over` is called once when more arrive. */
function collector(limit: number, over: () => void): { add(chunk: Buffer): void; text(): string } {
  const chunks: Buffer[] = [];
  let size = 0;
  let exceeded = false;
  return {
    add(chunk) {
      if (exceeded) return;
      if (size + chunk.length > limit) {
        exceeded = true;
        chunks.push(chunk.subarray(0, limit - size));
        size = limit;
        over();
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    },
    text: () => Buffer.concat(chunks, size).toString('utf8'),
  };
}

/**
 * The real runner: `child_process.spawn` without stdin, collecting stdout (up to `maxOutput`) and
 * the first `MAX_EXEC_STDERR` bytes of stderr. The plugin runs in a process group of its own, so
 * that a timeout or an overflow kills it with everything it started (a shell script's `sleep`
 * would otherwise keep the pipes open); the result comes at once, without waiting for the pipes to
 * close.
 */
export const runProcess: ProcessRunner = (command, args, options) =>
  new Promise<ProcessResult>((resolve, reject) => {
    const child = childProcess.spawn(command, [...args], { env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32' });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const kill = (how: { timedOut?: true; overflowed?: true }): void => {
      clearTimeout(timer);
      killGroup(child);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({ exitCode: null, signal: 'SIGKILL', stdout: stdout.text(), stderr: stderr.text(), ...how });
    };
    const stdout = collector(options.maxOutput ?? Number.POSITIVE_INFINITY, () => kill({ overflowed: true }));
    const stderr = collector(MAX_EXEC_STDERR, () => undefined);
    child.stdout.on('data', (chunk: Buffer) => stdout.add(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.add(chunk));
    if (options.timeoutMs !== undefined) timer = setTimeout(() => kill({ timedOut: true }), options.timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (exitCode, signal) => {
      clearTimeout(timer);
      resolve({ exitCode, signal, stdout: stdout.text(), stderr: stderr.text() });
    });
  });

/**
 * One line of a plugin's stderr for an error (R-SEC-23): the first non-empty line, cut to
 * `STDERR_SUMMARY` characters, control characters escaped (`\u001b`), with how much was left out.
 */
export function stderrSummary(stderr: string): string | undefined {
  const lines = stderr.split('\n').filter((line) => line.trim() !== '');
  if (lines.length === 0) return undefined;
  const first = lines[0]!.trim();
  const masked = first.replace(CREDENTIAL_LIKE, (word) => (/\d/.test(word) && /[A-Za-z]/.test(word) ? `<${word.length} characters redacted>` : word));
  const cut = masked.length > STDERR_SUMMARY ? `${masked.slice(0, STDERR_SUMMARY)}…` : masked;
  const escaped = cut.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return lines.length > 1 ? `${escaped} (and ${lines.length - 1} more line${lines.length > 2 ? 's' : ''} of stderr)` : escaped;
}

/** Kills a process and its process group (the group exists when it was spawned detached). */
function killGroup(child: childProcess.ChildProcess): void {
  try {
    if (child.pid !== undefined && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
    else child.kill('SIGKILL');
  } catch {
    child.kill('SIGKILL'); // the group is gone already, or was never one
  }
}

/** The credentials a plugin gave. */
export interface ExecStatus {
  readonly token?: string;
  readonly clientCertificateData?: string;
  readonly clientKeyData?: string;
  /** When they expire, ms since the epoch; absent = never. */
  readonly expiration?: number;
}

/** Injectable parts of running plugins. */
export interface ExecOptions {
  /** Default: `runProcess`. */
  readonly run?: ProcessRunner;
  /** For expirations; default wall time. */
  readonly clock?: Pick<clocks.Clock, 'now'>;
  /** The environment the plugin's `env` is merged over; default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /**
   * Seconds a plugin may run before it is killed and the login fails with `ExecPluginTimeoutError`
   * (R-AUTH-7); `null` = no limit. Default `DEFAULT_EXEC_TIMEOUT` (60 s).
   */
  readonly timeout?: number | null;
  /** The most bytes of stdout read (R-SEC-23). Default `MAX_EXEC_OUTPUT` (1 MiB). */
  readonly maxOutput?: number;
}

/** `spec.cluster` of the ExecCredential request (kubectl's field names). */
function clusterInfo(cluster: kubeconfigs.KubeconfigCluster): Record<string, unknown> {
  const info: Record<string, unknown> = { server: cluster.server };
  if (cluster.tlsServerName) info['tls-server-name'] = cluster.tlsServerName;
  if (cluster.insecureSkipTlsVerify) info['insecure-skip-tls-verify'] = true;
  if (cluster.certificateAuthorityData) info['certificate-authority-data'] = cluster.certificateAuthorityData;
  else if (cluster.certificateAuthority && fs.existsSync(cluster.certificateAuthority)) {
    info['certificate-authority-data'] = fs.readFileSync(cluster.certificateAuthority).toString('base64');
  }
  if (cluster.proxyUrl) info['proxy-url'] = cluster.proxyUrl;
  if (cluster.execExtension !== undefined) info['config'] = cluster.execExtension;
  return info;
}

/** The credentials of one user's exec plugin, for one login (see the module's comment). */
export class ExecCredentials {
  private cached: ExecStatus | undefined;
  private running: Promise<ExecStatus> | undefined;
  private readonly run: ProcessRunner;
  private readonly clock: Pick<clocks.Clock, 'now'>;
  private readonly env: NodeJS.ProcessEnv;
  private readonly title: string;
  private readonly timeout: number | null;
  private readonly maxOutput: number;

  /**
   * @throws errors.LoginError for an unsupported `apiVersion`, or a plugin that insists on being
   *   interactive (`interactiveMode: Always`).
   */
  constructor(
    private readonly exec: kubeconfigs.ExecConfig,
    user: Pick<kubeconfigs.KubeconfigUser, 'name' | 'source'>,
    private readonly cluster: kubeconfigs.KubeconfigCluster,
    options: ExecOptions = {},
  ) {
    this.run = options.run ?? runProcess;
    this.clock = options.clock ?? { now: () => Date.now() };
    this.env = options.env ?? process.env;
    this.timeout = options.timeout === undefined ? DEFAULT_EXEC_TIMEOUT : options.timeout;
    this.maxOutput = options.maxOutput ?? MAX_EXEC_OUTPUT;
    this.title = `The exec plugin ${JSON.stringify(exec.command)} of user ${JSON.stringify(user.name)} (${user.source})`;
    if (exec.apiVersion === undefined || !EXEC_API_VERSIONS.includes(exec.apiVersion)) {
      throw new errors.LoginError(`${this.title} has apiVersion ${JSON.stringify(exec.apiVersion ?? null)}; supported: ${EXEC_API_VERSIONS.join(', ')}.`);
    }
    if (exec.interactiveMode === 'Always') {
      throw new errors.LoginError(`${this.title} needs a terminal (interactiveMode: Always), which an operator does not have.`);
    }
  }

  /** The `Authorization` header from the plugin's token, if it gives one. */
  readonly authorization: credentials.AuthorizationProvider = async () => {
    const status = await this.current();
    return status.token ? `Bearer ${status.token}` : undefined;
  };

  /** The client certificate from the plugin, if it gives one. */
  readonly clientCertificate: credentials.ClientCertificateProvider = async () => {
    const status = await this.current();
    return status.clientCertificateData && status.clientKeyData
      ? { certificateData: status.clientCertificateData, privateKeyData: status.clientKeyData }
      : undefined;
  };

  /** The plugin's credentials: cached ones until they expire, else from a new run. */
  async current(): Promise<ExecStatus> {
    const cached = this.cached;
    if (cached && (cached.expiration === undefined || cached.expiration > this.clock.now())) return cached;
    this.running ??= this.fetch().finally(() => {
      this.running = undefined;
    });
    return await this.running;
  }

  private async fetch(): Promise<ExecStatus> {
    const apiVersion = this.exec.apiVersion!;
    const request = {
      apiVersion,
      kind: 'ExecCredential',
      spec: { interactive: false, ...(this.exec.provideClusterInfo ? { cluster: clusterInfo(this.cluster) } : {}) },
    };
    const env: NodeJS.ProcessEnv = { ...this.env };
    for (const { name, value } of this.exec.env) env[name] = value;
    env['KUBERNETES_EXEC_INFO'] = JSON.stringify(request);

    let result: ProcessResult;
    try {
      const timeout = this.timeout === null ? {} : { timeoutMs: this.timeout * 1000 };
      result = await this.run(this.exec.command, this.exec.args, { env, maxOutput: this.maxOutput, ...timeout });
    } catch (cause) {
      const code = (cause as NodeJS.ErrnoException | undefined)?.code;
      if (code === 'ENOENT') {
        const hint = this.exec.installHint ? ` ${this.exec.installHint.trim().replace(/\s*\n\s*/g, ' ')}` : '';
        throw new errors.LoginError(`${this.title} failed: the command was not found.${hint}`, { cause });
      }
      throw new errors.LoginError(`${this.title} could not be started: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    }
    if (result.timedOut) {
      const timeout = this.timeout ?? 0;
      throw new errors.ExecPluginTimeoutError(
        `${this.title} did not finish within ${timeout} seconds and was killed (settings.networking.execPluginTimeout).`,
        this.exec.command,
        timeout,
      );
    }
    if (result.overflowed || Buffer.byteLength(result.stdout) > this.maxOutput) {
      throw new errors.LoginError(`${this.title} printed more than ${this.maxOutput} bytes and was killed; an ExecCredential is far smaller.`);
    }
    if (result.exitCode !== 0) {
      const how = result.exitCode === null ? `was killed by ${result.signal ?? 'a signal'}` : `exited with code ${result.exitCode}`;
      const summary = stderrSummary(result.stderr);
      throw new errors.LoginError(`${this.title} ${how}${summary !== undefined ? `: ${summary}` : ' (no stderr).'}`);
    }
    const status = this.parse(result.stdout, apiVersion);
    this.cached = status;
    return status;
  }

  private parse(stdout: string, apiVersion: string): ExecStatus {
    const fail = (why: string): never => {
      throw new errors.LoginError(`${this.title} printed ${why}`);
    };
    let credential: unknown;
    try {
      credential = JSON.parse(stdout);
    } catch (error) {
      // Never the output itself (nor the parser's message, which quotes it): it may hold a token.
      return fail(
        stdout.trim() === '' ? 'nothing on stdout.' : `invalid ExecCredential JSON${jsonPosition(error, stdout)} (${Buffer.byteLength(stdout)} bytes).`,
      );
    }
    if (!dicts.isObject(credential) || credential['kind'] !== 'ExecCredential') return fail('JSON that is not an ExecCredential.');
    if (credential['apiVersion'] !== apiVersion) {
      const got = credential['apiVersion'];
      const shown = typeof got === 'string' && got.length <= 100 ? JSON.stringify(got) : `of type ${typeof got}`;
      return fail(`an ExecCredential of apiVersion ${shown}, not the requested ${apiVersion}.`);
    }
    const status = credential['status'];
    if (!dicts.isObject(status)) return fail('an ExecCredential without a status.');
    const text = (key: string): string | undefined => {
      const value = status[key];
      if (value === undefined || value === null || value === '') return undefined;
      return typeof value === 'string' ? value : fail(`an ExecCredential whose status.${key} is not a string.`);
    };
    const token = text('token');
    const certificate = text('clientCertificateData');
    const key = text('clientKeyData');
    if ((certificate === undefined) !== (key === undefined)) return fail('an ExecCredential with only one of clientCertificateData and clientKeyData.');
    if (token === undefined && certificate === undefined) return fail('an ExecCredential with neither a token nor a client certificate.');
    if (certificate !== undefined && key !== undefined) {
      // Checked here, by wall time as the server does (R-SEC-24): not as an OpenSSL error on every connection.
      const problem = certificates.certificateProblem(certificates.pemOf(certificate), certificates.pemOf(key), Date.now());
      if (problem !== undefined) return fail(`a client certificate that ${problem}.`);
    }
    const timestamp = text('expirationTimestamp');
    const expiration = timestamp === undefined ? undefined : Date.parse(timestamp);
    if (expiration !== undefined && !Number.isFinite(expiration)) return fail(`an invalid expirationTimestamp ${JSON.stringify(timestamp!.slice(0, 40))}.`);
    return { token, clientCertificateData: certificate, clientKeyData: key, expiration };
  }
}

/** ` at byte <n>` of a JSON syntax error (the position the parser reports, in bytes), or nothing. */
function jsonPosition(error: unknown, text: string): string {
  const message = error instanceof Error ? error.message : '';
  const position = /at position (\d+)/.exec(message)?.[1];
  if (position !== undefined) return ` at byte ${Buffer.byteLength(text.slice(0, Number(position)))}`;
  return /Unexpected end/.test(message) ? ` at byte ${Buffer.byteLength(text)} (the end)` : '';
}
