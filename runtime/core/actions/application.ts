/**
 * Applying a cycle's accumulated patch to the object (R-PATCH-2..5, R-QUEUE-6): up to four
 * requests — merge-patch of `/status`, merge-patch of the object, JSON-patch of the object and of
 * `/status` (transformation functions, prefixed with a `test` of the resourceVersion) — with the
 * exact debug logs, 404 meaning "the object is gone", 422 on a JSON-patch carrying the functions
 * over to the next cycle, and the inconsistency warning when the server did not store what was
 * merge-patched (the visible symptom of status pruning by structural schemas, P-1).
 *
 * Two things make the application safe against lost responses and crashes, beyond Kopf:
 * - a request that failed when the server may have stored it (the connection reset after sending,
 *   a timeout, a 5xx) is not resent blindly: the object is re-read, and if it already holds what
 *   the request writes, the re-read body is taken as the response (its resourceVersion is what
 *   consistency then waits for); a vanished object is "gone", as a 404 is (R-PATCH-9); a re-read
 *   that is forbidden (403) verifies nothing, and the write is resent (R-SEC-2);
 * - the status (handlers' results) is written before the object's merge-patch (progress and
 *   diff-base), so no crash can leave a handler marked done without its result (R-PATCH-10).
 */
import * as errors from '../../cogs/client/errors.js';
import type * as api from '../../cogs/client/api.js';
import type * as bodies from '../../cogs/structs/bodies.js';
import * as dicts from '../../cogs/structs/dicts.js';
import * as jsonpatches from '../../cogs/structs/jsonpatches.js';
import * as loggers from '../../cogs/structs/loggers.js';
import type * as patches from '../../cogs/structs/patches.js';
import type * as references from '../../cogs/structs/references.js';

export interface Applied {
  /** The freshest body known afterwards: the last response, or the processed body. */
  readonly body: bodies.RawBody;
  /** The resourceVersion of the last successful response (undefined if nothing was sent). */
  readonly resourceVersion: string | undefined;
  /** Whether any request was sent. */
  readonly sent: boolean;
  /** The object no longer exists (404). */
  readonly gone: boolean;
  /** A read found it gone, not only a PATCH's 404 (re-reading it tells nothing new). */
  readonly readGone: boolean;
  /** Transformation functions to retry on the next cycle (after a 422). */
  readonly leftoverFns: ((body: object) => void)[];
}

type Fn = (body: object) => void;

export async function applyPatch(options: {
  readonly api: Pick<api.KubeReader, 'get'> & api.KubeWriter;
  readonly resource: references.Resource;
  readonly body: bodies.RawBody;
  readonly patch: patches.PatchBase<object>;
  readonly logger: loggers.Logger;
  readonly signal?: AbortSignal;
}): Promise<Applied> {
  const { api: client, resource, patch, logger } = options;
  const statusSubresource = resource.subresources.includes('status');
  const name = options.body.metadata?.name ?? '';
  const namespace = resource.namespaced ? (options.body.metadata?.namespace ?? null) : null;
  let fresh = options.body;
  let resourceVersion: string | undefined;
  let sent = false;
  let readGone = false;
  const gone = (): Applied => {
    logger.debug('Patching was skipped: the object does not exist anymore.');
    return { body: fresh, resourceVersion, sent, gone: true, readGone, leftoverFns: [] };
  };
  // After a failure that may have come after the write (its response lost), what is stored decides:
  // the object as re-read, if it already holds what the request writes; else the request is resent.
  // A vanished object ends the application like a 404 does. A re-read the operator may not do (403,
  // no `get` in its RBAC: reported once by the client) verifies nothing, and the write is resent as
  // if not stored (R-SEC-2): a merge-patch stores the same values again, and a JSON-patch whose
  // resourceVersion test then fails is carried over to the next cycle — never a handler run again.
  const verifier = (stored: (current: bodies.RawBody) => boolean) => async (): Promise<bodies.RawBody | undefined> => {
    try {
      const current = await client.get(resource, namespace, name, { signal: options.signal });
      return stored(current) ? current : undefined;
    } catch (error) {
      if (errors.isForbidden(error)) return undefined;
      if (error instanceof errors.ApiNotFoundError) readGone = true;
      throw error;
    }
  };
  const send = async (
    body: unknown,
    opts: { subresource?: string; type: 'merge' | 'json'; stored: (current: bodies.RawBody) => boolean },
  ): Promise<bodies.RawBody | undefined> => {
    sent = true;
    try {
      const { stored, ...rest } = opts;
      const response = await client.patch(resource, namespace, name, body, { ...rest, signal: options.signal, verify: verifier(stored) });
      resourceVersion = response.metadata?.resourceVersion ?? resourceVersion;
      return response;
    } catch (error) {
      if (error instanceof errors.ApiNotFoundError) return undefined;
      throw error;
    }
  };

  const debug = loggers.isEnabledFor(logger, 'debug');
  const { main, status } = patch.split({ statusSubresource });
  // The status goes first: it carries the handlers' results, and the object's merge-patch their
  // progress and the diff-base. Stored in this order, a crash between the two requests can leave a
  // result whose handler then runs again, never a handler marked done whose result is lost.
  if (Object.keys(status).length) {
    if (debug) logger.debug(`Merge-patching the status with: ${JSON.stringify(loggers.redacted(logger, status))}`);
    try {
      const response = await send(status, {
        subresource: 'status',
        type: 'merge',
        stored: (current) => inconsistencies(status, current).length === 0,
      });
      if (!response) return gone();
      warnInconsistencies(status, response, logger);
      fresh = response;
    } catch (error) {
      // A status the server refuses for good must not hold back the rest: the progress and the
      // finalizer still go out; what the status carried is lost, and said so.
      if (!isRefusal(error)) throw error;
      logger.error(`The server refused the status; its fields are not stored: ${error.message} Status: ${JSON.stringify(loggers.redacted(logger, status))}`);
    }
  }
  if (Object.keys(main).length) {
    if (debug) logger.debug(`Merge-patching the resource with: ${JSON.stringify(loggers.redacted(logger, main))}`);
    const response = await send(main, { type: 'merge', stored: (current) => inconsistencies(main, current).length === 0 });
    if (!response) return gone();
    warnInconsistencies(main, response, logger);
    fresh = response;
  }

  const fns = patch.fns as unknown as Fn[];
  if (fns.length) {
    // The merge-patch is already in `fresh` if it was sent; apply only the functions then.
    const merge = !sent;
    const split = jsonpatches.splitJsonPatch(patch.toJsonPatch(fresh, { merge }), { statusSubresource });
    const parts: ['main' | 'status', string | undefined][] = [
      ['main', undefined],
      ['status', 'status'],
    ];
    for (const [which, subresource] of parts) {
      const part = split[which];
      if (!part.length) continue;
      const request = [jsonpatches.resourceVersionTest(fresh), ...part];
      if (debug) logger.debug(`JSON-patching the resource with: ${JSON.stringify(loggers.redactedJsonPatch(logger, request))}`);
      // Stored when the functions have nothing left to change in this part of the object as re-read.
      const stored = (current: bodies.RawBody): boolean =>
        jsonpatches.splitJsonPatch(patch.toJsonPatch(current, { merge }), { statusSubresource })[which].length === 0;
      try {
        const response = await send(request, { subresource, type: 'json', stored });
        if (!response) return gone();
        fresh = response;
      } catch (error) {
        if (error instanceof errors.ApiUnprocessableError && isConflict(error)) {
          logger.debug(
            `Could not apply the patch in full due to conflicts with newer changes. Will try on the next cycle soon. Remaining: ${JSON.stringify(loggers.redactedJsonPatch(logger, part))}`,
          );
          return { body: fresh, resourceVersion, sent, gone: false, readGone, leftoverFns: [...fns] };
        }
        throw error;
      }
    }
  }
  return { body: fresh, resourceVersion, sent, gone: false, readGone, leftoverFns: [] };
}

/** A definitive refusal of the request's content (400, 422), as opposed to a transient failure. */
function isRefusal(error: unknown): error is errors.ApiClientError {
  return error instanceof errors.ApiClientError && (error.status === 400 || error.status === 422);
}

/**
 * Whether a 422 to a JSON-patch means that the patch did not apply to a newer object (a conflict:
 * its `test` of the resourceVersion failed; retried on the next cycle), rather than that the server
 * refuses the patched object: a validation error names the fields at fault in its causes (a
 * limit, a schema or a rule the object breaks, which no retry fixes; the caller reports it, R-PATCH-11).
 */
function isConflict(error: errors.ApiUnprocessableError): boolean {
  const causes = typeof error.payload === 'object' ? (error.payload.details?.causes ?? []) : [];
  return !causes.some((cause) => typeof cause.field === 'string' && cause.field !== '');
}

/**
 * Compares what was merge-patched with what the server returned (R-PATCH-5). Removals to an empty
 * map/list of `metadata.annotations`, `metadata.labels`, `metadata.finalizers` are harmless.
 */
export function inconsistencies(sentPatch: dicts.JsonObject, response: unknown): string[][] {
  const found: string[][] = [];
  const walk = (patchValue: unknown, actual: unknown, path: string[]): void => {
    if (dicts.isObject(patchValue)) {
      const container = dicts.isObject(actual) ? actual : undefined;
      for (const [key, value] of Object.entries(patchValue)) walk(value, container?.[key], [...path, key]);
      if (Object.keys(patchValue).length === 0 && !dicts.isObject(actual) && !harmless(path)) found.push(path);
      return;
    }
    if (patchValue === null) {
      if (actual !== undefined && actual !== null) found.push(path);
      return;
    }
    if (!dicts.deepEqual(patchValue, actual) && !(harmless(path) && isEmpty(patchValue))) found.push(path);
  };
  walk(sentPatch, response, []);
  return found;
}

const HARMLESS = ['metadata.annotations', 'metadata.labels', 'metadata.finalizers'];
const harmless = (path: string[]): boolean => HARMLESS.includes(path.join('.'));
const isEmpty = (v: unknown): boolean => (Array.isArray(v) && v.length === 0) || (dicts.isObject(v) && Object.keys(v).length === 0);

function warnInconsistencies(sentPatch: dicts.JsonObject, response: unknown, logger: loggers.Logger): void {
  const paths = inconsistencies(sentPatch, response);
  if (!paths.length) return;
  const diff = paths.map((path) => ['change', path, dicts.resolve(sentPatch, path) ?? null, dicts.resolve(response, path) ?? null] as const);
  logger.warning(`Merge-patching finished with inconsistencies: ${JSON.stringify(loggers.redactedDiff(logger, diff))}`);
}
