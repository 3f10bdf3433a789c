/**
 * Executing handlers once: the lifecycle's choice of the awakened handlers, each invoked once, each
 * turned into an `Outcome` value rather than an exception, so that the rules for results versus
 * errors live in one place (R-HANDLERS-4/5/8, R-ERRORS-1..8).
 *
 * Nothing a handler throws escapes from here (except cancellation): `TemporaryError` becomes an
 * unfinished outcome with a delay, `PermanentError` a final failure, any other thrown value is
 * treated per the handler's `ErrorsMode` with its `backoff`; the `retries` and `timeout` limits are
 * checked before and after each invocation against the *persisted* `started` and `retries`, so they
 * hold across operator restarts. Every decision logs the exact texts of R-ERRORS. A running
 * invocation is never interrupted by its timeout (D-5); when the operator stops (`scope.signal`
 * aborts), execution stops waiting for it, logs `Handler '<id>' is cancelled. Will escalate.` and
 * re-throws the abort reason: no outcome is produced, so the record stays as it was and the handler
 * runs again after a restart.
 *
 * Handlers are structural `Invocable`s: this layer knows nothing of registries and filters
 * (`intents`); the reactor adapts its handler descriptors and supplies the kwargs of a cause through
 * an `ExecutionScope`. The same machinery runs sub-handlers (`executeSubhandlers`, R-HANDLERS-13):
 * a handler registers them through the helpers of `reactor/subhandling` while it runs; they are
 * executed with the parent's lifecycle, their records stored like top-level ones, their ids added
 * to the `subrefs` of all ancestors, and `HandlerChildrenRetryError` is thrown while some are unfinished.
 *
 * Every invocation that ends with an outcome is reported to the scope's instruments, if any: its
 * handler id, what it came to (`resultOf`), whether it will be retried, and how long it took.
 */

import { AsyncLocalStorage } from 'node:async_hooks';

import * as aborts from '../../cogs/aio/aborts.js';
import * as clientErrors from '../../cogs/client/errors.js';
import type * as progress from '../../cogs/configs/progress.js';
import type * as settings from '../../cogs/configs/settings.js';
import type * as clocks from '../../cogs/aio/clocks.js';
import type * as instruments from '../../cogs/structs/instruments.js';
import * as loggers from '../../cogs/structs/loggers.js';
import type * as patches from '../../cogs/structs/patches.js';
import * as errors from './errors.js';
import * as invocation from './invocation.js';
import * as lifecycles from './lifecycles.js';
import * as outcomes from './outcomes.js';
import * as progression from './progression.js';

/** A user function as execution calls it: one kwargs object in, any result (or promise) out. */
export type HandlerFn = { bivarianceHack(kwargs: Record<string, unknown>): unknown }['bivarianceHack'];

/**
 * The minimal structural view of a handler that execution needs. The reactor adapts the handler
 * descriptors of `intents` to it (extra properties are kept and reach `ExecutionScope.kwargs`).
 */
export interface Invocable {
  /** The handler id (R-HANDLERS-2): the key of its progress record and of `status.<id>`. */
  readonly id: string;
  readonly fn: HandlerFn;
  /** How arbitrary errors are treated; default `ExecutionScope.defaultErrors` (TEMPORARY). */
  readonly errors?: errors.ErrorsMode | null;
  /** Seconds since the first attempt after which the handler fails (R-ERRORS-5). */
  readonly timeout?: number | null;
  /** The maximum number of invocations (R-ERRORS-4). */
  readonly retries?: number | null;
  /** Seconds before retrying after an arbitrary error; default `settings.execution.defaultBackoff`. */
  readonly backoff?: number | null;
  /** Passed through as the `param` kwarg by the kwargs builder. */
  readonly param?: unknown;
  /** For field handlers: the field path (the kwargs builder narrows `old`/`new`/`diff` to it). */
  readonly field?: readonly string[] | null;
  /** For sub-handlers: whether its filters accept the cause; evaluated when it is offered. */
  readonly matches?: () => boolean;
}

/** The retry kwargs of one invocation (R-KWARGS-2). */
export interface RetryKwargs {
  /** 0 on the first attempt. */
  readonly retry: number;
  /** The first attempt of this handler for this change (persisted across restarts). */
  readonly started: Date;
  /** Seconds since `started`. */
  readonly runtime: number;
}

/** Everything execution needs to know about the cause being handled. */
export interface ExecutionScope {
  readonly settings: settings.OperatorSettings;
  readonly clock: clocks.Clock;
  /** The per-object logger of the cause (local for on-event handlers, R-POST-2). */
  readonly logger: loggers.Logger;
  /** Aborts when the operator stops: waiting for handlers ends (R-ERRORS-8). */
  readonly signal?: AbortSignal;
  /**
   * Daemons: the forced stop (R-DAEMON-5/6). Execution keeps waiting for the handler when it
   * aborts (the daemon is expected to honour it and settle), but an error it settles with
   * afterwards is a cancellation, not a failure: no outcome, no retry.
   */
  readonly stopping?: Pick<AbortSignal, 'aborted' | 'reason'>;
  /** The lifecycle (also for sub-handlers); default `lifecycles.getDefaultLifecycle()`. */
  readonly lifecycle?: lifecycles.Lifecycle | null;
  /** The errors mode of handlers without one; default `TEMPORARY`. */
  readonly defaultErrors?: errors.ErrorsMode;
  /** Builds the kwargs object of one invocation (lazily, see `invocation.lazyKwargs`). */
  readonly kwargs: (handler: Invocable, retry: RetryKwargs) => object;
  /**
   * For change causes only: where sub-handler records are read from and written to, and the
   * purpose of fresh ones. Without it, sub-handlers are refused (on-event handlers etc.).
   */
  readonly change?: {
    readonly body: unknown;
    readonly patch: patches.PatchBase<object>;
    readonly reason: string;
    /** The progress storage; default `settings.persistence.progressStorage`. */
    readonly storage?: progress.ProgressStorage;
  };
  /** The reactor's own cause object, opaque here (for helpers that need more than kwargs). */
  readonly cause?: unknown;
  /**
   * The object the handler runs for, as of now (a daemon's newest body): the default owner of the
   * hierarchy helpers (`kits/hierarchies`). Absent for handlers of no object (activities).
   */
  readonly body?: () => unknown;
  /** Where every finished invocation is reported (the operator's metrics), if anywhere. */
  readonly instruments?: instruments.HandlerInstruments;
}

/** The handler a piece of code runs in (R-API-6): what sub-handler helpers need. */
export interface HandlerContext {
  /** The handler being invoked. */
  readonly handler: Invocable;
  /** The cause's execution scope (settings, clock, kwargs, body and patch of the change, …). */
  readonly scope: ExecutionScope;
  /** Sub-handlers registered so far by this invocation (Kopf: the sub-registry). */
  readonly subhandlers: Invocable[];
  /** Where sub-handler ids go: this invocation's own set and those of all its ancestors. */
  readonly subrefs: ReadonlyArray<Set<string>>;
  /** Whether the sub-handlers were executed (explicitly or implicitly) in this invocation. */
  subexecuted: boolean;
}

const handlerContexts = new AsyncLocalStorage<HandlerContext>();

/** Runs `fn` inside a handler context. */
export function runInHandler<T>(context: HandlerContext, fn: () => T): T {
  return handlerContexts.run(context, fn);
}

/** Runs `fn` outside of any handler context (where engines start work of their own). */
export function outsideHandlers<T>(fn: () => T): T {
  return handlerContexts.exit(fn);
}

/** The current handler context, or `undefined` outside of one. */
export function findHandler(): HandlerContext | undefined {
  return handlerContexts.getStore();
}

/**
 * The current handler context.
 *
 * @throws Error when called outside of a handler.
 */
export function currentHandler(what = 'This function'): HandlerContext {
  const context = handlerContexts.getStore();
  if (context === undefined) throw new Error(`${what} was called outside of a handler: it can only be used while a handler runs.`);
  return context;
}

/**
 * Python's `str(timedelta)`: `H:MM:SS` or `H:MM:SS.ffffff`, with `N day(s), ` before it.
 *
 * @example
 * formatDuration(65.5) // '0:01:05.500000'
 */
export function formatDuration(seconds: number): string {
  const micros = Math.round(Math.max(0, seconds) * 1_000_000);
  const days = Math.floor(micros / 86_400_000_000);
  const rest = micros - days * 86_400_000_000;
  const whole = Math.floor(rest / 1_000_000);
  const fraction = rest - whole * 1_000_000;
  const hms = `${Math.floor(whole / 3600)}:${String(Math.floor(whole / 60) % 60).padStart(2, '0')}:${String(whole % 60).padStart(2, '0')}`;
  const text = fraction > 0 ? `${hms}.${String(fraction).padStart(6, '0')}` : hms;
  return days > 0 ? `${days} day${days === 1 ? '' : 's'}, ${text}` : text;
}

/**
 * Executes the lifecycle's choice of the awakened handlers once each, in the chosen order
 * (R-HANDLERS-4/5). Handlers must be in `state` (see `State.withHandlers`); unknown ones count as
 * fresh.
 *
 * @returns one outcome per invoked handler, by id, in invocation order.
 * @throws the abort reason if `scope.signal` aborts during an invocation (R-ERRORS-8).
 */
export async function executeHandlersOnce<H extends Invocable>(options: {
  readonly handlers: readonly H[];
  readonly state: progression.State;
  readonly scope: ExecutionScope;
}): Promise<Map<string, outcomes.Outcome>> {
  const { handlers, state, scope } = options;
  const now = scope.clock.now();
  const todo = handlers.filter((handler) => !state.has(handler.id) || state.get(handler.id).isAwakened(now));
  const lifecycle = scope.lifecycle ?? lifecycles.getDefaultLifecycle();
  const plan = lifecycle(todo, { state });
  const results = new Map<string, outcomes.Outcome>();
  for (const handler of plan) {
    const handlerState = state.has(handler.id) ? state.get(handler.id) : progression.HandlerState.fromScratch({ now, purpose: state.purpose });
    results.set(handler.id, await executeHandlerOnce({ handler, state: handlerState, scope }));
  }
  return results;
}

/**
 * Invokes one handler once and turns whatever happens into an outcome (R-ERRORS-1..8).
 *
 * @throws the abort reason if `scope.signal` aborts during the invocation (R-ERRORS-8).
 */
export async function executeHandlerOnce(options: {
  readonly handler: Invocable;
  readonly state: progression.HandlerState;
  readonly scope: ExecutionScope;
}): Promise<outcomes.Outcome> {
  return await executeHandlerNow(options);
}

/**
 * `executeHandlerOnce()` without a promise where none is needed (R-PERF-301): a handler that
 * returns synchronously — a timer's usual tick — is executed, judged and reported before this
 * returns, with no promise, no async frame and no message built that its logger would hide.
 * A handler that returns a promise gets a promise of its outcome. Either way the outcome, the
 * messages and the reports are `executeHandlerOnce()`'s.
 *
 * @throws the abort reason if `scope.signal` aborts during the invocation (R-ERRORS-8) — thrown
 *   here for a synchronous handler, a rejection otherwise.
 */
export function executeHandlerNow(options: {
  readonly handler: Invocable;
  readonly state: progression.HandlerState;
  readonly scope: ExecutionScope;
}): outcomes.Outcome | Promise<outcomes.Outcome> {
  const { handler, state, scope } = options;
  const { logger, clock } = scope;
  const since = scope.instruments?.now() ?? 0;
  const subrefs = new Set<string>();
  let result: unknown;
  try {
    if (loggers.isEnabledFor(logger, 'debug')) logger.debug(`Handler '${handler.id}' is invoked.`);
    const runtime = state.runtime(clock.now());
    if (handler.timeout !== null && handler.timeout !== undefined && runtime >= handler.timeout) {
      throw new errors.HandlerTimeoutError(`Handler '${handler.id}' has timed out after ${formatDuration(runtime)}.`);
    }
    if (handler.retries !== null && handler.retries !== undefined && state.retries >= handler.retries) {
      throw new errors.HandlerRetriesError(`Handler '${handler.id}' has exceeded ${state.retries} retries.`);
    }
    const retry: RetryKwargs = { retry: state.retries, started: new Date(state.started), runtime };
    if (scope.signal?.aborted) throw scope.signal.reason;
    result = invokeHandler({ handler, scope, retry, subrefs });
  } catch (thrown) {
    return failed({ handler, state, scope, thrown, subrefs, since });
  }
  if (!invocation.isPromiseLike(result)) return succeeded(handler, scope, result, subrefs, since);
  return awaitOutcome(result, { handler, state, scope, subrefs, since });
}

/**
 * The outcome of a handler that returned a promise: one promise of it, settled by the handler's
 * promise or by the operator's stop (`scope.signal`), whichever comes first (R-ERRORS-8). Daemons
 * hold this for as long as they run, so it is one promise, not a chain.
 */
function awaitOutcome(result: PromiseLike<unknown>, context: Omit<Parameters<typeof failed>[0], 'thrown'>): Promise<outcomes.Outcome> {
  const { handler, scope, subrefs, since } = context;
  const signal = scope.signal;
  return new Promise<outcomes.Outcome>((resolve, reject) => {
    let settled = false;
    let detach: (() => void) | undefined;
    const settle = (outcome: () => outcomes.Outcome): void => {
      if (settled) return;
      settled = true;
      detach?.();
      try {
        resolve(outcome());
      } catch (error) {
        reject(error); // a cancellation escalates
      }
    };
    // (Called at once if the handler's synchronous part has already seen the operator stop.)
    if (signal !== undefined) detach = aborts.onAbort(signal, () => settle(() => failed({ ...context, thrown: signal.reason })));
    result.then(
      (value) => settle(() => succeeded(handler, scope, value, subrefs, since)),
      (thrown: unknown) => settle(() => failed({ ...context, thrown })),
    );
  });
}

/** No sub-handlers: shared by the outcomes of handlers that registered none (most of them). */
const NO_SUBREFS: readonly string[] = Object.freeze([]);

function sortedRefs(subrefs: ReadonlySet<string>): readonly string[] {
  return subrefs.size === 0 ? NO_SUBREFS : [...subrefs].sort();
}

function succeeded(handler: Invocable, scope: ExecutionScope, result: unknown, subrefs: ReadonlySet<string>, since: number): outcomes.Outcome {
  if (loggers.isEnabledFor(scope.logger, 'info')) scope.logger.info(`Handler '${handler.id}' succeeded.`);
  scope.instruments?.handled(handler.id, 'success', false, since);
  return { final: true, result, subrefs: sortedRefs(subrefs) };
}

/** A failed invocation: a cancellation escalates (throws), anything else is judged and reported. */
function failed(options: {
  readonly handler: Invocable;
  readonly state: progression.HandlerState;
  readonly scope: ExecutionScope;
  readonly thrown: unknown;
  readonly subrefs: ReadonlySet<string>;
  readonly since: number;
}): outcomes.Outcome {
  const { handler, state, scope, thrown, subrefs, since } = options;
  const cancelled = scope.signal?.aborted ? scope.signal : scope.stopping?.aborted ? scope.stopping : undefined;
  if (cancelled !== undefined) {
    scope.logger.warning(`Handler '${handler.id}' is cancelled. Will escalate.`);
    throw cancelled.reason;
  }
  const outcome = judge({ handler, state, scope, thrown, subrefs: sortedRefs(subrefs) });
  scope.instruments?.handled(handler.id, resultOf(thrown, outcome), !outcome.final, since);
  return outcome;
}

/**
 * What a failed invocation came to, for the metrics (`instruments.HandlerResult`): the kind of
 * error thrown, except that a temporary or arbitrary error escalated by the timeout or retries
 * limit (`HandlerTimeoutError`, `HandlerRetriesError`) is a permanent failure.
 */
export function resultOf(thrown: unknown, outcome?: outcomes.Outcome): instruments.HandlerResult {
  if (thrown instanceof errors.HandlerChildrenRetryError) return 'subhandlers';
  if (thrown instanceof errors.PermanentError || outcome?.error instanceof errors.PermanentError) return 'permanent';
  if (thrown instanceof errors.TemporaryError) return 'temporary';
  return 'arbitrary';
}

/** Decides the outcome of a failed invocation and logs it (R-ERRORS-1..5). */
function judge(options: {
  readonly handler: Invocable;
  readonly state: progression.HandlerState;
  readonly scope: ExecutionScope;
  readonly thrown: unknown;
  readonly subrefs: readonly string[];
}): outcomes.Outcome {
  const { handler, state, scope, thrown, subrefs } = options;
  const { logger } = scope;
  const title = `Handler '${handler.id}'`;
  const text = errors.describeError(thrown);
  const error = errors.toError(thrown);
  const runtime = state.runtime(scope.clock.now());
  const { timeout, retries } = handler;
  const timesOut = (delay: number): boolean => timeout !== null && timeout !== undefined && runtime + delay >= timeout;
  const exceeds = (): boolean => retries !== null && retries !== undefined && state.retries + 1 >= retries;
  // The escalated error carries the whole logged line as its message, as Kopf's does: its progress
  // record stores that line, byte for byte.
  const escalated = (Class: typeof errors.HandlerTimeoutError | typeof errors.HandlerRetriesError, message: string): Error =>
    new Class(message, { cause: thrown });

  if (thrown instanceof errors.HandlerChildrenRetryError) {
    logger.debug(`${title} has unfinished sub-handlers. Will retry soon.`);
    return { final: false, error, delay: thrown.delay, subrefs };
  }
  if (thrown instanceof errors.TemporaryError) {
    if (timesOut(thrown.delay ?? 0)) {
      const message = `${title} failed temporarily but will time out after ${timeout} seconds: ${text}`;
      logger.error(message);
      return { final: true, error: escalated(errors.HandlerTimeoutError, message), subrefs };
    }
    if (exceeds()) {
      const message = `${title} failed temporarily but will exceed ${retries} retries: ${text}`;
      logger.error(message);
      return { final: true, error: escalated(errors.HandlerRetriesError, message), subrefs };
    }
    logger.error(`${title} failed temporarily: ${text}`);
    return { final: false, error, delay: thrown.delay, subrefs };
  }
  if (thrown instanceof errors.HandlerTimeoutError || thrown instanceof errors.HandlerRetriesError) {
    logger.error(text);
    return { final: true, error, subrefs };
  }
  if (thrown instanceof errors.PermanentError) {
    logger.error(`${title} failed permanently: ${text}`);
    return { final: true, error, subrefs };
  }

  const mode = handler.errors ?? scope.defaultErrors ?? errors.ErrorsMode.TEMPORARY;
  const backoff = handler.backoff ?? scope.settings.execution.defaultBackoff;
  // A stack trace helps to find a bug in a handler, not to fix a kubeconfig or a refused
  // connection: those errors say everything in their message (e.g. the built-in logins').
  const details = clientErrors.traceExtra(error);
  switch (mode) {
    case errors.ErrorsMode.IGNORED:
      logger.error(`${title} failed with an exception and will ignore it: ${text}`, details);
      return { final: true, subrefs };
    case errors.ErrorsMode.PERMANENT:
      logger.error(`${title} failed with an exception and will stop now: ${text}`, details);
      return { final: true, error, subrefs };
    case errors.ErrorsMode.TEMPORARY:
      if (timesOut(backoff)) {
        const message = `${title} failed with an exception and will stop now (it would time out in ${timeout} seconds on the next attempt): ${text}`;
        logger.error(message, details);
        return { final: true, error: escalated(errors.HandlerTimeoutError, message), subrefs };
      }
      if (exceeds()) {
        const message = `${title} failed with an exception and will stop now (it would exceed ${retries} retries on the next attempt): ${text}`;
        logger.error(message, details);
        return { final: true, error: escalated(errors.HandlerRetriesError, message), subrefs };
      }
      logger.error(`${title} failed with an exception and will try again in ${backoff} seconds: ${text}`, details);
      return { final: false, error, delay: backoff, subrefs };
    default:
      throw new TypeError(`Unknown mode for errors: ${String(mode)}`);
  }
}

/**
 * Calls the handler in its own handler context, then executes its registered sub-handlers unless
 * it already did (implicit `execute()`, R-HANDLERS-13). Returns what the handler returned — a
 * promise only if it did, or if sub-handlers are to be executed (causes of a change).
 */
function invokeHandler(options: {
  readonly handler: Invocable;
  readonly scope: ExecutionScope;
  readonly retry: RetryKwargs;
  readonly subrefs: Set<string>;
}): unknown {
  const { handler, scope, retry, subrefs } = options;
  const parent = findHandler();
  const context: HandlerContext = {
    handler,
    scope,
    subhandlers: [],
    subrefs: parent === undefined ? [subrefs] : [...parent.subrefs, subrefs],
    subexecuted: false,
  };
  return runInHandler(context, () => callInContext(context, retry));
}

/** The handler's call inside its context; what a handler of a change is followed by. */
function callInContext(context: HandlerContext, retry: RetryKwargs): unknown {
  const { handler, scope } = context;
  // Called as a plain function, not as a method of the handler (no `this`; stack traces name it alone).
  const fn = handler.fn;
  const result: unknown = fn(scope.kwargs(handler, retry) as Record<string, unknown>);
  if (scope.change === undefined) return result;
  // Continuations of this promise stay in the handler's context: `execute()` finds it.
  return Promise.resolve(result).then(async (value) => {
    if (!context.subexecuted) await executeSubhandlers();
    return value;
  });
}

/**
 * Executes sub-handlers of the current handler (the core of `kopf.execute()`, R-HANDLERS-13):
 * without `handlers`, the ones registered so far in this invocation, once per invocation (later
 * calls do nothing). Offered are those whose `matches()` accepts the cause; records of all of them
 * are loaded, changed ones stored, results delivered, and every id added to the `subrefs` of the
 * current handler and its ancestors.
 *
 * @throws Error outside of a handler; Error for handlers of causes without a change (on-event).
 * @throws HandlerChildrenRetryError if some offered sub-handlers are not finished yet.
 */
export async function executeSubhandlers(options?: {
  readonly handlers?: readonly Invocable[];
  readonly lifecycle?: lifecycles.Lifecycle | null;
}): Promise<void> {
  const context = currentHandler('execute()');
  const change = context.scope.change;
  if (change === undefined) {
    throw new Error('Sub-handlers of event-handlers are not supported and have no practical use (there are no retries or state tracking).');
  }
  let handlers = options?.handlers;
  if (handlers === undefined) {
    if (context.subexecuted) return;
    context.subexecuted = true;
    handlers = [...context.subhandlers];
  }
  const scope: ExecutionScope = options?.lifecycle ? { ...context.scope, lifecycle: options.lifecycle } : context.scope;
  const storage = change.storage ?? scope.settings.persistence.progressStorage;
  const selected = handlers.filter((handler) => handler.matches?.() ?? true);
  const loaded = await progression.State.fromStorage({
    body: change.body,
    storage,
    handlerIds: handlers.map((handler) => handler.id),
    now: scope.clock.now(),
  });
  const state = loaded.withPurpose(change.reason).withHandlers(
    selected.map((handler) => handler.id),
    scope.clock.now(),
  );
  const results = await executeHandlersOnce({ handlers: selected, state, scope });
  const final = state.withOutcomes(results, scope.clock.now());
  await final.store({ body: change.body, patch: change.patch, storage });
  outcomes.deliverResults(results, change.patch);
  for (const id of final.ids) for (const container of context.subrefs) container.add(id);
  if (!final.done) throw new errors.HandlerChildrenRetryError({ delay: final.delay(scope.clock.now()) });
}
