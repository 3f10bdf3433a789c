/**
 * Credentials: what login handlers return (R-AUTH-1) and the vault that hands them to requests
 * (R-AUTH-3).
 *
 * A `ConnectionInfo` says where the API server is and how to authenticate. `connectionInfo()`
 * validates one and freezes a copy. The `Vault` holds the credentials of all login handlers:
 * requests `select()` the highest-priority ones (randomly among equals), drop expired ones, and
 * `invalidate()` them on HTTP 401 — invalid credentials are never accepted again. When the vault
 * runs empty it turns `depleted` on (the login activity waits for that to re-run the logins) and
 * requests wait until `populate()` refills it; if a re-login brings nothing valid, waiting and
 * later requests fail with `LoginError`.
 *
 * A login that hands out new credentials after every 401 — an exec plugin, a login handler minting
 * tokens for an account the cluster no longer accepts — would make that a loop without end (Kopf
 * only stops re-logins that return the very same credentials). So the vault counts the 401s of
 * each login in a row (R-SEC-22): the credentials it re-issues after the first are used at once
 * (client-go re-runs a plugin whose token was rejected), after the second only once
 * `REISSUE_BACKOFFS` has passed on the clock; when those are rejected too, the login's credentials
 * are refused and requests fail with one `LoginError` saying `401 Unauthorized from <server> as
 * <principal>` and what to do. Any answer other than 401 to a request with a login's credentials
 * (`accepted()`) ends its streak: a token that worked for an hour and then expired is re-issued as
 * before.
 *
 * `logins` produces `ConnectionInfo`s from kubeconfigs and service accounts; `transport` turns
 * them into HTTP agents and headers; `requests` drives the vault.
 */

import type * as clocks from '../aio/clocks.js';
import * as toggles from '../aio/toggles.js';
import * as errors from './errors.js';

/**
 * A port-specific, dynamic source of the `Authorization` header (e.g. a kubeconfig exec plugin or
 * token file). Called before every request; `undefined` falls back to the static fields.
 */
export type AuthorizationProvider = () => Promise<string | undefined>;

/** A client certificate and its private key: PEM, or Base64 of PEM. */
export interface ClientCertificate {
  readonly certificateData: string | Uint8Array;
  readonly privateKeyData: string | Uint8Array;
}

/**
 * A port-specific, dynamic source of the client certificate (e.g. a kubeconfig exec plugin).
 * Called before every request; `undefined` falls back to the static fields.
 */
export type ClientCertificateProvider = () => Promise<ClientCertificate | undefined>;

/** Where the API server is and how to talk to it (R-AUTH-1; Kopf: `ConnectionInfo`). */
export interface ConnectionInfo {
  /** The API server's URL, e.g. `https://10.0.0.1:6443`. */
  readonly server: string;
  /** A CA bundle file (PEM). */
  readonly caPath?: string;
  /** A CA bundle: PEM, or Base64 of PEM. */
  readonly caData?: string | Uint8Array;
  /** Skip verification of the server's certificate. */
  readonly insecure?: boolean;
  /** Port-specific: the name to verify the server's certificate against and to send as SNI (kubeconfig `tls-server-name`). */
  readonly tlsServerName?: string;
  /** HTTP Basic authentication (with `password`). */
  readonly username?: string;
  readonly password?: string;
  /** `Authorization: <scheme> <token>`; the scheme defaults to `Bearer`. */
  readonly scheme?: string;
  readonly token?: string;
  /** A client certificate (PEM file), or its data (PEM or Base64 of PEM). */
  readonly certificatePath?: string;
  readonly certificateData?: string | Uint8Array;
  /** The client certificate's private key (PEM file), or its data (PEM or Base64 of PEM). */
  readonly privateKeyPath?: string;
  readonly privateKeyData?: string | Uint8Array;
  readonly defaultNamespace?: string;
  /** An `http://` proxy to use (with `CONNECT` tunnels for HTTPS servers). */
  readonly proxyUrl?: string;
  /** Use proxies from environment variables. */
  readonly trustEnv?: boolean;
  /** Higher priorities are used first. Default 0. */
  readonly priority?: number;
  /** When these credentials stop being valid; naive timestamps are UTC. */
  readonly expiration?: Date;
  /** Port-specific: a dynamic `Authorization` header (see `AuthorizationProvider`). */
  readonly authorization?: AuthorizationProvider;
  /** Port-specific: a dynamic client certificate (see `ClientCertificateProvider`). */
  readonly clientCertificate?: ClientCertificateProvider;
  /**
   * Port-specific: who these credentials authenticate as, for messages — e.g. `user "dev" of
   * /home/dev/.kube/config` (R-SEC-22). Default: the login that produced them.
   */
  readonly principal?: string;
}

const PAIRS: ReadonlyArray<readonly [keyof ConnectionInfo, keyof ConnectionInfo]> = [
  ['caPath', 'caData'],
  ['certificatePath', 'certificateData'],
  ['privateKeyPath', 'privateKeyData'],
];

/**
 * Validates connection info and returns a frozen copy.
 *
 * @throws InvalidConnectionInfoError without a server, with an unparsable server URL, or with both
 *   a path and data for the same item.
 * @example
 * const info = connectionInfo({ server: 'https://127.0.0.1:6443', token: 's3cret', priority: 10 });
 */
export function connectionInfo(input: ConnectionInfo): Readonly<ConnectionInfo> {
  if (typeof input.server !== 'string' || input.server === '') {
    throw new errors.InvalidConnectionInfoError('ConnectionInfo needs a server URL.');
  }
  let url: URL;
  try {
    url = new URL(input.server);
  } catch (cause) {
    throw new errors.InvalidConnectionInfoError(`ConnectionInfo has an invalid server URL: ${input.server}`, { cause });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new errors.InvalidConnectionInfoError(`ConnectionInfo's server must be http(s): ${input.server}`);
  }
  for (const [path, data] of PAIRS) {
    if (input[path] != null && input[data] != null) {
      throw new errors.InvalidConnectionInfoError(`ConnectionInfo cannot have both ${path} and ${data}.`);
    }
  }
  if (input.priority !== undefined && !Number.isFinite(input.priority)) {
    throw new errors.InvalidConnectionInfoError(`ConnectionInfo's priority must be a finite number, got ${input.priority}.`);
  }
  if (input.expiration !== undefined && !(input.expiration instanceof Date && Number.isFinite(input.expiration.getTime()))) {
    throw new errors.InvalidConnectionInfoError("ConnectionInfo's expiration must be a valid Date.");
  }
  return Object.freeze({ ...input });
}

/** One entry of the vault: the login's key and its credentials. */
export interface VaultItem {
  /** Which login produced it (e.g. the login handler's id). */
  readonly key: string;
  readonly info: Readonly<ConnectionInfo>;
}

const functionIds = new WeakMap<object, number>();
let nextFunctionId = 1;

/** A content fingerprint: equal credentials (field by field) give equal fingerprints. */
function fingerprint(info: ConnectionInfo): string {
  return JSON.stringify(
    Object.keys(info)
      .sort()
      .map((key) => {
        const value: unknown = info[key as keyof ConnectionInfo];
        if (typeof value === 'function') {
          if (!functionIds.has(value)) functionIds.set(value, nextFunctionId++);
          return [key, `fn#${functionIds.get(value)}`];
        }
        if (value instanceof Uint8Array) return [key, Buffer.from(value).toString('base64')];
        if (value instanceof Date) return [key, value.toISOString()];
        return [key, value];
      }),
  );
}

/** The message of the `LoginError` when no valid credentials are left after a re-login. */
export const OUT_OF_CREDENTIALS = 'Ran out of valid credentials. Consider adding a login handler or a kubeconfig.';

/**
 * Seconds to wait before using the credentials a login re-issued after its 1st, 2nd, … 401 in a
 * row (R-SEC-22); once they are used up, the next rejection is the login's last.
 */
export const REISSUE_BACKOFFS: readonly number[] = [0, 5];

/** What a rejected login is told to do (the end of the `401 Unauthorized …` message). */
const ADVICE =
  'Renew or fix these credentials (a revoked or expired token, a client certificate the cluster does not trust, a plugin or login handler ' +
  'that logs in to another account), then restart the operator.';

/** The 401s in a row of one login (by its key), and the last credentials rejected. */
interface Streak {
  count: number;
  at: number;
  info: Readonly<ConnectionInfo>;
}

/** Who credentials authenticate as, for messages. */
function principalOf(key: string, info: ConnectionInfo): string {
  return info.principal ?? `the credentials of login ${JSON.stringify(key)}`;
}

/**
 * The credentials vault of R-AUTH-3 (Kopf: `credentials.Vault`).
 *
 * States: *waiting* (initially, and after the last credentials were invalidated or expired —
 * `depleted` is on, requests wait), *ready* (`readiness` is on), *exhausted* (a `populate()`
 * brought nothing valid — requests fail with `LoginError` until the next populate).
 *
 * @example
 * const vault = new Vault();
 * vault.populate({ kubeconfig: loginWithKubeconfig() });
 * const item = await vault.select(signal);
 */
export class Vault {
  /** On while the vault holds valid credentials. */
  readonly readiness = new toggles.Toggle(false, 'readiness');
  /** On while the vault is empty and needs (re-)authentication; the login activity waits for it. */
  readonly depleted = new toggles.Toggle(true, 'depleted');
  private items: VaultItem[] = [];
  private readonly invalid = new Set<string>();
  private exhausted = false;
  private exhaustion: string | undefined;
  private readonly waiters = new Set<() => void>();
  private readonly clock: Pick<clocks.Clock, 'now'> & Partial<Pick<clocks.Clock, 'schedule'>>;
  private readonly random: () => number;
  private readonly backoffs: readonly number[];
  /** The 401s in a row, by login key (R-SEC-22). */
  private readonly streaks = new Map<string, Streak>();
  /** Re-issued credentials not to be used before the time given (ms), by item. */
  private readonly held = new Map<VaultItem, number>();

  /**
   * @param options.clock for expiry checks and the back-offs of re-issued credentials (default wall
   *   time and real timers; without `schedule`, no back-off).
   * @param options.random for tie-breaking.
   * @param options.reissueBackoffs see `REISSUE_BACKOFFS` (seconds).
   */
  constructor(options?: {
    readonly clock?: Pick<clocks.Clock, 'now'> & Partial<Pick<clocks.Clock, 'schedule'>>;
    readonly random?: () => number;
    readonly reissueBackoffs?: readonly number[];
  }) {
    this.clock = options?.clock ?? { now: () => Date.now(), schedule: (ms, callback) => clearer(setTimeout(callback, ms)) };
    this.random = options?.random ?? Math.random;
    this.backoffs = options?.reissueBackoffs ?? REISSUE_BACKOFFS;
  }

  /** The valid, unexpired credentials currently held, highest priority first. */
  current(): readonly VaultItem[] {
    this.expire();
    return [...this.items].sort((a, b) => (b.info.priority ?? 0) - (a.info.priority ?? 0));
  }

  /**
   * Adds credentials by key (replacing earlier ones of the same key). Null entries, expired ones and
   * ones invalidated before are skipped. Returns how many were accepted. If the vault is still empty
   * afterwards, it becomes exhausted: waiting and later `select()` calls fail with `LoginError`.
   *
   * @param options.reason the message of that `LoginError` if the vault stays empty (default
   *   `OUT_OF_CREDENTIALS`), e.g. what the built-in logins looked for and did not find. When
   *   credentials were refused for their 401s (R-SEC-22), the message says that instead.
   */
  populate(
    entries: Readonly<Record<string, ConnectionInfo | null | undefined>> | Iterable<readonly [string, ConnectionInfo | null | undefined]>,
    options?: { readonly reason?: string },
  ): number {
    const pairs = Symbol.iterator in entries ? [...(entries as Iterable<readonly [string, ConnectionInfo | null | undefined]>)] : Object.entries(entries);
    let accepted = 0;
    let refusal: string | undefined;
    for (const [key, raw] of pairs) {
      if (raw == null) continue;
      const info = connectionInfo(raw);
      const streak = this.streaks.get(key);
      if (this.invalid.has(fingerprint(info))) {
        if (streak) refusal ??= this.refusal(key, streak, 'and the login gave the same ones again.');
        continue;
      }
      if (this.isExpired(info)) continue;
      if (streak && streak.count > this.backoffs.length) {
        const times = `${streak.count} times in a row, also those the login re-issued after each 401.`;
        refusal ??= this.refusal(key, streak, times);
        continue;
      }
      this.items = this.items.filter((item) => item.key !== key);
      const item: VaultItem = Object.freeze({ key, info });
      this.items.push(item);
      if (streak) this.hold(item, streak.at + (this.backoffs[streak.count - 1] ?? 0) * 1000);
      accepted += 1;
    }
    for (const item of this.held.keys()) if (!this.items.includes(item)) this.held.delete(item);
    this.expire();
    this.exhausted = this.items.length === 0;
    this.exhaustion = refusal ?? options?.reason;
    this.sync();
    return accepted;
  }

  /** The one line of a login refused for its 401s (R-SEC-22). */
  private refusal(key: string, streak: Streak, why: string): string {
    const server = streak.info.server.replace(/\/+$/, '');
    const rejected = streak.count === 1 ? `rejected these credentials, ${why}` : `rejected the credentials ${why}`;
    return `401 Unauthorized from ${server} as ${principalOf(key, streak.info)}: the API server ${rejected} ${ADVICE}`;
  }

  /** Keeps re-issued credentials from use until `until` (ms on the clock), if the clock can wake us. */
  private hold(item: VaultItem, until: number): void {
    const delay = until - this.clock.now();
    if (delay <= 0 || this.clock.schedule === undefined) return;
    this.held.set(item, until);
    this.clock.schedule(delay, () => {
      if (this.held.delete(item)) this.sync();
    });
  }

  /**
   * Picks credentials for a request: the highest priority, randomly among equals. Waits while the
   * vault is depleted (until `populate()`), or until `signal` aborts (rejecting with its reason).
   *
   * @throws LoginError when the vault is exhausted.
   */
  async select(signal?: AbortSignal): Promise<VaultItem> {
    for (;;) {
      signal?.throwIfAborted();
      const item = this.selectNow();
      if (item !== undefined) return item;
      if (this.exhausted) throw new errors.LoginError(this.exhaustion ?? OUT_OF_CREDENTIALS);
      await this.waitForChange(signal);
    }
  }

  /** `select()` without waiting: credentials if the vault holds valid ones now, else `undefined`. */
  selectNow(): VaultItem | undefined {
    this.expire();
    const items = this.held.size === 0 ? this.items : this.items.filter((item) => !this.held.has(item));
    if (items.length === 0) return undefined;
    if (items.length === 1) return items[0];
    const top = Math.max(...items.map((item) => item.info.priority ?? 0));
    const best = items.filter((item) => (item.info.priority ?? 0) === top);
    return best[Math.min(best.length - 1, Math.floor(this.random() * best.length))]!;
  }

  /**
   * Marks credentials as invalid (e.g. after HTTP 401): they are removed and never accepted again,
   * and their login's streak of 401s grows by one (R-SEC-22). If nothing is left, the vault becomes
   * depleted and requests wait for a re-login.
   */
  invalidate(item: VaultItem): void {
    const print = fingerprint(item.info);
    if (!this.invalid.has(print)) {
      // Concurrent requests with the same credentials all get a 401: it counts once.
      this.invalid.add(print);
      const streak = this.streaks.get(item.key);
      this.streaks.set(item.key, { count: (streak?.count ?? 0) + 1, at: this.clock.now(), info: item.info });
    }
    this.items = this.items.filter((other) => fingerprint(other.info) !== print);
    this.held.delete(item);
    this.sync();
  }

  /**
   * Reports an answer other than 401 to a request with these credentials: the API server accepts
   * them, so their login's streak of 401s is over (R-SEC-22). Cheap when there is no streak.
   */
  accepted(item: VaultItem): void {
    if (this.streaks.size > 0 && this.streaks.has(item.key) && this.items.includes(item)) this.streaks.delete(item.key);
  }

  /** Whether these credentials were invalidated before. */
  isInvalid(info: ConnectionInfo): boolean {
    return this.invalid.has(fingerprint(info));
  }

  private isExpired(info: ConnectionInfo): boolean {
    return info.expiration !== undefined && info.expiration.getTime() <= this.clock.now();
  }

  private expire(): void {
    // Called for every request: allocate only when something did expire.
    if (!this.items.some((item) => this.isExpired(item.info))) return;
    this.items = this.items.filter((item) => !this.isExpired(item.info));
    for (const item of this.held.keys()) if (!this.items.includes(item)) this.held.delete(item);
    this.sync();
  }

  private sync(): void {
    const empty = this.items.length === 0;
    if (!empty) this.exhausted = false;
    // Held credentials keep a re-login away, but are no credentials to use yet.
    this.readiness.turnTo(this.items.some((item) => !this.held.has(item)));
    this.depleted.turnTo(empty);
    for (const wake of [...this.waiters]) wake();
  }

  private waitForChange(signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.waiters.delete(wake);
        reject(signal!.reason);
      };
      const wake = (): void => {
        this.waiters.delete(wake);
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.waiters.add(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** A real timer's canceller (the default clock's `schedule`). */
function clearer(timer: ReturnType<typeof setTimeout>): () => void {
  timer.unref();
  return () => clearTimeout(timer);
}
