/**
 * Scenario A-24 (the original's `12-embedded` example): an operator embedded into a host program
 * with `operator()`, a ready flag and a stop flag; the host keeps running after it stops.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import { Calls } from '../../../fixtures/operators/calls.js';
import * as embedded from '../../../fixtures/operators/a24-embedded.js';
import * as settingsModule from '../../../runtime/cogs/configs/settings.js';
import * as logging from '../../../runtime/core/actions/logging.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as h from '../../support/scenarios.js';

describe('an embedded operator', () => {
  let cluster: DevCluster;

  beforeAll(async () => {
    cluster = await h.startCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('A-24 runs in the background of a host program and stops by the stop flag only', async () => {
    let text = '';
    const restore = logging.setLogSink((line) => {
      text += `${line}\n`;
    });
    logging.configure({ verbose: true });
    const output = new h.Output(() => text);
    const signalListeners = (): number[] => ['SIGINT', 'SIGTERM'].map((name) => process.listenerCount(name));
    const listenersBefore = signalListeners();

    // The host program's own work, which the operator must not cancel: its timers are the host's
    // (they run while the operator does), not waits of the test.
    let ticks = 0;
    const ticker = setInterval(() => {
      ticks += 1;
    }, 50);
    const hostWork = new Promise<string>((resolve) => setTimeout(() => resolve('host work done'), 200));

    const calls = new Calls();
    const settings = new settingsModule.OperatorSettings();
    settings.execution.defaultBackoff = 1;
    settings.watching.serverTimeout = 10;
    const stopFlag = new AbortController();
    let ready = false;
    const running = embedded.embed({
      registry: embedded.register(new OperatorRegistry(), calls),
      settings,
      stopFlag: stopFlag.signal,
      readyFlag: () => {
        ready = true;
      },
    });
    let settled = false;
    void running.finally(() => {
      settled = true;
    });
    try {
      await h.eventually(() => ready, 'the ready flag');
      expect(signalListeners()).toEqual(listenersBefore);
      await h.waitForWatch(cluster, 'kopfexamples');
      for (const n of [0, 1, 2]) {
        const name = `kopf-example-${n}`;
        await h.apply(cluster, h.referenceObject({ name }));
        await output.waitFor(`Hello, ${name}!`);
        await h.remove(cluster, name);
        await output.waitFor(`Good bye, ${name}!`);
      }
      for (const n of [0, 1, 2]) await h.eventually(() => h.getObject(cluster, `kopf-example-${n}`) === undefined, 'the deletions');

      const stopping = Date.now();
      stopFlag.abort();
      await running;
      expect(Date.now() - stopping).toBeLessThan(5000);
    } finally {
      stopFlag.abort();
      await running.catch(() => undefined);
      restore();
    }
    expect(settled).toBe(true);
    for (const n of [0, 1, 2]) {
      expect(output.count(`Hello, kopf-example-${n}!`)).toBe(1);
      expect(output.count(`Good bye, kopf-example-${n}!`)).toBe(1);
    }
    expect(output.count('Stop-flag is raised. Operator is stopping.')).toBe(1);
    expect(calls.count('create_fn')).toBe(3);
    expect(calls.count('delete_fn')).toBe(3);
    // The host goes on: no signal handlers were installed, its timers and promises still run.
    expect(signalListeners()).toEqual(listenersBefore);
    const before = ticks;
    await expect(hostWork).resolves.toBe('host work done');
    await h.eventually(() => ticks > before, 'a tick of the host');
    clearInterval(ticker);
    expect(output.entries.filter((e) => e.trace !== undefined)).toEqual([]);
  });
});
