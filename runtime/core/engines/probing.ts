/**
 * Probes: the user's `on.probe()` handlers, evaluated for the liveness endpoint (R-ACTIVITY-4).
 *
 * The kubelet calls the liveness endpoint every few seconds, and several callers may call it at
 * once; probes may be costly (they often ask the cluster something). So an evaluation runs every
 * probe once, its results are kept for 10 seconds, and requests arriving meanwhile — also while an
 * evaluation is running — share it (Kopf: the cache and lock of `health_reporter`).
 *
 * A liveness endpoint must answer even when a probe does not: every evaluation has a deadline,
 * `settings.health.probeTimeout`. A probe that has not finished by then is reported as unfinished
 * (the endpoint answers 500 naming it), and its `signal` kwarg aborts so that a cooperative probe
 * stops. A probe that ignores its signal is not started again while it still runs: the next
 * evaluations wait for that same invocation (up to their own deadline) instead of piling up more.
 * A probe that throws is reported as failed with its message (never a stack trace). Failed and
 * unfinished outcomes are cached like results, for 10 seconds.
 *
 * Probes are not retried like other activities (a retry in 60 s would make the endpoint hang):
 * each evaluation invokes each probe once, with the activity kwargs of R-KWARGS-7 (`retry` 0).
 * Successes are logged at DEBUG (`Activity '<id>' succeeded.`), failures at ERROR, once per
 * evaluation.
 */

import * as aborts from '../../cogs/aio/aborts.js';
import type * as clocks from '../../cogs/aio/clocks.js';
import type * as settings from '../../cogs/configs/settings.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as errors from '../actions/errors.js';
import * as invocation from '../actions/invocation.js';
import * as logging from '../actions/logging.js';
import type * as handlers from '../intents/handlers.js';
import * as activities from './activities.js';
import type * as health from './health.js';

/** Seconds the results of an evaluation are served before the probes run again (R-ACTIVITY-4). */
export const CACHE_SECONDS = 10;

/** What became of one probe in one evaluation. */
export type ProbeOutcome =
  | { readonly kind: 'succeeded'; readonly result: unknown }
  | { readonly kind: 'failed'; readonly message: string }
  | { readonly kind: 'unfinished' /** Milliseconds it has been running. */; readonly runningFor: number };

/** The outcome of one evaluation of all probes. */
export interface ProbeReport {
  /** When the evaluation ended (the cache's reference time). */
  readonly time: number;
  /** By probe id, in registration order. */
  readonly outcomes: ReadonlyMap<string, ProbeOutcome>;
}

/**
 * The liveness body of R-ACTIVITY-4: `{ <probe id>: <result> }` of the successful probes, without
 * `null`/`undefined` results.
 */
export function probeResults(report: ProbeReport): Record<string, unknown> {
  const results: Record<string, unknown> = {};
  for (const [id, outcome] of report.outcomes) {
    if (outcome.kind === 'succeeded' && outcome.result !== null && outcome.result !== undefined) results[id] = outcome.result;
  }
  return results;
}

/** The probes that failed or did not finish, as health problems. */
export function probeProblems(report: ProbeReport, timeout: number): health.Problem[] {
  const problems: health.Problem[] = [];
  for (const [id, outcome] of report.outcomes) {
    if (outcome.kind === 'failed') problems.push({ kind: 'probe', name: id, reason: `failed: ${outcome.message}` });
    if (outcome.kind === 'unfinished') {
      problems.push({ kind: 'probe', name: id, reason: `not finished within ${timeout} s (running for ${Math.floor(outcome.runningFor / 1000)} s)` });
    }
  }
  return problems;
}

/** What a `Prober` needs. */
export interface ProberOptions {
  /** The probe handlers, e.g. `registry.activityHandlers('probe')`. */
  readonly handlers: readonly handlers.ActivityHandler[];
  /** Read at every evaluation: `health.probeTimeout`; passed as `settings`. */
  readonly settings: settings.OperatorSettings;
  /** The operator memo, passed as `memo`. */
  readonly memo: object;
  readonly clock: clocks.Clock;
  /** Index names → indices, added to the kwargs (R-INDEX-8). */
  readonly indices?: Readonly<Record<string, unknown>>;
  /** Default: `kopf.activities.probe`; handlers get it as `logger`. */
  readonly logger?: loggers.Logger;
  /** The operator's stop: aborts the probes' `signal` kwarg. */
  readonly signal: AbortSignal;
}

interface Running {
  readonly since: number;
  readonly done: Promise<ProbeOutcome>;
  readonly controller: AbortController;
  /** Set when the invocation has settled. */
  outcome?: ProbeOutcome;
}

/**
 * Evaluates probes with the cache, sharing and deadline rules of the module's comment.
 *
 * @example
 * const prober = new Prober({ handlers: registry.activityHandlers('probe'), settings, memo, clock, signal });
 * const report = await prober.probe();
 * probeResults(report) // { pods_count: 3 }
 */
export class Prober {
  private cached: ProbeReport | undefined;
  private evaluating: Promise<ProbeReport> | undefined;
  private readonly running = new Map<string, Running>();
  private readonly logger: loggers.Logger;
  /** The operator scope the prober was made in: probes run in it, whatever request calls them. */
  private readonly scope = invocation.findOperator();

  constructor(private readonly options: ProberOptions) {
    this.logger = options.logger ?? logging.getLogger('kopf.activities.probe');
  }

  /** Whether any probe is registered. */
  get empty(): boolean {
    return this.options.handlers.length === 0;
  }

  /** The latest report if it is younger than 10 s, else a new (or the running) evaluation. */
  probe(): Promise<ProbeReport> {
    const { clock } = this.options;
    if (this.cached !== undefined && clock.now() - this.cached.time < CACHE_SECONDS * 1000) return Promise.resolve(this.cached);
    this.evaluating ??= this.evaluate().finally(() => {
      this.evaluating = undefined;
    });
    return this.evaluating;
  }

  private async evaluate(): Promise<ProbeReport> {
    const { handlers, clock, settings, signal } = this.options;
    const invocations = handlers.map((handler) => ({ handler, running: this.running.get(handler.id) ?? this.start(handler) }));
    const deadline = new AbortController();
    const stop = aborts.anySignal([signal, deadline.signal]);
    const expired = aborts.sleepOrAbort(clock, settings.health.probeTimeout * 1000, stop);
    const finished: Promise<boolean> = Promise.all(invocations.map(({ running }) => running.done)).then(() => false);
    try {
      await Promise.race([expired, finished]);
    } finally {
      deadline.abort();
    }
    signal.throwIfAborted();
    const now = clock.now();
    const outcomes = new Map<string, ProbeOutcome>();
    for (const { handler, running } of invocations) {
      const settled = running.outcome;
      if (settled === undefined) {
        this.logger.error(`Activity '${handler.id}' has not finished within ${settings.health.probeTimeout} seconds.`);
        running.controller.abort(new DOMException(`The probe has not finished within ${settings.health.probeTimeout} seconds.`, 'AbortError'));
      }
      outcomes.set(handler.id, settled ?? { kind: 'unfinished', runningFor: now - running.since });
    }
    const report: ProbeReport = { time: clock.now(), outcomes };
    this.cached = report;
    return report;
  }

  /** Invokes one probe; the invocation stays in `running` until it settles. */
  private start(handler: handlers.ActivityHandler): Running {
    const { clock, signal, settings, memo, indices } = this.options;
    const controller = new AbortController();
    const since = clock.now();
    // The probe's signal follows the operator's stop and this probe's deadline; released once it settles.
    const cancellation = aborts.follow([signal, controller.signal]);
    const kwargs = activities.activityKwargs({
      activity: 'probe',
      handler,
      retry: { retry: 0, started: new Date(since), runtime: 0 },
      logger: this.logger,
      memo,
      settings,
      signal: cancellation.signal,
      indices,
    });
    const call = (): Promise<unknown> => invocation.invoke(handler.fn, kwargs);
    const invoked = this.scope !== undefined ? invocation.runInOperator(this.scope, call) : call();
    const done = invoked
      .then(
        (result): ProbeOutcome => {
          this.logger.debug(`Activity '${handler.id}' succeeded.`);
          return { kind: 'succeeded', result };
        },
        (thrown: unknown): ProbeOutcome => {
          const message = errors.describeError(thrown).split('\n')[0]!;
          this.logger.error(`Activity '${handler.id}' has failed: ${message}`);
          return { kind: 'failed', message };
        },
      )
      .then((outcome) => {
        cancellation.release();
        running.outcome = outcome;
        this.running.delete(handler.id);
        return outcome;
      });
    const running: Running = { since, done, controller };
    this.running.set(handler.id, running);
    return running;
  }
}
