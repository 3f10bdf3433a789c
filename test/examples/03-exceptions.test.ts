/**
 * examples/03-exceptions (Kopf's 03-exceptions in TypeScript), loaded from its file as
 * `kopf-gen run examples/03-exceptions/example.ts` loads it, run in-process with `KopfRunner` on a
 * virtual clock against a devcluster with the examples' CRD. The one-second retries are moved on
 * by the test, a second at a time, each time after the operator has said it is sleeping. It proves
 * what the example's README promises: how often each handler runs, which failures are logged with
 * a stack trace, and that the creation ends as processed with one success and three failures.
 */
import { describe, expect, it } from 'vitest';

import { VirtualClock } from 'kopf-gen/testing';

import { eventually, KEX, START, startExample, useExampleCluster, referenceObject } from './support.js';

type Json = Record<string, unknown>;

const HANDLERS = [
  'instant_failure_with_only_a_message',
  'eventual_success_with_a_few_messages',
  'eventual_failure_with_tracebacks',
  'instant_failure_with_traceback',
] as const;

describe('examples/03-exceptions', () => {
  const example = useExampleCluster();

  it('A-9 03-exceptions: permanent, temporary and unexpected errors, retried as told; 1 succeeded, 3 failed; records purged', async () => {
    const clock = new VirtualClock({ start: START });
    const runner = await startExample('03-exceptions', example.kubeconfig, { clock });
    const lines = (): string[] => runner.output.split('\n');
    const count = (text: string): number => lines().filter((line) => line.includes(`[default/kopf-example-1] ${text}`)).length;
    try {
      await example.cluster.store.create(referenceObject());

      // Each round ends with the operator sleeping for the delayed handlers; a virtual second wakes it.
      for (const round of [1, 2, 3]) {
        await eventually(() => count('Sleeping for ') === round, `the sleep after round ${round}`);
        expect(count("Handler 'eventual_success_with_a_few_messages' failed temporarily: Expected recoverable error.")).toBe(round);
        await clock.advance(1_000);
      }
      await eventually(() => count('Creation is processed: 1 succeeded; 3 failed.') === 1, 'the creation to be processed');
      await eventually(() => count('Something has changed, but we are not interested') === 1, 'the final patch to come back');

      // How often each handler ran: the permanent failures once, the retried ones as allowed.
      expect(HANDLERS.map((id) => count(`Handler '${id}' is invoked.`))).toEqual([1, 4, 3, 1]);
      expect(count("Handler 'instant_failure_with_only_a_message' failed permanently: Fail once and for all.")).toBe(1);
      expect(count("Handler 'eventual_success_with_a_few_messages' failed temporarily: Expected recoverable error.")).toBe(3);
      expect(count("Handler 'eventual_success_with_a_few_messages' succeeded.")).toBe(1);
      expect(
        count(
          "Handler 'eventual_failure_with_tracebacks' failed with an exception and will try again in 1 seconds: An error that is supposed to be recoverable.",
        ),
      ).toBe(2);
      expect(
        count(
          "Handler 'eventual_failure_with_tracebacks' failed with an exception and will stop now (it would exceed 3 retries on the next attempt): An error that is supposed to be recoverable.",
        ),
      ).toBe(1);
      expect(count("Handler 'instant_failure_with_traceback' failed with an exception and will stop now: An error that is supposed to be recoverable.")).toBe(
        1,
      );

      // Stack traces follow the unexpected errors only, never the framework's own errors.
      const all = lines();
      const traced = all
        .map((line, i) => ({ line, next: all[i + 1] ?? '' }))
        .filter(({ line }) => line.includes('[default/kopf-example-1] Handler ') && line.includes(' failed '));
      expect(traced).toHaveLength(1 + 3 + 3 + 1);
      for (const { line, next } of traced) {
        if (line.includes('with an exception')) {
          expect(next).toBe('MyError: An error that is supposed to be recoverable.');
        } else {
          expect(next).toMatch(/^\[/);
        }
      }

      // The last patch purges all four progress records and stores the diff-base.
      const patches = example.cluster.requests
        .filter((r) => r.verb === 'patch' && r.resource === 'kopfexamples' && r.subresource === undefined && r.name === 'kopf-example-1')
        .map((r) => (JSON.parse(r.body!) as { metadata?: { annotations?: Record<string, string | null> } }).metadata?.annotations ?? {});
      const last = patches.at(-1)!;
      for (const id of HANDLERS) expect(last[`kopf.zalando.org/${id}`]).toBeNull();
      expect(last['kopf.zalando.org/touch-dummy']).toBeNull();
      expect(typeof last['kopf.zalando.org/last-handled-configuration']).toBe('string');
      const annotations = (example.cluster.store.get(KEX, 'kopf-example-1', 'default')!['metadata'] as { annotations: Json }).annotations;
      expect(Object.keys(annotations).filter((key) => key.startsWith('kopf.zalando.org/'))).toEqual(['kopf.zalando.org/last-handled-configuration']);
    } finally {
      await runner.stop();
    }
    expect(runner.exitCode).toBe(0);
    expect(runner.exception).toBeNull();
    await example.cluster.store.delete(KEX, 'kopf-example-1', { namespace: 'default' });
  });
});
