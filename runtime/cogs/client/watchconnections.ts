/**
 * Watch connections: one watch request and its lines (R-WATCH-2, R-WATCH-5), and the vocabulary
 * every part of a watcher shares — what is watched and with what (`WatchContext`), and who hears
 * how the stream lives (`WatchObserver`).
 *
 * A `Connection` sends the watch request, hands out its lines one at a time, and drops itself when
 * no line arrives for `watching.inactivityTimeout`: load balancers drop idle connections silently,
 * so silence is the only sign. Its countdown runs on the injected clock, so a test moves a virtual
 * clock past the timeout instead of waiting for it. The watcher's states (`watchstates`) decide
 * what a failed or ended connection means.
 */

import * as aborts from '../aio/aborts.js';
import * as clocks from '../aio/clocks.js';
import type * as settings from '../configs/settings.js';
import type * as instruments from '../structs/instruments.js';
import type * as loggers from '../structs/loggers.js';
import * as references from '../structs/references.js';
import type * as api from './api.js';

/**
 * Hears the life of one watch stream (all methods optional, all cheap: `line` runs per line). The
 * health tracker implements it (`core/engines/health`).
 */
export interface WatchObserver {
  /** A listing request is about to be sent (initially, after a 410, after a pause). */
  listing?(): void;
  /** The listing is complete (just before `LISTED` is yielded), with the listing's resource version. */
  listed?(resourceVersion?: string): void;
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
  /** Only the objects with these labels, in the listing and the watch (e.g. a sharded replica's own objects). */
  readonly labelSelector?: string;
  readonly logger: loggers.Logger;
  /** Default: the real clock. */
  readonly clock?: clocks.Clock;
  /** Where listings, accepted connections and 410s are reported (an operator's metrics), if anywhere. */
  readonly instruments?: instruments.WatchInstruments;
  /** Hears listings, connections, lines and pauses (e.g. for health tracking). */
  readonly observer?: WatchObserver;
}

/** `in '<ns>'` or `cluster-wide`, as in the log texts of the runtime reference. */
export function whereOf(namespace: string | null): string {
  return namespace === null ? 'cluster-wide' : `in '${namespace}'`;
}

/** `<resource> <where>`: how the log lines name a stream. */
export function streamName(ctx: WatchContext): string {
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
      ctx.logger.debug(`Watch-stream for ${streamName(ctx)} is inactive, reconnecting.`);
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
      labelSelector: this.ctx.labelSelector,
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
