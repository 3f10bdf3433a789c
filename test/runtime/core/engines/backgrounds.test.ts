/**
 * What daemons and timers are given and when they are chosen, on a virtual clock against the
 * devcluster (see `simulating.ts`). A daemon's arguments are the resource arguments, the retry
 * arguments and its stop flag (R-KWARGS-5). Which daemons and timers run for an object is decided
 * by their filters, and those are asked again on every watch-event of the object and never merely
 * because time passes (R-FILTERS-9): a long-running daemon or a ticking timer does not keep
 * re-checking its filters, so a filter that depends on something other than the object (the time
 * of day, a global flag) only takes effect with the next event.
 */
import { describe, expect, it } from 'vitest';

import { TemporaryError } from '../../../../runtime/core/actions/errors.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import { on } from '../../../../runtime/on.js';
import * as s from '../../../support/virtualtime.js';

type Json = Record<string, unknown>;

describe('daemons and timers', () => {
  const suite = s.simulationPerTest();
  let sim: s.Simulation | undefined;

  it('R-KWARGS-5 a daemon gets its stop flag, the resource arguments and the retry arguments; a retry keeps the first start', async () => {
    const registry = new OperatorRegistry();
    const seen: Json[] = [];
    on.daemon(
      'kopfexamples',
      { registry, param: { some: 'param' }, backoff: 5 },
      async function worker({
        stopped,
        resource,
        body,
        spec,
        meta,
        status,
        uid,
        name,
        namespace,
        labels,
        annotations,
        patch,
        logger,
        memo,
        param,
        retry,
        started,
        runtime,
      }) {
        seen.push({
          stopped: [typeof stopped.wait, stopped.isSet(), stopped.reason],
          resource: resource.plural,
          uid: uid === (body['metadata'] as Json)['uid'] && typeof uid === 'string' && uid !== '',
          name,
          namespace,
          spec: spec['field'],
          meta: meta.name,
          status: { ...status },
          labels: { ...labels },
          annotations: { ...annotations },
          patch: typeof patch.metadata,
          logger: typeof logger.info,
          memo: typeof memo,
          param,
          retry,
          started: started.getTime() - s.T0,
          runtime,
        });
        if (retry === 0) throw new TemporaryError('not yet', { delay: 2 });
        await stopped.wait();
      },
    );
    sim = await suite.start({ registry });
    await sim.create();
    await sim.waitFor("Daemon 'worker' failed temporarily: not yet");
    await sim.advance(2000);
    await sim.waitFor("Daemon 'worker' is invoked.", { times: 2 });

    const common = {
      stopped: ['function', false, null],
      resource: 'kopfexamples',
      uid: true,
      name: 'kopf-example-1',
      namespace: 'default',
      spec: 'value',
      meta: 'kopf-example-1',
      status: {},
      labels: { somelabel: 'somevalue' },
      annotations: { someannotation: 'somevalue' },
      patch: 'object',
      logger: 'function',
      memo: 'object',
      param: { some: 'param' },
    };
    expect(seen).toEqual([
      { ...common, retry: 0, started: 0, runtime: 0 },
      { ...common, retry: 1, started: 0, runtime: 2 },
    ]);
  });

  it('R-FILTERS-9 filters are asked on every watch-event and never as time passes: a mismatching event stops the daemon and the timer, a matching one re-spawns them', async () => {
    const registry = new OperatorRegistry();
    const asked: number[] = [];
    const running = ({ spec }: { spec: Json }): boolean => {
      asked.push(sim!.now);
      return spec['run'] === 'yes';
    };
    on.daemon('kopfexamples', { registry, when: running, cancellationPolling: 5 }, async function looping({ stopped }) {
      while (!(await stopped.wait(1))) {
        // A daemon's life is the time between its start and its stop; each loop is one second of it.
      }
    });
    on.timer('kopfexamples', { registry, when: running, interval: 1 }, function ticking() {});
    on.event('kopfexamples', { registry, id: 'observer' }, function observer({ spec, logger }) {
      logger.info(`Seen run=${String(spec['run'] ?? 'none')}`);
    });
    sim = await suite.start({ registry });

    // Creation: the ADDED event, then the event of the operator's own finalizer patch.
    await sim.create('kopf-example-1', { spec: { run: 'yes' } });
    await sim.waitFor("Daemon 'looping' is invoked.");
    await sim.until(() => sim!.finalizers().includes(s.FINALIZER), 'the finalizer');
    await sim.waitFor('Seen run=yes', { times: 2 });
    await sim.waitFor("Timer 'ticking' succeeded.");
    const afterEvents = asked.length;
    expect(afterEvents).toBeGreaterThan(0);

    // Ten seconds of virtual time: the timer ticks every second, but nobody asks the filters again.
    await sim.advance(10_000);
    expect(sim.grep("Timer 'ticking' succeeded.").length).toBeGreaterThanOrEqual(10);
    expect(asked).toHaveLength(afterEvents);

    // The next event asks them again; they say no: both stop, and time passing does not restart them.
    await sim.patch({ spec: { run: 'no' } });
    await sim.waitFor("Daemon 'looping' has exited on request");
    await sim.until(() => sim!.finalizers().length === 0, 'the finalizer to go');
    await sim.waitFor('Seen run=no', { times: 2 });
    const asked2 = asked.length;
    expect(asked2).toBeGreaterThan(afterEvents);
    const ticks = sim.grep("Timer 'ticking' succeeded.").length;
    await sim.advance(10_000);
    expect(sim.grep("Timer 'ticking' succeeded.")).toHaveLength(ticks);
    expect(sim.grep("Daemon 'looping' is invoked.")).toHaveLength(1);
    expect(asked).toHaveLength(asked2);

    // A matching event re-spawns both.
    await sim.patch({ spec: { run: 'yes' } });
    await sim.waitFor("Daemon 'looping' is invoked.", { times: 2 });
    await sim.until(() => sim!.finalizers().includes(s.FINALIZER), 'the finalizer again');
    await sim.advance(1000);
    await sim.waitFor("Timer 'ticking' succeeded.", { times: ticks + 1 });
    expect(asked.length).toBeGreaterThan(asked2);
  });
});
