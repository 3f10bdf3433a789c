/**
 * Scenarios A-27 (filters, the original's `11-filtering-handlers`, with its field-filtered daemon)
 * and A-28 (stealth mode).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import { Calls } from '../../../fixtures/operators/calls.js';
import * as filtering from '../../../fixtures/operators/a27-filtering.js';
import * as stealth from '../../../fixtures/operators/a28-stealth.js';
import { on } from '../../../runtime/on.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as h from '../../support/scenarios.js';

describe('filters', () => {
  let cluster: DevCluster;

  beforeAll(async () => {
    cluster = await h.startCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('A-27 handlers run only when their label, annotation, when, field and change filters match', async () => {
    const calls = new Calls();
    const op = await h.startOperator(cluster, { registry: filtering.register(new OperatorRegistry(), calls) });
    await h.apply(cluster, h.referenceObject());
    await op.output.waitFor('Creation is processed:');
    // The field daemon logs every second while the field has its value (two lines: it is looping).
    await op.output.waitFor('Field daemon is satisfied.', { times: 2 });
    await h.mergePatch(cluster, { spec: { field: 'changed' } });
    await op.output.waitFor('Updating is processed:');
    // After the patch, the filter no longer matches: the daemon is stopped and stops logging.
    await op.output.waitFor("Daemon 'daemon_with_field/spec.field' has exited on request and will not be retried or restarted.");
    const daemonLines = op.output.count('Field daemon is satisfied.');
    await h.remove(cluster);
    await op.output.waitFor('Deleted, really deleted, and we are notified.');
    await op.stop();
    expect(op.output.count('Field daemon is satisfied.')).toBe(daemonLines);
    const lines = op.output.linesWith('[default/kopf-example-1]');
    const patched = lines.findIndex((line) => line.includes('Updating is in progress:'));
    const lastLog = lines.findLastIndex((line) => line.includes('Field daemon is satisfied.'));
    const exited = lines.findIndex((line) => line.includes("Daemon 'daemon_with_field/spec.field' has exited on request"));
    expect(lastLog).toBeLessThan(exited);
    expect(exited).toBeLessThan(patched);
    expect(calls.count('daemon_with_field')).toBe(1);

    for (const present of [
      'Label is matching.',
      'Label is present.',
      'Label is absent.',
      'Label callback matching.',
      'Annotation is matching.',
      'Annotation is present.',
      'Annotation is absent.',
      'Filter satisfied.',
      'Field value is satisfied.',
      'Field presence is satisfied.',
      'Field change is satisfied.',
    ])
      expect({ present, times: op.output.count(present) }).toEqual({ present, times: 1 });
    expect(daemonLines).toBeGreaterThanOrEqual(2);
    for (const absent of ['Annotation callback mismatch.', 'Filter not satisfied.', 'Field value is not satisfied.', 'Field presence is not satisfied.'])
      expect({ absent, times: op.output.count(absent) }).toEqual({ absent, times: 0 });
    expect(op.output.count('Creation is processed: 10 succeeded; 0 failed.')).toBe(1);
    expect(op.output.count('Updating is processed: 1 succeeded; 0 failed.')).toBe(1);
    h.genericChecks(op, { created: true, deleted: true });
  });

  it('A-27 a label filter with null, or old together with value, is rejected at registration', () => {
    const registry = new OperatorRegistry();
    expect(() =>
      on.create('kopfexamples', { registry, labels: { somelabel: null as unknown as string } }, function f() {
        /* never */
      }),
    ).toThrow(TypeError);
    expect(() =>
      on.update('kopfexamples', { registry, field: 'spec.field', value: 'x', old: 'y' }, function g() {
        /* never */
      }),
    ).toThrow(TypeError);
    expect(registry.changingHandlersOf(h.kexResource())).toEqual([]);
  });

  it('A-28 objects not matching any handler are invisible; once matching, they are created, then updated', async () => {
    const calls = new Calls();
    const op = await h.startOperator(cluster, { registry: stealth.register(new OperatorRegistry(), calls) });
    const since = cluster.requests.all.length;
    await h.apply(cluster, h.referenceObject());
    // An event of another object afterwards proves that the first one was processed by then.
    const probe = h.referenceObject({ name: 'kopf-example-probe' });
    (probe['metadata'] as { labels: Record<string, string> }).labels = { track: 'yes' };
    await h.apply(cluster, probe);
    await h.eventually(() => calls.count('create_fn') === 1, 'the probe object to be handled');
    await h.eventually(() => op.output.matching(h.AT_REST).some((e) => e.object === 'default/kopf-example-probe'), 'the probe at rest');
    expect(op.output.linesWith('[default/kopf-example-1]')).toEqual([]);
    expect(h.patchesOf(cluster, { since })).toEqual([]);

    await h.mergePatch(cluster, { metadata: { labels: { track: 'yes' } } });
    await op.output.waitFor('Creation is processed:', { times: 2 });
    expect(op.output.linesWith('[default/kopf-example-1] Creation is processed: 1 succeeded; 0 failed.')).toHaveLength(1);
    await h.eventually(() => h.annotationsOf(h.getObject(cluster))[h.LHC] !== undefined, 'the diff-base');
    expect(h.annotationsOf(h.getObject(cluster))[h.LHC]).toContain('"track":"yes"');
    expect(calls.ids).toEqual(['create_fn', 'create_fn']);

    await h.mergePatch(cluster, { spec: { field: 'changed' } });
    await op.output.waitFor('Updating is processed:');
    expect(calls.of('update_fn')).toHaveLength(1);
    expect(calls.of('update_fn')[0]!.args['diff']).toEqual([['change', ['spec', 'field'], 'value', 'changed']]);
    await h.remove(cluster);
    await h.remove(cluster, 'kopf-example-probe');
    await op.output.waitFor('Deleted, really deleted, and we are notified.', { times: 2 });
    await op.stop();
    h.genericChecks(op, { created: true, deleted: true });
  });
});
