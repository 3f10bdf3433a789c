/**
 * Structural rules for the logic junctors of CRD schemas: `allOf`, `anyOf`, `oneOf` and `not`.
 *
 * Part of the structural-schema check (D-CRD-6, driven by `structural`). Schemas under a junctor
 * may only carry value validations: no `type`, `default`, `additionalProperties`, `title`,
 * `description`, `nullable` or `x-kubernetes-*` keys (except the int-or-string `anyOf` idiom), no
 * `metadata`, and every field they mention must also be specified in the structural part of the
 * schema, so pruning and defaulting never depend on which alternative matched.
 */

import * as fielderrors from '../meta/fielderrors.js';
import * as patterns from './patterns.js';
import * as json from '../json.js';

const JUNCTORS = ['allOf', 'anyOf', 'oneOf'] as const;

const prop = (path: string, name: string): string => `${path}.properties[${name}]`;
const sub = (path: string, key: string): string => `${path}.${key}`;

/** Checks the junctors of the structural schema node `s` located at `path`. */
export function validateJunctors(s: json.JsonObject, path: string): fielderrors.FieldError[] {
  const errors: fielderrors.FieldError[] = [];
  checkJunctors(s, path, errors);
  checkCompleteness(s, s, path, path, errors);
  return errors;
}

/** True for the int-or-string pattern `anyOf: [{type: integer}, {type: string}]` upstream allows. */
function isIntOrStringAnyOf(anyOf: unknown): boolean {
  return Array.isArray(anyOf) && anyOf.length === 2 && json.deepEqual(anyOf[0], { type: 'integer' }) && json.deepEqual(anyOf[1], { type: 'string' });
}

function checkJunctors(s: json.JsonObject, path: string, errors: fielderrors.FieldError[]): void {
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const skipAnyOf = intOrString && isIntOrStringAnyOf(s.anyOf);
  const firstAllOf = Array.isArray(s.allOf) && json.isObject(s.allOf[0]) ? s.allOf[0] : undefined;
  const skipFirstAllOfAnyOf = intOrString && firstAllOf !== undefined && isIntOrStringAnyOf(firstAllOf.anyOf);
  checkJunctorLists(s, path, skipAnyOf, skipFirstAllOfAnyOf, errors);
}

function checkJunctorLists(v: json.JsonObject, path: string, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, errors: fielderrors.FieldError[]): void {
  for (const junctor of JUNCTORS) {
    const list = v[junctor];
    if (list === undefined) continue;
    if (!Array.isArray(list)) {
      errors.push(fielderrors.invalid(sub(path, junctor), list, 'must be a list of schemas'));
      continue;
    }
    if (junctor === 'anyOf' && skipAnyOf) continue;
    list.forEach((nested, i) => checkNested(nested, `${path}.${junctor}[${i}]`, junctor === 'allOf' && i === 0 && skipFirstAllOfAnyOf, errors));
  }
  if (v.not !== undefined) checkNested(v.not, sub(path, 'not'), false, errors);
}

/** A schema under a logic junctor: value validations only, no structure. */
function checkNested(v: unknown, path: string, skipAnyOf: boolean, errors: fielderrors.FieldError[]): void {
  if (!json.isObject(v)) {
    errors.push(fielderrors.invalid(path, v, 'must be a schema object'));
    return;
  }
  checkJunctorLists(v, path, skipAnyOf, false, errors);
  if (v.items !== undefined) checkNested(v.items, sub(path, 'items'), false, errors);
  if (json.isObject(v.properties)) {
    for (const [name, child] of Object.entries(v.properties)) checkNested(child, prop(path, name), false, errors);
    if (Object.hasOwn(v.properties, 'metadata')) {
      errors.push(fielderrors.forbidden(prop(path, 'metadata'), 'must not be specified in a nested context'));
    }
  }
  const forbid = (key: string, detail: string): void => {
    errors.push(fielderrors.forbidden(sub(path, key), detail));
  };
  if (typeof v.type === 'string' && v.type !== '') forbid('type', 'must be empty to be structural');
  if (v.additionalProperties !== undefined) forbid('additionalProperties', 'must be undefined to be structural');
  if (v.default !== undefined && v.default !== null) forbid('default', 'must be undefined to be structural');
  if (typeof v.title === 'string' && v.title !== '') forbid('title', 'must be empty to be structural');
  if (typeof v.description === 'string' && v.description !== '') forbid('description', 'must be empty to be structural');
  if (v.nullable === true) forbid('nullable', 'must be false to be structural');
  if (v['x-kubernetes-preserve-unknown-fields'] === true) forbid('x-kubernetes-preserve-unknown-fields', 'must be false to be structural');
  if (v['x-kubernetes-embedded-resource'] === true) forbid('x-kubernetes-embedded-resource', 'must be false to be structural');
  if (v['x-kubernetes-int-or-string'] === true) forbid('x-kubernetes-int-or-string', 'must be false to be structural');
  if (Array.isArray(v['x-kubernetes-list-map-keys']) && v['x-kubernetes-list-map-keys'].length > 0) {
    forbid('x-kubernetes-list-map-keys', 'must be empty to be structural');
  }
  if (v['x-kubernetes-list-type'] !== undefined) forbid('x-kubernetes-list-type', 'must be undefined to be structural');
  if (v['x-kubernetes-map-type'] !== undefined) forbid('x-kubernetes-map-type', 'must be undefined to be structural');
  if (typeof v.pattern === 'string') {
    const compiled = patterns.compilePattern(v.pattern);
    if (!compiled.ok) errors.push(fielderrors.invalid(sub(path, 'pattern'), v.pattern, `must be a valid regular expression, but isn't: ${compiled.reason}`));
  }
}

/** Every field or array specified under a junctor must also be specified in the structural part. */
function checkCompleteness(v: json.JsonObject, s: json.JsonObject | undefined, sPath: string, vPath: string, errors: fielderrors.FieldError[]): void {
  const visit = (nested: unknown, nestedPath: string): void => {
    if (!json.isObject(nested)) return;
    checkNestedCompleteness(nested, s, sPath, nestedPath, errors);
  };
  for (const junctor of JUNCTORS) {
    const list = v[junctor];
    if (Array.isArray(list)) list.forEach((nested, i) => visit(nested, `${vPath}.${junctor}[${i}]`));
  }
  if (v.not !== undefined) visit(v.not, sub(vPath, 'not'));
}

function checkNestedCompleteness(v: json.JsonObject, s: json.JsonObject | undefined, sPath: string, vPath: string, errors: fielderrors.FieldError[]): void {
  if (!s) {
    errors.push(fielderrors.required(sPath, `because it is defined in ${vPath}`));
    return;
  }
  checkCompleteness(v, s, sPath, vPath, errors);
  if (json.isObject(v.items)) {
    checkNestedCompleteness(v.items, json.isObject(s.items) ? s.items : undefined, sub(sPath, 'items'), sub(vPath, 'items'), errors);
  }
  if (json.isObject(v.properties)) {
    const sProps = json.isObject(s.properties) ? s.properties : {};
    for (const [name, nested] of Object.entries(v.properties)) {
      if (!json.isObject(nested)) continue;
      const structural = Object.hasOwn(sProps, name) && json.isObject(sProps[name]) ? sProps[name] : undefined;
      if (!structural) errors.push(fielderrors.required(prop(sPath, name), `because it is defined in ${prop(vPath, name)}`));
      else checkNestedCompleteness(nested, structural, prop(sPath, name), prop(vPath, name), errors);
    }
  }
}
