/**
 * The daemons engine against bad input and faults: daemons that ignore their stop flag (with and
 * without `cancellationTimeout`), throw values that are not errors, never await or return at once,
 * a thousand objects deleted at once while their daemons run, and an operator stopped while the
 * daemons of several objects are in the middle of their stop stages. Each is handled as the runtime
 * reference says, with its log lines, and no finalizer is left behind — except where it wants one
 * kept: on an object still being deleted when the operator stops (R-FINAL-6), which the next operator
 * then releases.
 *
 * What cannot be handled, and is not tested: a daemon that loops forever without ever awaiting
 * blocks the event loop of the whole process (JavaScript cannot preempt it); R-DAEMON-12 says
 * daemons must be `async` and await regularly (see the user's guide).
 *
 * Everything runs on a virtual clock, except the thousand objects, which run in real time with
 * waits for what must happen.
 */
import { describe, expect, it } from 'vitest';

import type * as settingsModule from '../../../../runtime/cogs/configs/settings.js';
import { TemporaryError } from '../../../../runtime/core/actions/errors.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import { on } from '../../../../runtime/on.js';
import * as s from '../../../support/virtualtime.js';

type Json = Record<string, unknown>;

describe('daemons: bad input and faults', () => {
  const suite = s.simulationPerTest();
  let sim: s.Simulation | undefined;

  async function start(
    registry: OperatorRegistry,
    options: {
      configure?: (settings: settingsModule.OperatorSettings) => void;
      clock?: 'real';
    } = {},
  ): Promise<s.Simulation> {
    sim = await suite.start({ registry, settings: s.settings(options.configure), clock: options.clock });
    return sim;
  }

  const finalizersOf = (name: string): string[] => sim!.finalizers(name);

  it('R-DAEMON-7 P-9 a daemon ignoring its stop flag without cancellationTimeout blocks the deletion, checked every 60 s, until it exits', async () => {
    const registry = new OperatorRegistry();
    const release = s.deferred();
    on.daemon('kopfexamples', { registry }, async function deaf() {
      await release.promise;
    });
    await start(registry);
    await sim!.create();
    await sim!.waitFor("Daemon 'deaf' is invoked.");
    await sim!.until(() => finalizersOf('kopf-example-1').includes(s.FINALIZER), 'the finalizer');
    await sim!.delete();
    for (let check = 1; check <= 11; check += 1) {
      await sim!.waitFor('Sleeping for 60 seconds for the delayed handlers.', { times: check });
      if (check < 11) await sim!.advance(60_000);
    }
    // Ten virtual minutes later, the object is still there, held by our finalizer.
    expect(sim!.now).toBe(600_000);
    expect(finalizersOf('kopf-example-1')).toEqual([s.FINALIZER]);
    expect(sim!.times("Daemon 'deaf' is still exiting. The next check is in 60 seconds.", s.DEBUG)).toEqual(Array.from({ length: 11 }, (_, i) => i * 60_000));
    release.resolve();
    await sim!.waitFor("Daemon 'deaf' has exited on request");
    await sim!.advance(60_000);
    await sim!.until(() => sim!.object() === undefined, 'the object to vanish');
    expect(sim!.times('Removing the finalizer, thus allowing the actual deletion.')).toEqual([660_000]);
    expect(sim!.grep(/orphaned|by force/)).toEqual([]);
  });

  it('R-DAEMON-6 a daemon ignoring its stop flag and its signal, with cancellationTimeout, is abandoned and no longer blocks the deletion', async () => {
    const registry = new OperatorRegistry();
    let loops = 0;
    on.daemon('kopfexamples', { registry, cancellationTimeout: 3 }, async function busy() {
      for (;;) {
        await sim!.clock.sleep(1000);
        loops += 1;
      }
    });
    await start(registry);
    await sim!.create();
    await sim!.waitFor("Daemon 'busy' is invoked.");
    await sim!.until(() => finalizersOf('kopf-example-1').includes(s.FINALIZER), 'the finalizer');
    await sim!.delete();
    await sim!.waitFor('Sleeping for 3 seconds for the delayed handlers.');
    await sim!.advance(3000);
    await sim!.until(() => sim!.object() === undefined, 'the object to vanish');
    const before = loops;
    await sim!.advance(5000);
    expect(loops).toBe(before + 5); // the orphan runs on, but nothing waits for it
    expect(sim!.times("Daemon 'busy' is signalled to exit by force.")).toEqual([0]);
    expect(sim!.times("Daemon 'busy' did not exit in time. Leaving it orphaned.", s.WARNING)).toEqual([3000]);
    expect(sim!.times('Removing the finalizer, thus allowing the actual deletion.')).toEqual([3000]);
  });

  it('R-ERRORS-3 R-DAEMON-3 thrown values that are not errors are arbitrary errors: retried with the backoff, logged by their text or type', async () => {
    const registry = new OperatorRegistry();
    const thrown: Record<string, unknown> = {
      text: 'plain text',
      shapeless: { code: 42 },
      shaped: { message: 'shaped like an error' },
      nothing: undefined,
      empty: null,
      number: 42,
    };
    const calls: string[] = [];
    for (const [id, value] of Object.entries(thrown)) {
      on.daemon('kopfexamples', { registry, id, backoff: 1, retries: 2 }, function thrower({ retry }) {
        calls.push(`${id}#${retry}@${sim!.now}`);
        throw value;
      });
    }
    await start(registry);
    await sim!.create();
    await sim!.waitFor('failed with an exception and will try again in 1 seconds', { times: 6 });
    await sim!.advance(1000);
    await sim!.waitFor('has exited on its own and will not be retried or restarted.', { times: 6 });

    const texts: Record<string, string> = {
      text: 'plain text',
      shapeless: 'Object',
      shaped: 'shaped like an error',
      nothing: 'undefined',
      empty: 'null',
      number: '42',
    };
    for (const [id, text] of Object.entries(texts)) {
      expect(sim!.grep(`Daemon '${id}' failed with an exception and will try again in 1 seconds: ${text}`, s.ERROR).map((l) => l.message)).toEqual([
        `Daemon '${id}' failed with an exception and will try again in 1 seconds: ${text}`,
      ]);
      expect(sim!.times(`Daemon '${id}' failed with an exception and will stop now (it would exceed 2 retries on the next attempt): ${text}`, s.ERROR)).toEqual(
        [1000],
      );
    }
    expect(calls.sort()).toEqual(
      Object.keys(thrown)
        .flatMap((id) => [`${id}#0@0`, `${id}#1@1000`])
        .sort(),
    );
    // All exited on their own: the next event releases the finalizer; the deletion needs nothing more.
    await sim!.patch({ spec: { field: 'next' } });
    await sim!.until(() => finalizersOf('kopf-example-1').length === 0, 'the finalizer to go');
    await sim!.delete();
    await sim!.until(() => sim!.object() === undefined, 'the object to vanish');
  });

  it('R-DAEMON-5 a value that is not an error, thrown after the signal is aborted, is a cancellation too', async () => {
    const registry = new OperatorRegistry();
    on.daemon('kopfexamples', { registry, cancellationTimeout: 1 }, async function rejecting({ stopped }) {
      await new Promise((_resolve, reject) => stopped.signal.addEventListener('abort', () => reject('a plain string')));
    });
    await start(registry);
    await sim!.create();
    await sim!.waitFor("Daemon 'rejecting' is invoked.");
    await sim!.until(() => finalizersOf('kopf-example-1').includes(s.FINALIZER), 'the finalizer');
    await sim!.delete();
    await sim!.until(() => sim!.object() === undefined, 'the object to vanish');
    expect(sim!.times("Daemon 'rejecting' is cancelled. Will escalate.", s.WARNING)).toEqual([0]);
    expect(sim!.grep(/failed|try again/)).toEqual([]);
  });

  it('R-DAEMON-12 daemons that never await or return at once have finished; a synchronous failure is retried; the operator goes on', async () => {
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    on.daemon('kopfexamples', { registry }, function blocking() {
      let sum = 0;
      for (let i = 0; i < 1_000_000; i += 1) sum += i;
      calls.push(`blocking:${sum > 0}`);
    });
    on.daemon('kopfexamples', { registry }, async function neverAwaiting() {
      calls.push('neverAwaiting');
    });
    on.daemon('kopfexamples', { registry }, function immediate() {
      /* nothing at all */
    });
    on.daemon('kopfexamples', { registry }, function failingSynchronously({ retry }) {
      calls.push(`failingSynchronously#${retry}`);
      if (retry === 0) throw new TemporaryError('not yet', { delay: 1 });
    });
    await start(registry);
    await sim!.create();
    await sim!.waitFor("Daemon 'failingSynchronously' failed temporarily: not yet");
    await sim!.advance(1000);
    await sim!.waitFor('has exited on its own and will not be retried or restarted.', { times: 4 });
    expect(calls.sort()).toEqual(['blocking:true', 'failingSynchronously#0', 'failingSynchronously#1', 'neverAwaiting']);
    for (const id of ['blocking', 'neverAwaiting', 'immediate']) expect(sim!.times(`Daemon '${id}' succeeded.`)).toEqual([0]);
    expect(sim!.times("Daemon 'failingSynchronously' succeeded.")).toEqual([1000]);

    // The operator is not stuck: later events are processed, no daemon starts again, the finalizer goes.
    await sim!.patch({ spec: { field: 'next' } });
    await sim!.until(() => finalizersOf('kopf-example-1').length === 0, 'the finalizer to go');
    await sim!.create('kopf-example-2');
    await sim!.waitFor("Daemon 'failingSynchronously' failed temporarily: not yet", { times: 2 });
    await sim!.advance(1000);
    await sim!.waitFor('has exited on its own and will not be retried or restarted.', { times: 8 });
    expect(calls.filter((c) => c === 'neverAwaiting')).toHaveLength(2);
    expect(sim!.context.daemons!.size).toBe(0);
  });

  it('R-DAEMON-7 R-FINAL-5 1,000 objects deleted at once while their daemons run: all daemons stop, all finalizers go, nothing is stuck', async () => {
    const count = 1000;
    const registry = new OperatorRegistry();
    let running = 0;
    let started = 0;
    let exited = 0;
    on.daemon('kopfexamples', { registry, cancellationBackoff: 1, cancellationTimeout: 1 }, async function accompanying({ stopped }) {
      started += 1;
      running += 1;
      try {
        while (!(await stopped.wait(0.5))) {
          /* accompanying the object */
        }
      } finally {
        running -= 1;
        exited += 1;
      }
    });
    await start(registry, {
      clock: 'real',
      configure: (settings) => {
        settings.posting.enabled = false;
      },
    });
    const names = Array.from({ length: count }, (_, i) => `kopf-example-${i}`);
    await Promise.all(names.map((name) => suite.cluster.store.create(s.kopfExample(name))));
    const withFinalizer = (): number =>
      suite.cluster.store.list(s.KEX, 'default').filter((body) => ((body['metadata'] as Json)['finalizers'] as string[] | undefined)?.includes(s.FINALIZER))
        .length;
    await sim!.until(() => started === count && withFinalizer() === count, `${count} daemons and finalizers`, 30_000);

    await Promise.all(names.map((name) => suite.cluster.store.delete(s.KEX, name, { namespace: 'default' })));
    await sim!.until(() => suite.cluster.store.list(s.KEX, 'default').length === 0, `all ${count} objects to vanish`, 30_000);

    expect(exited).toBe(count);
    expect(running).toBe(0);
    expect(sim!.context.daemons!.size).toBe(0);
    expect(sim!.grep("Daemon 'accompanying' has exited on request and will not be retried or restarted.")).toHaveLength(count);
    expect(sim!.grep('Removing the finalizer, thus allowing the actual deletion.')).toHaveLength(count);
    expect(sim!.lines.filter((l) => l.level >= s.WARNING).map((l) => `${l.object}: ${l.message}`)).toEqual([]);
  }, 90_000);

  it('R-DAEMON-8 the operator stopped while daemons of several objects are mid-stage: stages go on in memory, the hung-task limit ends them, the next operator releases the finalizers', async () => {
    const registry = new OperatorRegistry();
    const starts: string[] = [];
    on.daemon(
      'kopfexamples',
      { registry, id: 'staged', labels: { kind: 'staged' }, cancellationBackoff: 2, cancellationTimeout: 2 },
      async function staged({ name }) {
        starts.push(`staged@${name}`);
        await new Promise<never>(() => undefined);
      },
    );
    on.daemon('kopfexamples', { registry, id: 'polled', labels: { kind: 'polled' } }, async function polled({ name, stopped }) {
      starts.push(`polled@${name}`);
      await new Promise((resolve) => stopped.signal.addEventListener('abort', resolve));
    });
    on.daemon('kopfexamples', { registry, id: 'polite', labels: { kind: 'polite' } }, async function polite({ name, stopped }) {
      starts.push(`polite@${name}`);
      await stopped.wait();
    });
    await start(registry);
    for (const kind of ['staged', 'polled', 'polite']) await sim!.create(`object-${kind}`, { metadata: { labels: { kind } } });
    await sim!.until(() => ['staged', 'polled', 'polite'].every((kind) => finalizersOf(`object-${kind}`).includes(s.FINALIZER)), 'the finalizers');
    await sim!.waitFor('JSON-patching the resource with:', { times: 3 });
    await sim!.delete('object-staged');
    await sim!.delete('object-polled');
    await sim!.waitFor('Sleeping for 2 seconds for the delayed handlers.');
    await sim!.waitFor('Sleeping for 60 seconds for the delayed handlers.');
    await sim!.advance(1000);

    sim!.requestStop();
    await sim!.waitFor("Daemon 'polled' did not exit in time. Leaving it orphaned.");
    await sim!.waitFor("Daemon 'polite' has exited on request");
    await sim!.advance(1000);
    await sim!.waitFor("Daemon 'staged' is signalled to exit by force.");
    await sim!.advance(2000);
    await sim!.waitFor("Daemon 'staged' did not exit in time. Leaving it orphaned.");
    await sim!.stop({ stepMs: 500 });

    const at = (text: string): number[] => sim!.times(text);
    expect(at("Daemon 'staged' is signalled to exit gracefully.")).toEqual([0]);
    expect(at("Daemon 'staged' is signalled to exit by force.")).toEqual([2000]);
    expect(at("Daemon 'staged' did not exit in time. Leaving it orphaned.")).toEqual([4000]);
    expect(at("Daemon 'polled' did not exit in time. Leaving it orphaned.")).toEqual([1000]);
    expect(at("Daemon 'polite' has exited on request")).toEqual([1000]);
    expect(at("Root tasks are not stopped in 5 seconds: 'daemon killer'. Cancelling their work.")).toEqual([6000]);
    expect(at("Daemon 'staged' is cancelled. Will escalate.")).toEqual([6000]);
    expect(at("Daemon 'polled' is cancelled. Will escalate.")).toEqual([6000]);
    expect(sim!.error).toBeUndefined();
    expect(sim!.context.daemons!.size).toBe(0);
    // Objects being deleted keep the finalizer while no operator runs (R-FINAL-6)...
    expect(finalizersOf('object-staged')).toEqual([s.FINALIZER]);
    expect(finalizersOf('object-polled')).toEqual([s.FINALIZER]);

    // ...and the next operator releases them at once: no daemon is spawned for an object being deleted.
    await sim!.restart();
    await sim!.until(() => sim!.object('object-staged') === undefined && sim!.object('object-polled') === undefined, 'the deleted objects to vanish');
    await sim!.waitFor("Daemon 'polite' is invoked.", { times: 2 });
    expect(starts.sort()).toEqual(['polite@object-polite', 'polite@object-polite', 'polled@object-polled', 'staged@object-staged']);
    expect(finalizersOf('object-polite')).toEqual([s.FINALIZER]);
  });
});
