import { describe, expect, it } from 'vitest';
import * as statuses from '../../../devcluster/server/statuses.js';
import * as strategies from '../../../devcluster/builtins/strategies.js';

describe('strategies', () => {
  it('D-WIRE-19 normalizeTimeAt turns any RFC 3339 form into a Time or MicroTime', () => {
    const obj = { a: { t: '2024-05-01T12:00:00.1234567+02:00' } };
    expect(strategies.normalizeTimeAt(obj, ['a', 't'], false, 'X')).toEqual({ a: { t: '2024-05-01T10:00:00Z' } });
    expect(strategies.normalizeTimeAt(obj, ['a', 't'], true, 'X')).toEqual({ a: { t: '2024-05-01T10:00:00.123456Z' } });
    expect(obj.a.t).toBe('2024-05-01T12:00:00.1234567+02:00');
  });

  it('normalizeTimeAt removes null and empty times and leaves absent ones alone', () => {
    expect(strategies.normalizeTimeAt({ t: null }, ['t'], false, 'X')).toEqual({});
    expect(strategies.normalizeTimeAt({ t: '' }, ['t'], true, 'X')).toEqual({});
    expect(strategies.normalizeTimeAt({ u: 1 }, ['t'], true, 'X')).toEqual({ u: 1 });
    expect(strategies.normalizeTimeAt({ u: 1 }, ['a', 't'], true, 'X')).toEqual({ u: 1 });
  });

  it('D-WIRE-19 an unparsable time is a 400 naming the kind', () => {
    let error: unknown;
    try {
      strategies.normalizeTimeAt({ t: 'yesterday' }, ['t'], false, 'Event');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(statuses.ApiError);
    expect((error as statuses.ApiError).code).toBe(400);
    expect((error as statuses.ApiError).message).toMatch(/^Event in version "v1" cannot be handled as a Event: parsing time "yesterday"/);
  });

  it('D-WIRE-19 requireIntegers rejects strings where numbers belong, including inside lists', () => {
    expect(() => strategies.requireIntegers({ spec: { replicas: 2 } }, ['spec.replicas'], 'Deployment')).not.toThrow();
    expect(() => strategies.requireIntegers({ spec: {} }, ['spec.replicas'], 'Deployment')).not.toThrow();
    expect(() => strategies.requireIntegers({ spec: { replicas: '2' } }, ['spec.replicas'], 'Deployment')).toThrow(
      'json: cannot unmarshal string into Go struct field Deployment.spec.replicas of type int32',
    );
    expect(() => strategies.requireIntegers({ ports: [{ port: 1 }, { port: 1.5 }] }, ['ports.*.port'], 'Service')).toThrow(statuses.ApiError);
  });

  it('D-SUB-3 the main endpoint keeps the stored status; /status replaces only status', () => {
    const old = { metadata: { name: 'a', labels: { x: '1' } }, spec: { v: 1 }, status: { phase: 'A' } };
    const next = { metadata: { name: 'a', labels: { x: '2' } }, spec: { v: 2 }, status: { phase: 'B' } };
    expect(strategies.keepStatus(next, old)).toEqual({ ...next, status: { phase: 'A' } });
    expect(strategies.keepStatus(next, { metadata: {} })).not.toHaveProperty('status');
    const ctx = undefined as never;
    expect(strategies.statusSubresource.prepareForSubresource!('status', next, old, ctx)).toEqual({ ...old, status: { phase: 'B' } });
    expect(strategies.statusSubresource.prepareForSubresource!('status', { metadata: {} }, old, ctx)).not.toHaveProperty('status');
  });

  it('accessors return fresh empty values for missing or mistyped members', () => {
    expect(strategies.mapOf({ a: [] }, 'a')).toEqual({});
    expect(strategies.listOf({ a: {} }, 'a')).toEqual([]);
    expect(strategies.stringOf({ a: 3 }, 'a')).toBe('');
    expect(strategies.stringOf(undefined, 'a')).toBe('');
  });
});
