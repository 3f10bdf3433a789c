/**
 * Name rules: the string checks behind every name, namespace, label, annotation key and finalizer
 * the devcluster accepts (D-META-8, D-META-9, D-META-11), plus name generation for `generateName`.
 *
 * Each checker returns a list of upstream-worded messages (empty when the value is valid), the way
 * upstream's `IsDNS1123Subdomain` and friends do; callers wrap them into field errors with the path
 * they are validating (see objectmeta.ts) or into selector parse errors (see selectors.ts). Lengths
 * are measured in UTF-8 bytes, as upstream measures them.
 */

/** The name rule a resource uses for `metadata.name` (D-META-8). */
export type NameRule = 'subdomain' | 'label' | 'dns1035' | 'crd' | 'path';

/**
 * The path-segment rule of RBAC objects (`system:controller:job-controller` is a valid ClusterRole
 * name): anything but `.`, `..`, and names containing `/` or `%`, with upstream's messages.
 */
export function pathSegmentErrors(value: string): string[] {
  if (value === '.' || value === '..') return [`may not be '${value}'`];
  const errors: string[] = [];
  for (const c of ['/', '%']) if (value.includes(c)) errors.push(`may not contain '${c}'`);
  return errors;
}

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;

const whole = (fmt: string): RegExp => new RegExp(`^(?:${fmt})$`);
const DNS1123_LABEL_RE = whole(DNS1123_LABEL_FMT);
const DNS1123_SUBDOMAIN_RE = whole(DNS1123_SUBDOMAIN_FMT);
const DNS1035_LABEL_RE = whole(DNS1035_LABEL_FMT);
const QUALIFIED_NAME_RE = whole(QUALIFIED_NAME_FMT);
const LABEL_VALUE_RE = whole(LABEL_VALUE_FMT);

/** Maximum lengths (bytes) of the rules above. */
export const DNS1123_SUBDOMAIN_MAX = 253;
export const DNS1123_LABEL_MAX = 63;
export const DNS1035_LABEL_MAX = 63;
export const QUALIFIED_NAME_MAX = 63;
export const LABEL_VALUE_MAX = 63;

const QUALIFIED_NAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** `must be no more than N characters` (upstream `MaxLenError`). */
export const maxLenError = (length: number): string => `must be no more than ${length} characters`;

/** `must be non-empty` (upstream `EmptyError`). */
export const emptyError = (): string => 'must be non-empty';

/** Upstream `RegexError`: the message, examples (joined the upstream way, double spaces included) and the regex. */
export function regexError(message: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${message} (regex used for validation is '${fmt}')`;
  const shown = examples.map((e, i) => `${i > 0 ? ' or ' : ''}'${e}', `).join('');
  return `${message} (e.g. ${shown}regex used for validation is '${fmt}')`;
}

const byteLength = (value: string): number => Buffer.byteLength(value, 'utf8');

/** DNS-1123 subdomain: `example.com`, at most 253 bytes. */
export function dns1123SubdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX) errors.push(maxLenError(DNS1123_SUBDOMAIN_MAX));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) {
    errors.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_FMT,
        'example.com',
      ),
    );
  }
  return errors;
}

/** DNS-1123 label: `my-name`, at most 63 bytes (namespace names). */
export function dns1123LabelErrors(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX) errors.push(maxLenError(DNS1123_LABEL_MAX));
  if (!DNS1123_LABEL_RE.test(value)) {
    errors.push(
      regexError(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        DNS1123_LABEL_FMT,
        'my-name',
        '123-abc',
      ),
    );
  }
  return errors;
}

/** DNS-1035 label: starts with a letter, at most 63 bytes (Service names). */
export function dns1035LabelErrors(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > DNS1035_LABEL_MAX) errors.push(maxLenError(DNS1035_LABEL_MAX));
  if (!DNS1035_LABEL_RE.test(value)) {
    errors.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035_LABEL_FMT,
        'my-name',
        'abc-123',
      ),
    );
  }
  return errors;
}

/**
 * Qualified name, the label-key rule (D-META-11): `[prefix/]name` where the prefix is a DNS-1123
 * subdomain and the name is 1–63 bytes of `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
 * Also the rule for finalizers and (case-insensitively) annotation keys.
 */
export function qualifiedNameErrors(value: string): string[] {
  const errors: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errors.push(`prefix part ${emptyError()}`);
    else errors.push(...dns1123SubdomainErrors(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}` +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errors.push(`name part ${emptyError()}`);
  else if (byteLength(name) > QUALIFIED_NAME_MAX) errors.push(`name part ${maxLenError(QUALIFIED_NAME_MAX)}`);
  if (!QUALIFIED_NAME_RE.test(name)) {
    errors.push(`name part ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  }
  return errors;
}

/** Label value (D-META-11): empty, or at most 63 bytes matching the qualified-name pattern. */
export function labelValueErrors(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX) errors.push(maxLenError(LABEL_VALUE_MAX));
  if (!LABEL_VALUE_RE.test(value)) {
    errors.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE_FMT,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  }
  return errors;
}

/**
 * Checks a `metadata.name` (or, with `prefix`, a `generateName`) against a resource's name rule.
 * A prefix may end in `-`: the dash is masked with a letter before the check (D-META-9).
 * The `crd` rule checks the syntax only (DNS-1123 subdomain); the fixed form is {@link crdNameErrors}.
 *
 * @example nameErrors('Bad_Name', 'subdomain') // → ["a lowercase RFC 1123 subdomain must …"]
 */
export function nameErrors(value: string, rule: NameRule, prefix = false): string[] {
  const checked = prefix && value.length > 1 && value.endsWith('-') ? `${value.slice(0, -1)}a` : value;
  switch (rule) {
    case 'label':
      return dns1123LabelErrors(checked);
    case 'dns1035':
      return dns1035LabelErrors(checked);
    case 'subdomain':
    case 'crd':
      return dns1123SubdomainErrors(checked);
    case 'path':
      return pathSegmentErrors(checked);
  }
}

/** The fixed form of a CRD's name (D-META-8): it must equal `<spec.names.plural>.<spec.group>`. */
export function crdNameErrors(name: string, plural: string, group: string): string[] {
  return name === `${plural}.${group}` ? [] : ['must be spec.names.plural+"."+spec.group'];
}

/** The alphabet of generated name suffixes: no vowels, no easily confused characters. */
export const GENERATED_SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
/** Length of the random suffix appended to `generateName`. */
export const GENERATED_SUFFIX_LENGTH = 5;
/** Longest prefix kept by {@link generateName}, so that generated names fit 63 characters. */
export const MAX_GENERATED_PREFIX = 63 - GENERATED_SUFFIX_LENGTH;

/**
 * Five characters drawn uniformly from {@link GENERATED_SUFFIX_ALPHABET}.
 * @param random a source of numbers in `[0, 1)` such as `Math.random` (injectable for tests).
 */
export function generateNameSuffix(random: () => number): string {
  const size = GENERATED_SUFFIX_ALPHABET.length;
  let suffix = '';
  for (let i = 0; i < GENERATED_SUFFIX_LENGTH; i++) {
    const index = Math.min(size - 1, Math.max(0, Math.floor(random() * size)));
    suffix += GENERATED_SUFFIX_ALPHABET[index];
  }
  return suffix;
}

/**
 * A name for `generateName` (D-META-9): the prefix truncated to 58 characters plus a random suffix.
 * Collision retries are the caller's business (it owns the store).
 *
 * @example generateName('w-', Math.random) // → 'w-x7k2b'
 */
export function generateName(prefix: string, random: () => number): string {
  return `${prefix.slice(0, MAX_GENERATED_PREFIX)}${generateNameSuffix(random)}`;
}
