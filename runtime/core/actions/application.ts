/**
 * Applying a cycle's accumulated patch to the object (R-PATCH-2..5, R-QUEUE-6): up to four
 * requests — merge-patch of the object, merge-patch of `/status`, JSON-patch of the object and of
 * `/status` (transformation functions, prefixed with a `test` of the resourceVersion) — with the
 * exact debug logs, 404 meaning "the object is gone", 422 on a JSON-patch carrying the functions
 * over to the next cycle, and the inconsistency warning when the server did not store what was
 * merge-patched (the visible symptom of status pruning by structural schemas, P-1).
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
  /** Transformation functions to retry on the next cycle (after a 422). */
  readonly leftoverFns: ((body: object) => void)[];
}

type Fn = (body: object) => void;

export async function applyPatch(options: {
  readonly api: api.KubeWriter;
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
  const gone = (): Applied => {
    logger.debug('Patching was skipped: the object does not exist anymore.');
    return { body: fresh, resourceVersion, sent, gone: true, leftoverFns: [] };
  };
  const send = async (body: unknown, opts: { subresource?: string; type: 'merge' | 'json' }): Promise<bodies.RawBody | undefined> => {
    sent = true;
    try {
      const response = await client.patch(resource, namespace, name, body, { ...opts, signal: options.signal });
      resourceVersion = response.metadata?.resourceVersion ?? resourceVersion;
      return response;
    } catch (error) {
      if (error instanceof errors.ApiNotFoundError) return undefined;
      throw error;
    }
  };

  const debug = loggers.isEnabledFor(logger, 'debug');
  const { main, status } = patch.split({ statusSubresource });
  if (Object.keys(main).length) {
    if (debug) logger.debug(`Merge-patching the resource with: ${JSON.stringify(main)}`);
    const response = await send(main, { type: 'merge' });
    if (!response) return gone();
    warnInconsistencies(main, response, logger);
    fresh = response;
  }
  if (Object.keys(status).length) {
    if (debug) logger.debug(`Merge-patching the status with: ${JSON.stringify(status)}`);
    const response = await send(status, { subresource: 'status', type: 'merge' });
    if (!response) return gone();
    warnInconsistencies(status, response, logger);
    fresh = response;
  }

  const fns = patch.fns as unknown as Fn[];
  if (fns.length) {
    // The merge-patch is already in `fresh` if it was sent; apply only the functions then.
    const ops = patch.toJsonPatch(fresh, { merge: !sent });
    const split = jsonpatches.splitJsonPatch(ops, { statusSubresource });
    const parts: [jsonpatches.JsonPatchOperation[], string | undefined][] = [
      [split.main, undefined],
      [split.status, 'status'],
    ];
    for (const [part, subresource] of parts) {
      if (!part.length) continue;
      const request = [jsonpatches.resourceVersionTest(fresh), ...part];
      if (debug) logger.debug(`JSON-patching the resource with: ${JSON.stringify(request)}`);
      try {
        const response = await send(request, { subresource, type: 'json' });
        if (!response) return gone();
        fresh = response;
      } catch (error) {
        if (error instanceof errors.ApiUnprocessableError && isUnappliable(error)) {
          logger.debug(
            `Could not apply the patch in full due to conflicts with newer changes. Will try on the next cycle soon. Remaining: ${JSON.stringify(part)}`,
          );
          return { body: fresh, resourceVersion, sent, gone: false, leftoverFns: [...fns] };
        }
        throw error;
      }
    }
  }
  return { body: fresh, resourceVersion, sent, gone: false, leftoverFns: [] };
}

/**
 * Whether a 422 to a JSON-patch means that the patch did not apply to a newer object (a conflict:
 * its `test` of the resourceVersion failed; retried on the next cycle), rather than that the server
 * refuses the patched object: a validation error names the fields at fault in its causes (a
 * limit, a schema or a rule the object breaks, which no retry fixes; the caller reports it, R-PATCH-9).
 */
function isUnappliable(error: errors.ApiUnprocessableError): boolean {
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
  const diff = paths.map((path) => ['change', path, dicts.resolve(sentPatch, path) ?? null, dicts.resolve(response, path) ?? null]);
  logger.warning(`Merge-patching finished with inconsistencies: ${JSON.stringify(diff)}`);
}
