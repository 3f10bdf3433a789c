/**
 * Reconcile stubs: where the generated `on.reconcile` stub (`init --handlers reconcile`) reports
 * its child's readiness on the parent, decided from the parent's schema.
 *
 * The stub copies how many replicas of its Deployment are ready into the parent's status through
 * `patch`, and the generated test waits for that value. The patch is typed from the CRD, so what
 * the stub may write depends on the status schema: the first plain scalar field it declares (one
 * no value constraint could refuse: no enum, pattern, format, length, bounds or CEL rule), or any
 * field when the status keeps unknown fields; a kind whose status can hold neither gets an
 * annotation instead, so that every generated project type-checks and its test passes. Pure.
 */
import type * as modeling from './modeling.js';
import * as pruning from './pruning.js';
import * as schemas from './schemas.js';

/** Where the stub writes the readiness of its child, and how the test reads it back. */
export interface ReadinessTarget {
  /** In words, for comments: `status.readyReplicas`, `the annotation example.com/ready-replicas`. */
  readonly where: string;
  /** The left side of the stub's assignment, on `patch`. */
  readonly write: string;
  /** The value written, an expression over `ready` and `wanted` (numbers of replicas). */
  readonly value: string;
  /** The value read from the parent (`object`) in the test. */
  readonly read: string;
  /** What the test expects once 1 of 1 replicas is ready (a TypeScript literal). */
  readonly expected: string;
}

/** The field the stub adds to a status that keeps unknown fields. */
export const OPEN_STATUS_FIELD = 'readyReplicas';

/** Keywords that could make the API server refuse the value the stub writes. */
const CONSTRAINTS = ['enum', 'const', 'pattern', 'format', 'minLength', 'maxLength', 'minimum', 'maximum', 'multipleOf', 'x-kubernetes-validations'];

/** Where the reconcile stub of a kind's version reports readiness (see the module's header). */
export function readinessTarget(version: modeling.VersionModel, group: string): ReadinessTarget {
  const status = version.statusSchema;
  const field = status === undefined ? undefined : plainScalar(status);
  if (field !== undefined) {
    const write = `patch.status.${field.name}`;
    const read = `object.status?.${field.name}`;
    const where = `status.${field.name}`;
    if (field.type === 'string') return { where, write, read, value: '`${ready}/${wanted} ready`', expected: '"1/1 ready"' };
    if (field.type === 'boolean') return { where, write, read, value: 'ready >= wanted', expected: 'true' };
    return { where, write, read, value: 'ready', expected: '1' };
  }
  if (status !== undefined && pruning.keepsStatusResults(version)) {
    const key = JSON.stringify(OPEN_STATUS_FIELD);
    return { where: `status.${OPEN_STATUS_FIELD}`, write: `patch.status[${key}]`, read: `object.status?.[${key}]`, value: 'ready', expected: '1' };
  }
  const annotation = JSON.stringify(`${group}/ready-replicas`);
  return {
    where: `the annotation ${group}/ready-replicas (the status schema has no field the stub can write)`,
    write: `patch.metadata.annotations[${annotation}]`,
    read: `object.metadata?.annotations?.[${annotation}]`,
    value: '`${ready}/${wanted}`',
    expected: '"1/1"',
  };
}

/** The first scalar property of an object schema that takes any value of its type, with its type. */
function plainScalar(node: schemas.Schema): { name: string; type: 'string' | 'number' | 'boolean' } | undefined {
  for (const [name, child] of schemas.propertiesOf(node)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || CONSTRAINTS.some((key) => schemas.own(child, key) !== undefined)) continue;
    const type = schemas.typeOf(child);
    if (schemas.flag(child, schemas.INT_OR_STRING) || type === 'integer' || type === 'number') return { name, type: 'number' };
    if (type === 'string' || type === 'boolean') return { name, type };
  }
  return undefined;
}
