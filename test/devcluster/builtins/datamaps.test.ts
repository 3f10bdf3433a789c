import { describe, expect, it } from 'vitest';
import * as fielderrors from '../../../devcluster/meta/fielderrors.js';
import * as datamaps from '../../../devcluster/builtins/datamaps.js';
import * as statuses from '../../../devcluster/server/statuses.js';

describe('datamaps', () => {
  it.each([
    ['key.name', []],
    ['KEY_NAME', []],
    ['a-b', []],
    ['.', ["must not be '.'"]],
    ['..', ["must not be '..'"]],
    ['..x', ["must not start with '..'"]],
    [
      'a/b',
      [
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
      ],
    ],
    ['x'.repeat(254), ['must be no more than 253 characters']],
  ])('D-BI-5 config key %s → %j', (key, messages) => {
    expect(datamaps.configKeyErrors(key)).toEqual(messages);
  });

  it.each([
    ['', undefined],
    ['eA==', undefined],
    ['aGVsbG8=', undefined],
    ['aGVs\nbG8=', undefined],
    ['!!', 'illegal base64 data at input byte 0'],
    ['eA', 'illegal base64 data at input byte 0'],
    ['eA==eA==', 'illegal base64 data at input byte 2'],
    ['aGVsbG8*', 'illegal base64 data at input byte 7'],
  ])('D-BI-6 base64 %j → %s', (text, error) => {
    expect(datamaps.base64Error(text)).toBe(error);
  });

  it('D-BI-6 checkMap throws 400 for undecodable values and accepts good ones', () => {
    expect(() => datamaps.checkMap({ data: { a: 'eA==' } }, 'data', 'Secret', true)).not.toThrow();
    expect(() => datamaps.checkMap({}, 'data', 'Secret', true)).not.toThrow();
    for (const bad of [{ data: { a: '!!' } }, { data: { a: 1 } }, { data: 'x' }]) {
      let error: unknown;
      try {
        datamaps.checkMap(bad, 'data', 'Secret', true);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(statuses.ApiError);
      expect((error as statuses.ApiError).code).toBe(400);
      expect((error as statuses.ApiError).message).toMatch(/^Secret in version "v1" cannot be handled as a Secret: /);
    }
    expect(() => datamaps.checkMap({ data: { a: '!!' } }, 'data', 'ConfigMap', false)).not.toThrow();
  });

  it('D-BI-5 immutable objects refuse changes of their data and of the flag; empty equals absent', () => {
    const old = { immutable: true, data: { a: '1' } };
    expect(datamaps.immutableErrors({ immutable: true, data: { a: '1' } }, old, ['data', 'binaryData'])).toEqual([]);
    expect(datamaps.immutableErrors({ immutable: true, data: { a: '1' }, binaryData: {} }, old, ['data', 'binaryData'])).toEqual([]);
    expect(datamaps.immutableErrors({ data: { a: '2' } }, old, ['data']).map(fielderrors.renderError)).toEqual([
      'immutable: Forbidden: field is immutable when `immutable` is set',
      'data: Forbidden: field is immutable when `immutable` is set',
    ]);
    expect(datamaps.immutableErrors({ data: { a: '2' } }, { data: { a: '1' } }, ['data'])).toEqual([]);
    expect(datamaps.immutableErrors({ data: { a: '2' } }, undefined, ['data'])).toEqual([]);
  });

  it('D-BI-5 the size limit is 1 MiB', () => {
    expect(datamaps.sizeErrors(datamaps.MAX_DATA_SIZE, 'data')).toEqual([]);
    expect(datamaps.sizeErrors(datamaps.MAX_DATA_SIZE + 1, 'data').map(fielderrors.renderError)).toEqual(['data: Too long: must have at most 1048576 bytes']);
  });
});
