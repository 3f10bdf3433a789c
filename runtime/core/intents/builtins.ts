/**
 * Typed descriptors of built-in Kubernetes resources: `builtins.Pods`, `builtins.ConfigMaps`, …
 *
 * Operators on built-in kinds register exactly like operators on CRDs (`on.create(builtins.Pods, …)`),
 * with handler arguments typed from @kubernetes/client-node's model interfaces. Those models are
 * the *deserialised* shapes (timestamps as `Date`); handlers receive plain JSON, so `JsonOf<T>` maps
 * every `Date` to the RFC 3339 string the API sends, and `metadata` is the runtime's own JSON
 * `ObjectMeta`. Only types are imported from the client library: nothing of it runs here.
 */

import type * as k8s from '@kubernetes/client-node';
import * as resources from '../../cogs/structs/resources.js';

/** The JSON shape of a client-library model: `Date` fields become strings, recursively. */
export type JsonOf<T> =
  T extends Date ? string
  : T extends readonly (infer E)[] ? JsonOf<E>[]
  : T extends object ? { [K in keyof T]: JsonOf<T[K]> }
  : T;

/** A built-in object's JSON body, from a client-library model. */
export type BuiltinBody<T> = Omit<JsonOf<T>, 'apiVersion' | 'kind' | 'metadata'> & resources.KubernetesObject;

export type Pod = BuiltinBody<k8s.V1Pod>;
export type ConfigMap = BuiltinBody<k8s.V1ConfigMap>;
export type Secret = BuiltinBody<k8s.V1Secret>;
export type Service = BuiltinBody<k8s.V1Service>;
export type Namespace = BuiltinBody<k8s.V1Namespace>;
export type Node = BuiltinBody<k8s.V1Node>;
export type Event = BuiltinBody<k8s.CoreV1Event>;
export type ServiceAccount = BuiltinBody<k8s.V1ServiceAccount>;
export type Endpoints = BuiltinBody<k8s.V1Endpoints>;
export type PersistentVolumeClaim = BuiltinBody<k8s.V1PersistentVolumeClaim>;
export type PersistentVolume = BuiltinBody<k8s.V1PersistentVolume>;
export type Deployment = BuiltinBody<k8s.V1Deployment>;
export type StatefulSet = BuiltinBody<k8s.V1StatefulSet>;
export type DaemonSet = BuiltinBody<k8s.V1DaemonSet>;
export type ReplicaSet = BuiltinBody<k8s.V1ReplicaSet>;
export type Job = BuiltinBody<k8s.V1Job>;
export type CronJob = BuiltinBody<k8s.V1CronJob>;
export type Ingress = BuiltinBody<k8s.V1Ingress>;
export type Lease = BuiltinBody<k8s.V1Lease>;
export type Role = BuiltinBody<k8s.V1Role>;
export type RoleBinding = BuiltinBody<k8s.V1RoleBinding>;
export type ClusterRole = BuiltinBody<k8s.V1ClusterRole>;
export type ClusterRoleBinding = BuiltinBody<k8s.V1ClusterRoleBinding>;
export type CustomResourceDefinition = BuiltinBody<k8s.V1CustomResourceDefinition>;
export type ValidatingWebhookConfiguration = BuiltinBody<k8s.V1ValidatingWebhookConfiguration>;
export type MutatingWebhookConfiguration = BuiltinBody<k8s.V1MutatingWebhookConfiguration>;

type Info = Omit<resources.ResourceInfo, 'group' | 'version' | 'plural' | 'kind' | 'namespaced'>;

function core<Body extends resources.KubernetesObject>(plural: string, kind: string, namespaced: boolean, info: Info = {}): resources.ResourceDescriptor<Body> {
  return resources.resource<Body>({ group: '', version: 'v1', plural, kind, namespaced, ...info });
}

function grouped<Body extends resources.KubernetesObject>(
  group: string, plural: string, kind: string, namespaced: boolean, info: Info = {},
): resources.ResourceDescriptor<Body> {
  return resources.resource<Body>({ group, version: 'v1', plural, kind, namespaced, ...info });
}

const all = ['all'] as const;

/**
 * Descriptors of common built-in resources (their `v1` versions).
 *
 * @example
 * on.create(builtins.Pods, async function podCreated({ spec, name, logger }) {
 *   logger.info(`${name} runs ${spec.containers.length} containers`);
 * });
 */
export const builtins = Object.freeze({
  Pods: core<Pod>('pods', 'Pod', true, { shortNames: ['po'], categories: all, statusSubresource: true }),
  ConfigMaps: core<ConfigMap>('configmaps', 'ConfigMap', true, { shortNames: ['cm'] }),
  Secrets: core<Secret>('secrets', 'Secret', true),
  Services: core<Service>('services', 'Service', true, { shortNames: ['svc'], categories: all, statusSubresource: true }),
  Namespaces: core<Namespace>('namespaces', 'Namespace', false, { shortNames: ['ns'], statusSubresource: true }),
  Nodes: core<Node>('nodes', 'Node', false, { shortNames: ['no'], statusSubresource: true }),
  Events: core<Event>('events', 'Event', true, { shortNames: ['ev'] }),
  ServiceAccounts: core<ServiceAccount>('serviceaccounts', 'ServiceAccount', true, { shortNames: ['sa'] }),
  Endpoints: core<Endpoints>('endpoints', 'Endpoints', true, { shortNames: ['ep'] }),
  PersistentVolumeClaims: core<PersistentVolumeClaim>('persistentvolumeclaims', 'PersistentVolumeClaim', true,
    { shortNames: ['pvc'], statusSubresource: true }),
  PersistentVolumes: core<PersistentVolume>('persistentvolumes', 'PersistentVolume', false, { shortNames: ['pv'], statusSubresource: true }),
  Deployments: grouped<Deployment>('apps', 'deployments', 'Deployment', true, { shortNames: ['deploy'], categories: all, statusSubresource: true }),
  StatefulSets: grouped<StatefulSet>('apps', 'statefulsets', 'StatefulSet', true, { shortNames: ['sts'], categories: all, statusSubresource: true }),
  DaemonSets: grouped<DaemonSet>('apps', 'daemonsets', 'DaemonSet', true, { shortNames: ['ds'], categories: all, statusSubresource: true }),
  ReplicaSets: grouped<ReplicaSet>('apps', 'replicasets', 'ReplicaSet', true, { shortNames: ['rs'], categories: all, statusSubresource: true }),
  Jobs: grouped<Job>('batch', 'jobs', 'Job', true, { categories: all, statusSubresource: true }),
  CronJobs: grouped<CronJob>('batch', 'cronjobs', 'CronJob', true, { shortNames: ['cj'], categories: all, statusSubresource: true }),
  Ingresses: grouped<Ingress>('networking.k8s.io', 'ingresses', 'Ingress', true, { shortNames: ['ing'], statusSubresource: true }),
  Leases: grouped<Lease>('coordination.k8s.io', 'leases', 'Lease', true),
  Roles: grouped<Role>('rbac.authorization.k8s.io', 'roles', 'Role', true),
  RoleBindings: grouped<RoleBinding>('rbac.authorization.k8s.io', 'rolebindings', 'RoleBinding', true),
  ClusterRoles: grouped<ClusterRole>('rbac.authorization.k8s.io', 'clusterroles', 'ClusterRole', false),
  ClusterRoleBindings: grouped<ClusterRoleBinding>('rbac.authorization.k8s.io', 'clusterrolebindings', 'ClusterRoleBinding', false),
  CustomResourceDefinitions: grouped<CustomResourceDefinition>('apiextensions.k8s.io', 'customresourcedefinitions',
    'CustomResourceDefinition', false, { shortNames: ['crd', 'crds'], statusSubresource: true }),
  ValidatingWebhookConfigurations: grouped<ValidatingWebhookConfiguration>('admissionregistration.k8s.io',
    'validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', false),
  MutatingWebhookConfigurations: grouped<MutatingWebhookConfiguration>('admissionregistration.k8s.io',
    'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', false),
});
