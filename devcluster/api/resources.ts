/**
 * Resource types: what the server knows about each served (group, version, resource).
 *
 * The request pipeline is generic; everything that differs between kinds lives in a
 * `ResourceType` and its `Strategy` (upstream calls these "REST strategies"): name rules,
 * defaults, validation, which parts a status write may change, how generation moves, which patch
 * types are accepted, how the stored form converts to the served version. Built-in kinds define
 * their strategies in `devcluster/builtins/`; custom resources get theirs from the CRD
 * (`devcluster/api/customresources.ts`).
 *
 * The `Registry` is the live table of served types; discovery is rendered from it on every request,
 * so a CRD becoming Established (or deleted) is visible immediately (D-WIRE-9, D-WIRE-10).
 */
import type * as schemas from '../crds/schemas.js';
import type * as fielderrors from '../meta/fielderrors.js';
import type * as names from '../meta/names.js';
import type * as strategic from '../patching/strategic.js';
import type * as apply from '../patching/apply.js';
import type { JsonObject } from '../json.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export const ALL_VERBS: readonly Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** Discovery facts of one subresource (D-WIRE-8). */
export interface SubresourceInfo {
  readonly verbs: readonly string[];
  readonly kind: string;
  readonly group?: string;
  readonly version?: string;
  /** A streaming (connect) subresource: `log`, `exec`, `attach`, `portforward`, `proxy`. */
  readonly connect?: boolean;
}

export interface ScaleSpec {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
  /** The selector at `labelSelectorPath` is a plain label map (ReplicationController), not a LabelSelector. */
  selectorIsMap?: boolean;
}

/** Context handed to strategies: clock and identity sources of the cluster. */
export interface StrategyContext {
  now(): Date;
  /** A fresh RFC 4122 v4 uid (seedable, D-FAULT-15). */
  uid(): string;
  /** Random numbers in [0, 1) (seedable). */
  random(): number;
  /** Read access to other objects (e.g. Services check cluster IPs, Deployments nothing). */
  lookup(storage: string, key: string): JsonObject | undefined;
  listAll(storage: string): JsonObject[];
}

/** Per-kind behaviour; every hook receives and returns plain JSON objects (copies it may mutate). */
export interface Strategy {
  nameRule: names.NameRule;
  /** PUT to a missing object creates it (Lease, Event; D-VERB-15). */
  putCreates: boolean;
  /** PUT without `metadata.resourceVersion` → 422 (CRs, CRDs, Leases, webhook configurations; D-VERB-13). */
  requireResourceVersion: boolean;
  /** Delete returns the deleted object instead of a Success Status (Pod, ServiceAccount, Namespace; D-VERB-27). */
  deleteReturnsObject: boolean;
  /** Extra field selectors beyond metadata.name/metadata.namespace (D-VERB-4, D-BI-1). */
  fieldSelectors?: Readonly<Record<string, (obj: JsonObject) => string | undefined>>;
  /** Strategic-merge-patch schema; undefined means SMP is refused with 415 (CRs). */
  smpSchema?: strategic.SmpSchema;
  /** List semantics for server-side apply ownership. */
  listSemantics?: apply.ListSemantics;
  /** Whether `generation` is maintained, and which changes bump it (D-META-7). */
  generation?: (old: JsonObject, next: JsonObject) => boolean;
  /** Defaults and system fields on create (after metadata handling, before validation). */
  prepareForCreate?(obj: JsonObject, ctx: StrategyContext): JsonObject;
  /** Carries over what the main endpoint may not change (status, …) on update/patch. */
  prepareForUpdate?(obj: JsonObject, old: JsonObject, ctx: StrategyContext): JsonObject;
  /** Applies a write to a subresource (status, finalize) onto the stored object. */
  prepareForSubresource?(sub: string, obj: JsonObject, old: JsonObject, ctx: StrategyContext): JsonObject;
  /**
   * Kind-specific validation (metadata is validated generically); `subresource` names the
   * subresource a write went through (`status`, `ephemeralcontainers`, …), whose rules may differ.
   */
  validate?(obj: JsonObject, old: JsonObject | undefined, ctx: StrategyContext, subresource?: string): fielderrors.FieldError[];
  /** Non-fatal problems reported as Warning headers (unknown fields are handled elsewhere). */
  warnings?(obj: JsonObject, old: JsonObject | undefined): string[];
  /** Converts the stored form to the form served by this type (apiVersion rewrite, field renames). */
  toExternal?(stored: JsonObject): JsonObject;
  /** Converts a request body of this type to the stored form. */
  toStorage?(external: JsonObject): JsonObject;
  /**
   * Converts an object of this kind, in any served version, to another served version (CRs: by
   * the CRD's conversion strategy, D-CRD-22). Undefined means only `apiVersion` changes.
   */
  convertTo?(obj: JsonObject, apiVersion: string): JsonObject;
  /**
   * Conversion that calls out (CRDs with a conversion webhook, D-CONV-401): converts the objects not
   * already in `apiVersion` (one call for all of them), keeping order. Where it is defined, the
   * synchronous hooks above are only handed objects already in their target version, and
   * `toStorage` is undefined: writes stay in the request's version until `toStorageAsync`, right
   * before storing (`api/converting.ts`).
   */
  convertObjects?(objs: readonly JsonObject[], apiVersion: string): Promise<JsonObject[]>;
  /** With `convertObjects`: converts a request-version object to the stored form (normalised by the storage version's schema). */
  toStorageAsync?(obj: JsonObject): Promise<JsonObject>;
  /** Graceful deletion (Pods, D-VERB-28): returns the grace period in seconds, or 0 for immediate. */
  gracePeriod?(obj: JsonObject, requested: number | undefined): number;
  /** CRs: pruning, null removal and defaulting (D-CRD-8/10), with the unknown fields found. */
  normalize?(obj: JsonObject): { value: JsonObject; unknownFields: string[] };
  /**
   * Custom first deletion (Namespaces, D-BI-2): returns the marked object to store, or `conflict`
   * when a repeated DELETE must be refused. Undefined means the generic finalizer-based marking.
   */
  markForDeletion?(obj: JsonObject, now: string): JsonObject | 'conflict' | undefined;
  /**
   * Whether a marked object may disappear once its metadata finalizers are gone (default: yes).
   * Namespaces also wait for `spec.finalizers` (D-BI-2).
   */
  readyForRemoval?(obj: JsonObject): boolean;
  /** Refuses creation for reasons outside the object (CRD terminating, D-CRD-16). */
  admitCreate?(obj: JsonObject): void;
}

export interface ResourceType {
  readonly group: string;
  readonly version: string;
  /** Plural name as in URLs. */
  readonly resource: string;
  readonly singular: string;
  readonly kind: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly verbs: readonly Verb[];
  /** Identity of the stored objects; several served types may share it (events, CR versions). */
  readonly storage: string;
  /** Served subresources, e.g. `status`, `scale`, `finalize`. */
  readonly subresources: readonly string[];
  /**
   * What discovery says of each subresource (verbs, and the kind when it differs); built-ins take it
   * from the upstream catalog. Absent entries get the defaults of D-WIRE-8.
   */
  readonly subresourceInfo?: Readonly<Record<string, SubresourceInfo>>;
  /** The upstream OpenAPI definition of a built-in kind (`io.k8s.api.batch.v1.Job`). */
  readonly definition?: string;
  /**
   * A custom resource version's schema (`openAPIV3Schema`), which `/openapi/v2` and `/openapi/v3`
   * publish (D-WIRE-31). A CRD change replaces the type, so caches keyed by the type see it.
   */
  readonly customSchema?: schemas.JSONSchemaProps;
  readonly scale?: ScaleSpec;
  /** Built-in kinds omit `apiVersion`/`kind` on list items (D-WIRE-19). */
  readonly builtin: boolean;
  /** Warning header sent for every request through this version (D-CRD-5). */
  readonly deprecationWarning?: string;
  readonly strategy: Strategy;
  /** Table columns (D-WIRE-18, D-CRD-14); default `Name`, `Age`. */
  readonly table?: TableColumns;
  /**
   * For create-only kinds that are answered and never stored (access and token reviews,
   * D-AUTH-11): a POST runs this on the body (decoded, apiVersion/kind/namespace checked) instead
   * of the create pipeline, and answers 201 with what it returns. Such kinds have no other verbs
   * and no storage version in discovery.
   */
  readonly answer?: (req: AnswerRequest, body: JsonObject) => JsonObject;
}

/** What a create of an answered kind (`ResourceType.answer`) knows besides its body. */
export interface AnswerRequest {
  /** The namespace of the URL (namespaced kinds). */
  readonly namespace: string | undefined;
  /** The requesting user (after authentication). */
  readonly user: {
    readonly username: string;
    readonly uid: string;
    readonly groups: readonly string[];
    readonly extra?: Readonly<Record<string, readonly string[]>>;
  };
  /** The manager named in `managedFields`: `fieldManager`, else the User-Agent's product (D-META-15). */
  readonly fieldManager: string;
}

export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface TableColumns {
  definitions(): ColumnDefinition[];
  cells(obj: JsonObject, now: Date): unknown[];
}

/** The storage identity of built-in and custom kinds: `resource` or `group/resource`. */
export const storageOf = (group: string, resource: string): string => (group ? `${group}/${resource}` : resource);

export const apiVersionOf = (t: { group: string; version: string }): string => (t.group ? `${t.group}/${t.version}` : t.version);
export const hasStatus = (t: ResourceType): boolean => t.subresources.includes('status');

/**
 * Version priority for discovery (D-WIRE-7): GA before beta before alpha, higher numbers first;
 * versions not of the Kubernetes form sort last alphabetically.
 */
export function compareVersions(a: string, b: string): number {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (pa && pb) {
    if (pa.level !== pb.level) return pa.level - pb.level;
    if (pa.major !== pb.major) return pb.major - pa.major;
    return pb.minor - pa.minor;
  }
  if (pa) return -1;
  if (pb) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function parseVersion(v: string): { level: number; major: number; minor: number } | undefined {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
  if (!m) return undefined;
  return { level: m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2, major: Number(m[1]), minor: m[3] === undefined ? 0 : Number(m[3]) };
}

/** The live table of served resource types. */
export class Registry {
  private readonly types = new Map<string, ResourceType>();
  private generationCounter = 0;

  /** Bumped on every change; discovery caches nothing, but tests can observe changes. */
  get generation(): number {
    return this.generationCounter;
  }

  add(type: ResourceType): void {
    this.types.set(keyOf(type.group, type.version, type.resource), type);
    this.generationCounter++;
  }

  remove(group: string, version: string, resource: string): void {
    this.types.delete(keyOf(group, version, resource));
    this.generationCounter++;
  }

  /** Removes every type whose storage is `storage` (all versions of one CRD). */
  removeStorage(storage: string): void {
    for (const [k, t] of this.types) if (t.storage === storage) this.types.delete(k);
    this.generationCounter++;
  }

  find(group: string, version: string, resource: string): ResourceType | undefined {
    return this.types.get(keyOf(group, version, resource));
  }

  all(): ResourceType[] {
    return [...this.types.values()];
  }

  /** Served groups with their versions in priority order. */
  groups(): Map<string, string[]> {
    const groups = new Map<string, Set<string>>();
    for (const t of this.types.values()) {
      if (!groups.has(t.group)) groups.set(t.group, new Set());
      groups.get(t.group)!.add(t.version);
    }
    const out = new Map<string, string[]>();
    for (const [g, vs] of groups) out.set(g, [...vs].sort(compareVersions));
    return out;
  }

  /** Types of one group/version, sorted by resource name. */
  inGroupVersion(group: string, version: string): ResourceType[] {
    return this.all()
      .filter((t) => t.group === group && t.version === version)
      .sort((a, b) => (a.resource < b.resource ? -1 : 1));
  }

  /** Any served type of a storage (used by controllers to address stored objects). */
  anyOfStorage(storage: string): ResourceType | undefined {
    for (const t of this.types.values()) if (t.storage === storage) return t;
    return undefined;
  }
}

const keyOf = (group: string, version: string, resource: string): string => `${group}/${version}/${resource}`;
