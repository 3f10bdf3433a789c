/**
 * examples/01-minimal (Kopf's 01-minimal in TypeScript), loaded from its file as
 * `kopf-gen run examples/01-minimal/example.ts` loads it, run in-process with `KopfRunner` on a
 * virtual clock against a devcluster with the examples' CRD. It proves what the example's README
 * promises: the handler runs once, its result lands in `status.create_fn`, the object gets the
 * diff-base annotation but never a finalizer or a progress record, deletion is not delayed, and a
 * restarted operator resumes the handled object without running the handler again.
 */
import { describe, expect, it } from 'vitest';

import type { KopfRunner } from 'kopf-gen/testing';

import { eventually, KEX, objectMessages, startExample, useExampleCluster, referenceObject } from './support.js';

type Json = Record<string, unknown>;

const EVENTS = { group: '', version: 'v1', resource: 'events' } as const;
const ESSENCE =
  '{"spec":{"duration":"1m","field":"value","items":["item1","item2"]},' +
  '"metadata":{"labels":{"somelabel":"somevalue"},"annotations":{"someannotation":"somevalue"}}}\n';

describe('examples/01-minimal', () => {
  const example = useExampleCluster();

  const start = (): Promise<KopfRunner> => startExample('01-minimal', example.kubeconfig);
  /** The lines the runner logged about the object, without the `[default/kopf-example-1] ` prefix. */
  const messages = (runner: KopfRunner): string[] => objectMessages(runner, 'default/kopf-example-1');
  const count = (runner: KopfRunner, text: string): number => messages(runner).filter((m) => m.includes(text)).length;
  const stored = (): Json | undefined => example.cluster.store.get(KEX, 'kopf-example-1', 'default');
  const patches = (): string[] =>
    example.cluster.requests.filter((r) => r.verb === 'patch' && r.resource === 'kopfexamples' && r.name === 'kopf-example-1').map((r) => r.body ?? '');

  it('A-1 A-2 01-minimal: the result goes to the status, no finalizer, no progress records; a restart resumes without the handler', async () => {
    const runner = await start();
    let uid = '';
    try {
      const created = await example.cluster.store.create(referenceObject());
      uid = String((created['metadata'] as Json)['uid']);
      // The operator's own patches come back as one more event, which changes nothing essential.
      await eventually(() => count(runner, 'Something has changed, but we are not interested') === 1, 'the patched object to come back');

      expect(count(runner, 'And here we are! Creating: {"duration":"1m","field":"value","items":["item1","item2"]}')).toBe(1);
      expect(count(runner, "Handler 'create_fn' succeeded.")).toBe(1);
      expect(count(runner, 'Creation is processed: 1 succeeded; 0 failed.')).toBe(1);
      const object = stored()!;
      expect(object['status']).toEqual({ create_fn: { message: 'hello world' } });
      const metadata = object['metadata'] as { annotations: Record<string, string>; finalizers?: string[] };
      expect(metadata.annotations['kopf.zalando.org/last-handled-configuration']).toBe(ESSENCE);
      expect(metadata.finalizers).toBeUndefined();
      // One handler, done in one cycle: no progress record is ever written, nor a finalizer.
      expect(patches()).toHaveLength(2);
      expect(patches().join('\n')).not.toContain('kopf.zalando.org/create_fn');
      expect(patches().join('\n')).not.toContain('finalizers');
    } finally {
      await runner.stop();
    }
    expect(runner.exitCode).toBe(0);
    expect(runner.exception).toBeNull();

    // A second start: the object is resumed (nothing has changed), the handler does not run again.
    example.cluster.requests.clear();
    const again = await start();
    try {
      await eventually(() => count(again, 'Handling cycle is finished, waiting for new changes.') === 1, 'the resuming cycle to finish');
      expect(count(again, 'Resuming is in progress:')).toBe(1);
      expect(count(again, 'Creating:')).toBe(0);
      expect(count(again, "Handler 'create_fn'")).toBe(0);
      expect(patches()).toEqual([]);

      // Deletion: no handler and no finalizer, so the object goes at once.
      await example.cluster.store.delete(KEX, 'kopf-example-1', { namespace: 'default' });
      await eventually(() => count(again, 'Deleted, really deleted, and we are notified.') === 1, 'the deletion to be noticed');
      expect(stored()).toBeUndefined();
      expect(count(again, "Handler 'create_fn'")).toBe(0);
    } finally {
      await again.stop();
    }
    expect(again.exitCode).toBe(0);
    expect(again.exception).toBeNull();
    // Log lines are not posted as k8s-events unless the settings ask for it: no events at all.
    expect(example.cluster.store.list(EVENTS, 'default').filter((e) => (e['involvedObject'] as Json)['uid'] === uid)).toEqual([]);
    expect(example.cluster.requests.filter((r) => r.resource === 'events')).toEqual([]);
  });
});
