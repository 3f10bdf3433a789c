import { describe, expect, it } from 'vitest';
import * as fielderrors from '../../../devcluster/meta/fielderrors.js';
import * as eventsv1 from '../../../devcluster/builtins/eventsv1.js';
import { loose, testContext } from './contexts.js';

type Json = { [key: string]: any };
const rendered = (errors: fielderrors.FieldError[]): string[] => errors.map(fielderrors.renderError);

const stored: Json = {
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name: 'e', namespace: 'default' },
  involvedObject: { kind: 'Pod', name: 'p' },
  message: 'hello',
  reportingComponent: 'kubelet',
  source: { component: 'kubelet' },
  firstTimestamp: '2024-05-01T10:00:00Z',
  lastTimestamp: '2024-05-01T10:00:00Z',
  count: 2,
  eventTime: '2024-05-01T10:00:00.000000Z',
  action: 'Pull',
  reason: 'Pulled',
  type: 'Normal',
  reportingInstance: 'node-1',
};

/** A body as an events.k8s.io/v1 client sends it on create. */
const external = (extra: Json = {}): Json => ({
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata: { name: 'n', namespace: 'default' },
  eventTime: '2024-05-01T10:00:00Z',
  type: 'Warning',
  reason: 'Failed',
  action: 'Sync',
  note: 'x',
  reportingController: 'example.com/ctl',
  reportingInstance: 'ctl-1',
  regarding: { kind: 'Pod', name: 'p', namespace: 'default' },
  ...extra,
});

describe('events (events.k8s.io/v1)', () => {
  const s = loose(eventsv1.eventsV1Strategy);
  const ctx = testContext();
  const createErrors = (body: Json): string[] => {
    const obj = s.prepareForCreate!(s.toStorage!(body), ctx);
    return rendered(s.validate!(obj, undefined, ctx));
  };

  it('D-BI-4 the stored form is served with the renamed fields', () => {
    const out = eventsv1.toEventsV1(stored);
    expect(out).toEqual({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: stored['metadata'],
      regarding: { kind: 'Pod', name: 'p' },
      note: 'hello',
      reportingController: 'kubelet',
      deprecatedSource: { component: 'kubelet' },
      deprecatedFirstTimestamp: '2024-05-01T10:00:00Z',
      deprecatedLastTimestamp: '2024-05-01T10:00:00Z',
      deprecatedCount: 2,
      eventTime: '2024-05-01T10:00:00.000000Z',
      action: 'Pull',
      reason: 'Pulled',
      type: 'Normal',
      reportingInstance: 'node-1',
    });
  });

  it('D-BI-4 conversion round-trips, and core-only names sent to the new API are dropped', () => {
    expect(eventsv1.fromEventsV1(eventsv1.toEventsV1(stored))).toEqual(stored);
    const converted = eventsv1.fromEventsV1({ apiVersion: 'events.k8s.io/v1', note: 'n', message: 'ignored', involvedObject: { name: 'x' } });
    expect(converted).toEqual({ apiVersion: 'v1', message: 'n' });
  });

  it('D-BI-4 a complete body is valid', () => {
    expect(createErrors(external())).toEqual([]);
  });

  it('D-BI-4 create requires eventTime and a Normal or Warning type', () => {
    expect(createErrors(external({ eventTime: undefined }))).toEqual(['eventTime: Required value']);
    expect(createErrors(external({ type: 'Odd' }))).toEqual(['type: Invalid value: "": has invalid value: Odd']);
  });

  it('D-BI-4 create refuses the deprecated fields', () => {
    expect(
      createErrors(
        external({
          deprecatedFirstTimestamp: '2024-05-01T10:00:00Z',
          deprecatedLastTimestamp: '2024-05-01T10:00:00Z',
          deprecatedCount: 1,
          deprecatedSource: { host: 'h' },
        }),
      ),
    ).toEqual([
      'deprecatedFirstTimestamp: Invalid value: "": needs to be unset',
      'deprecatedLastTimestamp: Invalid value: "": needs to be unset',
      'deprecatedCount: Invalid value: "": needs to be unset',
      'deprecatedSource: Invalid value: "": needs to be unset',
    ]);
  });

  it('D-BI-4 a series needs a count of at least 2 and lastObservedTime', () => {
    expect(createErrors(external({ series: { count: 1 } }))).toEqual([
      'series.count: Invalid value: "": should be at least 2',
      'series.lastObservedTime: Required value',
    ]);
    expect(createErrors(external({ series: { count: 2, lastObservedTime: '2024-05-01T10:00:00Z' } }))).toEqual([]);
  });

  it('D-BI-4 the legacy rules name the reporting controller by its new name', () => {
    expect(createErrors(external({ reportingController: undefined }))[0]).toBe('reportingController: Required value');
  });

  it('D-BI-4 updates may not change identifying fields', () => {
    const old = s.prepareForCreate!(s.toStorage!(external()), ctx);
    const changed = s.prepareForUpdate!(s.toStorage!(external({ note: 'other', reason: 'Else' })), old, ctx);
    expect(rendered(s.validate!(changed, old, ctx))).toEqual([
      'reason: Invalid value: "Else": field is immutable',
      'message: Invalid value: "other": field is immutable',
    ]);
    const series = s.prepareForUpdate!(s.toStorage!(external({ series: { count: 2, lastObservedTime: '2024-05-01T10:00:05Z' } })), old, ctx);
    expect(s.validate!(series, old, ctx)).toEqual([]);
  });

  it('D-BI-4 the same field selectors work, with the new names as aliases', () => {
    expect(s.fieldSelectors!['regarding.name']!(stored)).toBe('p');
    expect(s.fieldSelectors!['involvedObject.name']!(stored)).toBe('p');
    expect(s.fieldSelectors!['reportingController']!(stored)).toBe('kubelet');
  });
});
