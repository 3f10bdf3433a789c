/**
 * `roundTrip` of `kopf-gen/testing` (R-TEST-105): converters that lose nothing pass, in either
 * direction; a lost, changed or added field fails with an `AssertionError` naming each path with
 * its values before and after; a converter that changes its input fails too. The converters here
 * are plain functions of a v1/v2 pair with a renamed and a split field, as on.convert receives them.
 */
import { AssertionError } from 'node:assert';
import { describe, expect, expectTypeOf, it } from 'vitest';

import { roundTrip, RoundTripError } from 'kopf-gen/testing';

interface V1 {
  apiVersion: 'example.com/v1';
  kind: 'Gizmo';
  metadata?: { name?: string; annotations?: { [key: string]: string } };
  spec: { size: number; image: string; ports?: { name: string; port: number }[] };
}
interface V2 {
  apiVersion: 'example.com/v2';
  kind: 'Gizmo';
  metadata?: { name?: string; annotations?: { [key: string]: string } };
  spec: { replicas: number; image: { repository: string; tag?: string }; ports?: { name: string; port: number }[] };
}

const lossless = {
  forward(object: V1): V2 {
    const { size, image, ...spec } = object.spec;
    const [repository = '', tag] = image.split(':');
    return { ...object, apiVersion: 'example.com/v2', spec: { ...spec, replicas: size, image: { repository, tag } } };
  },
  backward(object: V2): V1 {
    const { replicas, image, ...spec } = object.spec;
    const reference = image.tag === undefined ? image.repository : `${image.repository}:${image.tag}`;
    return { ...object, apiVersion: 'example.com/v1', spec: { ...spec, size: replicas, image: reference } };
  },
};

const v1: V1 = {
  apiVersion: 'example.com/v1',
  kind: 'Gizmo',
  metadata: { name: 'g', annotations: { 'example.com/owner': 'team-a' } },
  spec: { size: 3, image: 'registry/app:1.2', ports: [{ name: 'http', port: 80 }] },
};
const v2: V2 = { apiVersion: 'example.com/v2', kind: 'Gizmo', metadata: { name: 'g' }, spec: { replicas: 2, image: { repository: 'app' } } };

/** The error `run` throws (fails the test if it throws none or another). */
function failure(run: () => unknown): RoundTripError {
  try {
    run();
  } catch (error) {
    if (error instanceof RoundTripError) return error;
    throw error;
  }
  throw new Error('the round trip passed');
}

describe('R-TEST-105: roundTrip', () => {
  it('R-TEST-105: a lossless pair passes both ways, returning the converted and the restored object', () => {
    const there = roundTrip(lossless, v1);
    expect(there.converted).toEqual({
      ...v1,
      apiVersion: 'example.com/v2',
      spec: { replicas: 3, image: { repository: 'registry/app', tag: '1.2' }, ports: v1.spec.ports },
    });
    expect(there.restored).toEqual(v1);
    expectTypeOf(there.converted).toEqualTypeOf<V2>();
    const back = roundTrip(lossless, v2, { from: 'to' });
    expect(back.converted.spec.image).toBe('app');
    expectTypeOf(back.restored).toEqualTypeOf<V2>();
    // @ts-expect-error a v2 object is given as v1 without `from: 'to'`
    expect(() => roundTrip(lossless, v2)).toThrow();
  });

  it('R-TEST-105: a property holding undefined counts as absent, as in JSON', () => {
    // v2's `tag: undefined` (no tag in the reference) is the same object as one without the key.
    expect(roundTrip(lossless, { ...v1, spec: { ...v1.spec, image: 'app' } }).converted.spec.image).toEqual({ repository: 'app', tag: undefined });
  });

  it('R-TEST-105: a lost field fails with an AssertionError naming its path, before and after', () => {
    const forgetful = { ...lossless, forward: (object: V1): V2 => ({ ...lossless.forward(object), metadata: { name: 'g' } }) };
    const error = failure(() => roundTrip(forgetful, v1));
    expect(error).toBeInstanceOf(AssertionError);
    expect(error.changes).toEqual([{ kind: 'lost', path: 'metadata.annotations', before: { 'example.com/owner': 'team-a' }, after: undefined }]);
    expect(error.message).toBe(
      [
        'the round trip example.com/v1 → example.com/v2 → example.com/v1 changed the object:',
        '  metadata.annotations: {"example.com/owner":"team-a"} → (absent) (lost)',
      ].join('\n'),
    );
    expect(error.expected).toEqual(v1);
  });

  it('R-TEST-105: every changed, lost and added field is listed, in list items and odd keys too', () => {
    const sloppy = {
      forward: lossless.forward,
      backward(object: V2): V1 {
        const back = lossless.backward(object);
        return {
          ...back,
          metadata: { annotations: { 'example.com/owner': 'team-b', 'example.com/extra': 'x' } },
          spec: {
            ...back.spec,
            size: back.spec.size + 1,
            ports: [
              { name: 'http', port: 8080 },
              { name: 'metrics', port: 9090 },
            ],
          },
        };
      },
    };
    const error = failure(() => roundTrip(sloppy, v1));
    expect(error.changes).toEqual([
      { kind: 'lost', path: 'metadata.name', before: 'g', after: undefined },
      { kind: 'changed', path: 'metadata.annotations["example.com/owner"]', before: 'team-a', after: 'team-b' },
      { kind: 'added', path: 'metadata.annotations["example.com/extra"]', before: undefined, after: 'x' },
      { kind: 'changed', path: 'spec.size', before: 3, after: 4 },
      { kind: 'changed', path: 'spec.ports[0].port', before: 80, after: 8080 },
      { kind: 'added', path: 'spec.ports[1]', before: undefined, after: { name: 'metrics', port: 9090 } },
    ]);
    expect(error.message.split('\n')).toHaveLength(7);
  });

  it('R-TEST-105: a wrong split is found from the target version too (backward, then forward)', () => {
    const naive = {
      ...lossless,
      backward: (object: V2): V1 => ({
        ...lossless.backward(object),
        spec: { ...lossless.backward(object).spec, image: `${object.spec.image.repository}:latest` },
      }),
    };
    const error = failure(() => roundTrip(naive, v2, { from: 'to' }));
    expect(error.changes).toEqual([{ kind: 'added', path: 'spec.image.tag', before: undefined, after: 'latest' }]);
    expect(error.message).toContain('example.com/v2 → example.com/v1 → example.com/v2');
  });

  it('R-TEST-105: a converter that changes the object it was given fails, even if the round trip looks right', () => {
    const mutating = {
      ...lossless,
      forward(object: V1): V2 {
        object.spec.size += 1; // the API server's copy is not the converter's to change
        return lossless.forward({ ...object, spec: { ...object.spec, size: object.spec.size - 1 } });
      },
    };
    const given = structuredClone(v1);
    const error = failure(() => roundTrip(mutating, given));
    expect(error.changes).toEqual([]);
    expect(error.mutations).toEqual([{ kind: 'changed', path: 'spec.size', before: 3, after: 4 }]);
    expect(error.message).toContain('a converter changed the object it was given');
  });

  it("R-TEST-105: a converter's own error comes out as it is", () => {
    const throwing = {
      ...lossless,
      forward(): V2 {
        throw new TypeError('no');
      },
    };
    expect(() => roundTrip(throwing, v1)).toThrow(TypeError);
  });
});
