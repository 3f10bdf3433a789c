/**
 * Watching: list-then-watch streams of raw events as async iterators (R-WATCH-1..6).
 *
 * Three nested generators, each with one job (Kopf: `clients/watching.py`; kube-rs: `watcher`):
 *
 * - `streamWatch` — one watch connection: yields its lines, drops the connection when no line
 *   arrives for `watching.inactivityTimeout` (R-WATCH-5), and ends quietly when the connection
 *   breaks or times out mid-stream (R-WATCH-4).
 * - `continuousWatch` — lists the collection (events with `type: null`, then the `LISTED`
 *   marker), then watches from the list's resource version with bookmarks, reconnecting from the
 *   last seen version whenever a connection ends; `BOOKMARK`s only move that version; an `ERROR`
 *   410 ends it (a re-list is due), any other `ERROR` throws a `WatchingError` (R-WATCH-3).
 * - `infiniteWatch` — never ends on its own: re-lists after `watching.reconnectBackoff` when the
 *   continuous stream ends or its listing fails with a connection error, a timeout or HTTP 429,
 *   and honours a pause toggle (no listing or watching while paused; an open stream is closed when
 *   the pause begins; a full re-list on resume: R-WATCH-6). It ends only when `signal` aborts, and
 *   throws only on fatal errors.
 *
 * They read the API through `api.KubeReader & api.KubeWatcher`, so any implementation (or a
 * wrapper with overrides) can be watched. Time comes from the injected `Clock`.
 *
 * A `WatchObserver` in the context hears how the stream lives — listings, connections opened and
 * closed, every line (bookmarks included), pauses — so that the operator's health can tell a
 * working stream from one that is down or silent without touching the events themselves.
 * Listings, accepted watch connections and 410s are also reported to the context's instruments,
 * if any (the operator's metrics of reconnects and re-lists).
 */

import * as aborts from '../aio/aborts.js';
import * as clocks from '../aio/clocks.js';
import type * as toggles from '../aio/toggles.js';
import type * as settings from '../configs/settings.js';
import type * as bodies from '../structs/bodies.js';
import type * as instruments from '../structs/instruments.js';
import type * as loggers from '../structs/loggers.js';
import * as references from '../structs/references.js';
import type * as api from './api.js';
import * as errors from './errors.js';

/** The marker emitted once the initial listing is over (Kopf: `Bookmark.LISTED`; kube-rs: `InitDone`). */
export interface Listed {
  readonly kind: 'listed';
}

/** The one `Listed` marker value. */
export const LISTED: Listed = Object.freeze({ kind: 'listed' });

/** What the watch streams yield: raw events (`type: null` for listed objects) and the marker. */
export type WatchEvent = bodies.RawEvent | Listed;

/** Whether a streamed value is the end-of-listing marker. */
export function isListed(event: WatchEvent): event is Listed {
  return (event as Partial<Listed>).kind === 'listed' && !('object' in event);
}

/**
 * Hears the life of one watch stream (all methods optional, all cheap: `line` runs per line). The
 * health tracker implements it (`core/engines/health`).
 */
export interface WatchObserver {
  /** A listing request is about to be sent (initially, after a 410, after a pause). */
  listing?(): void;
  /** The listing is complete (just before `LISTED` is yielded). */
  listed?(): void;
  /** A watch request has been answered: the connection is open. */
  opened?(): void;
  /** A line has arrived on the open connection: an event, a bookmark, or an error. */
  line?(): void;
  /** The open connection is over, for whatever reason. */
  closed?(): void;
  /** The stream pauses (R-WATCH-6): nothing is listed or watched until `resumed`. */
  paused?(): void;
  /** The stream resumes after a pause (a full re-list follows). */
  resumed?(): void;
}

/** What to watch and with what. */
export interface WatchContext {
  readonly api: api.KubeReader & api.KubeWatcher;
  readonly settings: settings.OperatorSettings;
  readonly resource: references.Resource;
  /** The namespace, or `null` for cluster-wide watching (and cluster-scoped resources). */
  readonly namespace: string | null;
  readonly logger: loggers.Logger;
  /** Default: the real clock. */
  readonly clock?: clocks.Clock;
  /** Where listings, accepted connections and 410s are reported (an operator's metrics), if anywhere. */
  readonly instruments?: instruments.WatchInstruments;
  /** Hears listings, connections, lines and pauses (e.g. for health tracking). */
  readonly observer?: WatchObserver;
}

const KNOWN_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK']);

/** `in '<ns>'` or `cluster-wide`, as in the log texts of the runtime reference. */
export function whereOf(namespace: string | null): string {
  return namespace === null ? 'cluster-wide' : `in '${namespace}'`;
}

function describe(ctx: WatchContext): string {
  return `${references.resourceName(ctx.resource)} ${whereOf(ctx.namespace)}`;
}

/**
 * A restartable countdown on a clock: `onTimeout` runs if not re-armed within `ms`.
 *
 * Re-arming happens for every line of a watch-stream, so it only moves a deadline: one sleep is
 * pending at a time, and when it ends early relative to a moved deadline it sleeps for the rest.
 * (A sleep and an abort per line cost more than parsing the line.)
 */
class Countdown {
  private deadline = 0;
  private armed = false;
  private sleeping: AbortController | undefined;

  constructor(
    private readonly clock: clocks.Clock,
    private readonly ms: number,
    private readonly onTimeout: () => void,
  ) {}

  arm(): void {
    this.deadline = this.clock.now() + this.ms;
    this.armed = true;
    if (this.sleeping === undefined) this.sleep(this.ms);
  }

  disarm(): void {
    this.armed = false;
  }

  /** Disarms and drops the pending sleep. */
  dispose(): void {
    this.armed = false;
    this.sleeping?.abort(DISPOSED);
    this.sleeping = undefined;
  }

  private sleep(ms: number): void {
    const controller = new AbortController();
    this.sleeping = controller;
    void aborts.sleepOrAbort(this.clock, ms, controller.signal).then((elapsed) => {
      if (this.sleeping !== controller) return;
      this.sleeping = undefined;
      if (!elapsed || !this.armed) return;
      const left = this.deadline - this.clock.now();
      if (left > 0) this.sleep(left);
      else this.onTimeout();
    });
  }
}

const DISPOSED = new DOMException('The countdown is disposed.', 'AbortError');

/** Why a connection was dropped by the watcher itself. */
const INACTIVE = new DOMException('The watch-stream is inactive.', 'AbortError');
/** Why a connection is released once its stream is over (a shared reason: no exception built per stream). */
const CLOSED = new DOMException('The watch-stream is over.', 'AbortError');

/**
 * One watch connection from `resourceVersion` (R-WATCH-2/5). Yields the server's lines as they are
 * (including `BOOKMARK` and `ERROR`). Ends when the server closes the stream, when the connection
 * breaks or times out after it was established, when it is inactive for too long (debug log
 * `Watch-stream for <resource> <where> is inactive, reconnecting.`), or when `signal` aborts.
 *
 * @throws errors.ApiError / errors.ConnectionError if the connection cannot be opened.
 */
export async function* streamWatch(
  ctx: WatchContext,
  options: { readonly resourceVersion?: string; readonly signal?: AbortSignal },
): AsyncGenerator<api.WatchLine> {
  const clock = ctx.clock ?? clocks.realClock;
  const watching = ctx.settings.watching;
  const networking = ctx.settings.networking;
  const connection = new AbortController();
  const signal = aborts.anySignal([options.signal, connection.signal]);
  const countdown = new Countdown(clock, watching.inactivityTimeout * 1000, () => connection.abort(INACTIVE));
  const stopped = (): boolean => {
    if (options.signal?.aborted) return true;
    if (connection.signal.reason === INACTIVE) {
      ctx.logger.debug(`Watch-stream for ${describe(ctx)} is inactive, reconnecting.`);
      return true;
    }
    return false;
  };
  let opened = false;
  countdown.arm();
  try {
    let lines: AsyncIterable<api.WatchLine>;
    try {
      lines = await ctx.api.watch(ctx.resource, ctx.namespace, {
        resourceVersion: options.resourceVersion,
        timeoutSeconds: watching.serverTimeout,
        clientTimeout: watching.clientTimeout,
        connectTimeout: watching.connectTimeout ?? networking.connectTimeout ?? networking.requestTimeout,
        signal,
      });
    } catch (error) {
      if (stopped()) return;
      throw error;
    }
    ctx.instruments?.connected();
    opened = true;
    ctx.observer?.opened?.();
    try {
      for await (const line of lines) {
        countdown.disarm();
        ctx.observer?.line?.();
        yield line;
        if (signal.aborted) break;
        countdown.arm();
      }
    } catch (error) {
      if (stopped() || error instanceof errors.ConnectionError) return;
      throw error;
    }
  } finally {
    countdown.dispose();
    connection.abort(CLOSED);
    if (opened) ctx.observer?.closed?.();
  }
}

/**
 * Lists, then watches continuously from the last seen resource version (R-WATCH-1..4): yields the
 * listed objects as `type: null` events, then `LISTED`, then `ADDED`/`MODIFIED`/`DELETED` events.
 * Ends on `ERROR` 410 (debug log `Restarting the watch-stream for <resource> <where>.`) or when
 * `signal` aborts.
 *
 * @throws errors.WatchingError on any other `ERROR` event; listing errors as they come.
 */
export async function* continuousWatch(ctx: WatchContext, options: { readonly signal?: AbortSignal } = {}): AsyncGenerator<WatchEvent> {
  const clock = ctx.clock ?? clocks.realClock;
  const signal = options.signal;
  ctx.observer?.listing?.();
  const listing = await ctx.api.list(ctx.resource, ctx.namespace, { signal });
  ctx.instruments?.listed();
  for (const object of listing.items) yield { type: null, object };
  ctx.observer?.listed?.();
  yield LISTED;

  let resourceVersion = listing.resourceVersion;
  while (!signal?.aborted) {
    try {
      for await (const line of streamWatch(ctx, { resourceVersion, signal })) {
        const object = line.object as bodies.RawBody;
        if (line.type === 'ERROR' && (line.object as { code?: unknown }).code === 410) {
          ctx.logger.debug(`Restarting the watch-stream for ${describe(ctx)}.`);
          ctx.instruments?.gone();
          return;
        }
        if (line.type === 'ERROR') throw new errors.WatchingError(line.object);
        if (!KNOWN_TYPES.has(line.type)) {
          ctx.logger.warning(`Ignoring an unsupported event type: ${JSON.stringify(line)}`);
          continue;
        }
        resourceVersion = object.metadata?.resourceVersion ?? resourceVersion;
        if (line.type === 'BOOKMARK') continue;
        yield { type: line.type as 'ADDED' | 'MODIFIED' | 'DELETED', object };
      }
    } catch (error) {
      if (error instanceof errors.ApiGoneError) {
        ctx.logger.debug(`Restarting the watch-stream for ${describe(ctx)}.`);
        ctx.instruments?.gone();
        return;
      }
      // A connection that cannot even be opened: retry from the same version, but not in a busy loop.
      if (!(error instanceof errors.ConnectionError)) throw error;
      if (!(await aborts.sleepOrAbort(clock, ctx.settings.watching.reconnectBackoff * 1000, signal))) return;
    }
  }
}

/** Whether a failure of the continuous stream only calls for a re-list after a pause (R-WATCH-4). */
function isRecoverable(error: unknown): boolean {
  return error instanceof errors.ConnectionError || error instanceof errors.ApiTooManyRequestsError || error instanceof errors.ApiGoneError;
}

/**
 * Watches forever (R-WATCH-4/6): re-lists whenever the continuous stream ends, after
 * `watching.reconnectBackoff`; honours `paused`; ends only when `signal` aborts.
 *
 * @throws errors.WatchingError on fatal watch errors; errors.ApiError on listing errors other than
 *   429 (e.g. 403 or 404) and errors.LoginError — the caller decides what a dead watcher means.
 * @example
 * for await (const event of infiniteWatch({ api, settings, resource, namespace: null, logger }, { signal })) {
 *   if (isListed(event)) continue;
 *   handle(event);
 * }
 */
export async function* infiniteWatch(
  ctx: WatchContext,
  options: { readonly paused?: toggles.Awaitable; readonly signal?: AbortSignal } = {},
): AsyncGenerator<WatchEvent> {
  const clock = ctx.clock ?? clocks.realClock;
  const { paused, signal } = options;
  ctx.logger.debug(`Starting the watch-stream for ${describe(ctx)}${paused?.isOn() ? ' (paused)' : ''}.`);
  try {
    while (!signal?.aborted) {
      if (paused?.isOn()) {
        ctx.logger.debug(`Pausing the watch-stream for ${describe(ctx)}.`);
        ctx.observer?.paused?.();
        try {
          await paused.waitFor(false, signal);
        } catch {
          return;
        }
        ctx.logger.debug(`Resuming the watch-stream for ${describe(ctx)}.`);
        ctx.observer?.resumed?.();
      }
      const pause = new AbortController();
      const release = new AbortController();
      paused?.waitFor(true, release.signal).then(
        () => pause.abort(new DOMException('The operator is paused.', 'AbortError')),
        () => undefined,
      );
      try {
        // `release` is an input too, so the combined signal lets go of `signal` once this stream is over.
        for await (const event of continuousWatch(ctx, { signal: aborts.anySignal([signal, pause.signal, release.signal]) })) yield event;
      } catch (error) {
        if (signal?.aborted) return;
        if (!pause.signal.aborted && !isRecoverable(error)) throw error;
      } finally {
        release.abort();
      }
      if (pause.signal.aborted) continue;
      if (!(await aborts.sleepOrAbort(clock, ctx.settings.watching.reconnectBackoff * 1000, signal))) return;
    }
  } finally {
    ctx.logger.debug(`Stopping the watch-stream for ${describe(ctx)}.`);
  }
}
