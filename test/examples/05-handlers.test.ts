/**
 * examples/05-handlers (Kopf's 05-handlers in TypeScript), loaded from its file as
 * `kopf-gen run examples/05-handlers/example.ts` loads it, run in-process with `KopfRunner` on a
 * virtual clock against a devcluster with the examples' CRD. One object goes through its whole
 * life, with the operator restarted in between, and each stage checks what the example's README
 * promises: which handlers run, in which order, with which values and diffs, and the finalizer.
 * The stages run in order on the same object.
 */
import { afterEach, describe, expect, it } from 'vitest';

import type { KopfRunner } from 'kopf-gen/testing';

import { eventually, KEX, startExample, useExampleCluster, referenceObject } from './support.js';

type Json = Record<string, unknown>;

const FINALIZER = 'kopf.zalando.org/KopfFinalizerMarker';

describe('examples/05-handlers', () => {
  const example = useExampleCluster();
  let runner: KopfRunner | undefined;
  afterEach(async () => {
    await stop();
  });

  async function start(): Promise<void> {
    runner = await startExample('05-handlers', example.kubeconfig);
  }
  async function stop(): Promise<void> {
    if (runner === undefined) return;
    const stopping = runner;
    runner = undefined;
    await stopping.stop();
    expect(stopping.exitCode).toBe(0);
    expect(stopping.exception).toBeNull();
  }

  /** The INFO lines of the running operator about the object, without the prefix, in order. */
  const messages = (): string[] =>
    (runner?.output ?? '')
      .split('\n')
      .filter((line) => line.includes('[INFO    ]'))
      .map((line) => /\[default\/kopf-example-1\] (.*)$/.exec(line)?.[1])
      .filter((m): m is string => m !== undefined);
  const has = (text: string): boolean => messages().includes(text);
  const stored = (): Json | undefined => example.cluster.store.get(KEX, 'kopf-example-1', 'default');
  const finalizers = (): unknown => (stored()?.['metadata'] as { finalizers?: unknown } | undefined)?.finalizers;
  const lastHandled = (): string =>
    (stored()!['metadata'] as { annotations: Record<string, string> }).annotations['kopf.zalando.org/last-handled-configuration']!;

  it('R-CAUSE-4 R-FINAL-3 05-handlers creation: the finalizer first, then both create handlers and the field handler, one per cycle', async () => {
    await start();
    await example.cluster.store.create(referenceObject());
    await eventually(() => has('Creation is processed: 3 succeeded; 0 failed.'), 'the creation to be processed');
    expect(messages()).toEqual([
      'CREATED 1st',
      "Handler 'create_fn_1' succeeded.",
      'CREATED 2nd',
      "Handler 'create_fn_2' succeeded.",
      'FIELD CHANGED: undefined -> value',
      "Handler 'field_fn/spec.field' succeeded.",
      'Creation is processed: 3 succeeded; 0 failed.',
    ]);
    // The finalizer is added in a cycle of its own, before any handler runs.
    const lines = runner!.output.split('\n');
    const at = (text: string): number => lines.findIndex((line) => line.includes(`[default/kopf-example-1] ${text}`));
    expect(at('Adding the finalizer, thus preventing the actual deletion.')).toBeGreaterThan(-1);
    expect(at('Adding the finalizer, thus preventing the actual deletion.')).toBeLessThan(at("Handler 'create_fn_1' is invoked."));
    const first = example.cluster.requests.filter((r) => r.verb === 'patch' && r.resource === 'kopfexamples' && r.name === 'kopf-example-1')[0]!;
    expect(JSON.parse(first.body!)).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: expect.any(String) },
      { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] },
    ]);
    expect(finalizers()).toEqual([FINALIZER]);
    // One handler per cycle: each cycle's progress is stored in between, then purged at the end.
    await eventually(() => lastHandled() !== undefined, 'the diff-base');
    const records = example.cluster.requests
      .filter((r) => r.verb === 'patch' && r.resource === 'kopfexamples' && r.name === 'kopf-example-1')
      .map((r) => r.body ?? '')
      .filter((body) => body.includes('"kopf.zalando.org/create_fn_1"'));
    expect(records.length).toBeGreaterThanOrEqual(2);
    expect(records.at(-1)).toContain('"kopf.zalando.org/create_fn_1":null');
  });

  it('A-6 05-handlers update: update_fn gets the essences and the diff, field_fn the field values', async () => {
    await start();
    await eventually(() => runner!.output.includes('[default/kopf-example-1] Resuming is in progress:'), 'the object to be resumed');
    await eventually(() => has('Resuming is processed: 2 succeeded; 0 failed.'), 'the resuming to be processed');
    await example.cluster.store.patch(KEX, 'kopf-example-1', { spec: { field: 'newvalue', newfield: 100 } }, { namespace: 'default', type: 'merge-patch' });
    await eventually(() => has('Updating is processed: 2 succeeded; 0 failed.'), 'the update to be processed');
    const since = messages().indexOf('Resuming is processed: 2 succeeded; 0 failed.') + 1;
    expect(messages().slice(since)).toEqual([
      'UPDATED: spec.field value -> newvalue',
      '  add spec.newfield: null -> 100',
      '  change spec.field: "value" -> "newvalue"',
      "Handler 'update_fn' succeeded.",
      'FIELD CHANGED: value -> newvalue',
      "Handler 'field_fn/spec.field' succeeded.",
      'Updating is processed: 2 succeeded; 0 failed.',
    ]);
    await eventually(() => lastHandled().includes('"field":"newvalue"'), 'the new diff-base');
    expect(JSON.parse(lastHandled())).toEqual({
      spec: { duration: '1m', field: 'newvalue', items: ['item1', 'item2'], newfield: 100 },
      metadata: { labels: { somelabel: 'somevalue' }, annotations: { someannotation: 'somevalue' } },
    });
  });

  it('A-4 R-CAUSE-3 05-handlers restarts: a change during downtime is an update with the resume handlers mixed in; without changes, only resuming', async () => {
    await example.cluster.store.patch(KEX, 'kopf-example-1', { spec: { field: 'changed' } }, { namespace: 'default', type: 'merge-patch' });
    await start();
    await eventually(() => has('Updating is processed: 4 succeeded; 0 failed.'), 'the update to be processed');
    expect(messages()).toEqual([
      'RESUMED 1st',
      "Handler 'resume_fn_1' succeeded.",
      'RESUMED 2nd',
      "Handler 'resume_fn_2' succeeded.",
      'UPDATED: spec.field newvalue -> changed',
      '  change spec.field: "newvalue" -> "changed"',
      "Handler 'update_fn' succeeded.",
      'FIELD CHANGED: newvalue -> changed',
      "Handler 'field_fn/spec.field' succeeded.",
      'Updating is processed: 4 succeeded; 0 failed.',
    ]);
    await eventually(() => lastHandled().includes('"field":"changed"'), 'the new diff-base');
    await stop();

    await start();
    await eventually(() => has('Resuming is processed: 2 succeeded; 0 failed.'), 'the resuming to be processed');
    expect(messages()).toEqual([
      'RESUMED 1st',
      "Handler 'resume_fn_1' succeeded.",
      'RESUMED 2nd',
      "Handler 'resume_fn_2' succeeded.",
      'Resuming is processed: 2 succeeded; 0 failed.',
    ]);
  });

  it('A-7 05-handlers deletion: both delete handlers, one per cycle, then the finalizer goes and the object with it', async () => {
    await start();
    await eventually(() => has('Resuming is processed: 2 succeeded; 0 failed.'), 'the resuming to be processed');
    const since = messages().length;
    await example.cluster.store.delete(KEX, 'kopf-example-1', { namespace: 'default' });
    await eventually(() => runner!.output.includes('[default/kopf-example-1] Deleted, really deleted, and we are notified.'), 'the deletion');
    expect(messages().slice(since)).toEqual([
      'DELETED 1st',
      "Handler 'delete_fn_1' succeeded.",
      'DELETED 2nd',
      "Handler 'delete_fn_2' succeeded.",
      'Deletion is processed: 2 succeeded; 0 failed.',
    ]);
    const lines = runner!.output.split('\n');
    const at = (text: string): number => lines.findIndex((line) => line.includes(`[default/kopf-example-1] ${text}`));
    expect(at('Removing the finalizer, thus allowing the actual deletion.')).toBeGreaterThan(at('Deletion is processed: 2 succeeded; 0 failed.'));
    expect(stored()).toBeUndefined();
  });
});
