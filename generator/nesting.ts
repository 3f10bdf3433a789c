/**
 * Nesting: where a CRD document first nests deeper than the generator reads.
 *
 * Every stage after loading walks schemas recursively, and so does the YAML parser; a schema a few
 * hundred levels deep used to end in "not valid YAML … Maximum call stack size exceeded". The
 * loader therefore bounds the nesting (limits.ts, `MAX_DEPTH`) and reports a deeper document with
 * the JSON path where the bound is crossed and the CRD and version it is in. This module finds
 * that place, without recursion (an explicit stack), so no document can make the check itself
 * overflow:
 * - in the parsed data (`firstTooDeep`): YAML aliases can nest a document deeper than its text,
 *   and share nodes, so each node is walked again only when reached deeper than before;
 * - in the text (`firstTooDeepInText`), for a document the parser stopped reading: the `yaml`
 *   package's concrete syntax tree is built without recursion, and is walked the same way.
 * Pure: data or text in, a path out.
 */
import * as yaml from 'yaml';
import * as schemas from './schemas.js';

/** A key or an index of a JSON path. */
export type Segment = string | number;

/** Where a document crosses the depth limit: the path of the first mapping or list too deep. */
export interface Crossing {
  readonly path: readonly Segment[];
  /** `metadata.name` of the document, when it has one. */
  readonly crdName: string | undefined;
  /** The `name` of `spec.versions[i]` when the path is inside that version. */
  readonly version: string | undefined;
}

type Frame = { readonly enter: object; readonly depth: number; readonly key: Segment | undefined } | { readonly leave: object; readonly keyed: boolean };

/**
 * The first mapping or list (in document order) nested more than `maxDepth` levels deep in parsed
 * data (the document itself is level 1), or undefined. A node that contains itself (a cyclic
 * alias) is not followed around its cycle: the loader refuses it as such.
 */
export function firstTooDeep(data: unknown, maxDepth: number): Crossing | undefined {
  if (!isCollection(data)) return undefined;
  const reached = new Map<object, number>();
  const ancestors = new Set<object>();
  const path: Segment[] = [];
  const stack: Frame[] = [{ enter: data, depth: 1, key: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if ('leave' in frame) {
      ancestors.delete(frame.leave);
      if (frame.keyed) path.pop();
      continue;
    }
    const { enter: node, depth, key } = frame;
    if ((reached.get(node) ?? 0) >= depth || ancestors.has(node)) continue;
    if (key !== undefined) path.push(key);
    if (depth > maxDepth) return { path: [...path], ...namesOf(data, path) };
    reached.set(node, depth);
    ancestors.add(node);
    stack.push({ leave: node, keyed: key !== undefined });
    const children: [Segment, unknown][] = Array.isArray(node) ? node.map((item, index) => [index, item]) : Object.entries(node);
    for (let index = children.length - 1; index >= 0; index -= 1) {
      const [childKey, child] = children[index]!;
      if (isCollection(child)) stack.push({ enter: child, depth: depth + 1, key: childKey });
    }
  }
  return undefined;
}

/** The CRD's name and, when `path` is inside `spec.versions[i]`, that version's name. */
function namesOf(data: object, path: readonly Segment[]): { crdName: string | undefined; version: string | undefined } {
  const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
  const record = (value: unknown): schemas.Schema | undefined => (schemas.isRecord(value) ? value : undefined);
  const document = record(data);
  const crdName = text(record(document && schemas.own(document, 'metadata'))?.['name']);
  const spec = record(document && schemas.own(document, 'spec'));
  const versions = spec && schemas.own(spec, 'versions');
  const index = path[0] === 'spec' && path[1] === 'versions' && typeof path[2] === 'number' ? path[2] : undefined;
  const version = index !== undefined && Array.isArray(versions) ? text(record(versions[index])?.['name']) : undefined;
  return { crdName, version };
}

function isCollection(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

/** A node of the concrete syntax tree, as the walk meets it. */
type TextFrame = { readonly token: yaml.CST.Token; readonly depth: number; readonly path: readonly Segment[] };

/**
 * The first mapping or list nested more than `maxDepth` levels deep in document `documentIndex` of
 * a YAML text, read from its concrete syntax tree (no values are built, no recursion), with the
 * CRD and version names found in the text; undefined when there is none (aliases, which only the
 * parsed data expands, are not followed here).
 */
export function firstTooDeepInText(text: string, documentIndex: number, maxDepth: number): Crossing | undefined {
  let index = 0;
  for (const token of new yaml.Parser().parse(text)) {
    if (token.type !== 'document') continue;
    if (index === documentIndex) return token.value === undefined ? undefined : walkText(token.value, maxDepth);
    index += 1;
  }
  return undefined;
}

function walkText(root: yaml.CST.Token, maxDepth: number): Crossing | undefined {
  let crossing: readonly Segment[] | undefined;
  let crdName: string | undefined;
  const versionNames = new Map<number, string>();
  const stack: TextFrame[] = [{ token: root, depth: 1, path: [] }];
  while (stack.length > 0) {
    const { token, depth, path } = stack.pop()!;
    const scalar = scalarOf(token);
    if (scalar !== undefined) {
      if (path.length === 2 && path[0] === 'metadata' && path[1] === 'name') crdName = scalar;
      if (path.length === 4 && path[0] === 'spec' && path[1] === 'versions' && typeof path[2] === 'number' && path[3] === 'name')
        versionNames.set(path[2], scalar);
      continue;
    }
    const children = childrenOf(token);
    if (children === undefined) continue;
    if (depth > maxDepth) {
      crossing ??= path;
      continue; // not deeper: the rest of the document is still read for the names
    }
    for (let at = children.length - 1; at >= 0; at -= 1) {
      const [key, child] = children[at]!;
      stack.push({ token: child, depth: depth + 1, path: [...path, key] });
    }
  }
  if (crossing === undefined) return undefined;
  const version = crossing[0] === 'spec' && crossing[1] === 'versions' && typeof crossing[2] === 'number' ? versionNames.get(crossing[2]) : undefined;
  return { path: crossing, crdName, version };
}

/** The children of a mapping or list token, with their keys or indices; undefined for anything else. */
function childrenOf(token: yaml.CST.Token): [Segment, yaml.CST.Token][] | undefined {
  const mapping = token.type === 'block-map' || (token.type === 'flow-collection' && token.start.source === '{');
  if (token.type !== 'block-map' && token.type !== 'block-seq' && token.type !== 'flow-collection') return undefined;
  const children: [Segment, yaml.CST.Token][] = [];
  for (const [index, item] of token.items.entries()) {
    if (item.value === undefined || item.value === null) continue;
    const key = mapping ? (item.key ? (scalarOf(item.key) ?? '?') : '?') : index;
    children.push([key, item.value]);
  }
  return children;
}

/** The value of a scalar token (plain, quoted or block), or undefined for any other token. */
function scalarOf(token: yaml.CST.Token): string | undefined {
  if (token.type !== 'scalar' && token.type !== 'single-quoted-scalar' && token.type !== 'double-quoted-scalar' && token.type !== 'block-scalar')
    return undefined;
  return yaml.CST.resolveAsScalar(token)?.value;
}

/** A crossing's JSON path, rendered (`spec.versions[0].schema.openAPIV3Schema.properties.spec`). */
export function renderCrossing(crossing: Crossing): string {
  return schemas.renderPath(crossing.path);
}
