/**
 * Instruments: what the runtime's layers report about their own work, for an operator's metrics.
 *
 * The API client, the watch streams, handler execution, the per-object queues, the processing
 * cycles and the daemons each know something a scraper wants to see (requests by verb and code,
 * reconnects, handler failures, queue depth, …), but none of them may know about Prometheus: the
 * client and execution sit far below the reactor, and an operator without metrics must not pay
 * for them. So they report to these small interfaces, which live low enough for all of them, and
 * every place that holds one holds it as an optional field: without metrics there is no object at
 * all, and a report costs one `undefined` check.
 *
 * The one implementation (`core/reactor/reporting`) keeps a registry per operator. Reports carry no
 * label strings that callers would build per event: identities that exist anyway (a handler id, a
 * server URL, an HTTP status) are passed as they are, and `forResource()` binds a resource once,
 * so its per-event reports are plain calls on an object the caller already holds.
 *
 * Durations are measured by the instruments' own stopwatch (`now()`, milliseconds): callers take
 * `now()` when work starts and pass it back when it ends.
 */

import type * as references from './references.js';

/** A monotonic time source in milliseconds (the instruments' own, not the operator's clock). */
export interface Stopwatch {
  now(): number;
}

/** What one invocation of a handler came to: success, or the kind of error it failed with. */
export type HandlerResult =
  | 'success'
  /** A `TemporaryError`: retried after its delay (unless the limits escalate it). */
  | 'temporary'
  /** A `PermanentError`, or the timeout or retries limit reached. */
  | 'permanent'
  /** Any other error: retried or not as the handler's errors mode says. */
  | 'arbitrary'
  /** Not finished: sub-handlers are still to run (neither a success nor a failure). */
  | 'subhandlers';

/**
 * What one processing cycle of one object came to, in controller-runtime's words: `error` if a
 * handler (or the cycle itself) failed with an error other than a temporary one, `requeue_after`
 * if the object is to be processed again after a delay, `requeue` after none, else `success`.
 */
export type ReconcileResult = 'success' | 'error' | 'requeue' | 'requeue_after';

/** More about a processing cycle than its result. */
export interface ReconcileDetails {
  /** A handler failed for good in the cycle (no retry). */
  readonly terminal: boolean;
  /** The object is to be processed again after a delay. */
  readonly requeued: boolean;
}

/** The API client's reports. */
export interface ClientInstruments extends Stopwatch {
  /**
   * One HTTP request (one attempt of it, or the opening of a watch stream) has ended: with a
   * response of `status`, or `null` when none came (a connection error or a timeout).
   *
   * @param server the credentials' server URL the request went to.
   * @param since the stopwatch's `now()` when the attempt started.
   */
  requested(server: string, method: string, status: number | null, since: number): void;
}

/** The reports of the list-and-watch streams of one resource. */
export interface WatchInstruments {
  /** A listing succeeded: the initial one or a re-list. */
  listed(): void;
  /** A watch connection was accepted by the server: the first one or a reconnect. */
  connected(): void;
  /** A watch stream ended with HTTP 410 Gone: its resource version expired, a re-list follows. */
  gone(): void;
}

/** The reports of handler execution. */
export interface HandlerInstruments extends Stopwatch {
  /**
   * One invocation of a handler has ended (cancelled ones are not reported).
   *
   * @param retrying whether the handler will be invoked again for the same cause.
   * @param since the stopwatch's `now()` when the invocation started.
   */
  handled(handlerId: string, result: HandlerResult, retrying: boolean, since: number): void;
}

/** The reports of daemons and timers: one `spawned` and, once it has exited, one `exited` per task. */
export interface SpawningInstruments {
  spawned(handlerId: string, kind: 'daemon' | 'timer'): void;
  exited(handlerId: string, kind: 'daemon' | 'timer'): void;
}

/** Everything reported about one resource. */
export interface ResourceInstruments extends WatchInstruments, HandlerInstruments, SpawningInstruments {
  /** An event of an object was put into the per-object queue. */
  queued(): void;
  /**
   * One processing cycle of an object has ended (or reached its sleep for delayed handlers).
   *
   * @param how.terminal whether a handler failed for good in it (no retry).
   * @param how.requeued whether the object is to be processed again after a delay.
   * @param since the stopwatch's `now()` when the cycle started.
   */
  reconciled(result: ReconcileResult, how: ReconcileDetails, since: number): void;
}

/**
 * The reports of the admission request path: `webhookInFlight(id, 1)` when a request arrives,
 * `webhookInFlight(id, -1)` and one `webhookRequest` when it is answered (with any status, errors
 * included). The metrics are controller-runtime's `controller_runtime_webhook_requests_total`,
 * `…_webhook_latency_seconds` and `…_webhook_requests_in_flight`, labelled by webhook id.
 */
export interface WebhookInstruments {
  /**
   * One admission request was answered.
   *
   * @param webhookId the webhook's id (the handler id, as in its URL path): only registered ids
   *   (R-SEC-6), so that the series stay as few as the handlers.
   * @param code the HTTP status of the response.
   * @param seconds from receiving the request to sending the response.
   */
  webhookRequest(webhookId: string, code: number, seconds: number): void;
  /** Admission requests being served: +1 when one arrives, -1 when it is answered. */
  webhookInFlight(webhookId: string, change: 1 | -1): void;
}

/** All the instruments of one operator. */
export interface Instruments extends ClientInstruments, WebhookInstruments {
  /** The instruments of one resource (the same object for the same resource, so callers may keep it). */
  forResource(resource: references.Resource): ResourceInstruments;
}
