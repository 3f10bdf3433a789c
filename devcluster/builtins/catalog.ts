/**
 * The built-in resources served by the devcluster (D-BI-1): names, scope, short names,
 * subresources and the generic flags of each, with the kind-specific strategy where one exists.
 * Kind-specific behaviour lives in one module per kind beside this one.
 */
import * as strategic from '../patching/strategic.js';
import * as objects from '../api/objects.js';
import * as resources from '../api/resources.js';
import * as namespaces from './namespaces.js';

type JsonObject = objects.JsonObject;

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

/** A plain strategy for stored-only kinds; options override the defaults. */
export function plainStrategy(kind: string, overrides: Partial<resources.Strategy> = {}): resources.Strategy {
  return {
    nameRule: 'subdomain',
    putCreates: false,
    requireResourceVersion: false,
    deleteReturnsObject: false,
    smpSchema: strategic.builtinSmpSchema(kind),
    ...overrides,
  };
}

const specChanged = (old: JsonObject, next: JsonObject): boolean => !objects.deepEqual(old['spec'], next['spec']);

/** Status-subresource handling shared by Pods, Deployments, CRDs (D-SUB-3, documented simplification). */
export const statusSubresource: Pick<resources.Strategy, 'prepareForUpdate' | 'prepareForSubresource'> = {
  prepareForUpdate(obj, old) {
    const out = { ...obj };
    if (old['status'] === undefined) delete out['status']; else out['status'] = old['status'];
    return out;
  },
  prepareForSubresource(sub, obj, old) {
    if (sub !== 'status') return old;
    const out: JsonObject = { ...old, metadata: { ...objects.metaOf(old) } };
    if (obj['status'] === undefined) delete out['status']; else out['status'] = obj['status'];
    return out;
  },
};

/** Overridable per-kind strategies; other modules register richer ones here before the cluster starts. */
export const kindStrategies = new Map<string, resources.Strategy>();

function specs(): BuiltinSpec[] {
  const k = (kind: string, fallback: resources.Strategy): resources.Strategy => kindStrategies.get(kind) ?? fallback;
  return [
    { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false, shortNames: ['ns'], subresources: ['status', 'finalize'],
      strategy: k('Namespace', { ...namespaces.namespaceStrategy, smpSchema: strategic.builtinSmpSchema('Namespace') }) },
    { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'], strategy: k('ConfigMap', plainStrategy('ConfigMap')) },
    { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true, strategy: k('Secret', plainStrategy('Secret', { fieldSelectors: { type: (o) => o['type'] as string | undefined } })) },
    { group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true, shortNames: ['po'], categories: ['all'], subresources: ['status'],
      strategy: k('Pod', plainStrategy('Pod', { ...statusSubresource, deleteReturnsObject: true })) },
    { group: '', version: 'v1', resource: 'services', kind: 'Service', namespaced: true, shortNames: ['svc'], categories: ['all'], subresources: ['status'],
      strategy: k('Service', plainStrategy('Service', { ...statusSubresource, nameRule: 'dns1035' })) },
    { group: '', version: 'v1', resource: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true, shortNames: ['sa'],
      strategy: k('ServiceAccount', plainStrategy('ServiceAccount', { deleteReturnsObject: true })) },
    { group: '', version: 'v1', resource: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'], storage: 'events',
      strategy: k('Event', plainStrategy('Event', { putCreates: true })) },
    { group: 'events.k8s.io', version: 'v1', resource: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'], storage: 'events',
      strategy: k('events.k8s.io/Event', plainStrategy('Event', { putCreates: true })) },
    { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true, shortNames: ['deploy'], categories: ['all'],
      subresources: ['status', 'scale'], scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector' },
      strategy: k('Deployment', plainStrategy('Deployment', {
        ...statusSubresource,
        generation: (old, next) => specChanged(old, next) || !objects.deepEqual(objects.metaOf(old)['annotations'], objects.metaOf(next)['annotations']),
      })) },
    { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true,
      strategy: k('Lease', plainStrategy('Lease', { putCreates: true, requireResourceVersion: true })) },
    { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations', kind: 'ValidatingWebhookConfiguration', namespaced: false,
      strategy: k('ValidatingWebhookConfiguration', plainStrategy('ValidatingWebhookConfiguration', { requireResourceVersion: true, generation: (o, n) => !objects.deepEqual(o['webhooks'], n['webhooks']) })) },
    { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'mutatingwebhookconfigurations', kind: 'MutatingWebhookConfiguration', namespaced: false,
      strategy: k('MutatingWebhookConfiguration', plainStrategy('MutatingWebhookConfiguration', { requireResourceVersion: true, generation: (o, n) => !objects.deepEqual(o['webhooks'], n['webhooks']) })) },
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
