/**
 * An operator's Prometheus metrics as a scraper sees them, with the operator running against the
 * devcluster through its real HTTP client: handler successes, failures and retries as handlers run;
 * API requests by verb and code (matched against the devcluster's own request log); watch
 * reconnects and 410 re-lists caused by the devcluster's faults; queue depth and busy workers while
 * a handler is blocked; daemons and timers while an object lives; two operators in one process with
 * registries of their own; no registry and no endpoint without the option; scrapes while the
 * operator stops; and the errors of bad endpoint URLs and taken ports.
 */
import * as net from 'node:net';
import * as prom from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../devcluster/testing.js';
import { PermanentError, TemporaryError } from '../../../runtime/core/actions/errors.js';

import type { DaemonStopped } from '../../../runtime/core/intents/stoppers.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { parseRunArgs } from '../../../runtime/kits/launching/launching.js';
import { OperatorMetrics } from '../../../runtime/core/reactor/reporting.js';
import * as running from '../../../runtime/core/reactor/running.js';
import { on } from '../../../runtime/on.js';
import { parseExposition, metricValue } from '../core/reactor/exposition.js';
import * as fx from '../../support/operators.js';
import { until } from '../../support/waiting.js';
import { EndpointBindError, EndpointUrlError } from '../../../runtime/core/engines/errors.js';
import { UsageError } from '../../../runtime/kits/launching/errors.js';

const K = 'kopfexamples.v1.kopf.dev';
type Families = ReturnType<typeof parseExposition>;

/** A port that was free a moment ago (loopback). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Scrapes over HTTP and parses strictly (HELP/TYPE, names, labels, values, histograms). */
async function scrape(url: string): Promise<Families> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parseExposition(await response.text());
}

/** Scrapes until `predicate` holds (real time). */
async function scrapeUntil(url: string, predicate: (families: Families) => boolean, what: string, timeoutMs = 10_000): Promise<Families> {
  return await until(
    async () => {
      const families = await scrape(url);
      return predicate(families) ? families : undefined;
    },
    what,
    timeoutMs,
    20,
  );
}

/** The operator's own metrics object (to read them after the endpoint has closed). */
function metricsOf(op: fx.RunningOperator): OperatorMetrics {
  const metrics = op.context.instruments;
  if (!(metrics instanceof OperatorMetrics)) throw new Error('The operator has no metrics.');
  return metrics;
}

describe('metrics of an operator against the devcluster', () => {
  let cluster: DevCluster;
  let operators: fx.RunningOperator[] = [];
  const logs = new fx.LogCapture();
  beforeEach(async () => {
    cluster = await fx.startCluster();
    logs.install();
  });
  afterEach(async () => {
    await Promise.all(operators.map((op) => op.stop()));
    operators = [];
    logs.uninstall();
    await cluster.stop();
  });

  async function start(options: Omit<fx.OperatorOptions, 'cluster'>): Promise<fx.RunningOperator> {
    const op = await fx.startOperator({ cluster, ...options });
    operators.push(op);
    return op;
  }

  it('counts handler successes, temporary, arbitrary and permanent failures and retries as handlers run, and reconciles by result', async () => {
    const registry = new OperatorRegistry();
    let temporary = 0;
    let arbitrary = 0;
    on.create('kopfexamples', { registry }, function create_ok() {
      /* succeeds */
    });
    on.create('kopfexamples', { registry }, function create_temp() {
      if (temporary++ === 0) throw new TemporaryError('not yet', { delay: 0.1 });
    });
    on.create('kopfexamples', { registry }, function create_arb() {
      if (arbitrary++ === 0) throw new Error('an unexpected failure');
    });
    on.create('kopfexamples', { registry }, function create_perm() {
      throw new PermanentError('never');
    });
    const url = `http://127.0.0.1:${await freePort()}/metrics`;
    await start({ registry, metricsEndpoint: url });

    await cluster.store.create(fx.kopfExample('kex-a'));
    const handler = (id: string): Record<string, string> => ({ resource: K, handler: id });
    const families = await scrapeUntil(
      url,
      (f) =>
        metricValue(f, 'kopf_handler_successes_total', handler('create_arb')) === 1 &&
        metricValue(f, 'kopf_handler_successes_total', handler('create_temp')) === 1 &&
        metricValue(f, 'kopf_handler_failures_total', { ...handler('create_perm'), kind: 'permanent' }) === 1 &&
        // The handlers' counters move as they finish; the cycle is counted once its patch is applied.
        (metricValue(f, 'controller_runtime_reconcile_total', { controller: K, result: 'success' }) ?? 0) >= 1,
      'all handlers and their cycles to finish',
    );

    expect(metricValue(families, 'kopf_handler_invocations_total', handler('create_ok'))).toBe(1);
    expect(metricValue(families, 'kopf_handler_successes_total', handler('create_ok'))).toBe(1);
    expect(metricValue(families, 'kopf_handler_failures_total', handler('create_ok'))).toBe(0);
    expect(metricValue(families, 'kopf_handler_invocations_total', handler('create_temp'))).toBe(2);
    expect(metricValue(families, 'kopf_handler_failures_total', { ...handler('create_temp'), kind: 'temporary' })).toBe(1);
    expect(metricValue(families, 'kopf_handler_retries_total', handler('create_temp'))).toBe(1);
    expect(metricValue(families, 'kopf_handler_invocations_total', handler('create_arb'))).toBe(2);
    expect(metricValue(families, 'kopf_handler_failures_total', { ...handler('create_arb'), kind: 'arbitrary' })).toBe(1);
    expect(metricValue(families, 'kopf_handler_retries_total', handler('create_arb'))).toBe(1);
    expect(metricValue(families, 'kopf_handler_invocations_total', handler('create_perm'))).toBe(1);
    expect(metricValue(families, 'kopf_handler_retries_total', handler('create_perm'))).toBe(0);
    expect(metricValue(families, 'kopf_handler_duration_seconds_count', handler('create_ok'))).toBe(1);
    // The cycles in controller-runtime's words: some failed (the arbitrary and the permanent
    // errors), one for good; some were requeued after a delay (the retries).
    expect(metricValue(families, 'controller_runtime_reconcile_errors_total', { controller: K })).toBeGreaterThanOrEqual(1);
    expect(metricValue(families, 'controller_runtime_terminal_reconcile_errors_total', { controller: K })).toBe(1);
    expect(metricValue(families, 'controller_runtime_reconcile_total', { controller: K, result: 'success' })).toBeGreaterThanOrEqual(1);
    expect(metricValue(families, 'workqueue_retries_total', { name: K })).toBeGreaterThanOrEqual(1);
    expect(metricValue(families, 'controller_runtime_reconcile_time_seconds_count', { controller: K })).toBe(
      metricValue(families, 'controller_runtime_reconcile_total', { controller: K }),
    );
    expect(metricValue(families, 'workqueue_adds_total', { name: K })).toBeGreaterThanOrEqual(2);
    // The process metrics come along.
    expect(families.get('process_cpu_user_seconds_total')?.type).toBe('counter');
  });

  it('counts API requests by method and code exactly as the API server saw them, a 503 and the retry after it included', async () => {
    const registry = new OperatorRegistry();
    on.create('kopfexamples', { registry }, function create_fn() {
      return { done: true };
    });
    const url = `http://127.0.0.1:${await freePort()}/metrics`;
    const op = await start({ registry, metricsEndpoint: url });
    cluster.faults.add({ method: 'PATCH', resource: 'kopfexamples', times: 1, respond: { code: 503 } });
    await cluster.store.create(fx.kopfExample('kex-a'));
    await fx.eventually(() => logs.grep('Creation is processed').length === 1, 'the creation to be processed');
    await fx.atRest(logs, 'kex-a');
    await op.stop();

    const families = parseExposition((await metricsOf(op).scrape()).body);
    const host = new URL(cluster.url).host;
    const seen = cluster.requests.filter((r) => r.headers.userAgent?.startsWith('kopf-ts/') === true && !/(^|&)watch=(true|1)/.test(r.query));
    const count = (method: string, code: number): number => seen.filter((r) => r.method === method && r.code === code).length;
    expect(count('PATCH', 503)).toBe(1);
    expect(metricValue(families, 'rest_client_requests_total', { method: 'PATCH', code: '503', host })).toBe(1);
    expect(metricValue(families, 'rest_client_requests_total', { method: 'PATCH', code: '200', host })).toBe(count('PATCH', 200));
    expect(count('PATCH', 200)).toBeGreaterThanOrEqual(2);
    expect(metricValue(families, 'rest_client_requests_total', { method: 'GET', code: '200', host })).toBeGreaterThanOrEqual(count('GET', 200));
    expect(metricValue(families, 'rest_client_request_duration_seconds_count', { verb: 'PATCH', host })).toBe(count('PATCH', 200) + 1);
  });

  it('counts watch reconnects and the re-list after a 410 Gone, as many as the API server served', async () => {
    const registry = new OperatorRegistry();
    on.event('kopfexamples', { registry }, function event_fn() {
      /* nothing */
    });
    const url = `http://127.0.0.1:${await freePort()}/metrics`;
    await start({ registry, metricsEndpoint: url });
    await scrapeUntil(url, (f) => metricValue(f, 'kopf_watch_connects_total', { resource: K }) === 1, 'the first watch connection');
    const lists = fx.listRequests(cluster).length;
    expect(lists).toBe(1);

    // A plain reconnect: the stream ends, the operator reconnects from its version without re-listing.
    cluster.dropWatches({ resource: 'kopfexamples' }, 'end');
    let families = await scrapeUntil(url, (f) => metricValue(f, 'kopf_watch_connects_total', { resource: K }) === 2, 'a reconnect');
    expect(metricValue(families, 'kopf_watch_lists_total', { resource: K })).toBe(1);
    expect(metricValue(families, 'kopf_watch_gone_total', { resource: K })).toBe(0);

    // An expired version: the next connection answers 410, the operator re-lists and watches again.
    cluster.faults.add({ resource: 'kopfexamples', watch: true, times: 1, action: { watch: { error: 410 } } });
    cluster.dropWatches({ resource: 'kopfexamples' }, 'end');
    families = await scrapeUntil(url, (f) => metricValue(f, 'kopf_watch_connects_total', { resource: K }) === 4, 'the watch after the re-list');
    expect(metricValue(families, 'kopf_watch_gone_total', { resource: K })).toBe(1);
    expect(metricValue(families, 'kopf_watch_lists_total', { resource: K })).toBe(2);
    expect(fx.listRequests(cluster).length).toBe(2);
    expect(fx.watchRequests(cluster).length).toBe(4);
    expect(logs.grep('Restarting the watch-stream for kopfexamples.v1.kopf.dev')).toHaveLength(1);
  });

  it('shows the queue depth and the busy workers while a handler is blocked, and drains them after', async () => {
    const registry = new OperatorRegistry();
    const gate = fx.deferred();
    on.event('kopfexamples', { registry }, async function event_fn() {
      await gate.promise;
    });
    const url = `http://127.0.0.1:${await freePort()}/metrics`;
    await start({ registry, metricsEndpoint: url });
    await cluster.store.create(fx.kopfExample('kex-a'));
    await cluster.store.patch(fx.KEX, 'kex-a', { spec: { field: 'one' } }, { namespace: 'default' });
    await cluster.store.patch(fx.KEX, 'kex-a', { spec: { field: 'two' } }, { namespace: 'default' });
    let families = await scrapeUntil(url, (f) => metricValue(f, 'workqueue_depth', { name: K }) === 2, 'two events behind the blocked one');
    expect(metricValue(families, 'controller_runtime_active_workers', { controller: K })).toBe(1);
    expect(metricValue(families, 'kopf_queue_workers', { resource: K })).toBe(1);
    expect(metricValue(families, 'kopf_queue_objects', { resource: K })).toBe(1);
    expect(metricValue(families, 'workqueue_adds_total', { name: K, controller: K })).toBe(3);
    expect(metricValue(families, 'controller_runtime_max_concurrent_reconciles', { controller: K })).toBeUndefined();
    gate.resolve();
    families = await scrapeUntil(
      url,
      (f) => metricValue(f, 'workqueue_depth', { name: K }) === 0 && metricValue(f, 'controller_runtime_active_workers', { controller: K }) === 0,
      'the queue to drain',
    );
    expect(metricValue(families, 'kopf_handler_successes_total', { resource: K, handler: 'event_fn' })).toBe(3);
  });

  it('counts running daemons and timers while their object exists, and none after it is deleted', async () => {
    const registry = new OperatorRegistry();
    on.daemon('kopfexamples', { registry }, async function monitor({ stopped }: { stopped: DaemonStopped }) {
      await stopped.wait();
    });
    on.timer('kopfexamples', { registry, interval: 60 }, function tick() {
      /* ticks */
    });
    const url = `http://127.0.0.1:${await freePort()}/metrics`;
    await start({ registry, metricsEndpoint: url });
    await cluster.store.create(fx.kopfExample('kex-a'));
    await cluster.store.create(fx.kopfExample('kex-b'));
    let families = await scrapeUntil(
      url,
      (f) =>
        metricValue(f, 'kopf_running_daemons', { resource: K, handler: 'monitor' }) === 2 &&
        metricValue(f, 'kopf_running_timers', { resource: K, handler: 'tick' }) === 2,
      'two daemons and two timers',
    );
    expect(metricValue(families, 'kopf_running_timers', { resource: K, handler: 'monitor' })).toBe(0);
    await cluster.store.delete(fx.KEX, 'kex-a', { namespace: 'default' });
    families = await scrapeUntil(
      url,
      (f) =>
        metricValue(f, 'kopf_running_daemons', { resource: K, handler: 'monitor' }) === 1 &&
        metricValue(f, 'kopf_running_timers', { resource: K, handler: 'tick' }) === 1,
      "the deleted object's daemon and timer to exit",
    );
    await cluster.store.delete(fx.KEX, 'kex-b', { namespace: 'default' });
    families = await scrapeUntil(
      url,
      (f) =>
        metricValue(f, 'kopf_running_daemons', { resource: K, handler: 'monitor' }) === 0 &&
        metricValue(f, 'kopf_running_timers', { resource: K, handler: 'tick' }) === 0,
      'no daemons and timers',
    );
    expect(metricValue(families, 'kopf_handler_successes_total', { resource: K, handler: 'monitor' })).toBe(2);
  });

  it('keeps the metrics of two operators in one process apart, each in its own registry on its own endpoint', async () => {
    const before = prom.register.getMetricsAsArray().length;
    const first = new OperatorRegistry();
    const second = new OperatorRegistry();
    on.create('kopfexamples', { registry: first }, function create_fn() {
      /* first */
    });
    on.event('configmaps', { registry: second }, function event_fn() {
      /* second */
    });
    const one = `http://127.0.0.1:${await freePort()}/metrics`;
    const two = `http://127.0.0.1:${await freePort()}/metrics`;
    const opOne = await start({ registry: first, metricsEndpoint: one });
    const opTwo = await start({ registry: second, metricsEndpoint: two, waitForWatch: 'configmaps' });
    expect(opOne.context.instruments).not.toBe(opTwo.context.instruments);
    await cluster.store.create(fx.kopfExample('kex-a'));
    await cluster.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default' }, data: {} });
    const a = await scrapeUntil(
      one,
      (f) =>
        metricValue(f, 'kopf_handler_successes_total', { handler: 'create_fn' }) === 1 &&
        (metricValue(f, 'rest_client_requests_total', { method: 'PATCH' }) ?? 0) >= 1,
      "the first operator's handler and patches",
    );
    const b = await scrapeUntil(
      two,
      (f) => (metricValue(f, 'kopf_handler_successes_total', { resource: 'configmaps.v1', handler: 'event_fn' }) ?? 0) >= 1,
      "the second operator's handler",
    );
    expect(metricValue(a, 'kopf_handler_invocations_total', { handler: 'event_fn' })).toBeUndefined();
    expect(metricValue(a, 'kopf_watch_connects_total', { resource: 'configmaps.v1' })).toBeUndefined();
    expect(metricValue(b, 'kopf_handler_invocations_total', { handler: 'create_fn' })).toBeUndefined();
    expect(metricValue(b, 'kopf_watch_connects_total', { resource: K })).toBeUndefined();
    expect(metricValue(b, 'rest_client_requests_total', { method: 'PATCH' })).toBeUndefined(); // only the first one patches
    expect(prom.register.getMetricsAsArray().length).toBe(before);
  });

  it("serves the metrics on the liveness endpoint's server when on the same host and port, and on a server of their own otherwise", async () => {
    const registry = new OperatorRegistry();
    on.event('kopfexamples', { registry }, function event_fn() {
      /* nothing */
    });
    on.probe({ registry }, function ping() {
      return 'pong';
    });
    const port = await freePort();
    let served: readonly { readonly name: string; readonly url: string }[] = [];
    const op = await start({
      registry,
      livenessEndpoint: `http://127.0.0.1:${port}/healthz`,
      metricsEndpoint: `http://127.0.0.1:${port}/metrics`,
      onServing: (urls) => {
        served = urls;
      },
    });
    await fx.eventually(() => served.length > 0, 'the endpoints to listen');
    expect(served.map(({ name, url }) => `${name} ${url}`).sort()).toEqual([
      `liveness http://127.0.0.1:${port}/healthz`,
      `metrics http://127.0.0.1:${port}/metrics`,
      `readiness http://127.0.0.1:${port}/readyz`,
    ]);
    expect(op.context.instruments).toBeInstanceOf(OperatorMetrics);
    await scrapeUntil(`http://127.0.0.1:${port}/metrics`, (f) => metricValue(f, 'kopf_watch_connects_total', { resource: K }) === 1, 'the watch');
    const liveness = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(liveness.status).toBe(200);
    expect(await liveness.json()).toEqual({ ping: 'pong' });
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    await op.stop();

    // Different ports: two servers, each answering its own path only.
    const other = await freePort();
    const again = await start({
      registry,
      livenessEndpoint: `http://127.0.0.1:${port}/healthz`,
      metricsEndpoint: `http://127.0.0.1:${other}/metrics`,
    });
    await scrapeUntil(`http://127.0.0.1:${other}/metrics`, (f) => metricValue(f, 'kopf_watch_connects_total', { resource: K }) === 1, 'the watch');
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${other}/healthz`)).status).toBe(404);
    await again.stop();
  });

  it('has no registry, no instruments and no endpoint server without the option', async () => {
    const before = prom.register.getMetricsAsArray().length;
    const registry = new OperatorRegistry();
    on.login({ registry }, function login_fn() {
      return { server: cluster.url, token: cluster.token };
    });
    const stop = new AbortController();
    const spawned = await running.spawnTasks({ registry, settings: fx.fastSettings(), clusterwide: true, standalone: true, stopFlag: stop.signal });
    expect(spawned.context.instruments).toBeUndefined();
    expect(spawned.tasks.map((task) => task.name)).not.toContain('endpoint server');
    const done = running.runTasks(spawned);
    await fx.eventually(() => fx.watchRequests(cluster, 'customresourcedefinitions').length >= 1, 'the operator to watch CRDs');
    stop.abort();
    await done;
    expect(prom.register.getMetricsAsArray().length).toBe(before);
  });

  it('answers scrapes while the operator stops or refuses them cleanly; once stopped, they are refused', async () => {
    const registry = new OperatorRegistry();
    // A daemon that exits only when the test lets it keeps the operator stopping meanwhile.
    const exit = fx.deferred();
    let exiting = false;
    on.daemon('kopfexamples', { registry }, async function slow({ stopped }: { stopped: DaemonStopped }) {
      await stopped.wait();
      exiting = true;
      await exit.promise;
    });
    const url = `http://127.0.0.1:${await freePort()}/metrics`;
    const op = await start({ registry, metricsEndpoint: url });
    await cluster.store.create(fx.kopfExample('kex-a'));
    await scrapeUntil(url, (f) => metricValue(f, 'kopf_running_daemons', { resource: K, handler: 'slow' }) === 1, 'the daemon');

    const outcomes: string[] = [];
    const stopping = op.stop();
    let stopped = false;
    void stopping.then(() => {
      stopped = true;
    });
    /** One scrape: its status, or `refused` for a connection refused or reset (nothing half-written). */
    const attempt = async (): Promise<string> => {
      try {
        const response = await fetch(url);
        const body = await response.text();
        parseExposition(body);
        return String(response.status);
      } catch (error) {
        const code = (error as { cause?: { code?: string } }).cause?.code ?? 'unknown';
        expect(['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET']).toContain(code);
        return 'refused';
      }
    };
    // While the daemon holds the operator in its stop: scrapes until one is refused.
    await fx.eventually(() => exiting, 'the daemon to be told to exit');
    await until(
      async () => {
        outcomes.push(await attempt());
        return outcomes.at(-1) === 'refused' ? true : undefined;
      },
      'a refused scrape while the operator stops',
      10_000,
      20,
    );
    expect(stopped).toBe(false);
    exit.resolve();
    await stopping;
    expect(op.error).toBeUndefined();
    expect(outcomes.every((outcome) => outcome === '200' || outcome === 'refused')).toBe(true);
    expect(outcomes).toContain('refused');
    await expect(fetch(url)).rejects.toThrow();
    expect(logs.grep('endpoint has failed')).toEqual([]);
    // The metrics themselves outlive the server: the daemon has exited.
    const families = parseExposition((await metricsOf(op).scrape()).body);
    expect(metricValue(families, 'kopf_running_daemons', { resource: K, handler: 'slow' })).toBe(0);
  });

  it('rejects a malformed metrics URL before anything starts, and fails the operator when the port is taken', async () => {
    const registry = new OperatorRegistry();
    await expect(running.spawnTasks({ registry, clusterwide: true, standalone: true, metricsEndpoint: 'ftp://0.0.0.0:8080/metrics' })).rejects.toThrow(
      EndpointUrlError,
    );
    await expect(running.spawnTasks({ registry, clusterwide: true, standalone: true, metricsEndpoint: 'http://0.0.0.0:99999/metrics' })).rejects.toThrow(
      /metricsEndpoint: .* the port must be between 0 and 65535/,
    );
    expect(cluster.requests.all).toEqual([]);

    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as net.AddressInfo;
    try {
      const op = await start({ registry, metricsEndpoint: `http://127.0.0.1:${port}/metrics`, waitForWatch: false });
      await op.done;
      expect(op.error).toBeInstanceOf(EndpointBindError);
      expect(String((op.error as Error).message)).toMatch(new RegExp(`Cannot serve the metrics endpoint at http://127\\.0\\.0\\.1:${port}: EADDRINUSE`));
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it('takes --metrics from the command line, checked as it is parsed', () => {
    expect(parseRunArgs(['-A', '--metrics', 'http://0.0.0.0:8080/metrics', 'operator.ts'])?.metricsEndpoint).toBe('http://0.0.0.0:8080/metrics');
    expect(parseRunArgs(['-A', 'operator.ts'])?.metricsEndpoint).toBeUndefined();
    const errors: string[] = [];
    const output = {
      out: () => undefined,
      err: (text: string) => {
        errors.push(text);
      },
    };
    expect(() => parseRunArgs(['-A', '--metrics', 'ftp://host/metrics', 'operator.ts'], { output })).toThrow(UsageError);
    expect(errors.join('')).toMatch(/--metrics <url>.*"ftp:\/\/host\/metrics" is not a valid endpoint URL: the scheme must be http or https, not ftp/s);
  });
});
