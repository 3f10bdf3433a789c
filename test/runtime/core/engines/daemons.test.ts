/**
 * The daemons engine, running a daemon: registration and the initial delay (R-DAEMON-1), spawning
 * (R-DAEMON-2), retries with an in-memory state (R-DAEMON-3), exiting on its own (R-DAEMON-4 and
 * the simulation part of A-16), the stop flag (R-DAEMON-5), the instant exit (R-DAEMON-11),
 * synchronous daemons (R-DAEMON-12), live bodies (R-KWARGS-8) and the per-daemon patch
 * (R-PATCH-8). The stop stages, deletion, operator exit and filter mismatches are in
 * `daemons-stopping.test.ts`; bad input and faults in `daemons-faults.test.ts`.
 *
 * Every test runs a whole operator on a virtual clock against the devcluster (`simulating.ts`):
 * timestamps are exact virtual milliseconds since the start. Before moving the clock, a test waits
 * (in real time) for the line that shows the operator is waiting on the clock — a daemon's
 * invocation, `Sleeping for …` — so that every step lands on its exact virtual time.
 */
import { describe, expect, it } from 'vitest';

import type * as settingsModule from '../../../../runtime/cogs/configs/settings.js';
import { PermanentError, TemporaryError } from '../../../../runtime/core/actions/errors.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import { DaemonStoppingReason, reasonNames, type DaemonStopped } from '../../../../runtime/core/intents/stoppers.js';
import { PRESENT } from '../../../../runtime/core/intents/filters.js';
import { on } from '../../../../runtime/on.js';
import * as s from '../../../support/virtualtime.js';

type Json = Record<string, unknown>;
const R = DaemonStoppingReason;

describe('daemons', () => {
  const suite = s.simulationPerTest();
  let sim: s.Simulation | undefined;

  async function start(registry: OperatorRegistry, configure?: (settings: settingsModule.OperatorSettings) => void): Promise<s.Simulation> {
    sim = await suite.start({ registry, settings: s.settings(configure) });
    return sim;
  }

  /** An on-event handler that logs `Seen <name>: field=<spec.field>` for every event it gets. */
  function observe(registry: OperatorRegistry): void {
    on.event('kopfexamples', { registry, id: 'observer' }, function observer({ name, spec, logger }) {
      logger.info(`Seen ${name}: field=${String(spec['field'])}`);
    });
  }

  it('R-DAEMON-1 the options reach the handler; initialDelay, a number or a callback of the arguments, delays the first invocation exactly', async () => {
    const registry = new OperatorRegistry();
    const invoked: Record<string, number> = {};
    on.daemon(
      'kopfexamples',
      {
        registry,
        id: 'fixed',
        initialDelay: 5,
        cancellationBackoff: 1,
        cancellationTimeout: 2,
        cancellationPolling: 3,
        backoff: 4,
        retries: 5,
        timeout: 600,
        labels: { somelabel: 'somevalue' },
        param: 'p',
      },
      async function fixed({ stopped }) {
        invoked['fixed'] = sim!.now;
        await stopped.wait();
      },
    );
    on.daemon('kopfexamples', { registry, id: 'computed', initialDelay: ({ spec }) => Number(spec['delay']) }, async function computed({ stopped }) {
      invoked['computed'] = sim!.now;
      await stopped.wait();
    });
    expect(registry.handlers.find((handler) => handler.id === 'fixed')).toMatchObject({
      kind: 'daemon',
      initialDelay: 5,
      cancellationBackoff: 1,
      cancellationTimeout: 2,
      cancellationPolling: 3,
      backoff: 4,
      retries: 5,
      timeout: 600,
      param: 'p',
    });
    expect(() =>
      on.daemon('kopfexamples', { registry, interval: 1 } as never, async function wrong() {
        /* never */
      }),
    ).toThrow(/Unknown options of on\.daemon\(\): interval/);

    await start(registry);
    await sim!.create('kopf-example-1', { spec: { field: 'value', delay: 7 } });
    await sim!.until(() => sim!.finalizers().includes(s.FINALIZER), 'the finalizer');
    await sim!.advance(4999);
    expect(invoked).toEqual({});
    await sim!.advance(1);
    expect(invoked).toEqual({ fixed: 5000 });
    await sim!.advanceTo(7000);
    expect(invoked).toEqual({ fixed: 5000, computed: 7000 });
    expect(sim!.times("Daemon 'fixed' is invoked.", s.DEBUG)).toEqual([5000]);
    expect(sim!.times("Daemon 'computed' is invoked.", s.DEBUG)).toEqual([7000]);
  });

  it('R-DAEMON-2 started in the first cycle, before the finalizer is added; one instance per object and handler, however many events come', async () => {
    const registry = new OperatorRegistry();
    observe(registry);
    const starts: string[] = [];
    const finalizersSeen: unknown[] = [];
    for (const id of ['first', 'second']) {
      on.daemon('kopfexamples', { registry, id }, async ({ name, meta, stopped }) => {
        starts.push(`${id}@${name}`);
        finalizersSeen.push(meta.finalizers ?? null);
        await stopped.wait();
      });
    }
    on.daemon('kopfexamples', { registry, id: 'mismatching', labels: { nonexistent: PRESENT } }, async function mismatching() {
      starts.push('mismatching');
    });
    await start(registry);
    await sim!.create('kopf-example-1');
    await sim!.create('kopf-example-2');
    for (const field of ['a', 'b', 'c']) {
      await sim!.patch({ spec: { field } }, 'kopf-example-1');
      await sim!.patch({ spec: { field } }, 'kopf-example-2');
    }
    await sim!.waitFor('Seen kopf-example-1: field=c');
    await sim!.waitFor('Seen kopf-example-2: field=c');
    await sim!.advance(1000);

    expect(starts.sort()).toEqual(['first@kopf-example-1', 'first@kopf-example-2', 'second@kopf-example-1', 'second@kopf-example-2']);
    expect(sim!.context.daemons!.size).toBe(4);
    // The first invocation saw the body of the first event: the finalizer was not there yet.
    expect(finalizersSeen).toEqual([null, null, null, null]);
    const first = sim!.messages('default/kopf-example-1');
    expect(first.indexOf('Adding the finalizer, thus preventing the actual deletion.')).toBeLessThan(first.indexOf("Daemon 'first' is invoked."));
    expect(first.indexOf("Daemon 'second' is invoked.")).toBeLessThan(first.findIndex((m) => m.startsWith('JSON-patching the resource with:')));
  });

  it("R-DAEMON-2 daemons start regardless of consistency: in the cycle of an event older than the operator's own last patch", async () => {
    const registry = new OperatorRegistry();
    const gate = s.deferred();
    on.create('kopfexamples', { registry }, async function slow_create() {
      await gate.promise;
      return { message: 'created' };
    });
    const seen: Json[] = [];
    on.daemon('kopfexamples', { registry, labels: { run: 'yes' } }, async function runner({ meta, status, stopped }) {
      seen.push({ resourceVersion: meta.resourceVersion, result: status['slow_create'] ?? null });
      await stopped.wait();
    });
    await start(registry);
    await sim!.create();
    await sim!.waitFor("Handler 'slow_create' is invoked.");
    // While the create handler runs, the label comes: its event waits behind the current cycle.
    const labelled = await sim!.patch({ metadata: { labels: { run: 'yes' } } });
    const labelledVersion = (labelled['metadata'] as Json)['resourceVersion'] as string;
    gate.resolve();
    await sim!.waitFor("Daemon 'runner' is invoked.");

    // The daemon started on the label's event, which is older than the operator's own patch of the
    // status (the create handler's result, sent before): change handlers would wait for consistency,
    // daemons do not.
    const messages = sim!.messages('default/kopf-example-1');
    const ownPatch = messages.findIndex((m) => m.startsWith('Merge-patching the status with: {"status":{"slow_create":'));
    expect(ownPatch).toBeGreaterThanOrEqual(0);
    expect(ownPatch).toBeLessThan(messages.indexOf("Daemon 'runner' is invoked."));
    expect(seen).toEqual([{ resourceVersion: labelledVersion, result: null }]);
  });

  it('R-DAEMON-2 nothing is spawned for an object that is being deleted', async () => {
    const blocked = s.kopfExample('kopf-example-1', { metadata: { finalizers: ['example.com/blocker'] } });
    await suite.cluster.store.create(blocked);
    await suite.cluster.store.delete(s.KEX, 'kopf-example-1', { namespace: 'default' });
    const registry = new OperatorRegistry();
    observe(registry);
    const starts: string[] = [];
    on.daemon('kopfexamples', { registry }, async function never() {
      starts.push('never');
    });
    await start(registry);
    await sim!.waitFor('Seen kopf-example-1: field=value');
    await sim!.patch({ spec: { field: 'later' } });
    await sim!.waitFor('Seen kopf-example-1: field=later');
    await sim!.advance(60_000);
    expect(starts).toEqual([]);
    expect(sim!.finalizers()).toEqual(['example.com/blocker']);
    expect(sim!.grep('finalizer')).toEqual([]);
    await sim!.patch({ metadata: { finalizers: null } });
    await sim!.until(() => sim!.object() === undefined, 'the object to vanish');
  });

  it('R-DAEMON-3 retries with an in-memory state: TemporaryError delays, arbitrary errors back off, retry counts up; nothing is persisted', async () => {
    const registry = new OperatorRegistry();
    observe(registry);
    const calls: { retry: number; at: number }[] = [];
    on.daemon('kopfexamples', { registry, backoff: 3 }, function flaky({ retry }) {
      calls.push({ retry, at: sim!.now });
      if (retry === 0) throw new TemporaryError('first', { delay: 2 });
      if (retry === 1) throw new Error('second');
      return { message: 'done' };
    });
    await start(registry);
    await sim!.create();
    await sim!.waitFor("Daemon 'flaky' failed temporarily: first");
    // Object changes do not interrupt the sleep between attempts.
    await sim!.patch({ spec: { field: 'changed' } });
    await sim!.waitFor('Seen kopf-example-1: field=changed');
    await sim!.advance(1999);
    expect(calls).toEqual([{ retry: 0, at: 0 }]);
    await sim!.advance(1);
    await sim!.waitFor("Daemon 'flaky' failed with an exception and will try again in 3 seconds: second");
    await sim!.advance(3000);
    await sim!.waitFor("Daemon 'flaky' has exited on its own and will not be retried or restarted.");
    await sim!.advance(60_000);

    expect(calls).toEqual([
      { retry: 0, at: 0 },
      { retry: 1, at: 2000 },
      { retry: 2, at: 5000 },
    ]);
    expect(sim!.times("Daemon 'flaky' failed temporarily: first", s.ERROR)).toEqual([0]);
    expect(sim!.times("Daemon 'flaky' failed with an exception and will try again in 3 seconds: second", s.ERROR)).toEqual([2000]);
    expect(sim!.times("Daemon 'flaky' succeeded.", s.INFO)).toEqual([5000]);
    // The result is delivered; no progress record is ever written for a daemon.
    await sim!.until(() => (sim!.object()?.['status'] as Json | undefined)?.['flaky'] !== undefined, 'the result');
    expect((sim!.object()!['status'] as Json)['flaky']).toEqual({ message: 'done' });
    const written = JSON.stringify(sim!.patches());
    expect(written).not.toContain('kopf.zalando.org/flaky');
    expect(Object.keys((sim!.object()!['metadata'] as { annotations: Json }).annotations)).not.toContain('kopf.zalando.org/flaky');
  });

  it('R-DAEMON-3 only a stop request interrupts the initial delay and the sleep between retries', async () => {
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    on.daemon('kopfexamples', { registry, initialDelay: 30 }, async function delayed({ name }) {
      calls.push(`delayed@${name}`);
    });
    on.daemon('kopfexamples', { registry }, async function retrying({ name, retry }) {
      calls.push(`retrying@${name}#${retry}`);
      throw new TemporaryError('later', { delay: 30 });
    });
    await start(registry);
    await sim!.create();
    await sim!.waitFor("Daemon 'retrying' failed temporarily: later");
    await sim!.until(() => sim!.finalizers().includes(s.FINALIZER), 'the finalizer');
    await sim!.advance(10_000);
    await sim!.delete();
    await sim!.until(() => sim!.object() === undefined, 'the object to vanish');

    expect(calls).toEqual(['retrying@kopf-example-1#0']);
    expect(sim!.times("Daemon 'delayed' has exited on request and will not be retried or restarted.", s.DEBUG)).toEqual([10_000]);
    expect(sim!.times("Daemon 'retrying' has exited on request and will not be retried or restarted.", s.DEBUG)).toEqual([10_000]);
    expect(sim!.times('Removing the finalizer, thus allowing the actual deletion.')).toEqual([10_000]);
  });

  it('R-DAEMON-4 A-16 a daemon that exits on its own is not re-spawned, releases the finalizer on the next event, and runs again after a restart', async () => {
    const registry = new OperatorRegistry();
    observe(registry);
    const runs: number[] = [];
    on.daemon('kopfexamples', { registry }, async function once({ logger }) {
      runs.push(sim!.now);
      logger.info('Running once.');
    });
    await start(registry);
    await sim!.create();
    await sim!.waitFor("Daemon 'once' has exited on its own and will not be retried or restarted.");
    expect(sim!.grep("Daemon 'once' has exited on its own and will not be retried or restarted.").map((l) => l.level)).toEqual([s.DEBUG]);
    await sim!.waitFor('Removing the finalizer, as there are no handlers requiring it.');
    await sim!.until(() => sim!.finalizers().length === 0, 'the finalizer to be removed');
    for (const field of ['a', 'b']) {
      await sim!.patch({ spec: { field } });
      await sim!.waitFor(`Seen kopf-example-1: field=${field}`);
    }
    await sim!.advance(600_000);
    expect(runs).toHaveLength(1);
    expect(sim!.grep('Running once.')).toHaveLength(1);
    // The finalizer came and went once: added in the first cycle, removed on the next event.
    expect(sim!.grep('Adding the finalizer, thus preventing the actual deletion.')).toHaveLength(1);
    expect(sim!.grep('Removing the finalizer, as there are no handlers requiring it.')).toHaveLength(1);

    await sim!.restart();
    await sim!.waitFor('Running once.', { times: 2 });
    await sim!.waitFor("Daemon 'once' has exited on its own", { times: 2 });
    await sim!.waitFor('Adding the finalizer, thus preventing the actual deletion.', { times: 2 });
    await sim!.waitFor('Removing the finalizer, as there are no handlers requiring it.', { times: 2 });
    await sim!.until(() => sim!.finalizers().length === 0, 'the finalizer to be removed again');
    expect(runs).toHaveLength(2);
  });

  it('R-DAEMON-4 a permanent failure is an exit on its own; a stopped daemon exits on request', async () => {
    const registry = new OperatorRegistry();
    on.daemon('kopfexamples', { registry }, async function broken() {
      throw new PermanentError('broken for good');
    });
    on.daemon('kopfexamples', { registry }, async function waiting({ stopped }) {
      await stopped.wait();
    });
    await start(registry);
    await sim!.create();
    await sim!.waitFor("Daemon 'broken' has exited on its own and will not be retried or restarted.");
    expect(sim!.grep("Daemon 'broken' failed permanently: broken for good", s.ERROR)).toHaveLength(1);
    await sim!.until(() => sim!.finalizers().includes(s.FINALIZER), 'the finalizer');
    await sim!.delete();
    await sim!.until(() => sim!.object() === undefined, 'the object to vanish');
    expect(sim!.grep("Daemon 'waiting' has exited on request and will not be retried or restarted.", s.DEBUG)).toHaveLength(1);
    expect(sim!.grep("Daemon 'waiting' has exited on its own")).toEqual([]);
    expect(sim!.grep("Daemon 'broken' has exited")).toHaveLength(1);
  });

  it('R-DAEMON-5 the stop flag: isSet(), reason, wait() with and without a timeout, a read-only view, the signal untouched at the graceful stage', async () => {
    const registry = new OperatorRegistry();
    const seen: Json[] = [];
    let flag: DaemonStopped | undefined;
    on.daemon('kopfexamples', { registry, cancellationBackoff: 10 }, async function watchful({ stopped }) {
      flag = stopped;
      seen.push({ at: sim!.now, set: stopped.isSet(), reason: stopped.reason, aborted: stopped.signal.aborted });
      const timedOut = await stopped.wait(10);
      seen.push({ at: sim!.now, waited: timedOut, set: stopped.isSet() });
      const woken = await stopped.wait();
      seen.push({ at: sim!.now, waited: woken, set: stopped.isSet(), reason: reasonNames(stopped.reason), aborted: stopped.signal.aborted });
      seen.push({ again: await stopped.wait(5) });
    });
    await start(registry);
    await sim!.create();
    await sim!.waitFor("Daemon 'watchful' is invoked.");
    await sim!.until(() => sim!.finalizers().includes(s.FINALIZER), 'the finalizer');
    await sim!.advance(10_000);
    await sim!.advance(2_000);
    await sim!.delete();
    await sim!.until(() => sim!.object() === undefined, 'the object to vanish');

    expect(seen).toEqual([
      { at: 0, set: false, reason: null, aborted: false },
      { at: 10_000, waited: false, set: false },
      { at: 12_000, waited: true, set: true, reason: ['RESOURCE_DELETED'], aborted: false },
      { again: true },
    ]);
    // What the daemon holds is a read-only view: it cannot set, abort or replace anything.
    expect(Object.isFrozen(flag)).toBe(true);
    expect('set' in flag! || 'abort' in flag!).toBe(false);
    expect(flag!.reason! & R.DONE).toBe(R.DONE);
    // The daemon exited at once: no graceful stage was needed.
    expect(sim!.grep('signalled to exit')).toEqual([]);
  });

  it('R-DAEMON-5 an error after the signal is aborted is a cancellation: a WARNING, no retry', async () => {
    const registry = new OperatorRegistry();
    const calls: number[] = [];
    on.daemon('kopfexamples', { registry, backoff: 1, cancellationTimeout: 10 }, async function cancellable({ stopped }) {
      calls.push(sim!.now);
      await new Promise((_resolve, reject) => stopped.signal.addEventListener('abort', () => reject(new Error('aborted by the signal'))));
    });
    await start(registry);
    await sim!.create();
    await sim!.waitFor("Daemon 'cancellable' is invoked.");
    await sim!.until(() => sim!.finalizers().includes(s.FINALIZER), 'the finalizer');
    await sim!.delete();
    await sim!.until(() => sim!.object() === undefined, 'the object to vanish');
    await sim!.advance(60_000);

    expect(calls).toEqual([0]);
    expect(sim!.grep("Daemon 'cancellable' is signalled to exit by force.", s.DEBUG).map((l) => l.at)).toEqual([0]);
    expect(sim!.grep("Daemon 'cancellable' is cancelled. Will escalate.", s.WARNING).map((l) => l.at)).toEqual([0]);
    expect(sim!.grep(/failed|will try again/)).toEqual([]);
    expect(sim!.times('Removing the finalizer, thus allowing the actual deletion.')).toEqual([0]);
  });

  describe('R-DAEMON-11 the instant exit', () => {
    /** A daemon that needs a few turns of the event loop to exit after its flag is set. */
    function register(registry: OperatorRegistry, options: { cleanupMs?: number; turns?: number } = {}): void {
      on.daemon('kopfexamples', { registry, cancellationBackoff: 2 }, async function tidy({ stopped, logger }) {
        await stopped.wait();
        for (let turn = 0; turn < (options.turns ?? 0); turn += 1) await new Promise((resolve) => setImmediate(resolve));
        if (options.cleanupMs) {
          logger.info('Cleaning up.');
          await sim!.clock.sleep(options.cleanupMs);
        }
      });
    }

    async function deleteAndRelease(): Promise<void> {
      await sim!.create();
      await sim!.waitFor("Daemon 'tidy' is invoked.");
      await sim!.until(() => sim!.finalizers().includes(s.FINALIZER), 'the finalizer');
      await sim!.delete();
    }

    it('R-DAEMON-11 with the default 10 zero-time cycles, a daemon exiting within a few turns releases the finalizer in the same cycle', async () => {
      const registry = new OperatorRegistry();
      register(registry, { turns: 3 });
      await start(registry);
      expect(sim!.settings.background.instantExitZeroTimeCycles).toBe(10);
      await deleteAndRelease();
      await sim!.until(() => sim!.object() === undefined, 'the object to vanish');
      expect(sim!.times('Removing the finalizer, thus allowing the actual deletion.')).toEqual([0]);
      expect(sim!.grep(/signalled to exit|Sleeping for/)).toEqual([]);
    });

    it('R-DAEMON-11 with fewer zero-time cycles than the daemon needs, the graceful stage runs its course', async () => {
      const registry = new OperatorRegistry();
      register(registry, { turns: 3 });
      await start(registry, (settings) => {
        settings.background.instantExitZeroTimeCycles = 1;
      });
      await deleteAndRelease();
      await sim!.waitFor('Sleeping for 2 seconds for the delayed handlers.');
      await sim!.waitFor("Daemon 'tidy' has exited on request");
      await sim!.advance(2000);
      await sim!.until(() => sim!.object() === undefined, 'the object to vanish');
      expect(sim!.times("Daemon 'tidy' is signalled to exit gracefully.", s.DEBUG)).toEqual([0]);
      expect(sim!.times('Removing the finalizer, thus allowing the actual deletion.')).toEqual([2000]);
    });

    it('R-DAEMON-11 instantExitTimeout waits up to that many seconds for the daemon to exit', async () => {
      const registry = new OperatorRegistry();
      register(registry, { cleanupMs: 300 });
      await start(registry, (settings) => {
        settings.background.instantExitTimeout = 0.5;
      });
      await deleteAndRelease();
      await sim!.waitFor('Cleaning up.');
      await sim!.advance(300);
      await sim!.until(() => sim!.object() === undefined, 'the object to vanish');
      expect(sim!.times("Daemon 'tidy' has exited on request and will not be retried or restarted.")).toEqual([300]);
      expect(sim!.times('Removing the finalizer, thus allowing the actual deletion.')).toEqual([300]);
      expect(sim!.grep(/signalled to exit|Sleeping for/)).toEqual([]);
    });

    it('R-DAEMON-11 a cleanup longer than instantExitTimeout goes on to the graceful stage', async () => {
      const registry = new OperatorRegistry();
      register(registry, { cleanupMs: 800 });
      await start(registry, (settings) => {
        settings.background.instantExitTimeout = 0.5;
      });
      await deleteAndRelease();
      await sim!.waitFor('Cleaning up.');
      await sim!.advance(500);
      await sim!.waitFor('Sleeping for 1.5 seconds for the delayed handlers.');
      await sim!.advance(300);
      await sim!.waitFor("Daemon 'tidy' has exited on request");
      await sim!.advanceTo(2000);
      await sim!.until(() => sim!.object() === undefined, 'the object to vanish');
      expect(sim!.times("Daemon 'tidy' is signalled to exit gracefully.", s.DEBUG)).toEqual([500]);
      expect(sim!.times("Daemon 'tidy' has exited on request")).toEqual([800]);
      expect(sim!.times('Removing the finalizer, thus allowing the actual deletion.')).toEqual([2000]);
    });
  });

  it('R-DAEMON-12 a function returning a non-promise value has finished: its result and patch are applied, it exited on its own', async () => {
    const registry = new OperatorRegistry();
    on.daemon('kopfexamples', { registry }, function synchronous({ patch }) {
      patch.status['note'] = 'written synchronously';
      return { message: 'sync result' };
    });
    await start(registry);
    await sim!.create();
    await sim!.waitFor("Daemon 'synchronous' has exited on its own and will not be retried or restarted.");
    expect(sim!.times("Daemon 'synchronous' succeeded.", s.INFO)).toEqual([0]);
    await sim!.until(() => (sim!.object()?.['status'] as Json | undefined)?.['synchronous'] !== undefined, 'the result');
    expect(sim!.object()!['status']).toEqual({ note: 'written synchronously', synchronous: { message: 'sync result' } });
    // As for any daemon that exited on its own, the next event releases the finalizer (R-DAEMON-4).
    await sim!.patch({ spec: { field: 'next' } });
    await sim!.waitFor('Removing the finalizer, as there are no handlers requiring it.');
    await sim!.until(() => sim!.finalizers().length === 0, 'the finalizer to go');
    expect(sim!.grep("Daemon 'synchronous' is invoked.")).toHaveLength(1);
  });

  it('R-KWARGS-8 body, spec, meta, status, labels and annotations are live views of the newest body; writing to them throws', async () => {
    const registry = new OperatorRegistry();
    observe(registry);
    const seen: Json[] = [];
    const refused: string[] = [];
    on.daemon('kopfexamples', { registry }, async function reader({ body, spec, meta, status, labels, annotations, stopped }) {
      while (!(await stopped.wait(1))) {
        seen.push({
          at: sim!.now,
          field: spec['field'],
          nested: (body['spec'] as Json)['field'],
          label: labels['somelabel'],
          annotation: annotations['someannotation'],
          status: status['phase'] ?? null,
          labelsInMeta: meta.labels?.['somelabel'],
        });
      }
      const attempts: [string, () => void][] = [
        [
          'spec',
          () => {
            (spec as Json)['field'] = 'hacked';
          },
        ],
        [
          'body',
          () => {
            delete (body as Json)['spec'];
          },
        ],
        [
          'labels',
          () => {
            (labels as Record<string, string>)['somelabel'] = 'hacked';
          },
        ],
        [
          'nested',
          () => {
            ((body as Json)['spec'] as Json)['field'] = 'hacked';
          },
        ],
      ];
      for (const [what, attempt] of attempts) {
        try {
          attempt();
        } catch (error) {
          refused.push(`${what}: ${(error as Error).constructor.name}`);
        }
      }
    });
    await start(registry);
    await sim!.create();
    await sim!.waitFor("Daemon 'reader' is invoked.");
    await sim!.advance(1000);
    await sim!.patch({ spec: { field: 'changed' }, metadata: { labels: { somelabel: 'other' }, annotations: { someannotation: 'other' } } });
    await suite.cluster.store.patch(s.KEX, 'kopf-example-1', { status: { phase: 'Ready' } }, { namespace: 'default', subresource: 'status' });
    await sim!.waitFor('Seen kopf-example-1: field=changed', { times: 2 });
    await sim!.advance(1000);
    await sim!.delete();
    await sim!.until(() => sim!.object() === undefined, 'the object to vanish');

    expect(seen).toEqual([
      { at: 1000, field: 'value', nested: 'value', label: 'somevalue', annotation: 'somevalue', status: null, labelsInMeta: 'somevalue' },
      { at: 2000, field: 'changed', nested: 'changed', label: 'other', annotation: 'other', status: 'Ready', labelsInMeta: 'other' },
    ]);
    expect(refused).toEqual(['spec: TypeError', 'body: TypeError', 'labels: TypeError', 'nested: TypeError']);
  });

  it('R-PATCH-8 the patch of a daemon is applied after every invocation, failed ones included, and reset in between', async () => {
    const registry = new OperatorRegistry();
    on.daemon('kopfexamples', { registry }, async function patching({ retry, patch }) {
      if (retry === 0) patch.status['first'] = 'only in the first patch';
      if (retry < 3) {
        patch.status['message'] = `Failed ${retry + 1} times.`;
        throw new TemporaryError('Simulated failure.', { delay: 1 });
      }
      patch.status['message'] = 'Finished.';
    });
    await start(registry);
    await sim!.create();
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      await sim!.waitFor(
        `Merge-patching the status with: {"status":{${attempt === 1 ? '"first":"only in the first patch",' : ''}"message":"Failed ${attempt} times."}}`,
      );
      await sim!.advance(1000);
    }
    await sim!.waitFor("Daemon 'patching' has exited on its own");
    await sim!.until(() => (sim!.object()?.['status'] as Json | undefined)?.['message'] === 'Finished.', 'the last patch');

    const statuses = sim!.grep('Merge-patching the status with:');
    expect(statuses.map((l) => [l.at, l.message])).toEqual([
      [0, 'Merge-patching the status with: {"status":{"first":"only in the first patch","message":"Failed 1 times."}}'],
      [1000, 'Merge-patching the status with: {"status":{"message":"Failed 2 times."}}'],
      [2000, 'Merge-patching the status with: {"status":{"message":"Failed 3 times."}}'],
      [3000, 'Merge-patching the status with: {"status":{"message":"Finished."}}'],
    ]);
    // Each patch right after its failed attempt, before the next one.
    const order = sim!.messages('default/kopf-example-1').filter((m) => /failed temporarily|Merge-patching the status/.test(m));
    expect(order).toEqual([
      "Daemon 'patching' failed temporarily: Simulated failure.",
      statuses[0]!.message,
      "Daemon 'patching' failed temporarily: Simulated failure.",
      statuses[1]!.message,
      "Daemon 'patching' failed temporarily: Simulated failure.",
      statuses[2]!.message,
      statuses[3]!.message,
    ]);
  });

  it('R-PATCH-8 transformation functions refused by a conflict are carried over to the next invocation', async () => {
    const registry = new OperatorRegistry();
    const calls: number[] = [];
    // The second invocation does not even look at its patch: the carried-over functions go out all the same.
    on.daemon('kopfexamples', { registry, initialDelay: 5 }, async function labelling(kwargs) {
      const { retry } = kwargs;
      calls.push(retry);
      if (retry === 0) {
        kwargs.patch.fns.push((body) => {
          const meta = (body as { metadata: { labels?: Record<string, string> } }).metadata;
          meta.labels = { ...meta.labels, labelled: 'yes' };
        });
      }
      if (retry < 1) throw new TemporaryError('again', { delay: 10 });
    });
    await start(registry);
    await sim!.create();
    await sim!.until(() => sim!.finalizers().includes(s.FINALIZER), 'the finalizer');
    suite.cluster.faults.add({
      method: 'PATCH',
      resource: 'kopfexamples',
      name: 'kopf-example-1',
      times: 1,
      action: { respond: { code: 422, reason: 'Invalid' } },
    });
    await sim!.advance(5000);
    await sim!.waitFor('Could not apply the patch in full due to conflicts with newer changes.');
    expect(sim!.object()!['metadata']).not.toHaveProperty('labels.labelled');
    await sim!.advance(10_000);
    await sim!.waitFor("Daemon 'labelling' has exited on its own");
    await sim!.until(() => ((sim!.object()?.['metadata'] as Json)['labels'] as Json)['labelled'] === 'yes', 'the carried-over label');
    expect(calls).toEqual([0, 1]);
    expect(sim!.times(/^JSON-patching the resource with: .*labelled/)).toEqual([5000, 15_000]);
  });
});
