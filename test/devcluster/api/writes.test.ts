import { describe, expect, it } from 'vitest';
import * as objects from '../../../devcluster/api/objects.js';
import * as writes from '../../../devcluster/api/writes.js';
import * as json from '../../../devcluster/json.js';

type Obj = json.JsonObject;

/** D-META-3 as stated: equal once resourceVersion and the managedFields times are left out. */
function reference(a: Obj, b: Obj): boolean {
  const strip = (o: Obj): Obj => {
    const meta: Obj = { ...objects.metaOf(o) };
    delete meta['resourceVersion'];
    if (Array.isArray(meta['managedFields'])) meta['managedFields'] = (meta['managedFields'] as Obj[]).map(({ time: _t, ...rest }) => rest);
    return { ...o, metadata: meta };
  };
  return json.deepEqual(strip(a), strip(b));
}

const entry = (manager: string, time: string): Obj => ({
  manager,
  operation: 'Update',
  apiVersion: 'v1',
  time,
  fieldsType: 'FieldsV1',
  fieldsV1: { 'f:data': {} },
});
const base: Obj = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'x', namespace: 'd', uid: 'u', resourceVersion: '5', labels: { a: '1' }, managedFields: [entry('m', 't1')] },
  data: { k: 'v' },
};
const withMeta = (changes: Obj): Obj => ({ ...base, metadata: { ...(base['metadata'] as Obj), ...changes } });

const CASES: [string, Obj][] = [
  ['the same object', base],
  ['another resourceVersion', withMeta({ resourceVersion: '9' })],
  ['other managedFields times', withMeta({ managedFields: [entry('m', 't2')] })],
  ['another manager', withMeta({ managedFields: [entry('n', 't1')] })],
  ['one more managedFields entry', withMeta({ managedFields: [entry('m', 't1'), entry('n', 't1')] })],
  ['no managedFields', withMeta({ managedFields: undefined })],
  ['empty managedFields', withMeta({ managedFields: [] })],
  ['other labels', withMeta({ labels: { a: '2' } })],
  ['an undefined member', withMeta({ annotations: undefined })],
  ['other data', { ...base, data: { k: 'w' } }],
  ['an extra member', { ...base, extra: 1 }],
  ['an undefined top-level member', { ...base, extra: undefined }],
  ['no metadata', { apiVersion: 'v1', kind: 'ConfigMap', data: { k: 'v' } }],
  ['metadata that is not an object', { ...base, metadata: 'x' }],
];

describe('sameState', () => {
  for (const [name, other] of CASES) {
    it(`D-META-3 compares ${name} like the stated rule`, () => {
      expect(writes.sameState(base, other)).toBe(reference(base, other));
      expect(writes.sameState(other, base)).toBe(reference(other, base));
    });
  }

  it('D-META-3 a write that changes only resourceVersion and managedFields times is no change', () => {
    expect(writes.sameState(base, withMeta({ resourceVersion: '6', managedFields: [entry('m', 't9')] }))).toBe(true);
    expect(writes.sameState(base, { ...base, data: { k: 'other' } })).toBe(false);
  });
});
