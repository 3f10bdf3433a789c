/**
 * Progress of one change across processing cycles: pure state transitions (R-HANDLERS-4..7) and
 * their persistence as progress records (R-STORAGE-4/8/9/14).
 *
 * A change (a creation, an update, …) may need several cycles: handlers run one per cycle, fail
 * and retry later, or wait for sub-handlers. `HandlerState` is what is known about one handler for
 * the current change (started, retries, delayed, finished…); `State` is the map of them for all
 * change handlers of the object. Both are immutable values: every transition returns a new one.
 *
 * One cycle goes: `State.fromStorage()` (records on the body) → `withPurpose(reason)` →
 * `withHandlers(selected)` (marks the selected handlers *active*, creating fresh records for new
 * ones) → `execution` runs the lifecycle's choice → `withOutcomes()` → `store()` (only changed
 * records) and `outcomes.deliverResults()` → when `done`, `purge()` all records. Handlers that are loaded
 * but not selected in this cycle are *inactive*: they are kept and purged, but they neither block
 * the change nor count in its totals.
 *
 * Time is a number of milliseconds since the epoch, as the injected `Clock.now()` gives it (never
 * the wall clock, so tests run on virtual time), and
 * every transition that needs "now" takes it explicitly; records carry Kopf's timestamp format
 * (`timestamps`). The `Outcome` values that `execution` returns per handler are in `outcomes`.
 */

import * as progress from '../../cogs/configs/progress.js';
import * as timestamps from '../../cogs/configs/timestamps.js';
import * as dicts from '../../cogs/structs/dicts.js';
import type * as patches from '../../cogs/structs/patches.js';
import * as errors from './errors.js';
import type * as outcomes from './outcomes.js';

/** Counters of a change's active handlers. */
export interface StateCounters {
  readonly success: number;
  readonly failure: number;
  readonly running: number;
}

interface HandlerStateFields {
  readonly active: boolean;
  readonly purpose: string | null;
  readonly started: number;
  readonly stopped: number | null;
  readonly delayed: number | null;
  readonly retries: number;
  readonly success: boolean;
  readonly failure: boolean;
  readonly message: string | null;
  readonly subrefs: readonly string[];
  readonly origin: progress.ProgressRecord | null;
}

/** What is known about one handler for the change being handled. Immutable. */
export class HandlerState implements HandlerStateFields {
  /** Selected in this cycle (counts for `done`, `counts`, `delays`); loaded-only states are not. */
  readonly active: boolean;
  /** `create`/`update`/`delete`/`resume`: the cause this record was created for. */
  readonly purpose: string | null;
  /** First invocation for this change (ms since the epoch). */
  readonly started: number;
  readonly stopped: number | null;
  /** Not to be invoked before this moment (ms since the epoch). */
  readonly delayed: number | null;
  /** Invocations so far. */
  readonly retries: number;
  readonly success: boolean;
  readonly failure: boolean;
  /** The message of the last error. */
  readonly message: string | null;
  /** Sorted ids of all sub-handlers (any depth). */
  readonly subrefs: readonly string[];
  /** The record as loaded from the object (`null` for fresh states): only changes are written. */
  readonly origin: progress.ProgressRecord | null;

  private constructor(fields: HandlerStateFields) {
    this.active = fields.active;
    this.purpose = fields.purpose;
    this.started = fields.started;
    this.stopped = fields.stopped;
    this.delayed = fields.delayed;
    this.retries = fields.retries;
    this.success = fields.success;
    this.failure = fields.failure;
    this.message = fields.message;
    this.subrefs = Object.freeze([...fields.subrefs]);
    this.origin = fields.origin;
    Object.freeze(this);
  }

  /** A fresh, active state of a handler selected for the first time in this change. */
  static fromScratch(options: { readonly now: number; readonly purpose?: string | null }): HandlerState {
    return new HandlerState({
      active: true,
      purpose: options.purpose ?? null,
      started: options.now,
      stopped: null,
      delayed: null,
      retries: 0,
      success: false,
      failure: false,
      message: null,
      subrefs: [],
      origin: null,
    });
  }

  /**
   * The (inactive) state of a persisted record. Unparseable or absent `started` means `now`
   * (R-STORAGE-5); absent counters mean zero/false.
   */
  static fromStorage(record: progress.ProgressRecord, options: { readonly now: number }): HandlerState {
    return new HandlerState({
      active: false,
      purpose: record.purpose ? String(record.purpose) : null,
      started: timestamps.parseTimestamp(record.started) ?? options.now,
      stopped: timestamps.parseTimestamp(record.stopped) ?? null,
      delayed: timestamps.parseTimestamp(record.delayed) ?? null,
      retries: typeof record.retries === 'number' ? record.retries : 0,
      success: record.success === true,
      failure: record.failure === true,
      message: typeof record.message === 'string' ? record.message : null,
      subrefs: Array.isArray(record.subrefs) ? record.subrefs.map(String) : [],
      origin: record,
    });
  }

  private with(changes: Partial<HandlerStateFields>): HandlerState {
    return new HandlerState({ ...this, ...changes });
  }

  /** The record to persist, with every key (nulls for absent values; subrefs sorted). */
  forStorage(): progress.ProgressRecord {
    return {
      started: timestamps.formatTimestamp(this.started),
      stopped: this.stopped === null ? null : timestamps.formatTimestamp(this.stopped),
      delayed: this.delayed === null ? null : timestamps.formatTimestamp(this.delayed),
      purpose: this.purpose,
      retries: this.retries,
      success: this.success,
      failure: this.failure,
      message: this.message,
      subrefs: this.subrefs.length > 0 ? [...this.subrefs].sort() : null,
    };
  }

  /** The record as it would look on the object (nulls dropped), for comparisons (R-STORAGE-9). */
  asInStorage(): progress.ProgressRecord {
    return progress.cleanRecord(this.forStorage());
  }

  /** The same state, selected for this cycle. */
  asActive(): HandlerState {
    return this.active ? this : this.with({ active: true });
  }

  /** The same state, re-purposed (e.g. a resume handler mixed into an update). */
  withPurpose(purpose: string | null): HandlerState {
    return this.with({ purpose });
  }

  /**
   * The state after one invocation: `retries + 1`; finished (`stopped`, `success`/`failure`) if
   * the outcome is final; `delayed = now + delay` if it has a delay; the error's message; subrefs
   * merged and sorted.
   */
  withOutcome(outcome: outcomes.Outcome, now: number): HandlerState {
    const failed = outcome.error !== undefined;
    const delay = outcome.delay;
    return this.with({
      stopped: this.stopped ?? (outcome.final ? now : null),
      delayed: delay === null || delay === undefined ? null : now + delay * 1000,
      success: outcome.final && !failed,
      failure: outcome.final && failed,
      retries: this.retries + 1,
      // Kopf's `str(e)`: `'None'` for a TemporaryError without a message, e.g. a parent waiting on sub-handlers.
      message: failed ? errors.errorMessage(outcome.error) : null,
      subrefs: [...new Set([...this.subrefs, ...(outcome.subrefs ?? [])])].sort(),
    });
  }

  /** Succeeded or failed for good. */
  get finished(): boolean {
    return this.success || this.failure;
  }

  /** Not finished, and delayed into the future. */
  isSleeping(now: number): boolean {
    return !this.finished && this.delayed !== null && this.delayed > now;
  }

  /** Not finished and not sleeping: may be invoked now (R-HANDLERS-4). */
  isAwakened(now: number): boolean {
    return !this.finished && !this.isSleeping(now);
  }

  /** Seconds since `started` (includes operator downtime, R-ERRORS-5). */
  runtime(now: number): number {
    return (now - this.started) / 1000;
  }
}

/** The progress of all change handlers of one object for the current change. Immutable. */
export class State {
  /** The cause being handled (`create`/`update`/…), if known. */
  readonly purpose: string | null;
  private readonly states: ReadonlyMap<string, HandlerState>;

  private constructor(states: Iterable<readonly [string, HandlerState]>, purpose: string | null = null) {
    this.states = new Map(states);
    this.purpose = purpose;
    Object.freeze(this);
  }

  /** An empty state. */
  static fromScratch(): State {
    return new State([]);
  }

  /** A state made of handler states (tests and embedders). */
  static of(states: Record<string, HandlerState> | Iterable<readonly [string, HandlerState]>, purpose: string | null = null): State {
    return new State(Symbol.iterator in states ? (states as Iterable<readonly [string, HandlerState]>) : Object.entries(states), purpose);
  }

  /** Loads the records of the given handler ids from the body (inactive states). */
  static async fromStorage(options: {
    readonly body: unknown;
    readonly storage: progress.ProgressStorage;
    readonly handlerIds: Iterable<string>;
    readonly now: number;
  }): Promise<State> {
    const states: Array<[string, HandlerState]> = [];
    for (const id of new Set(options.handlerIds)) {
      const record = await options.storage.fetch({ key: id, body: options.body });
      if (record !== null && record !== undefined) states.push([id, HandlerState.fromStorage(record, { now: options.now })]);
    }
    return new State(states);
  }

  /** Whether there is a state for a handler id. */
  has(id: string): boolean {
    return this.states.has(id);
  }

  /** The state of a handler id; throws for unknown ids. */
  get(id: string): HandlerState {
    const state = this.states.get(id);
    if (state === undefined) throw new RangeError(`No progress state for the handler '${id}'.`);
    return state;
  }

  /** The handler ids, in insertion order. */
  get ids(): string[] {
    return [...this.states.keys()];
  }

  /** `[id, state]` pairs, in insertion order. */
  entries(): Array<[string, HandlerState]> {
    return [...this.states.entries()];
  }

  /**
   * Sets the purpose of the state (the cause of this cycle); with `handlerIds`, also re-purposes
   * those handlers' states (a mixed-in cause taken over by the current one).
   */
  withPurpose(purpose: string | null, handlerIds?: Iterable<string>): State {
    const states = new Map(this.states);
    for (const id of handlerIds ?? []) {
      const state = states.get(id);
      if (state !== undefined) states.set(id, state.withPurpose(purpose));
    }
    return new State(states, purpose);
  }

  /** Marks the selected handlers as active, creating fresh states (`started = now`) for new ones. */
  withHandlers(handlerIds: Iterable<string>, now: number): State {
    const states = new Map(this.states);
    for (const id of handlerIds) {
      const state = states.get(id);
      states.set(id, state === undefined ? HandlerState.fromScratch({ now, purpose: this.purpose }) : state.asActive());
    }
    return new State(states, this.purpose);
  }

  /** Applies outcomes of invoked handlers; outcomes for unknown ids are a programming error. */
  withOutcomes(results: ReadonlyMap<string, outcomes.Outcome>, now: number): State {
    const unknown = [...results.keys()].filter((id) => !this.states.has(id));
    if (unknown.length > 0) throw new RangeError(`Unexpected outcomes for unknown handlers: ${unknown.join(', ')}`);
    const states = new Map<string, HandlerState>();
    for (const [id, state] of this.states) {
      const outcome = results.get(id);
      states.set(id, outcome === undefined ? state : state.withOutcome(outcome, now));
    }
    return new State(states, this.purpose);
  }

  /** The same state without succeeded handlers. */
  withoutSuccesses(): State {
    return new State(
      [...this.states].filter(([, state]) => !state.success),
      this.purpose,
    );
  }

  private get activeStates(): HandlerState[] {
    return [...this.states.values()].filter((state) => state.active);
  }

  /** All active handlers are finished (also when there are none): the change is done (R-HANDLERS-7). */
  get done(): boolean {
    return this.activeStates.every((state) => state.finished);
  }

  /** Succeeded / failed / unfinished active handlers. */
  get counts(): StateCounters {
    const active = this.activeStates;
    return {
      success: active.filter((state) => state.success).length,
      failure: active.filter((state) => state.failure).length,
      running: active.filter((state) => !state.finished).length,
    };
  }

  /**
   * Counters per purpose of states created for another cause than the current one (e.g. a resume
   * superseded by an update), for the "is superseded by" log of the reactor.
   */
  get extras(): ReadonlyMap<string, StateCounters> {
    const extras = new Map<string, StateCounters>();
    if (this.purpose === null) return extras;
    const all = [...this.states.values()];
    for (const purpose of new Set(all.map((state) => state.purpose))) {
      if (purpose === null || purpose === this.purpose) continue;
      const mine = all.filter((state) => state.purpose === purpose);
      extras.set(purpose, {
        success: mine.filter((state) => state.success).length,
        failure: mine.filter((state) => state.failure).length,
        running: mine.filter((state) => !state.finished).length,
      });
    }
    return extras;
  }

  /** Seconds until each unfinished active handler may run (0 for awakened ones). */
  delays(now: number): number[] {
    return this.activeStates.filter((state) => !state.finished).map((state) => (state.delayed === null ? 0 : Math.max(0, (state.delayed - now) / 1000)));
  }

  /** The shortest of `delays(now)`, or `null` if there are none. */
  delay(now: number): number | null {
    const delays = this.delays(now);
    return delays.length === 0 ? null : Math.min(...delays);
  }

  /** Writes the records that differ from what was loaded (R-STORAGE-9) into the patch. */
  async store(options: { readonly body: unknown; readonly patch: patches.PatchBase<object>; readonly storage: progress.ProgressStorage }): Promise<void> {
    for (const [id, state] of this.states) {
      if (state.origin !== null && dicts.deepEqual(state.asInStorage(), state.origin)) continue;
      await options.storage.store({ key: id, record: state.forStorage(), body: options.body, patch: options.patch });
    }
    await options.storage.flush();
  }

  /**
   * Purges the records of this operator's handlers (R-STORAGE-8): the given handler ids, every id
   * in this state, and every sub-handler id in their `subrefs` — in that order, each once. Records
   * of other ids (e.g. of other operators sharing the prefix) are left untouched.
   */
  async purge(options: {
    readonly body: unknown;
    readonly patch: patches.PatchBase<object>;
    readonly storage: progress.ProgressStorage;
    readonly handlerIds: Iterable<string>;
  }): Promise<void> {
    const ids = new Set<string>(options.handlerIds);
    for (const id of this.states.keys()) ids.add(id);
    for (const state of this.states.values()) for (const subref of state.subrefs) ids.add(subref);
    for (const id of ids) await options.storage.purge({ key: id, body: options.body, patch: options.patch });
    await options.storage.flush();
  }

  /**
   * Persists the state at the end of a cycle: when the change is `done`, purges every record (a
   * record created and finished in the same cycle is then never sent); otherwise stores the
   * changed ones. This gives the merge-patches of trace 4.3, with the keys in registration order.
   */
  async persist(options: {
    readonly body: unknown;
    readonly patch: patches.PatchBase<object>;
    readonly storage: progress.ProgressStorage;
    readonly handlerIds: Iterable<string>;
  }): Promise<void> {
    if (this.done) await this.purge(options);
    else await this.store(options);
  }
}
