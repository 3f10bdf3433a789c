/**
 * The CRD controller (D-CRD-3/4/16): accepts names, registers the served versions and marks the
 * CRD Established; re-registers on spec changes; on deletion marks it Terminating, deletes all
 * instances (finalizers honoured), waits until none remain, then releases its finalizer so the CRD
 * disappears, and finally unregisters the types and ends their watches.
 */
import * as crypto from 'node:crypto';
import * as calling from '../admission/calling.js';
import * as customresources from '../api/customresources.js';
import type * as core from '../api/core.js';
import * as objects from '../api/objects.js';
import * as resources from '../api/resources.js';
import * as crdkind from '../builtins/customresourcedefinitions.js';
import type * as schemas from '../crds/schemas.js';
import type * as revisions from '../store/revisions.js';
import type * as watching from '../api/watching.js';
import * as internal from './internal.js';
import type * as loop from './loop.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

const MANAGER = 'apiextensions-controller';
const CRD_STORAGE = 'apiextensions.k8s.io/customresourcedefinitions';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime?: string;
}

export class CrdController {
  /** CRD name → storage of its instances, for CRDs whose types are registered. */
  private readonly served = new Map<string, string>();
  /** CRD name → the spec and accepted names its types were last built from (D-CRD-501). */
  private readonly servedAs = new Map<string, unknown>();

  constructor(
    private readonly c: core.Core,
    private readonly hub: watching.WatchHub,
    private readonly queue: loop.ControllerLoop,
    private readonly warn: (message: string) => void,
  ) {
    c.store.subscribe((change) => this.onChange(change));
  }

  private onChange(change: revisions.Change): void {
    if (change.storage === CRD_STORAGE) {
      this.queue.enqueue(`crd:${change.key}`, () => this.reconcile(change.key));
      return;
    }
    // Instances of a terminating CRD: re-check the cleanup as they go away.
    for (const [name, storage] of this.served) {
      if (storage === change.storage && change.type === 'DELETED') {
        const crd = this.c.store.get(CRD_STORAGE, name);
        if (crd && objects.metaOf(crd)['deletionTimestamp']) this.queue.enqueue(`crd:${name}`, () => this.reconcile(name));
      }
    }
  }

  private crdType(): resources.ResourceType {
    return this.c.registry.find('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!;
  }

  private async reconcile(name: string): Promise<void> {
    const stored = this.c.store.get(CRD_STORAGE, name);
    if (!stored) {
      this.unserve(name);
      return;
    }
    const crd = stored as unknown as schemas.CustomResourceDefinition;
    if (objects.metaOf(stored)['deletionTimestamp']) {
      await this.cleanup(name, stored, crd);
      return;
    }

    const conflict = this.namesConflict(name, crd);
    const now = objects.formatTime(this.c.clock.now());
    const conditions = (crd.status?.conditions ?? []) as Condition[];
    if (conflict) {
      await this.setStatus(name, {
        conditions: upsert(conditions, { type: 'NamesAccepted', status: 'False', reason: conflict.reason, message: conflict.message }, now),
      });
      return;
    }
    const namesAccepted = conditions.find((c) => c.type === 'NamesAccepted')?.status === 'True' && json.deepEqual(crd.status?.acceptedNames, crd.spec.names);
    let current = conditions;
    if (!namesAccepted) {
      current = upsert(current, { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' }, now);
      await this.setStatus(name, { acceptedNames: crd.spec.names, conditions: current });
    }
    this.serve(name, crd);
    const storageVersion = crd.spec.versions.find((v) => v.storage)?.name;
    const stored2 = new Set(crd.status?.storedVersions ?? []);
    const established = current.find((c) => c.type === 'Established')?.status === 'True';
    if (!established || (storageVersion && !stored2.has(storageVersion))) {
      if (storageVersion) stored2.add(storageVersion);
      current = upsert(current, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }, now);
      await this.setStatus(name, { conditions: current, storedVersions: [...stored2] });
    }
  }

  private namesConflict(name: string, crd: schemas.CustomResourceDefinition): { reason: string; message: string } | undefined {
    const mine = crd.spec.names;
    for (const other of this.c.store.list(CRD_STORAGE)) {
      if (objects.nameOf(other) === name) continue;
      const o = other as unknown as schemas.CustomResourceDefinition;
      if (o.spec.group !== crd.spec.group) continue;
      const theirs = o.status?.acceptedNames ?? o.spec.names;
      if (theirs.plural === mine.plural) return { reason: 'PluralConflict', message: `"${mine.plural}" is already in use` };
      if (mine.singular && theirs.singular === mine.singular) return { reason: 'SingularConflict', message: `"${mine.singular}" is already in use` };
      if (theirs.kind === mine.kind) return { reason: 'KindConflict', message: `"${mine.kind}" is already in use` };
      const shared = (mine.shortNames ?? []).find((s) => (theirs.shortNames ?? []).includes(s));
      if (shared) return { reason: 'ShortNamesConflict', message: `"${shared}" is already in use` };
      if (mine.listKind && theirs.listKind === mine.listKind) return { reason: 'ListKindConflict', message: `"${mine.listKind}" is already in use` };
    }
    return undefined;
  }

  private serve(name: string, crd: schemas.CustomResourceDefinition): void {
    const storage = resources.storageOf(crd.spec.group, crd.spec.names.plural);
    const previous = this.served.get(name);
    if (previous) this.c.registry.removeStorage(previous);
    let warned = false;
    const types = customresources.customTypes(crd, {
      cel: this.c.options.cel,
      conversion: {
        call: this.c.options.webhooks ?? { resolver: calling.defaultServiceResolver, insecure: false },
        post: calling.callWebhook,
        uid: () => crypto.randomUUID(),
        timeoutSeconds: this.c.options.conversionTimeoutSeconds,
        onCall: this.c.options.onConversionCall,
      },
      terminating: () => {
        const now = this.c.store.get(CRD_STORAGE, name);
        return !!now && objects.metaOf(now)['deletionTimestamp'] !== undefined;
      },
      onCelWarnings: (warnings) => {
        if (warned) return;
        warned = true;
        for (const w of warnings) this.warn(`CRD ${name}: CEL rule skipped: ${w}`);
      },
    });
    for (const t of types) this.c.registry.add(t);
    this.served.set(name, storage);
    // Open watches keep the types they were opened with (schemas, the conversion webhook's
    // settings): after a change of the spec they end, as kube-apiserver's teardown of the old
    // storage ends them, and their clients watch again with the new types (D-CRD-501).
    const servedAs = { spec: crd.spec, acceptedNames: crd.status?.acceptedNames ?? null };
    const before = this.servedAs.get(name);
    this.servedAs.set(name, servedAs);
    if (before !== undefined && !json.deepEqual(before as JsonObject, servedAs as unknown as JsonObject)) this.hub.drop({ storage }, 'end');
  }

  private unserve(name: string): void {
    const storage = this.served.get(name);
    if (!storage) return;
    this.served.delete(name);
    this.servedAs.delete(name);
    this.c.registry.removeStorage(storage);
    this.hub.drop({ storage }, 'end');
    this.c.store.dropStorage(storage);
  }

  private async cleanup(name: string, stored: JsonObject, crd: schemas.CustomResourceDefinition): Promise<void> {
    const now = objects.formatTime(this.c.clock.now());
    const conditions = (crd.status?.conditions ?? []) as Condition[];
    const wasEstablished = conditions.some((c) => c.type === 'Established' && c.status === 'True');
    const storage = this.served.get(name);
    if (wasEstablished && storage) {
      if (!conditions.some((c) => c.type === 'Terminating' && c.status === 'True')) {
        await this.setStatus(name, {
          conditions: upsert(
            conditions,
            { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' },
            now,
          ),
        });
      }
      const c = internal.withoutAdmission(this.c);
      const anyType = this.c.registry.anyOfStorage(storage)!;
      const instances = this.c.store.list(storage);
      for (const obj of instances) {
        if (objects.metaOf(obj)['deletionTimestamp']) continue;
        await internal.remove(c, anyType, objects.namespaceOf(obj), objects.nameOf(obj), MANAGER);
      }
      if (this.c.store.count(storage) > 0) return; // re-checked as instances disappear
      const latest = (this.c.store.get(CRD_STORAGE, name) as unknown as schemas.CustomResourceDefinition | undefined)?.status?.conditions as
        | Condition[]
        | undefined;
      await this.setStatus(name, {
        conditions: upsert(
          latest ?? conditions,
          { type: 'Terminating', status: 'False', reason: 'InstanceDeletionCompleted', message: 'removed all instances' },
          now,
        ),
      });
    }
    const current = this.c.store.get(CRD_STORAGE, name) ?? stored;
    const finalizers = objects.finalizersOf(current).filter((f) => f !== crdkind.CLEANUP_FINALIZER);
    await internal.patch(this.c, this.crdType(), undefined, name, { metadata: { finalizers: finalizers.length ? finalizers : null } }, MANAGER);
    if (!this.c.store.get(CRD_STORAGE, name)) this.unserve(name);
  }

  private async setStatus(name: string, status: JsonObject): Promise<void> {
    await internal.patch(this.c, this.crdType(), undefined, name, { status }, MANAGER, 'status');
  }
}

function upsert(conditions: Condition[], next: Omit<Condition, 'lastTransitionTime'>, now: string): Condition[] {
  const existing = conditions.find((c) => c.type === next.type);
  const lastTransitionTime = existing && existing.status === next.status && existing.lastTransitionTime ? existing.lastTransitionTime : now;
  const updated: Condition = { type: next.type, status: next.status, lastTransitionTime, reason: next.reason, message: next.message };
  return existing ? conditions.map((c) => (c.type === next.type ? updated : c)) : [...conditions, updated];
}
