/**
 * Label selectors evaluated in memory: the string syntax of `?labelSelector=` (`app=web`,
 * `tier!=db`, `env in (a,b)`, `env notin (c)`, `gpu`, `!legacy`), parsed once and matched against
 * an object's labels.
 *
 * The typed client answers lists of cached kinds from the watch cache, without a request; the
 * selector the caller wrote must then select exactly what the API server would have selected.
 * The grammar and the semantics are kube-apiserver's (`k8s.io/apimachinery/pkg/labels`): the
 * requirements are ANDed; `!=` and `notin` also match objects without the key; `=` and `==` are
 * the same. A selector the grammar rejects is a `LabelSelectorError`, as the server's 400 would be.
 */

import { LabelSelectorError } from './errors.js';

export { LabelSelectorError } from './errors.js';

/** One requirement of a selector. */
export type LabelRequirement =
  | { readonly key: string; readonly op: 'in' | 'notin'; readonly values: readonly string[] }
  | { readonly key: string; readonly op: 'exists' | '!' };

/** Splits on commas that are not inside parentheses. */
function splitTop(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

const KEY = /^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

function checked(text: string, pattern: RegExp, what: string, selector: string): string {
  if (!pattern.test(text))
    throw new LabelSelectorError(`Invalid label selector ${JSON.stringify(selector)}: ${JSON.stringify(text)} is not a valid label ${what}.`);
  return text;
}

function requirementOf(part: string, selector: string): LabelRequirement {
  const text = part.trim();
  const set = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(text);
  if (set !== null) {
    if (set[3]!.trim() === '') throw new LabelSelectorError(`Invalid label selector ${JSON.stringify(selector)}: '${set[2]}' needs at least one value.`);
    const values = set[3]!.split(',').map((v) => checked(v.trim(), VALUE, 'value', selector));
    return { key: checked(set[1]!, KEY, 'key', selector), op: set[2] as 'in' | 'notin', values };
  }
  const binary = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(text);
  if (binary !== null) {
    const key = checked(binary[1]!, KEY, 'key', selector);
    const value = checked(binary[3]!.trim(), VALUE, 'value', selector);
    return { key, op: binary[2] === '!=' ? 'notin' : 'in', values: [value] };
  }
  if (text.startsWith('!')) return { key: checked(text.slice(1).trim(), KEY, 'key', selector), op: '!' };
  return { key: checked(text, KEY, 'key', selector), op: 'exists' };
}

/**
 * The requirements of a selector string; the empty selector has none (it selects everything).
 *
 * @throws LabelSelectorError on a malformed selector.
 * @example
 * parseLabelSelector('app=web,tier notin (db)') // [{ key: 'app', op: 'in', values: ['web'] }, { key: 'tier', op: 'notin', values: ['db'] }]
 */
export function parseLabelSelector(selector: string): LabelRequirement[] {
  if (selector.trim() === '') return [];
  return splitTop(selector).map((part) => requirementOf(part, selector));
}

/** Whether labels satisfy every requirement. */
export function matchesLabels(requirements: readonly LabelRequirement[], labels: Readonly<Record<string, string>> | undefined): boolean {
  return requirements.every((requirement) => {
    const value = labels?.[requirement.key];
    switch (requirement.op) {
      case 'exists':
        return value !== undefined;
      case '!':
        return value === undefined;
      case 'in':
        return value !== undefined && requirement.values.includes(value);
      case 'notin':
        return value === undefined || !requirement.values.includes(value);
    }
  });
}
