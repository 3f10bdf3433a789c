/**
 * The built-in resources served by the devcluster (D-BI-1): every resource a vanilla Kubernetes
 * 1.32 cluster serves, as the upstream catalog (`devcluster/upstream/catalog.json`, derived from
 * the published OpenAPI document) lists them — group, version, kind, scope, verbs, short names,
 * categories and subresources.
 *
 * Each kind's behaviour is its strategy. Kinds with behaviour of their own have a module beside
 * this one (pods.ts, services.ts, …, and the workload kinds); every other kind gets the generic
 * strategy of `generic.ts`, driven by its OpenAPI schema (decoding, unknown fields, required fields,
 * enums, strategic-merge keys). The shared building blocks are in strategies.ts and re-exported here
 * for older callers.
 */
import * as resources from '../api/resources.js';
import * as strategic from '../patching/strategic.js';
import * as upstream from '../upstream/catalog.js';
import * as certificatesigningrequests from './certificatesigningrequests.js';
import * as configmaps from './configmaps.js';
import * as cronjobs from './cronjobs.js';
import * as daemonsets from './daemonsets.js';
import * as deployments from './deployments.js';
import * as events from './events.js';
import * as eventsv1 from './eventsv1.js';
import * as generic from './generic.js';
import * as jobs from './jobs.js';
import * as leases from './leases.js';
import * as namespaces from './namespaces.js';
import * as persistentvolumeclaims from './persistentvolumeclaims.js';
import * as pods from './pods.js';
import * as priorityclasses from './priorityclasses.js';
import * as podtemplates from './podtemplates.js';
import * as replicasets from './replicasets.js';
import * as replicationcontrollers from './replicationcontrollers.js';
import * as schemapatch from './schemapatch.js';
import * as secrets from './secrets.js';
import * as statefulsets from './statefulsets.js';
import * as services from './services.js';
import * as strategies from './strategies.js';
import * as webhookconfigurations from './webhookconfigurations.js';

/** A plain strategy for stored-only kinds (see strategies.ts). */
export const plainStrategy = strategies.plainStrategy;

/** Status-subresource handling shared by Pods, Services, Deployments, CRDs (see strategies.ts). */
export const statusSubresource = strategies.statusSubresource;

/** Overridable per-kind strategies: an entry registered before the cluster starts replaces the built-in one. */
export const kindStrategies = new Map<string, resources.Strategy>();

/** What a kind's own module adds to the catalog entry. */
interface Special {
  /** The key of `kindStrategies` (the kind, or `group/Kind` where two groups share a kind). */
  strategyKey: string;
  strategy: (e: upstream.ResourceEntry) => resources.Strategy;
  /** Storage shared with another served type (core and events.k8s.io Events). */
  storage?: string;
  scale?: resources.ScaleSpec;
  /** A Warning header for every request (deprecated resources). */
  deprecationWarning?: string;
}

/** A kind's own strategy with the merge semantics of its upstream schema (D-BI-22). */
const withSchemaMerging =
  (strategy: resources.Strategy) =>
  (e: upstream.ResourceEntry): resources.Strategy => ({
    ...strategy,
    smpSchema: schemapatch.smpSchemaOf(e.definition),
    listSemantics: schemapatch.listSemanticsOf(e.definition),
  });

const REPLICAS_SCALE: resources.ScaleSpec = { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector' };

/** Kinds with a module of their own, by `group/resource` (core: `resource`). */
const SPECIAL: Readonly<Record<string, Special>> = {
  namespaces: {
    strategyKey: 'Namespace',
    strategy: () => ({ ...namespaces.namespaceStrategy, smpSchema: strategic.builtinSmpSchema('Namespace') }),
  },
  configmaps: { strategyKey: 'ConfigMap', strategy: () => configmaps.configMapStrategy },
  secrets: { strategyKey: 'Secret', strategy: () => secrets.secretStrategy },
  pods: { strategyKey: 'Pod', strategy: () => pods.podStrategy },
  services: { strategyKey: 'Service', strategy: () => services.serviceStrategy },
  serviceaccounts: { strategyKey: 'ServiceAccount', strategy: () => plainStrategy('ServiceAccount', { deleteReturnsObject: true }) },
  events: { strategyKey: 'Event', strategy: () => events.eventStrategy, storage: 'events' },
  'events.k8s.io/events': { strategyKey: 'events.k8s.io/Event', strategy: () => eventsv1.eventsV1Strategy, storage: 'events' },
  'apps/deployments': { strategyKey: 'Deployment', strategy: () => deployments.deploymentStrategy, scale: REPLICAS_SCALE },
  'scheduling.k8s.io/priorityclasses': { strategyKey: 'PriorityClass', strategy: (e) => priorityclasses.priorityClassStrategy(e) },
  'coordination.k8s.io/leases': { strategyKey: 'Lease', strategy: () => leases.leaseStrategy },
  'batch/jobs': { strategyKey: 'Job', strategy: withSchemaMerging(jobs.jobStrategy) },
  'batch/cronjobs': { strategyKey: 'CronJob', strategy: withSchemaMerging(cronjobs.cronJobStrategy) },
  'apps/statefulsets': { strategyKey: 'StatefulSet', strategy: withSchemaMerging(statefulsets.statefulSetStrategy) },
  'apps/daemonsets': { strategyKey: 'DaemonSet', strategy: withSchemaMerging(daemonsets.daemonSetStrategy) },
  'apps/replicasets': { strategyKey: 'ReplicaSet', strategy: withSchemaMerging(replicasets.replicaSetStrategy) },
  replicationcontrollers: { strategyKey: 'ReplicationController', strategy: withSchemaMerging(replicationcontrollers.replicationControllerStrategy) },
  persistentvolumeclaims: { strategyKey: 'PersistentVolumeClaim', strategy: withSchemaMerging(persistentvolumeclaims.persistentVolumeClaimStrategy) },
  podtemplates: { strategyKey: 'PodTemplate', strategy: withSchemaMerging(podtemplates.podTemplateStrategy) },
  'certificates.k8s.io/certificatesigningrequests': {
    strategyKey: 'CertificateSigningRequest',
    strategy: withSchemaMerging(certificatesigningrequests.certificateSigningRequestStrategy),
  },
  componentstatuses: { strategyKey: 'ComponentStatus', strategy: generic.genericStrategy, deprecationWarning: 'v1 ComponentStatus is deprecated in v1.19+' },
  'admissionregistration.k8s.io/validatingwebhookconfigurations': {
    strategyKey: 'ValidatingWebhookConfiguration',
    strategy: () => webhookconfigurations.webhookConfigurationStrategy('ValidatingWebhookConfiguration'),
  },
  'admissionregistration.k8s.io/mutatingwebhookconfigurations': {
    strategyKey: 'MutatingWebhookConfiguration',
    strategy: () => webhookconfigurations.webhookConfigurationStrategy('MutatingWebhookConfiguration'),
  },
};

/** Resources served elsewhere: CRDs have their own module and registration (`customresourcedefinitions.ts`). */
const SERVED_ELSEWHERE = new Set(['apiextensions.k8s.io/customresourcedefinitions']);

/** Scale subresources of the generic kinds, by `group/resource`. */
const GENERIC_SCALE: Readonly<Record<string, resources.ScaleSpec>> = {
  'apps/replicasets': REPLICAS_SCALE,
  'apps/statefulsets': REPLICAS_SCALE,
  replicationcontrollers: {
    specReplicasPath: '.spec.replicas',
    statusReplicasPath: '.status.replicas',
    labelSelectorPath: '.spec.selector',
    selectorIsMap: true,
  },
};

const keyOf = (e: upstream.ResourceEntry): string => (e.group ? `${e.group}/${e.resource}` : e.resource);

/**
 * The storage of a catalog entry: shared by the versions of a resource only when they have one
 * schema; autoscaling/v1 and v2 HorizontalPodAutoscalers differ and the devcluster does not convert
 * between them, so the older version is stored on its own (a documented divergence).
 */
function storageOf(e: upstream.ResourceEntry, all: readonly upstream.ResourceEntry[], special: Special | undefined): string {
  if (special?.storage) return special.storage;
  const base = resources.storageOf(e.group, e.resource);
  const preferred = all.filter((o) => o.group === e.group && o.resource === e.resource).sort((a, b) => (a.version < b.version ? 1 : -1))[0];
  return preferred && preferred.version !== e.version ? `${base}@${e.version}` : base;
}

function subresourceInfo(e: upstream.ResourceEntry): Record<string, resources.SubresourceInfo> {
  const out: Record<string, resources.SubresourceInfo> = {};
  for (const s of e.subresources) {
    out[s.name] = { verbs: s.verbs, kind: s.kind, group: s.group, version: s.version, connect: s.connect };
  }
  return out;
}

/** Every built-in resource type the devcluster serves. */
export function builtinTypes(): resources.ResourceType[] {
  const all = upstream.entries();
  return all
    .filter((e) => !SERVED_ELSEWHERE.has(keyOf(e)))
    .map((e): resources.ResourceType => {
      const special = SPECIAL[keyOf(e)];
      const own = special ? (kindStrategies.get(special.strategyKey) ?? special.strategy(e)) : (kindStrategies.get(e.kind) ?? generic.genericStrategy(e));
      const strategy = generic.withSchema(own, e);
      return {
        group: e.group,
        version: e.version,
        resource: e.resource,
        singular: e.singular,
        kind: e.kind,
        listKind: `${e.kind}List`,
        namespaced: e.namespaced,
        shortNames: e.shortNames,
        categories: e.categories,
        verbs: e.verbs as resources.Verb[],
        storage: storageOf(e, all, special),
        subresources: e.subresources.map((s) => s.name),
        subresourceInfo: subresourceInfo(e),
        scale: special?.scale ?? GENERIC_SCALE[keyOf(e)],
        ...(special?.deprecationWarning ? { deprecationWarning: special.deprecationWarning } : {}),
        definition: e.definition,
        builtin: true,
        strategy,
      };
    });
}
