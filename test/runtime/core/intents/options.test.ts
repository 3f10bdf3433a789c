import { describe, expect, it } from 'vitest';
import * as options from '../../../../runtime/core/intents/options.js';

describe('registration options', () => {
  it('R-API-4 every registration accepts id, param and registry; only retriable kinds accept retry options', () => {
    for (const [registration, keys] of Object.entries(options.ALLOWED_OPTIONS)) {
      expect(keys, registration).toEqual(expect.arrayContaining(['id', 'param']));
      const retriable = !['event', 'validate', 'mutate', 'reconcile', 'convert'].includes(registration); // reconcile: its own back-off (R-RECONCILE-205); convert: answered at once, the API server retries
      expect(keys.includes('retries'), registration).toBe(retriable);
    }
    expect(() => options.checkOptionKeys('probe', { id: 'x', backoff: 1 })).not.toThrow();
    expect(() => options.checkOptionKeys('probe', { labels: {} })).toThrow(TypeError);
    expect(() => options.checkOptionKeys('create', null as unknown as options.RawOptions)).toThrow(/must be an object/);
  });

  it('R-ADMISSION-1 operations: all by default, the deprecated alias, non-empty lists only', () => {
    expect(options.operations({})).toBeNull();
    expect(options.operations({ operation: 'DELETE' })).toEqual(['DELETE']);
    expect(options.operations({ operations: ['CREATE', 'UPDATE'] })).toEqual(['CREATE', 'UPDATE']);
    expect(() => options.operations({ operations: [] })).toThrow(TypeError);
    expect(() => options.operations({ operations: 'CREATE' })).toThrow(TypeError);
    expect(options.subresource({ subresource: '*' })).toBe('*');
    expect(options.subresource({})).toBeNull();
    expect(() => options.subresource({ subresource: '' })).toThrow(TypeError);
  });

  it('R-FILTERS-5 a field spec keeps value/old/new and parses the field', () => {
    const spec = options.filterSpec({ value: 1 }, options.parseFieldOption('spec.a'), false);
    expect(spec).toMatchObject({ field: ['spec', 'a'], value: 1, old: undefined, new: undefined, fieldNeedsChange: false });
    expect(options.parseFieldOption(['metadata', 'labels', 'a.b'])).toEqual(['metadata', 'labels', 'a.b']);
    expect(options.parseFieldOption('')).toBeNull();
  });
});
