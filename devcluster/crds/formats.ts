/**
 * String formats checked by CR validation (the `format` keyword, D-CRD-11).
 *
 * Upstream validates a fixed set of formats on string values and ignores every other format name
 * (numeric formats such as `int32` or `double` describe the encoding and are not checked). The
 * checkers below follow the grammar of each format closely enough for an emulator: a value that
 * passes here is what an API server would accept, within the limits noted on each entry.
 */

import * as net from 'node:net';

type Checker = (value: string) => boolean;

const HEX_COLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const BYTE_0_255 = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const RGB_COLOR = new RegExp(`^rgb\\(\\s*${BYTE_0_255}\\s*,\\s*${BYTE_0_255}\\s*,\\s*${BYTE_0_255}\\s*\\)$`);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-[0-9a-f]{4}-3[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/;
const HOSTNAME_LABEL = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const BSON_OBJECT_ID = /^[0-9a-fA-F]{24}$/;
const SSN = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const FULL_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?$/;
const GO_DURATION = /^[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/;
const WORD_DURATION =
  /^\d+\s*(?:ns|nanoseconds?|us|µs|microseconds?|ms|milliseconds?|s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|d|days?|w|wk|weeks?)$/;
const MAC_COLON = /^(?:[0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$|^(?:[0-9a-fA-F]{2}[:-]){7}[0-9a-fA-F]{2}$|^(?:[0-9a-fA-F]{2}[:-]){19}[0-9a-fA-F]{2}$/;
const MAC_DOT = /^(?:[0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$|^(?:[0-9a-fA-F]{4}\.){3}[0-9a-fA-F]{4}$|^(?:[0-9a-fA-F]{4}\.){9}[0-9a-fA-F]{4}$/;

function isCalendarDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day <= days;
}

function isDate(value: string): boolean {
  const m = FULL_DATE.exec(value);
  return m !== null && isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3]));
}

function isDateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (!m || !isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3]))) return false;
  const seconds = m[6] === undefined ? 0 : Number(m[6]);
  if (Number(m[4]) > 23 || Number(m[5]) > 59 || seconds > 60) return false;
  const zone = m[7];
  if (zone && zone.length === 6 && (Number(zone.slice(1, 3)) > 23 || Number(zone.slice(4)) > 59)) return false;
  return true;
}

function isHostname(value: string): boolean {
  const name = value.endsWith('.') ? value.slice(0, -1) : value;
  return name.length > 0 && name.length <= 253 && name.split('.').every((label) => HOSTNAME_LABEL.test(label));
}

function isCidr(value: string): boolean {
  const slash = value.indexOf('/');
  if (slash < 0) return false;
  const ip = value.slice(0, slash);
  const bits = value.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits)) return false;
  const version = net.isIP(ip);
  return version !== 0 && Number(bits) <= (version === 4 ? 32 : 128);
}

function isUri(value: string): boolean {
  if (/\s/.test(value) || value.length === 0) return false;
  return URL.canParse(value) || value.startsWith('/');
}

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

function isCreditCard(value: string): boolean {
  const digits = value.replace(/[- ]/g, '');
  return /^\d{12,19}$/.test(digits) && luhn(digits);
}

function isIsbn10(value: string): boolean {
  const s = value.replace(/[- ]/g, '');
  if (!/^\d{9}[\dX]$/.test(s)) return false;
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += (10 - i) * (s[i] === 'X' ? 10 : Number(s[i]));
  return sum % 11 === 0;
}

function isIsbn13(value: string): boolean {
  const s = value.replace(/[- ]/g, '');
  if (!/^\d{13}$/.test(s)) return false;
  let sum = 0;
  for (let i = 0; i < 13; i++) sum += (i % 2 === 0 ? 1 : 3) * Number(s[i]);
  return sum % 10 === 0;
}

const CHECKERS: Record<string, Checker> = {
  bsonobjectid: (v) => BSON_OBJECT_ID.test(v),
  uri: isUri,
  email: (v) => EMAIL.test(v),
  hostname: isHostname,
  ipv4: (v) => net.isIPv4(v),
  ipv6: (v) => net.isIPv6(v),
  cidr: isCidr,
  mac: (v) => MAC_COLON.test(v) || MAC_DOT.test(v),
  uuid: (v) => UUID.test(v),
  uuid3: (v) => UUID3.test(v),
  uuid4: (v) => UUID4.test(v),
  uuid5: (v) => UUID5.test(v),
  isbn: (v) => isIsbn10(v) || isIsbn13(v),
  isbn10: isIsbn10,
  isbn13: isIsbn13,
  creditcard: isCreditCard,
  ssn: (v) => SSN.test(v),
  hexcolor: (v) => HEX_COLOR.test(v),
  rgbcolor: (v) => RGB_COLOR.test(v),
  byte: (v) => BASE64.test(v),
  password: () => true,
  date: isDate,
  'date-time': isDateTime,
  datetime: isDateTime,
  duration: (v) => v === '0' || GO_DURATION.test(v) || WORD_DURATION.test(v),
};

/** True when `format` is one the devcluster checks on strings. */
export function isKnownFormat(format: string): boolean {
  return Object.hasOwn(CHECKERS, format);
}

/** True when `value` conforms to `format`; unknown formats accept every value. */
export function conformsToFormat(format: string, value: string): boolean {
  const checker = Object.hasOwn(CHECKERS, format) ? CHECKERS[format] : undefined;
  return checker ? checker(value) : true;
}
