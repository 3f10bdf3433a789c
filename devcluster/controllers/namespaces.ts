/**
 * The namespace controller (D-BI-2). A Namespace marked for deletion (its first DELETE, see
 * devcluster/builtins/namespaces.ts) is emptied here: every object of every namespaced resource in
 * it is deleted like a deletecollection would (individual deletes through ./internal.ts, admission
 * and finalizers honoured); while content remains, the Namespace's status conditions say what and
 * which finalizers hold it; once nothing remains, `kubernetes` is removed from `spec.finalizers`
 * through `/finalize`, and the update path removes the Namespace when no finalizer is left.
 * The work is re-queued whenever an object in a terminating namespace changes or disappears.
 */
import type * as core from '../api/core.js';
import * as objects from '../api/objects.js';
import type * as resources from '../api/resources.js';
import * as nskind from '../builtins/namespaces.js';
import * as statuses from '../server/statuses.js';
import * as revisions from '../store/revisions.js';
import * as internal from './internal.js';
import type * as loop from './loop.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

const MANAGER = 'namespace-controller';
const NAMESPACES = 'namespaces';

export interface NamespaceCondition {
  type: string;
  status: 'True' | 'False';
  lastTransitionTime?: string;
  reason: string;
  message: string;
}

/** What is left in a namespace after a deletion pass. */
export interface Remaining {
  /** Object counts by group-resource (`widgets.example.com`, `configmaps`). */
  resources: Map<string, number>;
  /** Object counts by finalizer. */
  finalizers: Map<string, number>;
  /** Messages of deletes that failed (webhook denials and the like). */
  failures: string[];
}

/** The condition order upstream reports. */
const CONDITION_TYPES = [
  'NamespaceDeletionDiscoveryFailure',
  'NamespaceDeletionGroupVersionParsingFailure',
  'NamespaceDeletionContentFailure',
  'NamespaceContentRemaining',
  'NamespaceFinalizersRemaining',
] as const;

/**
 * The five deletion conditions for what remains (D-BI-2), without transition times: the
 * `…Remaining` ones are True while content or finalizers remain, the failure ones False unless a
 * delete failed.
 */
export function deletionConditions(remaining: Remaining): NamespaceCondition[] {
  const counted = (m: Map<string, number>, fmt: (k: string, n: number) => string): string =>
    [...m]
      .filter(([, n]) => n > 0)
      .map(([k, n]) => fmt(k, n))
      .sort()
      .join(', ');
  const content = counted(remaining.resources, (r, n) => `${r} has ${n} resource instances`);
  const finalizers = counted(remaining.finalizers, (f, n) => `${f} in ${n} resource instances`);
  const failed = remaining.failures.length;
  return [
    { type: CONDITION_TYPES[0], status: 'False', reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' },
    { type: CONDITION_TYPES[1], status: 'False', reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed' },
    failed
      ? {
          type: CONDITION_TYPES[2],
          status: 'True',
          reason: 'ContentDeletionFailed',
          message: `Failed to delete all resource types, ${failed} remaining: ${remaining.failures.join(', ')}`,
        }
      : { type: CONDITION_TYPES[2], status: 'False', reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' },
    content
      ? { type: CONDITION_TYPES[3], status: 'True', reason: 'SomeResourcesRemain', message: `Some resources are remaining: ${content}` }
      : { type: CONDITION_TYPES[3], status: 'False', reason: 'ContentRemoved', message: 'All content successfully removed' },
    finalizers
      ? {
          type: CONDITION_TYPES[4],
          status: 'True',
          reason: 'SomeFinalizersRemain',
          message: `Some content in the namespace has finalizers remaining: ${finalizers}`,
        }
      : { type: CONDITION_TYPES[4], status: 'False', reason: 'ContentHasNoFinalizers', message: 'All content-preserving finalizers finished' },
  ];
}

/**
 * Merges wanted conditions into the current ones: a condition whose status did not change keeps its
 * `lastTransitionTime`; conditions of other types are kept after ours. Returns undefined when
 * nothing would change.
 */
export function mergeConditions(current: unknown, wanted: NamespaceCondition[], now: string): JsonObject[] | undefined {
  const existing = (Array.isArray(current) ? current : []).filter(json.isObject);
  const ours = new Set<string>(CONDITION_TYPES);
  const next: JsonObject[] = wanted.map((w) => {
    const old = existing.find((c) => c['type'] === w.type);
    const since = old && old['status'] === w.status && typeof old['lastTransitionTime'] === 'string' ? old['lastTransitionTime'] : now;
    return { type: w.type, status: w.status, lastTransitionTime: since, reason: w.reason, message: w.message };
  });
  next.push(...existing.filter((c) => !ours.has(String(c['type']))));
  const same =
    next.length === existing.length &&
    next.every((c) => {
      const old = existing.find((o) => o['type'] === c['type']);
      return !!old && old['status'] === c['status'] && old['reason'] === c['reason'] && old['message'] === c['message'];
    });
  return same ? undefined : next;
}

const groupResource = (t: resources.ResourceType): string => (t.group ? `${t.resource}.${t.group}` : t.resource);

export class NamespaceController {
  /** Names of namespaces marked for deletion, so unrelated changes cost one set lookup. */
  private readonly terminating = new Set<string>();

  constructor(
    private readonly c: core.Core,
    private readonly queue: loop.ControllerLoop,
  ) {
    c.store.subscribe((change) => this.onChange(change));
  }

  private onChange(change: revisions.Change): void {
    if (change.storage === NAMESPACES) {
      const name = change.key;
      if (change.type !== 'DELETED' && objects.metaOf(change.object)['deletionTimestamp'] !== undefined) {
        this.terminating.add(name);
        this.enqueue(name);
      } else {
        this.terminating.delete(name);
      }
      return;
    }
    if (this.terminating.size === 0) return;
    const ns = objects.namespaceOf(change.object);
    if (ns && this.terminating.has(ns)) this.enqueue(ns);
  }

  private enqueue(name: string): void {
    this.queue.enqueue(`namespace:${name}`, () => this.reconcile(name));
  }

  /** One storage per namespaced resource served, with a type to address its objects. */
  private namespacedStorages(): Map<string, resources.ResourceType> {
    const out = new Map<string, resources.ResourceType>();
    for (const t of this.c.registry.all()) {
      if (t.namespaced && t.verbs.includes('delete') && !out.has(t.storage)) out.set(t.storage, t);
    }
    return out;
  }

  private async reconcile(name: string): Promise<void> {
    const ns = this.c.store.get(NAMESPACES, name);
    if (!ns || objects.metaOf(ns)['deletionTimestamp'] === undefined) return;
    if (!nskind.specFinalizers(ns).includes(nskind.KUBERNETES_FINALIZER)) return;
    const storages = this.namespacedStorages();
    const prefix = revisions.objectKey(name, '');
    const failures: string[] = [];
    for (const [storage, type] of storages) {
      for (const obj of this.c.store.list(storage, prefix)) {
        if (objects.metaOf(obj)['deletionTimestamp'] !== undefined) continue;
        try {
          await internal.remove(this.c, type, name, objects.nameOf(obj), MANAGER, 'Background');
        } catch (err) {
          if (!(err instanceof statuses.ApiError)) throw err;
          failures.push(err.message);
        }
      }
    }
    const remaining: Remaining = { resources: new Map(), finalizers: new Map(), failures };
    for (const [storage, type] of storages) {
      const left = this.c.store.list(storage, prefix);
      if (left.length === 0) continue;
      remaining.resources.set(groupResource(type), left.length);
      for (const obj of left) {
        for (const f of objects.finalizersOf(obj)) remaining.finalizers.set(f, (remaining.finalizers.get(f) ?? 0) + 1);
      }
    }
    await this.report(name, remaining);
    if (remaining.resources.size > 0 || failures.length > 0) return; // re-queued as the content changes
    const current = this.c.store.get(NAMESPACES, name);
    if (!current) return;
    const finalizers = nskind.specFinalizers(current).filter((f) => f !== nskind.KUBERNETES_FINALIZER);
    await internal.patch(
      this.c,
      this.namespaceType(),
      undefined,
      name,
      { metadata: { resourceVersion: objects.rvOf(current) }, spec: { finalizers } },
      MANAGER,
      'finalize',
    );
  }

  /** Writes the deletion conditions through `/status` when they changed. */
  private async report(name: string, remaining: Remaining): Promise<void> {
    const current = this.c.store.get(NAMESPACES, name);
    if (!current) return;
    const status = json.isObject(current['status']) ? current['status'] : {};
    const conditions = mergeConditions(status['conditions'], deletionConditions(remaining), objects.formatTime(this.c.clock.now()));
    if (!conditions) return;
    await internal.patch(
      this.c,
      this.namespaceType(),
      undefined,
      name,
      { metadata: { resourceVersion: objects.rvOf(current) }, status: { conditions } },
      MANAGER,
      'status',
    );
  }

  private namespaceType(): resources.ResourceType {
    return this.c.registry.find('', 'v1', NAMESPACES)!;
  }
}

/** Starts the namespace controller on a cluster's store (D-GEN-5). */
export function startNamespaceController(c: core.Core, queue: loop.ControllerLoop): NamespaceController {
  return new NamespaceController(c, queue);
}
