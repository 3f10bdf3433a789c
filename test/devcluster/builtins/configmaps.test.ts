import { describe, expect, it } from 'vitest';
import * as fielderrors from '../../../devcluster/meta/fielderrors.js';
import * as configmaps from '../../../devcluster/builtins/configmaps.js';
import * as statuses from '../../../devcluster/server/statuses.js';
import { loose, testContext } from './contexts.js';

type Json = { [key: string]: any };
const cm = (extra: Json): Json => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, ...extra });
const rendered = (errors: fielderrors.FieldError[]): string[] => errors.map(fielderrors.renderError);

describe('configmaps', () => {
  const s = loose(configmaps.configMapStrategy);
  const ctx = testContext();

  it('D-BI-5 valid data and binaryData pass; the object is stored as given', () => {
    const obj = cm({ data: { 'a.conf': 'x' }, binaryData: { b: 'eA==' } });
    expect(s.prepareForCreate!(obj, ctx)).toEqual(obj);
    expect(s.validate!(obj, undefined, ctx)).toEqual([]);
    expect(s.generation).toBeUndefined();
  });

  it('D-BI-5 a key in both maps is invalid in both', () => {
    expect(rendered(s.validate!(cm({ data: { k: 'x' }, binaryData: { k: 'eA==' } }), undefined, ctx))).toEqual([
      'data[k]: Invalid value: "k": duplicate of key present in binaryData',
      'binaryData[k]: Invalid value: "k": duplicate of key present in data',
    ]);
  });

  it('D-BI-5 invalid keys are reported per map', () => {
    expect(rendered(s.validate!(cm({ data: { 'a b': 'x' }, binaryData: { '..': '' } }), undefined, ctx))).toEqual([
      expect.stringMatching(/^data\[a b\]: Invalid value: "a b": a valid config key/),
      'binaryData[..]: Invalid value: "..": must not be \'..\'',
    ]);
  });

  it('D-BI-5 more than 1 MiB in total is too long', () => {
    const half = 'x'.repeat(600 * 1024);
    expect(rendered(s.validate!(cm({ data: { a: half }, binaryData: { b: Buffer.from(half).toString('base64') } }), undefined, ctx))).toEqual([
      'Too long: must have at most 1048576 bytes',
    ]);
    expect(s.validate!(cm({ data: { a: half } }), undefined, ctx)).toEqual([]);
  });

  it('D-BI-5 once immutable, data cannot change and the flag cannot be unset', () => {
    const old = cm({ data: { a: '1' }, immutable: true });
    expect(rendered(s.validate!(cm({ data: { a: '2' }, immutable: true }), old, ctx))).toEqual(['data: Forbidden: field is immutable when `immutable` is set']);
    expect(rendered(s.validate!(cm({ data: { a: '1' }, immutable: false }), old, ctx))).toEqual([
      'immutable: Forbidden: field is immutable when `immutable` is set',
    ]);
    expect(s.validate!(cm({ data: { a: '1' }, immutable: true, metadata: { name: 'c', labels: { x: 'y' } } }), old, ctx)).toEqual([]);
  });

  it('D-BI-5 undecodable binaryData or non-string data is 400', () => {
    expect(() => s.prepareForCreate!(cm({ binaryData: { b: '%%' } }), ctx)).toThrow(statuses.ApiError);
    expect(() => s.prepareForUpdate!(cm({ data: { a: 3 } }), cm({}), ctx)).toThrow(statuses.ApiError);
  });
});
