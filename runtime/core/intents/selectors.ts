/**
 * Resource references as users write them, and how they select discovered resources (R-RES-1..6).
 *
 * Every registration function takes a `ResourceRef`: a typed descriptor (`Widgets`), a string
 * (`'kopfexamples.kopf.dev'`), a tuple (`['kopf.dev', 'v1', 'kopfexamples']`), `EVERYTHING`, an object
 * selector (`{ category: 'all' }`) or a predicate over discovered resources. `parseSelector()` turns
 * any of them into one `Selector` value at registration time (rejecting malformed references with a
 * `TypeError`); the reactor later matches selectors against the `Resource[]` that discovery reports
 * (`cogs/structs/references`), and `reviseResources()` decides what is served, with Kopf's warnings
 * about ambiguous, unresolved, non-watchable and non-patchable resources.
 *
 * Kopf calls this `references.Selector`; the registry (`registry.ts`) keeps one per handler.
 */

import * as references from '../../cogs/structs/references.js';
import * as resources from '../../cogs/structs/resources.js';
import type * as loggers from '../../cogs/structs/loggers.js';

/** The marker for "all resources" (except events, R-RES-6). Kopf: `kopf.EVERYTHING`. */
export const EVERYTHING: unique symbol = Symbol.for('kopf.EVERYTHING');
export type Everything = typeof EVERYTHING;

/** An explicit selector object: one name attribute (or a category), optionally a group and version. */
export interface ResourceSelectorObject {
  readonly group?: string;
  readonly version?: string;
  readonly kind?: string;
  readonly plural?: string;
  readonly singular?: string;
  readonly shortcut?: string;
  readonly category?: string;
}

/** A predicate over discovered resources; it sees every version, not only the preferred one. */
export type ResourcePredicate = (resource: references.Resource) => boolean;

/** Everything a registration function accepts as a resource reference (R-API-2). */
export type ResourceRef =
  | resources.ResourceDescriptor<resources.KubernetesObject>
  | string
  | readonly [string, string]
  | readonly [string, string, string]
  | Everything
  | readonly [string, Everything]
  | readonly [string, string, Everything]
  | ResourceSelectorObject
  | ResourcePredicate;

const VERSION = /^v\d+(?:(?:alpha|beta)\d+)?$/;
const NAME_KEYS = ['kind', 'plural', 'singular', 'shortcut', 'category'] as const;
const OBJECT_KEYS = new Set<string>(['group', 'version', ...NAME_KEYS]);

/**
 * A parsed resource reference. `null` means "not specified" (any); `group: ''` is the core group.
 * Instances are immutable and compared by identity (one per registration).
 */
export class Selector {
  readonly group: string | null;
  readonly version: string | null;
  readonly kind: string | null;
  readonly plural: string | null;
  readonly singular: string | null;
  readonly shortcut: string | null;
  readonly category: string | null;
  /** A name matching kind, plural, singular or any short name; or `EVERYTHING`. */
  readonly anyName: string | Everything | null;
  readonly predicate: ResourcePredicate | null;

  constructor(fields: Partial<Pick<Selector, 'group' | 'version' | 'kind' | 'plural' | 'singular' | 'shortcut' | 'category' | 'anyName' | 'predicate'>>) {
    this.group = fields.group ?? null;
    this.version = fields.version ?? null;
    this.kind = fields.kind ?? null;
    this.plural = fields.plural ?? null;
    this.singular = fields.singular ?? null;
    this.shortcut = fields.shortcut ?? null;
    this.category = fields.category ?? null;
    this.anyName = fields.anyName ?? null;
    this.predicate = fields.predicate ?? null;
    Object.freeze(this);
  }

  /** Specific selectors name one resource; they get core priority and the ambiguity check (R-RES-4/5). */
  get isSpecific(): boolean {
    return this.kind !== null || this.plural !== null || this.singular !== null || this.shortcut !== null || typeof this.anyName === 'string';
  }

  /** Whether one discovered resource matches (R-RES-2/3/6), ignoring core priority. */
  check(resource: references.Resource): boolean {
    if (this.group !== null && this.group !== resource.group) return false;
    if (this.version !== null ? this.version !== resource.version : this.predicate === null && !resource.preferred) return false;
    if (this.kind !== null && this.kind !== resource.kind) return false;
    if (this.plural !== null && this.plural !== resource.plural) return false;
    if (this.singular !== null && this.singular !== resource.singular) return false;
    if (this.shortcut !== null && !resource.shortcuts.includes(this.shortcut)) return false;
    if (this.category !== null && !resource.categories.includes(this.category)) return false;
    if (this.anyName === EVERYTHING && isEvents(resource)) return false;
    if (typeof this.anyName === 'string' && !matchesAnyName(this.anyName, resource)) return false;
    if (this.predicate !== null && (isEvents(resource) || !this.predicate(resource))) return false;
    return true;
  }

  /** The matching resources, with core-group priority for specific selectors (R-RES-4). */
  select(candidates: Iterable<references.Resource>): references.Resource[] {
    const matched = [...candidates].filter((resource) => this.check(resource));
    if (this.isSpecific && matched.some((resource) => resource.group === '')) {
      return matched.filter((resource) => resource.group === '');
    }
    return matched;
  }

  /** A readable form for logs, e.g. `Selector(group='kopf.dev', any_name='kopfexamples')`. */
  toString(): string {
    const parts: string[] = [];
    const add = (key: string, value: string | null): void => {
      if (value !== null) parts.push(`${key}='${value}'`);
    };
    add('group', this.group);
    add('version', this.version);
    add('kind', this.kind);
    add('plural', this.plural);
    add('singular', this.singular);
    add('shortcut', this.shortcut);
    add('category', this.category);
    if (this.anyName === EVERYTHING) parts.push('any_name=EVERYTHING');
    else add('any_name', this.anyName);
    if (this.predicate !== null) parts.push(`predicate=${this.predicate.name || '<function>'}`);
    return `Selector(${parts.join(', ')})`;
  }
}

function isEvents(resource: references.Resource): boolean {
  return resource.plural === 'events' && (resource.group === '' || resource.group === 'events.k8s.io');
}

function matchesAnyName(name: string, resource: references.Resource): boolean {
  return name === resource.kind || name === resource.plural || name === resource.singular || resource.shortcuts.includes(name);
}

function checkName(name: unknown, what: string): string {
  if (typeof name !== 'string') throw new TypeError(`A resource ${what} must be a string, got ${String(name)}.`);
  if (name === '') throw new TypeError(`A resource ${what} must not be empty.`);
  return name;
}

function nameOrEverything(name: unknown): string | Everything {
  return name === EVERYTHING ? EVERYTHING : checkName(name, 'name');
}

function parseString(text: string): Selector {
  checkName(text, 'name');
  const dot = text.indexOf('.');
  if (dot < 0) return new Selector({ anyName: text });
  const name = checkName(text.slice(0, dot), 'name');
  const rest = text.slice(dot + 1);
  const [first = '', ...others] = rest.split('.');
  if (VERSION.test(first)) {
    const group = others.join('.');
    return new Selector({ anyName: name, version: first, group: group === '' ? null : group });
  }
  return new Selector({ anyName: name, group: checkName(rest, 'group') });
}

function parseTuple(parts: readonly unknown[]): Selector {
  if (parts.length > 3) throw new TypeError(`Too many positional parts of a resource reference (at most 3): ${parts.length}.`);
  if (parts.length === 3) {
    const [group, version, name] = parts;
    if (typeof group !== 'string') throw new TypeError('A resource group must be a string.');
    return new Selector({ group, version: checkName(version, 'version'), anyName: nameOrEverything(name) });
  }
  if (parts.length === 2) {
    const [first, name] = parts;
    const groupVersion = checkName(first, 'group');
    const anyName = nameOrEverything(name);
    const slash = groupVersion.indexOf('/');
    if (slash >= 0) {
      return new Selector({ group: groupVersion.slice(0, slash), version: checkName(groupVersion.slice(slash + 1), 'version'), anyName });
    }
    if (groupVersion === 'v1') return new Selector({ group: '', version: 'v1', anyName });
    return new Selector({ group: groupVersion, anyName });
  }
  if (parts.length === 1) return parseRef(parts[0] as ResourceRef);
  throw new TypeError('A resource reference must not be empty.');
}

function parseObject(obj: ResourceSelectorObject): Selector {
  const unknown = Object.keys(obj).filter((key) => !OBJECT_KEYS.has(key));
  if (unknown.length > 0) throw new TypeError(`Unknown resource selector keys: ${unknown.join(', ')}.`);
  const names = NAME_KEYS.filter((key) => obj[key] !== undefined && obj[key] !== null);
  if (names.length !== 1) {
    throw new TypeError(`A resource selector needs exactly one of ${NAME_KEYS.join(', ')}; got ${names.length ? names.join(', ') : 'none'}.`);
  }
  for (const key of names) checkName(obj[key], key);
  if (obj.group !== undefined && obj.group !== null && typeof obj.group !== 'string') throw new TypeError('A resource group must be a string.');
  if (obj.version !== undefined && obj.version !== null) checkName(obj.version, 'version');
  return new Selector({ ...obj });
}

/**
 * Parses a resource reference into a selector (R-RES-1/2). Throws `TypeError` for references with
 * more than three positional parts, empty names, or object selectors with zero or several names.
 *
 * @example
 * parseSelector('kopfexamples.v1.kopf.dev') // group 'kopf.dev', version 'v1', any name 'kopfexamples'
 * parseSelector(['v1', 'pods'])            // core group, version 'v1'
 * parseSelector({ category: 'all' })       // every resource in the category
 */
export function parseSelector(ref: ResourceRef): Selector {
  return parseRef(ref);
}

function parseRef(ref: ResourceRef): Selector {
  if (ref === EVERYTHING) return new Selector({ anyName: EVERYTHING });
  if (typeof ref === 'string') return parseString(ref);
  if (typeof ref === 'function') return new Selector({ predicate: ref });
  if (Array.isArray(ref)) return parseTuple(ref);
  if (resources.isDescriptor(ref)) {
    return new Selector({ group: ref.group, version: checkName(ref.version, 'version'), plural: checkName(ref.plural, 'plural') });
  }
  if (typeof ref === 'object' && ref !== null) return parseObject(ref as ResourceSelectorObject);
  throw new TypeError(`Unsupported resource reference: ${String(ref)}.`);
}

/** Which handler families use a selector; it decides the checks of `reviseResources()`. */
export interface SelectorUsage {
  /** Selectors of on-event, daemon, timer and change handlers: served, checked for ambiguity. */
  readonly watched: Iterable<Selector>;
  /** Selectors of daemon, timer and change handlers: their resources must be patchable (R-RES-9). */
  readonly patched: Iterable<Selector>;
  /** Selectors of index handlers: served, but exempt from the ambiguity check (R-RES-5). */
  readonly indexed?: Iterable<Selector>;
  /** Selectors of admission handlers: matched per request, never watched (R-RES-5). */
  readonly webhooks?: Iterable<Selector>;
}

/** What `reviseResources()` decided. */
export interface RevisedResources {
  /** Resources to list and watch (for all watching handler families, indexers included). */
  readonly watched: references.Resource[];
  /** Resources selected by admission handlers. */
  readonly webhooks: references.Resource[];
  /** Warnings, as also sent to the logger (R-RES-5, R-RES-9). */
  readonly warnings: string[];
}

const names = (list: Iterable<references.Resource>): string => [...list].map(references.resourceName).join(', ');

/**
 * Decides which discovered resources are served (Kopf: `revise_resources`): selects resources for
 * every selector, drops the resources of ambiguous specific selectors (R-RES-5), warns about
 * selectors that match nothing, drops non-watchable resources, and drops non-patchable resources if
 * a daemon, timer or change handler selects them (R-RES-9). Pure apart from the optional logger.
 */
export function reviseResources(usage: SelectorUsage, discovered: readonly references.Resource[], logger?: loggers.Logger): RevisedResources {
  const warnings: string[] = [];
  const warn = (message: string): void => {
    warnings.push(message);
    logger?.warning(message);
  };
  const watchedSelectors = unique(usage.watched);
  const indexedSelectors = unique(usage.indexed ?? []);
  const served = new Set<references.Resource>();
  for (const selector of [...watchedSelectors, ...indexedSelectors]) for (const r of selector.select(discovered)) served.add(r);

  for (const selector of watchedSelectors) {
    const selected = selector.select(served);
    if (selector.isSpecific && selected.length > 1) {
      warn(`Ambiguous resources will not be served (try specifying API groups): ${selector} => [${names(selected)}]`);
      for (const r of selected) served.delete(r);
    }
  }

  const unresolved = [...watchedSelectors, ...indexedSelectors].filter(
    (selector) => selector.select(served).length === 0 && selector.select(discovered).length === 0,
  );
  if (unresolved.length > 0) warn(`Unresolved resources cannot be served (try creating their CRDs): ${unresolved.join(', ')}`);

  const nonWatchable = [...served].filter((r) => !r.verbs.includes('watch') || !r.verbs.includes('list'));
  const nonPatchable = [...served].filter((r) => !r.verbs.includes('patch') && !nonWatchable.includes(r));
  if (nonWatchable.length > 0) {
    warn(`Non-watchable resources will not be served: [${names(nonWatchable)}]`);
    for (const r of nonWatchable) served.delete(r);
  }
  const patchingRequired = unique(usage.patched).some((selector) => selector.select(nonPatchable).length > 0);
  if (nonPatchable.length > 0 && patchingRequired) {
    warn(`Non-patchable resources will not be served: [${names(nonPatchable)}]`);
    for (const r of nonPatchable) served.delete(r);
  }

  const webhooks = new Set<references.Resource>();
  for (const selector of unique(usage.webhooks ?? [])) for (const r of selector.select(discovered)) webhooks.add(r);
  return { watched: discovered.filter((r) => served.has(r)), webhooks: discovered.filter((r) => webhooks.has(r)), warnings };
}

/**
 * Selectors without duplicates, in order: equal selectors (same fields) count once, as they do in
 * Kopf (so one ambiguous reference warns once); predicates are equal only to themselves.
 */
export function uniqueSelectors(selectors: Iterable<Selector>): Selector[] {
  const seen = new Map<unknown, Selector>();
  for (const selector of selectors) {
    const key = selector.predicate ?? selector.toString();
    if (!seen.has(key)) seen.set(key, selector);
  }
  return [...seen.values()];
}

const unique = uniqueSelectors;

/**
 * The API groups to scan during discovery (R-RES-7): the groups named by the selectors plus the
 * framework's own; `null` means "all groups" (some selector has no group).
 */
export function groupsToScan(selectors: Iterable<Selector>): Set<string> | null {
  const groups = new Set<string>(['', 'apiextensions.k8s.io', 'admissionregistration.k8s.io', 'kopf.dev', 'zalando.org']);
  for (const selector of selectors) {
    if (selector.group === null) return null;
    groups.add(selector.group);
  }
  return groups;
}
