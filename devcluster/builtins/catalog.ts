/**
 * The built-in resources served by the devcluster (D-BI-1): names, scope, short names,
 * subresources and storage of each, with the kind-specific strategy. Kind-specific behaviour
 * lives in one module per kind beside this one (pods.ts, services.ts, …); the shared building
 * blocks are in strategies.ts and re-exported here for older callers.
 */
import * as strategic from '../patching/strategic.js';
import * as resources from '../api/resources.js';
import * as configmaps from './configmaps.js';
import * as deployments from './deployments.js';
import * as events from './events.js';
import * as eventsv1 from './eventsv1.js';
import * as leases from './leases.js';
import * as namespaces from './namespaces.js';
import * as pods from './pods.js';
import * as secrets from './secrets.js';
import * as services from './services.js';
import * as strategies from './strategies.js';
import * as webhookconfigurations from './webhookconfigurations.js';

interface BuiltinSpec {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  subresources?: string[];
  scale?: resources.ScaleSpec;
  storage?: string;
  strategy: resources.Strategy;
}

/** A plain strategy for stored-only kinds (see strategies.ts). */
export const plainStrategy = strategies.plainStrategy;

/** Status-subresource handling shared by Pods, Services, Deployments, CRDs (see strategies.ts). */
export const statusSubresource = strategies.statusSubresource;

/** Overridable per-kind strategies: an entry registered before the cluster starts replaces the built-in one. */
export const kindStrategies = new Map<string, resources.Strategy>();

function specs(): BuiltinSpec[] {
  const k = (kind: string, fallback: resources.Strategy): resources.Strategy => kindStrategies.get(kind) ?? fallback;
  return [
    {
      group: '',
      version: 'v1',
      resource: 'namespaces',
      kind: 'Namespace',
      namespaced: false,
      shortNames: ['ns'],
      subresources: ['status', 'finalize'],
      strategy: k('Namespace', { ...namespaces.namespaceStrategy, smpSchema: strategic.builtinSmpSchema('Namespace') }),
    },
    {
      group: '',
      version: 'v1',
      resource: 'configmaps',
      kind: 'ConfigMap',
      namespaced: true,
      shortNames: ['cm'],
      strategy: k('ConfigMap', configmaps.configMapStrategy),
    },
    { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true, strategy: k('Secret', secrets.secretStrategy) },
    {
      group: '',
      version: 'v1',
      resource: 'pods',
      kind: 'Pod',
      namespaced: true,
      shortNames: ['po'],
      categories: ['all'],
      subresources: ['status'],
      strategy: k('Pod', pods.podStrategy),
    },
    {
      group: '',
      version: 'v1',
      resource: 'services',
      kind: 'Service',
      namespaced: true,
      shortNames: ['svc'],
      categories: ['all'],
      subresources: ['status'],
      strategy: k('Service', services.serviceStrategy),
    },
    {
      group: '',
      version: 'v1',
      resource: 'serviceaccounts',
      kind: 'ServiceAccount',
      namespaced: true,
      shortNames: ['sa'],
      strategy: k('ServiceAccount', plainStrategy('ServiceAccount', { deleteReturnsObject: true })),
    },
    {
      group: '',
      version: 'v1',
      resource: 'events',
      kind: 'Event',
      namespaced: true,
      shortNames: ['ev'],
      storage: 'events',
      strategy: k('Event', events.eventStrategy),
    },
    {
      group: 'events.k8s.io',
      version: 'v1',
      resource: 'events',
      kind: 'Event',
      namespaced: true,
      shortNames: ['ev'],
      storage: 'events',
      strategy: k('events.k8s.io/Event', eventsv1.eventsV1Strategy),
    },
    {
      group: 'apps',
      version: 'v1',
      resource: 'deployments',
      kind: 'Deployment',
      namespaced: true,
      shortNames: ['deploy'],
      categories: ['all'],
      subresources: ['status', 'scale'],
      scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector' },
      strategy: k('Deployment', deployments.deploymentStrategy),
    },
    { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true, strategy: k('Lease', leases.leaseStrategy) },
    {
      group: 'admissionregistration.k8s.io',
      version: 'v1',
      resource: 'validatingwebhookconfigurations',
      kind: 'ValidatingWebhookConfiguration',
      namespaced: false,
      strategy: k('ValidatingWebhookConfiguration', webhookconfigurations.webhookConfigurationStrategy('ValidatingWebhookConfiguration')),
    },
    {
      group: 'admissionregistration.k8s.io',
      version: 'v1',
      resource: 'mutatingwebhookconfigurations',
      kind: 'MutatingWebhookConfiguration',
      namespaced: false,
      strategy: k('MutatingWebhookConfiguration', webhookconfigurations.webhookConfigurationStrategy('MutatingWebhookConfiguration')),
    },
  ];
}

export function builtinTypes(): resources.ResourceType[] {
  return specs().map((s) => ({
    group: s.group,
    version: s.version,
    resource: s.resource,
    singular: s.kind.toLowerCase(),
    kind: s.kind,
    listKind: `${s.kind}List`,
    namespaced: s.namespaced,
    shortNames: s.shortNames ?? [],
    categories: s.categories ?? [],
    verbs: resources.ALL_VERBS,
    storage: s.storage ?? resources.storageOf(s.group, s.resource),
    subresources: s.subresources ?? [],
    scale: s.scale,
    builtin: true,
    strategy: s.strategy,
  }));
}
