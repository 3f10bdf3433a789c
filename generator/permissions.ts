/**
 * Permissions: the least-privilege RBAC rules of a generated operator.
 *
 * Derived from what the user's code does with each kind (accesses.ts: the handlers it registers,
 * the kinds a reconcile handler owns and watches, the typed client's calls) plus what the runtime
 * itself needs (runtime reference R-LIFE-7): peering objects, CRD and namespace discovery, and
 * posting events. Each kind gets the verbs its accesses need, and no other (R-SEC-401…404, with
 * kubebuilder's RBAC markers as the model): list and watch to observe it, get to re-read one object
 * (after a write whose response was lost, R-PATCH-9, and after the consistency timeout, R-QUEUE-4 —
 * the delivery guarantee rests on it), patch where handlers store progress, finalizers or their
 * writes, patch on the status subresource where handlers write status, and the verbs of the
 * client's calls. Each rule says which file and line need it. A CRD of the project that the code
 * uses in no way the scan can follow keeps the verbs of a served resource (get, list, watch,
 * patch, and status patch): the project exists to serve it. Rules are split by where they apply —
 * cluster-level rules, per-namespace rules that the generated manifests bind cluster-wide (the
 * operator serves all namespaces) or in each namespace the project was created for, and the
 * rules of the operator's own namespace: the Lease of leader election, only for projects that
 * configure one (`"lease"` in kopf-gen.json, `--lease` in the Deployment) — read and renewed (PUT)
 * by its one name, created if absent (R-SEC-3). Rules on admission webhook configurations are
 * added only for projects that register admission handlers (detected in the user's code): the
 * operator then manages its validating and mutating configurations (runtime reference
 * R-ADMISSION-7/8) — it creates them (RBAC cannot restrict `create` by name), and reads and
 * patches them by their one name only. A sharded project (`"shards"` in kopf-gen.json, `--shards`
 * in the Deployment, docs/sharding.md) gets a Role of its own namespace on the replicas' Leases —
 * each replica creates, renews, lists and deletes its own, and reads the others'; their names are
 * pod names, so no `resourceNames` — and `patch` on every kind whose objects it shards (the kinds
 * of cause, event and index handlers and reconcile's own kinds, not its owned and watched ones),
 * for the owner label (R-SHARD-401). Pure: model and accesses in, rules out.
 */
import * as accesses from './accesses.js';
import * as builtins from './builtins.js';
import type * as modeling from './modeling.js';

/** One RBAC policy rule, with a comment saying why it is there. */
export interface Rule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  /** Restricts the rule to objects of these names (never for `create`, which RBAC cannot restrict by name). */
  readonly resourceNames?: readonly string[];
  readonly why: string;
}

/** The two rule sets of an operator. */
export interface Permissions {
  /** Rules on cluster-scoped resources. */
  readonly cluster: readonly Rule[];
  /** Rules on namespaced resources (bound cluster-wide, or per namespace). */
  readonly namespaced: readonly Rule[];
  /** Rules in the operator's own namespace (a Role there): the Lease, when one is configured; else none. */
  readonly own: readonly Rule[];
  /** Rules in the operator's own namespace for sharding (a Role there): the replicas' Leases, when a ring is configured; else none. */
  readonly shards: readonly Rule[];
}

/** The verbs the runtime uses on the resources it serves (list+watch to observe, get to re-read one object, patch to write). */
export const SERVED_VERBS = ['get', 'list', 'watch', 'patch'] as const;

/** The verbs of Lease election on the Lease's name: read it, acquire/renew/release it by PUT (creating it is the other one). */
export const LEASE_VERBS = ['get', 'update'] as const;

/** The verbs of sharding on the replicas' Leases: create and renew its own, poll the ring's (list), re-read one (get), leave (delete). */
export const SHARD_LEASE_VERBS = ['get', 'list', 'create', 'update', 'delete'] as const;

/** Registrations whose kind's objects a sharded operator labels with their owner (the others are watched whole). */
const SHARDED_BY = new Set([
  'on.create',
  'on.update',
  'on.delete',
  'on.resume',
  'on.field',
  'on.daemon',
  'on.timer',
  'on.event',
  'on.index',
  'on.reconcile',
  'on.reconcile (finalize)',
]);

/** The webhook configurations an operator with admission handlers manages. */
export const WEBHOOK_CONFIGURATIONS = ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations'] as const;

/**
 * The permissions of an operator serving the CRDs of the model, doing with each kind what
 * `used` says (accesses.ts; a CRD without any access is served as by cause handlers); with `managedWebhooks` (the name of its managed webhook configurations), also managing those;
 * with `lease` (the name of its Lease, `--lease`), also electing a leader on it; with `shards`
 * (the ring, `--shards`), also sharding its objects across replicas.
 */
export function permissionsOf(
  model: modeling.GeneratorModel,
  used: readonly accesses.Access[] = [],
  managedWebhooks?: string,
  lease?: string,
  shards?: string,
): Permissions {
  const cluster: Rule[] = [
    {
      apiGroups: ['kopf.dev'],
      resources: ['clusterkopfpeerings'],
      verbs: ['get', 'list', 'watch', 'patch'],
      why: 'peering between operator replicas (cluster-wide)',
    },
    { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['list', 'watch'], why: 'discovering the served resources' },
    { apiGroups: [''], resources: ['namespaces'], verbs: ['list', 'watch'], why: 'discovering namespaces to serve' },
  ];
  const namespaced: Rule[] = [
    {
      apiGroups: ['kopf.dev'],
      resources: ['kopfpeerings'],
      verbs: ['get', 'list', 'watch', 'patch'],
      why: 'peering between operator replicas (per namespace)',
    },
    { apiGroups: [''], resources: ['events'], verbs: ['create'], why: 'posting events about handled objects' },
  ];
  const kinds = kindRules(model, shards === undefined ? used : [...used, ...labelling(used, shards)]);
  const served = (scope: 'cluster' | 'namespaced'): Rule[] =>
    kinds.filter((kind) => kind.namespaced === (scope === 'namespaced')).flatMap((kind) => kind.rules);
  const admission: Rule[] =
    managedWebhooks === undefined
      ? []
      : [
          {
            apiGroups: ['admissionregistration.k8s.io'],
            resources: [...WEBHOOK_CONFIGURATIONS],
            verbs: ['create'],
            why: 'creating the managed webhook configurations (admission handlers)',
          },
          {
            apiGroups: ['admissionregistration.k8s.io'],
            resources: [...WEBHOOK_CONFIGURATIONS],
            verbs: ['get', 'patch'],
            resourceNames: [managedWebhooks],
            why: `filling the managed webhook configurations, and emptying them on exit (${managedWebhooks} only)`,
          },
        ];
  return {
    cluster: [...cluster, ...METRICS_REVIEWS, ...admission, ...served('cluster')],
    namespaced: [...namespaced, ...served('namespaced')],
    own: leaseRules(lease),
    shards: shardRules(shards),
  };
}

/**
 * The `patch` a sharded operator needs on the objects it shards, to write their owner label
 * (claiming and handing them over): one per registration whose kind is sharded and that does not
 * patch already.
 */
function labelling(used: readonly accesses.Access[], ring: string): accesses.Access[] {
  return used
    .filter((access) => access.subresource === undefined && SHARDED_BY.has(access.by) && !access.verbs.includes('patch'))
    .map((access) => ({ ...access, verbs: ['patch'], by: `sharding (--shards ${ring}): the owner label of ${access.by}'s objects` }));
}

/** The rules of sharding in the ring `ring` (none without one): the replicas' Leases in the operator's namespace. */
function shardRules(ring: string | undefined): Rule[] {
  if (ring === undefined) return [];
  return [
    {
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      verbs: [...SHARD_LEASE_VERBS],
      why: `the replicas' Leases of sharding (--shards ${ring}): each creates, renews and deletes its own (${ring}-<pod>), lists the ring's and reads one; their names are not known in advance`,
    },
  ];
}

/** The rules of leader election on the Lease `name` (none without one): in the operator's namespace only. */
function leaseRules(name: string | undefined): Rule[] {
  if (name === undefined) return [];
  return [
    {
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      verbs: ['create'],
      why: `creating the Lease of leader election when it is absent (--lease ${name}; RBAC cannot restrict create by name)`,
    },
    {
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      verbs: [...LEASE_VERBS],
      resourceNames: [name],
      why: `reading, taking, renewing and releasing the Lease of leader election (--lease ${name} only)`,
    },
  ];
}

/**
 * Secure metrics (runtime reference R-SEC-10/11): the generated Deployment serves `https://…/metrics`,
 * where the runtime asks the API server who a scraper's token belongs to (TokenReview) and whether
 * that user may `get` the metrics' path (SubjectAccessReview). Both reviews are create-only kinds
 * that store nothing; this is all they need, and what controller-runtime's secure metrics need.
 */
export const METRICS_REVIEWS: readonly Rule[] = [
  { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'], why: "secure metrics: reviewing a scraper's token" },
  {
    apiGroups: ['authorization.k8s.io'],
    resources: ['subjectaccessreviews'],
    verbs: ['create'],
    why: 'secure metrics: reviewing whether a scraper may get the metrics',
  },
];

/** A kind the code uses, CRD or built-in, with its rules. */
interface KindRules {
  readonly namespaced: boolean;
  readonly rules: readonly Rule[];
}

/** A kind as RBAC names it. */
interface Target {
  readonly group: string;
  readonly plural: string;
  readonly namespaced: boolean;
  readonly subresources: readonly string[];
}

/**
 * The rules of every kind: the project's CRDs first (in the model's order), then the built-in
 * kinds (in the runtime's order); per kind, a rule on the resource, then one per subresource.
 */
function kindRules(model: modeling.GeneratorModel, used: readonly accesses.Access[]): KindRules[] {
  const found: KindRules[] = [];
  for (const crd of model.crds) {
    const first = crd.versions[0];
    if (!first) continue;
    const target: Target = {
      group: crd.group,
      plural: crd.plural,
      namespaced: first.namespaced,
      subresources: crd.versions.some((version) => version.statusSubresource) ? ['status'] : [],
    };
    const mine = used.filter((access) => 'crd' in access.kind && access.kind.crd === crd.crdName);
    found.push({ namespaced: target.namespaced, rules: mine.length > 0 ? rulesOf(target, mine) : servedRules(target) });
  }
  for (const resource of builtins.BUILTIN_RESOURCES) {
    const mine = used.filter((access) => 'builtin' in access.kind && access.kind.builtin === resource);
    if (mine.length === 0) continue;
    const target: Target = { ...resource, subresources: resource.statusSubresource ? ['status'] : [] };
    found.push({ namespaced: resource.namespaced, rules: rulesOf(target, mine) });
  }
  return found;
}

/** A CRD the code uses in no way the scan follows: the verbs of a resource served by cause handlers. */
function servedRules(target: Target): Rule[] {
  const scope = `no use of ${target.plural} found in src/ that kopf-gen can follow`;
  return [
    {
      apiGroups: [target.group],
      resources: [target.plural],
      verbs: [...SERVED_VERBS],
      why: `observing and patching the served resources of ${target.group} (${scope})`,
    },
    ...target.subresources.map((sub) => ({
      apiGroups: [target.group],
      resources: [`${target.plural}/${sub}`],
      verbs: ['patch'],
      why: `writing ${sub} through the ${sub} subresource (${scope})`,
    })),
  ];
}

/** The rules one kind's accesses need: on the resource, then on each subresource, each saying where. */
function rulesOf(target: Target, mine: readonly accesses.Access[]): Rule[] {
  const bySubresource = new Map<string, accesses.Access[]>();
  for (const access of mine) {
    const sub = access.subresource ?? '';
    if (sub !== '' && access.ifPresent && !target.subresources.includes(sub)) continue;
    bySubresource.set(sub, [...(bySubresource.get(sub) ?? []), access]);
  }
  const subs = [...bySubresource.keys()].sort();
  return subs.map((sub) => {
    const those = bySubresource.get(sub)!;
    const verbs = new Set(those.flatMap((access) => access.verbs));
    return {
      apiGroups: [target.group],
      resources: [sub === '' ? target.plural : `${target.plural}/${sub}`],
      verbs: accesses.VERBS.filter((verb) => verbs.has(verb)),
      why: reasons(those),
    };
  });
}

/** How many places a rule's comment names for one set of verbs before it says how many more. */
const PLACES_SHOWN = 3;

/** `get, list, watch, patch: on.create at src/handlers/widget.ts:18, …; create: client.create at …`. */
function reasons(those: readonly accesses.Access[]): string {
  const byVerbs = new Map<string, string[]>();
  for (const access of those) {
    const key = accesses.VERBS.filter((verb) => access.verbs.includes(verb)).join(', ');
    const place = `${access.by} at ${access.path}:${access.line}`;
    const places = byVerbs.get(key) ?? [];
    if (!places.includes(place)) places.push(place);
    byVerbs.set(key, places);
  }
  return [...byVerbs]
    .map(([verbs, places]) => {
      const shown = places.slice(0, PLACES_SHOWN).join(', ');
      return `${verbs}: ${shown}${places.length > PLACES_SHOWN ? ` and ${places.length - PLACES_SHOWN} more` : ''}`;
    })
    .join('; ');
}
