import type * as resources from '../api/resources.js';
import * as fielderrors from '../meta/fielderrors.js';
import * as datamaps from './datamaps.js';
import * as strategies from './strategies.js';
import type { JsonObject } from '../json.js';

type FieldError = fielderrors.FieldError;

function checkDecodable(obj: JsonObject): JsonObject {
  datamaps.checkMap(obj, 'data', 'ConfigMap', false);
  datamaps.checkMap(obj, 'binaryData', 'ConfigMap', true);
  return obj;
}

/** Validates a ConfigMap (D-BI-5); `old` is the stored one on update. */
export function validateConfigMap(obj: JsonObject, old: JsonObject | undefined): FieldError[] {
  const data = strategies.mapOf(obj, 'data');
  const binary = strategies.mapOf(obj, 'binaryData');
  const errors: FieldError[] = [];
  let total = 0;
  for (const [key, value] of Object.entries(data)) {
    errors.push(...datamaps.configKeyErrors(key).map((msg) => fielderrors.invalid(`data[${key}]`, key, msg)));
    if (key in binary) errors.push(fielderrors.invalid(`data[${key}]`, key, 'duplicate of key present in binaryData'));
    total += Buffer.byteLength(String(value), 'utf8');
  }
  for (const [key, value] of Object.entries(binary)) {
    errors.push(...datamaps.configKeyErrors(key).map((msg) => fielderrors.invalid(`binaryData[${key}]`, key, msg)));
    if (key in data) errors.push(fielderrors.invalid(`binaryData[${key}]`, key, 'duplicate of key present in data'));
    total += datamaps.decodedSize(String(value));
  }
  errors.push(...datamaps.sizeErrors(total, ''));
  errors.push(...datamaps.immutableErrors(obj, old, ['data', 'binaryData']));
  return errors;
}

/** The ConfigMap strategy; see the module comment. */
export const configMapStrategy: resources.Strategy = strategies.plainStrategy('ConfigMap', {
  prepareForCreate: (obj) => checkDecodable(obj),
  prepareForUpdate: (obj) => checkDecodable(obj),
  validate: (obj, old) => validateConfigMap(obj, old),
});
