/**
 * The watcher as an explicit state machine (R-WATCH-1..6; kube-rs: `watcher::State` and its
 * `step`; Kopf: `clients/watching.py`, written there as nested generators).
 *
 * Its states are named (`WatchState`): a listing is due (`unlisted`), the listing is handed out
 * (`listed`), a connection is due (`connecting`), one is open (`watching`), a back-off before
 * re-watching (`reconnecting`) or re-listing (`relisting`), a pause (`paused`), and the two ends
 * (`stopped`, `failed`). `step()` moves the machine by one transition, performing at most one I/O
 * action through the context — a listing, a watch request, one line read, a sleep on the injected
 * clock, a wait for the pause to end — and hands out at most one event. So a test drives it
 * transition by transition with a fake API and a virtual clock; the drivers of `watching` turn it
 * into the iterators the runtime consumes.
 *
 * The transitions (each one step):
 *
 *     unlisted     → listed (the listing) | relisting (429, connection error, timeout) | paused
 *     listed       → listed (one object handed out) | connecting (`LISTED` handed out)
 *     connecting   → watching | reconnecting (refused) | connecting (inactive) | relisting (410, 429)
 *     watching     → watching (a line) | connecting (ended, broken, timed out, inactive)
 *                    | relisting (`ERROR` 410)
 *     reconnecting → connecting (after the back-off)
 *     relisting    → unlisted (after the back-off)
 *     paused       → unlisted (once the pause is over)
 *     any          → paused (a pause begins), stopped (the signal aborts), failed (fatal errors)
 */

import * as aborts from '../aio/aborts.js';
import * as clocks from '../aio/clocks.js';
import type * as toggles from '../aio/toggles.js';
import type * as bodies from '../structs/bodies.js';
import type * as api from './api.js';
import * as errors from './errors.js';
import * as watchconnections from './watchconnections.js';

type WatchContext = watchconnections.WatchContext;

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

const KNOWN_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK']);

/** Why a run of the watcher ends when the pause begins. */
const PAUSED = new DOMException('The operator is paused.', 'AbortError');

/** Where a watcher stands; each state names what its next step does (kube-rs: `watcher::State`). */
export type WatchState =
  /** A listing is due: at the start, after a lost stream, after a pause (kube-rs: `Empty`). */
  | { readonly kind: 'unlisted' }
  /** The listing is handed out, one object per step, then `LISTED` (kube-rs: `InitPage`). */
  | { readonly kind: 'listed'; readonly items: readonly bodies.RawBody[]; readonly next: number; readonly resourceVersion: string | undefined }
  /** A watch request from `resourceVersion` is due (kube-rs: `InitListed`). */
  | { readonly kind: 'connecting'; readonly resourceVersion: string | undefined }
  /** A connection is open; each step reads one line (kube-rs: `Watching`). */
  | { readonly kind: 'watching'; readonly resourceVersion: string | undefined; readonly connection: watchconnections.Connection }
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
  // Kopf's lines: the names of the toggles that hold the pause (peering objects, a missing CRD).
  const blockers = paused.activeNames?.() ?? [];
  ctx.logger.debug(`Pausing the watch-stream for ${watchconnections.streamName(ctx)}${blockers.length > 0 ? ` (blockers: ${blockers.join(', ')})` : ''}.`);
  ctx.observer?.paused?.();
  try {
    await paused.waitFor(false, controls.stop);
  } catch {
    return STOP;
  }
  const resolved = paused.activeNames?.() ?? [];
  ctx.logger.debug(`Resuming the watch-stream for ${watchconnections.streamName(ctx)}${resolved.length > 0 ? ` (resolved: ${resolved.join(', ')})` : ''}.`);
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
    listing = await ctx.api.list(ctx.resource, ctx.namespace, { labelSelector: ctx.labelSelector, signal: controls.signal() });
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
  ctx.observer?.listed?.(state.resourceVersion);
  return { state: { kind: 'connecting', resourceVersion: state.resourceVersion }, event: LISTED };
}

/** Opens a watch connection from the state's resource version (R-WATCH-2). */
async function connect(state: Extract<WatchState, { kind: 'connecting' }>, ctx: WatchContext, controls: Controls): Promise<Step> {
  const connection = new watchconnections.Connection(ctx);
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
  connection: watchconnections.Connection,
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
  ctx.logger.debug(`Restarting the watch-stream for ${watchconnections.streamName(ctx)}.`);
  ctx.instruments?.gone();
  return { state: { kind: 'relisting' } };
}

/** Classifies one line (R-WATCH-3): events are handed out; bookmarks only move the version. */
function accept(state: Extract<WatchState, { kind: 'watching' }>, line: api.WatchLine, ctx: WatchContext): Step {
  if (line.type === 'ERROR') {
    const over: Step =
      (line.object as { code?: unknown }).code === 410 ? gone(ctx) : { state: { kind: 'failed', error: new errors.WatchingError(line.object) } };
    state.connection.close();
    return over;
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
