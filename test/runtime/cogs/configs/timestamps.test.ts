import { describe, expect, it } from 'vitest';

import * as timestamps from '../../../../runtime/cogs/configs/timestamps.js';

describe('timestamps', () => {
  it.each([
    [Date.UTC(2024, 4, 1, 10, 0, 0, 123) + 0.456, '2024-05-01T10:00:00.123456+00:00'],
    [Date.UTC(2024, 4, 1, 10, 0, 0), '2024-05-01T10:00:00.000000+00:00'],
    [Date.UTC(1999, 11, 31, 23, 59, 59, 999), '1999-12-31T23:59:59.999000+00:00'],
  ])('R-STORAGE-5 formats %d as %s', (ms, text) => {
    expect(timestamps.formatTimestamp(ms)).toBe(text);
  });

  it.each([
    ['2024-05-01T10:00:00.123456+00:00', Date.UTC(2024, 4, 1, 10, 0, 0, 123) + 0.456],
    ['2024-05-01T10:00:00.123456Z', Date.UTC(2024, 4, 1, 10, 0, 0, 123) + 0.456],
    ['2024-05-01T10:00:00.123456', Date.UTC(2024, 4, 1, 10, 0, 0, 123) + 0.456],
    ['2024-05-01T10:00:00.5', Date.UTC(2024, 4, 1, 10, 0, 0, 500)],
    ['2024-05-01T10:00:00', Date.UTC(2024, 4, 1, 10, 0, 0)],
    ['2024-05-01T12:30:00+02:30', Date.UTC(2024, 4, 1, 10, 0, 0)],
    ['2024-05-01T05:00:00-05:00', Date.UTC(2024, 4, 1, 10, 0, 0)],
    ['2024-05-01 10:00:00+0000', Date.UTC(2024, 4, 1, 10, 0, 0)],
  ])('R-STORAGE-5 parses %s', (text, ms) => {
    expect(timestamps.parseTimestamp(text)).toBeCloseTo(ms, 3);
  });

  it.each(['', 'yesterday', '2024-13-45', null, 42])('R-STORAGE-5 rejects %j', (text) => {
    expect(timestamps.parseTimestamp(text)).toBeUndefined();
  });

  it('R-STORAGE-5 formatting and parsing round-trip to the microsecond', () => {
    const ms = 1_714_557_600_123.456;
    expect(timestamps.parseTimestamp(timestamps.formatTimestamp(ms))).toBeCloseTo(ms, 3);
  });
});
