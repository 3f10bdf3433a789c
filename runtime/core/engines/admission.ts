/**
 * The admission engine's request path (R-ADMISSION-4..6, R-KWARGS-6): the one implementation of
 * the `WebhookFn` that every webhook server calls, built-in or user-written.
 *
 * A request for a webhook id that is no admission handler's (a stale or mistyped URL, or anyone
 * trying paths) is refused with HTTP 404 before anything else (R-SEC-6): it runs no handler, and
 * it is not measured, so that the webhook ids in the metrics are only the registered ones and
 * their number stays what the operator registered. Kopf admits such requests (all handlers of the
 * resource run); kopf-gen refuses them and lets the webhook configuration's `failurePolicy` decide.
 *
 * Every other request passes through `webhookFn`'s `measureRequest` (one place that sees each request's
 * webhook id, HTTP status, `allowed` and duration by the operator's clock, and reports it in
 * `recordRequest`: where request counters and latency histograms belong) into
 * `serveAdmissionRequest`, start to end: the review is checked and its resource
 * found among those that admission handlers serve (`reviews`); the handlers are selected by the
 * registry (webhook id and type from the server, subresource, operation, filters); all of them run
 * once, in registration order, each to an outcome — admission has no retries, so arbitrary errors
 * are permanent, and whatever a handler throws (also a non-`Error`) becomes one ERROR line in the
 * log and one failure in the reply; the reply (`reviews.buildResponse`) carries the warnings they
 * appended and their merged patch as a JSON-Patch relative to the request's body.
 *
 * Handlers get the resource arguments over a frozen view of the request's body plus the admission
 * arguments: `dryRun`, `warnings`, `userInfo`, `headers`, `sslPeer`, `operation`, `subresource`,
 * `old`/`new` (the request's `oldObject`/`object`) and their `diff`. Memos (R-ADMISSION-6): a
 * throwaway copy of the operator memo for creations, the object's own memo otherwise — the object
 * memories live in the reactor, which passes a `MemoSource` in.
 *
 * Requests that cannot be answered with a review (unknown webhook ids, malformed, unknown or
 * ambiguous resources) reject with a `WebhookRequestError`, logged here as one WARNING line without
 * a stack trace; the server turns it into the HTTP status, never a stack trace. What the request
 * names — the webhook id, the object's name and namespace in the handlers' log prefix — is logged
 * with control characters escaped (R-SEC-8): a newline in a name cannot forge a log line.
 */

import type * as clocks from '../../cogs/aio/clocks.js';
import type * as clients from '../../cogs/client/clients.js';
import type * as settingsModule from '../../cogs/configs/settings.js';
import type * as bodies from '../../cogs/structs/bodies.js';
import * as dicts from '../../cogs/structs/dicts.js';
import * as diffs from '../../cogs/structs/diffs.js';
import type * as instruments from '../../cogs/structs/instruments.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as patches from '../../cogs/structs/patches.js';
import * as printables from '../../cogs/structs/printables.js';
import type * as references from '../../cogs/structs/references.js';
import type * as webhooks from '../../cogs/structs/webhooks.js';
import * as errors from '../actions/errors.js';
import * as execution from '../actions/execution.js';
import * as invocation from '../actions/invocation.js';
import * as logging from '../actions/logging.js';
import * as progression from '../actions/progression.js';
import type * as handlers from '../intents/handlers.js';
import type * as registries from '../intents/registry.js';
import * as converting from './converting.js';
import * as reviews from './reviews.js';
import * as structErrors from '../../cogs/structs/errors.js';

/** Where the served resources come from: the operator's insights (its `webhooks` list). */
export interface ServedResources {
  /** The resources selected by admission handlers, as discovered. */
  readonly webhooks: readonly references.Resource[];
}

/** Where memos come from (R-ADMISSION-6); implemented by the reactor over its object memories. */
export interface MemoSource {
  /** A throwaway copy of the operator memo if `ephemeral`, else the object's memo (created if unknown). */
  recallMemo(body: bodies.RawBody, options: { readonly ephemeral: boolean }): object;
}

/** What the request path needs from the operator. */
export interface AdmissionOptions {
  readonly registry: registries.OperatorRegistry;
  readonly settings: settingsModule.OperatorSettings;
  readonly clock: clocks.Clock;
  readonly resources: ServedResources;
  readonly memos: MemoSource;
  /** Index names → indices, injected into the arguments by name (R-INDEX-8). */
  readonly indices?: Readonly<Record<string, unknown>>;
  /** The operator's signal: handlers see it as `signal`; waiting for them ends when it aborts. */
  readonly signal: AbortSignal;
  /** Where rejected requests are logged; default `kopf.engines.admission`. */
  readonly logger?: loggers.Logger;
  /** Where requests are counted and timed when metrics are on (`--metrics`); absent otherwise. */
  readonly instruments?: instruments.WebhookInstruments;
  /**
   * The operator's typed client, handed to handlers as `client`. Webhook servers may serve from
   * outside the operator's async context, so it is given here; default: the operator's context.
   */
  readonly client?: clients.KubeClient;
}

const EMPTY = Object.freeze({});

/** What the arguments of one handler read: the request's shared state and the handler's param. */
interface WebhookSource {
  readonly request: RequestScope;
  readonly param: unknown;
  readonly client: clients.KubeClient | undefined;
}

interface RequestScope {
  readonly resource: references.Resource;
  readonly data: reviews.RequestData;
  readonly view: () => dicts.DeepReadonly<bodies.RawBody>;
  readonly patch: patches.PatchBase<object>;
  readonly warnings: string[];
  readonly logger: loggers.Logger;
  readonly memo: object;
  readonly signal: AbortSignal;
  readonly headers: Readonly<Record<string, string>>;
  readonly sslPeer: Readonly<Record<string, unknown>>;
  readonly namespace: string | null;
  readonly name: string;
  readonly old: () => unknown;
  readonly new: () => unknown;
}

function metaOf(s: WebhookSource): Readonly<Record<string, unknown>> {
  return (s.request.view()['metadata'] ?? EMPTY) as Readonly<Record<string, unknown>>;
}

function sectionOf(s: WebhookSource, key: string): unknown {
  const value = s.request.view()[key];
  return dicts.isObject(value) ? value : EMPTY;
}

/** The arguments of admission handlers (R-KWARGS-1/6), computed on first access. */
const WEBHOOK: Readonly<Record<string, (source: WebhookSource) => unknown>> = Object.freeze({
  resource: (s) => s.request.resource,
  body: (s) => s.request.view(),
  spec: (s) => sectionOf(s, 'spec'),
  meta: (s) => metaOf(s),
  status: (s) => sectionOf(s, 'status'),
  uid: (s) => s.request.data.body.metadata?.uid ?? '',
  name: (s) => s.request.name,
  namespace: (s) => s.request.namespace,
  labels: (s) => metaOf(s)['labels'] ?? EMPTY,
  annotations: (s) => metaOf(s)['annotations'] ?? EMPTY,
  patch: (s) => s.request.patch,
  logger: (s) => s.request.logger,
  memo: (s) => s.request.memo,
  param: (s) => s.param,
  signal: (s) => s.request.signal,
  client: (s) => s.client ?? invocation.currentClient(),
  dryRun: (s) => s.request.data.dryRun,
  warnings: (s) => s.request.warnings,
  userInfo: (s) => dicts.frozenCopy(s.request.data.userInfo),
  headers: (s) => s.request.headers,
  sslPeer: (s) => s.request.sslPeer,
  operation: (s) => s.request.data.operation,
  subresource: (s) => s.request.data.subresource,
  old: (s) => s.request.old(),
  new: (s) => s.request.new(),
  oldValue: (s) => s.request.old(),
  newValue: (s) => s.request.new(),
  diff: (s) => diffs.diff(s.request.data.old, s.request.data.new),
});

function once<T>(compute: () => T): () => T {
  let computed: { readonly value: T } | undefined;
  return () => (computed ??= { value: compute() }).value;
}

function frozenOrUndefined(body: bodies.RawBody | null): () => unknown {
  return once(() => (body === null ? undefined : dicts.frozenCopy(body)));
}

function stringRecord(value: Readonly<Record<string, string>> | undefined): Readonly<Record<string, string>> {
  return Object.freeze({ ...(value ?? {}) });
}

/**
 * Builds the `WebhookFn` that servers call (R-ADMISSION-3): every call is measured by
 * `measureRequest` around `serveAdmissionRequest` — except requests at a conversion path
 * (`convert/<plural>.<group>`), which go to the conversion engine (R-CONVERT-205).
 *
 * @example
 * const fn = webhookFn({ registry, settings, clock, resources: insights, memos, signal });
 * const reply = await fn(review, { webhook: 'validate1', headers });
 */
export function webhookFn(options: AdmissionOptions): webhooks.WebhookFn {
  return async (payload, context) => {
    const crd = converting.crdOfWebhook(context?.webhook);
    if (crd !== null) return converting.serveConversionRequest(options, payload, crd); // R-CONVERT-205
    checkWebhook(options, context?.webhook || null);
    return measureRequest(options, payload, context ?? {});
  };
}

/**
 * Refuses a webhook id that no admission handler has (R-SEC-6); no id (`null`) means all handlers.
 *
 * @throws WebhookRequestError `unknown-webhook` (HTTP 404), logged as one WARNING line.
 */
export function checkWebhook(options: AdmissionOptions, webhook: string | null): void {
  if (webhook === null) return;
  if (options.registry.handlers.some((h) => h.kind === 'webhook' && h.id === webhook)) return;
  const logger = options.logger ?? logging.getLogger('kopf.engines.admission');
  const error = new structErrors.WebhookRequestError('unknown-webhook', `No admission handler has the webhook id ${quoted(webhook)}.`);
  logger.warning(`Admission request is refused with HTTP ${error.status}: ${error.message}`);
  throw error;
}

/** A text from the request, quoted and safe for a log line (control characters escaped). */
function quoted(text: string, limit = 200): string {
  const safe = printables.printable(text);
  return `"${safe.length > limit ? `${safe.slice(0, limit)}…` : safe}"`;
}

/** What is known of one request once it is answered: the one record per request. */
export interface RequestRecord {
  /** The webhook id from the request path; `null` when the server gave none. */
  readonly webhook: string | null;
  /** The HTTP status the server answers with: 200 with a review, 400/404/409 for refused requests, 500 otherwise. */
  readonly status: number;
  /** The review's `allowed`; `null` when no review is sent. */
  readonly allowed: boolean | null;
  /** From receipt to reply, in seconds of the operator's clock. */
  readonly duration: number;
}

/**
 * Serves one request through `serveAdmissionRequest` and records its outcome and duration (by the
 * operator's clock) with `recordRequest`, however it ends: the single place every request passes.
 */
export async function measureRequest(
  options: AdmissionOptions,
  payload: unknown,
  context: webhooks.WebhookRequestContext,
): Promise<webhooks.AdmissionReviewResponse> {
  const started = options.clock.now();
  const webhook = context.webhook || null;
  options.instruments?.webhookInFlight(webhook ?? '', 1);
  try {
    const reply = await serveAdmissionRequest(options, payload, context);
    recordRequest(options, { webhook, status: 200, allowed: reply.response.allowed, duration: (options.clock.now() - started) / 1000 });
    return reply;
  } catch (error) {
    const status = error instanceof structErrors.WebhookRequestError ? error.status : 500;
    recordRequest(options, { webhook, status, allowed: null, duration: (options.clock.now() - started) / 1000 });
    throw error;
  }
}

/**
 * Reports one answered request: to the metrics when they are on (the request is no longer in
 * flight; its status code and duration), and as a DEBUG line (failures have their own
 * WARNING/ERROR lines).
 */
export function recordRequest(options: AdmissionOptions, record: RequestRecord): void {
  // Requests without a webhook id in their path (a server of one's own may send them) count under ''.
  options.instruments?.webhookInFlight(record.webhook ?? '', -1);
  options.instruments?.webhookRequest(record.webhook ?? '', record.status, record.duration);
  const logger = options.logger ?? logging.getLogger('kopf.engines.admission');
  const outcome = record.allowed === null ? 'refused' : record.allowed ? 'allowed' : 'denied';
  logger.debug(
    `Admission request for ${record.webhook === null ? 'all webhooks' : `the webhook ${quoted(record.webhook)}`} ` +
      `is answered with HTTP ${record.status} (${outcome}) in ${record.duration.toFixed(3)}s.`,
  );
}

/**
 * Serves one admission request, start to end (R-ADMISSION-4/5): check, select, run, reply.
 *
 * @throws WebhookRequestError for requests answered with an HTTP error (400, 404, 409).
 * @throws the operator signal's reason if the operator stops while handlers run.
 */
export async function serveAdmissionRequest(
  options: AdmissionOptions,
  payload: unknown,
  context: webhooks.WebhookRequestContext,
): Promise<webhooks.AdmissionReviewResponse> {
  const logger = options.logger ?? logging.getLogger('kopf.engines.admission');
  let review: reviews.Review;
  let resource: references.Resource;
  let data: reviews.RequestData;
  try {
    review = reviews.parseReview(payload);
    resource = reviews.findResource(review.request, options.resources.webhooks);
    data = reviews.requestData(review.request);
  } catch (error) {
    if (error instanceof structErrors.WebhookRequestError) {
      logger.warning(`Admission request is refused with HTTP ${error.status}: ${printables.printable(error.message)}`);
    }
    throw error;
  }

  const { body } = data;
  const namespace = resource.namespaced ? body.metadata?.namespace || review.request.namespace || null : null;
  const name = body.metadata?.name || review.request.name || '';
  const request: RequestScope = {
    resource,
    data,
    view: once(() => dicts.frozenCopy(body)),
    patch: new patches.Patch(),
    warnings: [],
    logger: logging.objectLogger({ body: loggedBody(body, name, namespace), settings: options.settings, local: true }),
    memo: options.memos.recallMemo(body, { ephemeral: data.operation === 'CREATE' }),
    signal: options.signal,
    headers: stringRecord(context.headers),
    sslPeer: Object.freeze({ ...(context.sslPeer ?? {}) }),
    namespace,
    name,
    old: frozenOrUndefined(data.old),
    new: frozenOrUndefined(data.new),
  };
  const kwargs = (handler: { readonly param?: unknown }): object =>
    invocation.tableKwargs(WEBHOOK, { request, param: handler.param, client: options.client } satisfies WebhookSource, options.indices);

  const selected = options.registry.webhookHandlers(
    {
      resource,
      body,
      type: context.type ?? null,
      webhook: context.webhook ?? null,
      subresource: data.subresource,
      operation: data.operation,
    },
    { kwargs: (handler) => kwargs(handler as handlers.WebhookHandler) },
  );

  const failures = await runHandlers(options, selected, request.logger, kwargs);
  return reviews.buildResponse(review, {
    failures,
    warnings: request.warnings,
    jsonPatch: request.patch.toJsonPatch(body),
  });
}

/**
 * What the handlers' logger knows of the object: its reference, with the name and namespace (from
 * the request, so whatever its sender chose) escaped for log lines (R-SEC-8). Admission loggers
 * post no events, so the reference serves only the log prefix and the JSON format's object key.
 */
function loggedBody(body: bodies.RawBody, name: string, namespace: string | null): bodies.RawBody {
  const metadata: Record<string, unknown> = { name: printables.printable(name) };
  if (namespace !== null) metadata['namespace'] = printables.printable(namespace);
  if (typeof body.metadata?.uid === 'string') metadata['uid'] = printables.printable(body.metadata.uid);
  return {
    ...(typeof body.apiVersion === 'string' ? { apiVersion: printables.printable(body.apiVersion) } : {}),
    ...(typeof body.kind === 'string' ? { kind: printables.printable(body.kind) } : {}),
    metadata,
  } as bodies.RawBody;
}

/**
 * Runs the selected handlers once each, in order, all of them (no retries: R-ADMISSION-4), and
 * returns the errors of those that failed.
 */
async function runHandlers(
  options: AdmissionOptions,
  selected: readonly handlers.WebhookHandler[],
  logger: loggers.Logger,
  kwargs: (handler: { readonly param?: unknown }) => object,
): Promise<unknown[]> {
  const scope: execution.ExecutionScope = {
    settings: options.settings,
    clock: options.clock,
    logger,
    signal: options.signal,
    defaultErrors: errors.ErrorsMode.PERMANENT,
    kwargs: (handler) => kwargs(handler),
  };
  const failures: unknown[] = [];
  for (const handler of selected) {
    const state = progression.HandlerState.fromScratch({ now: options.clock.now() });
    const invocable: execution.Invocable = { id: handler.id, fn: handler.fn as execution.HandlerFn, param: handler.param };
    const outcome = await execution.executeHandlerOnce({ handler: invocable, state, scope });
    if (outcome.error !== undefined) failures.push(outcome.error);
  }
  return failures;
}
