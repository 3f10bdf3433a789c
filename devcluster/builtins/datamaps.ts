import * as fielderrors from '../meta/fielderrors.js';
import * as names from '../meta/names.js';
import * as strategies from './strategies.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
type FieldError = fielderrors.FieldError;

/** Maximum total size of a ConfigMap's or Secret's data (bytes). */
export const MAX_DATA_SIZE = 1048576;
export const IMMUTABLE_MESSAGE = 'field is immutable when `immutable` is set';

const KEY_FMT = '[-._a-zA-Z0-9]+';
const KEY_RE = /^[-._a-zA-Z0-9]+$/;
const BASE64_ALPHABET = /[A-Za-z0-9+/]/;

/** Upstream `IsConfigMapKey`: the messages for an invalid key (empty when valid). */
export function configKeyErrors(key: string): string[] {
  const errors: string[] = [];
  if (Buffer.byteLength(key, 'utf8') > names.DNS1123_SUBDOMAIN_MAX) errors.push(names.maxLenError(names.DNS1123_SUBDOMAIN_MAX));
  if (!KEY_RE.test(key)) {
    errors.push(names.regexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'));
  }
  if (key === '.') errors.push("must not be '.'");
  else if (key === '..') errors.push("must not be '..'");
  else if (key.startsWith('..')) errors.push("must not start with '..'");
  return errors;
}

/** Field errors for every invalid key of the map at `field` (`data`, `binaryData`). */
export function keyErrors(map: JsonObject, field: string): FieldError[] {
  return Object.keys(map).flatMap((key) => configKeyErrors(key).map((msg) => fielderrors.invalid(`${field}[${key}]`, key, msg)));
}

/**
 * Why `text` is not standard padded base64 (`illegal base64 data at input byte N`, as Go words it),
 * or undefined when it decodes. Line breaks are ignored, as Go's decoder ignores them.
 */
export function base64Error(text: string): string | undefined {
  const s = text.replace(/[\r\n]/g, '');
  if (/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s)) return undefined;
  let at = [...s].findIndex((ch) => ch !== '=' && !BASE64_ALPHABET.test(ch));
  if (at < 0) {
    const pad = s.indexOf('=');
    at = pad >= 0 && pad < s.length - 2 ? pad : Math.floor(s.length / 4) * 4;
  }
  return `illegal base64 data at input byte ${at}`;
}

/** The decoded size of a valid base64 text. */
export const decodedSize = (text: string): number => Buffer.from(text, 'base64').length;

/**
 * Throws 400 unless every value of the map at `key` is a string, and (with `base64`) valid base64:
 * upstream cannot decode such a body into its Go type.
 */
export function checkMap(obj: JsonObject, key: string, kind: string, base64: boolean): void {
  const value = obj[key];
  if (value === undefined || value === null) return;
  if (!json.isObject(value))
    throw strategies.undecodable(
      kind,
      'v1',
      `json: cannot unmarshal ${Array.isArray(value) ? 'array' : typeof value} into Go struct field ${kind}.${key} of type map[string]${base64 ? '[]uint8' : 'string'}`,
    );
  for (const v of Object.values(value)) {
    if (typeof v !== 'string')
      throw strategies.undecodable(
        kind,
        'v1',
        `json: cannot unmarshal ${v === null ? 'null' : typeof v} into Go struct field ${kind}.${key} of type ${base64 ? '[]uint8' : 'string'}`,
      );
    if (base64) {
      const why = base64Error(v);
      if (why) throw strategies.undecodable(kind, 'v1', why);
    }
  }
}

/** A map that is empty counts as absent (upstream cannot tell them apart after decoding). */
const normalizedMap = (v: unknown): unknown => (json.isObject(v) && Object.keys(v).length === 0 ? undefined : v);

/**
 * The `immutable: true` rule: once the stored object is immutable, `immutable` cannot be unset and
 * none of `fields` may change.
 */
export function immutableErrors(obj: JsonObject, old: JsonObject | undefined, fields: readonly string[]): FieldError[] {
  if (old?.['immutable'] !== true) return [];
  const errors: FieldError[] = [];
  if (obj['immutable'] !== true) errors.push(fielderrors.forbidden('immutable', IMMUTABLE_MESSAGE));
  for (const f of fields) {
    if (strategies.changed(normalizedMap(old[f]), normalizedMap(obj[f]))) errors.push(fielderrors.forbidden(f, IMMUTABLE_MESSAGE));
  }
  return errors;
}

/** The 1 MiB total-size error at `field` (`''` for the whole object), or none. */
export function sizeErrors(total: number, field: string): FieldError[] {
  return total > MAX_DATA_SIZE ? [fielderrors.tooLong(field, `must have at most ${MAX_DATA_SIZE} bytes`)] : [];
}
