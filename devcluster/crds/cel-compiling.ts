/**
 * Compiling `x-kubernetes-validations` (D-CRD-13): from a structural schema to a tree of parsed,
 * type-checked CEL programs.
 *
 * `cel.ts` calls `compileNode` once per schema (and caches the result) and evaluates the tree. Each
 * rule is parsed and checked against the environments of `cel-library.ts`; anything unusable (bad
 * syntax, unknown functions, a non-bool result, a literal regular expression Go rejects, an unknown
 * `reason`, a `fieldPath` that names no field, a messageExpression that does not compile) is
 * described in a warning line addressed like upstream's CRD validation paths
 * (`openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule`) and the rule, or only the
 * broken part of it, is left out. Subtrees without rules are pruned. `refusedRule` tells the CRD
 * validation which rules upstream would refuse outright.
 */
import type * as cel from '@marcbachmann/cel-js';
import * as celfieldpaths from './cel-fieldpaths.js';
import * as cellibrary from './cel-library.js';
import * as celregex from './cel-regex.js';
import * as celschemas from './cel-schemas.js';
import * as json from '../json.js';

/** The `reason` values a rule may declare. */
export type Reason = 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
const REASONS: readonly string[] = ['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate'];

/** One compiled rule, ready to run against a node. */
export interface CompiledRule {
  readonly rule: string;
  readonly message: string | undefined;
  readonly program: cel.ParseResult;
  readonly messageProgram: cel.ParseResult | undefined;
  readonly usesOldSelf: boolean;
  readonly optionalOldSelf: boolean;
  readonly reason: Reason;
  readonly fieldPath: readonly celfieldpaths.PathSegment[];
}

/** A schema node that has rules itself or below it; nodes without any rules are pruned. */
export interface CompiledNode {
  /** The schema typing this node's value (drives how the value is converted for CEL). */
  readonly schema: celschemas.CelSchemaNode;
  readonly typeName: string;
  readonly rules: readonly CompiledRule[];
  readonly allOf: readonly CompiledNode[];
  readonly properties: ReadonlyMap<string, CompiledNode>;
  readonly items: CompiledNode | undefined;
  readonly additionalProperties: CompiledNode | undefined;
  /** Whether the schema declares `properties` (then map values are not walked, as upstream). */
  readonly declaresProperties: boolean;
  /** Keys of a list-type=map list (items correlate with old items by these); undefined otherwise. */
  readonly listMapKeys: readonly string[] | undefined;
}

/** Whether the parsed expression refers to the variable `oldSelf` anywhere. */
function mentionsOldSelf(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(mentionsOldSelf);
  if (typeof node !== 'object' || node === null || !('op' in node) || !('args' in node)) return false;
  if (node.op === 'id') return node.args === 'oldSelf';
  return mentionsOldSelf(node.args);
}

/** The one-line text of an error thrown by the CEL evaluator (or anything else). */
export const summary = (error: unknown): string =>
  error instanceof Error ? ('summary' in error && typeof error.summary === 'string' ? error.summary : error.message.split('\n')[0]!) : String(error);

/** Parses and type-checks one expression; returns the program or a reason it was rejected. */
function compileExpression(source: string, resultType: 'bool' | 'string', env = cellibrary.environment): cel.ParseResult | string {
  let program: cel.ParseResult;
  try {
    program = env.parse(source);
  } catch (error) {
    return `compilation failed: ${summary(error)}`;
  }
  const checked = program.check();
  if (!checked.valid) return `compilation failed: ${summary(checked.error)}`;
  if (checked.type !== resultType && checked.type !== 'dyn') return `must evaluate to ${resultType}, not ${checked.type}`;
  const pattern = celregex.literalPatternError(program.ast);
  if (pattern !== undefined) return `program instantiation failed: ${pattern}`;
  return program;
}

/**
 * Why upstream refuses a CRD because of this rule, when the emulator can be sure of it: the rule
 * parses and a regex function in it has a literal pattern Go rejects (upstream compiles those when
 * it builds the rule's program). Undefined otherwise, including for rules that do not parse here.
 */
export function refusedRule(source: string): string | undefined {
  let program: cel.ParseResult;
  try {
    program = cellibrary.environment.parse(source);
  } catch {
    return undefined;
  }
  const pattern = celregex.literalPatternError(program.ast);
  return pattern === undefined ? undefined : `program instantiation failed: ${pattern}`;
}

function compileRule(raw: unknown, schema: celschemas.CelSchemaNode, where: string, warnings: string[]): CompiledRule | undefined {
  if (!json.isObject(raw) || typeof raw.rule !== 'string' || raw.rule.trim() === '') {
    warnings.push(`${where}.rule: skipped: rule must be a non-empty string`);
    return undefined;
  }
  const rule = raw.rule;
  const optionalOldSelf = raw.optionalOldSelf === true;
  const program = compileExpression(rule, 'bool', optionalOldSelf ? cellibrary.optionalOldSelfEnvironment : cellibrary.environment);
  if (typeof program === 'string') {
    warnings.push(`${where}.rule: skipped ${JSON.stringify(rule)}: ${program}`);
    return undefined;
  }
  let messageProgram: cel.ParseResult | undefined;
  if (typeof raw.messageExpression === 'string' && raw.messageExpression.trim() !== '') {
    const compiled = compileExpression(raw.messageExpression, 'string');
    if (typeof compiled === 'string') warnings.push(`${where}.messageExpression: ignored: ${compiled}`);
    else messageProgram = compiled;
  }
  let reason: Reason = 'FieldValueInvalid';
  if (raw.reason !== undefined && raw.reason !== null) {
    if (typeof raw.reason === 'string' && REASONS.includes(raw.reason)) reason = raw.reason as Reason;
    else warnings.push(`${where}.reason: ignored unsupported reason ${JSON.stringify(raw.reason)}`);
  }
  let fieldPath: celfieldpaths.PathSegment[] = [];
  if (typeof raw.fieldPath === 'string' && raw.fieldPath !== '') {
    try {
      fieldPath = celfieldpaths.parseFieldPath(raw.fieldPath, schema);
    } catch (error) {
      warnings.push(`${where}.fieldPath: ignored ${JSON.stringify(raw.fieldPath)}: ${summary(error)}`);
    }
  }
  return {
    rule,
    message: typeof raw.message === 'string' && raw.message.trim() !== '' ? raw.message.trim() : undefined,
    program,
    messageProgram,
    usesOldSelf: mentionsOldSelf(program.ast),
    optionalOldSelf,
    reason,
    fieldPath,
  };
}

/**
 * Compiles the rules of `schema` and everything below it; returns undefined when there are none.
 * `where` is the schema path used in warnings; `valueSchema` differs from `schema` only for
 * `allOf` parts, whose values are typed by the parent.
 */
export function compileNode(
  schema: celschemas.CelSchemaNode,
  where: string,
  warnings: string[],
  valueSchema: celschemas.CelSchemaNode = schema,
): CompiledNode | undefined {
  const rules: CompiledRule[] = [];
  const declared = schema['x-kubernetes-validations'];
  if (declared !== undefined && !Array.isArray(declared)) warnings.push(`${where}.x-kubernetes-validations: skipped: not a list`);
  if (Array.isArray(declared)) {
    declared.forEach((raw: unknown, i) => {
      const compiled = compileRule(raw, schema, `${where}.x-kubernetes-validations[${i}]`, warnings);
      if (compiled) rules.push(compiled);
    });
  }
  const allOf = (Array.isArray(schema.allOf) ? schema.allOf : [])
    .map((part: celschemas.CelSchemaNode, i) => (json.isObject(part) ? compileNode(part, `${where}.allOf[${i}]`, warnings, valueSchema) : undefined))
    .filter((node): node is CompiledNode => node !== undefined);
  const properties = new Map<string, CompiledNode>();
  for (const name of json.isObject(schema.properties) ? Object.keys(schema.properties) : []) {
    const child = celschemas.propertySchema(schema, name);
    const compiled = child && compileNode(child, `${where}.properties[${name}]`, warnings);
    if (compiled) properties.set(name, compiled);
  }
  const itemSchema = celschemas.itemsSchema(schema);
  const items = itemSchema && compileNode(itemSchema, `${where}.items`, warnings);
  const mapValueSchema = celschemas.additionalSchema(schema);
  const additionalProperties = mapValueSchema && compileNode(mapValueSchema, `${where}.additionalProperties`, warnings);
  if (!rules.length && !allOf.length && !properties.size && !items && !additionalProperties) return undefined;
  return {
    schema: valueSchema,
    typeName: celschemas.typeName(valueSchema),
    rules,
    allOf,
    properties,
    items,
    additionalProperties,
    declaresProperties: json.isObject(schema.properties) && Object.keys(schema.properties).length > 0,
    listMapKeys: celschemas.listMapKeys(schema),
  };
}

/** How many compiled rules the tree holds. */
export function countRules(node: CompiledNode | undefined): number {
  if (!node) return 0;
  let count = node.rules.length + countRules(node.items) + countRules(node.additionalProperties);
  for (const part of node.allOf) count += countRules(part);
  for (const child of node.properties.values()) count += countRules(child);
  return count;
}
