/**
 * The daemons engine, stopping a daemon: the termination stages with their exact virtual
 * timestamps and DEBUG/WARNING texts (R-DAEMON-6), deletion holding the finalizer until every
 * daemon has exited or was abandoned, in parallel with deletion handlers (R-DAEMON-7, R-FINAL-5),
 * the operator's exit — also for daemons in the middle of a stage — and the 5-second hung-task
 * limit (R-DAEMON-8, R-LIFE-3), filter mismatches and re-spawning (R-DAEMON-9, A-15), and
 * R-DAEMON-10 as far as it holds without peering.
 *
 * R-DAEMON-10 without peering: pausing (`OPERATOR_PAUSING`) is driven by peering, which is not
 * implemented yet (R-PEER, a later issue), so nothing here pauses an operator. What is tested is
 * the part that does not depend on it: the events of a re-listing (after the watch stream ends)
 * never start a second instance of a running daemon, and two instances of one daemon for one object
 * never run at once (also in A-15 below).
 *
 * Each test runs an operator on a virtual clock against the devcluster (see `simulating.ts`).
 * The stages of a deleted object are driven by processing cycles: each cycle sleeps until the next
 * stage and then "touches" the object, whose event starts the next cycle. A test moves the clock only
 * after the line that shows the operator waiting (`Sleeping for …`, a stage line logged right
 * before a wait), so each stage lands on its exact virtual millisecond.
 */
import { describe, expect, it } from 'vitest';

import type * as settingsModule from '../../../../runtime/cogs/configs/settings.js';
import { TemporaryError } from '../../../../runtime/core/actions/errors.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import { DaemonStoppingReason, reasonNames, type DaemonStopped } from '../../../../runtime/core/intents/stoppers.js';
import { on } from '../../../../runtime/on.js';
import * as s from '../../../support/virtualtime.js';

type Json = Record<string, unknown>;

/** A promise that never settles: a daemon awaiting it ignores its flag and its signal. */
const forever = (): Promise<never> => new Promise<never>(() => undefined);

describe('stopping daemons', () => {
  const suite = s.simulationPerTest();
  let sim: s.Simulation | undefined;

  async function start(registry: OperatorRegistry, configure?: (settings: settingsModule.OperatorSettings) => void): Promise<s.Simulation> {
    sim = await suite.start({ registry, settings: s.settings(configure) });
    return sim;
  }

  /** Creates the object and waits until its daemons run and its finalizer is in place. */
  async function createAndWait(invoked: string[]): Promise<void> {
    await sim!.create();
    for (const id of invoked) await sim!.waitFor(`Daemon '${id}' is invoked.`);
    await sim!.until(() => sim!.finalizers().includes(s.FINALIZER), 'the finalizer');
    await sim!.waitFor('JSON-patching the resource with:');
  }

  /** Deleting is asking: the object gets its deletionTimestamp, and the finalizer keeps it. */
  async function deleteObject(): Promise<void> {
    await sim!.delete();
  }

  const gone = async (): Promise<void> => {
    await sim!.until(() => sim!.object() === undefined, 'the object to vanish');
  };

  describe('R-DAEMON-6 the termination stages', () => {
    it('R-DAEMON-6 graceful, forced, abandoned: at the backoff and backoff + timeout after the stop request, with the exact lines', async () => {
      const registry = new OperatorRegistry();
      let flag: DaemonStopped | undefined;
      on.daemon('kopfexamples', { registry, cancellationBackoff: 3, cancellationTimeout: 2 }, async function stubborn({ stopped }) {
        flag = stopped;
        await forever();
      });
      on.event('kopfexamples', { registry, id: 'observer' }, function observer({ type, logger }) {
        logger.info(`Seen type=${String(type)}`);
      });
      await start(registry);
      await createAndWait(['stubborn']);
      await sim!.advance(10_000); // the stages are measured from the stop request, not from the start
      await deleteObject();
      await sim!.waitFor('Sleeping for 3 seconds for the delayed handlers.');
      await sim!.advance(2999);
      expect(flag!.signal.aborted).toBe(false);
      expect(reasonNames(flag!.reason)).toEqual(['RESOURCE_DELETED', 'DAEMON_SIGNALLED']);
      await sim!.advance(1);
      await sim!.waitFor('Sleeping for 2 seconds for the delayed handlers.');
      expect(flag!.signal.aborted).toBe(true);
      await sim!.advance(2000);
      await gone();
      // The object is gone, the orphan lives on: neither its DELETED event nor the operator's exit
      // start the stages over again.
      await sim!.waitFor('Seen type=DELETED');
      await sim!.advance(60_000);
      await sim!.stop();

      const lines = sim!.lines.filter(
        (l) => l.object === 'default/kopf-example-1' && /Daemon 'stubborn'|the finalizer|Sleeping/.test(l.message) && l.at >= 10_000,
      );
      expect(lines.map((l) => [l.at - 10_000, l.level, l.message])).toEqual([
        [0, s.DEBUG, "Daemon 'stubborn' is signalled to exit gracefully."],
        [0, s.DEBUG, 'Sleeping for 3 seconds for the delayed handlers.'],
        [3000, s.DEBUG, "Daemon 'stubborn' is signalled to exit by force."],
        [3000, s.DEBUG, 'Sleeping for 2 seconds for the delayed handlers.'],
        [5000, s.WARNING, "Daemon 'stubborn' did not exit in time. Leaving it orphaned."],
        [5000, s.DEBUG, 'Removing the finalizer, thus allowing the actual deletion.'],
        // At the operator's exit, the hung-task limit (5 s) cancels the orphan's invocation.
        [70_000, s.WARNING, "Daemon 'stubborn' is cancelled. Will escalate."],
      ]);
      expect(reasonNames(flag!.reason)).toEqual(['DONE', 'RESOURCE_DELETED', 'OPERATOR_EXITING', 'DAEMON_SIGNALLED', 'DAEMON_CANCELLED', 'DAEMON_ABANDONED']);
      // The touches that drove the stages carry the virtual times of the stages.
      expect(
        sim!
          .patches()
          .map((p) => ((p['metadata'] as Json | undefined)?.['annotations'] as Json | undefined)?.['kopf.zalando.org/touch-dummy'])
          .filter((v) => typeof v === 'string'),
      ).toEqual(['2030-01-01T00:00:13.000000+00:00', '2030-01-01T00:00:15.000000+00:00']);
    });

    it('R-DAEMON-6 only a timeout: the forced stage comes at once, the abandonment after the timeout', async () => {
      const registry = new OperatorRegistry();
      on.daemon('kopfexamples', { registry, cancellationTimeout: 4 }, async function stubborn() {
        await forever();
      });
      await start(registry);
      await createAndWait(['stubborn']);
      await deleteObject();
      await sim!.waitFor('Sleeping for 4 seconds for the delayed handlers.');
      await sim!.advance(4000);
      await gone();
      expect(sim!.times("Daemon 'stubborn' is signalled to exit by force.", s.DEBUG)).toEqual([0]);
      expect(sim!.times("Daemon 'stubborn' did not exit in time. Leaving it orphaned.", s.WARNING)).toEqual([4000]);
      expect(sim!.times('Removing the finalizer, thus allowing the actual deletion.')).toEqual([4000]);
      expect(sim!.grep('signalled to exit gracefully')).toEqual([]);
    });

    it('R-DAEMON-6 without a timeout: after the graceful stage, a check every cancellationPolling seconds until the daemon exits', async () => {
      const registry = new OperatorRegistry();
      const release = s.deferred();
      on.daemon('kopfexamples', { registry, cancellationBackoff: 2, cancellationPolling: 10 }, async function slow({ stopped }) {
        await stopped.wait();
        await release.promise;
      });
      await start(registry);
      await createAndWait(['slow']);
      await deleteObject();
      await sim!.waitFor('Sleeping for 2 seconds for the delayed handlers.');
      await sim!.advance(2000);
      for (let check = 1; check <= 3; check += 1) {
        await sim!.waitFor('Sleeping for 10 seconds for the delayed handlers.', { times: check });
        if (check < 3) await sim!.advance(10_000);
      }
      await sim!.advance(3000);
      release.resolve();
      await sim!.waitFor("Daemon 'slow' has exited on request and will not be retried or restarted.");
      expect(sim!.finalizers()).toEqual([s.FINALIZER]);
      await sim!.advance(7000);
      await gone();

      expect(sim!.times("Daemon 'slow' is signalled to exit gracefully.", s.DEBUG)).toEqual([0]);
      expect(sim!.times("Daemon 'slow' is still exiting. The next check is in 10 seconds.", s.DEBUG)).toEqual([2000, 12_000, 22_000]);
      expect(sim!.times("Daemon 'slow' has exited on request")).toEqual([25_000]);
      expect(sim!.times('Removing the finalizer, thus allowing the actual deletion.')).toEqual([32_000]);
      expect(sim!.grep(/by force|orphaned/)).toEqual([]);
    });

    it('R-DAEMON-6 without any stage settings: checks from the start, every settings.background.cancellationPolling (60) seconds', async () => {
      const registry = new OperatorRegistry();
      const release = s.deferred();
      on.daemon('kopfexamples', { registry }, async function slow({ stopped }) {
        await stopped.wait();
        await release.promise;
      });
      await start(registry);
      expect(sim!.settings.background.cancellationPolling).toBe(60);
      await createAndWait(['slow']);
      await deleteObject();
      for (let check = 1; check <= 3; check += 1) {
        await sim!.waitFor('Sleeping for 60 seconds for the delayed handlers.', { times: check });
        await sim!.advance(check < 3 ? 60_000 : 10_000);
      }
      release.resolve();
      await sim!.waitFor("Daemon 'slow' has exited on request");
      await sim!.advanceTo(180_000);
      await gone();
      expect(sim!.times("Daemon 'slow' is still exiting. The next check is in 60 seconds.", s.DEBUG)).toEqual([0, 60_000, 120_000]);
      expect(sim!.times('Removing the finalizer, thus allowing the actual deletion.')).toEqual([180_000]);
    });

    it('R-DAEMON-6 a daemon that exits during the graceful stage is not forced; the finalizer goes at the end of the backoff', async () => {
      const registry = new OperatorRegistry();
      const release = s.deferred();
      on.daemon('kopfexamples', { registry, cancellationBackoff: 5, cancellationTimeout: 5 }, async function tidy({ stopped }) {
        await stopped.wait();
        await release.promise;
      });
      await start(registry);
      await createAndWait(['tidy']);
      await deleteObject();
      await sim!.waitFor('Sleeping for 5 seconds for the delayed handlers.');
      await sim!.advance(1000);
      release.resolve();
      await sim!.waitFor("Daemon 'tidy' has exited on request");
      await sim!.advance(4000);
      await gone();
      expect(sim!.times("Daemon 'tidy' is signalled to exit gracefully.")).toEqual([0]);
      expect(sim!.times("Daemon 'tidy' has exited on request")).toEqual([1000]);
      expect(sim!.times('Removing the finalizer, thus allowing the actual deletion.')).toEqual([5000]);
      expect(sim!.grep(/by force|orphaned|cancelled/)).toEqual([]);
    });
  });

  describe('R-DAEMON-7 deletion', () => {
    it('R-DAEMON-7 R-FINAL-5 the finalizer stays until every daemon has exited or was abandoned', async () => {
      const registry = new OperatorRegistry();
      const release = s.deferred();
      on.daemon('kopfexamples', { registry, cancellationBackoff: 1, cancellationTimeout: 1 }, async function stubborn() {
        await forever();
      });
      on.daemon('kopfexamples', { registry, cancellationPolling: 3 }, async function slow({ stopped }) {
        await stopped.wait();
        await release.promise;
      });
      await start(registry);
      await createAndWait(['stubborn', 'slow']);
      await deleteObject();
      await sim!.waitFor('Sleeping for 1 seconds for the delayed handlers.');
      await sim!.advance(1000);
      await sim!.waitFor('Sleeping for 1 seconds for the delayed handlers.', { times: 2 });
      await sim!.advance(1000);
      await sim!.waitFor('Sleeping for 3 seconds for the delayed handlers.');
      expect(sim!.finalizers()).toEqual([s.FINALIZER]);
      await sim!.advance(500);
      release.resolve();
      await sim!.waitFor("Daemon 'slow' has exited on request");
      await sim!.advance(2500);
      await gone();

      expect(sim!.times("Daemon 'stubborn' did not exit in time. Leaving it orphaned.", s.WARNING)).toEqual([2000]);
      expect(sim!.times("Daemon 'slow' has exited on request")).toEqual([2500]);
      expect(sim!.times('Removing the finalizer, thus allowing the actual deletion.')).toEqual([5000]);
    });

    it('R-DAEMON-7 deletion handlers and the stopping of daemons go on in parallel; the finalizer waits for both', async () => {
      const registry = new OperatorRegistry();
      const calls: number[] = [];
      on.delete('kopfexamples', { registry }, function cleanup({ retry }) {
        calls.push(sim!.now);
        if (retry === 0) throw new TemporaryError('not yet', { delay: 3 });
      });
      on.daemon('kopfexamples', { registry, cancellationBackoff: 1, cancellationTimeout: 1 }, async function stubborn() {
        await forever();
      });
      await start(registry);
      await createAndWait(['stubborn']);
      await deleteObject();
      await sim!.waitFor('Sleeping for 1 seconds for the delayed handlers.');
      await sim!.advance(1000);
      await sim!.waitFor("Daemon 'stubborn' is signalled to exit by force.");
      await sim!.waitFor('Sleeping for 1 seconds for the delayed handlers.', { times: 2 });
      await sim!.advance(1000);
      await sim!.waitFor('Sleeping for 1 seconds for the delayed handlers.', { times: 3 });
      expect(sim!.finalizers()).toEqual([s.FINALIZER]);
      await sim!.advance(1000);
      await gone();

      expect(calls).toEqual([0, 3000]);
      expect(sim!.times("Daemon 'stubborn' is signalled to exit gracefully.")).toEqual([0]);
      expect(sim!.times("Daemon 'stubborn' did not exit in time. Leaving it orphaned.")).toEqual([2000]);
      expect(sim!.times('Deletion is processed: 1 succeeded; 0 failed.')).toEqual([3000]);
      expect(sim!.times('Removing the finalizer, thus allowing the actual deletion.')).toEqual([3000]);
    });
  });

  describe('R-DAEMON-8 operator exit', () => {
    it('R-DAEMON-8 every daemon of every object is stopped with OPERATOR_EXITING, in memory: no patches, the finalizers stay', async () => {
      const registry = new OperatorRegistry();
      const reasons: string[] = [];
      on.daemon('kopfexamples', { registry, cancellationBackoff: 5 }, async function polite({ name, stopped }) {
        await stopped.wait();
        reasons.push(`${name}: ${reasonNames(stopped.reason).join('|')}`);
      });
      await start(registry);
      await sim!.create('kopf-example-1');
      await sim!.create('kopf-example-2');
      await sim!.until(() => sim!.finalizers('kopf-example-1').length > 0 && sim!.finalizers('kopf-example-2').length > 0, 'the finalizers');
      await sim!.waitFor('JSON-patching the resource with:', { times: 2 });
      const requests = suite.cluster.requests.all.length;
      await sim!.stop();

      expect(sim!.times("Daemon 'polite' has exited on request")).toEqual([0, 0]);
      expect(reasons.sort()).toEqual(['kopf-example-1: OPERATOR_EXITING', 'kopf-example-2: OPERATOR_EXITING']);
      expect(sim!.grep("Daemon 'polite' has exited on request and will not be retried or restarted.")).toHaveLength(2);
      expect(sim!.grep(/signalled|orphaned|cancelled/)).toEqual([]);
      expect(suite.cluster.requests.all.slice(requests).filter((r) => r.method !== 'GET')).toEqual([]);
      expect(sim!.finalizers('kopf-example-1')).toEqual([s.FINALIZER]);
      expect(sim!.finalizers('kopf-example-2')).toEqual([s.FINALIZER]);
      expect(sim!.context.daemons!.size).toBe(0);
    });

    it('R-DAEMON-8 R-LIFE-3 the stages at exit, then the 5-second hung-task limit cancels what is still running', async () => {
      const registry = new OperatorRegistry();
      let flag: DaemonStopped | undefined;
      on.daemon('kopfexamples', { registry, cancellationBackoff: 1, cancellationTimeout: 1 }, async function stubborn({ stopped }) {
        flag = stopped;
        await forever();
      });
      await start(registry);
      await createAndWait(['stubborn']);
      sim!.requestStop();
      await sim!.waitFor("Daemon 'stubborn' is signalled to exit gracefully.");
      await sim!.advance(1000);
      await sim!.waitFor("Daemon 'stubborn' is signalled to exit by force.");
      await sim!.advance(1000);
      await sim!.waitFor("Daemon 'stubborn' did not exit in time. Leaving it orphaned.");
      await sim!.stop({ stepMs: 500 });

      expect(sim!.times("Daemon 'stubborn' is signalled to exit gracefully.", s.DEBUG)).toEqual([0]);
      expect(sim!.times("Daemon 'stubborn' is signalled to exit by force.", s.DEBUG)).toEqual([1000]);
      expect(sim!.times("Daemon 'stubborn' did not exit in time. Leaving it orphaned.", s.WARNING)).toEqual([2000]);
      expect(sim!.times("Root tasks are not stopped in 5 seconds: 'daemon killer'. Cancelling their work.", s.WARNING)).toEqual([5000]);
      expect(sim!.times("Daemon 'stubborn' is cancelled. Will escalate.", s.WARNING)).toEqual([5000]);
      expect(reasonNames(flag!.reason)).toEqual(['DONE', 'OPERATOR_EXITING', 'DAEMON_SIGNALLED', 'DAEMON_CANCELLED', 'DAEMON_ABANDONED']);
      expect(sim!.error).toBeUndefined();
      expect(sim!.context.daemons!.size).toBe(0);
    });

    it('R-DAEMON-8 a daemon without stage settings is abandoned at once at exit; the hung-task limit then aborts its signal', async () => {
      const registry = new OperatorRegistry();
      const events: string[] = [];
      on.daemon('kopfexamples', { registry }, async function deaf({ stopped }) {
        await new Promise((resolve) => stopped.signal.addEventListener('abort', resolve));
        events.push(`aborted at ${sim!.now}`);
      });
      await start(registry);
      await createAndWait(['deaf']);
      sim!.requestStop();
      await sim!.waitFor("Daemon 'deaf' did not exit in time. Leaving it orphaned.");
      await sim!.stop({ stepMs: 500 });
      expect(events).toEqual(['aborted at 5000']);
      expect(sim!.times("Daemon 'deaf' did not exit in time. Leaving it orphaned.", s.WARNING)).toEqual([0]);
    });

    it('R-DAEMON-8 a daemon in the middle of its stop stages at exit goes on from its stage, not from the start', async () => {
      const registry = new OperatorRegistry();
      let flag: DaemonStopped | undefined;
      on.daemon('kopfexamples', { registry, cancellationBackoff: 2, cancellationTimeout: 2 }, async function stubborn({ stopped }) {
        flag = stopped;
        await forever();
      });
      await start(registry);
      await createAndWait(['stubborn']);
      await deleteObject();
      await sim!.waitFor('Sleeping for 2 seconds for the delayed handlers.');
      await sim!.advance(1000);
      sim!.requestStop();
      await sim!.waitFor('Stop-flag is raised. Operator is stopping.');
      await sim!.until(() => ((flag!.reason ?? 0) & DaemonStoppingReason.OPERATOR_EXITING) !== 0, 'the exit flag');
      await sim!.advance(1000);
      await sim!.waitFor("Daemon 'stubborn' is signalled to exit by force.");
      await sim!.advance(2000);
      await sim!.waitFor("Daemon 'stubborn' did not exit in time. Leaving it orphaned.");
      await sim!.stop({ stepMs: 500 });

      expect(sim!.times("Daemon 'stubborn' is signalled to exit gracefully.")).toEqual([0]);
      expect(sim!.times("Daemon 'stubborn' is signalled to exit by force.")).toEqual([2000]);
      expect(sim!.times("Daemon 'stubborn' did not exit in time. Leaving it orphaned.")).toEqual([4000]);
      expect(sim!.times("Daemon 'stubborn' is cancelled. Will escalate.")).toEqual([6000]);
      expect(reasonNames(flag!.reason)).toEqual(['DONE', 'RESOURCE_DELETED', 'OPERATOR_EXITING', 'DAEMON_SIGNALLED', 'DAEMON_CANCELLED', 'DAEMON_ABANDONED']);
      // The operator is gone, the object is still being deleted: its finalizer stays (R-FINAL-6).
      expect(sim!.finalizers()).toEqual([s.FINALIZER]);
    });
  });

  describe('R-DAEMON-9 filter mismatch', () => {
    /** A daemon for `run=yes` looping on `stopped.wait(1)`, counting its instances. */
    function register(registry: OperatorRegistry, slowExit?: Promise<void>): { instances: Json[]; maxActive: () => number } {
      let active = 0;
      let max = 0;
      const instances: Json[] = [];
      on.daemon('kopfexamples', { registry, labels: { run: 'yes' }, cancellationPolling: 5 }, async function runner({ stopped }) {
        const instance: Json = { started: sim!.now, loops: 0 };
        instances.push(instance);
        active += 1;
        max = Math.max(max, active);
        try {
          while (!(await stopped.wait(1))) instance['loops'] = (instance['loops'] as number) + 1;
          instance['reason'] = reasonNames(stopped.reason);
          if (slowExit) await slowExit;
          instance['exited'] = sim!.now;
        } finally {
          active -= 1;
        }
      });
      on.event('kopfexamples', { registry, id: 'observer' }, function observer({ labels, spec, logger }) {
        logger.info(`Seen run=${labels['run'] ?? 'none'} field=${String(spec['field'])}`);
      });
      return { instances, maxActive: () => max };
    }

    it('A-15 R-DAEMON-9 a mismatch stops the daemon with FILTERS_MISMATCH and releases the finalizer in that cycle; a re-match starts a new instance', async () => {
      const registry = new OperatorRegistry();
      const { instances, maxActive } = register(registry);
      await start(registry);
      await sim!.create('kopf-example-1', { metadata: { labels: { run: 'yes' } } });
      await sim!.waitFor("Daemon 'runner' is invoked.");
      await sim!.until(() => sim!.finalizers().includes(s.FINALIZER), 'the finalizer');
      await sim!.waitFor('Seen run=yes', { times: 2 });
      await sim!.advance(3000);
      expect(instances).toEqual([{ started: 0, loops: 3 }]);

      await sim!.patch({ metadata: { labels: { run: null } } });
      await sim!.waitFor("Daemon 'runner' has exited on request");
      await sim!.until(() => sim!.finalizers().length === 0, 'the finalizer to go');
      await sim!.advance(2000);
      await sim!.patch({ metadata: { labels: { run: 'yes' } } });
      await sim!.waitFor("Daemon 'runner' is invoked.", { times: 2 });
      await sim!.until(() => sim!.finalizers().includes(s.FINALIZER), 'the finalizer again');
      await sim!.waitFor('Seen run=yes', { times: 4 });
      await sim!.advance(2000);

      expect(instances).toEqual([
        { started: 0, loops: 3, reason: ['FILTERS_MISMATCH'], exited: 3000 },
        { started: 5000, loops: 2 },
      ]);
      expect(maxActive()).toBe(1);
      // The finalizer was removed in the cycle of the mismatching event, added back in the re-matching one.
      const messages = sim!.messages('default/kopf-example-1').filter((m) => /^Seen|the finalizer/.test(m));
      expect(messages).toEqual([
        'Seen run=yes field=value',
        'Adding the finalizer, thus preventing the actual deletion.',
        'Seen run=yes field=value',
        'Seen run=none field=value',
        'Removing the finalizer, as there are no handlers requiring it.',
        'Seen run=none field=value',
        'Seen run=yes field=value',
        'Adding the finalizer, thus preventing the actual deletion.',
        'Seen run=yes field=value',
      ]);
    });

    it('R-DAEMON-9 a re-match while the old instance is still exiting starts no second one; a later event after its exit does', async () => {
      const registry = new OperatorRegistry();
      const release = s.deferred();
      const { instances, maxActive } = register(registry, release.promise);
      await start(registry);
      await sim!.create('kopf-example-1', { metadata: { labels: { run: 'yes' } } });
      await sim!.waitFor("Daemon 'runner' is invoked.");
      await sim!.waitFor('Seen run=yes', { times: 2 });

      await sim!.patch({ metadata: { labels: { run: null } } });
      await sim!.waitFor("Daemon 'runner' is still exiting. The next check is in 5 seconds.");
      await sim!.waitFor('Sleeping for 5 seconds for the delayed handlers.');
      await sim!.advance(1000);
      await sim!.patch({ metadata: { labels: { run: 'yes' } } });
      await sim!.waitFor('Adding the finalizer, thus preventing the actual deletion.', { times: 2 });
      await sim!.waitFor('Seen run=yes', { times: 4 });
      await sim!.advance(2000);
      release.resolve();
      await sim!.waitFor("Daemon 'runner' has exited on request");
      await sim!.advance(10_000);
      expect(instances).toHaveLength(1);

      await sim!.patch({ spec: { field: 'later' } });
      await sim!.waitFor("Daemon 'runner' is invoked.", { times: 2 });
      expect(instances.map((i) => i['started'])).toEqual([0, 13_000]);
      expect(instances[0]).toMatchObject({ reason: ['FILTERS_MISMATCH'], exited: 3000 });
      expect(maxActive()).toBe(1);
    });
  });

  it('R-DAEMON-10 (without peering) the events of a re-listing do not start a second instance of a running daemon', async () => {
    expect(DaemonStoppingReason.OPERATOR_PAUSING).toBe(8);
    const registry = new OperatorRegistry();
    const starts: number[] = [];
    on.daemon('kopfexamples', { registry }, async function single({ stopped }) {
      starts.push(sim!.now);
      await stopped.wait();
    });
    on.event('kopfexamples', { registry, id: 'observer' }, function observer({ type, logger }) {
      logger.info(`Seen type=${String(type)}`);
    });
    await start(registry);
    await createAndWait(['single']);
    const lists = suite.cluster.requests.all.filter((r) => r.method === 'GET' && r.resource === 'kopfexamples' && !/watch=/.test(r.query)).length;
    expect(suite.cluster.dropWatches({ resource: 'kopfexamples' }, 'expire')).toBeGreaterThan(0);
    // The watcher re-lists after its reconnection backoff (on the operator's clock).
    await sim!.advanceUntil(() => sim!.grep('Seen type=null').length > 0, 'the re-listing');
    expect(suite.cluster.requests.all.filter((r) => r.method === 'GET' && r.resource === 'kopfexamples' && !/watch=/.test(r.query)).length).toBeGreaterThan(
      lists,
    );
    await sim!.patch({ spec: { field: 'after the re-listing' } });
    await sim!.waitFor('Seen type=MODIFIED', { times: 2 });
    expect(starts).toEqual([0]);
    expect(sim!.context.daemons!.size).toBe(1);
  });
});
