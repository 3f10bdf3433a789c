/**
 * Watch health: whether the operator still hears the cluster.
 *
 * The most common silent failure of an operator is a watch-stream that is no longer delivering
 * anything — a connection dropped by a load balancer without a reset, a server that accepts and
 * never answers, a listing that hangs — while the process looks perfectly alive. Bookmarks make
 * silence measurable: a real API server sends one on every watch about once a minute, so a stream
 * that has heard nothing for minutes is broken, even if it reconnects every 70 s.
 *
 * `StreamHealth` keeps, per watch-stream (one per resource × namespace), what the stream's
 * `WatchObserver` reports: whether a connection is open and since when, when the last line arrived,
 * whether the initial listing is complete, whether it is paused. `assessStreams()` turns that into
 * problems against the budgets of `settings.health`; the reactor adds discovery and the readiness
 * barrier and serves the verdict (`reactor/reporting`).
 *
 * *Semantics* (all times on the injected clock):
 * - a stream is *expected open* unless it is paused (peering) — a paused stream is never a problem,
 *   and its clocks restart when it resumes;
 * - before its first complete listing, a stream is judged by `listingBudget` (since it started);
 * - afterwards, it is *down* while it has no open watch connection (also while re-listing), and a
 *   problem once down longer than `downtimeBudget`;
 * - it is *silent* for the time since the latest line, listing, start or resume, and a problem once
 *   silent longer than `silenceBudget` — reconnections do not reset silence, only data does.
 */

import type * as clocks from '../../cogs/aio/clocks.js';
import type * as watching from '../../cogs/client/watching.js';
import type * as settings from '../../cogs/configs/settings.js';
import * as configErrors from '../../cogs/configs/errors.js';

/** What is known of one watch-stream at a moment. */
export interface StreamSnapshot {
  /** The stream's identity (the reactor's dimension key). */
  readonly key: string;
  /** Readable: `kopfexamples.v1.kopf.dev in 'default'` or `… cluster-wide`. */
  readonly description: string;
  readonly paused: boolean;
  /** Whether the initial listing (since the start or the last resume) is complete. */
  readonly listed: boolean;
  readonly open: boolean;
  /** Since when the stream has been in its current open/closed state (or paused/resumed). */
  readonly since: number;
  /** The latest of: start, resume, completed listing, line. */
  readonly lastSeen: number;
  /** When it started or last resumed (the start of its current initial listing). */
  readonly startedAt: number;
}

/** One stream, as its watcher reports it; `stop()` when the watcher ends. */
export class StreamTracker implements watching.WatchObserver {
  private isPaused = false;
  private isListed = false;
  private isOpen = false;
  private everListed = false;
  private sinceTime: number;
  private lastSeenTime: number;
  private startedTime: number;

  constructor(
    readonly key: string,
    readonly description: string,
    private readonly clock: clocks.Clock,
    private readonly onStop: (tracker: StreamTracker) => void,
  ) {
    this.sinceTime = this.lastSeenTime = this.startedTime = clock.now();
  }

  /** Whether this stream has completed an initial listing at least once (readiness). */
  get hasListed(): boolean {
    return this.everListed;
  }

  listed(): void {
    this.isListed = true;
    this.everListed = true;
    this.lastSeenTime = this.clock.now();
  }

  opened(): void {
    this.isOpen = true;
    this.sinceTime = this.clock.now();
  }

  line(): void {
    this.lastSeenTime = this.clock.now();
  }

  closed(): void {
    this.isOpen = false;
    this.sinceTime = this.clock.now();
  }

  paused(): void {
    this.isPaused = true;
    this.isOpen = false;
    this.sinceTime = this.clock.now();
  }

  resumed(): void {
    const now = this.clock.now();
    this.isPaused = false;
    this.isListed = false;
    this.sinceTime = this.lastSeenTime = this.startedTime = now;
  }

  /** The watcher has ended: the stream is no longer expected. */
  stop(): void {
    this.onStop(this);
  }

  snapshot(): StreamSnapshot {
    return {
      key: this.key,
      description: this.description,
      paused: this.isPaused,
      listed: this.isListed,
      open: this.isOpen,
      since: this.sinceTime,
      lastSeen: this.lastSeenTime,
      startedAt: this.startedTime,
    };
  }
}

/**
 * All watch-streams of one operator. Watchers `track()` their stream for as long as they run; the
 * reporter reads `snapshots()`.
 *
 * @example
 * const tracker = health.track('kopfexamples.kopf.dev@/default', "kopfexamples.v1.kopf.dev in 'default'");
 * try { for await (const event of infiniteWatch({ …, observer: tracker })) …; } finally { tracker.stop(); }
 */
export class StreamHealth {
  private readonly trackers = new Set<StreamTracker>();

  constructor(private readonly clock: clocks.Clock) {}

  /** Starts tracking one stream (a watcher that just started). Two trackers may share a key briefly. */
  track(key: string, description: string): StreamTracker {
    const tracker = new StreamTracker(key, description, this.clock, (stopped) => {
      this.trackers.delete(stopped);
    });
    this.trackers.add(tracker);
    return tracker;
  }

  /** The tracked streams now. */
  snapshots(): StreamSnapshot[] {
    return [...this.trackers].map((tracker) => tracker.snapshot());
  }

  /** The keys of the streams whose initial listing has completed at least once. */
  listedKeys(): Set<string> {
    return new Set([...this.trackers].filter((tracker) => tracker.hasListed).map((tracker) => tracker.key));
  }
}

/** One reason why the operator is not healthy. */
export interface Problem {
  readonly kind: 'stream' | 'discovery' | 'barrier' | 'probe';
  /** What has the problem: a stream's description, a probe id, … */
  readonly name: string;
  readonly reason: string;
}

/** The budgets of `settings.health`, in seconds (`null`: not checked). */
export type Budgets = Pick<settings.HealthSettings, 'listingBudget' | 'downtimeBudget' | 'silenceBudget'>;

function seconds(ms: number): string {
  return `${Math.floor(ms / 1000)} s`;
}

function over(elapsed: number, budget: number | null): boolean {
  return budget !== null && elapsed > budget * 1000;
}

/**
 * The problems of the streams at `now` against the budgets (see the module's comment). Pure.
 *
 * @example
 * assessStreams(health.snapshots(), settings.health, clock.now()) // [{ kind: 'stream', name: "… in 'default'", reason: 'silent for 301 s (budget 300 s)' }]
 */
export function assessStreams(streams: readonly StreamSnapshot[], budgets: Budgets, now: number): Problem[] {
  const problems: Problem[] = [];
  for (const stream of streams) {
    if (stream.paused) continue;
    const problem = (reason: string): void => {
      problems.push({ kind: 'stream', name: stream.description, reason });
    };
    if (!stream.listed) {
      if (over(now - stream.startedAt, budgets.listingBudget)) {
        problem(`the listing is not complete after ${seconds(now - stream.startedAt)} (budget ${budgets.listingBudget} s)`);
      }
      continue;
    }
    if (!stream.open && over(now - stream.since, budgets.downtimeBudget)) {
      problem(`no watch connection for ${seconds(now - stream.since)} (budget ${budgets.downtimeBudget} s)`);
    } else if (over(now - stream.lastSeen, budgets.silenceBudget)) {
      problem(`silent for ${seconds(now - stream.lastSeen)}: no event or bookmark (budget ${budgets.silenceBudget} s)`);
    }
  }
  return problems;
}

/**
 * Checks the health budgets: each a non-negative number of seconds or `null`.
 *
 * @throws configErrors.SettingsError naming the setting.
 */
export function checkBudgets(budgets: settings.HealthSettings): void {
  for (const name of ['listingBudget', 'downtimeBudget', 'silenceBudget'] as const) {
    const value = budgets[name];
    if (value !== null && !(typeof value === 'number' && value >= 0 && Number.isFinite(value))) {
      throw new configErrors.SettingsError(`settings.health.${name} must be a number of seconds (0 or more) or null, got ${String(value)}.`);
    }
  }
  if (!(typeof budgets.probeTimeout === 'number' && budgets.probeTimeout > 0 && Number.isFinite(budgets.probeTimeout))) {
    throw new configErrors.SettingsError(`settings.health.probeTimeout must be a positive number of seconds, got ${String(budgets.probeTimeout)}.`);
  }
  const path = budgets.readinessPath;
  if (path !== null && !(typeof path === 'string' && path.startsWith('/') && !/[?#\s]/.test(path))) {
    throw new configErrors.SettingsError(`settings.health.readinessPath must be a path starting with / (or null), got ${JSON.stringify(path)}.`);
  }
}
