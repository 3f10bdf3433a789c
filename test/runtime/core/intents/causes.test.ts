import { describe, expect, it } from 'vitest';
import type { RawBody, RawEventType } from '../../../../runtime/cogs/structs/bodies.js';
import type { JsonObject } from '../../../../runtime/cogs/structs/dicts.js';
import { makeResource } from '../../../../runtime/cogs/structs/references.js';
import * as causes from '../../../../runtime/core/intents/causes.js';

const FINALIZER = 'kopf.zalando.org/KopfFinalizerMarker';
const resource = makeResource({ group: 'kopf.dev', version: 'v1', plural: 'kopfexamples' });
const BASE: JsonObject = { spec: { field: 'value' } };
const CHANGED: JsonObject = { spec: { field: 'changed' } };

interface Row {
  type: RawEventType;
  deleting: boolean;
  finalized: boolean;
  old: JsonObject | null;
  now: JsonObject;
  initial: boolean;
  reason: causes.Reason;
}

function body(row: Pick<Row, 'deleting' | 'finalized'>): RawBody {
  return {
    metadata: {
      name: 'kex',
      uid: 'uid-1',
      ...(row.deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}),
      finalizers: row.finalized ? ['other/finalizer', FINALIZER] : ['other/finalizer'],
    },
    spec: {},
  };
}

describe('detectChangingCause', () => {
  // The decision table of R-CAUSE-1, one row per line, with combinations proving the row order.
  const table: Row[] = [
    { type: 'DELETED', deleting: true, finalized: true, old: BASE, now: CHANGED, initial: true, reason: 'gone' },
    { type: 'DELETED', deleting: false, finalized: false, old: null, now: BASE, initial: false, reason: 'gone' },
    { type: 'MODIFIED', deleting: true, finalized: false, old: BASE, now: CHANGED, initial: false, reason: 'free' },
    { type: null, deleting: true, finalized: false, old: null, now: BASE, initial: true, reason: 'free' },
    { type: 'MODIFIED', deleting: true, finalized: true, old: BASE, now: BASE, initial: false, reason: 'delete' },
    { type: 'MODIFIED', deleting: true, finalized: true, old: BASE, now: CHANGED, initial: false, reason: 'delete' },
    { type: null, deleting: true, finalized: true, old: BASE, now: CHANGED, initial: true, reason: 'delete' },
    { type: 'ADDED', deleting: false, finalized: false, old: null, now: BASE, initial: false, reason: 'create' },
    { type: null, deleting: false, finalized: true, old: null, now: BASE, initial: true, reason: 'create' },
    { type: null, deleting: false, finalized: true, old: BASE, now: BASE, initial: true, reason: 'resume' },
    { type: 'MODIFIED', deleting: false, finalized: true, old: BASE, now: BASE, initial: false, reason: 'noop' },
    { type: 'MODIFIED', deleting: false, finalized: true, old: BASE, now: CHANGED, initial: false, reason: 'update' },
    { type: null, deleting: false, finalized: true, old: BASE, now: CHANGED, initial: true, reason: 'update' },
  ];

  it.each(table)('R-CAUSE-1 $type, deleting=$deleting, finalized=$finalized, initial=$initial → $reason', (row) => {
    const cause = causes.detectChangingCause({
      resource,
      finalizer: FINALIZER,
      event: { type: row.type, object: body(row) },
      old: row.old,
      new: row.now,
      initial: row.initial,
    });
    expect(cause.reason).toBe(row.reason);
    expect(cause.body.metadata?.name).toBe('kex');
    expect(cause.deleted).toBe(row.deleting);
  });

  it('R-CAUSE-2 a create cause is never initial; other causes keep the flag', () => {
    const event = { type: null, object: body({ deleting: false, finalized: false }) } as const;
    expect(causes.detectChangingCause({ resource, finalizer: FINALIZER, event, old: null, new: BASE, initial: true }).initial).toBe(false);
    expect(causes.detectChangingCause({ resource, finalizer: FINALIZER, event, old: BASE, new: CHANGED, initial: true }).initial).toBe(true);
  });

  it('R-CAUSE-7 deletion wins over an essential change, and the diff is still computed', () => {
    const cause = causes.detectChangingCause({
      resource,
      finalizer: FINALIZER,
      event: { type: 'MODIFIED', object: body({ deleting: true, finalized: true }) },
      old: BASE,
      new: CHANGED,
      initial: false,
    });
    expect(cause.reason).toBe('delete');
    expect(cause.diff.map((item) => [...item])).toEqual([['change', ['spec', 'field'], 'value', 'changed']]);
  });

  it('uses a precomputed diff when given, and an empty diff without a diff-base', () => {
    const event = { type: 'MODIFIED', object: body({ deleting: false, finalized: true }) } as const;
    const created = causes.detectChangingCause({ resource, finalizer: FINALIZER, event, old: null, new: BASE, initial: false });
    expect(created.diff).toEqual([]);
    const forced = causes.detectChangingCause({ resource, finalizer: FINALIZER, event, old: BASE, new: BASE, initial: false, diff: [] });
    expect(forced.reason).toBe('noop');
  });

  it('knows which reasons invoke handlers, their titles and the silent log lines', () => {
    expect(Object.values(causes.Reason).filter(causes.isHandlerReason)).toEqual(['create', 'update', 'delete', 'resume']);
    expect(causes.TITLES).toEqual({ create: 'Creation', update: 'Updating', delete: 'Deletion', resume: 'Resuming' });
    expect(causes.SILENT_REASON_LOGS.noop).toBe('Something has changed, but we are not interested (the essence is the same).');
  });
});

describe('watching and spawning causes', () => {
  it('R-KWARGS-4 a watching cause keeps the event type, null for listings', () => {
    const object = body({ deleting: false, finalized: false });
    expect(causes.detectWatchingCause({ resource, event: { type: null, object } })).toMatchObject({ type: null, body: object });
    expect(causes.detectWatchingCause({ resource, event: { type: 'DELETED', object } }).type).toBe('DELETED');
  });

  it('a spawning cause is deleted on deletion marks and DELETED events', () => {
    const alive = body({ deleting: false, finalized: true });
    expect(causes.detectSpawningCause({ resource, event: { type: 'MODIFIED', object: alive }, reset: true })).toMatchObject({ deleted: false, reset: true });
    expect(causes.detectSpawningCause({ resource, event: { type: 'DELETED', object: alive }, reset: false }).deleted).toBe(true);
    expect(causes.detectSpawningCause({ resource, event: { type: null, object: body({ deleting: true, finalized: true }) }, reset: false }).deleted).toBe(true);
  });
});
