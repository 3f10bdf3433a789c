/**
 * CEL's regular-expression functions with Go's semantics (RE2, see `regexes.ts`), as upstream
 * evaluates them: standard CEL's `matches` (method and global function) and the Kubernetes regex
 * library's `find` and `findAll`. `cel-library.ts` registers them with `register`.
 *
 * cel-js declares `string.matches(string)` itself, with JavaScript's RegExp, and refuses a second
 * declaration for strings. A macro takes its place: cel-js looks macros up by name and arity alone,
 * so a macro declared on a receiver type that never calls `matches` (`bool`) expands every
 * `x.matches(p)` at parse time, and its hooks type-check and evaluate it like
 * `string.matches(string)`, with RE2.
 *
 * Upstream compiles a literal pattern when it builds a rule's program, that is when the CRD is
 * written, and refuses the CRD if Go rejects the pattern; `literalPatternError` finds such a
 * pattern in a parsed rule. A pattern computed at run time fails when evaluated, with upstream's
 * text: `error parsing regexp: …` for `matches`, `Illegal regex: error parsing regexp: …` for
 * `find` and `findAll` (code `INVALID_PATTERN`).
 */
import * as cel from '@marcbachmann/cel-js';
import * as regexes from './regexes.js';

/** The code of evaluation errors for invalid patterns; their text is upstream's, verbatim. */
export const INVALID_PATTERN = 'invalid_pattern';

/** What the macro hooks use of cel-js' type checker and evaluator (not part of its typings). */
interface CelType {
  readonly kind: string;
  readonly name: string;
}
interface Checker {
  check(node: unknown, ctx: unknown): CelType;
  getType(name: string): CelType;
  createError(code: string, message: string, node: unknown): Error;
}
interface Evaluator {
  run(node: unknown, ctx: unknown): unknown;
  debugType(value: unknown): CelType;
}
/** What cel-js passes a macro at parse time. */
interface MacroCall {
  readonly ast: unknown;
  readonly receiver: unknown;
  readonly args: readonly unknown[];
}

function compiled(pattern: string, prefix: string, node?: unknown): regexes.Regex {
  const result = regexes.compile(pattern);
  if (result.ok) return result.regex;
  throw new cel.EvaluationError({ code: INVALID_PATTERN, message: `${prefix}${result.reason}`, node: node as cel.ASTNode | undefined });
}

const matches = (text: string, pattern: string, node?: unknown): boolean => compiled(pattern, '', node).test(text);
const find = (text: string, pattern: string): string => compiled(pattern, 'Illegal regex: ').find(text) ?? '';
const findAll = (text: string, pattern: string, limit: bigint): string[] => compiled(pattern, 'Illegal regex: ').findAll(text, Number(limit));

const isStringLike = (type: CelType): boolean => type.kind === 'dyn' || type.name === 'string';

/** `x.matches(p)`: accepted and evaluated exactly where `string.matches(string)` would be. */
function matchesMacro({ ast, receiver, args }: MacroCall): object {
  const pattern = args[0];
  const noOverload = (text: string, pat: string): string => `found no matching overload for '${text}.matches(${pat})'`;
  return {
    typeCheck(checker: Checker, _macro: unknown, ctx: unknown): CelType {
      const types = [checker.check(receiver, ctx), checker.check(pattern, ctx)] as const;
      if (types.every(isStringLike)) return checker.getType('bool');
      throw checker.createError('no_matching_overload', noOverload(types[0].name, types[1].name), ast);
    },
    evaluate(ev: Evaluator, _macro: unknown, ctx: unknown): boolean {
      const text = ev.run(receiver, ctx);
      const pat = ev.run(pattern, ctx);
      if (typeof text === 'string' && typeof pat === 'string') return matches(text, pat, ast);
      const message = noOverload(ev.debugType(text).name, ev.debugType(pat).name);
      throw new cel.EvaluationError({ code: 'no_matching_overload', message, node: ast as cel.ASTNode });
    },
  };
}

/** Adds the RE2 `matches`, `find` and `findAll` to an environment. */
export function register(env: cel.Environment): void {
  env.registerFunction('bool.matches(ast): bool', matchesMacro);
  env.registerFunction('matches(string, string): bool', (text: string, pattern: string) => matches(text, pattern));
  env.registerFunction('string.find(string): string', find);
  env.registerFunction('string.findAll(string): list<string>', (text: string, pattern: string) => findAll(text, pattern, -1n));
  env.registerFunction('string.findAll(string, int): list<string>', findAll);
}

/** A parsed AST node as cel-js builds it: an operator and its arguments. */
interface Node {
  readonly op: string;
  readonly args: unknown;
}
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && 'op' in value && 'args' in value;

/** The pattern argument of a `matches`, `find` or `findAll` call, if `node` is one. */
function patternArgument(node: Node): unknown {
  if (!Array.isArray(node.args)) return undefined;
  if (node.op === 'rcall') {
    const [name, , args] = node.args as [unknown, unknown, unknown[]];
    const arity = name === 'findAll' ? [1, 2] : name === 'matches' || name === 'find' ? [1] : [];
    return arity.includes(args.length) ? args[0] : undefined;
  }
  if (node.op === 'call') {
    const [name, args] = node.args as [unknown, unknown[]];
    return name === 'matches' && args.length === 2 ? args[1] : undefined;
  }
  return undefined;
}

/**
 * Go's error for the first string literal in a parsed expression (`program.ast`) that is the
 * pattern of a regex function and that Go refuses; undefined when there is none.
 */
export function literalPatternError(ast: unknown): string | undefined {
  if (Array.isArray(ast)) {
    for (const item of ast) {
      const error = literalPatternError(item);
      if (error !== undefined) return error;
    }
    return undefined;
  }
  if (!isNode(ast)) return undefined;
  const pattern = patternArgument(ast);
  if (isNode(pattern) && pattern.op === 'value' && typeof pattern.args === 'string') {
    const result = regexes.compile(pattern.args);
    if (!result.ok) return result.reason;
  }
  return literalPatternError(ast.args);
}
