/**
 * The entries of managed webhook configurations (R-ADMISSION-7), built from the registered
 * admission handlers, the served resources and the server's latest client configuration.
 *
 * One entry per handler of a type (validating or mutating), in registration order, with the
 * conventions of Kopf that a cluster then sees: the entry's name is the handler id made a
 * lowercase DNS name plus the managed name (`validate2/spec.field` →
 * `validate2.spec.field.auto.kopf.dev`; upper case is lowered, unlike Kopf, because the API server
 * refuses it); the handler id is URL-quoted onto the server's URL or service path (so the server
 * can tell which handler is called); one rule per served resource that the handler selects, for its
 * subresource if it has one; an `objectSelector` from the literal label filters (callbacks are
 * checked per request); `sideEffects`, `failurePolicy` from the handler's flags; a 30-second
 * timeout. Pure functions: the manager that writes them to the cluster is `configuring.ts`.
 */

import * as dicts from '../../cogs/structs/dicts.js';
import type * as references from '../../cogs/structs/references.js';
import type * as webhooks from '../../cogs/structs/webhooks.js';
import * as filters from '../intents/filters.js';
import type * as handlers from '../intents/handlers.js';

/** One `matchExpressions` item of a label selector. */
export interface MatchExpression {
  readonly key: string;
  readonly operator: 'In' | 'Exists' | 'DoesNotExist';
  readonly values?: readonly string[];
}

/** One rule of a webhook entry. */
export interface WebhookRule {
  readonly apiGroups: readonly string[];
  readonly apiVersions: readonly string[];
  readonly resources: readonly string[];
  readonly operations: readonly string[];
  readonly scope: '*';
}

/** One entry of `webhooks` in a `ValidatingWebhookConfiguration`/`MutatingWebhookConfiguration`. */
export interface WebhookEntry {
  readonly name: string;
  readonly sideEffects: 'NoneOnDryRun' | 'None';
  readonly failurePolicy: 'Ignore' | 'Fail';
  readonly matchPolicy: 'Equivalent';
  readonly rules: readonly WebhookRule[];
  readonly objectSelector: { readonly matchExpressions: readonly MatchExpression[] } | null;
  readonly clientConfig: webhooks.WebhookClientConfig;
  readonly timeoutSeconds: 30;
  readonly admissionReviewVersions: readonly ['v1', 'v1beta1'];
}

const UNUSUAL = /[^a-z0-9.-]/gu;

/**
 * The name of a handler's webhook entry, as Kubernetes accepts it (a lowercase DNS name): the id
 * lowercased, `/` → `.`, `_` → `-`, then every character that is not a lowercase ASCII letter, a
 * digit, `.` or `-` → the lowercase hex of its UTF-8 bytes; plus `.<suffix>`. (Kopf keeps the case
 * and Unicode word characters, which the API server refuses in entry names.)
 *
 * @example
 * normalizeName('validate2/spec.field', 'auto.kopf.dev') // 'validate2.spec.field.auto.kopf.dev'
 * normalizeName('validate_subresources', 'auto.kopf.dev') // 'validate-subresources.auto.kopf.dev'
 * normalizeName('validateWidgets', 'auto.kopf.dev') // 'validatewidgets.auto.kopf.dev'
 */
export function normalizeName(id: string, suffix: string): string {
  const name = id
    .toLowerCase()
    .replace(/\//g, '.')
    .replace(/_/g, '-')
    .replace(UNUSUAL, (char) => Buffer.from(char, 'utf8').toString('hex'));
  return suffix ? `${name}.${suffix}` : name;
}

/**
 * Why a webhook entry name would be refused by Kubernetes (a lowercase DNS subdomain of at least
 * three segments: lowercase letters, digits, `-` and `.`, each segment starting and ending with a
 * letter or digit, at most 253 characters), or `undefined` if it is fine.
 */
export function nameProblem(name: string): string | undefined {
  if (name.length > 253) return 'it is longer than 253 characters';
  if (/[A-Z]/.test(name)) return 'it has uppercase letters';
  const segments = name.split('.');
  if (!segments.every((segment) => /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(segment))) {
    return 'it is not a DNS subdomain (lowercase letters, digits, "-" and ".", starting and ending with a letter or digit)';
  }
  if (segments.length < 3) return 'it has fewer than three dot-separated segments';
  return undefined;
}

/**
 * A handler id as the last segment(s) of a URL path: every character but ASCII letters, digits,
 * `_.-~` and `/` is percent-encoded (UTF-8), as Python's `urllib.parse.quote` does.
 *
 * @example
 * quoteId('validate2/spec.field') // 'validate2/spec.field'
 * quoteId('check it!')            // 'check%20it%21'
 */
export function quoteId(id: string): string {
  return encodeURIComponent(id)
    .replace(/%2F/gi, '/')
    .replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The server's client configuration with the handler's id appended to its URL or service path. */
export function injectHandlerId(config: webhooks.WebhookClientConfig, id: string): webhooks.WebhookClientConfig {
  const quoted = quoteId(id);
  const copy = dicts.deepCopy(config) as { -readonly [K in keyof webhooks.WebhookClientConfig]: webhooks.WebhookClientConfig[K] };
  if (typeof config.url === 'string') copy.url = `${config.url.replace(/\/+$/, '')}/${quoted}`;
  if (config.service !== undefined && config.service !== null) {
    copy.service = { ...config.service, path: `${config.service.path ?? ''}/${quoted}` };
  }
  return copy;
}

/** The `objectSelector` of a handler's label filters (callbacks skipped); `null` without any. */
export function labelsSelector(labels: handlers.WebhookHandler['labels']): WebhookEntry['objectSelector'] {
  const expressions: MatchExpression[] = [];
  for (const [key, value] of Object.entries(labels ?? {})) {
    if (value === filters.PRESENT) expressions.push({ key, operator: 'Exists' });
    else if (value === filters.ABSENT) expressions.push({ key, operator: 'DoesNotExist' });
    else if (typeof value === 'string') expressions.push({ key, operator: 'In', values: [value] });
  }
  return expressions.length > 0 ? { matchExpressions: expressions } : null;
}

/** The rules of a handler: one per served resource it selects. */
export function rulesOf(handler: handlers.WebhookHandler, resources: readonly references.Resource[]): WebhookRule[] {
  if (handler.selector === null) return [];
  return resources
    .filter((resource) => handler.selector!.check(resource))
    .map((resource) => ({
      apiGroups: [resource.group],
      apiVersions: [resource.version],
      resources: [handler.subresource === null ? resource.plural : `${resource.plural}/${handler.subresource}`],
      operations: [...(handler.operations ?? ['*'])],
      scope: '*',
    }));
}

/** What `buildWebhooks` needs besides the handlers. */
export interface BuildOptions {
  /** The served resources selected by admission handlers. */
  readonly resources: readonly references.Resource[];
  /** The managed name, the suffix of every entry's name. */
  readonly name: string;
  readonly clientConfig: webhooks.WebhookClientConfig;
  /** Only the handlers with `persistent: true` (the cleanup at exit, R-ADMISSION-8). */
  readonly persistentOnly?: boolean;
}

/**
 * The `webhooks` of a managed configuration: one entry per handler, in order (R-ADMISSION-7).
 *
 * @example
 * buildWebhooks(registry.handlers.filter(isValidating), { resources, name: 'auto.kopf.dev', clientConfig: { url } })
 */
export function buildWebhooks(list: readonly handlers.WebhookHandler[], options: BuildOptions): WebhookEntry[] {
  return list
    .filter((handler) => !options.persistentOnly || handler.persistent)
    .map((handler) => ({
      name: normalizeName(handler.id, options.name),
      sideEffects: handler.sideEffects ? 'NoneOnDryRun' : 'None',
      failurePolicy: handler.ignoreFailures ? 'Ignore' : 'Fail',
      matchPolicy: 'Equivalent',
      rules: rulesOf(handler, options.resources),
      objectSelector: labelsSelector(handler.labels),
      clientConfig: injectHandlerId(options.clientConfig, handler.id),
      timeoutSeconds: 30,
      admissionReviewVersions: ['v1', 'v1beta1'],
    }));
}
