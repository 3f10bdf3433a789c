/**
 * Permissions: the least-privilege RBAC rules of a generated operator.
 *
 * Derived from the CRDs (the served resources), the built-in resources the handlers watch
 * (detected in the user's code, detecting.ts), plus what the runtime itself needs (runtime reference
 * R-LIFE-7): peering objects, CRD and namespace discovery, and posting events. Every watched
 * resource gets the same verbs, CRD or built-in — every verb the runtime uses on it, and no other:
 * list and watch to observe it, get to re-read one object (after a write whose response was lost,
 * R-PATCH-9, and after the consistency timeout, R-QUEUE-4 — the delivery guarantee rests on it),
 * patch to store handler progress, diff-bases and finalizers on the objects, and patch on its
 * status subresource, if it has one, for status writes. Rules are split by where they apply —
 * cluster-level rules, per-namespace rules that the generated manifests bind cluster-wide (the
 * operator serves all namespaces) or in each namespace the project was created for, and the
 * rules of the operator's own namespace: the Lease of leader election, only for projects that
 * configure one (`"lease"` in kopf-gen.json, `--lease` in the Deployment) — read and renewed (PUT)
 * by its one name, created if absent (R-SEC-3). Rules on admission webhook configurations are
 * added only for projects that register admission handlers (detected in the user's code): the
 * operator then manages its validating and mutating configurations (runtime reference
 * R-ADMISSION-7/8) — it creates them (RBAC cannot restrict `create` by name), and reads and
 * patches them by their one name only. Pure: model in, rules out.
 */
import type * as builtins from './builtins.js';
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
}

/** The verbs the runtime uses on the resources it serves (list+watch to observe, get to re-read one object, patch to write). */
export const SERVED_VERBS = ['get', 'list', 'watch', 'patch'] as const;

/** The verbs of Lease election on the Lease's name: read it, acquire/renew/release it by PUT (creating it is the other one). */
export const LEASE_VERBS = ['get', 'update'] as const;

/** The webhook configurations an operator with admission handlers manages. */
export const WEBHOOK_CONFIGURATIONS = ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations'] as const;

/**
 * The permissions of an operator serving every CRD of the model and the given built-in resources;
 * with `managedWebhooks` (the name of its managed webhook configurations), also managing those;
 * with `lease` (the name of its Lease, `--lease`), also electing a leader on it.
 */
export function permissionsOf(
  model: modeling.GeneratorModel,
  watchedBuiltins: readonly builtins.BuiltinResource[] = [],
  managedWebhooks?: string,
  lease?: string,
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
  const crds: Watched[] = model.crds.flatMap((crd) => {
    const first = crd.versions[0];
    if (!first) return [];
    return [
      { group: crd.group, plural: crd.plural, namespaced: first.namespaced, statusSubresource: crd.versions.some((version) => version.statusSubresource) },
    ];
  });
  const served = (scope: 'cluster' | 'namespaced'): Rule[] => [
    ...watchRules(
      crds.filter((resource) => resource.namespaced === (scope === 'namespaced')),
      (group) => `observing and patching the served resources of ${group}`,
      (group) => `writing status through the status subresource (${group})`,
    ),
    ...watchRules(
      watchedBuiltins.filter((resource) => resource.namespaced === (scope === 'namespaced')),
      (group) => `observing and patching the built-in resources the handlers watch (${group === '' ? 'core group' : group})`,
      (group) => `writing status of the watched built-in resources (${group === '' ? 'core group' : group})`,
    ),
  ];
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
  };
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

/** A watched resource, CRD or built-in. */
interface Watched {
  readonly group: string;
  readonly plural: string;
  readonly namespaced: boolean;
  readonly statusSubresource: boolean;
}

/** One rule per group for the resources (served verbs), then one per group for their status subresources (patch). */
function watchRules(resources: readonly Watched[], why: (group: string) => string, whyStatus: (group: string) => string): Rule[] {
  const byGroup = new Map<string, Set<string>>();
  const statusByGroup = new Map<string, Set<string>>();
  const add = (groups: Map<string, Set<string>>, group: string, resource: string): void => {
    groups.set(group, (groups.get(group) ?? new Set<string>()).add(resource));
  };
  for (const resource of resources) {
    add(byGroup, resource.group, resource.plural);
    if (resource.statusSubresource) add(statusByGroup, resource.group, `${resource.plural}/status`);
  }
  return [
    ...[...byGroup].map(([group, plurals]) => ({ apiGroups: [group], resources: [...plurals], verbs: [...SERVED_VERBS], why: why(group) })),
    ...[...statusByGroup].map(([group, plurals]) => ({ apiGroups: [group], resources: [...plurals], verbs: ['patch'], why: whyStatus(group) })),
  ];
}
