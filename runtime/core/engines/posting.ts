/**
 * K8s-events: the explicit event API (`event`, `info`, `warn`, `exception`, R-POST-1) and the
 * background poster that creates the `Event` objects (R-POST-3/4).
 *
 * Producing an event never waits for the API: the helpers and the per-object loggers
 * (`actions/logging`) put `QueuedEvent`s into the operator's `EventQueue` (found through the
 * operator context of `actions/invocation`), and one poster task per operator (`runPoster`) drains
 * it, POSTing each event to `/api/v1/namespaces/<ns>/events` with Kopf's exact payload. Posting is
 * auxiliary: failures are logged at WARNING and never fail handling; events about core `v1`
 * `Event` objects are dropped (they would explode into events about events).
 *
 * The poster depends only on an `EventWriter` — anything with the client's
 * `create(resource, namespace, body)` — so it runs against the real client in production and in
 * integration tests, and against a recording fake in unit tests.
 */

import * as clocks from '../../cogs/aio/clocks.js';
import * as clientErrors from '../../cogs/client/errors.js';
import type * as settings from '../../cogs/configs/settings.js';
import * as timestamps from '../../cogs/configs/timestamps.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as references from '../../cogs/structs/references.js';
import * as errors from '../actions/errors.js';
import * as events from '../actions/events.js';
import * as invocation from '../actions/invocation.js';

/** The longest message posted; longer ones are shortened in the middle (R-POST-4). */
export const MAX_MESSAGE_LENGTH = 1024;
const CUT_MESSAGE_INFIX = '...';

/** The core `v1` `events` resource that events are created in. */
export const EVENTS: references.Resource = references.makeResource({
  group: '',
  version: 'v1',
  plural: 'events',
  kind: 'Event',
  singular: 'event',
  namespaced: true,
  shortcuts: ['ev'],
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
});

/** What the poster needs of the API client (a subset of its `KubeWriter`). */
export interface EventWriter {
  create(resource: references.Resource, namespace: string | null, body: object): Promise<unknown>;
}

/** Objects the event helpers accept: one body, or (nested) arrays of bodies. */
export type EventTargets = object | readonly EventTargets[];

/**
 * An unbounded FIFO of events with an async `take()`: the operator's event queue. Pushing never
 * blocks; `asSink()` adapts it to the `EventSink` of the operator context.
 */
export class EventQueue {
  private readonly items: events.QueuedEvent[] = [];
  private readonly waiters: Array<() => void> = [];

  /** The number of events waiting. */
  get size(): number {
    return this.items.length;
  }

  /** Enqueues an event. */
  push(event: events.QueuedEvent): void {
    this.items.push(event);
    this.waiters.splice(0).forEach((wake) => wake());
  }

  /** The sink function of this queue (for `invocation.OperatorScope.events`). */
  asSink(): events.EventSink {
    return (event) => this.push(event);
  }

  /** Takes the oldest event, waiting for one if needed; `undefined` if `signal` aborts first. */
  async take(signal?: AbortSignal): Promise<events.QueuedEvent | undefined> {
    for (;;) {
      if (this.items.length > 0) return this.items.shift();
      if (signal?.aborted) return undefined;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          signal?.removeEventListener('abort', done);
          resolve();
        };
        this.waiters.push(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }
}

function* walk(objs: EventTargets): Generator<object> {
  if (Array.isArray(objs)) for (const item of objs as readonly EventTargets[]) yield* walk(item);
  else yield objs;
}

function enqueue(what: string, objs: EventTargets, type: string, reason: string, message: string): void {
  const scope = invocation.currentOperator(what);
  for (const obj of walk(objs)) scope.events({ ref: events.buildObjectReference(obj), type, reason, message });
}

/**
 * Posts a k8s-event of any type about one or several objects, in the background (R-POST-1). Posted
 * iff `settings.posting.enabled`. Must be called inside an operator (e.g. from a handler).
 *
 * @example
 * event(body, { type: 'SomeType', reason: 'SomeReason', message: 'Some message' });
 * @throws Error outside of an operator context.
 */
export function event(objs: EventTargets, options: { readonly type: string; readonly reason: string; readonly message?: string }): void {
  const { posting } = invocation.currentOperator('event()').settings;
  if (!posting.enabled) return;
  enqueue('event()', objs, options.type, options.reason, options.message ?? '');
}

/** A `Normal` event; posted iff posting is enabled and `settings.posting.level <= 20` (INFO). */
export function info(objs: EventTargets, options: { readonly reason: string; readonly message?: string }): void {
  const { posting } = invocation.currentOperator('info()').settings;
  if (!posting.enabled || posting.level > 20) return;
  enqueue('info()', objs, 'Normal', options.reason, options.message ?? '');
}

/**
 * A `Warning` event; posted iff posting is enabled and `settings.posting.level <= 30` (WARNING).
 * (Kopf does not check `enabled` here; the port does, D-9.)
 */
export function warn(objs: EventTargets, options: { readonly reason: string; readonly message?: string }): void {
  const { posting } = invocation.currentOperator('warn()').settings;
  if (!posting.enabled || posting.level > 30) return;
  enqueue('warn()', objs, 'Warning', options.reason, options.message ?? '');
}

/**
 * An `Error` event about an error; posted iff posting is enabled and `settings.posting.level <= 40`.
 * The reason defaults to the error's class name; the message is `"<message> <error message>"`, or
 * just one of them.
 *
 * @example
 * exception(body, { reason: 'SomeReason', message: 'Some exception:', exc: new Error('Exception text.') });
 * // message: 'Some exception: Exception text.'
 */
export function exception(objs: EventTargets, options: { readonly reason?: string; readonly message?: string; readonly exc?: unknown } = {}): void {
  const { posting } = invocation.currentOperator('exception()').settings;
  if (!posting.enabled || posting.level > 40) return;
  const hasExc = options.exc !== undefined && options.exc !== null;
  const excText = hasExc ? errors.describeError(options.exc) : '';
  const message = options.message ?? '';
  const text = message && hasExc ? `${message} ${excText}` : hasExc ? excText : message;
  const reason = options.reason || (hasExc ? errors.typeNameOf(options.exc) : 'Error');
  enqueue('exception()', objs, 'Error', reason, text);
}

/**
 * Shortens a message to exactly 1024 characters if longer: the first 511, `...`, the last 510.
 */
export function truncateMessage(message: string): string {
  if (message.length <= MAX_MESSAGE_LENGTH) return message;
  const half = Math.floor(MAX_MESSAGE_LENGTH / 2);
  const infixHalf = Math.floor(CUT_MESSAGE_INFIX.length / 2);
  const head = message.slice(0, half - infixHalf);
  const tail = message.slice(message.length - (half - (CUT_MESSAGE_INFIX.length - infixHalf)));
  return `${head}${CUT_MESSAGE_INFIX}${tail}`;
}

/**
 * The body of the `Event` to create (R-POST-3), or `null` for events about `v1` `Event`s.
 * `involvedObject.namespace` is the object's namespace, else `defaultNamespace`, else `default`.
 */
export function buildEventBody(options: {
  readonly event: events.QueuedEvent;
  readonly settings: settings.OperatorSettings;
  readonly now: number;
  readonly defaultNamespace?: string | null;
}): { readonly namespace: string; readonly body: Record<string, unknown> } | null {
  const { event: queued, settings: config } = options;
  if (queued.ref.apiVersion === 'v1' && queued.ref.kind === 'Event') return null;
  const namespace = queued.ref.namespace || options.defaultNamespace || 'default';
  const time = timestamps.formatTimestamp(options.now);
  const body = {
    metadata: { namespace, generateName: config.posting.eventNamePrefix },
    action: 'Action?',
    type: queued.type,
    reason: queued.reason,
    message: truncateMessage(queued.message),
    reportingComponent: config.posting.reportingComponent,
    reportingInstance: config.posting.reportingInstance,
    source: { component: config.posting.reportingComponent },
    involvedObject: { ...queued.ref, namespace },
    firstTimestamp: time,
    lastTimestamp: time,
    eventTime: time,
  };
  return { namespace, body };
}

/**
 * Creates one event through the writer; failures are logged at WARNING and swallowed (R-POST-4).
 *
 * @returns whether an event was created.
 */
export async function postEvent(options: {
  readonly event: events.QueuedEvent;
  readonly writer: EventWriter;
  readonly settings: settings.OperatorSettings;
  readonly logger: loggers.Logger;
  readonly clock?: clocks.Clock;
  readonly defaultNamespace?: string | null;
}): Promise<boolean> {
  const built = buildEventBody({
    event: options.event,
    settings: options.settings,
    now: (options.clock ?? clocks.realClock).now(),
    defaultNamespace: options.defaultNamespace,
  });
  if (built === null) return false;
  try {
    await options.writer.create(EVENTS, built.namespace, built.body);
    return true;
  } catch (error) {
    const { type, reason } = options.event;
    const detail = describeApiError(error);
    const line =
      `Failed to post an event. Ignoring and continuing. ${detail} ` + `Event: type='${type}', reason='${reason}', message='${String(built.body['message'])}'.`;
    // A 403 was reported once by the client (R-SEC-1): not again for every event.
    if (clientErrors.isForbidden(error)) options.logger.debug(line);
    else options.logger.warning(line);
    return false;
  }
}

function describeApiError(error: unknown): string {
  const fields = error as { status?: unknown; details?: unknown };
  const code = typeof fields?.status === 'number' ? fields.status : undefined;
  const message = errors.describeError(error);
  if (code === undefined) return `Error: ${message}.`;
  return `Code: ${code}. Message: ${message}. Details: ${JSON.stringify(fields.details ?? null)}.`;
}

/**
 * The poster task: posts queued events one by one until `signal` aborts (events still queued then
 * are dropped). Never throws because of posting failures.
 */
export async function runPoster(options: {
  readonly queue: EventQueue;
  readonly writer: EventWriter;
  readonly settings: settings.OperatorSettings;
  readonly logger: loggers.Logger;
  readonly signal: AbortSignal;
  readonly clock?: clocks.Clock;
  readonly defaultNamespace?: string | null;
}): Promise<void> {
  for (;;) {
    const next = await options.queue.take(options.signal);
    if (next === undefined || options.signal.aborted) return;
    await postEvent({ ...options, event: next });
  }
}
