/**
 * The shared contract of every progress storage (R-STORAGE-8/9/13): each implementation runs this
 * suite with one line. Bodies are "patched" by applying the storage's merge-patch, as the API would.
 */
import { describe, expect, it } from 'vitest';

import type * as progress from '../../../../runtime/cogs/configs/progress.js';
import * as jsonpatches from '../../../../runtime/cogs/structs/jsonpatches.js';
import * as patches from '../../../../runtime/cogs/structs/patches.js';

const RECORD: progress.ProgressRecord = {
  started: '2024-05-01T10:00:00.123456+00:00',
  purpose: 'create',
  retries: 1,
  success: false,
  failure: false,
  message: 'Not ready yet.',
  delayed: '2024-05-01T10:01:00.123456+00:00',
  stopped: null,
};
const CLEAN = {
  started: '2024-05-01T10:00:00.123456+00:00',
  delayed: '2024-05-01T10:01:00.123456+00:00',
  purpose: 'create',
  retries: 1,
  success: false,
  failure: false,
  message: 'Not ready yet.',
};

function apply(body: unknown, patch: patches.PatchBase<object>): Record<string, unknown> {
  return jsonpatches.applyMergePatch(body, patch.toMergePatch()) as Record<string, unknown>;
}

export function runProgressContract(name: string, make: () => progress.ProgressStorage): void {
  describe(`${name} (progress storage contract)`, () => {
    const base = { metadata: { name: 'obj' }, spec: { a: 1 } };

    it('R-STORAGE-13 fetching from an object without records gives null', async () => {
      expect(await make().fetch({ key: 'create_fn', body: base })).toBeNull();
    });

    it('R-STORAGE-4 a stored record comes back from the patched object without nulls', async () => {
      const storage = make();
      const patch = new patches.Patch();
      await storage.store({ key: 'create_fn', record: RECORD, body: base, patch });
      expect(patch.isEmpty()).toBe(false);
      const body = apply(base, patch);
      expect(await storage.fetch({ key: 'create_fn', body })).toEqual(CLEAN);
      expect(await storage.fetch({ key: 'other_fn', body })).toBeNull();
    });

    it('R-STORAGE-9 storing the record the object already has writes nothing', async () => {
      const storage = make();
      const first = new patches.Patch();
      await storage.store({ key: 'create_fn', record: RECORD, body: base, patch: first });
      const body = apply(base, first);
      const second = new patches.Patch();
      await storage.store({ key: 'create_fn', record: { ...CLEAN, subrefs: null }, body, patch: second });
      expect(second.isEmpty()).toBe(true);
      await storage.store({ key: 'create_fn', record: { ...CLEAN, retries: 2 }, body, patch: second });
      expect(second.isEmpty()).toBe(false);
    });

    it('R-STORAGE-8 purging a record present on the object removes it there', async () => {
      const storage = make();
      const first = new patches.Patch();
      await storage.store({ key: 'create_fn', record: RECORD, body: base, patch: first });
      await storage.store({ key: 'other_fn', record: RECORD, body: base, patch: first });
      const body = apply(base, first);
      const second = new patches.Patch();
      await storage.purge({ key: 'create_fn', body, patch: second });
      expect(second.isEmpty()).toBe(false);
      const purged = apply(body, second);
      expect(await storage.fetch({ key: 'create_fn', body: purged })).toBeNull();
      expect(await storage.fetch({ key: 'other_fn', body: purged })).toEqual(CLEAN);
    });

    it('R-STORAGE-8 purging a record only in the pending patch drops it from the patch', async () => {
      const storage = make();
      const patch = new patches.Patch();
      await storage.store({ key: 'create_fn', record: RECORD, body: base, patch });
      await storage.purge({ key: 'create_fn', body: base, patch });
      expect(JSON.stringify(patch.toMergePatch())).not.toMatch(/create_fn|null/);
      expect(await storage.fetch({ key: 'create_fn', body: apply(base, patch) })).toBeNull();
      const untouched = new patches.Patch();
      await storage.purge({ key: 'never_stored', body: base, patch: untouched });
      expect(untouched.isEmpty()).toBe(true);
    });

    it('R-STORAGE-10 touching writes a differing value once and clears only what exists', async () => {
      const storage = make();
      const patch = new patches.Patch();
      storage.touch({ body: base, patch, value: null });
      expect(patch.isEmpty()).toBe(true);
      storage.touch({ body: base, patch, value: '2024-05-01T10:00:00.000000+00:00' });
      const body = apply(base, patch);
      const again = new patches.Patch();
      storage.touch({ body, patch: again, value: '2024-05-01T10:00:00.000000+00:00' });
      expect(again.isEmpty()).toBe(true);
    });

    it("R-ESSENCE-1 clearing removes the storage's own traces and the stanzas they leave empty", async () => {
      const storage = make();
      const patch = new patches.Patch();
      await storage.store({ key: 'create_fn', record: RECORD, body: base, patch });
      const essence = { spec: { a: 1 }, metadata: { labels: { l: 'v' } } };
      const polluted = apply(essence, patch);
      expect(storage.clear(polluted as never)).toEqual(essence);
      expect(storage.clear({ spec: { a: 1 } })).toEqual({ spec: { a: 1 } });
    });

    it('R-STORAGE-13 flush is harmless', async () => {
      await expect(Promise.resolve(make().flush())).resolves.toBeUndefined();
    });
  });
}
