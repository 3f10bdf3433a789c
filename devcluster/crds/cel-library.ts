/**
 * The CEL environment used for CRD validation rules: the npm CEL evaluator plus the parts of the
 * Kubernetes CEL libraries that rules in real CRDs use.
 *
 * `cel.ts` compiles and evaluates `x-kubernetes-validations` against this single, shared environment
 * (building an environment is the expensive part, so it happens once per process). `self` and
 * `oldSelf` are declared `dyn`: the emulator does not derive CEL types from the OpenAPI schema, so
 * type errors that upstream reports at CRD-write time surface here at evaluation time instead.
 *
 * Built into the evaluator and relied upon: comparisons, arithmetic, `size`, `has`, `in`, `all`,
 * `exists`, `exists_one`, `map`, `filter`, `cel.bind`, optional values (`.?field`, `orValue`,
 * `hasValue`), strings `startsWith`, `endsWith`, `contains`, `lowerAscii`, `upperAscii`,
 * `split`, `join`, `trim`, `substring`, `indexOf`, `lastIndexOf`.
 *
 * Added here (Kubernetes library): lists `isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`;
 * strings `charAt`, `replace`, `reverse`; URLs `isURL`, `url` with `getScheme`, `getHost`,
 * `getHostname`, `getPort`, `getEscapedPath`, `getQuery`; IPs `isIP`, `isCIDR`. Regular expressions
 * (`matches`, `find`, `findAll`) come from `cel-regex.ts`, with Go's RE2 semantics.
 */
import * as cel from '@marcbachmann/cel-js';
import * as celregex from './cel-regex.js';

/** Error raised by a library function; the evaluator reports it like any evaluation error. */
const fail = (message: string): Error => new cel.EvaluationError(message);

/** CEL's heterogeneous equality on evaluator values (ints are bigint, doubles are number). */
export function celEquals(a: unknown, b: unknown): boolean {
  if (typeof a === 'bigint' && typeof b === 'number') return Number(a) === b;
  if (typeof a === 'number' && typeof b === 'bigint') return a === Number(b);
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => celEquals(item, b[i]));
  }
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array) || a.length !== b.length) return false;
    return a.every((byte, i) => byte === b[i]);
  }
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  }
  const left = Object.keys(a);
  const right = b as Record<string, unknown>;
  if (left.length !== Object.keys(b).length) return false;
  return left.every((key) => Object.hasOwn(right, key) && celEquals((a as Record<string, unknown>)[key], right[key]));
}

/** Orders two comparable CEL values (numbers, strings, bools, timestamps); throws for other pairs. */
function compare(a: unknown, b: unknown): number {
  const numeric = (v: unknown): v is number | bigint => typeof v === 'number' || typeof v === 'bigint';
  if (numeric(a) && numeric(b)) return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  throw fail('no such overload');
}

function sum(list: readonly unknown[]): unknown {
  if (list.length === 0) return 0n;
  if (list.every((v) => typeof v === 'bigint')) return (list as bigint[]).reduce((x, y) => x + y, 0n);
  if (list.every((v) => typeof v === 'number')) return (list as number[]).reduce((x, y) => x + y, 0);
  throw fail('no such overload');
}

function extreme(list: readonly unknown[], name: 'min' | 'max'): unknown {
  if (list.length === 0) throw fail(`${name} called on empty list`);
  let best = list[0];
  for (const item of list.slice(1)) {
    const order = compare(item, best);
    if (name === 'min' ? order < 0 : order > 0) best = item;
  }
  return best;
}

function charAt(text: string, index: bigint): string {
  const chars = Array.from(text);
  const i = Number(index);
  if (i < 0 || i > chars.length) throw fail(`index out of range: ${index}`);
  return chars[i] ?? '';
}

function replace(text: string, search: string, replacement: string, limit: bigint): string {
  if (limit < 0n) return text.split(search).join(replacement);
  let out = text;
  let from = 0;
  for (let n = 0n; n < limit; n++) {
    const at = out.indexOf(search, from);
    if (at < 0) break;
    out = out.slice(0, at) + replacement + out.slice(at + search.length);
    from = at + replacement.length + (search === '' ? 1 : 0);
  }
  return out;
}

/** A parsed URL as the Kubernetes URL library exposes it (Go `net/url` semantics, simplified). */
class KubeUrl {
  constructor(
    readonly scheme: string,
    readonly host: string,
    readonly path: string,
    readonly query: string,
  ) {}
}

const URL_SHAPE = /^(?:([A-Za-z][A-Za-z0-9+.-]*):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#.*)?$/;

/** Go's `url.ParseRequestURI`: an absolute URL or an absolute path, without spaces or controls. */
function parseUrl(text: string): KubeUrl | undefined {
  if (text === '' || /[\s\u0000-\u001f\u007f]/.test(text)) return undefined;
  const m = URL_SHAPE.exec(text);
  if (!m) return undefined;
  const [, scheme = '', authority, path = '', query = ''] = m;
  if (!scheme && !text.startsWith('/')) return undefined;
  const host = authority === undefined ? '' : authority.slice(authority.lastIndexOf('@') + 1);
  return new KubeUrl(scheme.toLowerCase(), host, path, query);
}

function hostAndPort(host: string): [string, string] {
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    const rest = host.slice(close + 1);
    return [host.slice(1, close), rest.startsWith(':') ? rest.slice(1) : ''];
  }
  const colon = host.lastIndexOf(':');
  return colon < 0 ? [host, ''] : [host.slice(0, colon), host.slice(colon + 1)];
}

function toUrl(text: string): KubeUrl {
  const parsed = parseUrl(text);
  if (!parsed) throw fail(`URL parse error during conversion from string: ${text}`);
  return parsed;
}

function query(url: KubeUrl): Record<string, string[]> {
  const out: Record<string, string[]> = Object.create(null);
  for (const [key, value] of new URLSearchParams(url.query)) (out[key] ??= []).push(value);
  return out;
}

const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** IPv4 without leading zeros, or IPv6 without zone and not IPv4-mapped (Kubernetes `isIP`). */
function isIp(text: string): boolean {
  if (IPV4.test(text)) return true;
  if (!text.includes(':') || text.includes('%') || /::ffff:\d/i.test(text)) return false;
  try {
    return new URL(`http://[${text}]/`).hostname.length > 0;
  } catch {
    return false;
  }
}

function isCidr(text: string): boolean {
  const slash = text.indexOf('/');
  if (slash < 0) return false;
  const address = text.slice(0, slash);
  const bits = text.slice(slash + 1);
  if (!/^(0|[1-9]\d{0,2})$/.test(bits) || !isIp(address)) return false;
  return Number(bits) <= (address.includes(':') ? 128 : 32);
}

function build(oldSelfType: 'dyn' | 'optional<dyn>'): cel.Environment {
  const env = new cel.Environment({ homogeneousAggregateLiterals: false, enableOptionalTypes: true });
  env.registerVariable('self', 'dyn').registerVariable('oldSelf', oldSelfType);

  env.registerFunction('list<A>.isSorted(): bool', (l: unknown[]) => l.every((v, i) => i === 0 || compare(l[i - 1], v) <= 0));
  env.registerFunction('list<A>.sum(): A', (l: unknown[]) => sum(l));
  env.registerFunction('list<A>.min(): A', (l: unknown[]) => extreme(l, 'min'));
  env.registerFunction('list<A>.max(): A', (l: unknown[]) => extreme(l, 'max'));
  env.registerFunction('list<A>.indexOf(A): int', (l: unknown[], x: unknown) => BigInt(l.findIndex((v) => celEquals(v, x))));
  env.registerFunction('list<A>.lastIndexOf(A): int', (l: unknown[], x: unknown) => BigInt(l.findLastIndex((v) => celEquals(v, x))));

  env.registerFunction('string.charAt(int): string', charAt);
  env.registerFunction('string.replace(string, string): string', (s: string, a: string, b: string) => replace(s, a, b, -1n));
  env.registerFunction('string.replace(string, string, int): string', replace);
  env.registerFunction('string.reverse(): string', (s: string) => Array.from(s).reverse().join(''));
  celregex.register(env);

  env.registerType('URL', KubeUrl);
  env.registerFunction('isURL(string): bool', (s: string) => parseUrl(s) !== undefined);
  env.registerFunction('url(string): URL', toUrl);
  env.registerFunction('URL.getScheme(): string', (u: KubeUrl) => u.scheme);
  env.registerFunction('URL.getHost(): string', (u: KubeUrl) => u.host);
  env.registerFunction('URL.getHostname(): string', (u: KubeUrl) => hostAndPort(u.host)[0]);
  env.registerFunction('URL.getPort(): string', (u: KubeUrl) => hostAndPort(u.host)[1]);
  env.registerFunction('URL.getEscapedPath(): string', (u: KubeUrl) => u.path);
  env.registerFunction('URL.getQuery(): map<string, list<string>>', query);

  env.registerFunction('isIP(string): bool', isIp);
  env.registerFunction('isCIDR(string): bool', isCidr);
  return env;
}

/** The shared environment; `self` and `oldSelf` (both `dyn`) are its only variables. */
export const environment: cel.Environment = build('dyn');

/**
 * The environment for rules with `optionalOldSelf: true`, where `oldSelf` is `optional<dyn>`
 * (declaring it `dyn` and passing an optional value breaks operator resolution on `oldSelf.value()`).
 */
export const optionalOldSelfEnvironment: cel.Environment = build('optional<dyn>');
