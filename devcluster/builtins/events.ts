/**
 * core/v1 Events (D-BI-3): stored as given, with their time fields normalised (D-WIRE-19:
 * `firstTimestamp`/`lastTimestamp` are Times, `eventTime` and `series.lastObservedTime`
 * MicroTimes), validated by upstream's "legacy" rules (which differ for events with and without
 * `eventTime`), and selectable by the fields of D-BI-1. PUT creates a missing Event (D-VERB-15).
 *
 * The same stored objects are served as events.k8s.io/v1 by eventsv1.ts, which converts field
 * names and adds that API's create rules; the stored form is always the core/v1 one.
 */
import * as objects from '../api/objects.js';
import type * as resources from '../api/resources.js';
import * as fielderrors from '../meta/fielderrors.js';
import * as names from '../meta/names.js';
import * as strategies from './strategies.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
type FieldError = fielderrors.FieldError;

export const REPORTING_INSTANCE_MAX = 128;
export const ACTION_MAX = 128;
export const REASON_MAX = 128;
export const NOTE_MAX = 1024;

/** Returns a copy with the time fields normalised; an unparsable time → 400. */
export function normalizeEventTimes(obj: JsonObject): JsonObject {
  let out = strategies.normalizeTimeAt(obj, ['firstTimestamp'], false, 'Event');
  out = strategies.normalizeTimeAt(out, ['lastTimestamp'], false, 'Event');
  out = strategies.normalizeTimeAt(out, ['eventTime'], true, 'Event');
  if (json.isObject(out['series'])) out = strategies.normalizeTimeAt(out, ['series', 'lastObservedTime'], true, 'Event');
  strategies.requireIntegers(out, ['count', 'series.count'], 'Event');
  return out;
}

const lengthError = (field: string, max: number): FieldError => fielderrors.invalid(field, '', `can have at most ${max} characters`);

/**
 * Upstream's `legacyValidateEvent` over a stored (core/v1) Event. `controllerField` is how the
 * reporting component is named in messages: `reportingComponent` through core/v1,
 * `reportingController` through events.k8s.io/v1.
 */
export function validateLegacyEvent(obj: JsonObject, controllerField: 'reportingComponent' | 'reportingController'): FieldError[] {
  const errors: FieldError[] = [];
  const namespace = objects.namespaceOf(obj) ?? '';
  const involvedNamespace = strategies.stringOf(strategies.mapOf(obj, 'involvedObject'), 'namespace');
  const mismatch = (): FieldError => fielderrors.invalid('involvedObject.namespace', involvedNamespace, 'does not match event.namespace');
  if (!strategies.stringOf(obj, 'eventTime')) {
    if (involvedNamespace === '') {
      if (namespace !== '' && namespace !== 'default') errors.push(mismatch());
    } else if (namespace !== involvedNamespace) {
      errors.push(mismatch());
    }
  } else {
    if (involvedNamespace === '' && namespace !== 'default' && namespace !== 'kube-system') errors.push(mismatch());
    const controller = strategies.stringOf(obj, 'reportingComponent');
    if (!controller) errors.push(fielderrors.required(controllerField));
    for (const msg of names.qualifiedNameErrors(controller)) errors.push(fielderrors.invalid(controllerField, controller, msg));
    const instance = strategies.stringOf(obj, 'reportingInstance');
    if (!instance) errors.push(fielderrors.required('reportingInstance'));
    if (instance.length > REPORTING_INSTANCE_MAX) errors.push(lengthError('reportingInstance', REPORTING_INSTANCE_MAX));
    const action = strategies.stringOf(obj, 'action');
    if (!action) errors.push(fielderrors.required('action'));
    if (action.length > ACTION_MAX) errors.push(lengthError('action', ACTION_MAX));
    const reason = strategies.stringOf(obj, 'reason');
    if (!reason) errors.push(fielderrors.required('reason'));
    if (reason.length > REASON_MAX) errors.push(lengthError('reason', REASON_MAX));
    if (strategies.stringOf(obj, 'message').length > NOTE_MAX) errors.push(lengthError('message', NOTE_MAX));
  }
  for (const msg of names.dns1123SubdomainErrors(namespace)) errors.push(fielderrors.invalid('namespace', namespace, msg));
  return errors;
}

const involved =
  (key: string) =>
  (o: JsonObject): string =>
    strategies.stringOf(strategies.mapOf(o, 'involvedObject'), key);

/** The extra field selectors of core/v1 Events (D-BI-1), over the stored form. */
export const eventFieldSelectors: Readonly<Record<string, (obj: JsonObject) => string>> = {
  'involvedObject.kind': involved('kind'),
  'involvedObject.namespace': involved('namespace'),
  'involvedObject.name': involved('name'),
  'involvedObject.uid': involved('uid'),
  'involvedObject.apiVersion': involved('apiVersion'),
  'involvedObject.resourceVersion': involved('resourceVersion'),
  'involvedObject.fieldPath': involved('fieldPath'),
  reason: (o) => strategies.stringOf(o, 'reason'),
  reportingComponent: (o) => strategies.stringOf(o, 'reportingComponent'),
  source: (o) => strategies.stringOf(strategies.mapOf(o, 'source'), 'component'),
  type: (o) => strategies.stringOf(o, 'type'),
};

/** The core/v1 Event strategy; see the module comment. */
export const eventStrategy: resources.Strategy = strategies.plainStrategy('Event', {
  putCreates: true,
  fieldSelectors: eventFieldSelectors,
  prepareForCreate: (obj) => normalizeEventTimes(obj),
  prepareForUpdate: (obj) => normalizeEventTimes(obj),
  validate: (obj) => validateLegacyEvent(obj, 'reportingComponent'),
});
