/**
 * The converters between the two versions of the Sprocket (CRD: fixtures/crds/conversion.yaml),
 * lossless both ways, as the API server needs them: it stores every object in v2 and converts it
 * to v1 and back whenever a client reads or writes v1, so whatever a converter drops is gone.
 *
 * - renamed: v1's `spec.size` is v2's `spec.replicas`;
 * - split: v1's `spec.image: "repository:tag"` is v2's `spec.image: { repository, tag }`, cut at
 *   the last colon after the last slash (a registry's port stays in the repository; the schemas'
 *   patterns refuse colons in tags, so the cut is unambiguous);
 * - refused: v1's pattern admits a digest (`app:1.2@sha256:…`), v2 has no field for one, so
 *   `forward` throws a `ConversionError` naming the field: the API server then refuses the write
 *   (nothing is stored) or the read with the message;
 * - added in v2: `spec.paused`, which v1 has no field for, travels in the annotation
 *   `conversion.kopf-gen.dev/v2-only` of v1 objects (as JSON), as controller-runtime's docs
 *   recommend, and comes back from it. The annotation is reserved for the conversion: a malformed
 *   one is left as it is (nothing lost, nothing restored).
 *
 * The return types are inferred, not annotated: `on.convert` checks them with `Exact`, so a field
 * of one version left in the other's object (`...object.spec` still holding `size`) is a compile
 * error naming `spec.size`. An annotation `: V2.Sprocket` would hide it.
 */
import { ConversionError } from 'kopf-gen/runtime';

import type * as V1 from '../../fixtures/generated/sprockets.conversion.kopf-gen.dev.v1.js';
import type * as V2 from '../../fixtures/generated/sprockets.conversion.kopf-gen.dev.v2.js';

/** The annotation of v1 objects that holds the fields only v2 has. */
export const V2_ONLY = 'conversion.kopf-gen.dev/v2-only';

/** The fields of v2's spec that v1 has no place for. */
interface V2Only {
  paused?: boolean;
}

/** v1 → v2. */
export function forward(object: V1.Sprocket) {
  const { size, image, ...spec } = object.spec;
  const { [V2_ONLY]: packed, ...annotations } = object.metadata?.annotations ?? {};
  const v2only = unpack(packed);
  const metadata =
    packed === undefined || v2only === undefined
      ? object.metadata
      : { ...object.metadata, annotations: Object.keys(annotations).length > 0 ? annotations : undefined };
  return {
    ...object,
    apiVersion: 'conversion.kopf-gen.dev/v2' as const,
    metadata,
    spec: { ...spec, ...v2only, replicas: size, image: splitImage(image) },
  };
}

/** v2 → v1. */
export function backward(object: V2.Sprocket) {
  const { replicas, image, paused, ...spec } = object.spec;
  const v2only: V2Only = paused === undefined ? {} : { paused };
  const metadata =
    Object.keys(v2only).length === 0
      ? object.metadata
      : { ...object.metadata, annotations: { ...object.metadata?.annotations, [V2_ONLY]: JSON.stringify(v2only) } };
  return {
    ...object,
    apiVersion: 'conversion.kopf-gen.dev/v1' as const,
    metadata,
    spec: { ...spec, size: replicas, image: joinImage(image) },
  };
}

/**
 * `registry:5000/team/app:1.2` → `{ repository: 'registry:5000/team/app', tag: '1.2' }`; no tag, no `tag`.
 *
 * @throws ConversionError for a reference with a digest (`…@sha256:…`), which v2 cannot hold.
 */
export function splitImage(reference: string): V2.SprocketSpecImage {
  if (reference.includes('@')) throw new ConversionError(`spec.image: v2 has no place for the digest of ${JSON.stringify(reference)}`);
  const colon = reference.lastIndexOf(':');
  if (colon <= reference.lastIndexOf('/')) return { repository: reference };
  return { repository: reference.slice(0, colon), tag: reference.slice(colon + 1) };
}

/** The inverse of `splitImage`. */
export function joinImage(image: V2.SprocketSpecImage): string {
  return image.tag === undefined ? image.repository : `${image.repository}:${image.tag}`;
}

/** The v2-only fields of the annotation; `undefined` if it is there but malformed (then it stays). */
function unpack(text: string | undefined): V2Only | undefined {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { paused, ...rest } = value as { paused?: unknown };
  if (Object.keys(rest).length > 0 || (paused !== undefined && typeof paused !== 'boolean')) return undefined;
  return paused === undefined ? {} : { paused };
}
