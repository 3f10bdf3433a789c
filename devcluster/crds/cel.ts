/**
 * CEL validation rules of custom resources (`x-kubernetes-validations`, D-CRD-13, best effort).
 *
 * `compileRules` walks a version's structural schema once, compiles every rule (`cel-compiling.ts`,
 * against the environments of `cel-library.ts`), and remembers the result per schema object. Rules that cannot
 * be compiled (syntax errors, unknown functions, non-bool results, bad `fieldPath`) are skipped and
 * listed in `warnings`, so the CRD write can surface them; they never pass silently. `evaluateRules`
 * then validates an object (and, on updates, its old version) and returns field errors for the
 * request pipeline. Whether CEL runs at all is the caller's decision.
 *
 * Semantics follow upstream: `self` is bound to each present, non-null node; `oldSelf` to the old
 * value correlated through object properties, map keys and list-type=map items (never through
 * atomic or set lists); rules that use `oldSelf` are skipped without an old value unless
 * `optionalOldSelf` makes `oldSelf` an optional. A failing rule reports `Invalid value: "<type>":
 * <message>` (or Forbidden/Required/Duplicate per `reason`) on the node's path plus `fieldPath`.
 *
 * Supported: standard CEL, optional values, the Kubernetes list, string, regex and URL libraries, and
 * `isIP`/`isCIDR` (see `cel-library.ts`). Not supported: the quantity library and full IP/CIDR
 * objects, `format`-based typing (date-time strings stay strings, not timestamps), schema-derived
 * static typing (errors upstream reports when the CRD is written appear at evaluation time),
 * order-insensitive equality of set/map lists, cost budgets and validation ratcheting.
 */
import * as cel from '@marcbachmann/cel-js';
import * as fielderrors from '../meta/fielderrors.js';
import * as celcompiling from './cel-compiling.js';
import type * as celfieldpaths from './cel-fieldpaths.js';
import * as cellibrary from './cel-library.js';
import * as celregex from './cel-regex.js';
import * as celschemas from './cel-schemas.js';
import * as json from '../json.js';

export type { CelSchemaNode, CelValidationRule } from './cel-schemas.js';
export type { CompiledNode, CompiledRule } from './cel-compiling.js';

type CompiledNode = celcompiling.CompiledNode;
type CompiledRule = celcompiling.CompiledRule;

/** The result of compiling one schema. */
export interface CompiledRules {
  /** The rule tree, or undefined when the schema has no usable rule. */
  readonly root: CompiledNode | undefined;
  /** How many rules compiled and will be evaluated. */
  readonly ruleCount: number;
  /** One line per skipped rule (or skipped part of a rule), naming its place in the schema. */
  readonly warnings: readonly string[];
}

const cache = new WeakMap<object, CompiledRules>();

/**
 * Compiles every `x-kubernetes-validations` rule of a structural schema (one CRD version's
 * `openAPIV3Schema`). Never throws: rules that cannot be compiled are skipped and described in
 * `warnings` (paths start at `openAPIV3Schema`). Results are cached per schema object, so callers
 * may compile on every request; do not mutate a schema after compiling it.
 */
export function compileRules(schema: celschemas.CelSchemaNode): CompiledRules {
  const cached = cache.get(schema);
  if (cached) return cached;
  const warnings: string[] = [];
  const root = json.isObject(schema) ? celcompiling.compileNode(schema, 'openAPIV3Schema', warnings) : undefined;
  const compiled: CompiledRules = { root, ruleCount: celcompiling.countRules(root), warnings };
  if (typeof schema === 'object' && schema !== null) cache.set(schema, compiled);
  return compiled;
}

/** Where a value's old counterpart stands: absent (create, new field, uncorrelatable) or present. */
type Old = { readonly present: false } | { readonly present: true; readonly value: unknown };
const ABSENT: Old = { present: false };
const oldOf = (value: unknown): Old => (value === undefined || value === null ? ABSENT : { present: true, value });

function render(path: string, segments: readonly celfieldpaths.PathSegment[]): string {
  return segments.reduce((out, s) => (s.asMapKey ? `${out}[${s.name}]` : fielderrors.child(out, s.name)), path);
}

function errorForReason(reason: celcompiling.Reason, field: string, typeName: string, detail: string): fielderrors.FieldError {
  switch (reason) {
    case 'FieldValueForbidden':
      return fielderrors.forbidden(field, detail);
    case 'FieldValueRequired':
      return fielderrors.required(field, detail);
    case 'FieldValueDuplicate':
      return fielderrors.duplicate(field, typeName);
    default:
      return fielderrors.invalid(field, typeName, detail);
  }
}

/** The text used for a failed rule when `messageExpression` is absent or unusable. */
const defaultMessage = (rule: CompiledRule): string => rule.message ?? `failed rule: ${rule.rule.trim()}`;

/** Upstream falls back to the default message when messageExpression fails, is blank or spans lines. */
function evaluateMessage(rule: CompiledRule, context: Record<string, unknown>): string {
  if (!rule.messageProgram) return defaultMessage(rule);
  try {
    const text: unknown = rule.messageProgram(context);
    if (typeof text !== 'string') return defaultMessage(rule);
    const trimmed = text.trim();
    return trimmed === '' || /[\r\n]/.test(trimmed) || trimmed.length > 5000 ? defaultMessage(rule) : trimmed;
  } catch {
    return defaultMessage(rule);
  }
}

/** The detail of an evaluation error, worded as upstream does. */
function evaluationDetail(rule: CompiledRule, error: unknown): string {
  const which = rule.message ?? rule.rule.trim();
  const text = celcompiling.summary(error);
  const code = error instanceof cel.EvaluationError ? error.code : '';
  if (code === 'no_such_overload' || code === 'no_matching_overload') {
    return `'${text}': call arguments did not match a supported operator, function or macro signature for rule: ${which}`;
  }
  if (code === celregex.INVALID_PATTERN) return `${text} evaluating rule: ${which}`;
  return `${text.charAt(0).toLowerCase()}${text.slice(1)} evaluating rule: ${which}`;
}

function runRules(node: CompiledNode, raw: unknown, rawOld: Old, path: string, errors: fielderrors.FieldError[]): void {
  if (node.rules.length === 0) return;
  const value = celschemas.toCelValue(raw, node.schema);
  const old: Old = rawOld.present ? { present: true, value: celschemas.toCelValue(rawOld.value, node.schema) } : ABSENT;
  for (const rule of node.rules) {
    if (rule.usesOldSelf && !old.present && !rule.optionalOldSelf) continue;
    const context: Record<string, unknown> = { self: value };
    if (old.present) context.oldSelf = old.value;
    const ruleContext = rule.optionalOldSelf ? { self: value, oldSelf: old.present ? cel.Optional.of(old.value) : cel.Optional.none() } : context;
    let result: unknown;
    try {
      result = rule.program(ruleContext);
    } catch (error) {
      errors.push(fielderrors.invalid(path, node.typeName, evaluationDetail(rule, error)));
      continue;
    }
    if (result === true) continue;
    if (result !== false) {
      errors.push(fielderrors.invalid(path, node.typeName, evaluationDetail(rule, new Error('rule did not evaluate to a bool'))));
      continue;
    }
    const field = render(path, rule.fieldPath);
    errors.push(errorForReason(rule.reason, field, node.typeName, evaluateMessage(rule, context)));
  }
}

/** Finds the old item of a list-type=map list with the same key values as `item`. */
function correlateItem(keys: readonly string[], item: unknown, oldList: readonly unknown[]): Old {
  if (!json.isObject(item)) return ABSENT;
  const match = oldList.find((candidate) => json.isObject(candidate) && keys.every((k) => cellibrary.celEquals(candidate[k], item[k])));
  return oldOf(match);
}

function walk(node: CompiledNode, value: unknown, old: Old, path: string, errors: fielderrors.FieldError[]): void {
  if (value === undefined || value === null) return;
  runRules(node, value, old, path, errors);
  for (const part of node.allOf) walk(part, value, old, path, errors);
  const oldValue = old.present ? old.value : undefined;
  if (Array.isArray(value)) {
    const items = node.items;
    if (!items) return;
    const oldList = Array.isArray(oldValue) ? oldValue : undefined;
    value.forEach((item, i) => {
      const oldItem = oldList && node.listMapKeys ? correlateItem(node.listMapKeys, item, oldList) : ABSENT;
      walk(items, item, oldItem, `${path}[${i}]`, errors);
    });
    return;
  }
  if (!json.isObject(value)) return;
  const oldObject = json.isObject(oldValue) ? oldValue : undefined;
  const oldMember = (key: string): Old => (oldObject && Object.hasOwn(oldObject, key) ? oldOf(oldObject[key]) : ABSENT);
  for (const [name, child] of node.properties) {
    if (Object.hasOwn(value, name)) walk(child, value[name], oldMember(name), fielderrors.child(path, name), errors);
  }
  const values = node.additionalProperties;
  if (!values || node.declaresProperties) return;
  for (const key of Object.keys(value)) {
    walk(values, value[key], oldMember(key), fielderrors.child(path, key, true), errors);
  }
}

/**
 * Evaluates compiled rules against `obj` (the whole object, as stored) and, on updates, `oldObj`
 * (pass undefined on create). Returns one field error per failed rule or evaluation error, in
 * schema walk order; an empty list means every rule passed. Never mutates its inputs.
 */
export function evaluateRules(compiled: CompiledRules, obj: unknown, oldObj: unknown | undefined): fielderrors.FieldError[] {
  const errors: fielderrors.FieldError[] = [];
  if (compiled.root) walk(compiled.root, obj, oldOf(oldObj), '', errors);
  return errors;
}
