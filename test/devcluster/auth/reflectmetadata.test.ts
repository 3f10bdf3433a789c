import { describe, expect, it } from 'vitest';
import * as reflectmetadata from '../../../devcluster/auth/reflectmetadata.js';

interface MetadataApi {
  defineMetadata(key: unknown, value: unknown, target: object): void;
  getMetadata(key: unknown, target: object): unknown;
  getOwnMetadata(key: unknown, target: object): unknown;
  hasMetadata(key: unknown, target: object): boolean;
}

describe('reflect metadata shim', () => {
  it('stores metadata per target and finds inherited metadata through the prototype chain', () => {
    reflectmetadata.installReflectMetadata();
    const api = Reflect as unknown as MetadataApi;
    class Base {}
    class Derived extends Base {}
    api.defineMetadata('design:paramtypes', [String], Base);
    expect(api.getMetadata('design:paramtypes', Derived)).toEqual([String]);
    expect(api.getOwnMetadata('design:paramtypes', Derived)).toBeUndefined();
    expect(api.hasMetadata('design:paramtypes', Derived)).toBe(true);
    expect(api.getMetadata('other', Derived)).toBeUndefined();
  });
});
