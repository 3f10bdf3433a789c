import { describe, expect, it } from 'vitest';
import * as fielderrors from '../../../devcluster/meta/fielderrors.js';
import * as events from '../../../devcluster/builtins/events.js';
import * as statuses from '../../../devcluster/server/statuses.js';
import { loose, testContext } from './contexts.js';

type Json = { [key: string]: any };
const rendered = (errors: fielderrors.FieldError[]): string[] => errors.map(fielderrors.renderError);

/** A new-style Event (with eventTime), as Kopf posts it. */
const modern = (extra: Json = {}, namespace = 'default'): Json => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name: 'e', namespace },
  eventTime: '2024-05-01T10:00:00.123456+00:00',
  action: 'Act',
  reason: 'Why',
  message: 'm',
  type: 'Normal',
  reportingComponent: 'kopf',
  reportingInstance: 'dev',
  involvedObject: { kind: 'Widget', name: 'w1', namespace },
  ...extra,
});
/** An old-style Event (no eventTime). */
const legacy = (involvedNamespace: string | undefined, namespace = 'default'): Json => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name: 'e', namespace },
  reason: 'Why',
  message: 'm',
  involvedObject: { kind: 'Pod', name: 'p', ...(involvedNamespace === undefined ? {} : { namespace: involvedNamespace }) },
});

describe('events (core/v1)', () => {
  const s = loose(events.eventStrategy);
  const ctx = testContext();
  const check = (obj: Json): string[] => rendered(s.validate!(s.prepareForCreate!(obj, ctx), undefined, ctx));

  it('D-BI-3 a Kopf-shaped event is valid and its times are normalised', () => {
    const out = s.prepareForCreate!(
      modern({
        firstTimestamp: '2024-05-01T12:00:00.9+02:00',
        lastTimestamp: '2024-05-01T10:00:01Z',
        series: { count: 2, lastObservedTime: '2024-05-01T10:00:02.5Z' },
      }),
      ctx,
    );
    expect(out).toMatchObject({
      eventTime: '2024-05-01T10:00:00.123456Z',
      firstTimestamp: '2024-05-01T10:00:00Z',
      lastTimestamp: '2024-05-01T10:00:01Z',
      series: { count: 2, lastObservedTime: '2024-05-01T10:00:02.500000Z' },
    });
    expect(s.validate!(out, undefined, ctx)).toEqual([]);
  });

  it('D-BI-3 with eventTime, reporting fields, action and reason are required', () => {
    expect(check(modern({ action: undefined }))).toEqual(['action: Required value']);
    expect(check(modern({ reason: '', reportingInstance: undefined }))).toEqual(['reportingInstance: Required value', 'reason: Required value']);
    expect(check(modern({ reportingComponent: undefined }))).toEqual([
      'reportingComponent: Required value',
      'reportingComponent: Invalid value: "": name part must be non-empty',
      expect.stringMatching(/^reportingComponent: Invalid value: "": name part must consist of/),
    ]);
    expect(check(modern({ reportingComponent: 'not valid!' }))).toEqual([
      expect.stringMatching(/^reportingComponent: Invalid value: "not valid!": name part must consist of/),
    ]);
  });

  it('D-BI-3 with eventTime, lengths are limited', () => {
    expect(check(modern({ message: 'x'.repeat(1025) }))).toEqual(['message: Invalid value: "": can have at most 1024 characters']);
    expect(check(modern({ message: 'x'.repeat(1024) }))).toEqual([]);
    expect(check(modern({ action: 'a'.repeat(129), reason: 'r'.repeat(129), reportingInstance: 'i'.repeat(129) }))).toEqual([
      'reportingInstance: Invalid value: "": can have at most 128 characters',
      'action: Invalid value: "": can have at most 128 characters',
      'reason: Invalid value: "": can have at most 128 characters',
    ]);
  });

  it('D-BI-3 with eventTime, an empty involvedObject namespace needs the default or kube-system namespace', () => {
    const unnamespaced = (ns: string): Json => modern({ involvedObject: { kind: 'Node', name: 'n' } }, ns);
    expect(check(unnamespaced('default'))).toEqual([]);
    expect(check(unnamespaced('kube-system'))).toEqual([]);
    expect(check(unnamespaced('team'))).toEqual(['involvedObject.namespace: Invalid value: "": does not match event.namespace']);
  });

  it('D-BI-3 without eventTime, the involved namespace must equal the event namespace', () => {
    expect(check(legacy('default'))).toEqual([]);
    expect(check(legacy(undefined))).toEqual([]);
    expect(check(legacy(undefined, 'team'))).toEqual(['involvedObject.namespace: Invalid value: "": does not match event.namespace']);
    expect(check(legacy('a'))).toEqual(['involvedObject.namespace: Invalid value: "a": does not match event.namespace']);
  });

  it('D-WIRE-19 an unparsable event time is 400', () => {
    expect(() => s.prepareForCreate!(modern({ eventTime: 'soon' }), ctx)).toThrow(statuses.ApiError);
  });

  it('D-BI-1 the event field selectors read the involved object, reason, source, type', () => {
    const e = modern({
      source: { component: 'kubelet' },
      involvedObject: { kind: 'Pod', namespace: 'default', name: 'p', uid: 'u', apiVersion: 'v1', resourceVersion: '5', fieldPath: 'spec' },
    });
    const values = Object.fromEntries(Object.entries(events.eventFieldSelectors).map(([k, f]) => [k, f(e)]));
    expect(values).toEqual({
      'involvedObject.kind': 'Pod',
      'involvedObject.namespace': 'default',
      'involvedObject.name': 'p',
      'involvedObject.uid': 'u',
      'involvedObject.apiVersion': 'v1',
      'involvedObject.resourceVersion': '5',
      'involvedObject.fieldPath': 'spec',
      reason: 'Why',
      reportingComponent: 'kopf',
      source: 'kubelet',
      type: 'Normal',
    });
  });

  it('D-VERB-15 PUT creates events; events keep no generation', () => {
    expect(s.putCreates).toBe(true);
    expect(s.requireResourceVersion).toBe(false);
    expect(s.generation).toBeUndefined();
  });
});
