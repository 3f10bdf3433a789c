import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { DevCluster } from '../../../../devcluster/testing.js';
import * as clocks from '../../../../runtime/cogs/aio/clocks.js';
import * as api from '../../../../runtime/cogs/client/api.js';
import * as credentials from '../../../../runtime/cogs/client/credentials.js';
import * as logins from '../../../../runtime/cogs/client/logins.js';
import * as settings from '../../../../runtime/cogs/configs/settings.js';
import type * as events from '../../../../runtime/core/actions/events.js';
import * as invocation from '../../../../runtime/core/actions/invocation.js';
import * as logging from '../../../../runtime/core/actions/logging.js';
import * as posting from '../../../../runtime/core/engines/posting.js';
import { RecordingLogger, T0, referenceBody } from '../actions/helpers.js';
import { eventually, until } from '../../../support/waiting.js';

const KOPF_CRD = path.resolve(import.meta.dirname, '../../../../fixtures/crds/kopfexamples.yaml');

function newSettings(): settings.OperatorSettings {
  return new settings.OperatorSettings({ warn: () => undefined });
}

/** Runs `fn` in an operator context whose events land in a queue. */
function inOperator<T>(config: settings.OperatorSettings, fn: () => T): { result: T; queue: posting.EventQueue } {
  const queue = new posting.EventQueue();
  const result = invocation.runInOperator({ settings: config, events: queue.asSink() }, fn);
  return { result, queue };
}

async function drain(queue: posting.EventQueue): Promise<events.QueuedEvent[]> {
  const taken: events.QueuedEvent[] = [];
  while (queue.size > 0) taken.push((await queue.take())!);
  return taken;
}

function a10(body: object): void {
  posting.event(body, { type: 'SomeType', reason: 'SomeReason', message: 'Some message' });
  posting.info(body, { reason: 'SomeReason', message: 'Some message' });
  posting.warn(body, { reason: 'SomeReason', message: 'Some message' });
  posting.exception(body, { reason: 'SomeReason', message: 'Some exception:', exc: new Error('Exception text.') });
}

describe('the event helpers', () => {
  const body = referenceBody();
  const ref = { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', name: 'kopf-example-1', uid: 'uid-1', namespace: 'default' };

  it('R-POST-1 A-10 event/info/warn/exception enqueue typed events about the object', async () => {
    const { queue } = inOperator(newSettings(), () => a10(body));
    expect(await drain(queue)).toEqual([
      { ref, type: 'SomeType', reason: 'SomeReason', message: 'Some message' },
      { ref, type: 'Normal', reason: 'SomeReason', message: 'Some message' },
      { ref, type: 'Warning', reason: 'SomeReason', message: 'Some message' },
      { ref, type: 'Error', reason: 'SomeReason', message: 'Some exception: Exception text.' },
    ]);
  });

  it.each([
    [
      'posting.level 30 (WARNING) keeps event, warn and exception',
      (s: settings.OperatorSettings) => {
        s.posting.level = 30;
      },
      ['SomeType', 'Warning', 'Error'],
    ],
    [
      'posting.level 40 (ERROR) keeps event and exception',
      (s: settings.OperatorSettings) => {
        s.posting.level = 40;
      },
      ['SomeType', 'Error'],
    ],
    [
      'posting.level 50 keeps only event',
      (s: settings.OperatorSettings) => {
        s.posting.level = 50;
      },
      ['SomeType'],
    ],
    [
      'D-9 posting.enabled = false posts nothing, warn included',
      (s: settings.OperatorSettings) => {
        s.posting.enabled = false;
      },
      [],
    ],
  ])('R-POST-1 A-10 gating: %s', async (_title, tweak, types) => {
    const config = newSettings();
    tweak(config);
    const { queue } = inOperator(config, () => a10(body));
    expect((await drain(queue)).map((e) => e.type)).toEqual(types);
  });

  it('R-POST-1 exception() defaults: the class name as reason; only the error message, or only the message', async () => {
    class QuotaError extends Error {}
    const { queue } = inOperator(newSettings(), () => {
      posting.exception(body, { exc: new QuotaError('Out of quota.') });
      posting.exception(body, { reason: 'R', message: 'Just a message.' });
    });
    expect((await drain(queue)).map((e) => [e.reason, e.message])).toEqual([
      ['QuotaError', 'Out of quota.'],
      ['R', 'Just a message.'],
    ]);
  });

  it('R-POST-1 several objects, also nested, each get an event', async () => {
    const other = { ...referenceBody(), metadata: { name: 'other', namespace: 'ns2' } };
    const { queue } = inOperator(newSettings(), () => posting.info([body, [other]], { reason: 'R' }));
    expect((await drain(queue)).map((e) => [e.ref.name, e.ref.namespace, e.message])).toEqual([
      ['kopf-example-1', 'default', ''],
      ['other', 'ns2', ''],
    ]);
  });

  it('R-API-6 the helpers throw outside of an operator', () => {
    expect(() => posting.event(body, { type: 'T', reason: 'R' })).toThrow('event() was called outside of an operator');
    expect(() => posting.info(body, { reason: 'R' })).toThrow(/outside of an operator/);
    expect(() => posting.warn(body, { reason: 'R' })).toThrow(/outside of an operator/);
    expect(() => posting.exception(body, {})).toThrow(/outside of an operator/);
  });
});

describe('event payloads', () => {
  const queued: events.QueuedEvent = {
    ref: { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', name: 'kopf-example-1', uid: 'uid-1', namespace: 'default' },
    type: 'Normal',
    reason: 'SomeReason',
    message: 'Some message',
  };

  it('R-POST-3 the body has exactly the fields of the original', () => {
    const built = posting.buildEventBody({ event: queued, settings: newSettings(), now: T0 });
    const time = '2024-05-01T10:00:00.123456+00:00';
    expect(built).toEqual({
      namespace: 'default',
      body: {
        metadata: { namespace: 'default', generateName: 'kopf-event-' },
        action: 'Action?',
        type: 'Normal',
        reason: 'SomeReason',
        message: 'Some message',
        reportingComponent: 'kopf',
        reportingInstance: 'dev',
        source: { component: 'kopf' },
        involvedObject: { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', name: 'kopf-example-1', uid: 'uid-1', namespace: 'default' },
        firstTimestamp: time,
        lastTimestamp: time,
        eventTime: time,
      },
    });
    expect(Object.keys(built!.body)).toEqual([
      'metadata',
      'action',
      'type',
      'reason',
      'message',
      'reportingComponent',
      'reportingInstance',
      'source',
      'involvedObject',
      'firstTimestamp',
      'lastTimestamp',
      'eventTime',
    ]);
  });

  it('R-POST-3 settings rename the component, instance and name prefix; cluster-scoped objects go to the default namespace', () => {
    const config = newSettings();
    config.posting.reportingComponent = 'my-op';
    config.posting.reportingInstance = 'pod-1';
    config.posting.eventNamePrefix = 'my-event-';
    const clusterEvent = { ...queued, ref: { apiVersion: 'v1', kind: 'Namespace', name: 'ns1' } };
    const built = posting.buildEventBody({ event: clusterEvent, settings: config, now: T0 })!;
    expect(built.namespace).toBe('default');
    expect(built.body).toMatchObject({
      metadata: { namespace: 'default', generateName: 'my-event-' },
      reportingComponent: 'my-op',
      reportingInstance: 'pod-1',
      source: { component: 'my-op' },
      involvedObject: { apiVersion: 'v1', kind: 'Namespace', name: 'ns1', namespace: 'default' },
    });
    expect(posting.buildEventBody({ event: clusterEvent, settings: config, now: T0, defaultNamespace: 'operators' })!.namespace).toBe('operators');
  });

  it('R-POST-4 messages over 1024 characters keep the first 511 and the last 510 around "..."', () => {
    const long = Array.from({ length: 2000 }, (_, i) => String.fromCharCode(65 + (i % 26))).join('');
    const cut = posting.truncateMessage(long);
    expect(cut).toHaveLength(1024);
    expect(cut).toBe(`${long.slice(0, 511)}...${long.slice(-510)}`);
    expect(posting.truncateMessage('x'.repeat(1024))).toBe('x'.repeat(1024));
    expect(posting.truncateMessage('x'.repeat(1025))).toHaveLength(1024);
    const built = posting.buildEventBody({ event: { ...queued, message: long }, settings: newSettings(), now: T0 })!;
    expect(built.body['message']).toBe(cut);
  });

  it('R-POST-4 events about v1 Events are dropped', () => {
    const aboutEvent = { ...queued, ref: { apiVersion: 'v1', kind: 'Event', name: 'e', namespace: 'default' } };
    expect(posting.buildEventBody({ event: aboutEvent, settings: newSettings(), now: T0 })).toBeNull();
  });
});

describe('the poster', () => {
  function recorder(fail?: (call: number) => unknown) {
    const calls: Array<{ resource: string; namespace: string | null; body: Record<string, unknown> }> = [];
    const writer: posting.EventWriter = {
      async create(resource, namespace, body) {
        calls.push({ resource: `${resource.plural}.${resource.version}`, namespace, body: body as Record<string, unknown> });
        const error = fail?.(calls.length);
        if (error !== undefined) throw error;
        return body;
      },
    };
    return { calls, writer };
  }

  it('R-POST-3 posts queued events in order through the writer and stops on abort', async () => {
    const { calls, writer } = recorder();
    const queue = new posting.EventQueue();
    const controller = new AbortController();
    const logger = new RecordingLogger();
    const clock = new clocks.VirtualClock({ start: T0 });
    const task = posting.runPoster({ queue, writer, settings: newSettings(), logger, signal: controller.signal, clock });
    const ref = { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', name: 'n', uid: 'u', namespace: 'ns' };
    queue.push({ ref, type: 'Normal', reason: 'A', message: 'first' });
    queue.push({ ref: { apiVersion: 'v1', kind: 'Event', name: 'x', namespace: 'ns' }, type: 'Normal', reason: 'B', message: 'dropped' });
    queue.push({ ref, type: 'Warning', reason: 'C', message: 'third' });
    await eventually(() => calls.some((c) => c.body['message'] === 'third'), 'the last queued event posted');
    controller.abort();
    await task;
    expect(calls.map((c) => [c.resource, c.namespace, c.body['reason'], c.body['message']])).toEqual([
      ['events.v1', 'ns', 'A', 'first'],
      ['events.v1', 'ns', 'C', 'third'],
    ]);
    expect(logger.lines).toEqual([]);
  });

  it('R-POST-4 posting failures are logged at WARNING and do not stop the poster', async () => {
    const apiError = Object.assign(new Error('forbidden'), { status: 403, details: { kind: 'events' } });
    const { calls, writer } = recorder((call) => (call === 1 ? apiError : undefined));
    const queue = new posting.EventQueue();
    const logger = new RecordingLogger();
    const controller = new AbortController();
    const task = posting.runPoster({ queue, writer, settings: newSettings(), logger, signal: controller.signal });
    const ref = { name: 'n', namespace: 'ns' };
    queue.push({ ref, type: 'Normal', reason: 'A', message: 'lost' });
    queue.push({ ref, type: 'Normal', reason: 'B', message: 'posted' });
    await eventually(() => calls.some((c) => c.body['message'] === 'posted'), 'the last queued event posted');
    controller.abort();
    await task;
    expect(calls).toHaveLength(2);
    expect(logger.messages('warning')).toEqual([
      'Failed to post an event. Ignoring and continuing. Code: 403. Message: forbidden. Details: {"kind":"events"}. ' +
        "Event: type='Normal', reason='A', message='lost'.",
    ]);
  });
});

describe('posting to a cluster through the real client', () => {
  let cluster: DevCluster;
  let kubeApi: api.HttpKubeApi;

  beforeAll(async () => {
    cluster = await DevCluster.start({ tls: false });
    await cluster.load(fs.readFileSync(KOPF_CRD, 'utf8'));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-posting-'));
    const info = logins.loginWithKubeconfig({ paths: [cluster.writeKubeconfig(path.join(dir, 'config'))] });
    const vault = new credentials.Vault();
    vault.populate({ kubeconfig: info });
    kubeApi = new api.HttpKubeApi({ vault, settings: newSettings(), logger: new RecordingLogger() });
  });

  afterAll(async () => {
    await cluster?.stop();
  });

  afterEach(() => logging.configure());

  it('A-10 A-11 helper events and posted log lines become Event objects with the exact payload', async () => {
    const object = await kubeApi.create(
      {
        group: 'kopf.dev',
        version: 'v1',
        plural: 'kopfexamples',
        kind: 'KopfExample',
        singular: 'kopfexample',
        shortcuts: [],
        categories: [],
        subresources: ['status'],
        namespaced: true,
        preferred: true,
        verbs: [],
      },
      'default',
      { ...referenceBody(), metadata: { name: 'kopf-example-1', namespace: 'default' } },
    );
    const config = newSettings();
    config.posting.loggers = true;
    const queue = new posting.EventQueue();
    const controller = new AbortController();
    const logger = new RecordingLogger();
    const restore = logging.setLogSink(() => undefined);
    try {
      invocation.runInOperator({ settings: config, events: queue.asSink() }, () => {
        a10(object);
        logging.objectLogger({ body: object }).info('Something was logged here.');
        logging.objectLogger({ body: object }).debug('Creation is in progress: {...}');
      });
    } finally {
      restore();
    }
    expect(queue.size).toBe(5); // queued as they were logged: the DEBUG line is not among them
    const task = posting.runPoster({ queue, writer: kubeApi, settings: config, logger, signal: controller.signal });
    const items = await until(
      async () => {
        const listed = (await kubeApi.list(posting.EVENTS, 'default')).items as Array<Record<string, unknown>>;
        return listed.length >= 5 ? listed : undefined;
      },
      'the five events posted',
      5000,
      20,
    );
    controller.abort();
    await task;
    expect(logger.lines).toEqual([]);
    const summary = items.map((e) => [e['type'], e['reason'], e['message']]).sort();
    expect(summary).toEqual([
      ['Error', 'SomeReason', 'Some exception: Exception text.'],
      ['Normal', 'Logging', 'Something was logged here.'],
      ['Normal', 'SomeReason', 'Some message'],
      ['SomeType', 'SomeReason', 'Some message'],
      ['Warning', 'SomeReason', 'Some message'],
    ]);
    for (const item of items) {
      expect((item['metadata'] as { name: string }).name).toMatch(/^kopf-event-/);
      expect(item).toMatchObject({
        source: { component: 'kopf' },
        reportingComponent: 'kopf',
        reportingInstance: 'dev',
        involvedObject: { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', name: 'kopf-example-1', uid: object.metadata?.uid, namespace: 'default' },
      });
    }
  });
});
