/**
 * Merge keys and patch strategies of the built-in resources: the table of D-VERB-21, which mirrors
 * the `patchStrategy`/`patchMergeKey` tags of the upstream API types.
 *
 * The strategic merge patch (`strategic.ts`) knows nothing about kinds; it asks an `SmpSchema` how
 * the field at a given path merges. Paths are lists of map keys from the object root; list items
 * add no segment, so `['spec', 'containers', 'ports']` is the `ports` list of any container of a
 * Pod. Every field not in the table answers `undefined`: its lists are replaced atomically (for
 * example `tolerations`, `args`, `command`, or the `versions` of a CRD).
 */

/** How one field merges under a strategic merge patch. */
export interface SmpStrategy {
  /** The field is a list of objects merged item by item; items are matched by this member. */
  mergeKey?: string;
  /** The field is a list of scalars merged as a union (original items first, then new ones). */
  primitiveMerge?: boolean;
  /**
   * The field's map (or, for a list, each item's map) honours the `$retainKeys` directive:
   * members not listed are dropped.
   */
  retainKeys?: boolean;
}

/**
 * Answers the strategy of the field at `path` (map keys from the object root; list items add no
 * segment), or `undefined` when the field has none (maps merge, lists are replaced).
 */
export type SmpSchema = (path: readonly string[]) => SmpStrategy | undefined;

type Entry = readonly [path: readonly string[], strategy: SmpStrategy];

const BY_NAME: SmpStrategy = { mergeKey: 'name' };
const BY_TYPE: SmpStrategy = { mergeKey: 'type' };

/** `ObjectMeta` lists, relative to a `metadata` map. */
const OBJECT_META: readonly Entry[] = [
  [['finalizers'], { primitiveMerge: true }],
  [['ownerReferences'], { mergeKey: 'uid' }],
];

const CONTAINER_LISTS = ['containers', 'initContainers', 'ephemeralContainers'] as const;

/** Lists inside one container (or init/ephemeral container), relative to the container. */
const CONTAINER: readonly Entry[] = [
  [['ports'], { mergeKey: 'containerPort' }],
  [['env'], BY_NAME],
  [['volumeMounts'], { mergeKey: 'mountPath' }],
  [['volumeDevices'], { mergeKey: 'devicePath' }],
];

/** `PodSpec` lists, relative to a pod spec map. */
const POD_SPEC: readonly Entry[] = [
  ...CONTAINER_LISTS.flatMap((list): Entry[] => [[[list], BY_NAME], ...under([list], CONTAINER)]),
  [['imagePullSecrets'], BY_NAME],
  [['schedulingGates'], BY_NAME],
  [['volumes'], { mergeKey: 'name', retainKeys: true }],
  [['hostAliases'], { mergeKey: 'ip' }],
  [['topologySpreadConstraints'], { mergeKey: 'topologyKey' }],
];

const CONDITIONS: readonly Entry[] = [[['status', 'conditions'], BY_TYPE]];

/** Entries per kind, in addition to the root `metadata` lists every kind has. */
const KINDS: Readonly<Record<string, readonly Entry[]>> = {
  Pod: [...under(['spec'], POD_SPEC), ...CONDITIONS],
  Deployment: [
    ...under(['spec', 'template', 'metadata'], OBJECT_META),
    ...under(['spec', 'template', 'spec'], POD_SPEC),
    [['spec', 'strategy'], { retainKeys: true }],
    ...CONDITIONS,
  ],
  Namespace: CONDITIONS,
  Service: [[['spec', 'ports'], { mergeKey: 'port' }]],
  ServiceAccount: [
    [['secrets'], BY_NAME],
    [['imagePullSecrets'], BY_NAME],
  ],
  ValidatingWebhookConfiguration: webhookEntries(),
  MutatingWebhookConfiguration: webhookEntries(),
  ConfigMap: [],
  Secret: [],
  Event: [],
  Lease: [],
  CustomResourceDefinition: [],
};

function webhookEntries(): Entry[] {
  return [
    [['webhooks'], BY_NAME],
    [['webhooks', 'matchConditions'], BY_NAME],
  ];
}

function under(prefix: readonly string[], entries: readonly Entry[]): Entry[] {
  return entries.map(([path, strategy]): Entry => [[...prefix, ...path], strategy]);
}

const schemas = new Map<string, SmpSchema>();

/**
 * The strategic-merge schema of a built-in kind (D-VERB-21). Every kind, including kinds not in
 * the table, merges `metadata.finalizers` as a union and `metadata.ownerReferences` by `uid`;
 * all other lists of an unknown kind are replaced atomically.
 */
export function builtinSmpSchema(kind: string): SmpSchema {
  let schema = schemas.get(kind);
  if (schema === undefined) {
    const entries = [...under(['metadata'], OBJECT_META), ...(KINDS[kind] ?? [])];
    schema = schemaOf(entries);
    schemas.set(kind, schema);
  }
  return schema;
}

/** Builds an `SmpSchema` answering from a fixed list of (path, strategy) entries. */
function schemaOf(entries: readonly Entry[]): SmpSchema {
  const table = new Map<string, SmpStrategy>(entries.map(([path, strategy]) => [keyOf(path), strategy]));
  return (path) => table.get(keyOf(path));
}

function keyOf(path: readonly string[]): string {
  return JSON.stringify(path);
}
