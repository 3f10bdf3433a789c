import { describe, expect, it } from 'vitest';
import * as times from '../../../devcluster/meta/times.js';

describe('Time normalisation (D-WIRE-19)', () => {
  it.each([
    ['2024-05-01T10:00:00Z', '2024-05-01T10:00:00Z'],
    ['2024-05-01T10:00:00.123456+00:00', '2024-05-01T10:00:00Z'],
    ['2024-05-01T10:00:00.999999999Z', '2024-05-01T10:00:00Z'],
    ['2024-05-01T12:30:00+02:30', '2024-05-01T10:00:00Z'],
    ['2024-05-01T05:00:00-05:00', '2024-05-01T10:00:00Z'],
    ['2024-01-01T01:00:00+02:00', '2023-12-31T23:00:00Z'],
    ['2024-02-29T23:59:59-00:01', '2024-03-01T00:00:59Z'],
    ['2024-05-01t10:00:00z', '2024-05-01T10:00:00Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00Z'],
    ['9999-12-31T23:59:59Z', '9999-12-31T23:59:59Z'],
  ])('D-WIRE-19 %j → %j', (input, expected) => {
    expect(times.normalizeTime(input)).toBe(expected);
  });

  it.each([
    ['2024-05-01'],
    ['2024-05-01T10:00:00'],
    ['2024-05-01 10:00:00Z'],
    ['2024-13-01T10:00:00Z'],
    ['2023-02-29T10:00:00Z'],
    ['2024-04-31T10:00:00Z'],
    ['2024-05-01T24:00:00Z'],
    ['2024-05-01T10:60:00Z'],
    ['2024-05-01T10:00:61Z'],
    ['2024-05-01T10:00:00.Z'],
    ['2024-05-01T10:00:00+0200'],
    ['2024-05-01T10:00:00+24:00'],
    ['0000-01-01T00:00:00+01:00'],
    ['9999-12-31T23:00:00-01:00'],
    ['yesterday'],
    [''],
    [1714557600],
    [null],
    [undefined],
    [{}],
  ])('D-WIRE-19 %j is not a valid time', (input) => {
    expect(times.normalizeTime(input)).toBeUndefined();
    expect(times.normalizeMicroTime(input)).toBeUndefined();
  });

  it('accepts Date values and rejects invalid ones', () => {
    expect(times.normalizeTime(new Date(Date.UTC(2024, 4, 1, 10, 0, 0, 750)))).toBe('2024-05-01T10:00:00Z');
    expect(times.normalizeTime(new Date(Number.NaN))).toBeUndefined();
  });
});

describe('MicroTime normalisation (D-WIRE-19)', () => {
  it.each([
    ['2024-05-01T10:00:00Z', '2024-05-01T10:00:00.000000Z'],
    ['2024-05-01T10:00:00.5+00:00', '2024-05-01T10:00:00.500000Z'],
    ['2024-05-01T10:00:00.123456+00:00', '2024-05-01T10:00:00.123456Z'],
    ['2024-05-01T12:00:00.1234567+02:00', '2024-05-01T10:00:00.123456Z'],
    ['2024-05-01T10:00:00.000001Z', '2024-05-01T10:00:00.000001Z'],
    ['2024-05-01T10:00:00.999999999-01:00', '2024-05-01T11:00:00.999999Z'],
  ])('D-WIRE-19 %j → %j', (input, expected) => {
    expect(times.normalizeMicroTime(input)).toBe(expected);
  });

  it('a Date keeps its milliseconds', () => {
    expect(times.normalizeMicroTime(new Date(Date.UTC(2024, 4, 1, 10, 0, 0, 7)))).toBe('2024-05-01T10:00:00.007000Z');
  });
});

describe('formatting server timestamps', () => {
  const date = new Date(Date.UTC(2024, 4, 1, 10, 0, 5, 123));

  it('C-14 D-META-4 formatTime gives second precision in UTC', () => {
    expect(times.formatTime(date)).toBe('2024-05-01T10:00:05Z');
    expect(times.formatTime(new Date())).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('formatMicroTime gives six fractional digits', () => {
    expect(times.formatMicroTime(date)).toBe('2024-05-01T10:00:05.123000Z');
    expect(times.formatMicroTime(new Date())).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it('invalid dates cannot be formatted', () => {
    expect(() => times.formatTime(new Date(Number.NaN))).toThrow(RangeError);
    expect(() => times.formatMicroTime(new Date(Date.UTC(10000, 0, 1)))).toThrow(RangeError);
  });

  it('parseTime reads any RFC 3339 text to a Date', () => {
    expect(times.parseTime('2024-05-01T12:00:00.123456+02:00')?.toISOString()).toBe('2024-05-01T10:00:00.123Z');
    expect(times.parseTime('nope')).toBeUndefined();
  });
});
