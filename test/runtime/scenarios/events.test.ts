/**
 * Scenarios A-10 (explicit k8s-events, the original's `04-events`), A-11 (log lines posted as
 * k8s-events when enabled, `09-testing`) and A-12 (on-event handlers, `08-events`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import { Calls } from '../../../fixtures/operators/calls.js';
import * as explicit from '../../../fixtures/operators/a10-events.js';
import * as testing from '../../../fixtures/operators/a11-testing.js';
import * as watching from '../../../fixtures/operators/a12-events.js';
import type * as settingsModule from '../../../runtime/cogs/configs/settings.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { event, on } from '../../../runtime/index.js';
import * as h from '../../support/scenarios.js';

type Json = Record<string, unknown>;

/** Creates the reference object under a running operator, waits for its creation to be handled. */
async function handleOnce(cluster: DevCluster, options: h.OperatorStart): Promise<{ op: h.RunningOperator; uid: string }> {
  const op = await h.startOperator(cluster, options);
  const created = await h.apply(cluster, h.referenceObject());
  await op.output.waitFor('Creation is processed:');
  await op.output.waitFor('Something has changed, but we are not interested');
  return { op, uid: String((created['metadata'] as Json)['uid']) };
}

async function finish(cluster: DevCluster, op: h.RunningOperator): Promise<void> {
  await h.remove(cluster);
  await h.eventually(() => op.output.matching('Deleted, really deleted').some((e) => e.object === 'default/kopf-example-1'), 'kopf-example-1 gone');
  await op.stop();
}

/**
 * Waits until everything the operator has queued so far is posted. The poster posts one event at a
 * time in the order queued, so a marker object created now, whose handler posts its events last,
 * proves by its last event (the `Error` one) that all events queued before it were posted: the
 * explicit signal instead of a quiet period. The marker is deleted again.
 */
async function allPosted(cluster: DevCluster, op: h.RunningOperator): Promise<void> {
  const marker = await h.apply(cluster, h.referenceObject({ name: 'kopf-example-marker' }));
  const uid = String((marker['metadata'] as Json)['uid']);
  await h.eventually(() => eventsOf(cluster, uid).some((e) => e['type'] === 'Error'), 'the last event about the marker');
  await h.remove(cluster, 'kopf-example-marker');
  await h.eventually(() => op.output.matching('Deleted, really deleted').some((e) => e.object === 'default/kopf-example-marker'), 'the marker gone');
}

function eventsOf(cluster: DevCluster, uid: string): Json[] {
  return cluster.store.list(h.EVENTS, 'default').filter((e) => (e['involvedObject'] as Json)['uid'] === uid);
}

describe('k8s-events', () => {
  let cluster: DevCluster;

  beforeAll(async () => {
    cluster = await h.startCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('A-10 a handler posts events of every kind with the exact payload', async () => {
    const { op, uid } = await handleOnce(cluster, { registry: explicit.register(new OperatorRegistry()) });
    await allPosted(cluster, op);
    const events = eventsOf(cluster, uid);
    expect(events.filter((e) => e['reason'] === 'Logging')).toEqual([]);
    expect(events.map((e) => [e['type'], e['reason'], e['message']]).sort()).toEqual([
      ['Error', 'SomeReason', 'Some exception: Exception text.'],
      ['Normal', 'SomeReason', 'Some message'],
      ['SomeType', 'SomeReason', 'Some message'],
      ['Warning', 'SomeReason', 'Some message'],
    ]);
    for (const e of events) {
      expect(e['source']).toEqual({ component: 'kopf' });
      expect(e['reportingComponent']).toBe('kopf');
      expect(e['reportingInstance']).toBe('dev');
      expect(String((e['metadata'] as Json)['name'])).toMatch(/^kopf-event-/);
      expect(e['involvedObject']).toEqual({ apiVersion: 'kopf.dev/v1', kind: 'KopfExample', name: 'kopf-example-1', uid, namespace: 'default' });
    }
    await finish(cluster, op);
    h.genericChecks(op, { created: true, deleted: true });
  });

  it('A-10 with the posting level at WARNING, only the events of that level or above (and custom types) are posted', async () => {
    const configure = (settings: settingsModule.OperatorSettings): void => {
      settings.posting.level = 30;
    };
    const { op, uid } = await handleOnce(cluster, { registry: explicit.register(new OperatorRegistry()), configure });
    await allPosted(cluster, op);
    expect(
      eventsOf(cluster, uid)
        .map((e) => e['type'])
        .sort(),
    ).toEqual(['Error', 'SomeType', 'Warning']);
    await finish(cluster, op);
    h.genericChecks(op, { created: true, deleted: true });
  });

  it('A-10 with posting disabled, no events are posted', async () => {
    const configure = (settings: settingsModule.OperatorSettings): void => {
      settings.posting.enabled = false;
    };
    const { op, uid } = await handleOnce(cluster, { registry: explicit.register(new OperatorRegistry()), configure });
    // The signal that nothing is left to post: posting is turned on (the settings are live) and a
    // marker's events are posted; anything queued for the first object would have been posted before.
    op.settings.posting.enabled = true;
    await allPosted(cluster, op);
    expect(eventsOf(cluster, uid)).toEqual([]);
    await finish(cluster, op);
    h.genericChecks(op, { created: true, deleted: true });
  });

  it('A-11 with posting of loggers turned on at startup, per-object log lines become events (INFO and above)', async () => {
    const calls = new Calls();
    const { op, uid } = await handleOnce(cluster, { registry: testing.register(new OperatorRegistry(), calls) });
    expect(op.output.linesWith('[default/kopf-example-1] Creation is in progress:')).toHaveLength(1);
    expect(op.output.linesWith('[default/kopf-example-1] Something was logged here.')).toHaveLength(1);
    // The last line of the cycle posted (INFO and above) is its summary; the poster keeps the order.
    await h.eventually(
      () => eventsOf(cluster, uid).some((e) => e['message'] === 'Creation is processed: 1 succeeded; 0 failed.'),
      'the event of the summary line',
    );
    const events = eventsOf(cluster, uid);
    expect(events.map((e) => [e['type'], e['reason'], e['message']])).toEqual(
      expect.arrayContaining([
        ['Normal', 'Logging', 'Something was logged here.'],
        ['Normal', 'Logging', "Handler 'create_fn' succeeded."],
        ['Normal', 'Logging', 'Creation is processed: 1 succeeded; 0 failed.'],
      ]),
    );
    expect(events.filter((e) => String(e['message']).includes('is in progress'))).toEqual([]);
    expect(events.filter((e) => e['reason'] !== 'Logging')).toEqual([]);
    expect(calls.count('configure_fn')).toBe(1);
    await finish(cluster, op);
    h.genericChecks(op, { created: true, deleted: true });
  });

  it('A-11 without the setting, log lines are not posted', async () => {
    const registry = testing.register(new OperatorRegistry(), new Calls(), { postLoggers: false });
    // Posting itself stays on: an event posted explicitly about a marker object, queued after
    // every line of the object's cycle, is the signal that anything queued before it is posted.
    on.create('kopfexamples', { registry }, function marker_fn({ body, name }) {
      if (name === 'kopf-example-marker') event(body, { type: 'Normal', reason: 'Marker', message: 'Posted last.' });
    });
    const { op, uid } = await handleOnce(cluster, { registry });
    const marker = await h.apply(cluster, h.referenceObject({ name: 'kopf-example-marker' }));
    const markerUid = String((marker['metadata'] as Json)['uid']);
    await h.eventually(() => eventsOf(cluster, markerUid).some((e) => e['reason'] === 'Marker'), 'the event about the marker');
    expect(op.output.linesWith('[default/kopf-example-1] Something was logged here.')).toHaveLength(1);
    expect(eventsOf(cluster, uid)).toEqual([]);
    expect(eventsOf(cluster, markerUid).map((e) => e['reason'])).toEqual(['Marker']);
    await h.remove(cluster, 'kopf-example-marker');
    await h.eventually(() => op.output.matching('Deleted, really deleted').some((e) => e.object === 'default/kopf-example-marker'), 'the marker gone');
    await finish(cluster, op);
    h.genericChecks(op, { created: true, deleted: true });
  });

  it('A-12 on-event handlers see every event; errors are ignored; the object is left untouched', async () => {
    const calls = new Calls();
    const registry = watching.register(new OperatorRegistry(), calls);
    const op = await h.startOperator(cluster, { registry });
    const since = cluster.requests.all.length;
    await h.apply(cluster, h.referenceObject());
    await op.output.waitFor("Handler 'normal_event_fn' succeeded.");
    await h.remove(cluster);
    await op.output.waitFor("Handler 'normal_event_fn' succeeded.", { times: 2 });
    // The DELETED event is the last one about the object, and its cycle ends with this handler
    // (handlers run in the order of registration): nothing can follow it.
    expect(calls.of('normal_event_fn').map((call) => call.args['type'])).toEqual(['ADDED', 'DELETED']);
    expect(op.output.count("Handler 'normal_event_fn' succeeded.")).toBe(2);
    const failures = op.output.matching("Handler 'event_fn_with_error' failed with an exception and will ignore it: Oops!");
    expect(failures).toHaveLength(2);
    for (const failure of failures) expect(failure.trace).toMatch(/^Error: Oops!\n\s+at /);
    expect(h.patchesOf(cluster, { since })).toEqual([]);
    await op.stop();
    h.genericChecks(op, { skipG4: true, skipG6: true });

    // Restart with an existing object: its listing comes as an event without a type.
    await h.apply(cluster, h.referenceObject());
    calls.all.length = 0;
    const again = await h.startOperator(cluster, { registry });
    await again.output.waitFor("Handler 'normal_event_fn' succeeded.");
    expect(calls.of('normal_event_fn').map((call) => call.args['type'])).toEqual([null]);
    expect(h.finalizersOf(h.getObject(cluster))).toEqual([]);
    expect(Object.keys(h.annotationsOf(h.getObject(cluster))).filter((key) => key.startsWith('kopf.zalando.org/'))).toEqual([]);
    await h.remove(cluster);
    await again.output.waitFor("Handler 'normal_event_fn' succeeded.", { times: 2 });
    await again.stop();
    h.genericChecks(again, { skipG4: true, skipG6: true });
  });
});
