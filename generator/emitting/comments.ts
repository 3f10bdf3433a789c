/**
 * TSDoc for generated types: what a schema node says about itself, as a comment.
 *
 * The types emitter attaches these to every declaration and property it prints. A CRD's schema
 * carries much that TypeScript cannot express — formats, numeric and length bounds, patterns, CEL
 * rules, defaults — and users see it here, in their editor's hover, instead of losing it.
 *
 * Layout (each part only when present):
 *
 *     /**
 *      * <description>
 *      *
 *      * Format: `date-time`.
 *      * Constraints: minimum 1, maxLength 63, pattern `^[a-z]+$`.
 *      * Validation rules (CEL):
 *      * - `self.size() > 0` — must not be empty
 *      * @default 3
 *      *\/
 *
 * Comment terminators are escaped (`*\/`) and `@` at the start of a word is escaped (`\@`), so
 * descriptions can neither end the comment nor be read as TSDoc tags.
 */
import ts from 'typescript';
import * as schemas from '../schemas.js';

const CONSTRAINTS = [
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
] as const;

/** The lines of a node's TSDoc (without comment delimiters); empty when there is nothing to say. */
export function docLines(node: schemas.Schema, lead: readonly string[] = []): string[] {
  const lines: string[] = [...lead];
  const description = schemas.own(node, 'description');
  if (typeof description === 'string' && description.trim()) {
    if (lines.length) lines.push('');
    lines.push(
      ...description
        .trim()
        .split(/\r?\n/)
        .map((line) => line.trimEnd()),
    );
  }
  const facts: string[] = [];
  const format = schemas.own(node, 'format');
  if (typeof format === 'string' && format) facts.push(`Format: \`${format}\`.`);
  const constraints = CONSTRAINTS.filter((key) => schemas.own(node, key) !== undefined).map((key) =>
    key === 'pattern' ? `pattern \`${String(node[key])}\`` : `${key} ${JSON.stringify(node[key])}`,
  );
  if (constraints.length) facts.push(`Constraints: ${constraints.join(', ')}.`);
  const rules = schemas.own(node, schemas.VALIDATIONS);
  if (Array.isArray(rules) && rules.length) {
    facts.push('Validation rules (CEL):');
    for (const rule of rules.filter(schemas.isRecord)) {
      const message =
        typeof rule['message'] === 'string' ? rule['message'] : typeof rule['messageExpression'] === 'string' ? `message: ${rule['messageExpression']}` : '';
      const text = `- \`${String(rule['rule']).replace(/\s*\n\s*/g, ' ')}\``;
      facts.push(message ? `${text} — ${message.replace(/\s*\n\s*/g, ' ')}` : text);
    }
  }
  if (facts.length) {
    if (lines.length) lines.push('');
    lines.push(...facts);
  }
  return lines;
}

/** The TSDoc block tags of a node (`@default`). */
export function docTags(node: schemas.Schema): string[] {
  return schemas.hasDefault(node) ? [`@default ${JSON.stringify(node['default'])}`] : [];
}

/**
 * Renders TSDoc lines and block tags as the text of a synthetic `/** … *\/` comment, escaping as
 * described above (a tag's name is kept, its value is escaped).
 */
export function commentText(lines: readonly string[], tags: readonly string[] = []): string {
  const escaped = (text: string): string => (text.includes('*/') || text.includes('@') ? text.replace(/\*\//g, '*\\/').replace(/(^|\s)@/g, '$1\\@') : text);
  const safe = [...lines.map(escaped), ...tags.map((tag) => tag.replace(/^(@\w+)(.*)$/s, (_, name: string, value: string) => name + escaped(value)))];
  if (safe.length === 1) return `* ${safe[0]} `;
  return `*\n${safe.map((line) => (line ? ` * ${line}` : ' *')).join('\n')}\n `;
}

/** Replaces a node's leading comments with the given TSDoc lines (or removes them when empty). */
export function attach<T extends ts.Node>(node: T, lines: readonly string[], tags: readonly string[] = []): T {
  if (lines.length === 0 && tags.length === 0) return ts.setSyntheticLeadingComments(node, undefined);
  return ts.setSyntheticLeadingComments(node, [
    {
      kind: ts.SyntaxKind.MultiLineCommentTrivia,
      text: commentText(lines, tags),
      hasTrailingNewLine: true,
      pos: -1,
      end: -1,
    },
  ]);
}
