/**
 * The work queue of reconcile handlers (R-RECONCILE-204..206, -212, -213, -215): one entry per
 * (handler, object), with a dirty flag, an in-flight flag and at most one scheduled wake-up.
 *
 * Reconcile handlers are level-based: what a trigger says is only "look again". So a trigger marks
 * the entry dirty, and a call starts if none is in flight; triggers during a call leave it dirty,
 * which makes exactly one more call after it; a burst of triggers before a call starts makes one
 * call. A call's verdict decides what comes next: nothing, a requeue after its delay, a retry after
 * a TemporaryError's delay or the back-off (`ratelimits`), or nothing after a permanent failure —
 * all wake-ups on the operator's shared `Scheduler`; any trigger before one is due replaces it.
 *
 * Before each call the entry passes the gate (pause, the readiness barrier, the caches synced),
 * which the reactor provides; what a call does is the caller's too (`reconciliation`). An entry
 * with nothing queued, running or scheduled is dropped, so nothing is kept for objects at rest or
 * gone. `stop()` starts nothing more and waits for the calls in flight.
 */

import type * as loggers from '../../cogs/structs/loggers.js';
import type * as references from '../../cogs/structs/references.js';
import type * as handlers from '../intents/handlers.js';
import * as ratelimits from './ratelimits.js';
import type * as scheduling from './scheduling.js';

/** One object of one reconcile handler. */
export interface Target {
  readonly handler: handlers.ReconcileHandler;
  readonly resource: references.Resource;
  readonly namespace: string | null;
  readonly name: string;
}

/** What one call came to. Delays in seconds. */
export type Verdict =
  | { readonly kind: 'done' }
  | { readonly kind: 'requeue'; readonly after: number }
  /** A failure to retry: after `after` seconds, or (`null`) after the back-off. */
  | { readonly kind: 'retry'; readonly after: number | null }
  /** A failure not to retry until the next trigger. */
  | { readonly kind: 'permanent' }
  /** The object is gone (or not to be reconciled): forget it. */
  | { readonly kind: 'gone' };

/** What the queue needs from its owner. */
export interface WorkOptions {
  readonly scheduler: scheduling.Scheduler;
  /** Milliseconds since the epoch, as the scheduler's clock. */
  readonly now: () => number;
  /** Resolves when a call of `target` may start (not paused, ready, synced); rejects on stop. */
  readonly gate: (target: Target, signal: AbortSignal) => Promise<void>;
  /**
   * One call; `retry` is the number of consecutive failures before it. Never rejects. Resolves
   * with the verdict and the resource versions the call's own writes gave the object.
   */
  readonly call: (target: Target, retry: number, signal: AbortSignal) => Promise<{ readonly verdict: Verdict; readonly written: ReadonlySet<string> }>;
  readonly logger: loggers.Logger;
  /** The random source of the back-off's jitter. */
  readonly random?: ratelimits.Random;
}

interface Entry {
  readonly target: Target;
  readonly id: string;
  dirty: boolean;
  running: Promise<void> | null;
  failures: number;
  cancel: (() => void) | null;
  /** Versions of the object seen from the watch during the call: a trigger unless its own writes made them. */
  noted: Set<string> | null;
}

const idOf = (handler: handlers.ReconcileHandler, resource: references.Resource, namespace: string | null, name: string): string =>
  `${handler.id}\u0000${resource.group}/${resource.version}/${resource.plural}\u0000${namespace ?? ''}/${name}`;

const objectIdOf = (resource: references.Resource, namespace: string | null, name: string): string =>
  `${resource.group}/${resource.version}/${resource.plural}\u0000${namespace ?? ''}/${name}`;

/** The per-(handler, object) work of all reconcile handlers of one operator. */
export class WorkQueue {
  readonly #options: WorkOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #stopping = new AbortController();
  /** Objects held back (`hold`): no call of them starts. */
  readonly #held = new Set<string>();

  constructor(options: WorkOptions) {
    this.#options = options;
  }

  /** Entries queued, running or scheduled (the census' `reconciling`, R-RECONCILE-215). */
  get size(): number {
    return this.#entries.size;
  }

  /** The signal of every call: aborted by `stop()`. */
  get signal(): AbortSignal {
    return this.#stopping.signal;
  }

  /** Look again at an object: a call now, or one more after the one in flight. */
  trigger(handler: handlers.ReconcileHandler, resource: references.Resource, namespace: string | null, name: string): void {
    if (this.#stopping.signal.aborted) return;
    if (this.#held.size > 0 && this.#held.has(objectIdOf(resource, namespace, name))) return;
    const id = idOf(handler, resource, namespace, name);
    let entry = this.#entries.get(id);
    if (entry === undefined) {
      entry = { target: { handler, resource, namespace, name }, id, dirty: false, running: null, failures: 0, cancel: null, noted: null };
      this.#entries.set(id, entry);
    }
    entry.dirty = true;
    if (entry.running === null) entry.running = this.#run(entry);
  }

  /**
   * The watch shows a new version of the object: a trigger, except while a call of it runs — then
   * it counts only if that call's own writes did not make it (their echo may beat their response).
   */
  observed(handler: handlers.ReconcileHandler, resource: references.Resource, namespace: string | null, name: string, version: string | undefined): void {
    const entry = this.#entries.get(idOf(handler, resource, namespace, name));
    if (entry !== undefined && entry.noted !== null && version !== undefined) entry.noted.add(version);
    else this.trigger(handler, resource, namespace, name);
  }

  /**
   * Holds one object back (a sharded replica handing it over, R-SHARD-203): its scheduled wake-ups
   * are cancelled, no new call of any handler starts for it until `unhold`, and the result resolves
   * once the calls of it in flight have ended (their signal is not aborted: they finish).
   */
  async hold(resource: references.Resource, namespace: string | null, name: string): Promise<void> {
    const object = objectIdOf(resource, namespace, name);
    this.#held.add(object);
    const running: Promise<void>[] = [];
    for (const entry of this.#entries.values()) {
      if (objectIdOf(entry.target.resource, entry.target.namespace, entry.target.name) !== object) continue;
      entry.dirty = false;
      entry.cancel?.();
      entry.cancel = null;
      if (entry.running) running.push(entry.running);
      else this.#entries.delete(entry.id);
    }
    await Promise.allSettled(running);
  }

  /** Lets calls of a held object start again (on their next trigger). */
  unhold(resource: references.Resource, namespace: string | null, name: string): void {
    this.#held.delete(objectIdOf(resource, namespace, name));
  }

  /** Starts nothing more, aborts the calls' signal, and waits for the calls in flight to end. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    const running = [...this.#entries.values()].flatMap((entry) => (entry.running ? [entry.running] : []));
    for (const entry of this.#entries.values()) entry.cancel?.();
    await Promise.allSettled(running);
    this.#entries.clear();
  }

  async #run(entry: Entry): Promise<void> {
    const signal = this.#stopping.signal;
    try {
      while (entry.dirty && !signal.aborted) {
        await this.#options.gate(entry.target, signal);
        if (signal.aborted) break;
        if (this.#isHeld(entry.target)) {
          entry.dirty = false; // handed over: the next trigger after `unhold` calls again
          break;
        }
        entry.dirty = false;
        entry.cancel?.();
        entry.cancel = null;
        entry.noted = new Set();
        const { verdict, written } = await this.#options.call(entry.target, entry.failures, signal);
        for (const version of entry.noted) if (!written.has(version)) entry.dirty = true;
        entry.noted = null;
        this.#settle(entry, verdict);
      }
    } catch (error) {
      if (!signal.aborted) this.#options.logger.error(`Reconciling has failed unexpectedly for ${entry.target.name}.`, { error });
    } finally {
      entry.noted = null;
      entry.running = null;
      if (!entry.dirty && entry.cancel === null && this.#entries.get(entry.id) === entry) this.#entries.delete(entry.id);
    }
  }

  #isHeld(target: Target): boolean {
    return this.#held.size > 0 && this.#held.has(objectIdOf(target.resource, target.namespace, target.name));
  }

  #settle(entry: Entry, verdict: Verdict): void {
    switch (verdict.kind) {
      case 'done':
        entry.failures = 0;
        return;
      case 'gone':
        entry.failures = 0;
        return;
      case 'permanent':
        entry.failures++;
        return;
      case 'requeue':
        entry.failures = 0;
        this.#wakeAfter(entry, verdict.after);
        return;
      case 'retry': {
        entry.failures++;
        const after = verdict.after ?? ratelimits.failureDelay(entry.target.handler.backoff, entry.failures, this.#options.random);
        this.#wakeAfter(entry, after);
        return;
      }
    }
  }

  #wakeAfter(entry: Entry, seconds: number): void {
    if (this.#isHeld(entry.target)) return;
    entry.cancel = this.#options.scheduler.schedule(this.#options.now() + seconds * 1000, () => {
      entry.cancel = null;
      if (this.#entries.get(entry.id) !== entry) return;
      entry.dirty = true;
      if (entry.running === null) entry.running = this.#run(entry);
    });
  }
}
