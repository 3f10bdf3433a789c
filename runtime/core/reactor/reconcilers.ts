/**
 * The reactor's side of reconcile handlers (R-RECONCILE): the one place that joins the watch
 * cache, the work queue (`engines/reconciling`), the calls (`engines/reconciliation`) and the
 * triggers (`engines/triggering`) with what only the reactor has — the handlers' arguments, the
 * pause set, the readiness barrier and the operator's API client.
 *
 * The cache's listener turns every change into triggers at once (it is called synchronously, so a
 * call's own writes are recognised). Calls wait at the gate: not paused (R-RECONCILE-212), the
 * readiness barrier open, and the caches of the reconciled resource and of every owned and watched
 * kind synced in the object's namespace (R-RECONCILE-209) — which also makes the initial listings'
 * objects the resync: each was a change, each is reconciled once the caches are complete.
 */

import type * as toggles from '../../cogs/aio/toggles.js';
import type * as bodies from '../../cogs/structs/bodies.js';
import * as patches from '../../cogs/structs/patches.js';
import * as references from '../../cogs/structs/references.js';
import * as views from '../../cogs/structs/views.js';
import * as invocation from '../actions/invocation.js';
import * as logging from '../actions/logging.js';
import type * as caching from '../engines/caching.js';
import type * as indexing from '../engines/indexing.js';
import * as reconciliation from '../engines/reconciliation.js';
import * as reconciling from '../engines/reconciling.js';
import * as scheduling from '../engines/scheduling.js';
import * as triggering from '../engines/triggering.js';
import * as filters from '../intents/filters.js';
import type * as registries from '../intents/registry.js';
import type * as selectors from '../intents/selectors.js';
import * as args from './arguments.js';
import type * as inventory from './inventory.js';

/** What the reconcilers need of the operator. */
export interface ReconcilersOptions {
  readonly op: Pick<inventory.OperatorContext, 'api' | 'client' | 'clock' | 'settings' | 'events' | 'memo' | 'indices' | 'scheduler'> & {
    readonly barrier?: indexing.IndexingBarrier;
    readonly registry: registries.OperatorRegistry;
  };
  readonly cache: caching.WatchCache;
  readonly paused: toggles.ToggleSet;
  /** The back-off's jitter source (tests pin it). */
  readonly random?: () => number;
}

/** The reconcile handlers of one operator at work. */
export class Reconcilers {
  readonly #tracked = new Map<string, references.Resource>();
  /** Gates waiting for a declared kind to be tracked (discovered and about to be watched). */
  readonly #discovered = new Set<() => void>();
  readonly #scheduler: scheduling.Scheduler;
  /** Whether the scheduler is this object's own (contexts built without one), closed at the stop. */
  readonly #ownScheduler: boolean;
  readonly #queue: reconciling.WorkQueue;
  readonly #unsubscribe: () => void;
  readonly #options: ReconcilersOptions;
  readonly #logger = logging.getLogger('kopf.engines.reconciling');
  /** Handlers whose wait for an undiscovered kind was logged (once each). */
  readonly #waitLogged = new Set<string>();

  constructor(options: ReconcilersOptions) {
    this.#options = options;
    const { op, cache } = options;
    const logger = logging.getLogger('kopf.engines.reconciling');
    // The operator's one scheduler (R-PERF-302): requeues and retries are entries beside timers'.
    this.#ownScheduler = op.scheduler === undefined;
    this.#scheduler = op.scheduler ?? new scheduling.Scheduler(op.clock);
    const scope = this.#callScope();
    this.#queue = new reconciling.WorkQueue({
      scheduler: this.#scheduler,
      now: () => op.clock.now(),
      gate: (target, signal) => this.#gate(target, signal),
      // In the operator's async context whatever woke the call (a watch event, the scheduler's
      // timer, a resume): handlers' `client` and the helpers that post events find their operator.
      call: (target, retry, signal) => invocation.runInOperator(op, () => reconciliation.reconcileOnce(scope, target, retry, signal)),
      logger,
      random: options.random,
    });
    const triggers: triggering.TriggerScope = { registry: op.registry, resolve: (selector) => this.#resolve(selector), logger };
    this.#unsubscribe = cache.subscribe((change) => {
      for (const target of triggering.triggersOf(triggers, change)) {
        const { handler, resource, namespace, name } = target;
        const own = change.origin === 'watch' ? triggering.ownVersionOf(change, target) : undefined;
        if (own !== undefined) this.#queue.observed(handler, resource, namespace, name, own);
        else this.#queue.trigger(handler, resource, namespace, name);
      }
    });
  }

  /** Per-object entries queued, running or scheduled (the census' `reconciling`). */
  get size(): number {
    return this.#queue.size;
  }

  /**
   * A served resource is about to be watched in a namespace (`null`: cluster-wide): the cache holds
   * it, and that dimension, if a reconcile handler needs it; calls waiting for the kind go on.
   */
  track(resource: references.Resource, namespace?: string | null): void {
    if (!this.#options.op.registry.isCached(resource)) return;
    this.#tracked.set(references.resourceName(resource), resource);
    this.#options.cache.track(resource, namespace);
    for (const wake of [...this.#discovered]) wake();
  }

  /**
   * A sharded replica hands the object over (R-SHARD-203): resolves once its calls in flight have
   * ended; no new call of it starts until `unhold`.
   */
  hold(resource: references.Resource, namespace: string | null, name: string): Promise<void> {
    return this.#queue.hold(resource, namespace, name);
  }

  /** The object may be reconciled again (it came back to this replica, or left it for good). */
  unhold(resource: references.Resource, namespace: string | null, name: string): void {
    this.#queue.unhold(resource, namespace, name);
  }

  /** Stops: no new calls, in-flight calls see their signal aborted, and are waited for. */
  async stop(): Promise<void> {
    this.#unsubscribe();
    await this.#queue.stop(); // cancels its scheduled entries
    if (this.#ownScheduler) this.#scheduler.close();
  }

  #resolve(selector: selectors.Selector): references.Resource[] {
    return [...this.#tracked.values()].filter((resource) => selector.check(resource));
  }

  /**
   * Resolves once a call of `target` may start (R-RECONCILE-209, -212): not paused; the readiness
   * barrier open; every owned and watched kind discovered (tracked), so that `owned` is never empty
   * only because discovery has not yet seen a kind; and the caches it reads synced — in the
   * object's namespace, or, for a cluster-scoped object reading a namespaced kind, in every
   * dimension that kind is watched in (all served namespaces when the operator serves only some).
   */
  async #gate(target: reconciling.Target, signal: AbortSignal): Promise<void> {
    const { paused, cache, op } = this.#options;
    await paused.waitFor(false, signal);
    if (op.barrier !== undefined && !op.barrier.ready) await op.barrier.wait(signal);
    const { handler } = target;
    const kinds = [handler.selector, ...handler.owns.map((k) => k.selector), ...handler.watches.map((k) => k.selector)];
    await this.#discovery(handler.id, kinds, signal);
    const resources = new Set([target.resource, ...kinds.flatMap((selector) => this.#resolve(selector))]);
    for (const resource of resources) {
      if (resource.namespaced && target.namespace === null) await cache.syncedEverywhere(resource, signal);
      else await cache.synced(resource, resource.namespaced ? target.namespace : null, signal);
    }
    if (paused.isOn()) await paused.waitFor(false, signal);
  }

  /** Resolves once every selector selects a tracked resource (logged once per handler); rejects with `signal`'s reason. */
  async #discovery(id: string, kinds: readonly selectors.Selector[], signal: AbortSignal): Promise<void> {
    for (;;) {
      const missing = kinds.filter((selector) => this.#resolve(selector).length === 0);
      if (missing.length === 0) return;
      signal.throwIfAborted();
      if (!this.#waitLogged.has(id)) {
        this.#waitLogged.add(id);
        this.#logger.info(`Reconcile handler '${id}' waits for ${missing.map(String).join(', ')} to be served.`);
      }
      await new Promise<void>((resolve, reject) => {
        const wake = (): void => {
          this.#discovered.delete(wake);
          signal.removeEventListener('abort', abort);
          resolve();
        };
        const abort = (): void => {
          this.#discovered.delete(wake);
          reject(signal.reason);
        };
        this.#discovered.add(wake);
        signal.addEventListener('abort', abort, { once: true });
      });
    }
  }

  #callScope(): reconciliation.CallScope {
    const { op, cache } = this.#options;
    const loggerOf = (body: bodies.RawBody) => logging.objectLogger({ body, settings: op.settings, sink: op.events });
    const scopeOf = (target: reconciling.Target, body: bodies.RawBody, patch: args.ResourceScope['patch'], signal: AbortSignal): args.ResourceScope => ({
      resource: target.resource,
      body,
      view: views.viewOf(body),
      patch,
      logger: loggerOf(body),
      memo: op.memo,
      signal,
      indices: op.indices?.byName,
    });
    return {
      cache,
      api: op.api,
      now: () => op.clock.now(),
      logger: (_target, body) => loggerOf(body),
      kwargs: (target, body, extras) =>
        args.reconcileKwargs(scopeOf(target, body, extras.patch, extras.signal), target.handler, {
          owned: extras.owned,
          clock: op.clock,
          now: extras.now,
          retry: extras.retry,
        }),
      owned: (target, body) => {
        const uid = body.metadata?.uid;
        return target.handler.owns.map((kind) =>
          typeof uid !== 'string'
            ? []
            : this.#resolve(kind.selector)
                .flatMap((resource) => cache.ownedBy(resource, uid))
                .map((child) => views.frozenBody(child) as bodies.RawBody),
        );
      },
      matches: (target, body) => {
        const subject: filters.Subject = { resource: target.resource, body };
        const kwargs = (): object =>
          args.reconcileKwargs(scopeOf(target, body, new patches.Patch<object>(), new AbortController().signal), target.handler, {
            owned: [],
            clock: op.clock,
            now: new Date(op.clock.now()),
            retry: 0,
          });
        return filters.matchesFilters(target.handler, subject, kwargs);
      },
    };
  }
}
