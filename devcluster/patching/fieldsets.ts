/**
 * Field sets: "which fields of an object does a manager own", the currency of server-side apply.
 *
 * A set is a tree of path elements in the upstream encoding — `f:<name>` for a map key,
 * `k:{"name":"c1"}` for an item of a keyed list (key fields in sorted order), `v:<json>` for an
 * item of a set list, `i:<n>` for a list index — where each node says whether the path leading to
 * it is itself a member. The same strings are the keys of `managedFields[].fieldsV1`, so encoding
 * and decoding are structural. `managedfields.ts` builds sets from objects and keeps them per
 * manager; `apply.ts` intersects and subtracts them to find conflicts and fields to prune. Sets
 * are immutable values: every operation returns a new set (sharing unchanged subtrees).
 */

/** One node of a field set: whether its own path is a member, and its children by path element. */
export interface FieldSet {
  readonly member: boolean;
  readonly children: ReadonlyMap<string, FieldSet>;
}

/** A path from the root as encoded elements, e.g. `['f:spec', 'k:{"name":"c1"}', 'f:image']`. */
export type FieldPath = readonly string[];

/** Thrown by {@link decode} when a `fieldsV1` value is not in the upstream encoding. */
export class FieldsV1Error extends Error {
  readonly code = 'FieldsV1Invalid' as const;
  constructor(message: string) {
    super(message);
    this.name = 'FieldsV1Error';
  }
}

const NO_CHILDREN: ReadonlyMap<string, FieldSet> = new Map();

/** The empty set. */
export const EMPTY: FieldSet = { member: false, children: NO_CHILDREN };
/** A node that is a member and has no children (a leaf). */
export const LEAF: FieldSet = { member: true, children: NO_CHILDREN };

// ---- path elements -------------------------------------------------------------------------

/** JSON with object keys sorted at every level, as upstream serialises keys and values. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return `{${Object.keys(obj)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The element for a map key: `f:<name>`. */
export const fieldElement = (name: string): string => `f:${name}`;
/** The element for a keyed list item: `k:{…}` with the key fields in sorted order. */
export const keyElement = (key: Readonly<Record<string, unknown>>): string => `k:${canonicalJson(key)}`;
/** The element for an item of a set list: `v:<json>`. */
export const valueElement = (value: unknown): string => `v:${canonicalJson(value)}`;
/** The element for a list position: `i:<n>`. */
export const indexElement = (index: number): string => `i:${index}`;

/** A decoded path element. */
export type PathElement =
  | { kind: 'field'; name: string }
  | { kind: 'key'; fields: Readonly<Record<string, unknown>> }
  | { kind: 'value'; value: unknown }
  | { kind: 'index'; index: number };

/** Parses an encoded element; throws {@link FieldsV1Error} on anything else. */
export function parseElement(element: string): PathElement {
  const body = element.slice(2);
  switch (element.slice(0, 2)) {
    case 'f:':
      return { kind: 'field', name: body };
    case 'k:': {
      const fields = parseJson(element, body);
      if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) throw new FieldsV1Error(`key element is not a JSON object: ${element}`);
      return { kind: 'key', fields: fields as Record<string, unknown> };
    }
    case 'v:':
      return { kind: 'value', value: parseJson(element, body) };
    case 'i:':
      if (!/^(0|[1-9][0-9]*)$/.test(body)) throw new FieldsV1Error(`invalid index element: ${element}`);
      return { kind: 'index', index: Number(body) };
    default:
      throw new FieldsV1Error(`unknown path element: ${JSON.stringify(element)}`);
  }
}

function parseJson(element: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new FieldsV1Error(`invalid JSON in path element: ${element}`);
  }
}

/** Upstream's `value.ToString`: strings quoted, other scalars bare, containers as JSON. */
const displayValue = (value: unknown): string => (typeof value === 'number' || typeof value === 'boolean' ? String(value) : canonicalJson(value));

/** One element in display form: `.image`, `[name="c1"]`, `[="x"]`, `[0]`. */
export function displayElement(element: string): string {
  const pe = parseElement(element);
  switch (pe.kind) {
    case 'field':
      return `.${pe.name}`;
    case 'key':
      return `[${Object.keys(pe.fields)
        .sort()
        .map((k) => `${k}=${displayValue(pe.fields[k])}`)
        .join(',')}]`;
    case 'value':
      return `[=${displayValue(pe.value)}]`;
    case 'index':
      return `[${pe.index}]`;
  }
}

/**
 * A path in the upstream display form used in conflict messages.
 * @example formatPath(['f:spec', 'k:{"name":"c1"}', 'f:image']) === '.spec[name="c1"].image'
 */
export const formatPath = (path: FieldPath): string => path.map(displayElement).join('');

const RANK: Record<string, number> = { 'f:': 0, 'k:': 1, 'v:': 2, 'i:': 3 };

/** Upstream element order: fields, then keys, then values, then indices; each sorted within. */
export function compareElements(a: string, b: string): number {
  const ra = RANK[a.slice(0, 2)] ?? 4;
  const rb = RANK[b.slice(0, 2)] ?? 4;
  if (ra !== rb) return ra - rb;
  if (ra === 3) return Number(a.slice(2)) - Number(b.slice(2));
  return a < b ? -1 : a > b ? 1 : 0;
}

const sortedEntries = (set: FieldSet): [string, FieldSet][] => [...set.children.entries()].sort(([a], [b]) => compareElements(a, b));

// ---- algebra -------------------------------------------------------------------------------

/** Whether the set has no member at all. */
export const isEmpty = (set: FieldSet): boolean => !set.member && set.children.size === 0;

/** Builds a node, dropping empty children so that {@link isEmpty} stays structural. */
export function node(member: boolean, children: Iterable<readonly [string, FieldSet]>): FieldSet {
  const kept = new Map<string, FieldSet>();
  for (const [element, child] of children) if (!isEmpty(child)) kept.set(element, child);
  if (!member && kept.size === 0) return EMPTY;
  return { member, children: kept.size ? kept : NO_CHILDREN };
}

/** The set holding exactly the given paths (the empty path is ignored). */
export function fromPaths(paths: Iterable<FieldPath>): FieldSet {
  let set = EMPTY;
  for (const path of paths) set = insert(set, path);
  return set;
}

/** The set with `path` added. */
export function insert(set: FieldSet, path: FieldPath): FieldSet {
  if (path.length === 0) return set;
  const [head, ...rest] = path as [string, ...string[]];
  const child = set.children.get(head) ?? EMPTY;
  const updated = rest.length ? insert(child, rest) : node(true, child.children);
  return node(set.member, [...set.children, [head, updated]]);
}

/** Whether `path` is a member. */
export function has(set: FieldSet, path: FieldPath): boolean {
  const sub = subtree(set, path);
  return path.length > 0 && sub.member;
}

/** The node at `path` (its own membership and everything below), or the empty set. */
export function subtree(set: FieldSet, path: FieldPath): FieldSet {
  let current = set;
  for (const element of path) current = current.children.get(element) ?? EMPTY;
  return current;
}

/** Members of either set. */
export function union(a: FieldSet, b: FieldSet): FieldSet {
  if (isEmpty(a)) return b;
  if (isEmpty(b)) return a;
  const children = new Map(a.children);
  for (const [element, child] of b.children) {
    const mine = children.get(element);
    children.set(element, mine ? union(mine, child) : child);
  }
  return node(a.member || b.member, children);
}

/** Members of `a` that are not members of `b`. */
export function difference(a: FieldSet, b: FieldSet): FieldSet {
  if (isEmpty(a) || isEmpty(b)) return a;
  const children: [string, FieldSet][] = [];
  for (const [element, child] of a.children) {
    const other = b.children.get(element);
    children.push([element, other ? difference(child, other) : child]);
  }
  return node(a.member && !b.member, children);
}

/** Members of both sets. */
export function intersection(a: FieldSet, b: FieldSet): FieldSet {
  if (isEmpty(a) || isEmpty(b)) return EMPTY;
  const children: [string, FieldSet][] = [];
  for (const [element, child] of a.children) {
    const other = b.children.get(element);
    if (other) children.push([element, intersection(child, other)]);
  }
  return node(a.member && b.member, children);
}

/** The set without the member at `path` (its children stay). */
export function withoutMember(set: FieldSet, path: FieldPath): FieldSet {
  if (path.length === 0) return set;
  const [head, ...rest] = path as [string, ...string[]];
  const child = set.children.get(head);
  if (!child) return set;
  const updated = rest.length ? withoutMember(child, rest) : node(false, child.children);
  return node(set.member, [...set.children, [head, updated]]);
}

/** The set without `path` and everything below it. */
export function withoutSubtree(set: FieldSet, path: FieldPath): FieldSet {
  if (path.length === 0) return EMPTY;
  const [head, ...rest] = path as [string, ...string[]];
  const child = set.children.get(head);
  if (!child) return set;
  const updated = rest.length ? withoutSubtree(child, rest) : EMPTY;
  return node(set.member, [...set.children, [head, updated]]);
}

/** The set restricted to `path` and everything below it. */
export function onlySubtree(set: FieldSet, path: FieldPath): FieldSet {
  if (path.length === 0) return set;
  const [head, ...rest] = path as [string, ...string[]];
  const child = set.children.get(head);
  return child ? node(false, [[head, onlySubtree(child, rest)]]) : EMPTY;
}

/** Every member path, in upstream iteration order (a node's members before its descendants). */
export function paths(set: FieldSet, prefix: FieldPath = []): FieldPath[] {
  const entries = sortedEntries(set);
  const out: FieldPath[] = [];
  for (const [element, child] of entries) if (child.member) out.push([...prefix, element]);
  for (const [element, child] of entries) if (child.children.size) out.push(...paths(child, [...prefix, element]));
  return out;
}

// ---- fieldsV1 ------------------------------------------------------------------------------

/**
 * The `fieldsV1` object of a set: a member leaf is `{}`, a member with children also carries
 * `".": {}` (written first), children follow in upstream order.
 * @example encode(fromPaths([['f:spec', 'f:size']])) // {"f:spec":{"f:size":{}}}
 */
export function encode(set: FieldSet): Record<string, unknown> {
  return encodeNode(set, false);
}

function encodeNode(set: FieldSet, includeSelf: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (includeSelf && set.children.size) out['.'] = {};
  for (const [element, child] of sortedEntries(set)) out[element] = encodeNode(child, child.member);
  return out;
}

/**
 * Parses a `fieldsV1` object into a set. Key and value elements are re-serialised canonically so
 * that they compare equal to the elements built from objects.
 * @throws FieldsV1Error when the value is not an object tree of known elements.
 */
export function decode(fieldsV1: unknown): FieldSet {
  return decodeNode(fieldsV1, false);
}

function decodeNode(raw: unknown, member: boolean): FieldSet {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new FieldsV1Error('fieldsV1 nodes must be JSON objects');
  const children: [string, FieldSet][] = [];
  let self = member;
  for (const [element, value] of Object.entries(raw as Record<string, unknown>)) {
    if (element === '.') {
      self = true;
      continue;
    }
    children.push([canonicalElement(element), decodeNode(value, isLeafObject(value))]);
  }
  return node(self, children);
}

/** `{}` and `{".": {}, …}` both mark a member; a node with only children does not. */
function isLeafObject(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 0;
}

function canonicalElement(element: string): string {
  if (element.startsWith('f:')) return element; // field elements are canonical as they are
  const pe = parseElement(element);
  switch (pe.kind) {
    case 'key':
      return keyElement(pe.fields);
    case 'value':
      return valueElement(pe.value);
    default:
      return element;
  }
}
