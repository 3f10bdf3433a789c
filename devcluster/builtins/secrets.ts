/**
 * Secrets (D-BI-6): `type` defaults to `Opaque` and is immutable; `data` values must be base64
 * (anything else → 400, as upstream's decoder answers); `stringData` is write-only — its entries
 * are encoded into `data` on every write and it is never stored; key rules, the 1 MiB limit and
 * `immutable` as for ConfigMaps (datamaps.ts); the type-specific required keys of upstream.
 */
import * as objects from '../api/objects.js';
import type * as resources from '../api/resources.js';
import * as fielderrors from '../meta/fielderrors.js';
import * as datamaps from './datamaps.js';
import * as strategies from './strategies.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
type FieldError = fielderrors.FieldError;

export const SERVICE_ACCOUNT_NAME_KEY = 'kubernetes.io/service-account.name';

/**
 * The stored form of a Secret body: base64 checked, `stringData` folded into `data` (overriding
 * the same keys) and removed, `type` defaulted. Returns a copy.
 * @throws ApiError 400 for values that are not (base64) strings.
 */
export function foldStringData(obj: JsonObject): JsonObject {
  datamaps.checkMap(obj, 'data', 'Secret', true);
  datamaps.checkMap(obj, 'stringData', 'Secret', false);
  const { stringData, ...out } = obj;
  if (json.isObject(stringData) && Object.keys(stringData).length) {
    const data: JsonObject = { ...strategies.mapOf(out, 'data') };
    for (const [k, v] of Object.entries(stringData)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
    out['data'] = data;
  }
  if (out['type'] === undefined || out['type'] === null || out['type'] === '') out['type'] = 'Opaque';
  return out;
}

const decoded = (data: JsonObject, key: string): string | undefined =>
  typeof data[key] === 'string' ? Buffer.from(data[key], 'base64').toString('utf8') : undefined;

function typeErrors(obj: JsonObject): FieldError[] {
  const data = strategies.mapOf(obj, 'data');
  const key = (k: string): string => `data[${k}]`;
  const has = (k: string): boolean => k in data;
  const jsonKey = (k: string): FieldError[] => {
    if (!has(k)) return [fielderrors.required(key(k))];
    try {
      const parsed: unknown = JSON.parse(decoded(data, k) ?? '');
      return json.isObject(parsed)
        ? []
        : [fielderrors.invalid(key(k), '<secret contents redacted>', 'json: cannot unmarshal into Go value of type map[string]interface {}')];
    } catch (err) {
      return [fielderrors.invalid(key(k), '<secret contents redacted>', err instanceof Error ? err.message : String(err))];
    }
  };
  switch (obj['type']) {
    case 'kubernetes.io/service-account-token': {
      const annotations = strategies.mapOf(objects.metaOf(obj), 'annotations');
      return annotations[SERVICE_ACCOUNT_NAME_KEY] ? [] : [fielderrors.required(`metadata.annotations[${SERVICE_ACCOUNT_NAME_KEY}]`)];
    }
    case 'kubernetes.io/dockercfg':
      return jsonKey('.dockercfg');
    case 'kubernetes.io/dockerconfigjson':
      return jsonKey('.dockerconfigjson');
    case 'kubernetes.io/basic-auth':
      return has('username') || has('password') ? [] : [fielderrors.required(key('username')), fielderrors.required(key('password'))];
    case 'kubernetes.io/ssh-auth':
      return decoded(data, 'ssh-privatekey') ? [] : [fielderrors.required(key('ssh-privatekey'))];
    case 'kubernetes.io/tls':
      return [...(has('tls.crt') ? [] : [fielderrors.required(key('tls.crt'))]), ...(has('tls.key') ? [] : [fielderrors.required(key('tls.key'))])];
    default:
      return [];
  }
}

/** Validates a (folded) Secret (D-BI-6); `old` is the stored one on update. */
export function validateSecret(obj: JsonObject, old: JsonObject | undefined): FieldError[] {
  const data = strategies.mapOf(obj, 'data');
  const errors = datamaps.keyErrors(data, 'data');
  const total = Object.values(data).reduce<number>((sum, v) => sum + datamaps.decodedSize(String(v)), 0);
  errors.push(...datamaps.sizeErrors(total, 'data'));
  errors.push(...typeErrors(obj));
  if (old && old['type'] !== obj['type']) errors.push(fielderrors.invalid('type', obj['type'], 'field is immutable'));
  errors.push(...datamaps.immutableErrors(obj, old, ['data']));
  return errors;
}

/** The Secret strategy; see the module comment. */
export const secretStrategy: resources.Strategy = strategies.plainStrategy('Secret', {
  fieldSelectors: { type: (o) => strategies.stringOf(o, 'type') },
  prepareForCreate: (obj) => foldStringData(obj),
  prepareForUpdate: (obj) => foldStringData(obj),
  validate: (obj, old) => validateSecret(obj, old),
});
