/**
 * A handler whose id is longer than Kopf's V1 key form allows (46 characters after the default
 * prefix) has its progress record stored under two annotation keys, V2 and V1 (R-STORAGE-7). At
 * the real API server's limit of 262144 bytes of annotations, the bound of the record must count
 * both, and the annotations written beside it later (the touch-dummy that wakes the delayed
 * handler), or the server refuses the write and the object is stuck (R-STORAGE-16, R-STORAGE-17).
 */
import { describe, expect, it } from 'vitest';
import * as clocks from '../../../runtime/cogs/aio/clocks.js';
import * as bounds from '../../../runtime/cogs/configs/bounds.js';
import * as conventions from '../../../runtime/cogs/configs/conventions.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

const LHC = 'kopf.zalando.org/last-handled-configuration';
const TOUCH = 'kopf.zalando.org/touch-dummy';
/** 63 characters: its V1 key is cut and hashed, its V2 key is not. */
const LONG_ID = 'reconcile_the_very_long_named_handler_of_this_example_resource';

/** The byte lengths of all keys and values of annotations, summed, as the API server counts them. */
function annotationBytes(annotations: Record<string, string>): number {
  return Object.entries(annotations).reduce((sum, [key, value]) => sum + Buffer.byteLength(key) + Buffer.byteLength(value), 0);
}

describe('long handler ids at the annotations limit', () => {
  const suite = fx.clusterPerTest();
  const { logs } = suite;

  it('R-STORAGE-17 R-STORAGE-7 a record under both key forms fills the annotations to the real limit with the touch-dummy, and the handler retries and completes', async () => {
    const [v2, v1] = conventions.keysFor(conventions.DEFAULT_PREFIX, LONG_ID, { v1: true });
    expect(v2).toBe(`kopf.zalando.org/${LONG_ID}`);
    expect(v1).toBe('kopf.zalando.org/reconcile_the_very_long_named_handler_o-2HIKGA');

    const registry = new OperatorRegistry();
    const seen: Record<string, string>[] = [];
    on.create('kopfexamples', { registry, id: LONG_ID, backoff: 60 }, ({ body }) => {
      seen.push({ ...(body.metadata?.annotations as Record<string, string>) });
      if (seen.length === 1) throw new Error('e'.repeat(300 * 1024));
    });
    const clock = new clocks.VirtualClock({ start: Date.now() });
    const op = await fx.startOperator({ cluster: suite.cluster, registry, clock });
    const refused = () => suite.cluster.requests.filter((r) => r.method === 'PATCH' && r.code !== 200);

    await suite.cluster.store.create(fx.kopfExample('kex-long', { metadata: { annotations: { huge: 'h'.repeat(150 * 1024) } } }));
    // The failure is stored; the next cycle sleeps for the back-off, then touches the object.
    await fx.eventually(() => refused().length > 0 || logs.grep('[default/kex-long] Sleeping for', fx.DEBUG).length > 0, 'the sleep of the back-off');
    await clock.advance(60_000);
    await fx.eventually(() => refused().length > 0 || fx.annotationsOf(suite.cluster, 'kex-long')[LHC] !== undefined, 'the retried handler to succeed');
    const stuck = refused().map((r) => `${r.code} ${r.body?.slice(0, 100)}`);
    if (stuck.length === 0) await fx.atRest(logs, 'kex-long');
    await op.stop();

    expect(stuck).toEqual([]); // every write was accepted by the server
    expect(op.error).toBeUndefined();
    expect(seen).toHaveLength(2);
    // What the retry saw: the record at both keys, byte-identical, truncated just enough for the touch-dummy.
    const annotations = seen[1]!;
    expect(Object.keys(annotations).sort()).toEqual([TOUCH, v1, v2, 'huge'].sort());
    expect(annotations[v1]).toBe(annotations[v2]);
    expect(JSON.parse(annotations[v2]!)).toMatchObject({ purpose: 'create', retries: 1, success: false, failure: false });
    expect(JSON.parse(annotations[v2]!).message).toMatch(/^e+… \[truncated from 307200 bytes\]$/);
    expect(annotationBytes(annotations)).toBeLessThanOrEqual(bounds.ANNOTATIONS_LIMIT);
    expect(annotationBytes(annotations)).toBeGreaterThan(bounds.ANNOTATIONS_LIMIT - 16);
    // Done: the records and the touch-dummy are gone, the diff-base is stored.
    expect(Object.keys(fx.annotationsOf(suite.cluster, 'kex-long')).sort()).toEqual(['huge', LHC]);
    expect(logs.lines(fx.WARNING)).toEqual([
      `[default/kex-long] The operator's state does not fit this object as it is. The progress record of '${LONG_ID}' would exceed the API server's limit of 262144 bytes for all annotations of an object, so its message is truncated to ${JSON.parse(annotations[v2]!).message.indexOf('…')} characters. (Logged once per object.)`,
    ]);
  });
});
