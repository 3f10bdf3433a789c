/**
 * Who may read an endpoint: the authentication and authorization of secure metrics (R-SEC-10..12).
 *
 * An operator's metrics name its resources, handlers, the API server's address and the Node
 * version; in a cluster, anyone who can reach the pod could read them. So, as controller-runtime's
 * `WithAuthenticationAndAuthorization` filter does, a guarded endpoint lets a request through only
 * when the Kubernetes API server vouches for its caller: the bearer token of the request is
 * reviewed with a `TokenReview` (authentication.k8s.io/v1), and the user it names with a
 * `SubjectAccessReview` (authorization.k8s.io/v1) for `get` on the non-resource URL of the request
 * (`/metrics`) — which RBAC grants through a ClusterRole with `nonResourceURLs: ["/metrics"]`.
 *
 * - No bearer token, or one the API server does not authenticate → 401, before any review is sent
 *   when there is no token at all.
 * - An authenticated user who is not allowed → 403.
 * - A review that cannot be made (the API server is unreachable, or refuses the operator its own
 *   `create` on the reviews) → 500, logged once when it starts and once when reviews work again;
 *   never let through.
 *
 * Prometheus scrapes every 15–30 s with the same token, so each decision is cached for
 * `ttlSeconds` (10 s) per token and path on the operator's clock, and concurrent requests with the
 * same token share one review: a scrape costs at most one pair of reviews per 10 s. The cache is
 * bounded (`capacity` entries, the oldest dropped first) and keyed by a SHA-256 digest, so the
 * tokens themselves are never kept. HEAD is reviewed as `get`. Nothing of the token or the review
 * is ever logged beyond the user's name (at DEBUG).
 */

import * as nodecrypto from 'node:crypto';
import type * as clocks from '../../cogs/aio/clocks.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import type * as endpoints from './endpoints.js';

/** Sends a review (a JSON object) to its collection path on the API server; answers the server's JSON. */
export type ReviewPoster = (path: string, body: object, signal: AbortSignal) => Promise<unknown>;

export const TOKEN_REVIEWS = '/apis/authentication.k8s.io/v1/tokenreviews';
export const ACCESS_REVIEWS = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

/** Seconds a decision is kept per token and path. */
export const DEFAULT_TTL_SECONDS = 10;
/** Decisions kept at most (each a digest and a verdict: well under 200 bytes). */
export const DEFAULT_CAPACITY = 1000;

/** What `AccessGuard` needs. */
export interface GuardOptions {
  readonly post: ReviewPoster;
  readonly clock: clocks.Clock;
  readonly logger: loggers.Logger;
  /** Default `DEFAULT_TTL_SECONDS`. */
  readonly ttlSeconds?: number;
  /** Default `DEFAULT_CAPACITY`. */
  readonly capacity?: number;
  /**
   * Aborts the reviews in flight (the operator's stop). Reviews are shared by the requests with
   * the same token, so one caller's disconnection does not abort them.
   */
  readonly signal?: AbortSignal;
}

/** The decision about one request. */
export type Verdict =
  | { readonly kind: 'allowed'; readonly user: string }
  | { readonly kind: 'unauthenticated' }
  | { readonly kind: 'forbidden'; readonly user: string }
  | { readonly kind: 'failed' };

/** The user a TokenReview names. */
interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

interface Cached {
  readonly verdict: Verdict;
  readonly expires: number;
}

const TEXT = 'text/plain; charset=utf-8';

/** The bearer token of an `Authorization` header, if it has one. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(value ?? '');
  return match?.[1];
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : undefined;
}

/** The user of a TokenReview's answer, or undefined when it does not authenticate the token. */
function authenticatedUser(answer: unknown): UserInfo | undefined {
  const status = record(record(answer)?.['status']);
  const user = record(status?.['user']);
  if (status?.['authenticated'] !== true || typeof user?.['username'] !== 'string' || user['username'] === '') return undefined;
  const extra = record(user['extra']);
  return {
    username: user['username'],
    ...(typeof user['uid'] === 'string' ? { uid: user['uid'] } : {}),
    ...(strings(user['groups']) ? { groups: strings(user['groups']) } : {}),
    ...(extra ? { extra: Object.fromEntries(Object.entries(extra).flatMap(([key, values]) => (strings(values) ? [[key, strings(values)!]] : []))) } : {}),
  };
}

/**
 * Decides requests by TokenReview and SubjectAccessReview, with the cache of the module's comment.
 *
 * @example
 * const guard = new AccessGuard({ post: (path, body, signal) => client.request({ method: 'POST', path, body, signal }), clock, logger });
 * const endpoint = guard.guard(metricsEndpoint);
 */
export class AccessGuard {
  /** Reviews sent so far (for the operator's own figures and tests). */
  readonly sent = { tokenReviews: 0, accessReviews: 0 };
  private readonly cache = new Map<string, Cached>();
  private readonly running = new Map<string, Promise<Verdict>>();
  private failing = false;
  private readonly ttl: number;
  private readonly capacity: number;

  constructor(private readonly options: GuardOptions) {
    this.ttl = (options.ttlSeconds ?? DEFAULT_TTL_SECONDS) * 1000;
    this.capacity = Math.max(1, options.capacity ?? DEFAULT_CAPACITY);
  }

  /** The decision for a request with this bearer token (or none) to `get` this path. */
  async decide(token: string | undefined, path: string): Promise<Verdict> {
    if (token === undefined) return { kind: 'unauthenticated' };
    const key = nodecrypto.createHash('sha256').update(path).update('\0').update(token).digest('base64');
    const now = this.options.clock.now();
    const cached = this.cache.get(key);
    if (cached !== undefined && cached.expires > now) return cached.verdict;
    if (cached !== undefined) this.cache.delete(key);
    let pending = this.running.get(key);
    if (pending === undefined) {
      pending = this.review(token, path).finally(() => this.running.delete(key));
      this.running.set(key, pending);
    }
    const verdict = await pending;
    if (verdict.kind !== 'failed') this.remember(key, verdict);
    return verdict;
  }

  /** The endpoint, answering 401/403/500 instead of its handler unless the caller may `get` its path. */
  guard(endpoint: endpoints.Endpoint): endpoints.Endpoint {
    return {
      ...endpoint,
      handle: async (request) => {
        const verdict = await this.decide(bearerToken(request.headers['authorization']), request.path);
        switch (verdict.kind) {
          case 'allowed':
            return endpoint.handle(request);
          case 'unauthenticated':
            return { status: 401, contentType: TEXT, body: 'Unauthorized\n', headers: { 'www-authenticate': 'Bearer' } };
          case 'forbidden':
            return { status: 403, contentType: TEXT, body: 'Forbidden\n' };
          case 'failed':
            return { status: 500, contentType: TEXT, body: "The caller's access cannot be reviewed now; the operator's log tells more.\n" };
        }
      },
    };
  }

  private remember(key: string, verdict: Verdict): void {
    this.cache.delete(key);
    while (this.cache.size >= this.capacity) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { verdict, expires: this.options.clock.now() + this.ttl });
  }

  private async review(token: string, path: string): Promise<Verdict> {
    const { post, logger } = this.options;
    const signal = this.options.signal ?? new AbortController().signal;
    let verdict: Verdict;
    try {
      this.sent.tokenReviews += 1;
      const user = authenticatedUser(await post(TOKEN_REVIEWS, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }, signal));
      if (user === undefined) {
        verdict = { kind: 'unauthenticated' };
      } else {
        this.sent.accessReviews += 1;
        const answer = await post(
          ACCESS_REVIEWS,
          {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SubjectAccessReview',
            spec: { user: user.username, uid: user.uid, groups: user.groups, extra: user.extra, nonResourceAttributes: { path, verb: 'get' } },
          },
          signal,
        );
        const allowed = record(record(answer)?.['status'])?.['allowed'] === true;
        verdict = allowed ? { kind: 'allowed', user: user.username } : { kind: 'forbidden', user: user.username };
      }
    } catch (error) {
      if (signal.aborted) throw error;
      if (!this.failing) {
        const text = error instanceof Error ? `${error.name}: ${error.message.split('\n')[0]}` : String(error);
        logger.warning(`Cannot review the access of a caller of ${path} (answering 500 until reviews work): ${text}`);
      }
      this.failing = true;
      return { kind: 'failed' };
    }
    if (this.failing) logger.info(`The access of callers of ${path} can be reviewed again.`);
    this.failing = false;
    logger.debug(
      verdict.kind === 'allowed'
        ? `User ${JSON.stringify(verdict.user)} may get ${path}.`
        : verdict.kind === 'forbidden'
          ? `User ${JSON.stringify(verdict.user)} may not get ${path}: 403.`
          : `A token to get ${path} is not authenticated: 401.`,
    );
    return verdict;
  }
}
