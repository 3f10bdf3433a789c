/**
 * Builtins: the built-in Kubernetes resources a generated operator's handlers may register for,
 * and how a literal resource reference (`'configmaps'`, `['apps', 'v1', 'deployments']`,
 * `{ kind: 'Pod' }`) selects among them.
 *
 * The RBAC of a generated project must cover every resource the operator watches, and handlers
 * can watch built-in kinds as well as the project's CRDs (`on.create(builtins.ConfigMaps, …)`).
 * detecting.ts finds such references in the user's code; this module says which resources they
 * mean, so permissions.ts can grant them. The table mirrors the runtime's `builtins` descriptors
 * (runtime/core/intents/builtins.ts) — the generator does not load the runtime to read them, and
 * a test keeps the two in step. Reference matching follows the runtime's selectors (R-RES-1..4):
 * a name matches a kind, plural, singular or short name; without a version, the preferred version
 * (`v1` for all of these); specific names prefer the core group. Pure data and functions.
 */

/** One built-in resource, as the runtime's `builtins` descriptor describes it. */
export interface BuiltinResource {
  /** The property of `builtins`, e.g. `ConfigMaps`. */
  readonly descriptor: string;
  /** The API group (`''` for the core group). */
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  /** Whether the resource has a status subresource (status is written through it). */
  readonly statusSubresource: boolean;
}

type Entry = [
  descriptor: string,
  group: string,
  plural: string,
  kind: string,
  namespaced: boolean,
  shortNames?: string[],
  categories?: string[],
  statusSubresource?: boolean,
];

const ALL = ['all'];

const ENTRIES: readonly Entry[] = [
  ['Pods', '', 'pods', 'Pod', true, ['po'], ALL, true],
  ['ConfigMaps', '', 'configmaps', 'ConfigMap', true, ['cm']],
  ['Secrets', '', 'secrets', 'Secret', true],
  ['Services', '', 'services', 'Service', true, ['svc'], ALL, true],
  ['Namespaces', '', 'namespaces', 'Namespace', false, ['ns'], [], true],
  ['Nodes', '', 'nodes', 'Node', false, ['no'], [], true],
  ['Events', '', 'events', 'Event', true, ['ev']],
  ['ServiceAccounts', '', 'serviceaccounts', 'ServiceAccount', true, ['sa']],
  ['Endpoints', '', 'endpoints', 'Endpoints', true, ['ep']],
  ['PersistentVolumeClaims', '', 'persistentvolumeclaims', 'PersistentVolumeClaim', true, ['pvc'], [], true],
  ['PersistentVolumes', '', 'persistentvolumes', 'PersistentVolume', false, ['pv'], [], true],
  ['Deployments', 'apps', 'deployments', 'Deployment', true, ['deploy'], ALL, true],
  ['StatefulSets', 'apps', 'statefulsets', 'StatefulSet', true, ['sts'], ALL, true],
  ['DaemonSets', 'apps', 'daemonsets', 'DaemonSet', true, ['ds'], ALL, true],
  ['ReplicaSets', 'apps', 'replicasets', 'ReplicaSet', true, ['rs'], ALL, true],
  ['Jobs', 'batch', 'jobs', 'Job', true, [], ALL, true],
  ['CronJobs', 'batch', 'cronjobs', 'CronJob', true, ['cj'], ALL, true],
  ['Ingresses', 'networking.k8s.io', 'ingresses', 'Ingress', true, ['ing'], [], true],
  ['Leases', 'coordination.k8s.io', 'leases', 'Lease', true],
  ['Roles', 'rbac.authorization.k8s.io', 'roles', 'Role', true],
  ['RoleBindings', 'rbac.authorization.k8s.io', 'rolebindings', 'RoleBinding', true],
  ['ClusterRoles', 'rbac.authorization.k8s.io', 'clusterroles', 'ClusterRole', false],
  ['ClusterRoleBindings', 'rbac.authorization.k8s.io', 'clusterrolebindings', 'ClusterRoleBinding', false],
  ['CustomResourceDefinitions', 'apiextensions.k8s.io', 'customresourcedefinitions', 'CustomResourceDefinition', false, ['crd', 'crds'], [], true],
  ['ValidatingWebhookConfigurations', 'admissionregistration.k8s.io', 'validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', false],
  ['MutatingWebhookConfigurations', 'admissionregistration.k8s.io', 'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', false],
];

/** Every built-in resource the runtime has a descriptor for, in the runtime's order. */
export const BUILTIN_RESOURCES: readonly BuiltinResource[] = ENTRIES.map(
  ([descriptor, group, plural, kind, namespaced, shortNames = [], categories = [], statusSubresource = false]) => ({
    descriptor,
    group,
    version: 'v1',
    plural,
    kind,
    namespaced,
    shortNames,
    categories,
    statusSubresource,
  }),
);

/** The built-in resource of a `builtins` property name, if there is one. */
export function byDescriptor(name: string): BuiltinResource | undefined {
  return BUILTIN_RESOURCES.find((resource) => resource.descriptor === name);
}

/** A resource reference written as literals: a string, a tuple of strings, or a selector object. */
export type LiteralReference = string | readonly string[] | Readonly<Record<string, string>>;

interface Selection {
  readonly group?: string;
  readonly version?: string;
  readonly name?: string;
  readonly kind?: string;
  readonly plural?: string;
  readonly singular?: string;
  readonly shortcut?: string;
  readonly category?: string;
}

const VERSION = /^v\d+(?:(?:alpha|beta)\d+)?$/;
const NAME_KEYS = ['kind', 'plural', 'singular', 'shortcut', 'category'] as const;
const OBJECT_KEYS = new Set<string>(['group', 'version', ...NAME_KEYS]);

/**
 * The built-in resources a literal reference selects (empty for references the runtime would
 * reject, and for references to anything else, such as the project's own CRDs).
 *
 * @example
 * resolveReference('cm')                          // [ConfigMaps]
 * resolveReference(['apps/v1', 'deployments'])    // [Deployments]
 * resolveReference({ category: 'all' })           // [Pods, Services, Deployments, …]
 */
export function resolveReference(ref: LiteralReference): BuiltinResource[] {
  const selection = parse(ref);
  if (selection === undefined) return [];
  const matched = BUILTIN_RESOURCES.filter((resource) => matches(selection, resource));
  const specific = selection.category === undefined;
  return specific && matched.some((resource) => resource.group === '') ? matched.filter((resource) => resource.group === '') : matched;
}

function parse(ref: LiteralReference): Selection | undefined {
  if (typeof ref === 'string') return parseString(ref);
  if (Array.isArray(ref)) return parseTuple(ref as readonly string[]);
  return parseObject(ref as Readonly<Record<string, string>>);
}

function parseString(text: string): Selection | undefined {
  if (text === '') return undefined;
  const dot = text.indexOf('.');
  if (dot < 0) return { name: text };
  const name = text.slice(0, dot);
  const [first = '', ...others] = text.slice(dot + 1).split('.');
  if (VERSION.test(first)) return { name, version: first, ...(others.length > 0 ? { group: others.join('.') } : {}) };
  return { name, group: text.slice(dot + 1) };
}

function parseTuple(parts: readonly string[]): Selection | undefined {
  if (parts.length === 3) return { group: parts[0]!, version: parts[1]!, name: parts[2]! };
  if (parts.length === 1) return parseString(parts[0]!);
  if (parts.length !== 2) return undefined;
  const [groupVersion = '', name = ''] = parts;
  const slash = groupVersion.indexOf('/');
  if (slash >= 0) return { group: groupVersion.slice(0, slash), version: groupVersion.slice(slash + 1), name };
  return groupVersion === 'v1' ? { group: '', version: 'v1', name } : { group: groupVersion, name };
}

function parseObject(object: Readonly<Record<string, string>>): Selection | undefined {
  const keys = Object.keys(object);
  if (keys.some((key) => !OBJECT_KEYS.has(key))) return undefined;
  if (NAME_KEYS.filter((key) => key in object).length !== 1) return undefined;
  return object;
}

function matches(selection: Selection, resource: BuiltinResource): boolean {
  const singular = resource.kind.toLowerCase();
  if (selection.group !== undefined && selection.group !== resource.group) return false;
  if (selection.version !== undefined && selection.version !== resource.version) return false;
  if (selection.kind !== undefined && selection.kind !== resource.kind) return false;
  if (selection.plural !== undefined && selection.plural !== resource.plural) return false;
  if (selection.singular !== undefined && selection.singular !== singular) return false;
  if (selection.shortcut !== undefined && !resource.shortNames.includes(selection.shortcut)) return false;
  if (selection.category !== undefined && !resource.categories.includes(selection.category)) return false;
  const { name } = selection;
  if (name === undefined) return true;
  return name === resource.kind || name === resource.plural || name === singular || resource.shortNames.includes(name);
}
