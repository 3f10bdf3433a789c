/**
 * Open watches across a change of their CRD (D-CRD-501): a watch keeps the served types it was
 * opened with, so a change of the CRD's spec ends it (its client watches again and gets the new
 * types, e.g. a conversion webhook's new address), while a change of the CRD's status alone leaves
 * it open. Proven over HTTP: the watch still delivers an object created after the status change,
 * and then ends by itself when the spec changes (a watch that never ends fails on its timeout).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWatch, startHarness, WIDGETS, type Harness } from '../conformance/harness.js';

const CRD = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com';

describe('watches across a change of their CRD', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.stop();
  });

  it('D-CRD-501 a status-only change of the CRD leaves the watch open; a spec change ends it', async () => {
    const watched = await readWatch(`${h.cluster.url}${WIDGETS}?watch=true`, {
      timeoutMs: 20_000,
      onOpen: async () => {
        const status = await h.patch(`${CRD}/status`, { status: { storedVersions: ['v1'], conditions: [] } });
        expect(status.status, status.text).toBe(200);
        await h.cluster.settle();
        await h.widget('after-status');
        const spec = await h.patch(CRD, { spec: { names: { shortNames: ['wdg'] } } });
        expect(spec.status, spec.text).toBe(200);
        await h.cluster.settle();
      },
    });
    expect(watched.status).toBe(200);
    expect(watched.events.map((e) => [e['type'], e['object']['metadata']?.['name']])).toEqual([['ADDED', 'after-status']]);
    expect(watched.ended).toBe(true);
  });
});
