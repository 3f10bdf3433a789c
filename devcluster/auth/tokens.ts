/**
 * The bearer-token table of D-AUTH-2: tokens added, revoked and re-timed at run time (through
 * `cluster.auth.addToken`, `revokeToken`, `setExpiry`), looked up by `authentication.ts` when a
 * request starts. Time is always passed in (`now`), so tests drive expiry with an injected clock.
 * Also builds the entries of service-account tokens (TokenRequest, D-AUTH-9).
 */
import * as nodecrypto from 'node:crypto';
import * as json from '../json.js';
import * as users from './users.js';

export type { UserInfo } from './users.js';

/** One row of the token table. */
export interface TokenEntry {
  token: string;
  username: string;
  uid?: string;
  groups?: readonly string[];
  extra?: Readonly<Record<string, readonly string[]>>;
  /** The token is rejected before this instant. */
  notBefore?: Date;
  /** The token is rejected from this instant on. */
  expiresAt?: Date;
  /**
   * Who the token is for (service-account tokens): it authenticates only where one of these is
   * accepted — by default the API server's own audience, `API_AUDIENCE`.
   */
  audiences?: readonly string[];
}

/** The outcome of `TokenTable.check`: the token's user, or why it does not authenticate now. */
export type TokenCheck =
  | { ok: true; user: users.UserInfo; audiences: readonly string[] }
  | { ok: false; problem: 'unknown' | 'notYetValid' | 'expired' | 'audience' };

/** The audience of the devcluster's API server (and the issuer of its service-account tokens), as a kind cluster's. */
export const API_AUDIENCE = 'https://kubernetes.default.svc.cluster.local';

/** A malformed entry passed to `TokenTable.add`. */
export class InvalidTokenEntryError extends Error {
  readonly code = 'InvalidTokenEntry' as const;
  constructor(message: string) {
    super(message);
    this.name = 'InvalidTokenEntryError';
  }
}

interface StoredEntry {
  readonly user: users.UserInfo;
  readonly notBefore: number | undefined;
  expiresAt: number | undefined;
  readonly audiences: readonly string[] | undefined;
}

/**
 * Maps bearer tokens to users.
 *
 * @example
 * const table = new tokens.TokenTable();
 * table.add({ token: 's3cret', username: 'alice', groups: ['devs'], expiresAt: new Date(Date.now() + 60_000) });
 * table.lookup('s3cret', new Date()); // { username: 'alice', uid: '', groups: ['devs', 'system:authenticated'] }
 */
export class TokenTable {
  readonly #entries = new Map<string, StoredEntry>();

  /** Adds a token, replacing any entry with the same token. The entry is copied. */
  add(entry: TokenEntry): void {
    if (typeof entry.token !== 'string' || entry.token === '' || /\s/.test(entry.token)) {
      throw new InvalidTokenEntryError('token must be a non-empty string without whitespace');
    }
    if (typeof entry.username !== 'string' || entry.username === '') {
      throw new InvalidTokenEntryError(`token entry needs a username`);
    }
    const notBefore = timeOf(entry.notBefore, 'notBefore');
    const expiresAt = timeOf(entry.expiresAt, 'expiresAt');
    const user = users.authenticatedUser({ username: entry.username, uid: entry.uid, groups: entry.groups, extra: entry.extra });
    const audiences = entry.audiences ? [...entry.audiences] : undefined;
    this.#entries.set(entry.token, { user, notBefore, expiresAt, audiences });
  }

  /** Removes a token; later lookups fail. Returns whether it was present. */
  revoke(token: string): boolean {
    return this.#entries.delete(token);
  }

  /** Changes (or, with `undefined`, removes) the expiry of a token. Returns whether it was present. */
  setExpiry(token: string, expiresAt: Date | undefined): boolean {
    const entry = this.#entries.get(token);
    if (!entry) return false;
    entry.expiresAt = timeOf(expiresAt, 'expiresAt');
    return true;
  }

  /** Whether the table holds the token (regardless of its validity period). */
  has(token: string): boolean {
    return this.#entries.has(token);
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * The user of a token valid at `now`, as a fresh copy; `undefined` for an unknown, revoked,
   * not-yet-valid (`now < notBefore`) or expired (`now >= expiresAt`) token, and for a token issued
   * for audiences of which none is among `audiences` (default: the API server's).
   */
  lookup(token: string, now: Date, audiences: readonly string[] = [API_AUDIENCE]): users.UserInfo | undefined {
    const checked = this.check(token, now, audiences);
    return checked.ok ? checked.user : undefined;
  }

  /** Like `lookup`, but says why a token is refused (TokenReview reports it, D-AUTH-14). */
  check(token: string, now: Date, audiences: readonly string[] = [API_AUDIENCE]): TokenCheck {
    const entry = this.#entries.get(token);
    if (!entry) return { ok: false, problem: 'unknown' };
    if (entry.audiences && !entry.audiences.some((a) => audiences.includes(a))) return { ok: false, problem: 'audience' };
    const t = now.getTime();
    if (entry.notBefore !== undefined && t < entry.notBefore) return { ok: false, problem: 'notYetValid' };
    if (entry.expiresAt !== undefined && t >= entry.expiresAt) return { ok: false, problem: 'expired' };
    return { ok: true, user: json.deepCopy(entry.user), audiences: entry.audiences ?? [API_AUDIENCE] };
  }
}

function timeOf(value: Date | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw new InvalidTokenEntryError(`${field} must be a valid Date`);
  return value.getTime();
}

/** A fresh random opaque token (32 bytes, base64url). */
export function generateToken(): string {
  return nodecrypto.randomBytes(32).toString('base64url');
}

/**
 * The table entry of a service-account token (TokenRequest, D-AUTH-9): user
 * `system:serviceaccount:<ns>:<name>`, groups `system:serviceaccounts` and
 * `system:serviceaccounts:<ns>`, expiring `expirationSeconds` (default 3600) after `now`.
 */
export function serviceAccountTokenEntry(opts: {
  namespace: string;
  name: string;
  uid?: string;
  now: Date;
  expirationSeconds?: number;
  token?: string;
}): TokenEntry & { expiresAt: Date } {
  const seconds = opts.expirationSeconds ?? 3600;
  const entry: TokenEntry & { expiresAt: Date } = {
    token: opts.token ?? generateToken(),
    username: users.serviceAccountUsername(opts.namespace, opts.name),
    groups: users.serviceAccountGroups(opts.namespace),
    expiresAt: new Date(opts.now.getTime() + seconds * 1000),
  };
  if (opts.uid !== undefined) entry.uid = opts.uid;
  return entry;
}
