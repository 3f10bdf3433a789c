import { describe, expect, it } from 'vitest';
import * as fielderrors from '../../../devcluster/meta/fielderrors.js';
import * as leases from '../../../devcluster/builtins/leases.js';
import * as statuses from '../../../devcluster/server/statuses.js';
import { loose, testContext } from './contexts.js';

type Json = { [key: string]: any };
const lease = (spec: Json): Json => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l', namespace: 'default' }, spec });
const rendered = (errors: fielderrors.FieldError[]): string[] => errors.map(fielderrors.renderError);

describe('leases', () => {
  const s = loose(leases.leaseStrategy);
  const ctx = testContext();

  it('D-BI-10 acquireTime and renewTime are normalised to MicroTime on create and update', () => {
    const out = s.prepareForCreate!(lease({ holderIdentity: 'a', acquireTime: '2024-05-01T12:00:00+02:00', renewTime: '2024-05-01T10:00:00.1234567Z' }), ctx);
    expect(out['spec']).toEqual({ holderIdentity: 'a', acquireTime: '2024-05-01T10:00:00.000000Z', renewTime: '2024-05-01T10:00:00.123456Z' });
    expect(s.prepareForUpdate!(lease({ renewTime: '2024-05-01T10:00:05.5Z' }), out, ctx)['spec']['renewTime']).toBe('2024-05-01T10:00:05.500000Z');
  });

  it('D-BI-10 a lease without spec is accepted unchanged', () => {
    const obj = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l' } };
    expect(s.prepareForCreate!(obj, ctx)).toEqual(obj);
    expect(s.validate!(obj, undefined, ctx)).toEqual([]);
  });

  it('D-BI-10 the duration must be positive and transitions non-negative', () => {
    expect(rendered(s.validate!(lease({ leaseDurationSeconds: 0, leaseTransitions: -1 }), undefined, ctx))).toEqual([
      'spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0',
      'spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0',
    ]);
    expect(s.validate!(lease({ leaseDurationSeconds: 1, leaseTransitions: 0 }), undefined, ctx)).toEqual([]);
  });

  it('D-BI-10 a preferred holder needs a strategy', () => {
    expect(rendered(s.validate!(lease({ preferredHolder: 'b' }), undefined, ctx))).toEqual([
      'spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined',
    ]);
  });

  it('D-WIRE-19 bad times and string durations are 400', () => {
    expect(() => s.prepareForCreate!(lease({ renewTime: 'later' }), ctx)).toThrow(statuses.ApiError);
    expect(() => s.prepareForCreate!(lease({ leaseDurationSeconds: '15' }), ctx)).toThrow(statuses.ApiError);
  });

  it('D-VERB-13/15 PUT creates leases and needs a resourceVersion to update them', () => {
    expect(s.putCreates).toBe(true);
    expect(s.requireResourceVersion).toBe(true);
  });
});
