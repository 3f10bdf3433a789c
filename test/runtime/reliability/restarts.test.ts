/**
 * Operator restarts in the middle of handling (R-ERRORS-8, R-STORAGE-4, R-HANDLERS-4): stopping
 * the operator while handlers await cancels them with the documented warning and records nothing
 * for them; a restarted operator resumes from the stored progress, so that every create handler
 * succeeds exactly once per object.
 */
import { describe, expect, it } from 'vitest';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

const COUNT = 20;
const names = Array.from({ length: COUNT }, (_, i) => `kex-${String(i).padStart(2, '0')}`);

describe('operator stopped mid-handler and restarted', () => {
  const suite = fx.clusterPerTest();
  const { logs } = suite;

  it('R-ERRORS-8 R-QUEUE-7 R-STORAGE-4 every create handler succeeds exactly once per object across a stop mid-handler and a restart', async () => {
    const registry = new OperatorRegistry();
    const invokedA: string[] = [];
    const succeededA: string[] = [];
    const invokedB: string[] = [];
    const succeededB: string[] = [];
    const retriesB: number[] = [];
    let gate = fx.deferred();
    on.create('kopfexamples', { registry }, function create_a({ name }: { name: string }) {
      invokedA.push(name);
      succeededA.push(name);
      return { a: 'done' };
    });
    on.create('kopfexamples', { registry }, async function create_b({ name, retry }: { name: string; retry: number }) {
      invokedB.push(name);
      retriesB.push(retry);
      await gate.promise;
      succeededB.push(name);
      return { b: 'done' };
    });

    const first = await fx.startOperator({ cluster: suite.cluster, registry });
    for (const name of names) await suite.cluster.store.create(fx.kopfExample(name));
    await fx.eventually(() => invokedB.length === COUNT, 'create_b awaiting for every object');
    const stopping = Date.now();
    await first.stop();

    expect(first.error).toBeUndefined();
    // R-QUEUE-7: the watcher gives its workers `exitTimeout` (0.5 s here), then cancels them.
    expect(Date.now() - stopping).toBeLessThan(3000);
    expect(logs.grep('Unprocessed streams left for [', fx.WARNING)).toHaveLength(1);
    expect(logs.grep('are not stopped in')).toEqual([]);
    expect(fx.tally(succeededA)).toEqual(Object.fromEntries(names.map((n) => [n, 1])));
    expect(succeededB).toEqual([]);
    expect(logs.grep("Handler 'create_b' is cancelled. Will escalate.", fx.WARNING).sort()).toEqual(
      names.map((n) => `[default/${n}] Handler 'create_b' is cancelled. Will escalate.`),
    );
    expect(logs.grep('unrecoverable')).toEqual([]);
    expect(logs.grep('Throttling')).toEqual([]);
    // Nothing was recorded for the cancelled invocation: create_b's record is as stored before it.
    for (const name of names) {
      const annotations = fx.annotationsOf(suite.cluster, name);
      expect(JSON.parse(annotations['kopf.zalando.org/create_a']!)).toMatchObject({ success: true, retries: 1 });
      expect(JSON.parse(annotations['kopf.zalando.org/create_b']!)).toMatchObject({ success: false, failure: false, retries: 0, purpose: 'create' });
      expect(annotations['kopf.zalando.org/last-handled-configuration']).toBeUndefined();
    }

    // Restart: the handlers are released this time.
    gate = fx.deferred();
    gate.resolve();
    logs.clear();
    const second = await fx.startOperator({ cluster: suite.cluster, registry });
    await fx.eventually(() => logs.grep('Creation is processed: 2 succeeded; 0 failed.').length === COUNT, 'all objects processed', 20_000);
    for (const name of names) await fx.atRest(logs, name);
    await second.stop();

    expect(second.error).toBeUndefined();
    expect(fx.tally(succeededA)).toEqual(Object.fromEntries(names.map((n) => [n, 1])));
    expect(fx.tally(succeededB)).toEqual(Object.fromEntries(names.map((n) => [n, 1])));
    expect(fx.tally(invokedB)).toEqual(Object.fromEntries(names.map((n) => [n, 2])));
    // The cancelled attempt did not count as a retry (nothing was recorded for it).
    expect(retriesB).toEqual(new Array(2 * COUNT).fill(0));
    for (const name of names) {
      const body = suite.cluster.store.get(fx.KEX, name, 'default') as { metadata: { annotations: Record<string, string> }; status: Record<string, unknown> };
      expect(body.metadata.annotations['kopf.zalando.org/create_a']).toBeUndefined();
      expect(body.metadata.annotations['kopf.zalando.org/create_b']).toBeUndefined();
      expect(body.metadata.annotations['kopf.zalando.org/last-handled-configuration']).toBeDefined();
      expect(body.status).toEqual({ create_a: { a: 'done' }, create_b: { b: 'done' } });
    }
  });
});
