import { describe, expect, it } from 'vitest';
import * as listsemantics from '../../../devcluster/crds/listsemantics.js';
import type * as schemas from '../../../devcluster/crds/schemas.js';

const schema: schemas.JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name', 'protocol'],
          items: {
            type: 'object',
            required: ['name', 'protocol'],
            properties: {
              name: { type: 'string' },
              protocol: { type: 'string' },
              hosts: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
            },
          },
        },
        tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        args: { type: 'array', items: { type: 'string' } },
        byName: { type: 'object', additionalProperties: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } } },
      },
    },
  },
};

describe('listSemanticsOf', () => {
  const lookup = listsemantics.listSemanticsOf(schema);
  it.each([
    { path: ['spec', 'ports'], expected: { type: 'map', keys: ['name', 'protocol'] } },
    { path: ['spec', 'tags'], expected: { type: 'set' } },
    { path: ['spec', 'args'], expected: { type: 'atomic' } },
    { path: ['spec', 'ports', 'hosts'], expected: { type: 'set' } },
    { path: ['spec', 'byName', 'anyKey'], expected: { type: 'set' } },
    { path: ['spec', 'unknown'], expected: { type: 'atomic' } },
    { path: ['spec'], expected: { type: 'atomic' } },
  ])('reports $expected.type for $path (list items add no segment)', ({ path, expected }) => {
    expect(lookup(path)).toEqual(expected);
  });

  it('treats every list as atomic without a schema', () => {
    expect(listsemantics.listSemanticsOf(undefined)(['spec', 'tags'])).toEqual({ type: 'atomic' });
  });
});
