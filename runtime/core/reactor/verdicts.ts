/**
 * What one processing cycle came to, for the operator's metrics (controller-runtime's reconcile).
 *
 * A processing cycle runs several handlers — on-event, indexing, change handlers, each possibly
 * retried — and may end with a sleep until the earliest delayed handler is due. Dashboards built
 * for controller-runtime want one verdict per cycle instead (`controller_runtime_reconcile_total`
 * by result, `…_reconcile_time_seconds`): so a cycle of an instrumented operator carries a
 * `CycleReport`. It stands between execution and the resource's instruments, passing every
 * handler's report on while remembering whether any handler failed (and whether for good); the
 * cycle tells it the delay it ends with, and it reports the cycle once, before any sleep, so that
 * the time measured is the work and not the waiting for delayed handlers.
 *
 * Without metrics there is no report at all: the cycle's `report` is `undefined`.
 */

import type * as instruments from '../../cogs/structs/instruments.js';

/** The verdict of one processing cycle, reported once (see the module's comment). */
export class CycleReport implements instruments.HandlerInstruments {
  private readonly since: number;
  private failed = false;
  private terminal = false;
  private delay: number | null = null;
  private done = false;

  constructor(private readonly target: instruments.ResourceInstruments) {
    this.since = target.now();
  }

  now(): number {
    return this.target.now();
  }

  /** Passes a handler's report on, and remembers failures other than temporary ones. */
  handled(handlerId: string, result: instruments.HandlerResult, retrying: boolean, since: number): void {
    this.target.handled(handlerId, result, retrying, since);
    if (result === 'permanent' || result === 'arbitrary') {
      this.failed = true;
      if (!retrying) this.terminal = true;
    }
  }

  /** The cycle itself has failed (an unexpected error, which throttles the object). */
  fail(): void {
    this.failed = true;
  }

  /** The object is to be processed again in `seconds` (the shortest delay of the cycle). */
  requeue(seconds: number): void {
    this.delay = seconds;
  }

  /** Reports the cycle, once: later calls do nothing. */
  finish(): void {
    if (this.done) return;
    this.done = true;
    const result: instruments.ReconcileResult = this.failed ? 'error' : this.delay === null ? 'success' : this.delay > 0 ? 'requeue_after' : 'requeue';
    this.target.reconciled(result, { terminal: this.terminal, requeued: this.delay !== null }, this.since);
  }
}
