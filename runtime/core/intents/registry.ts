/**
 * The operator registry: every handler the user registered, and which of them a cause selects.
 *
 * Registration (`on.ts`) appends handler descriptors (`handlers.ts`) in order. The reactor asks:
 * - which selectors to serve (`selectorUsage()`, fed to `selectors.reviseResources()`);
 * - which handlers a cause selects: `changingHandlers()` (reason, resume mixing R-CAUSE-3, field
 *   handlers R-CAUSE-4, filters, deduplication R-HANDLERS-3, registration order R-HANDLERS-4),
 *   `watchingHandlers()`, `spawningHandlers()`, `indexingHandlers()`, `webhookHandlers()`;
 * - whether change handlers care about an object at all (`prematchChanging()`, stealth mode R-CAUSE-5);
 * - whether the object needs the finalizer (`requiresFinalizer()`, R-FINAL-2);
 * - which extra fields go into the essence (`extraFields()`, R-ESSENCE-2).
 *
 * Filter callbacks receive a kwargs object built lazily by a caller-given `kwargs` builder (the
 * reactor passes the builder of the real handler arguments); without one, a basic object with the
 * resource fields is used. Kopf splits this into per-family registries; one class suffices here.
 *
 * Registration also refuses what Kopf lets collide silently: two different functions under one
 * handler id for the same resource and reason (R-HANDLERS-15). Their progress records and results
 * share keys, so one of them would quietly stand in for the other — e.g. when a handler module is
 * copied, or a generated stub registers what the user already handles elsewhere. The error names
 * both registrations' places (`file:line`), captured when each is made.
 */

import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as dicts from '../../cogs/structs/dicts.js';
import * as diffs from '../../cogs/structs/diffs.js';
import type * as references from '../../cogs/structs/references.js';
import * as causes from './causes.js';
import type * as callbacks from './callbacks.js';
import * as filters from './filters.js';
import type * as handlers from './handlers.js';
import * as selectors from './selectors.js';
import { DuplicateHandlerIdError } from './errors.js';

/** Builds the kwargs of a handler for its filter callbacks; called lazily, at most once per check. */
export type KwargsBuilder = (handler: handlers.ResourceHandler, subject: filters.Subject) => object;

/** Options of the selection methods. */
export interface MatchOptions {
  /** The builder of callback kwargs; defaults to `basicKwargs`. */
  readonly kwargs?: KwargsBuilder;
}

/** What an admission request offers for handler selection (R-ADMISSION-4). */
export interface WebhookSubject extends filters.Subject {
  /** The type of the webhook, when the server knows it. */
  readonly type?: 'validating' | 'mutating' | null;
  /** The webhook id from the request path, if any: only that handler is selected. */
  readonly webhook?: string | null;
  readonly subresource: string | null;
  readonly operation: callbacks.WebhookOperation | null;
}

/**
 * A basic kwargs object for filter callbacks: the resource fields of R-KWARGS-1 and, for change
 * causes, `old`/`new`/`diff`/`reason` (absent values as `undefined`).
 */
export function basicKwargs(handler: handlers.ResourceHandler, subject: filters.Subject): Record<string, unknown> {
  const body = subject.body;
  const meta = dicts.isObject(body.metadata) ? body.metadata : {};
  const kwargs: Record<string, unknown> = {
    resource: subject.resource,
    body,
    spec: dicts.isObject(body['spec']) ? body['spec'] : {},
    meta,
    status: dicts.isObject(body['status']) ? body['status'] : {},
    uid: meta.uid,
    name: meta.name,
    namespace: meta.namespace ?? null,
    labels: meta.labels ?? {},
    annotations: meta.annotations ?? {},
    param: handler.param,
  };
  const cause = subject as Partial<causes.ChangingCause>;
  if (subject.old !== undefined || subject.new !== undefined) {
    const field = handler.field ?? [];
    const old = dicts.resolve(subject.old, field) ?? undefined;
    const now = dicts.resolve(subject.new, field) ?? undefined;
    Object.assign(kwargs, { old, new: now, oldValue: old, newValue: now, reason: cause.reason });
    if (cause.diff !== undefined) kwargs['diff'] = handler.field ? diffs.reduceDiff(cause.diff, handler.field) : cause.diff;
  }
  return kwargs;
}

function isSelected(handler: handlers.ResourceHandler, resource: references.Resource): boolean {
  return handler.selector === null || handler.selector.check(resource);
}

function matches(handler: handlers.ResourceHandler, subject: filters.Subject, options: MatchOptions | undefined, prematch = false): boolean {
  if (!isSelected(handler, subject.resource)) return false;
  const build = options?.kwargs ?? basicKwargs;
  return filters.matchesFilters(handler, subject, () => build(handler, subject), { prematch });
}

function deduplicated<H extends handlers.ResourceHandler | handlers.ActivityHandler>(list: Iterable<H>): H[] {
  const seen = new Map<handlers.HandlerFn, Set<string>>();
  const result: H[] = [];
  for (const handler of list) {
    const ids = seen.get(handler.fn) ?? new Set<string>();
    if (ids.has(handler.id)) continue;
    ids.add(handler.id);
    seen.set(handler.fn, ids);
    result.push(handler);
  }
  return result;
}

function fieldKey(field: dicts.FieldPath): string {
  return JSON.stringify(field);
}

/**
 * Where a registration was made: the stack frame of the registering call, captured when it is made
 * and formatted only if an error needs it (as `file:line`, relative to the working directory when
 * inside it).
 */
export class RegistrationSite {
  private readonly holder: { stack?: string } = {};

  /** Captures the frame that called `boundary` (the registration function the user called). */
  constructor(boundary: (...args: never[]) => unknown) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 1;
    try {
      Error.captureStackTrace(this.holder, boundary);
    } finally {
      Error.stackTraceLimit = limit;
    }
  }

  /** `file:line`, or `an unknown place` when the stack has no frame for it. */
  toString(): string {
    const frame = (this.holder.stack ?? '').split('\n').find((line) => /^\s*at /.test(line));
    const match = frame === undefined ? null : /\(?((?:file:\/\/)?[^()\s]+?):(\d+):\d+\)?\s*$/.exec(frame);
    if (!match) return 'an unknown place';
    let file = match[1]!;
    if (file.startsWith('file://')) file = fileURLToPath(file);
    const relative = path.relative(process.cwd(), file);
    return `${relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative.split(path.sep).join('/') : file}:${match[2]}`;
  }
}

/** Options of `OperatorRegistry.register`. */
export interface RegistrationOptions {
  /** Where the registration was made; by default, the caller of `register()`. */
  readonly site?: RegistrationSite;
}

/** The registration function a handler came from, which, with its resource and id, must be unique. */
function registrationOf(handler: handlers.Handler): string {
  switch (handler.kind) {
    case 'change':
      return `on.${handler.reason ?? (handler.initial ? 'resume' : 'field')}`;
    case 'webhook':
      return handler.type === 'validating' ? 'on.validate' : 'on.mutate';
    case 'activity':
      return handler.activity === 'authentication' ? 'on.login' : `on.${handler.activity}`;
    default:
      return `on.${handler.kind}`;
  }
}

/** A selector as an error message names it: `widgets.example.com/v1`, `pods`, or its readable form. */
function describe(selector: selectors.Selector): string {
  const name = selector.plural ?? selector.kind ?? selector.singular ?? selector.shortcut ?? (typeof selector.anyName === 'string' ? selector.anyName : null);
  if (name === null || selector.category !== null || selector.predicate !== null) return selector.toString();
  return `${name}${selector.group ? `.${selector.group}` : ''}${selector.version ? `/${selector.version}` : ''}`;
}

/** What the first registration of an id left for the check of later ones. */
interface Claim {
  readonly fn: handlers.HandlerFn;
  readonly site: RegistrationSite;
}

/**
 * All handlers of one operator. Kopf: `kopf.OperatorRegistry`.
 *
 * @example
 * const registry = new OperatorRegistry();
 * on.create(Widgets, { registry }, async function created({ spec }) { … });
 */
export class OperatorRegistry {
  private readonly list: handlers.Handler[] = [];
  /**
   * The handlers of each resource by purpose, computed once: every watch-event asks for several
   * of them (indexers, on-event handlers, daemons and timers, change handlers, extra fields).
   * Dropped whenever a handler is registered.
   */
  private perResource = new WeakMap<references.Resource, Map<string, readonly unknown[]>>();

  /**
   * The function and place of every id per registration function and resource selector (the
   * selector's fields, or its predicate), for R-HANDLERS-15. Sub-handlers (no selector) are not
   * kept: they are registered afresh, with new closures, on every invocation of their parent.
   */
  private readonly claims = new Map<string, Map<unknown, Claim>>();

  /**
   * Appends a handler (registration order is selection order). Returns it.
   *
   * @throws DuplicateHandlerIdError when a different function is registered already under the same
   *   id, for the same resource and by the same registration function (R-HANDLERS-15); the same
   *   function again is accepted (and runs once per cycle, R-HANDLERS-3).
   */
  register<H extends handlers.Handler>(handler: H, options: RegistrationOptions = {}): H {
    const site = options.site ?? new RegistrationSite(OperatorRegistry.prototype.register);
    if (handler.kind === 'conversion') {
      this.registerConversion(handler);
      return handler;
    }
    const selector = handler.kind === 'activity' ? undefined : handler.selector;
    if (selector !== null) {
      const registration = registrationOf(handler);
      const key = `${registration}\u0000${handler.id}`;
      const resource = selector === undefined ? '' : (selector.predicate ?? selector.toString());
      let claims = this.claims.get(key);
      if (claims === undefined) this.claims.set(key, (claims = new Map()));
      const claim = claims.get(resource);
      if (claim !== undefined && claim.fn !== handler.fn) {
        throw new DuplicateHandlerIdError(
          handler.id,
          registration,
          [String(claim.site), String(site)],
          selector === undefined ? '' : ` for ${describe(selector)}`,
        );
      }
      if (claim === undefined) claims.set(resource, { fn: handler.fn, site });
    }
    if (handler.kind === 'reconcile') this.checkFinalizer(handler);
    this.list.push(handler);
    this.perResource = new WeakMap();
    return handler;
  }

  /**
   * Appends a conversion (R-CONVERT-202): a second registration of a pair of versions of one kind,
   * in either order, is refused — two paths between the same versions would make the conversion
   * depend on which one is found first.
   */
  private registerConversion(handler: handlers.ConversionHandler): void {
    const key = (from: string, to: string): string => `${handler.from.plural}.${handler.from.group}\u0000${[from, to].sort().join('\u0000')}`;
    const clash = this.ofKind('conversion').find((h) => key(h.from.version, h.to.version) === key(handler.from.version, handler.to.version));
    if (clash !== undefined) {
      const crd = handler.from.group ? `${handler.from.plural}.${handler.from.group}` : handler.from.plural;
      throw new TypeError(
        `The versions ${handler.from.version} and ${handler.to.version} of ${crd} have a conversion already ('${clash.id}', ` +
          `${clash.from.version} → ${clash.to.version}): register each pair once, with both forward and backward.`,
      );
    }
    this.list.push(handler);
  }

  /**
   * Two reconcile handlers with `finalize` on one resource need distinct finalizers (R-RECONCILE-207):
   * the first removal would otherwise release the object before the other one has finalized it.
   */
  private checkFinalizer(handler: handlers.ReconcileHandler): void {
    if (handler.finalizer === null) return;
    const resource = handler.selector.predicate ?? handler.selector.toString();
    const clash = this.ofKind('reconcile').find(
      (h) => h.finalizer === handler.finalizer && h.fn !== handler.fn && (h.selector.predicate ?? h.selector.toString()) === resource,
    );
    if (clash !== undefined) {
      throw new TypeError(
        `The reconcile handlers '${clash.id}' and '${handler.id}' of ${describe(handler.selector)} both finalize with '${handler.finalizer}': give one of them its own 'finalizer'.`,
      );
    }
  }

  private ofResource<T>(resource: references.Resource, purpose: string, compute: () => T[]): readonly T[] {
    let cached = this.perResource.get(resource);
    if (cached === undefined) this.perResource.set(resource, (cached = new Map()));
    let value = cached.get(purpose) as readonly T[] | undefined;
    if (value === undefined) cached.set(purpose, (value = Object.freeze(compute())));
    return value;
  }

  /** All handlers in registration order. */
  get handlers(): readonly handlers.Handler[] {
    return this.list;
  }

  private ofKind<K extends handlers.Handler['kind']>(kind: K): Array<Extract<handlers.Handler, { kind: K }>> {
    return this.list.filter((h): h is Extract<handlers.Handler, { kind: K }> => h.kind === kind);
  }

  /** The conversions between versions of every kind, in registration order (R-CONVERT-201). */
  conversionHandlers(): readonly handlers.ConversionHandler[] {
    return this.ofKind('conversion');
  }

  /** Activity handlers of one activity, in order. */
  activityHandlers(activity: callbacks.ActivityName): handlers.ActivityHandler[] {
    return this.ofKind('activity').filter((h) => h.activity === activity);
  }

  /** All change handlers selecting a resource (regardless of filters), e.g. to load their progress. */
  changingHandlersOf(resource: references.Resource): readonly handlers.ChangingHandler[] {
    return this.ofResource(resource, 'change', () => this.ofKind('change').filter((h) => isSelected(h, resource)));
  }

  /** All on-event handlers selecting a resource. */
  watchingHandlersOf(resource: references.Resource): readonly handlers.WatchingHandler[] {
    return this.ofResource(resource, 'event', () => this.ofKind('event').filter((h) => isSelected(h, resource)));
  }

  /** All daemons and timers selecting a resource. */
  spawningHandlersOf(resource: references.Resource): readonly handlers.SpawningHandler[] {
    return this.ofResource(resource, 'spawning', () =>
      this.list.filter((h): h is handlers.SpawningHandler => (h.kind === 'daemon' || h.kind === 'timer') && isSelected(h, resource)),
    );
  }

  /** All indexers selecting a resource. */
  indexingHandlersOf(resource: references.Resource): readonly handlers.IndexingHandler[] {
    return this.ofResource(resource, 'index', () => this.ofKind('index').filter((h) => isSelected(h, resource)));
  }

  /** All admission handlers selecting a resource. */
  webhookHandlersOf(resource: references.Resource): readonly handlers.WebhookHandler[] {
    return this.ofResource(resource, 'webhook', () => this.ofKind('webhook').filter((h) => isSelected(h, resource)));
  }

  /** All reconcile handlers of a resource (R-RECONCILE-201), in registration order. */
  reconcileHandlersOf(resource: references.Resource): readonly handlers.ReconcileHandler[] {
    return this.ofResource(resource, 'reconcile', () => this.ofKind('reconcile').filter((h) => isSelected(h, resource)));
  }

  /** Whether any reconcile handler is registered (then the operator keeps a watch cache). */
  hasReconcileHandlers(): boolean {
    return this.list.some((h) => h.kind === 'reconcile');
  }

  /**
   * The selectors of the kinds the watch cache holds (R-RECONCILE-209): every reconciled resource
   * and every kind a reconcile handler owns or watches. They are discovered and watched like the
   * resources of other handlers.
   */
  cachedSelectors(): selectors.Selector[] {
    return selectors.uniqueSelectors(
      this.ofKind('reconcile').flatMap((h) => [h.selector, ...h.owns.map((k) => k.selector), ...h.watches.map((k) => k.selector)]),
    );
  }

  /** Whether the watch cache holds a resource (one of `cachedSelectors()` selects it). */
  isCached(resource: references.Resource): boolean {
    return this.ofResource(resource, 'cached', () => this.cachedSelectors().filter((s) => s.check(resource))).length > 0;
  }

  /** The reconcile handlers that own a resource (its objects' changes reconcile their controller owners). */
  reconcileHandlersOwning(resource: references.Resource): readonly handlers.ReconcileHandler[] {
    return this.ofResource(resource, 'owning', () => this.ofKind('reconcile').filter((h) => h.owns.some((k) => k.selector.check(resource))));
  }

  /** The reconcile handlers that watch a resource, each with its relations to it (their `map`s). */
  reconcileHandlersWatching(resource: references.Resource): readonly (readonly [handlers.ReconcileHandler, readonly handlers.ReconcileRelation[]])[] {
    return this.ofResource(resource, 'watching', () =>
      this.ofKind('reconcile').flatMap((h) => {
        const relations = h.watches.filter((k) => k.selector.check(resource));
        return relations.length > 0 ? [[h, relations] as const] : [];
      }),
    );
  }

  /** The names of all indices (the ids of all indexers), in order, without duplicates. */
  indexNames(): string[] {
    return [...new Set(this.ofKind('index').map((h) => h.id))];
  }

  /** Selectors by purpose, for `selectors.reviseResources()` and discovery. */
  selectorUsage(): selectors.SelectorUsage & { readonly all: readonly selectors.Selector[] } {
    const of = (kinds: readonly string[]): selectors.Selector[] =>
      selectors.uniqueSelectors(
        this.list.flatMap((h) => (kinds.includes(h.kind) && h.kind !== 'activity' && h.kind !== 'conversion' && h.selector !== null ? [h.selector] : [])),
      );
    const cached = this.cachedSelectors();
    return {
      watched: selectors.uniqueSelectors([...of(['event', 'daemon', 'timer', 'change']), ...cached]),
      patched: of(['daemon', 'timer', 'change', 'reconcile']),
      indexed: of(['index']),
      webhooks: of(['webhook']),
      all: selectors.uniqueSelectors([...of(['event', 'daemon', 'timer', 'change', 'index', 'webhook']), ...cached]),
    };
  }

  /**
   * The change handlers a cause selects, deduplicated, in registration order (R-HANDLERS-3/4):
   * by reason (field handlers, resume handlers and reason-less handlers match any handler reason);
   * resume handlers only for initial objects and, on deletion, only with `deleted: true` (R-CAUSE-3);
   * then by the filters, including the field change (R-CAUSE-4, R-HANDLERS-11). Causes that invoke
   * no handlers (`noop`, `free`, `gone`) select nothing.
   */
  changingHandlers(cause: causes.ChangingCause, options?: MatchOptions): handlers.ChangingHandler[] {
    if (!causes.isHandlerReason(cause.reason)) return [];
    const selected = this.ofKind('change').filter((h) => {
      if (h.reason !== null && h.reason !== cause.reason) return false;
      if (h.initial && !cause.initial) return false;
      if (h.initial && cause.deleted && !h.deleted) return false;
      return matches(h, cause, options);
    });
    return deduplicated(selected);
  }

  /** Whether the resource has change handlers at all. */
  hasChangingHandlers(resource: references.Resource): boolean {
    return this.changingHandlersOf(resource).length > 0;
  }

  /**
   * Whether any change handler of the resource pre-matches the object: all filters except the
   * field change (R-FILTERS-8). When false, the changing cause is dropped (stealth mode, R-CAUSE-5).
   */
  prematchChanging(subject: filters.Subject, options?: MatchOptions): boolean {
    return this.ofKind('change').some((h) => matches(h, subject, options, true));
  }

  /**
   * Whether the object needs the finalizer (R-FINAL-2): a non-optional delete handler pre-matches
   * it, or a daemon or timer matches it and has not stopped forever for it (`stoppedForever`).
   * Pass the changing cause as the subject when there is one (value filters then see old/new).
   */
  requiresFinalizer(
    subject: filters.Subject,
    options?: MatchOptions & {
      readonly stoppedForever?: (handler: handlers.SpawningHandler) => boolean;
    },
  ): boolean {
    if (this.ofKind('change').some((h) => h.requiresFinalizer && matches(h, subject, options, true))) return true;
    const plain: filters.Subject = { resource: subject.resource, body: subject.body };
    return this.spawningHandlersOf(subject.resource).some((h) => !(options?.stoppedForever?.(h) ?? false) && matches(h, plain, options));
  }

  /** On-event handlers matching a watch-event, in order (R-EVENT-1/2). */
  watchingHandlers(cause: causes.WatchingCause, options?: MatchOptions): handlers.WatchingHandler[] {
    const subject: filters.Subject = { resource: cause.resource, body: cause.body };
    return deduplicated(this.ofKind('event').filter((h) => matches(h, subject, options)));
  }

  /** Daemons and timers matching the object now (R-DAEMON-2, R-DAEMON-9). */
  spawningHandlers(
    cause: { readonly resource: references.Resource; readonly body: filters.Subject['body'] },
    options?: MatchOptions,
  ): handlers.SpawningHandler[] {
    const subject: filters.Subject = { resource: cause.resource, body: cause.body };
    return deduplicated(this.spawningHandlersOf(cause.resource).filter((h) => matches(h, subject, options)));
  }

  /** Indexers matching the object now (R-INDEX-4: a mismatch removes the object from the index). */
  indexingHandlers(
    cause: { readonly resource: references.Resource; readonly body: filters.Subject['body'] },
    options?: MatchOptions,
  ): handlers.IndexingHandler[] {
    const subject: filters.Subject = { resource: cause.resource, body: cause.body };
    return deduplicated(this.indexingHandlersOf(cause.resource).filter((h) => matches(h, subject, options)));
  }

  /**
   * Admission handlers for a request (R-ADMISSION-4): by type, webhook id, subresource (`'*'`
   * matches all; unset matches only the main body), operation, then the filters on the request's
   * body. Mutating handlers are skipped for `DELETE` unless their operations are exactly `['DELETE']`.
   */
  webhookHandlers(subject: WebhookSubject, options?: MatchOptions): handlers.WebhookHandler[] {
    const plain: filters.Subject = { resource: subject.resource, body: subject.body };
    return this.webhookHandlersOf(subject.resource).filter((h) => {
      if (subject.type && subject.type !== h.type) return false;
      if (subject.webhook && subject.webhook !== h.id) return false;
      if (h.subresource !== '*' && h.subresource !== (subject.subresource ?? null)) return false;
      if (subject.operation && h.operations && !h.operations.includes(subject.operation)) return false;
      const forDeletionOnly = h.operations !== null && h.operations.length > 0 && h.operations.every((op) => op === 'DELETE');
      if (h.type === 'mutating' && subject.operation === 'DELETE' && !forDeletionOnly) return false;
      return matches(h, plain, options);
    });
  }

  /**
   * The fields of on-event, change, daemon and timer handlers of a resource, which the essence must
   * always include (R-ESSENCE-2). Deduplicated, in registration order.
   */
  extraFields(resource: references.Resource): readonly dicts.FieldPath[] {
    return this.ofResource(resource, 'fields', () => {
      const fields = new Map<string, dicts.FieldPath>();
      for (const h of this.list) {
        if ((h.kind === 'event' || h.kind === 'change' || h.kind === 'daemon' || h.kind === 'timer') && h.field && isSelected(h, resource)) {
          fields.set(fieldKey(h.field), h.field);
        }
      }
      return [...fields.values()];
    });
  }
}

let defaultRegistry: OperatorRegistry | undefined;

/** The process-global registry used when registrations name none; created on first use (R-API-5). */
export function getDefaultRegistry(): OperatorRegistry {
  return (defaultRegistry ??= new OperatorRegistry());
}

/** Replaces the process-global registry (e.g. per test). */
export function setDefaultRegistry(registry: OperatorRegistry): void {
  defaultRegistry = registry;
}

/** The conversions of a registry, in registration order (R-CONVERT-201). */
export function conversionsOf(registry: OperatorRegistry): readonly handlers.ConversionHandler[] {
  return registry.conversionHandlers();
}

/** The CRDs (`<plural>.<group>`) that have conversions, in order of their first registration. */
export function convertedCrds(registry: OperatorRegistry): readonly string[] {
  return [...new Set(registry.conversionHandlers().map((h) => `${h.from.plural}.${h.from.group}`))];
}
