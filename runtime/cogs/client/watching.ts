/**
 * Watching: list-then-watch streams of raw events as async iterators (R-WATCH-1..6).
 *
 * The watcher is an explicit state machine (kube-rs: `watcher::State` and its `step`; Kopf:
 * `clients/watching.py`). Its states are named (`WatchState`): a listing is due (`unlisted`), the
 * listing is handed out (`listed`), a connection is due (`connecting`), one is open (`watching`),
 * a back-off before re-watching (`reconnecting`) or re-listing (`relisting`), a pause (`paused`),
 * and the two ends (`stopped`, `failed`). `step()` moves it by one transition, performing at most
 * one I/O action through the context — a listing, a watch request, one line read, a sleep on the
 * injected clock, a wait for the pause to end — and hands out at most one event. A test drives it
 * transition by transition with a fake API and a virtual clock.
 *
 * Thin drivers turn the machine into the iterators the runtime consumes:
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
 * A restartable countdown on a clock: `onTimeout` runs if not disarmed within `ms` of arming.
 *
 * It is armed and disarmed for every line of a watch-stream, so arming only moves a deadline: one
 * sleep is pending at a time, and when it ends early relative to a moved deadline it sleeps for the
 * rest. (A sleep and an abort per line cost more than parsing the line.)
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

  /** Starts counting from now, unless already counting. */
  arm(): void {
    if (this.armed) return;
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
/** Why a run of the watcher ends when the pause begins. */
const PAUSED = new DOMException('The operator is paused.', 'AbortError');

/**
 * One watch connection (R-WATCH-2/5): the request, its lines, and the countdown that drops it when
 * no line arrives for `watching.inactivityTimeout` (debug log `Watch-stream for <resource> <where>
 * is inactive, reconnecting.`). The countdown runs while the request is answered and while a line
 * is awaited, not while the consumer handles a line.
 */
export class Connection {
  private readonly controller = new AbortController();
  private readonly countdown: Countdown;
  private lines: AsyncIterator<api.WatchLine> | undefined;
  private over = false;

  constructor(private readonly ctx: WatchContext) {
    const timeout = ctx.settings.watching.inactivityTimeout * 1000;
    this.countdown = new Countdown(ctx.clock ?? clocks.realClock, timeout, () => {
      ctx.logger.debug(`Watch-stream for ${describe(ctx)} is inactive, reconnecting.`);
      this.controller.abort(INACTIVE);
    });
  }

  /** Whether the watcher dropped it for inactivity. */
  get inactive(): boolean {
    return this.controller.signal.reason === INACTIVE;
  }

  /**
   * Sends the watch request from `resourceVersion` and waits until the server accepts it.
   * @throws errors.ApiError / errors.ConnectionError if it cannot be opened; the abort reason.
   */
  async open(resourceVersion: string | undefined, signal: AbortSignal | undefined): Promise<void> {
    const { watching, networking } = this.ctx.settings;
    this.countdown.arm();
    const lines = await this.ctx.api.watch(this.ctx.resource, this.ctx.namespace, {
      resourceVersion,
      timeoutSeconds: watching.serverTimeout,
      clientTimeout: watching.clientTimeout,
      connectTimeout: watching.connectTimeout ?? networking.connectTimeout ?? networking.requestTimeout,
      signal: aborts.anySignal([signal, this.controller.signal]),
    });
    this.lines = lines[Symbol.asyncIterator]();
    this.ctx.instruments?.connected();
    this.ctx.observer?.opened?.();
  }

  /**
   * The next line, or `undefined` once the server has ended the stream.
   * @throws errors.ConnectionError if it broke or timed out; the abort reason.
   */
  async next(): Promise<api.WatchLine | undefined> {
    this.countdown.arm();
    const result = await this.lines!.next();
    this.countdown.disarm();
    if (result.done) return undefined;
    this.ctx.observer?.line?.();
    return result.value;
  }

  /** Releases the connection (idempotent). */
  close(): void {
    if (this.over) return;
    this.over = true;
    this.countdown.dispose();
    this.controller.abort(CLOSED);
    if (this.lines === undefined) return;
    void this.lines.return?.().catch(() => undefined);
    this.ctx.observer?.closed?.();
  }
}

/** Where a watcher stands; each state names what its next step does (kube-rs: `watcher::State`). */
export type WatchState =
  /** A listing is due: at the start, after a lost stream, after a pause (kube-rs: `Empty`). */
  | { readonly kind: 'unlisted' }
  /** The listing is handed out, one object per step, then `LISTED` (kube-rs: `InitPage`). */
  | { readonly kind: 'listed'; readonly items: readonly bodies.RawBody[]; readonly next: number; readonly resourceVersion: string | undefined }
  /** A watch request from `resourceVersion` is due (kube-rs: `InitListed`). */
  | { readonly kind: 'connecting'; readonly resourceVersion: string | undefined }
  /** A connection is open; each step reads one line (kube-rs: `Watching`). */
  | { readonly kind: 'watching'; readonly resourceVersion: string | undefined; readonly connection: Connection }
  /** A connection could not be opened: after the back-off, connect again from the same version. */
  | { readonly kind: 'reconnecting'; readonly resourceVersion: string | undefined }
  /** The stream is lost — after a 410 (no `error`) or a recoverable `error` — re-list after the back-off. */
  | { readonly kind: 'relisting'; readonly error?: unknown }
  /** A pause has begun: wait until it is over, then re-list (R-WATCH-6). */
  | { readonly kind: 'paused' }
  /** The watcher's signal has aborted: the end. */
  | { readonly kind: 'stopped' }
  /** A fatal error: the end (the drivers throw it). */
  | { readonly kind: 'failed'; readonly error: unknown };

/** The outcome of one step: the next state, and the event to hand out, if any. */
export interface Step {
  readonly state: WatchState;
  readonly event?: WatchEvent;
}

/** The state every watcher starts in. */
export const UNLISTED: WatchState = Object.freeze({ kind: 'unlisted' });
const PAUSE: Step = Object.freeze({ state: Object.freeze({ kind: 'paused' }) });
const STOP: Step = Object.freeze({ state: Object.freeze({ kind: 'stopped' }) });

/**
 * What steers a watcher from outside: its stop signal and the pause toggle. A *run* lasts from a
 * listing until the watcher stops or a pause begins; `signal()` is the run's signal, which the
 * steps hand to every request and sleep so that a pause closes an open stream at once.
 */
export class Controls {
  private run: { readonly signal: AbortSignal; readonly release: AbortController } | undefined;

  constructor(
    readonly stop?: AbortSignal,
    readonly paused?: toggles.Awaitable,
  ) {}

  /** Whether the watcher's own signal has aborted. */
  get stopped(): boolean {
    return this.stop?.aborted === true;
  }

  /** The current run's signal: aborted when the watcher stops or a pause begins. */
  signal(): AbortSignal {
    if (this.run === undefined) {
      const pause = new AbortController();
      const release = new AbortController();
      this.paused?.waitFor(true, release.signal).then(
        () => pause.abort(PAUSED),
        () => undefined,
      );
      // `release` is an input too, so the combined signal lets go of `stop` once the run is over.
      this.run = { release, signal: aborts.anySignal([this.stop, pause.signal, release.signal]) };
    }
    return this.run.signal;
  }

  /** Ends the current run (its listeners on the toggle and on `stop`). */
  release(): void {
    this.run?.release.abort();
    this.run = undefined;
  }
}

/**
 * Moves the watcher one transition on from `state`, with at most one I/O action. Never throws:
 * fatal errors end in the `failed` state.
 *
 * @example
 * let state = UNLISTED;
 * const controls = new Controls(signal);
 * while (state.kind !== 'stopped') ({ state } = await step(state, ctx, controls));
 */
export async function step(state: WatchState, ctx: WatchContext, controls: Controls): Promise<Step> {
  switch (state.kind) {
    case 'stopped':
    case 'failed':
      return { state };
    case 'paused':
      return await pause(ctx, controls);
  }
  if (controls.signal().aborted) {
    if (state.kind === 'watching') state.connection.close();
    return interrupted(controls);
  }
  try {
    switch (state.kind) {
      case 'unlisted':
        return await list(ctx, controls);
      case 'listed':
        return handOut(state, ctx);
      case 'connecting':
        return await connect(state, ctx, controls);
      case 'watching':
        return await read(state, ctx, controls);
      case 'reconnecting':
        return await backOff({ kind: 'connecting', resourceVersion: state.resourceVersion }, ctx, controls);
      case 'relisting':
        return await backOff(UNLISTED, ctx, controls);
    }
  } catch (error) {
    if (state.kind === 'watching') state.connection.close();
    return { state: { kind: 'failed', error } };
  }
}

/** Where a run interrupted by the stop or by a pause goes. */
function interrupted(controls: Controls): Step {
  return controls.stopped ? STOP : PAUSE;
}

/** Waits out a pause that is on (R-WATCH-6): nothing is listed or watched until it ends. */
async function pause(ctx: WatchContext, controls: Controls): Promise<Step> {
  controls.release();
  if (controls.stopped) return STOP;
  const paused = controls.paused;
  if (!paused?.isOn()) return { state: UNLISTED }; // a pause already over: re-list at once
  ctx.logger.debug(`Pausing the watch-stream for ${describe(ctx)}.`);
  ctx.observer?.paused?.();
  try {
    await paused.waitFor(false, controls.stop);
  } catch {
    return STOP;
  }
  ctx.logger.debug(`Resuming the watch-stream for ${describe(ctx)}.`);
  ctx.observer?.resumed?.();
  return { state: UNLISTED };
}

/** Whether a failure calls only for a re-list after the back-off (R-WATCH-4). */
function isRecoverable(error: unknown): boolean {
  return error instanceof errors.ConnectionError || error instanceof errors.ApiTooManyRequestsError || error instanceof errors.ApiGoneError;
}

/** Lists the collection (R-WATCH-1), unless a pause is on. */
async function list(ctx: WatchContext, controls: Controls): Promise<Step> {
  if (controls.paused?.isOn()) return PAUSE;
  ctx.observer?.listing?.();
  let listing: api.Listing;
  try {
    listing = await ctx.api.list(ctx.resource, ctx.namespace, { signal: controls.signal() });
  } catch (error) {
    if (controls.signal().aborted) return interrupted(controls);
    if (isRecoverable(error)) return { state: { kind: 'relisting', error } };
    throw error;
  }
  ctx.instruments?.listed();
  return { state: { kind: 'listed', items: listing.items, next: 0, resourceVersion: listing.resourceVersion } };
}

/** Hands out the next listed object as a `type: null` event, or `LISTED` after the last one. */
function handOut(state: Extract<WatchState, { kind: 'listed' }>, ctx: WatchContext): Step {
  const object = state.items[state.next];
  if (object !== undefined) return { state: { ...state, next: state.next + 1 }, event: { type: null, object } };
  ctx.observer?.listed?.();
  return { state: { kind: 'connecting', resourceVersion: state.resourceVersion }, event: LISTED };
}

/** Opens a watch connection from the state's resource version (R-WATCH-2). */
async function connect(state: Extract<WatchState, { kind: 'connecting' }>, ctx: WatchContext, controls: Controls): Promise<Step> {
  const connection = new Connection(ctx);
  try {
    await connection.open(state.resourceVersion, controls.signal());
  } catch (error) {
    connection.close();
    return lost(state, connection, error, ctx, controls);
  }
  return { state: { kind: 'watching', resourceVersion: state.resourceVersion, connection } };
}

/** Reads one line of the open connection (R-WATCH-3/4). */
async function read(state: Extract<WatchState, { kind: 'watching' }>, ctx: WatchContext, controls: Controls): Promise<Step> {
  const { connection, resourceVersion } = state;
  let line: api.WatchLine | undefined;
  try {
    line = await connection.next();
  } catch (error) {
    connection.close();
    return lost(state, connection, error, ctx, controls);
  }
  if (line !== undefined) return accept(state, line, ctx);
  connection.close(); // closed by the server (or by `timeoutSeconds`): watch again at once
  return { state: { kind: 'connecting', resourceVersion } };
}

/**
 * Where a connection that failed to open or broke later leaves the watcher (R-WATCH-4/5): one
 * dropped for inactivity, broken or timed out is swallowed and the watch resumes at once from the
 * same version (one that could not even be opened: after the back-off, not in a busy loop); a 410
 * or a 429 calls for a re-list; anything else is fatal.
 */
function lost(
  state: Extract<WatchState, { kind: 'connecting' | 'watching' }>,
  connection: Connection,
  error: unknown,
  ctx: WatchContext,
  controls: Controls,
): Step {
  const { resourceVersion } = state;
  if (controls.signal().aborted) return interrupted(controls);
  if (connection.inactive) return { state: { kind: 'connecting', resourceVersion } };
  if (error instanceof errors.ConnectionError) return { state: { kind: state.kind === 'watching' ? 'connecting' : 'reconnecting', resourceVersion } };
  if (error instanceof errors.ApiGoneError) return gone(ctx);
  if (error instanceof errors.ApiTooManyRequestsError) return { state: { kind: 'relisting', error } };
  throw error;
}

/** The resource version is too old (410): a full re-list is due (R-WATCH-3). */
function gone(ctx: WatchContext): Step {
  ctx.logger.debug(`Restarting the watch-stream for ${describe(ctx)}.`);
  ctx.instruments?.gone();
  return { state: { kind: 'relisting' } };
}

/** Classifies one line (R-WATCH-3): events are handed out; bookmarks only move the version. */
function accept(state: Extract<WatchState, { kind: 'watching' }>, line: api.WatchLine, ctx: WatchContext): Step {
  if (line.type === 'ERROR') {
    state.connection.close();
    if ((line.object as { code?: unknown }).code === 410) return gone(ctx);
    return { state: { kind: 'failed', error: new errors.WatchingError(line.object) } };
  }
  if (!KNOWN_TYPES.has(line.type)) {
    ctx.logger.warning(`Ignoring an unsupported event type: ${JSON.stringify(line)}`);
    return { state };
  }
  const object = line.object as bodies.RawBody;
  const resourceVersion = object.metadata?.resourceVersion ?? state.resourceVersion;
  const next = resourceVersion === state.resourceVersion ? state : { ...state, resourceVersion };
  if (line.type === 'BOOKMARK') return { state: next };
  return { state: next, event: { type: line.type as 'ADDED' | 'MODIFIED' | 'DELETED', object } };
}

/** Sleeps `watching.reconnectBackoff` on the clock, then goes on to `next` (R-WATCH-4). */
async function backOff(next: WatchState, ctx: WatchContext, controls: Controls): Promise<Step> {
  const clock = ctx.clock ?? clocks.realClock;
  const slept = await aborts.sleepOrAbort(clock, ctx.settings.watching.reconnectBackoff * 1000, controls.signal());
  return slept ? { state: next } : interrupted(controls);
}

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
  const connection = new Connection(ctx);
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
  const controls = new Controls(options.signal);
  let state: WatchState = UNLISTED;
  try {
    for (;;) {
      const next = await step(state, ctx, controls);
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
  const controls = new Controls(options.signal, options.paused);
  ctx.logger.debug(`Starting the watch-stream for ${describe(ctx)}${options.paused?.isOn() ? ' (paused)' : ''}.`);
  let state: WatchState = UNLISTED;
  try {
    while (state.kind !== 'stopped') {
      const next = await step(state, ctx, controls);
      state = next.state;
      if (next.event !== undefined) yield next.event;
      if (state.kind === 'failed') throw state.error;
    }
  } finally {
    if (state.kind === 'watching') state.connection.close();
    controls.release();
    ctx.logger.debug(`Stopping the watch-stream for ${describe(ctx)}.`);
  }
}
