/**
 * The metrics of one operator as a scraper reads them: what each instrument report becomes in the
 * exposition text, with controller-runtime's names and labels where they apply, the queue gauges
 * read off real queues, separate registries per operator, and the process metrics.
 */
import * as prom from 'prom-client';
import { describe, expect, it } from 'vitest';
import { realClock } from '../../../../runtime/cogs/aio/clocks.js';
import type { RawEvent } from '../../../../runtime/cogs/structs/bodies.js';
import type { WebhookInstruments } from '../../../../runtime/cogs/structs/instruments.js';
import { silentLogger } from '../../../../runtime/cogs/structs/loggers.js';
import * as references from '../../../../runtime/cogs/structs/references.js';
import * as queueing from '../../../../runtime/core/reactor/queueing.js';
import { OperatorMetrics, metricsEndpoint } from '../../../../runtime/core/reactor/reporting.js';
import { Queue } from '../../../../runtime/core/reactor/queueing.js';
import { parseExposition, metricValue } from './exposition.js';

const KEX = references.makeResource({ group: 'kopf.dev', version: 'v1', plural: 'kopfexamples', kind: 'KopfExample', namespaced: true });
const PODS = references.makeResource({ group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true });
const K = 'kopfexamples.v1.kopf.dev';

/** A stopwatch the test moves by hand (milliseconds). */
function stopwatch(): { now: () => number; advance: (ms: number) => void } {
  let time = 1000;
  return {
    now: () => time,
    advance: (ms) => {
      time += ms;
    },
  };
}

async function scrape(metrics: OperatorMetrics): Promise<ReturnType<typeof parseExposition>> {
  return parseExposition((await metrics.scrape()).body);
}

describe('operator metrics', () => {
  it('counts handler invocations, successes, failures by kind, retries and durations per resource and handler', async () => {
    const clock = stopwatch();
    const metrics = new OperatorMetrics({ now: clock.now, processMetrics: false });
    const kex = metrics.forResource(KEX);
    let since = kex.now();
    clock.advance(30);
    kex.handled('create_fn', 'success', false, since);
    since = kex.now();
    clock.advance(2000);
    kex.handled('update_fn', 'temporary', true, since);
    kex.handled('update_fn', 'arbitrary', true, kex.now());
    kex.handled('update_fn', 'arbitrary', false, kex.now());
    kex.handled('update_fn', 'permanent', false, kex.now());
    kex.handled('update_fn', 'subhandlers', true, kex.now());
    const families = await scrape(metrics);
    const create = { resource: K, handler: 'create_fn' };
    const update = { resource: K, handler: 'update_fn' };
    expect(metricValue(families, 'kopf_handler_invocations_total', create)).toBe(1);
    expect(metricValue(families, 'kopf_handler_successes_total', create)).toBe(1);
    expect(metricValue(families, 'kopf_handler_failures_total', create)).toBe(0);
    expect(metricValue(families, 'kopf_handler_invocations_total', update)).toBe(5);
    expect(metricValue(families, 'kopf_handler_successes_total', update)).toBe(0);
    expect(metricValue(families, 'kopf_handler_failures_total', { ...update, kind: 'temporary' })).toBe(1);
    expect(metricValue(families, 'kopf_handler_failures_total', { ...update, kind: 'arbitrary' })).toBe(2);
    expect(metricValue(families, 'kopf_handler_failures_total', { ...update, kind: 'permanent' })).toBe(1);
    expect(metricValue(families, 'kopf_handler_retries_total', update)).toBe(3);
    // Durations in seconds, from the instruments' stopwatch.
    expect(metricValue(families, 'kopf_handler_duration_seconds_sum', create)).toBeCloseTo(0.03);
    expect(metricValue(families, 'kopf_handler_duration_seconds_bucket', { ...create, le: '0.025' })).toBe(0);
    expect(metricValue(families, 'kopf_handler_duration_seconds_bucket', { ...create, le: '0.05' })).toBe(1);
    expect(metricValue(families, 'kopf_handler_duration_seconds_count', update)).toBe(5);
    expect(families.get('kopf_handler_duration_seconds')?.type).toBe('histogram');
  });

  it('counts processing cycles as controller-runtime reconciles: results, errors, terminal errors, retries and time', async () => {
    const clock = stopwatch();
    const metrics = new OperatorMetrics({ now: clock.now, processMetrics: false });
    const kex = metrics.forResource(KEX);
    const since = kex.now();
    clock.advance(100);
    kex.reconciled('success', { terminal: false, requeued: false }, since);
    kex.reconciled('requeue_after', { terminal: false, requeued: true }, since);
    kex.reconciled('error', { terminal: false, requeued: true }, since);
    kex.reconciled('error', { terminal: true, requeued: false }, since);
    kex.queued();
    kex.queued();
    const families = await scrape(metrics);
    expect(metricValue(families, 'controller_runtime_reconcile_total', { controller: K, result: 'success' })).toBe(1);
    expect(metricValue(families, 'controller_runtime_reconcile_total', { controller: K, result: 'requeue_after' })).toBe(1);
    expect(metricValue(families, 'controller_runtime_reconcile_total', { controller: K, result: 'requeue' })).toBe(0);
    expect(metricValue(families, 'controller_runtime_reconcile_total', { controller: K, result: 'error' })).toBe(2);
    expect(metricValue(families, 'controller_runtime_reconcile_errors_total', { controller: K })).toBe(2);
    expect(metricValue(families, 'controller_runtime_terminal_reconcile_errors_total', { controller: K })).toBe(1);
    expect(metricValue(families, 'workqueue_retries_total', { name: K, controller: K })).toBe(2);
    expect(metricValue(families, 'workqueue_adds_total', { name: K, controller: K })).toBe(2);
    expect(metricValue(families, 'controller_runtime_reconcile_time_seconds_count', { controller: K })).toBe(4);
    expect(metricValue(families, 'controller_runtime_reconcile_time_seconds_sum', { controller: K })).toBeCloseTo(0.4);
  });

  it('counts watch listings, accepted connections and 410 Gone per resource; a re-discovered resource continues its series', async () => {
    const metrics = new OperatorMetrics({ processMetrics: false });
    const kex = metrics.forResource(KEX);
    kex.listed();
    kex.connected();
    kex.connected();
    kex.gone();
    const again = references.makeResource({ group: 'kopf.dev', version: 'v1', plural: 'kopfexamples', kind: 'KopfExample', namespaced: true });
    expect(metrics.forResource(again)).toBe(kex);
    metrics.forResource(again).listed();
    metrics.forResource(PODS).connected();
    const families = await scrape(metrics);
    expect(metricValue(families, 'kopf_watch_lists_total', { resource: K })).toBe(2);
    expect(metricValue(families, 'kopf_watch_connects_total', { resource: K })).toBe(2);
    expect(metricValue(families, 'kopf_watch_gone_total', { resource: K })).toBe(1);
    expect(metricValue(families, 'kopf_watch_connects_total', { resource: 'pods.v1' })).toBe(1);
    expect(metricValue(families, 'kopf_watch_gone_total', { resource: 'pods.v1' })).toBe(0);
  });

  it('counts API requests by code, method and host, and their latency by verb and host; no response is code <error>', async () => {
    const clock = stopwatch();
    const metrics = new OperatorMetrics({ now: clock.now, processMetrics: false });
    const since = metrics.now();
    clock.advance(20);
    metrics.requested('https://10.0.0.1:6443/', 'GET', 200, since);
    metrics.requested('https://10.0.0.1:6443/', 'GET', 200, since);
    metrics.requested('https://10.0.0.1:6443/', 'PATCH', 409, since);
    metrics.requested('https://10.0.0.1:6443/', 'PATCH', null, since);
    metrics.requested('http://127.0.0.1:8001', 'GET', 404, since);
    const families = await scrape(metrics);
    const host = '10.0.0.1:6443';
    expect(metricValue(families, 'rest_client_requests_total', { code: '200', method: 'GET', host })).toBe(2);
    expect(metricValue(families, 'rest_client_requests_total', { code: '409', method: 'PATCH', host })).toBe(1);
    expect(metricValue(families, 'rest_client_requests_total', { code: '<error>', method: 'PATCH', host })).toBe(1);
    expect(metricValue(families, 'rest_client_requests_total', { code: '404', method: 'GET', host: '127.0.0.1:8001' })).toBe(1);
    expect(metricValue(families, 'rest_client_request_duration_seconds_count', { verb: 'GET', host })).toBe(2);
    expect(metricValue(families, 'rest_client_request_duration_seconds_sum', { verb: 'PATCH', host })).toBeCloseTo(0.04);
    expect(metricValue(families, 'rest_client_request_duration_seconds_bucket', { verb: 'GET', host, le: '0.025' })).toBe(2);
  });

  it('counts running daemons and timers per resource and handler, up on spawn and down on exit', async () => {
    const metrics = new OperatorMetrics({ processMetrics: false });
    const kex = metrics.forResource(KEX);
    kex.spawned('monitor', 'daemon');
    kex.spawned('monitor', 'daemon');
    kex.spawned('tick', 'timer');
    let families = await scrape(metrics);
    expect(metricValue(families, 'kopf_running_daemons', { resource: K, handler: 'monitor' })).toBe(2);
    expect(metricValue(families, 'kopf_running_timers', { resource: K, handler: 'tick' })).toBe(1);
    expect(families.get('kopf_running_daemons')?.type).toBe('gauge');
    kex.exited('monitor', 'daemon');
    kex.exited('tick', 'timer');
    families = await scrape(metrics);
    expect(metricValue(families, 'kopf_running_daemons', { resource: K, handler: 'monitor' })).toBe(1);
    expect(metricValue(families, 'kopf_running_timers', { resource: K, handler: 'tick' })).toBe(0);
  });

  it('reads queue depth, busy and live workers, objects and the worker limit off the queues when scraped', async () => {
    const queues = new queueing.Queues();
    const metrics = new OperatorMetrics({ queues, processMetrics: false });
    const gates: (() => void)[] = [];
    const queue = new Queue(
      () =>
        new Promise<void>((resolve) => {
          gates.push(resolve);
        }),
      {
        clock: realClock,
        logger: silentLogger,
        idleTimeout: 5,
        exitTimeout: 1,
        workerLimit: 4,
        onFatal: (e) => {
          throw e;
        },
      },
    );
    queues.add(queue, KEX);
    const ev = (uid: string, rv: string): RawEvent => ({ type: 'MODIFIED', object: { metadata: { uid, name: uid, resourceVersion: rv } } });
    queue.push(ev('a', '1'));
    queue.push(ev('a', '2'));
    queue.push(ev('a', '3'));
    queue.push(ev('b', '1'));
    await new Promise((resolve) => setImmediate(resolve));
    let families = await scrape(metrics);
    expect(metricValue(families, 'workqueue_depth', { name: K, controller: K })).toBe(2);
    expect(metricValue(families, 'controller_runtime_active_workers', { controller: K })).toBe(2);
    expect(metricValue(families, 'controller_runtime_max_concurrent_reconciles', { controller: K })).toBe(4);
    expect(metricValue(families, 'kopf_queue_workers', { resource: K })).toBe(2);
    expect(metricValue(families, 'kopf_queue_objects', { resource: K })).toBe(2);
    while (gates.length > 0) {
      gates.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
    families = await scrape(metrics);
    expect(metricValue(families, 'workqueue_depth', { name: K })).toBe(0);
    expect(metricValue(families, 'controller_runtime_active_workers', { controller: K })).toBe(0);
    expect(metricValue(families, 'kopf_queue_workers', { resource: K })).toBe(2); // idle until their idle timeout
    await queue.stop();
    queues.delete(queue);
    families = await scrape(metrics);
    expect(metricValue(families, 'workqueue_depth', { name: K })).toBeUndefined();
  });

  it('reports no worker limit for unlimited queues', async () => {
    const queues = new queueing.Queues();
    const metrics = new OperatorMetrics({ queues, processMetrics: false });
    const queue = new Queue(async () => undefined, {
      clock: realClock,
      logger: silentLogger,
      idleTimeout: 5,
      exitTimeout: 1,
      onFatal: (e) => {
        throw e;
      },
    });
    queues.add(queue, KEX);
    const families = await scrape(metrics);
    expect(metricValue(families, 'workqueue_depth', { name: K })).toBe(0);
    expect(metricValue(families, 'controller_runtime_max_concurrent_reconciles', { controller: K })).toBeUndefined();
    await queue.stop();
  });

  it('counts admission requests by webhook and code, their latency, and those in flight, as the webhook server reports them', async () => {
    const metrics = new OperatorMetrics({ processMetrics: false });
    // What the admission request path holds: the operator's instruments, typed as the interface.
    const webhooks: WebhookInstruments = metrics;
    webhooks.webhookInFlight('validate_fn', 1);
    webhooks.webhookInFlight('validate_fn', 1);
    webhooks.webhookInFlight('mutate_fn', 1);
    webhooks.webhookInFlight('validate_fn', -1);
    webhooks.webhookRequest('validate_fn', 200, 0.004);
    webhooks.webhookRequest('validate_fn', 200, 0.02);
    webhooks.webhookRequest('validate_fn', 400, 0.001);
    webhooks.webhookInFlight('mutate_fn', -1);
    webhooks.webhookRequest('mutate_fn', 500, 0.5);
    const families = await scrape(metrics);
    expect(families.get('controller_runtime_webhook_requests_total')?.type).toBe('counter');
    expect(families.get('controller_runtime_webhook_latency_seconds')?.type).toBe('histogram');
    expect(families.get('controller_runtime_webhook_requests_in_flight')?.type).toBe('gauge');
    expect(metricValue(families, 'controller_runtime_webhook_requests_total', { webhook: 'validate_fn', code: '200' })).toBe(2);
    expect(metricValue(families, 'controller_runtime_webhook_requests_total', { webhook: 'validate_fn', code: '400' })).toBe(1);
    expect(metricValue(families, 'controller_runtime_webhook_requests_total', { webhook: 'mutate_fn', code: '500' })).toBe(1);
    expect(metricValue(families, 'controller_runtime_webhook_requests_total', { webhook: 'mutate_fn', code: '200' })).toBeUndefined();
    expect(metricValue(families, 'controller_runtime_webhook_requests_in_flight', { webhook: 'validate_fn' })).toBe(1);
    expect(metricValue(families, 'controller_runtime_webhook_requests_in_flight', { webhook: 'mutate_fn' })).toBe(0);
    // The latency by webhook only, as controller-runtime has it; the seconds as reported.
    expect(metricValue(families, 'controller_runtime_webhook_latency_seconds_count', { webhook: 'validate_fn' })).toBe(3);
    expect(metricValue(families, 'controller_runtime_webhook_latency_seconds_sum', { webhook: 'validate_fn' })).toBeCloseTo(0.025);
    expect(metricValue(families, 'controller_runtime_webhook_latency_seconds_bucket', { webhook: 'validate_fn', le: '0.001' })).toBe(1);
    expect(metricValue(families, 'controller_runtime_webhook_latency_seconds_bucket', { webhook: 'validate_fn', le: '0.005' })).toBe(2);
    expect(metricValue(families, 'controller_runtime_webhook_latency_seconds_bucket', { webhook: 'mutate_fn', le: '0.25' })).toBe(0);
    expect(metricValue(families, 'controller_runtime_webhook_latency_seconds_bucket', { webhook: 'mutate_fn', le: '0.5' })).toBe(1);
    expect(families.get('controller_runtime_webhook_latency_seconds')?.samples.every((sample) => !('code' in sample.labels))).toBe(true);
  });

  it("keeps two operators in their own registries, never in prom-client's global one", async () => {
    const before = prom.register.getMetricsAsArray().length;
    const one = new OperatorMetrics({ processMetrics: false });
    const two = new OperatorMetrics({ processMetrics: false });
    expect(one.registry).not.toBe(two.registry);
    expect(one.registry).not.toBe(prom.register);
    one.forResource(KEX).handled('create_fn', 'success', false, one.now());
    two.forResource(PODS).handled('event_fn', 'arbitrary', false, two.now());
    const first = await scrape(one);
    const second = await scrape(two);
    expect(metricValue(first, 'kopf_handler_successes_total', { resource: K, handler: 'create_fn' })).toBe(1);
    expect(metricValue(first, 'kopf_handler_invocations_total', { resource: 'pods.v1' })).toBeUndefined();
    expect(metricValue(second, 'kopf_handler_failures_total', { resource: 'pods.v1', handler: 'event_fn', kind: 'arbitrary' })).toBe(1);
    expect(metricValue(second, 'kopf_handler_invocations_total', { resource: K })).toBeUndefined();
    expect(prom.register.getMetricsAsArray().length).toBe(before);
  });

  it('appends the process metrics once per scrape, in a valid exposition with HELP and TYPE for every family', async () => {
    const one = new OperatorMetrics();
    const two = new OperatorMetrics();
    one.forResource(KEX).queued();
    const { contentType, body } = await one.scrape();
    expect(contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    const families = parseExposition(body); // throws on anything a scraper would reject
    expect(families.get('process_cpu_user_seconds_total')?.type).toBe('counter');
    expect(families.get('nodejs_heap_size_used_bytes')?.type).toBe('gauge');
    expect(families.get('controller_runtime_reconcile_total')?.help).toMatch(/reconciliations/);
    for (const family of families.values()) expect(family.help).not.toBe('');
    expect(body.match(/^# TYPE process_cpu_user_seconds_total /gm)).toHaveLength(1);
    parseExposition((await two.scrape()).body);
  });

  it("serves scrapes as an endpoint of the operator's server: 200 with the exposition", async () => {
    const metrics = new OperatorMetrics({ processMetrics: false });
    metrics.forResource(KEX).connected();
    const endpoint = metricsEndpoint(metrics, 'http://127.0.0.1:0/metrics', '--metrics');
    expect(endpoint.name).toBe('metrics');
    expect(endpoint.option).toBe('--metrics');
    const response = await endpoint.handle({
      method: 'GET',
      path: '/metrics',
      query: new URLSearchParams(),
      headers: {},
      signal: new AbortController().signal,
    });
    expect(response.status).toBe(200);
    expect(response.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(metricValue(parseExposition(String(response.body)), 'kopf_watch_connects_total', { resource: K })).toBe(1);
  });
});
