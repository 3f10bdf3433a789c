/**
 * Conversion of custom objects between the versions of their CRD (D-CRD-5, D-CRD-22): what lets one
 * stored object be served through every served version. With `conversion.strategy: None` only
 * `apiVersion` changes. With `Webhook`, upstream would POST a `ConversionReview` to the CRD's
 * webhook; the devcluster does not call conversion webhooks yet, so such a CRD serves each object
 * only through the version it is stored in, and a request that needs a conversion fails loudly
 * with a 500 that says so — never with silently unconverted fields.
 */
import * as statuses from '../server/statuses.js';
import type { JsonObject } from '../json.js';
import type * as schemas from './schemas.js';

/** Converts an object of the CRD (in any of its versions) to `apiVersion`, as a shallow copy; throws an `ApiError` when it cannot. */
export type Converter = (obj: JsonObject, apiVersion: string) => JsonObject;

/**
 * The converter of a CRD's conversion strategy.
 *
 * @example
 * converterFor(webhookCrd)({ apiVersion: 'example.com/v1', kind: 'Widget', … }, 'example.com/v2')
 * // throws 500: Internal error occurred: conversion webhook for example.com/v1, Kind=Widget failed: …
 */
export function converterFor(crd: schemas.CustomResourceDefinition): Converter {
  const kind = crd.spec.names.kind;
  if (crd.spec.conversion?.strategy !== 'Webhook') return (obj, apiVersion) => ({ ...obj, apiVersion });
  return (obj, apiVersion) => {
    const from = typeof obj['apiVersion'] === 'string' ? obj['apiVersion'] : '';
    if (from !== apiVersion) throw conversionNotCalled(from, kind, apiVersion);
    return { ...obj };
  };
}

/** The 500 of a conversion the devcluster cannot do, worded as upstream's failed webhook conversion. */
export function conversionNotCalled(fromApiVersion: string, kind: string, toApiVersion: string): statuses.ApiError {
  const message =
    `conversion webhook for ${fromApiVersion}, Kind=${kind} failed: the devcluster does not call conversion webhooks yet, ` +
    `so objects of this CRD are served only in the version they are stored in (cannot convert to ${toApiVersion})`;
  return statuses.internal(message, [{ message }]);
}
