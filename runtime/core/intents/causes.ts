/**
 * Causes: the high-level meaning of a watch-event for each handler family (R-CAUSE).
 *
 * The reactor turns every raw watch-event into up to three causes: a *watching* cause (on-event
 * handlers, indexers), a *spawning* cause (daemons and timers) and a *changing* cause (create,
 * update, delete, resume — or the internal `noop`, `free`, `gone`). Detection is pure: it takes the
 * event, the stored diff-base and the fresh essence (both built by `configs/diffbase`), and whether
 * the object is still *initial* (R-CAUSE-2), and decides the reason by the table of R-CAUSE-1.
 * Which handlers a cause selects is the registry's job (`registry.ts`).
 */

import type * as dicts from '../../cogs/structs/dicts.js';
import * as diffs from '../../cogs/structs/diffs.js';
import type * as bodies from '../../cogs/structs/bodies.js';
import type * as references from '../../cogs/structs/references.js';
import type * as callbacks from './callbacks.js';

/** All reasons of a changing cause. Kopf: `kopf.Reason`. */
export const Reason = Object.freeze({
  CREATE: 'create',
  UPDATE: 'update',
  DELETE: 'delete',
  RESUME: 'resume',
  NOOP: 'noop',
  FREE: 'free',
  GONE: 'gone',
} as const);
export type Reason = (typeof Reason)[keyof typeof Reason];

/** The reasons that invoke handlers. */
export const HANDLER_REASONS: readonly callbacks.ChangeReason[] = Object.freeze(['create', 'update', 'delete', 'resume']);

/** Whether a reason invokes handlers (as opposed to `noop`, `free`, `gone`). */
export function isHandlerReason(reason: Reason): reason is callbacks.ChangeReason {
  return (HANDLER_REASONS as readonly string[]).includes(reason);
}

/** Titles of the reasons in log messages (`Creation is processed: …`, R-HANDLERS-7/8). */
export const TITLES: Readonly<Record<callbacks.ChangeReason, string>> = Object.freeze({
  create: 'Creation',
  update: 'Updating',
  delete: 'Deletion',
  resume: 'Resuming',
});

/** The DEBUG lines of the reasons that invoke no handlers (R-CAUSE-1). */
export const SILENT_REASON_LOGS: Readonly<Record<'gone' | 'free' | 'noop', string>> = Object.freeze({
  gone: 'Deleted, really deleted, and we are notified.',
  free: 'Deletion, but we are done with it, and we do not care.',
  noop: 'Something has changed, but we are not interested (the essence is the same).',
});

/** Whether `metadata.deletionTimestamp` is set. */
export function isDeletionOngoing(body: bodies.RawBody): boolean {
  return Boolean(body.metadata?.deletionTimestamp);
}

/** Whether the operator's finalizer is among `metadata.finalizers`. */
export function hasFinalizer(body: bodies.RawBody, finalizer: string): boolean {
  const list = body.metadata?.finalizers;
  return Array.isArray(list) && list.includes(finalizer);
}

/** The changing cause of one watch-event. It is also a filter `Subject` (old/new essences). */
export interface ChangingCause {
  readonly reason: Reason;
  /** The object was first seen in the initial listing and is not yet fully handled once (R-CAUSE-2). */
  readonly initial: boolean;
  /** `deletionTimestamp` is set (resume handlers need `deleted: true` then). */
  readonly deleted: boolean;
  readonly resource: references.Resource;
  readonly event: bodies.RawEvent;
  readonly body: bodies.RawBody;
  /** The diff-base; `null` if none is stored. */
  readonly old: dicts.JsonObject | null;
  /** The current essence. */
  readonly new: dicts.JsonObject;
  /** The diff between `old` and `new` (empty when there is no diff-base). */
  readonly diff: diffs.Diff;
}

/** The inputs of `detectChangingCause()`. */
export interface ChangingInputs {
  readonly resource: references.Resource;
  readonly event: bodies.RawEvent;
  /** The operator's finalizer (`settings.persistence.finalizer`). */
  readonly finalizer: string;
  /** The stored diff-base, cleaned of storage traces; `null` if none. */
  readonly old: dicts.JsonObject | null;
  /** The current essence, cleaned of storage traces. */
  readonly new: dicts.JsonObject;
  /** Whether the object is initial (R-CAUSE-2); forced to `false` for `create`. */
  readonly initial: boolean;
  /** A precomputed diff between `old` and `new`; computed when omitted. */
  readonly diff?: diffs.Diff;
}

/**
 * Decides the changing cause by the first matching row of R-CAUSE-1:
 * `DELETED` → gone; deletion without our finalizer → free; deletion → delete (R-CAUSE-7: deletion
 * wins over changes); no diff-base → create (never initial); no diff and initial → resume;
 * no diff → noop; otherwise update.
 *
 * @example
 * detectChangingCause({ resource, event, finalizer, old: null, new: essence, initial: true }).reason // 'create'
 */
export function detectChangingCause(inputs: ChangingInputs): ChangingCause {
  const body = inputs.event.object;
  const diff = inputs.diff ?? (inputs.old === null ? diffs.EMPTY : diffs.diff(inputs.old, inputs.new));
  const deleted = isDeletionOngoing(body);
  const make = (reason: Reason, initial = inputs.initial): ChangingCause =>
    Object.freeze({
      reason,
      initial,
      deleted,
      resource: inputs.resource,
      event: inputs.event,
      body,
      old: inputs.old,
      new: inputs.new,
      diff,
    });
  if (inputs.event.type === 'DELETED') return make(Reason.GONE);
  if (deleted && !hasFinalizer(body, inputs.finalizer)) return make(Reason.FREE);
  if (deleted) return make(Reason.DELETE);
  if (inputs.old === null) return make(Reason.CREATE, false);
  if (diff.length === 0 && inputs.initial) return make(Reason.RESUME);
  if (diff.length === 0) return make(Reason.NOOP);
  return make(Reason.UPDATE);
}

/** The cause of on-event handlers and indexers: the event as it is (R-EVENT-1). */
export interface WatchingCause {
  readonly resource: references.Resource;
  readonly event: bodies.RawEvent;
  readonly type: bodies.RawEventType;
  readonly body: bodies.RawBody;
}

/** Wraps a raw event into a watching cause. */
export function detectWatchingCause(inputs: { readonly resource: references.Resource; readonly event: bodies.RawEvent }): WatchingCause {
  return Object.freeze({ resource: inputs.resource, event: inputs.event, type: inputs.event.type, body: inputs.event.object });
}

/** The cause of daemons and timers. */
export interface SpawningCause {
  readonly resource: references.Resource;
  readonly body: bodies.RawBody;
  /** `deletionTimestamp` is set or the object is gone: daemons must stop. */
  readonly deleted: boolean;
  /** The essence changed (resets the idle clock of timers, R-TIMER-3). */
  readonly reset: boolean;
}

/**
 * Builds the spawning cause. `reset` is whether the event is an essential change (the essence
 * differs from the stored diff-base, or there are no change handlers at all — R-TIMER-3).
 */
export function detectSpawningCause(inputs: {
  readonly resource: references.Resource;
  readonly event: bodies.RawEvent;
  readonly reset: boolean;
}): SpawningCause {
  const body = inputs.event.object;
  return Object.freeze({
    resource: inputs.resource,
    body,
    reset: inputs.reset,
    deleted: inputs.event.type === 'DELETED' || isDeletionOngoing(body),
  });
}
