/**
 * The converters of examples/21-conversion, without a cluster: they compile against the pinned
 * signature of `on.convert` (each result `Exact` against the other version), they round-trip the
 * example's input objects and the awkward ones (no tag, a registry's port, `paused: false`, a
 * malformed annotation) both ways with `roundTrip` of `kopf-gen/testing`, and the generated modules
 * they are typed by are current. The example end to end (the operator serving the conversions to
 * the devcluster) is tested in its own file.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as yaml from 'yaml';

import { ConversionError, type Exact } from 'kopf-gen/runtime';
import { roundTrip } from 'kopf-gen/testing';

import { backward, forward, splitImage, V2_ONLY } from '../../examples/21-conversion/converters.js';
import type * as V1 from '../../fixtures/generated/sprockets.conversion.kopf-gen.dev.v1.js';
import type * as V2 from '../../fixtures/generated/sprockets.conversion.kopf-gen.dev.v2.js';
import * as support from '../generator/support.js';
import { ROOT } from './support.js';

/** The converters' part of on.convert's pinned signature (the types only; returns the pair). */
function convert<R1 extends V2.Sprocket, R2 extends V1.Sprocket>(converters: {
  forward(object: V1.Sprocket): R1 & Exact<V2.Sprocket, R1>;
  backward(object: V2.Sprocket): R2 & Exact<V1.Sprocket, R2>;
}): { forward(object: V1.Sprocket): R1; backward(object: V2.Sprocket): R2 } {
  return converters;
}

const sprocket = convert({ forward, backward });

const input = <T>(name: string): T => yaml.parse(fs.readFileSync(path.join(ROOT, 'fixtures/objects/inputs', name), 'utf8')) as T;
const v1 = input<V1.Sprocket>('sprocket-v1.yaml');
const v2 = input<V2.Sprocket>('sprocket-v2.yaml');

describe("examples/21-conversion's converters", () => {
  it('R-TEST-105: the v1 input converts to v2 (renamed, split) and back unchanged', () => {
    const { converted } = roundTrip(sprocket, v1);
    expect(converted).toEqual({
      apiVersion: 'conversion.kopf-gen.dev/v2',
      kind: 'Sprocket',
      metadata: { name: 'sprocket-1', annotations: { 'example.com/owner': 'team-a' } },
      spec: { replicas: 3, image: { repository: 'registry.example.com:5000/team/sprocket', tag: '1.2' }, colour: 'blue' },
    });
  });

  it('R-TEST-105: the v2 input converts to v1 (paused kept in the annotation) and back unchanged', () => {
    const { converted } = roundTrip(sprocket, v2, { from: 'to' });
    expect(converted).toEqual({
      apiVersion: 'conversion.kopf-gen.dev/v1',
      kind: 'Sprocket',
      metadata: { name: 'sprocket-2', annotations: { [V2_ONLY]: '{"paused":true}' } },
      spec: { size: 2, image: 'sprocket' },
    });
  });

  it('R-TEST-105: awkward objects round-trip both ways', () => {
    const v2s: V2.Sprocket[] = [
      { ...v2, spec: { replicas: 0, image: { repository: 'localhost:5000/app' }, paused: false } },
      { ...v2, metadata: { name: 'x', annotations: { a: 'b' } }, spec: { replicas: 1, image: { repository: 'app', tag: 'v1.0_rc-1' }, colour: '' } },
      { apiVersion: 'conversion.kopf-gen.dev/v2', kind: 'Sprocket', spec: { replicas: 1, image: { repository: 'a/b/c' } } },
    ];
    for (const object of v2s) roundTrip(sprocket, object, { from: 'to' });
    const v1s: V1.Sprocket[] = [
      { ...v1, spec: { size: 1, image: 'localhost:5000/app' } },
      { ...v1, metadata: { name: 'y', annotations: { [V2_ONLY]: 'not json' } } },
      { ...v1, metadata: { name: 'z', annotations: { [V2_ONLY]: '{"paused":"yes"}', other: 'kept' } } },
      { ...v1, metadata: { name: 'w', annotations: { [V2_ONLY]: '{"paused":false}' } } },
    ];
    for (const object of v1s) roundTrip(sprocket, object);
  });

  it('R-TEST-105: a malformed annotation stays on the object; a well-formed one becomes the field', () => {
    expect(sprocket.forward({ ...v1, metadata: { name: 'y', annotations: { [V2_ONLY]: 'not json' } } }).metadata).toEqual({
      name: 'y',
      annotations: { [V2_ONLY]: 'not json' },
    });
    const restored = sprocket.forward({ ...v1, metadata: { name: 'w', annotations: { [V2_ONLY]: '{"paused":false}' } } });
    expect(restored.spec.paused).toBe(false);
    expect(restored.metadata?.annotations).toBeUndefined();
  });

  it('splits image references at the tag, never at a registry port', () => {
    expect(splitImage('app')).toEqual({ repository: 'app' });
    expect(splitImage('app:1')).toEqual({ repository: 'app', tag: '1' });
    expect(splitImage('host:5000/app')).toEqual({ repository: 'host:5000/app' });
    expect(splitImage('host:5000/team/app:2.0')).toEqual({ repository: 'host:5000/team/app', tag: '2.0' });
  });

  it('refuse a digest, which v2 has no place for, with a ConversionError naming the field', () => {
    const digest = `app:1.2@sha256:${'0'.repeat(64)}`;
    expect(() => forward({ ...v1, spec: { ...v1.spec, image: digest } })).toThrow(ConversionError);
    expect(() => splitImage(digest)).toThrow(`spec.image: v2 has no place for the digest of "${digest}"`);
  });

  it('are typed by the generated modules of fixtures/crds/conversion.yaml, kept current (update with vitest -u)', async () => {
    const source = { path: 'fixtures/crds/conversion.yaml', text: fs.readFileSync(path.join(ROOT, 'fixtures/crds/conversion.yaml'), 'utf8') };
    const { modules } = support.generate([source]);
    expect(modules.map((module) => module.fileName)).toEqual(['sprockets.conversion.kopf-gen.dev.v1.ts', 'sprockets.conversion.kopf-gen.dev.v2.ts']);
    for (const module of modules) await expect(module.text).toMatchFileSnapshot(path.join(ROOT, 'fixtures/generated', module.fileName));
  });
});
