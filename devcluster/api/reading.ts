/**
 * get and list: reading stored objects with the resourceVersion semantics clients depend on
 * (D-VERB-2..8) — the current state, "not older than" (waiting, then 504), or an exact snapshot
 * (410 once compacted) — with selectors, pagination from one snapshot with continue tokens, and the
 * list envelope (built-in items without apiVersion/kind, D-WIRE-19). Operators' list-then-watch
 * relies on these rules to miss no change between the list and the watch.
 */
import * as statuses from '../server/statuses.js';
import * as revisions from '../store/revisions.js';
import type * as core from './core.js';
import type * as filters from './filters.js';
import * as objects from './objects.js';
import * as options from './options.js';
import * as resources from './resources.js';
import type { JsonObject } from '../json.js';

function tooLargeRv(requested: number, current: number): statuses.ApiError {
  return new statuses.ApiError(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    retryAfterSeconds: 1,
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
  });
}

/** Waits (up to the configured time) until the store reached `rv`, else 504 (D-VERB-2). */
export async function awaitRevision(c: core.Core, rv: number): Promise<void> {
  if (rv <= c.store.revision) return;
  const reached = await c.waitForRevision(rv, c.options.tooLargeRvWaitMs);
  if (!reached) throw tooLargeRv(rv, c.store.revision);
}

export async function get(
  c: core.Core,
  type: resources.ResourceType,
  namespace: string | undefined,
  name: string,
  resourceVersion: string | undefined,
): Promise<JsonObject> {
  options.checkResourceVersion(resourceVersion);
  if (resourceVersion && resourceVersion !== '0') await awaitRevision(c, Number(resourceVersion));
  const stored = c.store.get(type.storage, revisions.objectKey(type.namespaced ? namespace : undefined, name));
  if (!stored) throw statuses.notFound({ group: type.group, resource: type.resource, kind: type.kind }, name);
  return stored;
}

interface ContinueToken {
  v: string;
  rv: number;
  start: string;
}

function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: `${start}\u0000` })).toString('base64url');
}

function decodeContinue(token: string): ContinueToken {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as ContinueToken;
    if (typeof parsed.rv !== 'number' || typeof parsed.start !== 'string') throw new Error('bad shape');
    return { ...parsed, start: parsed.start.replace(/\u0000$/, '') };
  } catch {
    throw statuses.badRequest(`invalid continue token: ${token}`);
  }
}

export interface ListResult {
  items: JsonObject[];
  resourceVersion: string;
  continueToken?: string;
  remainingItemCount?: number;
}

export async function list(c: core.Core, type: resources.ResourceType, filter: filters.ObjectFilter, o: options.ListOptions): Promise<ListResult> {
  let entries: revisions.Entry[];
  let snapshotRev: number;
  if (o.continueToken) {
    const token = decodeContinue(o.continueToken);
    snapshotRev = token.rv === -1 ? c.store.revision : token.rv;
    const snapshot = c.store.listAt(type.storage, snapshotRev, filter.prefix);
    if (!snapshot) {
      throw new statuses.ApiError(
        410,
        'Expired',
        'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
        undefined,
        { continueToken: encodeContinueRaw(-1, token.start) },
      );
    }
    entries = snapshot.filter((e) => e.key >= token.start);
  } else {
    const rv = o.resourceVersion;
    const exact = o.resourceVersionMatch === 'Exact' || (o.resourceVersionMatch === undefined && rv !== undefined && rv !== '0' && o.limit > 0);
    if (rv !== undefined && rv !== '0') await awaitRevision(c, Number(rv));
    if (exact && rv !== undefined) {
      snapshotRev = Number(rv);
      const snapshot = c.store.listAt(type.storage, snapshotRev, filter.prefix);
      if (!snapshot) throw statuses.expiredList();
      entries = snapshot;
    } else {
      snapshotRev = c.store.revision;
      entries = c.store.entries(type.storage, filter.prefix);
    }
  }
  const matching = entries.filter((e) => filter.matches(e.object));
  if (o.limit > 0 && matching.length > o.limit) {
    const page = matching.slice(0, o.limit);
    const next = matching[o.limit]!;
    return {
      items: page.map((e) => e.object),
      resourceVersion: String(snapshotRev),
      continueToken: encodeContinueRaw(snapshotRev, next.key),
      remainingItemCount: filter.selective ? undefined : matching.length - o.limit,
    };
  }
  return { items: matching.map((e) => e.object), resourceVersion: String(snapshotRev) };
}

function encodeContinueRaw(rv: number, start: string): string {
  return encodeContinue(rv, start);
}

/**
 * The list envelope of D-WIRE-19, in the order the server writes it (D-BI-24): built-in lists are Go
 * structs (`kind`, `apiVersion`, `metadata`, `items`; ListMeta's `resourceVersion`, `continue`,
 * `remainingItemCount`), custom resource lists unstructured maps with sorted keys.
 */
export function listBody(type: resources.ResourceType, result: ListResult): JsonObject {
  const items = result.items.map((o) => objects.toListItem(type, o));
  const apiVersion = resources.apiVersionOf(type);
  if (!type.builtin) {
    const metadata: JsonObject = {};
    if (result.continueToken) metadata['continue'] = result.continueToken;
    if (result.remainingItemCount !== undefined) metadata['remainingItemCount'] = result.remainingItemCount;
    metadata['resourceVersion'] = result.resourceVersion;
    return { apiVersion, items, kind: type.listKind, metadata };
  }
  const metadata: JsonObject = { resourceVersion: result.resourceVersion };
  if (result.continueToken) metadata['continue'] = result.continueToken;
  if (result.remainingItemCount !== undefined) metadata['remainingItemCount'] = result.remainingItemCount;
  return { kind: type.listKind, apiVersion, metadata, items };
}
