/**
 * A-24 with examples/12-embedded (Kopf's 12-embedded in TypeScript): the example's program, `main()`,
 * is run as its script would run, against a devcluster given by a kubeconfig, with its output
 * collected. It starts the operator with `operator()`, creates and deletes three objects once the
 * operator is ready, each greeted and bidden farewell by the handlers through the memo, and stops
 * the operator with its stop flag; the operator installs no signal handlers in the program, and the program's
 * other work goes on after the operator has stopped.
 *
 * The program waits for what the handlers tell it and for the deletions, never for time; the
 * operator runs on the real clock, as nothing in it depends on time here.
 */
import { describe, expect, it, vi } from 'vitest';

import { main } from '../../examples/12-embedded/example.js';
import { setLogSink } from '../../runtime/core/actions/logging.js';
import { KEX, useExampleCluster } from './support.js';

describe('examples/12-embedded', () => {
  const example = useExampleCluster();

  it('A-24 12-embedded: the program greets and bids farewell to its three objects between the ready and stop flags, and goes on', async () => {
    const signalListeners = (): number[] => ['SIGINT', 'SIGTERM'].map((signal) => process.listenerCount(signal));
    const before = signalListeners();
    const printed: string[] = [];
    let log = '';
    const failures: string[] = []; // messages logged with an error (and its stack trace)
    const restore = setLogSink((line, record) => {
      log += `${line}\n`;
      if (record.error !== undefined) failures.push(line);
    });
    // Other work of the host program, running beside the operator: a loop of its own that only
    // the host stops. Stopping the operator must not stop it.
    const host = new AbortController();
    let ticks = 0;
    const hostWork = (async () => {
      while (!host.signal.aborted) {
        ticks += 1;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    let ticksAtStop = 0;
    try {
      await main({ kubeconfig: example.kubeconfig, print: (line) => printed.push(line) });
      ticksAtStop = ticks;
      await vi.waitFor(() => expect(ticks).toBeGreaterThan(ticksAtStop + 10));
    } finally {
      restore();
      host.abort();
      await hostWork;
    }
    expect(ticksAtStop).toBeGreaterThan(0);

    expect(printed).toEqual([
      'Starting the main app.',
      'Do the main app activity here. Step 1/3.',
      'Hello, kopf-example-0!',
      'Good bye, kopf-example-0!',
      'Do the main app activity here. Step 2/3.',
      'Hello, kopf-example-1!',
      'Good bye, kopf-example-1!',
      'Do the main app activity here. Step 3/3.',
      'Hello, kopf-example-2!',
      'Good bye, kopf-example-2!',
      'Exiting the main app.',
    ]);
    const lines = log.split('\n');
    const count = (text: string): number => lines.filter((line) => line.includes(text)).length;
    for (const n of [0, 1, 2]) {
      expect(count(`[default/kopf-example-${n}] Handler 'create_fn' succeeded.`)).toBe(1);
      expect(count(`[default/kopf-example-${n}] Handler 'delete_fn' succeeded.`)).toBe(1);
    }
    expect(count('Stop-flag is raised. Operator is stopping.')).toBe(1);
    expect(failures).toEqual([]);
    // The program waited for the deletions: its objects are gone, none kept by a finalizer.
    expect(example.cluster.store.list(KEX, 'default')).toEqual([]);
    // The operator left the program's signal handling alone.
    expect(signalListeners()).toEqual(before);
  });
});
