/**
 * examples/08-events (Kopf's 08-events in TypeScript), loaded from its file as
 * `kopf-gen run examples/08-events/example.ts` loads it, run in-process with `KopfRunner` on a
 * virtual clock against a devcluster with the examples' CRD. It proves what the example's README
 * promises: both on-event handlers see every watch-event (also the listing at a restart, whose
 * type is `null`), the failing one's errors are logged with their stack traces and ignored, and the
 * operator writes nothing to the object.
 */
import { describe, expect, it } from 'vitest';

import type { KopfRunner } from 'kopf-gen/testing';

import { eventually, KEX, startExample, useExampleCluster, referenceObject } from './support.js';

type Json = Record<string, unknown>;

const FAILURE = "[default/kopf-example-1] Handler 'event_fn_with_error' failed with an exception and will ignore it: Oops!";

describe('examples/08-events', () => {
  const example = useExampleCluster();

  const start = (): Promise<KopfRunner> => startExample('08-events', example.kubeconfig);
  async function stop(runner: KopfRunner): Promise<void> {
    await runner.stop();
    expect(runner.exitCode).toBe(0);
    expect(runner.exception).toBeNull();
  }

  const create = async (): Promise<void> => {
    await example.cluster.store.create(referenceObject());
  };
  const remove = async (): Promise<void> => {
    await example.cluster.store.delete(KEX, 'kopf-example-1', { namespace: 'default' });
  };
  /** The event types `normal_event_fn` logged, in order. */
  const received = (runner: KopfRunner): string[] =>
    runner.output
      .split('\n')
      .map((line) => /\[default\/kopf-example-1\] Event received: type=(\S+), resourceVersion=\d+, field=value$/.exec(line)?.[1])
      .filter((type): type is string => type !== undefined);
  const count = (runner: KopfRunner, text: string): number => runner.output.split('\n').filter((line) => line.includes(text)).length;
  /** What the operator wrote to the objects (the test writes to the store directly, not over HTTP). */
  const writes = (): unknown[] =>
    example.cluster.requests.filter((r) => r.resource === 'kopfexamples' && r.verb !== 'list' && r.verb !== 'watch' && r.verb !== 'get');

  it('A-12 08-events: every event seen by both handlers, the errors ignored with their traces, nothing written to the object', async () => {
    const runner = await start();
    try {
      // Once the operator watches (after listing), a new object comes as an ADDED event.
      await eventually(() => example.cluster.requests.filter((r) => r.resource === 'kopfexamples' && r.verb === 'watch').length > 0, 'the watch-stream');
      await create();
      await eventually(() => received(runner).length === 1, 'the ADDED event');
      await remove();
      await eventually(() => received(runner).length === 2, 'the DELETED event');
      expect(received(runner)).toEqual(['"ADDED"', '"DELETED"']);
      expect(count(runner, "[default/kopf-example-1] Handler 'normal_event_fn' succeeded.")).toBe(2);

      // The failures: one per event, each followed by its stack trace; never retried.
      const lines = runner.output.split('\n');
      const failures = lines.flatMap((line, i) => (line.endsWith(FAILURE) ? [i] : []));
      expect(failures).toHaveLength(2);
      for (const i of failures) {
        expect(lines[i + 1]).toBe('Error: Oops!');
        expect(lines[i + 2]).toMatch(/^\s+at event_fn_with_error \(.*examples\/08-events\/example\.ts:\d+:\d+\)$/);
      }
      expect(count(runner, "Handler 'event_fn_with_error' is invoked.")).toBe(2);
      // The operator patched nothing and posted no k8s-events.
      expect(writes()).toEqual([]);
      expect(example.cluster.requests.filter((r) => r.resource === 'events')).toEqual([]);
    } finally {
      await stop(runner);
    }
  });

  it('A-12 08-events after a restart: the existing object is seen once more, as listed (type null), and left untouched', async () => {
    example.cluster.requests.clear();
    await create();
    const runner = await start();
    try {
      await eventually(() => received(runner).length === 1, 'the listed object');
      expect(received(runner)).toEqual(['null']);
      const metadata = example.cluster.store.get(KEX, 'kopf-example-1', 'default')!['metadata'] as { annotations: Json; finalizers?: unknown };
      expect(metadata.annotations).toEqual({ someannotation: 'somevalue' });
      expect(metadata.finalizers).toBeUndefined();
      await remove();
      await eventually(() => received(runner).length === 2, 'the DELETED event');
      expect(received(runner)).toEqual(['null', '"DELETED"']);
      expect(writes()).toEqual([]);
    } finally {
      await stop(runner);
    }
  });
});
