/**
 * The asynchronous conversion step of the request pipeline (D-CONV-401..): for kinds whose
 * conversion calls out (CRDs with a conversion webhook), stored objects are brought into the
 * version a request is served in before the synchronous code shows them, and written objects into
 * the storage version right before they are stored. Kinds without `Strategy.convertObjects` (built-ins,
 * CRDs whose strategy is `None`) pass through untouched, with no webhook call and no extra work.
 */
import * as resources from './resources.js';
import type { JsonObject } from '../json.js';

/** The objects in the version `type` serves (one webhook call for all that need it). */
export async function inVersion(type: resources.ResourceType, objs: readonly JsonObject[]): Promise<readonly JsonObject[]> {
  const convert = type.strategy.convertObjects;
  if (!convert) return objs;
  return convert(objs, resources.apiVersionOf(type));
}

/** One object in the version `type` serves. */
export async function oneInVersion(type: resources.ResourceType, obj: JsonObject): Promise<JsonObject> {
  if (!type.strategy.convertObjects) return obj;
  return (await inVersion(type, [obj]))[0]!;
}

/** A written object, still in the request's version, in the stored form (after mutating admission, before storing). */
export async function forStorage(type: resources.ResourceType, obj: JsonObject): Promise<JsonObject> {
  return type.strategy.toStorageAsync ? type.strategy.toStorageAsync(obj) : obj;
}

/** Whether reads and writes of `type` need the asynchronous step. */
export const callsOut = (type: resources.ResourceType): boolean => type.strategy.convertObjects !== undefined;
