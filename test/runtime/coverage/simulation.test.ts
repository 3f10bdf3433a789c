/**
 * R-TEST-2, the simulation harness: the "API" behind the unit-level scenarios is the devcluster
 * over loopback HTTP, reached through the runtime's real client, with a controllable clock
 * (`VirtualClock` through the operator's `clock` option) and faults injected with the devcluster's
 * controls. Events are fed by writing objects; the processing of one object is asserted through the
 * request log. Here: trace 4.4 (a temporary error with `delay: 60`) runs in well under a second.
 */
import { describe, expect, it } from 'vitest';

import * as clocks from '../../../runtime/cogs/aio/clocks.js';
import { TemporaryError } from '../../../runtime/core/actions/errors.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as running from '../../../runtime/core/reactor/running.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';
import { advanceUntilSettled } from '../../support/waiting.js';

type Json = Record<string, unknown>;
const LHC = 'kopf.zalando.org/last-handled-configuration';

describe('the simulation harness', () => {
  const suite = fx.clusterPerTest();
  const { logs } = suite;

  it('R-TEST-2 one object processed by a real operator over loopback HTTP, with a virtual clock and an injected fault', async () => {
    const clock = new clocks.VirtualClock({ start: Date.parse('2030-01-01T00:00:00Z') });
    const registry = new OperatorRegistry();
    const calls: { retry: number; at: number }[] = [];
    on.login({ registry }, function login_fn() {
      return { server: suite.cluster.url, token: suite.cluster.token };
    });
    on.create('kopfexamples', { registry }, function create_fn({ retry }: { retry: number }) {
      calls.push({ retry, at: clock.now() });
      if (retry === 0) throw new TemporaryError('not yet', { delay: 60 });
      return { message: 'done' };
    });
    const settings = fx.fastSettings((s) => {
      s.networking.errorBackoffs = [];
    });
    const stop = new AbortController();
    const realStart = Date.now();
    const done = running.operator({ registry, settings, clock, clusterwide: true, standalone: true, stopFlag: stop.signal });
    await fx.eventually(() => fx.watchRequests(suite.cluster).length > 0, 'the watch');

    // A fault of the devcluster: the status write (of the final cycle) is stored, but its
    // connection breaks before the response; the runtime re-reads the object, finds the result
    // stored, and goes on without resending it (R-PATCH-9).
    suite.cluster.faults.add({ method: 'PATCH', resource: 'kopfexamples', subresource: 'status', times: 1, action: { reset: 'after' } });
    const since = suite.cluster.requests.all.length;
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => logs.grep('Sleeping for 60 seconds for the delayed handlers.').length > 0, 'the sleep');
    expect(calls).toEqual([{ retry: 0, at: Date.parse('2030-01-01T00:00:00Z') }]);
    await clock.advance(60_000);
    await fx.eventually(() => fx.annotationsOf(suite.cluster, 'kopf-example-1')[LHC] !== undefined, 'the diff-base');
    await fx.atRest(logs, 'kopf-example-1');
    stop.abort();
    // The graceful stop sleeps on the operator's clock as well: keep virtual time going until it is over.
    await advanceUntilSettled(clock, done, { pauseMs: 20 });

    expect(Date.now() - realStart).toBeLessThan(5_000);
    expect(calls.map((c) => c.retry)).toEqual([0, 1]);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(60_000);
    // The wire sequence of trace 4.4, from the request log.
    const patches = suite.cluster.requests.all
      .slice(since)
      .filter((r) => r.method === 'PATCH' && r.name === 'kopf-example-1')
      .map((r) => ({ sub: r.subresource, code: r.code, body: JSON.parse(r.body!) as { metadata?: { annotations?: Json } } }));
    const annotations = patches.map((p) => Object.keys(p.body.metadata?.annotations ?? {}).sort());
    expect(annotations[0]).toEqual(['kopf.zalando.org/create_fn']);
    expect(JSON.parse(String(patches[0]!.body.metadata!.annotations!['kopf.zalando.org/create_fn']))).toMatchObject({
      retries: 1,
      delayed: '2030-01-01T00:01:00.000000+00:00',
    });
    expect(annotations[1]).toEqual(['kopf.zalando.org/touch-dummy']);
    expect(patches[1]!.body.metadata!.annotations!['kopf.zalando.org/touch-dummy']).toBe('2030-01-01T00:01:00.000000+00:00');
    // The final cycle: the status (the result) first, then the object (progress purged, diff-base).
    expect(patches.slice(2, 4).map((p) => [p.sub, p.code])).toEqual([
      ['status', 0],
      [undefined, 200],
    ]);
    expect(annotations[3]).toEqual(['kopf.zalando.org/create_fn', 'kopf.zalando.org/touch-dummy', LHC].sort());
    expect(logs.grep('failed, but what it writes is stored; not sending it again')).toHaveLength(1);
    expect((suite.cluster.store.get(fx.KEX, 'kopf-example-1', 'default') as Json)['status']).toEqual({ create_fn: { message: 'done' } });
  });
});
