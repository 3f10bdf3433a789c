/**
 * Lease records: what a `coordination.k8s.io/v1` Lease says about its holder, read and written
 * exactly as client-go's leader election does, so that kubectl, client-go controllers and other
 * tools see the same fields they would see from a Go operator.
 *
 * A record has the holder's identity (`''` = nobody: a released Lease), how long a standby must
 * wait after the last renewal it saw (`leaseDurationSeconds`), when the holder acquired and last
 * renewed it (MicroTimes, `2006-01-02T15:04:05.000000Z`), and how often it changed hands. Reading
 * tolerates garbage (someone else wrote the Lease): absent or malformed fields read as client-go
 * reads absent ones — no holder, zero seconds, no times. Writing replaces only these fields of the
 * spec and keeps the rest of the object (labels, annotations, other spec fields) as it was.
 *
 * The elector that uses them is `leadership`.
 */

import type * as bodies from '../../cogs/structs/bodies.js';
import * as dicts from '../../cogs/structs/dicts.js';
import type * as references from '../../cogs/structs/references.js';

/** The Lease resource (the built-in `coordination.k8s.io/v1` one). */
export const LEASES: references.Resource = Object.freeze({
  group: 'coordination.k8s.io',
  version: 'v1',
  plural: 'leases',
  kind: 'Lease',
  singular: 'lease',
  shortcuts: [],
  categories: [],
  subresources: [],
  namespaced: true,
  preferred: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
});

/** The election fields of a Lease's spec. */
export interface LeaseRecord {
  /** Who holds it; `''` when nobody does (released, or never held). */
  readonly holderIdentity: string;
  /** Seconds a standby waits after the last change it saw before it may take over. */
  readonly leaseDurationSeconds: number;
  /** When the holder acquired it (MicroTime), if known. */
  readonly acquireTime: string | null;
  /** When the holder last renewed it (MicroTime), if known. */
  readonly renewTime: string | null;
  /** How many times it changed hands. */
  readonly leaseTransitions: number;
}

function integerOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) ? value : fallback;
}

/**
 * A MicroTime as Kubernetes writes it: UTC, six fractional digits, `Z`.
 *
 * @example
 * formatMicroTime(Date.parse('2030-01-02T03:04:05.678Z')) // '2030-01-02T03:04:05.678000Z'
 */
export function formatMicroTime(ms: number): string {
  const whole = Math.floor(ms);
  const micros = Math.floor((ms - whole) * 1000);
  const iso = new Date(whole).toISOString(); // 2030-01-02T03:04:05.678Z
  return `${iso.slice(0, 23)}${String(micros).padStart(3, '0')}Z`;
}

/** The election record of a Lease body; malformed fields read as absent ones (see the module). */
export function recordOf(body: bodies.RawBody | object): LeaseRecord {
  const spec = (body as Record<string, unknown>)['spec'];
  const fields: Record<string, unknown> = dicts.isObject(spec) ? spec : {};
  const holder = fields['holderIdentity'];
  const time = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
  return {
    holderIdentity: typeof holder === 'string' ? holder : '',
    leaseDurationSeconds: integerOr(fields['leaseDurationSeconds'], 0),
    acquireTime: time(fields['acquireTime']),
    renewTime: time(fields['renewTime']),
    leaseTransitions: integerOr(fields['leaseTransitions'], 0),
  };
}

/** Whether two records are the same (a standby restarts its wait when the record changes). */
export function sameRecord(a: LeaseRecord, b: LeaseRecord): boolean {
  return (
    a.holderIdentity === b.holderIdentity &&
    a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.acquireTime === b.acquireTime &&
    a.renewTime === b.renewTime &&
    a.leaseTransitions === b.leaseTransitions
  );
}

function specOf(record: LeaseRecord): Record<string, unknown> {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    ...(record.acquireTime !== null ? { acquireTime: record.acquireTime } : {}),
    ...(record.renewTime !== null ? { renewTime: record.renewTime } : {}),
    leaseTransitions: record.leaseTransitions,
  };
}

/** A new Lease holding `record` (for creating it). */
export function newLease(name: string, namespace: string, record: LeaseRecord): Record<string, unknown> {
  return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec: specOf(record) };
}

/**
 * The stored Lease with its election fields replaced by `record` (for a PUT): metadata — with the
 * `resourceVersion` that makes the write optimistic — and other spec fields are kept.
 */
export function replacedLease(stored: bodies.RawBody | object, record: LeaseRecord): Record<string, unknown> {
  const body = stored as Record<string, unknown>;
  const spec = dicts.isObject(body['spec']) ? body['spec'] : {};
  const { acquireTime: _a, renewTime: _r, ...others } = spec;
  return { ...body, apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', spec: { ...others, ...specOf(record) } };
}
