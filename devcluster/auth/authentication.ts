/**
 * Authentication (D-AUTH-1..4): turns what a request presents — an `Authorization` header and
 * whatever Node's TLS layer reports about the client certificate — into a `UserInfo`, or a
 * refusal that the HTTP layer answers with the exact 401 `Unauthorized` Status
 * (`statuses.unauthorized()`).
 *
 * The function is pure: the token table and the current time come in through the context, so a
 * test clock decides token and certificate expiry. The HTTP server reads the request's socket
 * (`getPeerCertificate()`, `authorized`) because it listens with `requestCert: true,
 * rejectUnauthorized: false`, which keeps anonymous and token requests possible on the TLS port.
 *
 * Order, as upstream's authenticator union: a verified client certificate, then a bearer token;
 * when neither yields a user but one of them was presented, the request fails even if anonymous
 * access is on (a foreign or expired certificate, an unknown or expired token); without any
 * credentials the request is anonymous when allowed.
 */
import * as json from '../json.js';
import type * as tokens from './tokens.js';
import * as users from './users.js';

/** The subset of Node's `tls.PeerCertificate` that authentication reads. */
export interface PeerCertificateInfo {
  subject?: { CN?: string | string[]; O?: string | string[] };
  /** As Node renders it, e.g. `Jan  2 03:04:05 2025 GMT`. */
  valid_from?: string;
  valid_to?: string;
}

/** What a request presents. */
export interface AuthenticationRequest {
  /** The raw `Authorization` header. */
  authorization?: string;
  /** `socket.getPeerCertificate()`; Node returns `{}` when the client sent none. */
  peerCertificate?: PeerCertificateInfo;
  /** `socket.authorized`: the certificate chains to the CA given to the server. */
  peerAuthorized?: boolean;
}

export interface AuthenticationContext {
  mode: 'none' | 'enforced';
  /** Whether requests without credentials run as `system:anonymous` (enforced mode only). */
  anonymous: boolean;
  tokens: tokens.TokenTable;
  now: Date;
  /** The user of `mode: "none"` (see `users.adminUser`). */
  adminUser: users.UserInfo;
}

/** How the user was established; useful for logs and tests. */
export type AuthenticationMethod = 'none' | 'certificate' | 'token' | 'anonymous';

export type AuthenticationResult = { ok: true; user: users.UserInfo; method: AuthenticationMethod } | { ok: false };

/**
 * Authenticates a request (D-AUTH-1..4).
 *
 * @example
 * const result = authentication.authenticate({ authorization: 'Bearer s3cret' },
 *   { mode: 'enforced', anonymous: false, tokens: table, now: clock.now(), adminUser });
 * if (!result.ok) throw statuses.unauthorized();
 */
export function authenticate(req: AuthenticationRequest, ctx: AuthenticationContext): AuthenticationResult {
  if (ctx.mode === 'none') return { ok: true, user: json.deepCopy(ctx.adminUser), method: 'none' };

  const certificate = presentedCertificate(req.peerCertificate);
  const bearer = parseBearerToken(req.authorization);

  if (certificate) {
    const user = userFromCertificate(certificate, req.peerAuthorized === true, ctx.now);
    if (user) return { ok: true, user, method: 'certificate' };
  }
  if (bearer !== undefined) {
    const user = ctx.tokens.lookup(bearer, ctx.now);
    if (user) return { ok: true, user, method: 'token' };
  }
  if (certificate || bearer !== undefined) return { ok: false };
  if (ctx.anonymous) return { ok: true, user: users.anonymousUser(), method: 'anonymous' };
  return { ok: false };
}

/**
 * The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), or
 * `undefined` when the header is absent, uses another scheme, or carries an empty token — those
 * count as "no token", as upstream.
 */
export function parseBearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : undefined;
}

/**
 * The user named by a client certificate: `CN` → username, each `O` → a group. `undefined`
 * when the certificate does not chain to the CA, lies outside its validity period at `now`, has
 * unreadable dates, or has no common name.
 */
export function userFromCertificate(cert: PeerCertificateInfo, authorized: boolean, now: Date): users.UserInfo | undefined {
  if (!authorized) return undefined;
  const from = parseCertificateTime(cert.valid_from);
  const to = parseCertificateTime(cert.valid_to);
  const t = now.getTime();
  if (from === undefined || to === undefined || t < from || t > to) return undefined;
  const username = listOf(cert.subject?.CN)[0];
  if (!username) return undefined;
  return users.authenticatedUser({ username, groups: listOf(cert.subject?.O) });
}

function presentedCertificate(cert: PeerCertificateInfo | undefined): PeerCertificateInfo | undefined {
  if (!cert) return undefined;
  if (cert.subject === undefined && cert.valid_from === undefined && cert.valid_to === undefined) return undefined;
  return cert;
}

function listOf(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).filter((v) => v !== '');
}

/** Parses Node's `valid_from`/`valid_to` text (`Mon DD HH:MM:SS YYYY GMT`) or an ISO string. */
export function parseCertificateTime(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const match = /^([A-Z][a-z]{2})\s+(\d{1,2})\s+(\d{2}):(\d{2}):(\d{2})\s+(\d{4})\s+GMT$/.exec(text.trim());
  if (match) {
    const month = MONTHS.indexOf(match[1]!);
    if (month < 0) return undefined;
    return Date.UTC(Number(match[6]), month, Number(match[2]), Number(match[3]), Number(match[4]), Number(match[5]));
  }
  const parsed = Date.parse(text);
  return Number.isNaN(parsed) ? undefined : parsed;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
