/**
 * Scenarios A-14 (daemons, the original's `14-daemons`) and the cluster part of A-16 (a daemon
 * exiting on its own, spawned again by the next operator process); A-15 and the simulation part
 * of A-16 are in `test/runtime/core/engines/`.
 *
 * A-14 runs in real time, with the example's own durations (three one-second retry delays, one
 * second of grace and half a second after the abort for `background_async`): nothing is shortened,
 * so the whole scenario takes about five seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import { Calls } from '../../../fixtures/operators/calls.js';
import * as a14 from '../../../fixtures/operators/a14-daemons.js';
import * as a16 from '../../../fixtures/operators/a16-exiting-daemon.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as h from '../../support/scenarios.js';

type Json = Record<string, unknown>;

describe('daemons', () => {
  let cluster: DevCluster;

  beforeAll(async () => {
    cluster = await h.startCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('A-14 two daemons retry, ping, and on deletion stop in their stages; the finalizer goes only after both exited', async () => {
    const calls = new Calls();
    const op = await h.startOperator(cluster, { registry: a14.register(new OperatorRegistry(), calls) });
    const since = cluster.requests.all.length;
    await h.apply(cluster, h.referenceObject());
    await op.output.waitFor('Adding the finalizer, thus preventing the actual deletion.');
    await op.output.waitFor('=> Ping from a sync daemon: field=value, retry=3');
    await op.output.waitFor('=> Ping from an async daemon: field=value');
    expect(h.finalizersOf(h.getObject(cluster))).toEqual([h.FINALIZER]);

    const out = op.output;
    const prefixed = (message: string): string => `[default/kopf-example-1] ${message}`;
    // Three failures each, retried one second later with `retry` counting up.
    expect(calls.of('background_sync').map((call) => call.args['retry'])).toEqual([0, 1, 2, 3]);
    expect(calls.of('background_async').map((call) => call.args['retry'])).toEqual([0, 1, 2, 3]);
    expect(out.count("Daemon 'background_sync' failed temporarily: Simulated failure.")).toBe(3);
    expect(out.count("Daemon 'background_async' failed temporarily: Simulated failure.")).toBe(3);
    // `status.message` goes through the failures, each applied right after its failed attempt.
    const statuses = h
      .patchesOf(cluster, { since })
      .filter((p) => p.subresource === 'status')
      .map((p) => ((p.body as Json)['status'] as Json)['message']);
    expect(statuses).toEqual(['Failed 1 times.', 'Failed 2 times.', 'Failed 3 times.']);
    const sync = out.messages().filter((m) => m.startsWith("Daemon 'background_sync'") || m.startsWith('Merge-patching the status'));
    expect(sync.slice(0, 9)).toEqual([
      "Daemon 'background_sync' is invoked.",
      "Daemon 'background_sync' failed temporarily: Simulated failure.",
      'Merge-patching the status with: {"status":{"message":"Failed 1 times."}}',
      "Daemon 'background_sync' is invoked.",
      "Daemon 'background_sync' failed temporarily: Simulated failure.",
      'Merge-patching the status with: {"status":{"message":"Failed 2 times."}}',
      "Daemon 'background_sync' is invoked.",
      "Daemon 'background_sync' failed temporarily: Simulated failure.",
      'Merge-patching the status with: {"status":{"message":"Failed 3 times."}}',
    ]);

    await h.remove(cluster);
    await h.eventually(() => h.getObject(cluster) === undefined, 'the object to disappear', 15_000);
    await op.stop();

    // The stop: the sync daemon wakes from its wait at once and writes its last message; the async
    // one gets its grace second, then its signal is aborted and its sleep cancelled.
    const lines = out.linesWith('[default/kopf-example-1]');
    const index = (message: string): number => lines.findIndex((line) => line.endsWith(prefixed(message)));
    const graceful = index("Daemon 'background_async' is signalled to exit gracefully.");
    const forced = index("Daemon 'background_async' is signalled to exit by force.");
    const cancelled = index("Daemon 'background_async' is cancelled. Will escalate.");
    const syncExited = index("Daemon 'background_sync' has exited on request and will not be retried or restarted.");
    const released = index('Removing the finalizer, thus allowing the actual deletion.');
    expect([graceful, forced, cancelled, syncExited, released].every((i) => i >= 0)).toBe(true);
    expect(graceful).toBeLessThan(forced);
    expect(forced).toBeLessThan(cancelled);
    expect(released).toBeGreaterThan(cancelled);
    expect(released).toBeGreaterThan(syncExited);
    expect(out.matching("Daemon 'background_async' is cancelled. Will escalate.").map((e) => e.level)).toEqual(['WARNING']);
    expect(out.count("Daemon 'background_sync' succeeded.")).toBe(1);
    const finished = index('Merge-patching the status with: {"status":{"message":"Accompanying is finished."}}');
    expect(finished).toBeGreaterThan(index('=> Ping from a sync daemon: field=value, retry=3'));
    expect(finished).toBeLessThan(syncExited);
    expect(
      h
        .patchesOf(cluster, { since })
        .filter((p) => p.subresource === 'status')
        .at(-1)!.body,
    ).toEqual({ status: { message: 'Accompanying is finished.' } });
    // No more retries of the cancelled daemon, nothing orphaned, nothing left behind.
    expect(calls.of('background_async')).toHaveLength(4);
    expect(out.count('Leaving it orphaned')).toBe(0);
    h.genericChecks(op);
  });

  it('A-16 a daemon that exited on its own is not re-spawned, releases the finalizer on the next event, and runs again after a restart', async () => {
    const calls = new Calls();
    const registry = a16.register(new OperatorRegistry(), calls);
    // An observer of events (a test instrument, not part of the scenario's operator).
    on.event('kopfexamples', { registry, id: 'observer' }, function observer({ spec, logger }) {
      logger.info(`Observed field=${String(spec['field'])}`);
    });
    const first = await h.startOperator(cluster, { registry });
    await h.apply(cluster, h.referenceObject());
    await first.output.waitFor("Daemon 'once_and_done' has exited on its own and will not be retried or restarted.");
    expect(first.output.matching("Daemon 'once_and_done' has exited on its own").map((e) => e.level)).toEqual(['DEBUG']);
    await first.output.waitFor('Removing the finalizer, as there are no handlers requiring it.');
    await h.eventually(() => h.finalizersOf(h.getObject(cluster)).length === 0, 'the finalizer to go');
    for (const field of ['one', 'two']) {
      await h.mergePatch(cluster, { spec: { field } });
      await first.output.waitFor(`Observed field=${field}`);
    }
    expect(calls.count('once_and_done')).toBe(1);
    expect(first.output.count('Doing the job once.')).toBe(1);
    await first.stop();
    // G-4 is not for the observer: it succeeds once per event by design.
    h.genericChecks(first, { skipG4: true });

    const second = await h.startOperator(cluster, { registry });
    await second.output.waitFor('Doing the job once.');
    await second.output.waitFor("Daemon 'once_and_done' has exited on its own");
    expect(second.output.count('Adding the finalizer, thus preventing the actual deletion.')).toBe(1);
    await second.output.waitFor('Removing the finalizer, as there are no handlers requiring it.');
    await h.eventually(() => h.finalizersOf(h.getObject(cluster)).length === 0, 'the finalizer to go again');
    expect(calls.count('once_and_done')).toBe(2);
    await h.remove(cluster);
    await h.eventually(() => h.getObject(cluster) === undefined, 'the object to disappear');
    await second.stop();
    h.genericChecks(second, { skipG4: true });
  });
});
