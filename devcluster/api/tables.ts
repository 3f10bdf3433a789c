/**
 * Table output: what `kubectl get` asks for instead of objects, so that its usual columns print
 * (D-WIRE-18, D-CRD-14). Columns come from the resource type (a CRD's additionalPrinterColumns) or
 * default to Name and Age; each row carries the object as PartialObjectMetadata, the full object, or
 * nothing (`includeObject`).
 */
import * as objects from './objects.js';
import type * as resources from './resources.js';
import type { JsonObject } from '../json.js';

const DEFAULT_COLUMNS: resources.ColumnDefinition[] = [
  {
    name: 'Name',
    type: 'string',
    format: 'name',
    description:
      'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
    priority: 0,
  },
  {
    name: 'Age',
    type: 'date',
    format: '',
    description:
      'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
    priority: 0,
  },
];

/** Human age as kubectl prints it (`5s`, `4m`, `3h2m`, `2d`), from milliseconds. */
export function humanAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 ? `${m}m${s % 60}s` : `${m}m`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 ? `${h}h${m % 60}m` : `${h}h`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (d < 8) return h % 24 ? `${d}d${h % 24}h` : `${d}d`;
  if (d < 730) return `${d}d`;
  return `${Math.floor(d / 365)}y`;
}

function defaultCells(obj: JsonObject, now: Date): unknown[] {
  const created = Date.parse(String(objects.metaOf(obj)['creationTimestamp'] ?? ''));
  return [objects.nameOf(obj), Number.isFinite(created) ? humanAge(now.getTime() - created) : '<unknown>'];
}

export function tableOf(
  type: resources.ResourceType,
  items: JsonObject[],
  now: Date,
  meta: JsonObject,
  includeObject: 'None' | 'Metadata' | 'Object',
): JsonObject {
  const definitions = type.table ? type.table.definitions() : DEFAULT_COLUMNS;
  const rows = items.map((stored) => {
    const external = objects.toExternal(type, stored);
    const cells = type.table ? type.table.cells(external, now) : defaultCells(external, now);
    const row: JsonObject = { cells };
    if (includeObject === 'Object') row['object'] = external;
    else if (includeObject === 'Metadata') row['object'] = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: objects.metaOf(external) };
    return row;
  });
  return { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: meta, columnDefinitions: definitions, rows };
}
