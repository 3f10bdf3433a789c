/**
 * Scenario A-34 (the original's `99-all-at-once` example): startup and cleanup activities, create
 * handlers with results, events and a retry, update and field handlers, deletion, a child pod seen
 * by an on-event handler, and the per-object engines — the pod indexed by its owner, a timer
 * reporting it from the index, a daemon for the object's whole life. Probes are left out: the
 * liveness endpoint is not served by this version.
 *
 * Also scenario A-29 (the original's `10-builtins` example): change handlers on a built-in
 * resource, pods, with a background task per pod that the deletion handler cancels.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import * as builtins from '../../../fixtures/operators/a29-builtins.js';
import * as everything from '../../../fixtures/operators/a34-all-at-once.js';
import { Calls } from '../../../fixtures/operators/calls.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as h from '../../support/scenarios.js';

type Json = Record<string, unknown>;

describe('all at once', () => {
  let cluster: DevCluster;

  // TLS: the handler creating the pod uses @kubernetes/client-node, which insists on https.
  beforeAll(async () => {
    cluster = await h.startCluster({ tls: true, podTerminationDelayMs: 50 });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('A-34 activities, handlers, results, events and a child pod, all in one operator', async () => {
    const calls = new Calls();
    const op = await h.startOperator(cluster, { registry: everything.register(new OperatorRegistry(), calls) });
    expect(op.output.matching(/^Activity 'startup_fn_retried' failed temporarily: Going to succeed in \ds/).map((e) => e.message)).toEqual(
      ['3s', '2s', '1s'].map((s) => `Activity 'startup_fn_retried' failed temporarily: Going to succeed in ${s}`),
    );

    const created = await h.apply(cluster, h.referenceObject());
    const uid = String((created['metadata'] as Json)['uid']);
    await op.output.waitFor('Creation is processed:', { timeoutMs: 15_000 });
    await op.output.waitFor('This pod is special for us.');
    await h.eventually(() => h.eventsAbout(cluster).length >= 2, 'the events');
    await h.eventually(() => (h.getObject(cluster)!['status'] as Json | undefined)?.['create_2'] !== undefined, 'the results');

    const status = h.getObject(cluster)!['status'] as Json;
    expect(status['create_1']).toEqual({ 'job1-status': 100 });
    expect(status['create_2']).toEqual({ 'job2-status': 100 });
    expect(op.output.count("Handler 'create_2' failed with an exception and will try again in 1 seconds: Whoops!")).toBe(1);
    const events = h.eventsAbout(cluster).filter((e) => e['reason'] !== 'Logging');
    expect(events.map((e) => [e['type'], e['reason'], e['message']]).sort()).toEqual([
      ['Normal', 'AnyReason', ''],
      ['Warning', 'SomeReason', 'Cannot do something'],
    ]);

    const pods = cluster.store.list(h.PODS, 'default');
    expect(pods).toHaveLength(1);
    const meta = pods[0]!['metadata'] as Json;
    expect(meta['generateName']).toBe('kopf-example-1-');
    expect(meta['namespace']).toBe('default');
    expect(meta['labels']).toEqual({ somelabel: 'somevalue', application: 'kopf-example-10' });
    expect(meta['ownerReferences']).toEqual([
      { controller: true, blockOwnerDeletion: true, apiVersion: 'kopf.dev/v1', kind: 'KopfExample', name: 'kopf-example-1', uid },
    ]);
    expect(op.output.linesWith(`[default/${String(meta['name'])}] This pod is special for us.`).length).toBeGreaterThan(0);

    // The engines: the index maps the object's uid to its pod; the timer reports it; the daemon runs.
    const podName = String(meta['name']);
    await h.eventually(() => JSON.stringify((h.getObject(cluster)!['status'] as Json)['children']) === JSON.stringify([podName]), 'the children in the status');
    expect(calls.of('accompany')).toHaveLength(1);
    expect(op.output.count('Accompanying kopf-example-1.')).toBe(1);

    await h.mergePatch(cluster, { spec: { lst: ['a', 'b'] } });
    await op.output.waitFor('Updating is processed: 2 succeeded; 0 failed.');
    expect(calls.of('update_lst').map((call) => call.args)).toEqual([{ new: ['a', 'b'] }]);

    await h.remove(cluster);
    await op.output.waitFor('Deleted, really deleted, and we are notified.');
    expect(op.output.count('Leaving kopf-example-1.')).toBe(1);
    expect(op.output.count("Daemon 'accompany' has exited on request and will not be retried or restarted.")).toBe(1);
    expect(op.output.messages().indexOf("Daemon 'accompany' has exited on request and will not be retried or restarted.")).toBeLessThan(
      op.output.messages().indexOf('Removing the finalizer, thus allowing the actual deletion.'),
    );
    await op.stop();
    expect(op.output.count("Activity 'cleanup_fn' succeeded.")).toBe(1);
    expect(op.output.messages().indexOf('Deleted, really deleted, and we are notified.')).toBeGreaterThan(
      op.output.messages().findIndex((m) => m.startsWith('Creation is processed:')),
    );

    for (const id of ['create_1', 'create_2', 'create_pod', 'delete']) {
      expect({ id, successes: op.output.count(`Handler '${id}' succeeded.`) }).toEqual({ id, successes: 1 });
    }
    for (const id of ['startup_fn_simple', 'startup_fn_retried', 'cleanup_fn']) {
      expect({ id, successes: op.output.count(`Activity '${id}' succeeded.`) }).toEqual({ id, successes: 1 });
    }
    expect(calls.count('startup_fn_retried')).toBe(4);
    h.genericChecks(op, { created: true, deleted: true, finalizerAdded: true, deletionHandled: true, skipG6: true });
  });
});

describe('built-in resources', () => {
  let cluster: DevCluster;

  beforeAll(async () => {
    cluster = await h.startCluster({ podTerminationDelayMs: 50 });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('A-29 pods are handled with the finalizer and the diff-base; their deletion cancels the task', async () => {
    const calls = new Calls();
    const op = await h.startOperator(cluster, { registry: builtins.register(new OperatorRegistry(), calls), watches: 'pods' });
    const pod = await cluster.store.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { generateName: 'kopf-pod-', namespace: 'default' },
      spec: { containers: [{ name: 'the-only-one', image: 'busybox', command: ['sh', '-x', '-c', 'sleep 1'] }] },
    });
    const name = String((pod['metadata'] as Record<string, unknown>)['name']);
    const prefix = `[default/${name}] `;
    await op.output.waitFor('=== Pod killing happens in 30s.');
    await h.eventually(() => h.annotationsOf(cluster.store.get(h.PODS, name, 'default'))[h.LHC] !== undefined, 'the diff-base on the pod');
    const alive = cluster.store.get(h.PODS, name, 'default');
    expect(h.finalizersOf(alive)).toContain(h.FINALIZER);

    // The creation's cycle is over (its patches came back) before the pod is deleted.
    await h.eventually(() => op.output.matching(h.AT_REST).some((e) => e.object === `default/${name}`), 'the pod at rest');
    await cluster.store.delete(h.PODS, name, { namespace: 'default' });
    await op.output.waitFor('=== Pod killing is cancelled!');
    await h.eventually(() => cluster.store.get(h.PODS, name, 'default') === undefined, 'the pod to be gone', 15_000);
    await op.output.waitFor('Deleted, really deleted, and we are notified.');

    for (const text of ['Creation is in progress:', '=== Pod killing happens in 30s.', 'Deletion is in progress:', '=== Pod killing is cancelled!']) {
      expect({ text, lines: op.output.linesWith(`${prefix}${text}`).length }).toEqual({ text, lines: 1 });
    }
    expect(calls.count('pod_deleted')).toBe(1);
    const ours = cluster.requests.all.filter(
      (r) => r.method === 'PATCH' && r.resource === 'pods' && r.name === name && (r.headers.userAgent ?? '').startsWith('kopf-ts/'),
    );
    expect(ours.length).toBeGreaterThan(0);
    expect(ours.filter((r) => r.subresource === 'status')).toEqual([]);
    await op.stop();
    h.genericChecks(op, { object: `default/${name}`, created: true, deleted: true, finalizerAdded: true, deletionHandled: true });
  });
});
