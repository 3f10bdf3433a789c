/**
 * Watching: list-then-watch streams of raw events as async iterators (R-WATCH-1..6).
 *
 * Thin drivers of the watcher's state machine (`watchstates`): each runs `step()` in a loop and
 * yields the events it hands out (Kopf: `clients/watching.py`; kube-rs: `watcher`).
 *
 * - `infiniteWatch` — never ends on its own: re-lists after `watching.reconnectBackoff` whenever
 *   the stream is lost (a 410, a listing refused with a connection error, a timeout or HTTP 429),
 *   honours the pause toggle (R-WATCH-6) and ends only when `signal` aborts; it throws only fatal
 *   errors (any other `ERROR` event: `WatchingError`; listing errors such as 403).
 * - `continuousWatch` — one listing and the watching after it: ends where a re-list would be due.
 * - `streamWatch` — one connection's lines as they come.
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

import type * as toggles from '../aio/toggles.js';
import type * as api from './api.js';
import * as errors from './errors.js';
import * as watchconnections from './watchconnections.js';
import * as watchstates from './watchstates.js';

export type { WatchContext, WatchObserver } from './watchconnections.js';
export { whereOf } from './watchconnections.js';
export type { Listed, WatchEvent } from './watchstates.js';
export { isListed, LISTED } from './watchstates.js';

type WatchContext = watchconnections.WatchContext;
type WatchEvent = watchstates.WatchEvent;
type WatchState = watchstates.WatchState;

/**
 * One watch connection from `resourceVersion` (R-WATCH-2/5). Yields the server's lines as they are
 * (including `BOOKMARK` and `ERROR`). Ends when the server closes the stream, when the connection
 * breaks or times out after it was established, when it is inactive for too long, or when
 * `signal` aborts.
 *
 * @throws errors.ApiError / errors.ConnectionError if the connection cannot be opened.
 */
export async function* streamWatch(
  ctx: WatchContext,
  options: { readonly resourceVersion?: string; readonly signal?: AbortSignal },
): AsyncGenerator<api.WatchLine> {
  const connection = new watchconnections.Connection(ctx);
  const over = (): boolean => options.signal?.aborted === true || connection.inactive;
  try {
    try {
      await connection.open(options.resourceVersion, options.signal);
    } catch (error) {
      if (over()) return;
      throw error;
    }
    for (;;) {
      let line: api.WatchLine | undefined;
      try {
        line = await connection.next();
      } catch (error) {
        if (over() || error instanceof errors.ConnectionError) return;
        throw error;
      }
      if (line === undefined) return;
      yield line;
      if (over()) return;
    }
  } finally {
    connection.close();
  }
}

/**
 * Lists, then watches continuously from the last seen resource version (R-WATCH-1..4): yields the
 * listed objects as `type: null` events, then `LISTED`, then `ADDED`/`MODIFIED`/`DELETED` events.
 * Ends where a re-list would be due after an `ERROR` 410 (debug log `Restarting the watch-stream
 * for <resource> <where>.`), or when `signal` aborts.
 *
 * @throws errors.WatchingError on any other `ERROR` event; listing errors as they come.
 */
export async function* continuousWatch(ctx: WatchContext, options: { readonly signal?: AbortSignal } = {}): AsyncGenerator<WatchEvent> {
  const controls = new watchstates.Controls(options.signal);
  let state: WatchState = watchstates.UNLISTED;
  try {
    for (;;) {
      const next = await watchstates.step(state, ctx, controls);
      state = next.state;
      if (next.event !== undefined) yield next.event;
      if (state.kind === 'stopped') return;
      if (state.kind === 'failed') throw state.error;
      if (state.kind === 'relisting') {
        if ('error' in state) throw state.error;
        return;
      }
    }
  } finally {
    if (state.kind === 'watching') state.connection.close();
    controls.release();
  }
}

/**
 * Watches forever (R-WATCH-4/6): re-lists whenever the stream is lost, after
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
  const controls = new watchstates.Controls(options.signal, options.paused);
  ctx.logger.debug(`Starting the watch-stream for ${watchconnections.streamName(ctx)}${options.paused?.isOn() ? ' (paused)' : ''}.`);
  let state: WatchState = watchstates.UNLISTED;
  try {
    while (state.kind !== 'stopped') {
      const next = await watchstates.step(state, ctx, controls);
      state = next.state;
      if (next.event !== undefined) yield next.event;
      if (state.kind === 'failed') throw state.error;
    }
  } finally {
    if (state.kind === 'watching') state.connection.close();
    controls.release();
    ctx.logger.debug(`Stopping the watch-stream for ${watchconnections.streamName(ctx)}.`);
  }
}
