import type * as resources from '../api/resources.js';
import * as fielderrors from '../meta/fielderrors.js';
import * as events from './events.js';
import * as strategies from './strategies.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
type FieldError = fielderrors.FieldError;

/** core/v1 name → events.k8s.io/v1 name, for the fields that differ. */
export const RENAMED: Readonly<Record<string, string>> = {
  involvedObject: 'regarding',
  message: 'note',
  reportingComponent: 'reportingController',
  source: 'deprecatedSource',
  firstTimestamp: 'deprecatedFirstTimestamp',
  lastTimestamp: 'deprecatedLastTimestamp',
  count: 'deprecatedCount',
};
const STORED_NAME: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(RENAMED).map(([k, v]) => [v, k]));

/** The events.k8s.io/v1 form of a stored Event. */
export function toEventsV1(stored: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(stored)) out[RENAMED[k] ?? k] = v;
  return out;
}

/**
 * The stored (core/v1) form of an events.k8s.io/v1 body. Core-only names sent to this API are
 * unknown fields there and are dropped.
 */
export function fromEventsV1(external: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(external)) {
    if (k in RENAMED) continue;
    out[STORED_NAME[k] ?? k] = v;
  }
  return { ...out, apiVersion: 'v1' };
}

const TYPES = new Set(['Normal', 'Warning']);
const unset = (field: string): FieldError => fielderrors.invalid(field, '', 'needs to be unset');

function seriesErrors(obj: JsonObject): FieldError[] {
  if (!json.isObject(obj['series'])) return [];
  const series = obj['series'];
  const errors: FieldError[] = [];
  const count = series['count'];
  if (typeof count !== 'number' || count < 2) errors.push(fielderrors.invalid('series.count', '', 'should be at least 2'));
  if (!strategies.stringOf(series, 'lastObservedTime')) errors.push(fielderrors.required('series.lastObservedTime'));
  return errors;
}

/** The create rules of events.k8s.io/v1 beyond the legacy ones, over the stored form. */
export function createErrors(obj: JsonObject): FieldError[] {
  const errors = seriesErrors(obj);
  if (!strategies.stringOf(obj, 'eventTime')) errors.push(fielderrors.required('eventTime'));
  const type = strategies.stringOf(obj, 'type');
  if (!TYPES.has(type)) errors.push(fielderrors.invalid('type', '', `has invalid value: ${type}`));
  if (strategies.stringOf(obj, 'firstTimestamp')) errors.push(unset('deprecatedFirstTimestamp'));
  if (strategies.stringOf(obj, 'lastTimestamp')) errors.push(unset('deprecatedLastTimestamp'));
  const count = obj['count'];
  if (count !== undefined && count !== null && count !== 0) errors.push(unset('deprecatedCount'));
  const source = strategies.mapOf(obj, 'source');
  if (strategies.stringOf(source, 'component') || strategies.stringOf(source, 'host')) errors.push(unset('deprecatedSource'));
  return errors;
}

const IMMUTABLE = [
  'involvedObject',
  'reason',
  'message',
  'source',
  'firstTimestamp',
  'lastTimestamp',
  'count',
  'type',
  'eventTime',
  'action',
  'related',
  'reportingComponent',
  'reportingInstance',
];

/** The update rules of events.k8s.io/v1: the identifying fields may not change, a changed series is checked. */
export function updateErrors(obj: JsonObject, old: JsonObject): FieldError[] {
  const errors = strategies.changed(obj['series'], old['series']) ? seriesErrors(obj) : [];
  for (const f of IMMUTABLE) {
    if (strategies.changed(obj[f], old[f]))
      errors.push(fielderrors.invalid(f === 'reportingComponent' ? 'reportingController' : f, obj[f] ?? null, 'field is immutable'));
  }
  return errors;
}

const regarding =
  (key: string) =>
  (o: JsonObject): string =>
    strategies.stringOf(strategies.mapOf(o, 'involvedObject'), key);

/** The events.k8s.io/v1 Event strategy; see the module comment. */
export const eventsV1Strategy: resources.Strategy = strategies.plainStrategy('Event', {
  putCreates: true,
  fieldSelectors: {
    ...events.eventFieldSelectors,
    'regarding.kind': regarding('kind'),
    'regarding.namespace': regarding('namespace'),
    'regarding.name': regarding('name'),
    'regarding.uid': regarding('uid'),
    'regarding.apiVersion': regarding('apiVersion'),
    'regarding.resourceVersion': regarding('resourceVersion'),
    'regarding.fieldPath': regarding('fieldPath'),
    reportingController: events.eventFieldSelectors['reportingComponent']!,
  },
  toExternal: toEventsV1,
  toStorage: fromEventsV1,
  prepareForCreate: (obj) => events.normalizeEventTimes(obj),
  prepareForUpdate: (obj) => events.normalizeEventTimes(obj),
  validate(obj, old) {
    const errors = events.validateLegacyEvent(obj, 'reportingController');
    errors.push(...(old ? updateErrors(obj, old) : createErrors(obj)));
    return errors;
  },
});
