/**
 * Round trips of converters, for users' tests: an object converted to the other version and back
 * must come back as it was. The compiler refuses a field a converter carries into a version that
 * lacks it (`Exact`), but not a field it forgets — leaving out a source field is no type error
 * when the target's field is optional or absent — nor a value converted wrongly one way; a round
 * trip finds both, as the API server would, which converts objects back and forth between the
 * stored version and the ones clients ask for and loses whatever a converter drops.
 *
 * `roundTrip` takes anything with `forward` and `backward` (the handle `on.convert` returns, or
 * the two functions themselves), compares the object that comes back with the one given as JSON
 * (a property holding `undefined` is absent, as on the wire) and throws a `RoundTripError`, an
 * `AssertionError`, naming every field path that changed, was lost or was added, with its value
 * before and after. It also fails when a converter changed the object it was given (converters
 * are pure).
 */
import { type FieldChange, RoundTripError } from './errors.js';

/** Two converters between versions `A` and `B` (structurally: `on.convert`'s handle fits). */
export interface RoundTripConversion<A, B> {
  forward(object: A): B;
  backward(object: B): A;
}

/** Which version the given object is of: `from` (default: forward, then backward) or `to`. */
export interface RoundTripOptions<Side extends 'from' | 'to'> {
  readonly from?: Side;
}

/** What a successful round trip went through. */
export interface RoundTripResult<Given, Other> {
  /** The object in the other version (for assertions of its own). */
  readonly converted: Other;
  /** The object converted back: deep-equal (as JSON) to the one given. */
  readonly restored: Given;
}

/**
 * Converts `object` to the other version and back, and throws a `RoundTripError` unless it comes
 * back deep-equal (as JSON). Give `{ from: 'to' }` for an object of the conversion's target version
 * (backward, then forward). Returns both objects for further assertions.
 *
 * @example
 * const { converted } = roundTrip(sprocketV1, v1Object);               // v1 → v2 → v1
 * expect(converted.spec.replicas).toBe(3);
 * roundTrip(sprocketV1, v2Object, { from: 'to' });                      // v2 → v1 → v2
 */
export function roundTrip<A, B>(conversion: RoundTripConversion<A, B>, object: A, options?: RoundTripOptions<'from'>): RoundTripResult<A, B>;
export function roundTrip<A, B>(conversion: RoundTripConversion<A, B>, object: B, options: RoundTripOptions<'to'>): RoundTripResult<B, A>;
export function roundTrip(
  conversion: RoundTripConversion<unknown, unknown>,
  object: unknown,
  options: RoundTripOptions<'from' | 'to'> = {},
): RoundTripResult<unknown, unknown> {
  const [there, back] = options.from === 'to' ? [conversion.backward, conversion.forward] : [conversion.forward, conversion.backward];
  const original = structuredClone(object);
  const converted = there.call(conversion, object);
  const convertedCopy = structuredClone(converted);
  const restored = back.call(conversion, converted);
  const route = [object, converted, restored].map(versionOf).join(' → ');
  const changes = compare(original, restored);
  const mutations = [...compare(original, object), ...compare(convertedCopy, converted)];
  if (changes.length > 0 || mutations.length > 0) throw new RoundTripError(route, original, restored, changes, mutations);
  return { converted, restored };
}

/** Every difference between two JSON values, depth first, in the order of the keys. */
function compare(before: unknown, after: unknown, path = ''): FieldChange[] {
  if (before === undefined && after === undefined) return [];
  if (before === undefined) return [{ kind: 'added', path: path || '(the object)', before, after }];
  if (after === undefined) return [{ kind: 'lost', path: path || '(the object)', before, after }];
  if (Array.isArray(before) && Array.isArray(after)) {
    const length = Math.max(before.length, after.length);
    return Array.from({ length }, (_, index) => compare(before[index], after[index], `${path}[${index}]`)).flat();
  }
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    return keys.flatMap((key) => compare(before[key], after[key], join(path, key)));
  }
  return Object.is(before, after) ? [] : [{ kind: 'changed', path: path || '(the object)', before, after }];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** `a.b` for identifier-like keys, `a["example.com/b"]` for the others. */
function join(path: string, key: string): string {
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return path ? `${path}.${key}` : key;
  return `${path}[${JSON.stringify(key)}]`;
}

/** The `apiVersion` of an object, for the message's route. */
function versionOf(object: unknown): string {
  const apiVersion = isPlainObject(object) ? object['apiVersion'] : undefined;
  return typeof apiVersion === 'string' ? apiVersion : '(no apiVersion)';
}
