/**
 * Table columns and cells of custom resources (D-CRD-14, D-WIRE-18).
 *
 * When a client asks for `as=Table`, the serving layer renders CRs with the columns of the
 * requested version: `Name` first, then the version's `additionalPrinterColumns`, or `Name` and
 * `Age` when none are declared. This module builds the column definitions and one row's cells;
 * the HTTP layer wraps them into the `Table` object. Ages are printed the way kubectl prints them
 * (upstream's `duration.HumanDuration`).
 */

import * as jsonpaths from './jsonpaths.js';
import type * as schemas from './schemas.js';
import * as json from '../json.js';

/** One `columnDefinitions[]` entry of a `meta.k8s.io/v1` Table. */
export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
const AGE_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

const NAME_COLUMN: TableColumnDefinition = { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 };
const AGE_COLUMN: schemas.CustomResourceColumnDefinition = {
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
  description: AGE_DESCRIPTION,
};

/** The declared printer columns, or the implicit `Age` column when there are none. */
function declaredColumns(version: schemas.CustomResourceDefinitionVersion): schemas.CustomResourceColumnDefinition[] {
  const columns = version.additionalPrinterColumns ?? [];
  return columns.length > 0 ? columns : [AGE_COLUMN];
}

/**
 * The Table column definitions of a CRD version: `Name`, then the printer columns (or `Age`).
 *
 * @example
 * columnDefinitions({ name: 'v1', served: true, storage: true }).map((c) => c.name) // → ['Name', 'Age']
 */
export function columnDefinitions(version: schemas.CustomResourceDefinitionVersion): TableColumnDefinition[] {
  return [
    { ...NAME_COLUMN },
    ...declaredColumns(version).map((column) => ({
      name: column.name,
      type: column.type,
      format: column.format ?? '',
      description: column.description || `Custom resource definition column (in JSONPath format): ${column.jsonPath}`,
      priority: column.priority ?? 0,
    })),
  ];
}

/**
 * The cells of one Table row for `obj`, aligned with `columnDefinitions(version)`. Missing values
 * are `null`; `date` columns are ages relative to `now`; `string` columns are the value as text.
 */
export function rowCells(version: schemas.CustomResourceDefinitionVersion, obj: unknown, now: Date): unknown[] {
  const metadata = json.isObject(obj) && json.isObject(obj.metadata) ? obj.metadata : {};
  const name = typeof metadata.name === 'string' ? metadata.name : '';
  return [name, ...declaredColumns(version).map((column) => cellFor(column, obj, now))];
}

function cellFor(column: schemas.CustomResourceColumnDefinition, obj: unknown, now: Date): unknown {
  const results = jsonpaths.evaluateJsonPath(obj, column.jsonPath);
  if (results.length === 0) return null;
  const value = results[0];
  if (value === null || value === undefined) return null;
  switch (column.type) {
    case 'string':
      return textOf(value);
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date': {
      if (typeof value !== 'string') return null;
      const at = Date.parse(value);
      if (Number.isNaN(at)) return '<invalid>';
      return formatAge(now.getTime() - at);
    }
    default:
      return null;
  }
}

/** A value printed as kubectl's JSONPath printer does: strings raw, scalars as text, the rest as JSON. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/**
 * A duration in milliseconds as a short human age: `45s`, `5m`, `3m20s`, `3h2m`, `2d`, `3d4h`,
 * `400d`, `3y5d`, `12y` (upstream's `HumanDuration`: more detail for small values of each unit).
 * Negative durations of up to two seconds print as `0s`; larger negative ones as `<invalid>`.
 */
export function formatAge(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const days = Math.floor(hours / 24) % 365;
    const years = Math.floor(hours / 24 / 365);
    return days === 0 ? `${years}y` : `${years}y${days}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}
