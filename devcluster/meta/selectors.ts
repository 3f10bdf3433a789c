/**
 * Label and field selectors (D-VERB-3, D-VERB-4): parsing the `labelSelector` / `fieldSelector`
 * query texts, matching objects, and rendering structured `{matchLabels, matchExpressions}`
 * selectors (Deployment selectors, Scale `status.selector`).
 *
 * List, watch and deletecollection parse the query once and match every candidate; the watch
 * fan-out matches old and new states with the same values. Which fields a resource supports in a
 * field selector is the resource's business: {@link selectorFields} lists what a selector names so
 * the caller can reject the rest (`field label not supported: …`). Parse failures throw
 * {@link SelectorError}, which the HTTP layer turns into 400 BadRequest. Label keys and values are
 * checked with the rules of names.ts (D-META-11).
 */
import * as names from './names.js';
import * as json from '../json.js';

/** A selector text or object that cannot be understood; answered with 400 BadRequest. */
export class SelectorError extends Error {
  readonly code = 'invalid-selector' as const;
  constructor(message: string) {
    super(message);
    this.name = 'SelectorError';
  }
}

/** Label requirement operators, named as upstream's `selection.Operator`. */
export type LabelOperator = 'Equals' | 'DoubleEquals' | 'NotEquals' | 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'GreaterThan' | 'LessThan';

/** One term of a label selector. `values` is sorted and free of duplicates. */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  readonly values: readonly string[];
}

/**
 * A parsed label selector: a conjunction of requirements, sorted by key. `matchesNothing` is set
 * only for an absent structured selector (upstream `labels.Nothing()`); no requirements and
 * `matchesNothing: false` matches everything.
 */
export interface LabelSelector {
  readonly requirements: readonly LabelRequirement[];
  readonly matchesNothing: boolean;
}

/** The structured selector of the API (`metav1.LabelSelector`). */
export interface LabelSelectorObject {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly { readonly key: string; readonly operator: string; readonly values?: readonly string[] }[];
}

// ----- label selector text: lexer -----

type TokenType = 'ident' | 'in' | 'notin' | '!' | '!=' | '(' | ')' | ',' | '=' | '==' | '>' | '<' | 'end';
interface Token {
  readonly type: TokenType;
  readonly text: string;
}

const SPECIAL = new Set(['!', '(', ')', ',', '=', '>', '<']);
const WHITESPACE = new Set([' ', '\t', '\r', '\n']);

function lex(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (WHITESPACE.has(ch)) {
      i++;
      continue;
    }
    if (SPECIAL.has(ch)) {
      const two = text.slice(i, i + 2);
      const type = (two === '!=' || two === '==' ? two : ch) as TokenType;
      tokens.push({ type, text: type });
      i += type.length;
      continue;
    }
    let j = i;
    while (j < text.length && !WHITESPACE.has(text[j]!) && !SPECIAL.has(text[j]!)) j++;
    const word = text.slice(i, j);
    tokens.push({ type: word === 'in' || word === 'notin' ? word : 'ident', text: word });
    i = j;
  }
  tokens.push({ type: 'end', text: '' });
  return tokens;
}

// ----- label selector text: parser -----

const OPERATORS: Partial<Record<TokenType, LabelOperator>> = {
  in: 'In',
  notin: 'NotIn',
  '=': 'Equals',
  '==': 'DoubleEquals',
  '!=': 'NotEquals',
  '>': 'GreaterThan',
  '<': 'LessThan',
};

class Parser {
  private position = 0;
  constructor(private readonly tokens: readonly Token[]) {}

  /** The next token; in a value position the keywords `in`/`notin` are plain identifiers. */
  private peek(asValue = true): Token {
    const token = this.tokens[this.position]!;
    return asValue && (token.type === 'in' || token.type === 'notin') ? { type: 'ident', text: token.text } : token;
  }

  private next(asValue = true): Token {
    const token = this.peek(asValue);
    if (this.position < this.tokens.length - 1) this.position++;
    return token;
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    for (;;) {
      const token = this.peek();
      if (token.type === 'end') return requirements;
      if (token.type !== 'ident' && token.type !== '!') {
        throw new SelectorError(`found '${token.text}', expected: !, identifier, or 'end of string'`);
      }
      try {
        requirements.push(this.requirement());
      } catch (error) {
        if (error instanceof SelectorError) throw new SelectorError(`unable to parse requirement: ${error.message}`);
        throw error;
      }
      const after = this.next();
      if (after.type === 'end') return requirements;
      if (after.type !== ',') throw new SelectorError(`found '${after.text}', expected: ',' or 'end of string'`);
      const following = this.peek();
      if (following.type !== 'ident' && following.type !== '!') {
        throw new SelectorError(`found '${following.text}', expected: identifier after ','`);
      }
    }
  }

  private requirement(): LabelRequirement {
    let token = this.next();
    const negated = token.type === '!';
    if (negated) token = this.next();
    if (token.type !== 'ident') throw new SelectorError(`found '${token.text}', expected: identifier`);
    const key = token.text;
    checkKey(key);
    const following = this.peek();
    if (following.type === 'end' || following.type === ',') {
      return makeRequirement(key, negated ? 'DoesNotExist' : 'Exists', []);
    }
    if (negated) throw new SelectorError(`found '${following.text}', expected: ',' or 'end of string'`);
    const opToken = this.next(false);
    const operator = OPERATORS[opToken.type];
    if (!operator) throw new SelectorError(`found '${opToken.text}', expected: in, notin, =, ==, !=, gt, lt`);
    const values = operator === 'In' || operator === 'NotIn' ? this.valueList() : [this.exactValue()];
    return makeRequirement(key, operator, values);
  }

  /** A single value after `=`, `==`, `!=`, `>`, `<`. (divergence) An empty one (`a=`) is rejected, per D-VERB-3. */
  private exactValue(): string {
    const token = this.next();
    if (token.type !== 'ident') throw new SelectorError(`found '${token.text}', expected: identifier`);
    return token.text;
  }

  /** `(v1, v2)`; as upstream, `()` and empty members such as `(a,)` stand for the empty value. */
  private valueList(): string[] {
    const open = this.next();
    if (open.type !== '(') throw new SelectorError(`found '${open.text}', expected: '('`);
    const values: string[] = [];
    let expectValue = true;
    for (;;) {
      const token = this.next();
      if (token.type === ')') {
        if (expectValue) values.push('');
        return values;
      }
      if (token.type === ',') {
        if (expectValue) values.push('');
        expectValue = true;
        continue;
      }
      if (token.type === 'ident' && expectValue) {
        values.push(token.text);
        expectValue = false;
        continue;
      }
      throw new SelectorError(`found '${token.text}', expected: ${expectValue ? "',', ')' or identifier" : "',' or ')'"}`);
    }
  }
}

const INTEGER = /^[+-]?\d+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const parseInt64 = (text: string): bigint | undefined => {
  if (!INTEGER.test(text)) return undefined;
  const value = BigInt(text);
  return value < INT64_MIN || value > INT64_MAX ? undefined : value;
};

function checkKey(key: string): void {
  const keyErrors = names.qualifiedNameErrors(key);
  if (keyErrors.length) throw new SelectorError(`invalid label key ${JSON.stringify(key)}: ${keyErrors.join('; ')}`);
}

/** Builds a validated requirement (upstream `NewRequirement`): key and value rules, value counts per operator. */
function makeRequirement(key: string, operator: LabelOperator, rawValues: readonly string[]): LabelRequirement {
  checkKey(key);
  const values = [...new Set(rawValues)].sort();
  switch (operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) throw new SelectorError("for 'in', 'notin' operators, values set can't be empty");
      break;
    case 'Equals':
    case 'DoubleEquals':
    case 'NotEquals':
      if (values.length !== 1) throw new SelectorError('exact-match compatibility requires one single value');
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length !== 0) throw new SelectorError('values set must be empty for exists and does not exist');
      break;
    case 'GreaterThan':
    case 'LessThan':
      if (values.length !== 1) throw new SelectorError("for 'Gt', 'Lt' operators, exactly one value is required");
      if (parseInt64(values[0]!) === undefined) throw new SelectorError("for 'Gt', 'Lt' operators, the value must be an integer");
      break;
  }
  for (const value of values) {
    const valueErrors = names.labelValueErrors(value);
    if (valueErrors.length) {
      throw new SelectorError(`invalid label value: ${JSON.stringify(value)}: at key: ${JSON.stringify(key)}: ${valueErrors.join('; ')}`);
    }
  }
  return { key, operator, values };
}

const byKey = (a: LabelRequirement, b: LabelRequirement): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/**
 * Parses a `labelSelector` query value (D-VERB-3). The empty text selects everything.
 *
 * @throws {SelectorError} for malformed text (`a in b`, `a=`, `=b`, `a in (b`, `a==b==c`) or keys and
 *   values that break D-META-11; messages as upstream, e.g. `unable to parse requirement: found 'b', expected: '('`.
 * @example matchesLabels(parseLabelSelector('env in (prod,dev),!legacy'), { env: 'dev' }) // → true
 */
export function parseLabelSelector(text: string): LabelSelector {
  const requirements = new Parser(lex(text)).parse();
  return { requirements: [...requirements].sort(byKey), matchesNothing: false };
}

/** Whether one requirement holds for a label set (missing keys satisfy only `!=`, `notin`, `!k`). */
export function matchesRequirement(requirement: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.hasOwn(labels, requirement.key);
  const value = has ? labels[requirement.key]! : undefined;
  switch (requirement.operator) {
    case 'Equals':
    case 'DoubleEquals':
    case 'In':
      return value !== undefined && requirement.values.includes(value);
    case 'NotEquals':
    case 'NotIn':
      return value === undefined || !requirement.values.includes(value);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'GreaterThan':
    case 'LessThan': {
      const actual = value === undefined ? undefined : parseInt64(value);
      const bound = parseInt64(requirement.values[0] ?? '');
      if (actual === undefined || bound === undefined) return false;
      return requirement.operator === 'GreaterThan' ? actual > bound : actual < bound;
    }
  }
}

/** Whether an object's labels (absent = none) satisfy every requirement of the selector. */
export function matchesLabels(selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  if (selector.matchesNothing) return false;
  const set = labels ?? {};
  return selector.requirements.every((r) => matchesRequirement(r, set));
}

const RENDERED: Record<LabelOperator, string> = {
  Equals: '=',
  DoubleEquals: '==',
  NotEquals: '!=',
  In: ' in ',
  NotIn: ' notin ',
  Exists: '',
  DoesNotExist: '!',
  GreaterThan: '>',
  LessThan: '<',
};

/** Renders a parsed selector in the canonical text form (requirements by key, list values sorted). */
export function selectorToString(selector: LabelSelector): string {
  return selector.requirements
    .map((r) => {
      switch (r.operator) {
        case 'Exists':
          return r.key;
        case 'DoesNotExist':
          return `!${r.key}`;
        case 'In':
        case 'NotIn':
          return `${r.key}${RENDERED[r.operator]}(${r.values.join(',')})`;
        default:
          return `${r.key}${RENDERED[r.operator]}${r.values[0]}`;
      }
    })
    .join(',');
}

const EXPRESSION_OPERATORS: Record<string, LabelOperator> = { In: 'In', NotIn: 'NotIn', Exists: 'Exists', DoesNotExist: 'DoesNotExist' };

/**
 * Converts a structured selector (`{matchLabels, matchExpressions}`) into a {@link LabelSelector}
 * (upstream `LabelSelectorAsSelector`): absent (`undefined`/`null`) matches nothing, `{}` matches
 * everything, `matchLabels` entries become `k=v`.
 *
 * @throws {SelectorError} for a malformed object, an unknown operator or invalid keys/values.
 */
export function labelSelectorFromObject(value: unknown): LabelSelector {
  if (value === undefined || value === null) return { requirements: [], matchesNothing: true };
  if (!json.isObject(value)) throw new SelectorError('a label selector must be an object');
  const requirements: LabelRequirement[] = [];
  const matchLabels = value['matchLabels'] ?? {};
  if (!json.isObject(matchLabels)) throw new SelectorError('matchLabels must be a map of strings');
  for (const [key, v] of Object.entries(matchLabels)) {
    if (typeof v !== 'string') throw new SelectorError(`matchLabels[${key}] must be a string`);
    requirements.push(makeRequirement(key, 'Equals', [v]));
  }
  const expressions = value['matchExpressions'] ?? [];
  if (!Array.isArray(expressions)) throw new SelectorError('matchExpressions must be a list');
  for (const expression of expressions as unknown[]) {
    if (!json.isObject(expression) || typeof expression['key'] !== 'string') throw new SelectorError('matchExpressions entries need a string key');
    const op = expression['operator'];
    const operator = typeof op === 'string' ? EXPRESSION_OPERATORS[op] : undefined;
    if (!operator) throw new SelectorError(`${JSON.stringify(op)} is not a valid label selector operator`);
    const values = expression['values'] ?? [];
    if (!Array.isArray(values) || values.some((v) => typeof v !== 'string')) throw new SelectorError('matchExpressions values must be a list of strings');
    requirements.push(makeRequirement(expression['key'], operator, values as string[]));
  }
  return { requirements: requirements.sort(byKey), matchesNothing: false };
}

/**
 * The text form of a structured selector, as Scale `status.selector` shows it for Deployments
 * (e.g. `app=w1`, `app=w1,tier in (a,b)`); an empty or absent selector renders as `''`.
 * @throws {SelectorError} as {@link labelSelectorFromObject}.
 */
export function labelSelectorToString(selector: LabelSelectorObject | undefined): string {
  return selectorToString(labelSelectorFromObject(selector));
}

// ----- field selectors -----

/** Field selector operators (D-VERB-4). */
export type FieldOperator = '=' | '==' | '!=';

export interface FieldRequirement {
  readonly field: string;
  readonly operator: FieldOperator;
  /** The unescaped value. */
  readonly value: string;
}

/** A parsed field selector: a conjunction of terms (none = everything). */
export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
}

/** Splits on unescaped commas, keeping escapes in the terms. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (escaped) escaped = false;
    else if (ch === '\\') escaped = true;
    else if (ch === ',') {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms;
}

function unescapeValue(raw: string): string {
  let out = '';
  let escaped = false;
  for (const ch of raw) {
    if (escaped) {
      if (ch !== '\\' && ch !== ',' && ch !== '=') throw new SelectorError(`invalid field selector: invalid escape sequence: \\${ch}`);
      out += ch;
      escaped = false;
    } else if (ch === '\\') {
      escaped = true;
    } else if (ch === ',' || ch === '=') {
      throw new SelectorError(`invalid field selector: unescaped character in value: ${ch}`);
    } else {
      out += ch;
    }
  }
  if (escaped) throw new SelectorError('invalid field selector: invalid escape sequence: \\');
  return out;
}

/**
 * Parses a `fieldSelector` query value (D-VERB-4): `f=v`, `f==v`, `f!=v` joined by `,`; values may
 * escape `,`, `=` and `\` with `\`. The field is everything before the first operator.
 *
 * @throws {SelectorError} for a term without an operator or a bad escape.
 * @example parseFieldSelector('metadata.name=a,status.phase!=Running')
 */
export function parseFieldSelector(text: string): FieldSelector {
  const requirements: FieldRequirement[] = [];
  for (const term of splitTerms(text).sort()) {
    if (term === '') continue;
    const match = /!=|==|=/.exec(term);
    if (!match) throw new SelectorError(`invalid selector: '${text}'; can't understand '${term}'`);
    const field = term.slice(0, match.index);
    const value = unescapeValue(term.slice(match.index + match[0].length));
    requirements.push({ field, operator: match[0] as FieldOperator, value });
  }
  return { requirements };
}

/** Whether an object satisfies a field selector; `get` returns a field's value (undefined counts as `''`). */
export function matchesFields(selector: FieldSelector, get: (field: string) => string | undefined): boolean {
  return selector.requirements.every((r) => {
    const actual = get(r.field) ?? '';
    return r.operator === '!=' ? actual !== r.value : actual === r.value;
  });
}

/** The distinct field names a selector uses, in order, for checking them against a resource's supported fields. */
export function selectorFields(selector: FieldSelector): string[] {
  return [...new Set(selector.requirements.map((r) => r.field))];
}

/** The value a selector requires for `field` through an equality term (upstream `RequiresExactMatch`). */
export function requiredValue(selector: FieldSelector, field: string): string | undefined {
  return selector.requirements.find((r) => r.field === field && r.operator !== '!=')?.value;
}

/** The name of a selector that is exactly one `metadata.name=x` (or `==`) term; otherwise undefined. */
export function exactName(selector: FieldSelector): string | undefined {
  const [only, ...rest] = selector.requirements;
  if (!only || rest.length || only.field !== 'metadata.name' || only.operator === '!=') return undefined;
  return only.value;
}

const escapeFieldValue = (value: string): string => value.replace(/[\\,=]/g, (ch) => `\\${ch}`);

/** Renders a field selector back to query form (values escaped). */
export function fieldSelectorToString(selector: FieldSelector): string {
  return selector.requirements.map((r) => `${r.field}${r.operator}${escapeFieldValue(r.value)}`).join(',');
}
