import { sha256 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';

import * as bounds from '../../../../runtime/cogs/configs/bounds.js';
import * as conventions from '../../../../runtime/cogs/configs/conventions.js';
import * as diffbase from '../../../../runtime/cogs/configs/diffbase.js';
import * as progress from '../../../../runtime/cogs/configs/progress.js';
import * as patches from '../../../../runtime/cogs/structs/patches.js';

const LHC = 'kopf.zalando.org/last-handled-configuration';
const KIB = 1024;
/** The touch-dummy a delayed handler's next patch writes: its key and a timestamp. */
const TOUCH_VALUE_BYTES = '2024-05-01T10:00:00.000000+00:00'.length;
const TOUCH_BYTES = 'kopf.zalando.org/touch-dummy'.length + TOUCH_VALUE_BYTES;

function objectWith(annotations: Record<string, string>, spec: Record<string, unknown> = { field: 'value' }): Record<string, unknown> {
  return {
    apiVersion: 'kopf.dev/v1',
    kind: 'KopfExample',
    metadata: { name: 'kex', namespace: 'default', uid: 'u-1', resourceVersion: '1', annotations },
    spec,
  };
}

/** The summed bytes of keys and values of the annotations an object has after a merge-patch. */
function annotationBytes(body: Record<string, unknown>, patch: patches.PatchBase<object>): number {
  const current = (body['metadata'] as { annotations: Record<string, string> }).annotations;
  const merged: Record<string, string | null> = { ...current, ...((patch.getAt(['metadata', 'annotations']) as Record<string, string | null>) ?? {}) };
  return Object.entries(merged).reduce((sum, [k, v]) => sum + (v === null ? 0 : Buffer.byteLength(k) + Buffer.byteLength(v)), 0);
}

/** The digest marker as documented: the byte length and SHA-256 of the value's JSON with sorted keys. */
function marker(json: string): string {
  return `kopf-gen/digest:${Buffer.byteLength(json)}:sha256:${Buffer.from(sha256(new TextEncoder().encode(json))).toString('hex')}`;
}

describe('size-bounded diff-bases', () => {
  it('R-STORAGE-16 an essence that fits is stored exactly as before, with no note', () => {
    const storage = new diffbase.AnnotationsDiffBaseStorage();
    const body = objectWith({ big: 'b'.repeat(100 * KIB) });
    const patch = new patches.Patch();
    storage.store({ body, patch, essence: storage.build({ body }) });
    expect(patch.getAt(['metadata', 'annotations', LHC])).toBe(`${diffbase.encodeEssence(storage.build({ body }))}\n`);
    expect(bounds.takeNotes(patch)).toEqual([]);
  });

  it('R-STORAGE-16 a 200 KiB annotation is stored as its digest; the object stays within 256 KiB of annotations; one note names the limit', () => {
    const storage = new diffbase.AnnotationsDiffBaseStorage();
    const huge = 'h'.repeat(200 * KIB);
    const body = objectWith({ huge, small: 'yes' });
    const patch = new patches.Patch();
    storage.store({ body, patch, essence: storage.build({ body }) });
    const stored = diffbase.decodeEssence(patch.getAt(['metadata', 'annotations', LHC]));
    expect(stored).toEqual({
      spec: { field: 'value' },
      metadata: { annotations: { huge: marker(JSON.stringify(huge)), small: 'yes' } },
    });
    expect(annotationBytes(body, patch)).toBeLessThanOrEqual(bounds.ANNOTATIONS_LIMIT);
    expect(bounds.takeNotes(patch)).toEqual([
      "the diff-base would exceed the API server's limit of 262144 bytes for all annotations of an object, so it is stored with 1 value as sha-256 digests (metadata.annotations.huge).",
    ]);
    expect(bounds.takeNotes(patch)).toEqual([]); // taken once
  });

  it('R-STORAGE-16 digests are aligned before comparing: an unchanged large value compares equal, a changed one as a changed digest', () => {
    const storage = new diffbase.AnnotationsDiffBaseStorage();
    const body = objectWith({ huge: 'h'.repeat(200 * KIB) });
    const patch = new patches.Patch();
    storage.store({ body, patch, essence: storage.build({ body }) });
    // What a restarted operator reads back from the object.
    const written = objectWith({ huge: 'h'.repeat(200 * KIB), [LHC]: patch.getAt(['metadata', 'annotations', LHC]) as string });
    const stored = storage.fetch({ body: written });
    expect(bounds.alignDigests(storage.build({ body: written }), stored)).toEqual(stored);

    const changed = objectWith({ huge: 'H'.repeat(200 * KIB), [LHC]: patch.getAt(['metadata', 'annotations', LHC]) as string }, { field: 'other' });
    const aligned = bounds.alignDigests(storage.build({ body: changed }), stored);
    expect(aligned).toEqual({ spec: { field: 'other' }, metadata: { annotations: { huge: marker(JSON.stringify('H'.repeat(200 * KIB))) } } });
    // Nothing to align without digests: the very same essence comes back.
    const plain = storage.build({ body: objectWith({ a: 'b' }) });
    expect(bounds.alignDigests(plain, plain)).toBe(plain);
  });

  it('R-STORAGE-16 digests do not depend on the order of keys', () => {
    expect(bounds.digestOf({ a: 1, b: [{ c: 2, d: 3 }] })).toBe(bounds.digestOf({ b: [{ d: 3, c: 2 }], a: 1 }));
    expect(bounds.digestOf({ a: 1 })).toBe(marker('{"a":1}'));
    expect(bounds.isDigest(bounds.digestOf('x'))).toBe(true);
    expect(bounds.isDigest('sha256:0123')).toBe(false);
  });

  it('R-STORAGE-16 many small values are digested together, at the level that holds them', () => {
    const storage = new diffbase.AnnotationsDiffBaseStorage();
    const spec = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`key-${i}`, 'v'.repeat(10)]));
    const body = objectWith({ filler: 'f'.repeat(150 * KIB) }, spec);
    const patch = new patches.Patch();
    storage.store({ body, patch, essence: storage.build({ body }) });
    const stored = diffbase.decodeEssence(patch.getAt(['metadata', 'annotations', LHC]))!;
    expect(bounds.isDigest((stored['metadata'] as { annotations: Record<string, unknown> }).annotations['filler'])).toBe(true);
    expect(bounds.isDigest(stored['spec'])).toBe(true);
    expect(annotationBytes(body, patch)).toBeLessThanOrEqual(bounds.ANNOTATIONS_LIMIT);
  });

  it('R-STORAGE-16 a diff-base that does not fit even as digests is not written, and the note says so', () => {
    const storage = new diffbase.AnnotationsDiffBaseStorage();
    const body = objectWith({ full: 'f'.repeat(bounds.ANNOTATIONS_LIMIT - 100) });
    const patch = new patches.Patch();
    storage.store({ body, patch, essence: storage.build({ body }) });
    expect(patch.toMergePatch()).toEqual({});
    expect(bounds.takeNotes(patch)).toEqual([
      "the diff-base would exceed the API server's limit of 262144 bytes for all annotations of an object even with its values as digests, so it is not stored (kept in memory).",
    ]);
    expect(bounds.isUnstored(patch)).toBe(true);
  });

  it('R-STORAGE-16 annotations already in the patch count, and keys the patch removes do not', () => {
    const storage = new diffbase.AnnotationsDiffBaseStorage();
    const body = objectWith({ old: 'o'.repeat(200 * KIB) });
    const removing = new patches.Patch();
    removing.setAt(['metadata', 'annotations', 'old'], null);
    storage.store({ body, patch: removing, essence: storage.build({ body }) });
    expect(bounds.takeNotes(removing)).toEqual([]);
    const adding = new patches.Patch();
    adding.setAt(['metadata', 'annotations', 'new'], 'n'.repeat(60 * KIB));
    storage.store({ body: objectWith({}), patch: adding, essence: storage.build({ body }) });
    expect(bounds.takeNotes(adding)).toHaveLength(1);
  });

  it('R-STORAGE-16 a status diff-base is bounded by the size of the whole object', () => {
    const storage = new diffbase.StatusDiffBaseStorage();
    const body = objectWith({}, { data: 'd'.repeat(800 * KIB) });
    const patch = new patches.Patch();
    storage.store({ body, patch, essence: storage.build({ body }) });
    const stored = diffbase.decodeEssence(patch.getAt(['status', 'kopf', 'last-handled-configuration']));
    expect(stored).toEqual({ spec: { data: marker(JSON.stringify('d'.repeat(800 * KIB))) } });
    expect(bounds.takeNotes(patch)[0]).toContain("the runtime's bound of 1310720 bytes for a whole object");
  });
});

describe('size-bounded progress records', () => {
  const record: progress.ProgressRecord = { started: '2024-05-01T10:00:00.000000+00:00', purpose: 'create', retries: 1, success: false, failure: false };

  it('R-STORAGE-16 a record that fits is stored as it is, long message and all', () => {
    const storage = new progress.AnnotationsProgressStorage();
    const body = objectWith({});
    const patch = new patches.Patch();
    const message = 'm'.repeat(50 * KIB);
    storage.store({ key: 'create_fn', record: { ...record, message }, body, patch });
    expect(patch.getAt(['metadata', 'annotations', 'kopf.zalando.org/create_fn'])).toBe(progress.encodeRecord({ ...record, message }));
    expect(bounds.takeNotes(patch)).toEqual([]);
  });

  it('R-STORAGE-16 a message too long for the room left is truncated to fit, with a marker of its length', () => {
    const storage = new progress.AnnotationsProgressStorage();
    const body = objectWith({ huge: 'h'.repeat(200 * KIB) });
    const patch = new patches.Patch();
    const message = 'm'.repeat(100 * KIB);
    storage.store({ key: 'create_fn', record: { ...record, message }, body, patch });
    const written = progress.decodeRecord(patch.getAt(['metadata', 'annotations', 'kopf.zalando.org/create_fn']))!;
    expect(written).toMatchObject(record);
    expect(written.message).toMatch(/^m+… \[truncated from 102400 bytes\]$/);
    // The longest that fits with the touch-dummy that a delayed handler's next patch writes: one more character would not.
    expect(annotationBytes(body, patch) + TOUCH_BYTES).toBeLessThanOrEqual(bounds.ANNOTATIONS_LIMIT);
    expect(annotationBytes(body, patch) + TOUCH_BYTES).toBeGreaterThan(bounds.ANNOTATIONS_LIMIT - 2);
    expect(bounds.takeNotes(patch)).toEqual([
      `the progress record of 'create_fn' would exceed the API server's limit of 262144 bytes for all annotations of an object, so its message is truncated to ${written.message!.indexOf('…')} characters.`,
    ]);
  });

  it('R-STORAGE-17 R-STORAGE-7 a handler id longer than 46 characters: the record counts at both its V2 and V1 keys', () => {
    const storage = new progress.AnnotationsProgressStorage();
    const body = objectWith({ huge: 'h'.repeat(150 * KIB) });
    const patch = new patches.Patch();
    const key = 'x'.repeat(47);
    storage.store({ key, record: { ...record, message: 'm'.repeat(300 * KIB) }, body, patch });
    const written = patch.getAt(['metadata', 'annotations']) as Record<string, string>;
    const [v2, v1] = conventions.keysFor(conventions.DEFAULT_PREFIX, key, { v1: true });
    expect(v1).toMatch(/^kopf\.zalando\.org\/x+-[\w.-]+$/); // cut to 63 characters, with a hash
    expect(Object.keys(written)).toEqual([v2, v1]);
    expect(new Set(Object.values(written)).size).toBe(1); // the same bytes at both keys, as Kopf writes them
    expect(annotationBytes(body, patch) + TOUCH_BYTES).toBeLessThanOrEqual(bounds.ANNOTATIONS_LIMIT);
    expect(annotationBytes(body, patch) + TOUCH_BYTES).toBeGreaterThan(bounds.ANNOTATIONS_LIMIT - 3);
  });

  it('R-STORAGE-17 R-STORAGE-11 the ownership marker of a custom prefix and the touch-dummy at its key are counted, whatever they hold now', () => {
    const storage = new progress.AnnotationsProgressStorage({ prefix: 'my-operator.example.com' });
    const touch = 'my-operator.example.com/touch-dummy';
    // A touch-dummy shorter than a timestamp counts as the timestamp the next touch writes.
    const body = objectWith({ huge: 'h'.repeat(200 * KIB), [touch]: '' });
    const patch = new patches.Patch();
    storage.store({ key: 'create_fn', record: { ...record, message: 'm'.repeat(100 * KIB) }, body, patch });
    const marker = patch.getAt(['metadata', 'annotations', 'my-operator.example.com/kopf-managed']);
    expect(marker).toBe('yes');
    const after = annotationBytes(body, patch) + TOUCH_VALUE_BYTES; // the touch-dummy, once it holds a timestamp
    expect(after).toBeLessThanOrEqual(bounds.ANNOTATIONS_LIMIT);
    expect(after).toBeGreaterThan(bounds.ANNOTATIONS_LIMIT - 2);
  });

  it('R-STORAGE-17 R-STORAGE-11 a diff-base of a custom prefix leaves room for its ownership marker', () => {
    const storage = new diffbase.AnnotationsDiffBaseStorage({ prefix: 'my-operator.example.com' });
    const body = objectWith({ huge: 'h'.repeat(200 * KIB) });
    const patch = new patches.Patch();
    storage.store({ body, patch, essence: storage.build({ body }) });
    expect(patch.getAt(['metadata', 'annotations', 'my-operator.example.com/kopf-managed'])).toBe('yes');
    expect(annotationBytes(body, patch)).toBeLessThanOrEqual(bounds.ANNOTATIONS_LIMIT);
    // The room left for a diff-base exactly as large as the room, marker included.
    const room = bounds.annotationsRoom(body, new patches.Patch(), ['my-operator.example.com/last-handled-configuration'], {
      'my-operator.example.com/kopf-managed': 'yes',
    });
    const left = bounds.ANNOTATIONS_LIMIT - annotationBytes(body, new patches.Patch()) - 'my-operator.example.com/last-handled-configuration'.length;
    expect(room('v'.repeat(left))).toBe('annotations');
    expect(room('v'.repeat(left - 'my-operator.example.com/kopf-managed'.length - 3))).toBeNull();
  });

  it('R-STORAGE-16 status records are bounded by the size of the whole object', () => {
    const storage = new progress.StatusProgressStorage();
    const body = objectWith({}, { data: 'd'.repeat(1200 * KIB) });
    const patch = new patches.Patch();
    storage.store({ key: 'create_fn', record: { ...record, message: 'm'.repeat(200 * KIB) }, body, patch });
    const written = patch.getAt(['status', 'kopf', 'progress', 'create_fn']) as { message: string };
    expect(written.message).toMatch(/… \[truncated from 204800 bytes\]$/);
    expect(bounds.takeNotes(patch)).toHaveLength(1);
  });
});
