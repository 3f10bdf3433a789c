/**
 * Consistency after the operator's own patches (R-QUEUE-3/4, A-31): a foreign change that happened
 * while a handler ran arrives after our PATCH but without our progress records; the operator must
 * not run the finished handler again on it, and must go on as soon as its own version arrives.
 */
import { describe, expect, it } from 'vitest';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

describe('consistency of the operator’s own patches', () => {
  const suite = fx.clusterPerTest();
  const { logs } = suite;

  it('R-QUEUE-4 A-31 a foreign change made during a handler does not re-run it; the next handler runs when our own version arrives', async () => {
    const registry = new OperatorRegistry();
    const gate = fx.deferred();
    const calls: string[] = [];
    const times: Record<string, number> = {};
    on.create('kopfexamples', { registry }, async function create_a() {
      calls.push('A');
      await gate.promise;
    });
    on.create('kopfexamples', { registry }, function create_b() {
      calls.push('B');
      times['B'] = Date.now();
    });
    const settings = fx.fastSettings((s) => {
      s.persistence.consistencyTimeout = 3;
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry, settings });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => calls.length === 1, 'A running');
    // A foreign change while A runs: its event (rv 2) comes after our patch (rv 3) is sent, and
    // it lacks A's record.
    const foreign = await suite.cluster.store.patch(fx.KEX, 'kopf-example-1', { metadata: { labels: { foreign: 'change' } } }, { namespace: 'default' });
    const released = Date.now();
    gate.resolve();
    await fx.eventually(() => calls.length === 2, 'B');
    await fx.atRest(logs, 'kopf-example-1');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(calls).toEqual(['A', 'B']);
    expect(times['B']! - released).toBeLessThan(2000); // not after the 3 s consistency timeout
    const patches = suite.cluster.requests.filter((r) => r.method === 'PATCH' && r.name === 'kopf-example-1' && r.subresource === undefined);
    const first = JSON.parse(patches[0]!.body!) as { metadata: { annotations: Record<string, string> } };
    expect(JSON.parse(first.metadata.annotations['kopf.zalando.org/create_a']!)).toMatchObject({ success: true });
    // Our patch went on top of the foreign change (so the foreign event is older than ours).
    const rvs = suite.cluster.watchEvents.filter((e) => e.type === 'MODIFIED').map((e) => Number(e.rv));
    expect(rvs).toContain(Number((foreign['metadata'] as { resourceVersion: string }).resourceVersion));
    expect(logs.grep("Handler 'create_a' succeeded.")).toHaveLength(1);
    expect(logs.grep("Handler 'create_b' succeeded.")).toHaveLength(1);
    expect(logs.grep('Creation is processed: 2 succeeded; 0 failed.')).toHaveLength(1);
  });
});
