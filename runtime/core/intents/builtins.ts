/**
 * Typed descriptors of built-in Kubernetes resources: `builtins.Pods`, `builtins.ConfigMaps`, …
 *
 * Operators on built-in kinds register exactly like operators on CRDs (`on.create(builtins.Pods, …)`),
 * with handler arguments typed from the `kubernetes-types` package: declarations only, generated
 * from the API's OpenAPI document, in the JSON shape handlers receive (timestamps and quantities are
 * strings). It is a type-only dependency: nothing of it runs, and a user's type-check reads a few
 * of its files rather than a client library's hundreds of model files. `metadata` is the runtime's
 * own JSON `ObjectMeta`, as for every other body, and `apiVersion`/`kind` are plain strings.
 */

import type * as admissionregistrationV1 from 'kubernetes-types/admissionregistration/v1.js';
import type * as apiextensionsV1 from 'kubernetes-types/apiextensions/v1.js';
import type * as appsV1 from 'kubernetes-types/apps/v1.js';
import type * as batchV1 from 'kubernetes-types/batch/v1.js';
import type * as coordinationV1 from 'kubernetes-types/coordination/v1.js';
import type * as coreV1 from 'kubernetes-types/core/v1.js';
import type * as networkingV1 from 'kubernetes-types/networking/v1.js';
import type * as rbacV1 from 'kubernetes-types/rbac/v1.js';
import * as resources from '../../cogs/structs/resources.js';

/**
 * The JSON shape of a deserialised model: `Date` fields become strings, recursively.
 *
 * The built-in bodies below no longer need it (their models are JSON-shaped already); it stays
 * for models of client libraries that turn timestamps into `Date`s: `BuiltinBody<JsonOf<Model>>`.
 */
export type JsonOf<T> = T extends Date ? string : T extends readonly (infer E)[] ? JsonOf<E>[] : T extends object ? { [K in keyof T]: JsonOf<T[K]> } : T;

/**
 * A built-in object's JSON body, from a JSON-shaped model (e.g. one of `kubernetes-types`):
 * the model's own fields, with the runtime's envelope (`apiVersion`, `kind`, `metadata`).
 */
export type BuiltinBody<T> = Omit<T, 'apiVersion' | 'kind' | 'metadata'> & resources.KubernetesObject;

export type Pod = BuiltinBody<coreV1.Pod>;
export type ConfigMap = BuiltinBody<coreV1.ConfigMap>;
export type Secret = BuiltinBody<coreV1.Secret>;
export type Service = BuiltinBody<coreV1.Service>;
export type Namespace = BuiltinBody<coreV1.Namespace>;
export type Node = BuiltinBody<coreV1.Node>;
export type Event = BuiltinBody<coreV1.Event>;
export type ServiceAccount = BuiltinBody<coreV1.ServiceAccount>;
export type Endpoints = BuiltinBody<coreV1.Endpoints>;
export type PersistentVolumeClaim = BuiltinBody<coreV1.PersistentVolumeClaim>;
export type PersistentVolume = BuiltinBody<coreV1.PersistentVolume>;
export type Deployment = BuiltinBody<appsV1.Deployment>;
export type StatefulSet = BuiltinBody<appsV1.StatefulSet>;
export type DaemonSet = BuiltinBody<appsV1.DaemonSet>;
export type ReplicaSet = BuiltinBody<appsV1.ReplicaSet>;
export type Job = BuiltinBody<batchV1.Job>;
export type CronJob = BuiltinBody<batchV1.CronJob>;
export type Ingress = BuiltinBody<networkingV1.Ingress>;
export type Lease = BuiltinBody<coordinationV1.Lease>;
export type Role = BuiltinBody<rbacV1.Role>;
export type RoleBinding = BuiltinBody<rbacV1.RoleBinding>;
export type ClusterRole = BuiltinBody<rbacV1.ClusterRole>;
export type ClusterRoleBinding = BuiltinBody<rbacV1.ClusterRoleBinding>;
export type CustomResourceDefinition = BuiltinBody<apiextensionsV1.CustomResourceDefinition>;
export type ValidatingWebhookConfiguration = BuiltinBody<admissionregistrationV1.ValidatingWebhookConfiguration>;
export type MutatingWebhookConfiguration = BuiltinBody<admissionregistrationV1.MutatingWebhookConfiguration>;

/**
 * The members that hold a Kubernetes quantity (`resource.Quantity`) or a map of them: every property
 * whose schema in the API's OpenAPI document is a Quantity or a map of Quantities, except `value` (a
 * Quantity only in autoscaling/v2, a plain string in EnvVar and others). Only members of type
 * `string` or string maps are widened, so a same-named member of another shape (LimitRangeSpec's
 * `limits` list, RuntimeClass's `overhead` object) is left as it is.
 */
type QuantityMember =
  | 'limits'
  | 'requests'
  | 'divisor'
  | 'sizeLimit'
  | 'overhead'
  | 'capacity'
  | 'allocatable'
  | 'allocatedResources'
  | 'hard'
  | 'used'
  | 'default'
  | 'defaultRequest'
  | 'max'
  | 'min'
  | 'maxLimitRequestRatio'
  | 'podFixed'
  | 'maximumVolumeSize'
  | 'averageValue';

type NumericQuantity<V> = V extends string
  ? string | number
  : V extends { [key: string]: string }
    ? { [key: string]: string | number }
    : WithNumericQuantities<V>;

/**
 * A built-in model whose quantities may also be written as numbers (`cpu: 1`): the API server
 * accepts a JSON number for any quantity (and answers with the canonical string), and a CRD's
 * embedded copy of a built-in schema types them `number | string` (int-or-string), since a custom
 * object keeps what was written. `kubernetes-types` types them `string`: right for what is read,
 * too narrow for what is written.
 */
export type WithNumericQuantities<T> = T extends readonly (infer E)[]
  ? WithNumericQuantities<E>[]
  : T extends object
    ? { [K in keyof T]: K extends QuantityMember ? NumericQuantity<T[K]> : WithNumericQuantities<T[K]> }
    : T;

/**
 * What a user writes to create a built-in object (the input type of `builtins.*`): `InputOf` the
 * body, with quantities accepted as numbers too, so that a custom resource's embedded copy of a
 * built-in spec (a CronJob's `spec.jobTemplate.spec`) is accepted as it is (R-TYPES-301).
 */
export type BuiltinInput<Body> = resources.InputOf<WithNumericQuantities<Body>>;

type Info = Omit<resources.ResourceInfo, 'group' | 'version' | 'plural' | 'kind' | 'namespaced'>;

/** A descriptor of a built-in `v1` resource whose scope is known at the type level (`NamespaceOf`). */
type Builtin<Body extends resources.KubernetesObject, Namespaced extends boolean> = resources.ResourceDescriptor<Body, BuiltinInput<Body>, unknown, Namespaced>;

function namespacedKind<Body extends resources.KubernetesObject>(group: string, plural: string, kind: string, info: Info = {}): Builtin<Body, true> {
  return resources.resource<Body, BuiltinInput<Body>, unknown, true>({ group, version: 'v1', plural, kind, namespaced: true, ...info });
}

function clusterKind<Body extends resources.KubernetesObject>(group: string, plural: string, kind: string, info: Info = {}): Builtin<Body, false> {
  return resources.resource<Body, BuiltinInput<Body>, unknown, false>({ group, version: 'v1', plural, kind, namespaced: false, ...info });
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
  Pods: namespacedKind<Pod>('', 'pods', 'Pod', { shortNames: ['po'], categories: all, statusSubresource: true }),
  ConfigMaps: namespacedKind<ConfigMap>('', 'configmaps', 'ConfigMap', { shortNames: ['cm'] }),
  Secrets: namespacedKind<Secret>('', 'secrets', 'Secret'),
  Services: namespacedKind<Service>('', 'services', 'Service', { shortNames: ['svc'], categories: all, statusSubresource: true }),
  Namespaces: clusterKind<Namespace>('', 'namespaces', 'Namespace', { shortNames: ['ns'], statusSubresource: true }),
  Nodes: clusterKind<Node>('', 'nodes', 'Node', { shortNames: ['no'], statusSubresource: true }),
  Events: namespacedKind<Event>('', 'events', 'Event', { shortNames: ['ev'] }),
  ServiceAccounts: namespacedKind<ServiceAccount>('', 'serviceaccounts', 'ServiceAccount', { shortNames: ['sa'] }),
  Endpoints: namespacedKind<Endpoints>('', 'endpoints', 'Endpoints', { shortNames: ['ep'] }),
  PersistentVolumeClaims: namespacedKind<PersistentVolumeClaim>('', 'persistentvolumeclaims', 'PersistentVolumeClaim', {
    shortNames: ['pvc'],
    statusSubresource: true,
  }),
  PersistentVolumes: clusterKind<PersistentVolume>('', 'persistentvolumes', 'PersistentVolume', { shortNames: ['pv'], statusSubresource: true }),
  Deployments: namespacedKind<Deployment>('apps', 'deployments', 'Deployment', { shortNames: ['deploy'], categories: all, statusSubresource: true }),
  StatefulSets: namespacedKind<StatefulSet>('apps', 'statefulsets', 'StatefulSet', { shortNames: ['sts'], categories: all, statusSubresource: true }),
  DaemonSets: namespacedKind<DaemonSet>('apps', 'daemonsets', 'DaemonSet', { shortNames: ['ds'], categories: all, statusSubresource: true }),
  ReplicaSets: namespacedKind<ReplicaSet>('apps', 'replicasets', 'ReplicaSet', { shortNames: ['rs'], categories: all, statusSubresource: true }),
  Jobs: namespacedKind<Job>('batch', 'jobs', 'Job', { categories: all, statusSubresource: true }),
  CronJobs: namespacedKind<CronJob>('batch', 'cronjobs', 'CronJob', { shortNames: ['cj'], categories: all, statusSubresource: true }),
  Ingresses: namespacedKind<Ingress>('networking.k8s.io', 'ingresses', 'Ingress', { shortNames: ['ing'], statusSubresource: true }),
  Leases: namespacedKind<Lease>('coordination.k8s.io', 'leases', 'Lease'),
  Roles: namespacedKind<Role>('rbac.authorization.k8s.io', 'roles', 'Role'),
  RoleBindings: namespacedKind<RoleBinding>('rbac.authorization.k8s.io', 'rolebindings', 'RoleBinding'),
  ClusterRoles: clusterKind<ClusterRole>('rbac.authorization.k8s.io', 'clusterroles', 'ClusterRole'),
  ClusterRoleBindings: clusterKind<ClusterRoleBinding>('rbac.authorization.k8s.io', 'clusterrolebindings', 'ClusterRoleBinding'),
  CustomResourceDefinitions: clusterKind<CustomResourceDefinition>('apiextensions.k8s.io', 'customresourcedefinitions', 'CustomResourceDefinition', {
    shortNames: ['crd', 'crds'],
    statusSubresource: true,
  }),
  ValidatingWebhookConfigurations: clusterKind<ValidatingWebhookConfiguration>(
    'admissionregistration.k8s.io',
    'validatingwebhookconfigurations',
    'ValidatingWebhookConfiguration',
  ),
  MutatingWebhookConfigurations: clusterKind<MutatingWebhookConfiguration>(
    'admissionregistration.k8s.io',
    'mutatingwebhookconfigurations',
    'MutatingWebhookConfiguration',
  ),
});
