/**
 * The metrics of one operator in the Prometheus text format (prom-client), as its `/metrics`
 * endpoint serves them: the one implementation of `cogs/structs/instruments`.
 *
 * Each operator that asks for metrics gets an `OperatorMetrics` with a registry of its own, so
 * several operators in one process never share or overwrite a series; the process-wide default
 * registry of prom-client is never touched. The Node process metrics (CPU, memory, event-loop lag,
 * GC, handles) describe the process, not an operator: they are collected once per process, in a
 * private registry made when the first operator with metrics starts, and appended to every scrape.
 *
 * Names follow controller-runtime wherever it has the same concept, so that dashboards built for
 * controller-runtime operators work unchanged: a *controller* is a resource (`kopfexamples.v1.kopf.dev`),
 * a *reconcile* is one processing cycle of one object, the *workqueue* is the resource's per-object
 * queues, and the *REST client* is the operator's API client. What controller-runtime has no word
 * for is under `kopf_`: handler invocations and their failures by kind, watch streams, daemons and
 * timers (docs/metrics.md lists them all).
 *
 * The cost per event is kept small: a resource's instruments are found once per watcher (and then
 * once per object for its daemons); counters are plain numbers in per-resource and per-handler
 * cells, handed to prom-client only when scraped; only histogram observations go through
 * prom-client's labelled children, which are made once per series and kept. Gauges (queue depth,
 * workers) are read off the operator's queues when scraped, so they cost nothing in between.
 *
 * Only an operator with metrics loads this module (and prom-client with it): `roots.loadMetrics`
 * imports it when `metricsEndpoint` is given, before anything starts, and a plain run never
 * pays for prom-client's start-up time and memory (R-PERF-201).
 */

import * as nodecrypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as prom from 'prom-client';
import type * as instruments from '../../cogs/structs/instruments.js';
import * as references from '../../cogs/structs/references.js';
import type * as endpoints from '../engines/endpoints.js';
import * as engineErrors from '../engines/errors.js';
import type * as guarding from '../engines/guarding.js';
import * as selfsigning from '../engines/selfsigning.js';
import type * as queueing from './queueing.js';

/** Seconds; controller-runtime's reconcile buckets, thinned out. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Seconds; the buckets of client-go's (and controller-runtime's) `rest_client_request_duration_seconds`. */
const REQUEST_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];
/** Seconds; admission requests must be answered within the webhook's timeout (10 s by default). */
const WEBHOOK_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

const RECONCILE_RESULTS: readonly instruments.ReconcileResult[] = ['success', 'error', 'requeue', 'requeue_after'];
const FAILURE_KINDS = ['temporary', 'permanent', 'arbitrary'] as const;

/** What `OperatorMetrics` needs. */
export interface MetricsOptions {
  /** The operator's queues: where the queue gauges are read from when scraped. */
  readonly queues?: queueing.Queues;
  /** The stopwatch, in milliseconds. Default: `performance.now()`. */
  readonly now?: () => number;
  /** Append the Node process metrics to every scrape. Default `true`. */
  readonly processMetrics?: boolean;
}

/** One scrape: the exposition text and its content type. */
export interface Scrape {
  readonly contentType: string;
  readonly body: string;
}

type Histogram = prom.Histogram.Internal<string>;

/** The counters of one handler of one resource, and its running daemons or timers. */
class HandlerCells {
  invocations = 0;
  successes = 0;
  readonly failures = { temporary: 0, permanent: 0, arbitrary: 0 };
  retries = 0;
  daemons = 0;
  timers = 0;

  constructor(
    readonly id: string,
    readonly duration: Histogram,
  ) {}
}

/** Everything counted about one resource: its instruments. */
class ResourceCells implements instruments.ResourceInstruments {
  adds = 0;
  retries = 0;
  lists = 0;
  connects = 0;
  expirations = 0;
  readonly reconciles: Record<instruments.ReconcileResult, number> = { success: 0, error: 0, requeue: 0, requeue_after: 0 };
  errors = 0;
  terminal = 0;
  readonly handlers = new Map<string, HandlerCells>();
  private readonly reconcileTime: Histogram;

  constructor(
    readonly name: string,
    private readonly owner: OperatorMetrics,
  ) {
    this.reconcileTime = owner.families.reconcileTime.labels(name);
  }

  now(): number {
    return this.owner.now();
  }

  queued(): void {
    this.adds += 1;
  }

  listed(): void {
    this.lists += 1;
  }

  connected(): void {
    this.connects += 1;
  }

  gone(): void {
    this.expirations += 1;
  }

  handled(handlerId: string, result: instruments.HandlerResult, retrying: boolean, since: number): void {
    const cells = this.handler(handlerId);
    cells.invocations += 1;
    if (result === 'success') cells.successes += 1;
    else if (result !== 'subhandlers') cells.failures[result] += 1;
    if (retrying) cells.retries += 1;
    cells.duration.observe((this.owner.now() - since) / 1000);
  }

  reconciled(result: instruments.ReconcileResult, how: instruments.ReconcileDetails, since: number): void {
    this.reconciles[result] += 1;
    if (result === 'error') this.errors += 1;
    if (how.terminal) this.terminal += 1;
    if (how.requeued) this.retries += 1;
    this.reconcileTime.observe((this.owner.now() - since) / 1000);
  }

  spawned(handlerId: string, kind: 'daemon' | 'timer'): void {
    const cells = this.handler(handlerId);
    if (kind === 'daemon') cells.daemons += 1;
    else cells.timers += 1;
  }

  exited(handlerId: string, kind: 'daemon' | 'timer'): void {
    const cells = this.handler(handlerId);
    if (kind === 'daemon') cells.daemons -= 1;
    else cells.timers -= 1;
  }

  private handler(id: string): HandlerCells {
    let cells = this.handlers.get(id);
    if (cells === undefined) {
      cells = new HandlerCells(id, this.owner.families.handlerDuration.labels(this.name, id));
      this.handlers.set(id, cells);
    }
    return cells;
  }
}

/** The requests of one method to one server: counts by status (`null`: no response). */
class RequestCells {
  readonly counts = new Map<number | null, number>();

  constructor(
    readonly host: string,
    readonly method: string,
    readonly duration: Histogram,
  ) {}
}

/** The admission requests of one webhook. */
class WebhookCells {
  readonly counts = new Map<number, number>();
  inFlight = 0;

  constructor(
    readonly id: string,
    readonly latency: Histogram,
  ) {}
}

/** A labelled counter whose values are read from cells when scraped. */
function counter(
  registry: prom.Registry,
  name: string,
  help: string,
  labelNames: readonly string[],
  rows: () => Iterable<readonly [prom.LabelValues<string>, number]>,
): prom.Counter {
  return new prom.Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect(this: prom.Counter) {
      this.reset();
      for (const [labels, value] of rows()) this.inc(labels, value);
    },
  });
}

/** A labelled gauge whose values are read when scraped. */
function gauge(
  registry: prom.Registry,
  name: string,
  help: string,
  labelNames: readonly string[],
  rows: () => Iterable<readonly [prom.LabelValues<string>, number]>,
): prom.Gauge {
  return new prom.Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    collect(this: prom.Gauge) {
      this.reset();
      for (const [labels, value] of rows()) this.set(labels, value);
    },
  });
}

let processRegistry: prom.Registry | undefined;

/** The Node process metrics, collected once per process (see the module's comment). */
function processMetrics(): prom.Registry {
  if (processRegistry === undefined) {
    processRegistry = new prom.Registry();
    prom.collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * The metrics of one operator (see the module's comment): its instruments, its own registry, and
 * the text of a scrape.
 *
 * @example
 * const metrics = new OperatorMetrics({ queues });
 * const api = new HttpKubeApi({ vault, settings, logger, instruments: metrics });
 * const { contentType, body } = await metrics.scrape();
 */
export class OperatorMetrics implements instruments.Instruments {
  /** This operator's registry (never prom-client's global one). */
  readonly registry = new prom.Registry();
  /** @internal The histograms, whose labelled children the cells keep. */
  readonly families: {
    readonly reconcileTime: prom.Histogram;
    readonly handlerDuration: prom.Histogram;
    readonly requestDuration: prom.Histogram;
    readonly webhookLatency: prom.Histogram;
  };

  private readonly byObject = new WeakMap<references.Resource, ResourceCells>();
  private readonly byName = new Map<string, ResourceCells>();
  private readonly servers = new Map<string, Map<string, RequestCells>>();
  private readonly webhooks = new Map<string, WebhookCells>();
  private readonly queues: queueing.Queues | undefined;
  private readonly withProcess: boolean;
  readonly now: () => number;

  constructor(options: MetricsOptions = {}) {
    this.queues = options.queues;
    this.now = options.now ?? (() => performance.now());
    this.withProcess = options.processMetrics ?? true;
    const registry = this.registry;
    const histogram = (name: string, help: string, labelNames: readonly string[], buckets: number[]): prom.Histogram =>
      new prom.Histogram({ name, help, labelNames, buckets, registers: [registry] });
    this.families = {
      reconcileTime: histogram(
        'controller_runtime_reconcile_time_seconds',
        'Length of time per reconciliation (processing cycle of one object) per controller (resource).',
        ['controller'],
        DURATION_BUCKETS,
      ),
      handlerDuration: histogram(
        'kopf_handler_duration_seconds',
        'Length of time per handler invocation, per resource and handler.',
        ['resource', 'handler'],
        DURATION_BUCKETS,
      ),
      requestDuration: histogram(
        'rest_client_request_duration_seconds',
        "Request latency in seconds of the operator's API client. Broken down by verb and host.",
        ['verb', 'host'],
        REQUEST_BUCKETS,
      ),
      webhookLatency: histogram(
        'controller_runtime_webhook_latency_seconds',
        'Histogram of the latency of processing admission requests.',
        ['webhook'],
        WEBHOOK_BUCKETS,
      ),
    };
    this.defineCounters();
    this.defineGauges();
  }

  forResource(resource: references.Resource): instruments.ResourceInstruments {
    return this.cellsOf(resource);
  }

  requested(server: string, method: string, status: number | null, since: number): void {
    let methods = this.servers.get(server);
    if (methods === undefined) {
      methods = new Map();
      this.servers.set(server, methods);
    }
    let cells = methods.get(method);
    if (cells === undefined) {
      const host = hostOf(server);
      cells = new RequestCells(host, method, this.families.requestDuration.labels(method, host));
      methods.set(method, cells);
    }
    cells.counts.set(status, (cells.counts.get(status) ?? 0) + 1);
    cells.duration.observe((this.now() - since) / 1000);
  }

  /**
   * A series per webhook id, kept for the operator's lifetime: the admission engine reports only
   * registered handler ids (and `''`), refusing unknown ones before measuring (R-SEC-6), so the
   * number of series is bounded by the registry, whatever paths clients request.
   */
  webhookRequest(webhookId: string, code: number, seconds: number): void {
    const cells = this.webhookCells(webhookId);
    cells.counts.set(code, (cells.counts.get(code) ?? 0) + 1);
    cells.latency.observe(seconds);
  }

  webhookInFlight(webhookId: string, change: 1 | -1): void {
    this.webhookCells(webhookId).inFlight += change;
  }

  /**
   * The exposition text of this operator's metrics, followed by the process metrics.
   *
   * @example
   * const { contentType, body } = await metrics.scrape();
   */
  async scrape(): Promise<Scrape> {
    const own = await this.registry.metrics();
    const process = this.withProcess ? await processMetrics().metrics() : '';
    return { contentType: this.registry.contentType, body: process === '' ? own : `${own.replace(/\n*$/, '\n')}${process}` };
  }

  private cellsOf(resource: references.Resource): ResourceCells {
    let cells = this.byObject.get(resource);
    if (cells !== undefined) return cells;
    // Re-discovered resources are new objects with the same name: they continue the same series.
    const name = references.resourceName(resource);
    cells = this.byName.get(name);
    if (cells === undefined) {
      cells = new ResourceCells(name, this);
      this.byName.set(name, cells);
    }
    this.byObject.set(resource, cells);
    return cells;
  }

  private webhookCells(id: string): WebhookCells {
    let cells = this.webhooks.get(id);
    if (cells === undefined) {
      cells = new WebhookCells(id, this.families.webhookLatency.labels(id));
      this.webhooks.set(id, cells);
    }
    return cells;
  }

  private *perResource<T>(fn: (cells: ResourceCells) => T): Iterable<T> {
    for (const cells of this.byName.values()) yield fn(cells);
  }

  private *perHandler<T>(fn: (resource: ResourceCells, cells: HandlerCells) => T): Iterable<T> {
    for (const resource of this.byName.values()) for (const cells of resource.handlers.values()) yield fn(resource, cells);
  }

  private defineCounters(): void {
    const r = this.registry;
    const self = this;
    counter(
      r,
      'controller_runtime_reconcile_total',
      'Total number of reconciliations (processing cycles) per controller (resource).',
      ['controller', 'result'],
      function* rows() {
        for (const cells of self.byName.values()) for (const result of RECONCILE_RESULTS) yield [{ controller: cells.name, result }, cells.reconciles[result]];
      },
    );
    counter(r, 'controller_runtime_reconcile_errors_total', 'Total number of reconciliation errors per controller (resource).', ['controller'], () =>
      this.perResource((cells) => [{ controller: cells.name }, cells.errors] as const),
    );
    counter(
      r,
      'controller_runtime_terminal_reconcile_errors_total',
      'Total number of reconciliations in which a handler failed for good, per controller (resource).',
      ['controller'],
      () => this.perResource((cells) => [{ controller: cells.name }, cells.terminal] as const),
    );
    counter(r, 'workqueue_adds_total', 'Total number of events put into the per-object queues of a resource.', ['name', 'controller'], () =>
      this.perResource((cells) => [{ name: cells.name, controller: cells.name }, cells.adds] as const),
    );
    counter(
      r,
      'workqueue_retries_total',
      'Total number of processing cycles that ended with the object to be processed again after a delay.',
      ['name', 'controller'],
      () => this.perResource((cells) => [{ name: cells.name, controller: cells.name }, cells.retries] as const),
    );
    counter(r, 'kopf_handler_invocations_total', 'Total number of handler invocations, per resource and handler.', ['resource', 'handler'], () =>
      this.perHandler((res, cells) => [{ resource: res.name, handler: cells.id }, cells.invocations] as const),
    );
    counter(r, 'kopf_handler_successes_total', 'Total number of successful handler invocations, per resource and handler.', ['resource', 'handler'], () =>
      this.perHandler((res, cells) => [{ resource: res.name, handler: cells.id }, cells.successes] as const),
    );
    counter(
      r,
      'kopf_handler_failures_total',
      'Total number of failed handler invocations, per resource, handler and kind of error (temporary, permanent, arbitrary).',
      ['resource', 'handler', 'kind'],
      function* rows() {
        for (const res of self.byName.values()) {
          for (const cells of res.handlers.values())
            for (const kind of FAILURE_KINDS) yield [{ resource: res.name, handler: cells.id, kind }, cells.failures[kind]];
        }
      },
    );
    counter(
      r,
      'kopf_handler_retries_total',
      'Total number of handler invocations after which the handler is to be retried, per resource and handler.',
      ['resource', 'handler'],
      () => this.perHandler((res, cells) => [{ resource: res.name, handler: cells.id }, cells.retries] as const),
    );
    counter(r, 'kopf_watch_lists_total', 'Total number of listings of a resource: the initial ones and every re-list.', ['resource'], () =>
      this.perResource((cells) => [{ resource: cells.name }, cells.lists] as const),
    );
    counter(
      r,
      'kopf_watch_connects_total',
      'Total number of watch connections accepted by the API server: the first ones and every reconnect.',
      ['resource'],
      () => this.perResource((cells) => [{ resource: cells.name }, cells.connects] as const),
    );
    counter(
      r,
      'kopf_watch_gone_total',
      'Total number of watch streams ended by HTTP 410 Gone (an expired resource version), each followed by a re-list.',
      ['resource'],
      () => this.perResource((cells) => [{ resource: cells.name }, cells.expirations] as const),
    );
    counter(
      r,
      'rest_client_requests_total',
      "Number of HTTP requests of the operator's API client, partitioned by status code, method, and host.",
      ['code', 'method', 'host'],
      function* rows() {
        for (const methods of self.servers.values()) {
          for (const cells of methods.values()) {
            for (const [status, count] of cells.counts)
              yield [{ code: status === null ? '<error>' : String(status), method: cells.method, host: cells.host }, count];
          }
        }
      },
    );
    counter(r, 'controller_runtime_webhook_requests_total', 'Total number of admission requests by HTTP status code.', ['webhook', 'code'], function* rows() {
      for (const cells of self.webhooks.values()) for (const [code, count] of cells.counts) yield [{ webhook: cells.id, code: String(code) }, count];
    });
  }

  private defineGauges(): void {
    const r = this.registry;
    gauge(r, 'controller_runtime_webhook_requests_in_flight', 'Current number of admission requests being served.', ['webhook'], () =>
      [...this.webhooks.values()].map((cells) => [{ webhook: cells.id }, cells.inFlight] as const),
    );
    gauge(r, 'kopf_running_daemons', 'Number of running daemons (including those still exiting), per resource and handler.', ['resource', 'handler'], () =>
      this.perHandler((res, cells) => [{ resource: res.name, handler: cells.id }, cells.daemons] as const),
    );
    gauge(r, 'kopf_running_timers', 'Number of running timers (including those still exiting), per resource and handler.', ['resource', 'handler'], () =>
      this.perHandler((res, cells) => [{ resource: res.name, handler: cells.id }, cells.timers] as const),
    );
    const queues = (): Map<references.Resource, queueing.QueueCounts> => this.queues?.byResource() ?? new Map();
    const each = <T>(fn: (name: string, counts: queueing.QueueCounts) => T): T[] =>
      [...queues()].map(([resource, counts]) => fn(this.cellsOf(resource).name, counts));
    gauge(r, 'workqueue_depth', 'Current number of events waiting in the per-object queues of a resource.', ['name', 'controller'], () =>
      each((name, counts) => [{ name, controller: name }, counts.queuedEvents] as const),
    );
    gauge(
      r,
      'controller_runtime_active_workers',
      'Number of per-object workers processing an event right now, per controller (resource).',
      ['controller'],
      () => each((name, counts) => [{ controller: name }, counts.busyWorkers] as const),
    );
    gauge(
      r,
      'controller_runtime_max_concurrent_reconciles',
      'Maximum number of concurrent per-object workers per controller (resource), when limited.',
      ['controller'],
      () =>
        each((name, counts) => [{ controller: name }, counts.workerLimit] as const).filter(
          (row): row is readonly [{ controller: string }, number] => row[1] !== null,
        ),
    );
    gauge(r, 'kopf_queue_workers', 'Number of live per-object workers (processing, idle, or waiting to start), per resource.', ['resource'], () =>
      each((name, counts) => [{ resource: name }, counts.workers] as const),
    );
    gauge(r, 'kopf_queue_objects', 'Number of objects with a queue stream (a worker, or events waiting for one), per resource.', ['resource'], () =>
      each((name, counts) => [{ resource: name }, counts.streams] as const),
    );
  }
}

/** The `host` label of a server URL, as client-go has it: `host:port` as in the URL. */
function hostOf(server: string): string {
  try {
    return new URL(server).host;
  } catch {
    return server;
  }
}

/**
 * The serving certificate of `https://` metrics (R-SEC-9): `tls.crt` and `tls.key` of `dir` (a
 * mounted `kubernetes.io/tls` Secret), read once; without `dir`, a self-signed one made in memory
 * for the names the endpoint is reached by (its host, the pod's host name, loopback).
 *
 * @throws engineErrors.EndpointCertificateError naming the file that cannot be read or the pair that does not match.
 */
export function metricsCertificate(address: endpoints.EndpointAddress, dir?: string): endpoints.EndpointTls {
  if (dir === undefined) {
    const { certPem, keyPem } = selfsigning.selfSignedCertificate([address.host, os.hostname(), 'localhost', '127.0.0.1', '::1']);
    return { cert: certPem, key: keyPem };
  }
  const read = (name: string): string => {
    const file = path.join(dir, name);
    try {
      return fs.readFileSync(file, 'utf8');
    } catch (error) {
      throw new engineErrors.EndpointCertificateError(
        `Cannot read the metrics' serving certificate: ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`,
        {
          cause: error,
        },
      );
    }
  };
  const tls = { cert: read('tls.crt'), key: read('tls.key') };
  try {
    const certificate = new nodecrypto.X509Certificate(tls.cert);
    if (!certificate.checkPrivateKey(nodecrypto.createPrivateKey(tls.key))) throw new Error('the key does not belong to the certificate');
  } catch (error) {
    const why = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new engineErrors.EndpointCertificateError(`The metrics' serving certificate in ${dir} (tls.crt, tls.key) cannot be used: ${why}.`, { cause: error });
  }
  return tls;
}

/** How an `https://` metrics endpoint is served (R-SEC-9..12). */
export interface SecureMetrics {
  /** The serving certificate, or how to make it when the server starts. */
  readonly tls: NonNullable<endpoints.Endpoint['tls']>;
  /** Who may scrape: the TokenReview and SubjectAccessReview of every caller. */
  readonly guard: guarding.AccessGuard;
}

/**
 * The `/metrics` endpoint of an operator (served by `endpoints.serveEndpoints`): every GET or HEAD
 * answers a scrape. A scrape that fails (it should not) becomes the server's one-line 500. With
 * `secure` (for an `https://` URL), served over TLS to callers the guard lets through only.
 *
 * @param url `http://HOST:PORT/PATH`, or `https://HOST:PORT/PATH` with `secure`.
 * @param option how the user gave the URL, for errors (e.g. `--metrics`).
 */
export function metricsEndpoint(metrics: OperatorMetrics, url: string, option = 'metricsEndpoint', secure?: SecureMetrics): endpoints.Endpoint {
  const endpoint: endpoints.Endpoint = {
    name: 'metrics',
    url,
    option,
    handle: async () => {
      const { contentType, body } = await metrics.scrape();
      return { status: 200, contentType, body };
    },
  };
  return secure === undefined ? endpoint : secure.guard.guard({ ...endpoint, tls: secure.tls });
}
