import { describe, expect, it } from 'vitest';
import * as pruning from '../../../devcluster/crds/pruning.js';
import type * as schemas from '../../../devcluster/crds/schemas.js';
import * as widgets from './widgets.js';

const obj = (properties: Record<string, schemas.JSONSchemaProps>, extra: schemas.JSONSchemaProps = {}): schemas.JSONSchemaProps => ({
  type: 'object',
  properties,
  ...extra,
});

describe('pruneObject', () => {
  it('C-91 D-CRD-8 drops spec.bogus, reports it, and keeps spec.extra.anything', () => {
    const input = widgets.widget({ size: 3, bogus: 1, extra: { anything: { deep: [1, { x: 2 }] } } });
    const { value, unknownFields } = pruning.pruneObject(input, widgets.widgetSchema());
    expect(value).toEqual(widgets.widget({ size: 3, extra: { anything: { deep: [1, { x: 2 }] } } }));
    expect(unknownFields).toEqual(['spec.bogus']);
  });

  it('D-CRD-7 keeps apiVersion, kind and metadata at the root regardless of the schema', () => {
    const input = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', labels: { a: 'b' } }, top: 1 };
    const { value, unknownFields } = pruning.pruneObject(input, { type: 'object', properties: {} });
    expect(value).toEqual({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', labels: { a: 'b' } } });
    expect(unknownFields).toEqual(['top']);
  });

  it('D-CRD-7 drops unknown fields of the root metadata', () => {
    const input = widgets.widget({ size: 1 }, { metadata: { name: 'w', namespace: 'default', color: 'red', finalizers: ['f'] } });
    const { value, unknownFields } = pruning.pruneObject(input, widgets.widgetSchema());
    expect((value as { metadata: unknown }).metadata).toEqual({ name: 'w', namespace: 'default', finalizers: ['f'] });
    expect(unknownFields).toEqual(['metadata.color']);
  });

  it('D-CRD-7 keeps apiVersion, kind and standard metadata of embedded resources', () => {
    const schema = obj({
      spec: obj({ pod: obj({ spec: obj({ image: { type: 'string' } }) }, { 'x-kubernetes-embedded-resource': true }) }),
    });
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', junk: 1 }, spec: { image: 'nginx', other: true }, status: {} };
    const { value, unknownFields } = pruning.pruneObject(widgets.widget({ pod }), schema);
    expect((value as { spec: unknown }).spec).toEqual({ pod: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { image: 'nginx' } } });
    expect(unknownFields).toEqual(['spec.pod.metadata.junk', 'spec.pod.spec.other', 'spec.pod.status']);
  });

  it('D-CRD-9 reports list indices as [i]', () => {
    const schema = obj({ spec: obj({ items: { type: 'array', items: obj({ name: { type: 'string' } }) } }) });
    const { unknownFields } = pruning.pruneObject(widgets.widget({ items: [{ name: 'a' }, { name: 'b', x: 1 }] }), schema);
    expect(unknownFields).toEqual(['spec.items[1].x']);
  });

  it('D-CRD-8 keeps every key under additionalProperties and prunes the values', () => {
    const schema = obj({ spec: obj({ map: { type: 'object', additionalProperties: obj({ a: { type: 'string' } }) } }) });
    const { value, unknownFields } = pruning.pruneObject(widgets.widget({ map: { k1: { a: 'x', b: 'y' }, k2: { a: 'z' } } }), schema);
    expect((value as { spec: unknown }).spec).toEqual({ map: { k1: { a: 'x' }, k2: { a: 'z' } } });
    expect(unknownFields).toEqual(['spec.map.k1.b']);
  });

  it('D-CRD-8 prunes declared properties below x-kubernetes-preserve-unknown-fields but keeps undeclared keys', () => {
    const schema = obj({
      spec: obj({ known: obj({ a: { type: 'string' } }) }, { 'x-kubernetes-preserve-unknown-fields': true }),
    });
    const { value, unknownFields } = pruning.pruneObject(widgets.widget({ known: { a: 'x', b: 'y' }, free: { anything: 1 } }), schema);
    expect((value as { spec: unknown }).spec).toEqual({ known: { a: 'x' }, free: { anything: 1 } });
    expect(unknownFields).toEqual(['spec.known.b']);
  });

  it('D-CRD-8 keeps integers and strings of int-or-string nodes', () => {
    const schema = obj({ spec: obj({ port: { 'x-kubernetes-int-or-string': true } }) });
    expect(pruning.pruneObject(widgets.widget({ port: 80 }), schema).value).toEqual(widgets.widget({ port: 80 }));
    expect(pruning.pruneObject(widgets.widget({ port: 'http' }), schema).value).toEqual(widgets.widget({ port: 'http' }));
  });

  it('C-95 D-CRD-8 removes a null map entry whose schema is not nullable and has no default', () => {
    const { value, unknownFields } = pruning.pruneObject(widgets.widget({ size: 1, mode: null }), widgets.widgetSchema());
    expect((value as { spec: Record<string, unknown> }).spec).toEqual({ size: 1 });
    expect(unknownFields).toEqual([]);
  });

  it('D-CRD-8 keeps nulls that are nullable, defaulted, inside arrays, or unspecified', () => {
    const schema = obj({
      spec: obj(
        {
          nullable: { type: 'string', nullable: true },
          defaulted: { type: 'string', default: 'x' },
          list: { type: 'array', items: { type: 'string' } },
        },
        { 'x-kubernetes-preserve-unknown-fields': true },
      ),
    });
    const spec = { nullable: null, defaulted: null, list: ['a', null], free: null };
    expect((pruning.pruneObject(widgets.widget(spec), schema).value as { spec: unknown }).spec).toEqual(spec);
  });

  it('D-CRD-8 without root treatment prunes apiVersion, kind and metadata like any other key', () => {
    const schema = obj({ a: { type: 'string' } });
    const { value, unknownFields } = pruning.pruneObject({ a: 'x', kind: 'K', metadata: {} }, schema, { root: false });
    expect(value).toEqual({ a: 'x' });
    expect(unknownFields).toEqual(['kind', 'metadata']);
  });

  it('D-CRD-8 does not mutate its input', () => {
    const input = widgets.widget({ size: 3, bogus: 1, mode: null });
    const before = JSON.stringify(input);
    pruning.pruneObject(input, widgets.widgetSchema());
    expect(JSON.stringify(input)).toBe(before);
  });
});
