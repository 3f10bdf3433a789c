/**
 * Resources as the API server describes them in discovery (R-RES-7), and how to address them in
 * URLs and name them in logs (R-RES-10). They are plain values at the bottom of the runtime so that
 * the client, the watchers and the registry all speak of the same resource the same way; selecting
 * resources by the references users write (R-RES-1..6) builds on them in `core/intents/selectors`.
 */

/** One served resource of one group/version, as discovery reports it. */
export interface Resource {
  /** API group; `''` for the core group. */
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly singular: string;
  readonly shortcuts: readonly string[];
  readonly categories: readonly string[];
  /** Names of subresources (e.g. `status`, `scale`). */
  readonly subresources: readonly string[];
  readonly namespaced: boolean;
  /** Whether this version is the group's preferred version. */
  readonly preferred: boolean;
  readonly verbs: readonly string[];
}

export const apiVersionOf = (r: Pick<Resource, 'group' | 'version'>): string => (r.group ? `${r.group}/${r.version}` : r.version);

/** `plural.version.group` (or `plural.v1` for core): a unique, readable name for logs. */
export const resourceName = (r: Resource): string => (r.group ? `${r.plural}.${r.version}.${r.group}` : `${r.plural}.${r.version}`);

/**
 * The URL of a collection, an object, or a subresource (R-RES-10). `namespace` is ignored for
 * cluster-scoped resources; for namespaced ones an absent namespace addresses all namespaces.
 */
export function urlOf(r: Resource, opts: { namespace?: string | null; name?: string; subresource?: string } = {}): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  const ns = r.namespaced && opts.namespace ? `/namespaces/${encodeURIComponent(opts.namespace)}` : '';
  let url = `${base}${ns}/${r.plural}`;
  if (opts.name !== undefined) url += `/${encodeURIComponent(opts.name)}`;
  if (opts.subresource !== undefined) url += `/${opts.subresource}`;
  return url;
}

/** Builds a `Resource` with defaults for the optional attributes (tests and descriptors). */
export function makeResource(partial: Pick<Resource, 'group' | 'version' | 'plural'> & Partial<Resource>): Resource {
  const kind = partial.kind ?? partial.plural;
  return {
    kind,
    singular: partial.singular || kind.toLowerCase(),
    shortcuts: [],
    categories: [],
    subresources: [],
    namespaced: true,
    preferred: true,
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    ...partial,
  };
}
