/**
 * The handoff of a sharded operator (docs/sharding.md): what makes "only the owner works on an
 * object" hold while replicas come and go. The replicas of one ring (`rings.Ring`, kept by the
 * membership) each own the objects labelled `shard.kopf-gen.dev/<ring>=<identity>`; the
 * assignment (`rendezvous.ownerOf`) says who should own which; this module moves objects from
 * who owns them to who should, never letting two replicas work on one object at once.
 *
 * The protocol, per replica (R-SHARD-201..208):
 * 1. *Own objects only.* Every watcher of a sharded kind (kinds the processing cycle handles and
 *    the primary kinds of reconcile handlers) lists and watches with the selector
 *    `<label>=<me>`; kinds watched only for the cache are watched whole (R-SHARD-201).
 * 2. *Claiming orphans.* Per sharded dimension, a claimer watches `<label> notin (<members>)`
 *    (unlabelled objects match too), restarted on every change of the members. An object whose
 *    hash owner is this replica is claimed if its label is absent or empty, or names a replica
 *    that `ring.isGone` confirms gone by a fresh read (else it is looked at again after
 *    `retryPeriod`). A claim is a JSON patch that tests the resource version seen and adds the
 *    label; a failed test (409/422) re-reads and decides again (R-SHARD-202).
 * 3. *Rebalancing, old owner first.* On every change of the members (while this replica is a
 *    member and not paused), the replica lists its own objects per sharded dimension; each whose
 *    hash owner is now another member is released (4), then relabelled to that member by a JSON
 *    patch that tests the label is still this replica's. At most `CONCURRENCY` at a time
 *    (R-SHARD-205).
 * 4. *Release of one object* (the no-double-handling step, R-SHARD-203): its key is blocked (its
 *    watch events are dropped before the cache and the queue); its queue worker finishes the
 *    current event with the pressure raised and its backlog dropped (`Queue.release`); its daemons
 *    and timers are stopped with `OPERATOR_PAUSING` and awaited until each has exited (an
 *    orphaned one too: the object must not run twice); its reconcile calls in flight are awaited
 *    and no new one starts; it is forgotten by the memories, the indices, the cache and the
 *    readiness barrier. Only then the relabel. The key is unblocked when the own watch reports the
 *    object leaving (DELETED), when the relabel finds it gone (404), or when it is this replica's
 *    again; if, after the release, this replica is its owner again, it re-reads the object and
 *    processes it as a fresh listing event (R-SHARD-204).
 * 5. *Fencing.* The membership holds a member of the operator's pause set while this replica is
 *    not joined or could not renew its Lease in time: the watchers close, daemons stop, reconcile
 *    calls wait, and the claimers and the rebalancer do nothing (R-SHARD-206). A DELETED event of
 *    the own watch that this replica did not cause (someone else relabelled the object while the
 *    watch was open) is processed as Kopf processes a DELETED: memory forgotten, daemons stopped.
 *    A fenced replica's watch is closed, though, so it never sees its objects claimed away: after
 *    every (re-)listing of a sharded dimension, the objects let through before that the listing
 *    lacks are released as in (4) and then unblocked — forgotten by the memories, the indices, the
 *    cache, with their daemons stopped (R-SHARD-501). An object that comes back into the own watch
 *    is no longer known as vanished (R-SHARD-204).
 *
 * Why no two owners: a replica works on an object only while it holds its label and is not
 * paused; the label moves either by the owner itself after its work stopped (3, 4), or by another
 * replica only once the owner's Lease is confirmed gone — after the owner fenced itself, since
 * its `renewDeadline` is shorter than the `leaseDuration` the others wait for (2).
 *
 * Indices are per replica: they hold only the objects the replica owns.
 */

import * as aborts from '../../cogs/aio/aborts.js';
import type * as api from '../../cogs/client/api.js';
import * as clientErrors from '../../cogs/client/errors.js';
import * as watching from '../../cogs/client/watching.js';
import * as bodies from '../../cogs/structs/bodies.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as references from '../../cogs/structs/references.js';
import * as errors from '../actions/errors.js';
import * as rendezvous from '../engines/rendezvous.js';
import type * as rings from '../engines/rings.js';
import * as spawning from '../engines/spawning.js';
import * as stoppers from '../intents/stoppers.js';
import type * as inventory from './inventory.js';

/** How many objects the rebalancer hands over at once. */
export const CONCURRENCY = 16;

/** How many claims a claimer has in flight at once. */
export const CLAIMING = 32;

/** What a watcher of a sharded kind offers the sharder (declared with the operator context). */
export type ShardedWatcher = inventory.ShardedWatcher;

/**
 * A blocked object: being released, or released and waiting for the watch to see it leave — or
 * being forgotten after it left while the watch was closed (`vanishing`).
 */
interface Block {
  readonly resource: references.Resource;
  readonly namespace: string | null;
  readonly name: string;
  releasing: boolean;
  /** The own watch reported it leaving while it was being released. */
  departed: boolean;
  /** Forgotten because a re-listing lacked it (R-SHARD-501), not handed over: unblocked when done. */
  vanishing: boolean;
  /** The object as last seen coming back into the own watch while it was being forgotten. */
  returned: bodies.RawBody | undefined;
}

/** Where an object is: enough to release it without its body. */
interface Place {
  readonly namespace: string | null;
  readonly name: string;
}

/** One attached watcher and what the sharder knows of its dimension (R-SHARD-501). */
interface Dimension {
  readonly watcher: ShardedWatcher;
  /** The objects let through and not seen leaving since, by key. */
  readonly known: Map<string, Place>;
  /** The keys of the listing in progress, if one is. */
  listing: Set<string> | undefined;
}

/** What the sharder needs of the operator (the operator context, or a part of it). */
export type ShardingScope = Pick<
  inventory.OperatorContext,
  'api' | 'settings' | 'clock' | 'memories' | 'indices' | 'cache' | 'barrier' | 'paused' | 'reconcilers' | 'logger'
>;

const R = stoppers.DaemonStoppingReason;

/** The JSON-patch path of a label (RFC 6901: `~` as `~0`, `/` as `~1`). */
export function labelPath(label: string): string {
  return `/metadata/labels/${label.replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

/** The resource's identity, for finding its watchers. */
function resourceId(resource: references.Resource): string {
  return `${resource.group}/${resource.version}/${resource.plural}`;
}

/** Whether an error is a failed `test` of a JSON patch, or a conflict: someone else changed the object. */
function isLostRace(error: unknown): boolean {
  return error instanceof clientErrors.ApiConflictError || error instanceof clientErrors.ApiUnprocessableError;
}

/** Resolves at the next change of the ring's members, or when `signal` aborts. */
function nextChange(ring: rings.Ring, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      unsubscribe();
      detach();
      resolve();
    };
    const unsubscribe = ring.subscribe(done);
    const detach = aborts.onAbort(signal, done);
  });
}

/** Runs `work` over `items`, at most `limit` at a time. */
async function bounded<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/** The sharder of one operator over its ring (see the module's comment). */
export class Sharder implements inventory.Sharding {
  readonly ring: rings.Ring;
  readonly #scope: ShardingScope;
  readonly #logger: loggers.Logger;
  readonly #dimensions = new Set<Dimension>();
  readonly #blocked = new Map<string, Block>();
  /** Releases in progress by object key: a second request for the same object joins the first. */
  readonly #releasing = new Map<string, Promise<void>>();

  constructor(ring: rings.Ring, scope: ShardingScope, logger: loggers.Logger) {
    this.ring = ring;
    this.#scope = scope;
    this.#logger = logger;
  }

  /** The label selector of this replica's own objects (R-SHARD-201). */
  get selector(): string {
    return `${this.ring.label}=${this.ring.identity}`;
  }

  /** How many objects are blocked right now (released, or being released). */
  get blocked(): number {
    return this.#blocked.size;
  }

  /** Joins a watcher of a sharded kind; its events go through the feed returned. */
  attach(watcher: ShardedWatcher): inventory.ShardedFeed {
    const dimension: Dimension = { watcher, known: new Map(), listing: undefined };
    this.#dimensions.add(dimension);
    return {
      admit: (event) => this.#admit(dimension, event),
      listed: () => this.#listed(dimension),
      detach: () => {
        this.#dimensions.delete(dimension);
        this.#settleBlocks(dimension, new Set());
      },
    };
  }

  /** One event of a dimension's own watch: noted as known or listed, then classified (`#pass`). */
  #admit(dimension: Dimension, event: bodies.RawEvent): boolean {
    const key = bodies.objectKey(event.object);
    if (event.type === null) (dimension.listing ??= new Set()).add(key);
    const admitted = this.#pass(key, event);
    if (event.type === 'DELETED') dimension.known.delete(key);
    else if (admitted && !dimension.known.has(key))
      dimension.known.set(key, { namespace: event.object.metadata?.namespace ?? null, name: event.object.metadata?.name ?? '' });
    return admitted;
  }

  /**
   * The end of a dimension's (re-)listing (R-SHARD-501): the objects known from before that the
   * listing lacks left the selector while the watch was closed (a fenced replica's objects claimed
   * by the others, or deleted): each is released and forgotten. Blocked ones are already on their
   * way out: the listing counts as their leaving.
   */
  #listed(dimension: Dimension): void {
    const listing = dimension.listing ?? new Set<string>();
    dimension.listing = undefined;
    for (const [key, place] of dimension.known) {
      if (listing.has(key)) continue;
      dimension.known.delete(key);
      const block = this.#blocked.get(key);
      if (block === undefined) this.#vanish(dimension, key, place);
    }
    this.#settleBlocks(dimension, listing);
  }

  /**
   * Blocked objects of the dimension that the listing lacks have left it (their DELETED may never
   * come once the watch re-listed): one being released is marked as departed, a released one is
   * unblocked. Without this, a block and its reconcile hold would stay until the object came back.
   */
  #settleBlocks(dimension: Dimension, listing: ReadonlySet<string>): void {
    const { resource, namespace } = dimension.watcher;
    for (const [key, block] of this.#blocked) {
      if (listing.has(key) || block.vanishing || resourceId(block.resource) !== resourceId(resource)) continue;
      if (namespace !== null && block.namespace !== namespace) continue;
      if (block.releasing) block.departed = true;
      else this.#unblock(key);
    }
  }

  /** Forgets an object that left unseen: released as for a handover, then unblocked (or taken back if it came back meanwhile). */
  #vanish(dimension: Dimension, key: string, place: Place): void {
    const { resource, signal } = dimension.watcher;
    this.#logger.debug(`${references.resourceName(resource)} ${place.namespace ?? ''}/${place.name} left while the watch was closed: forgetting it.`);
    const done = this.#release(resource, key, place.namespace, place.name, true).then(() => {
      const block = this.#blocked.get(key);
      if (block === undefined || !block.vanishing) return; // a handover took it over
      const returned = block.returned;
      this.#unblock(key);
      if (returned !== undefined) return this.#resume(dimension, returned, signal);
    });
    void done.catch((error: unknown) => {
      if (signal.aborted) return;
      this.#logger.error(`Forgetting ${place.namespace ?? ''}/${place.name} has failed: ${errors.errorMessage(error)}`, clientErrors.traceExtra(error));
    });
  }

  /**
   * The classification of one event of the own watch (R-SHARD-203/204): `true` to process it (the
   * cache and the queue), `false` to drop it. Events of a blocked object are dropped; its leaving
   * (DELETED) unblocks it; its coming back (a listing or ADDED after its release) unblocks it too.
   * While it is being forgotten (R-SHARD-501), its coming back is noted for afterwards.
   */
  #pass(key: string, event: bodies.RawEvent): boolean {
    const block = this.#blocked.get(key);
    if (block !== undefined) {
      if (block.vanishing) {
        block.returned = event.type === 'DELETED' ? undefined : event.object;
        return false;
      }
      if (event.type === 'DELETED') {
        if (block.releasing) block.departed = true;
        else this.#unblock(key);
        return false;
      }
      if (block.releasing || event.type === 'MODIFIED') return false;
      this.#unblock(key); // relabelled back to this replica after it left
    }
    const uid = event.object.metadata?.uid;
    if (event.type !== 'DELETED' && event.type !== 'MODIFIED' && uid !== undefined) this.#scope.memories.revive(uid);
    return true;
  }

  /*
   * Claiming orphans (R-SHARD-202).
   */

  /**
   * The claimer of one dimension: watches the objects labelled with no member and claims those
   * this replica should own; restarted on every change of the members; idle while paused or not
   * a member. A failed claim ends the session, logged; the next one starts after `retryPeriod`.
   * Runs until `signal` aborts.
   */
  async claim(resource: references.Resource, namespace: string | null, signal: AbortSignal): Promise<void> {
    const { paused } = this.#scope;
    while (!signal.aborted) {
      try {
        await paused?.waitFor(false, signal);
      } catch {
        return;
      }
      const members = this.ring.members();
      if (!members.includes(this.ring.identity)) {
        await nextChange(this.ring, signal);
        continue;
      }
      const session = new AbortController();
      const unsubscribe = this.ring.subscribe(() => session.abort());
      const unpaused = paused?.waitFor(true, session.signal).then(
        () => session.abort(),
        () => undefined,
      );
      const detach = aborts.onAbort(signal, () => session.abort());
      try {
        await this.#claimSession(resource, namespace, members, session.signal);
      } catch (error) {
        // Not fatal: the unclaimed objects wait, and a new session after retryPeriod lists them again.
        this.#logger.error(`Claiming ${references.resourceName(resource)} has failed: ${errors.errorMessage(error)}`, clientErrors.traceExtra(error));
        await aborts.sleepOrAbort(this.#scope.clock, this.#scope.settings.sharding.retryPeriod * 1000, signal);
      } finally {
        unsubscribe();
        detach();
        session.abort();
        await unpaused;
      }
    }
  }

  /** One claimer watch over a fixed member list, until `signal` aborts. */
  async #claimSession(resource: references.Resource, namespace: string | null, members: readonly string[], signal: AbortSignal): Promise<void> {
    const { api: client, settings, clock, logger } = this.#scope;
    const labelSelector = `${this.ring.label} notin (${members.join(',')})`;
    const gone = new Map<string, Promise<boolean>>(); // the isGone verdicts of this session
    const ctx: watching.WatchContext = { api: client, settings, resource, namespace, labelSelector, logger, clock };
    try {
      await this.#claimAll(ctx, members, gone, signal);
    } catch (error) {
      if (!signal.aborted) throw error;
    }
  }

  /**
   * Claims what the claimer watch shows, CLAIMING at a time (a replica that took over a dead one's
   * share claims thousands); the claims of one object one after another, in the order of its
   * events. The first claim that fails ends the watch and is thrown.
   */
  async #claimAll(ctx: watching.WatchContext, members: readonly string[], gone: Map<string, Promise<boolean>>, signal: AbortSignal): Promise<void> {
    const claims = new Map<string, Promise<void>>();
    const failed = new AbortController();
    let failure: { readonly error: unknown } | undefined;
    const { signal: watch, release } = aborts.follow([signal, failed.signal]);
    try {
      for await (const event of watching.infiniteWatch(ctx, { signal: watch })) {
        if (watching.isListed(event) || event.type === 'DELETED') continue;
        while (claims.size >= CLAIMING) await Promise.race(claims.values());
        const key = bodies.objectKey(event.object);
        const claim = (claims.get(key) ?? Promise.resolve()).then(() => this.#claimOne(ctx.resource, event.object, members, gone, signal));
        const tracked: Promise<void> = claim
          .catch((error: unknown) => {
            failure ??= { error };
            failed.abort();
          })
          .finally(() => {
            if (claims.get(key) === tracked) claims.delete(key);
          });
        claims.set(key, tracked);
      }
    } catch (error) {
      if (!watch.aborted) throw error;
    } finally {
      await Promise.all(claims.values());
      release();
    }
    if (failure !== undefined && !signal.aborted) throw failure.error;
  }

  /** Claims one object if this replica should own it; re-reads and decides again after a lost race. */
  async #claimOne(
    resource: references.Resource,
    seen: bodies.RawBody,
    members: readonly string[],
    gone: Map<string, Promise<boolean>>,
    signal: AbortSignal,
  ): Promise<void> {
    let body: bodies.RawBody | undefined = seen;
    while (body !== undefined && !signal.aborted) {
      const verdict = await this.#claimable(body, members, gone, signal);
      if (verdict === 'no') return;
      if (verdict === 'later') {
        this.#recheckLater(resource, body, members, gone, signal);
        return;
      }
      try {
        await this.#scope.api.patch(resource, body.metadata?.namespace ?? null, body.metadata!.name!, this.#claimPatch(body), { type: 'json', signal });
        this.#logger.debug(`Claimed ${references.resourceName(resource)} ${body.metadata?.namespace ?? ''}/${body.metadata?.name}.`);
        return;
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof clientErrors.ApiNotFoundError) return;
        if (!isLostRace(error)) throw error;
      }
      const seenVersion = body.metadata?.resourceVersion;
      body = await this.#reread(resource, body, signal);
      if (body !== undefined && body.metadata?.resourceVersion === seenVersion) {
        // Refused, but nobody changed the object: not a lost race (e.g. a policy's 422). Not again now.
        this.#logger.warning(`Claiming ${body.metadata?.namespace ?? ''}/${body.metadata?.name} was refused; it waits for its next change or listing.`);
        return;
      }
    }
  }

  /** Whether to claim an object now, never, or after its labelled owner is confirmed gone. */
  async #claimable(
    body: bodies.RawBody,
    members: readonly string[],
    gone: Map<string, Promise<boolean>>,
    signal: AbortSignal,
  ): Promise<'yes' | 'no' | 'later'> {
    const me = this.ring.identity;
    if (rendezvous.ownerOf(rendezvous.shardKeyOf(body, this.#scope.settings.sharding.key), members) !== me) return 'no';
    const labelled = body.metadata?.labels?.[this.ring.label];
    if (labelled === undefined || labelled === '') return 'yes';
    if (labelled === me || members.includes(labelled)) return 'no';
    let verdict = gone.get(labelled);
    if (verdict === undefined) {
      verdict = this.ring.isGone(labelled, signal).catch((error: unknown) => {
        if (!signal.aborted) this.#logger.warning(`Could not tell whether replica '${labelled}' is gone (its objects wait): ${errors.errorMessage(error)}`);
        return false;
      });
      gone.set(labelled, verdict);
    }
    return (await verdict) ? 'yes' : 'later';
  }

  /** An object whose labelled owner is not yet confirmed gone: looked at again after `retryPeriod`. */
  #recheckLater(
    resource: references.Resource,
    body: bodies.RawBody,
    members: readonly string[],
    gone: Map<string, Promise<boolean>>,
    signal: AbortSignal,
  ): void {
    const labelled = body.metadata?.labels?.[this.ring.label];
    const recheck = async (): Promise<void> => {
      if (!(await aborts.sleepOrAbort(this.#scope.clock, this.#scope.settings.sharding.retryPeriod * 1000, signal))) return;
      if (labelled !== undefined) gone.delete(labelled);
      const fresh = await this.#reread(resource, body, signal);
      if (fresh !== undefined) await this.#claimOne(resource, fresh, members, gone, signal);
    };
    void recheck().catch((error: unknown) => {
      if (!signal.aborted) this.#logger.error(`Claiming has failed: ${errors.errorMessage(error)}`, clientErrors.traceExtra(error));
    });
  }

  /** The claim: the resource version seen must still be the object's; the label becomes this replica's. */
  #claimPatch(body: bodies.RawBody): object[] {
    const version = { op: 'test', path: '/metadata/resourceVersion', value: body.metadata?.resourceVersion };
    if (body.metadata?.labels === undefined) return [version, { op: 'add', path: '/metadata/labels', value: { [this.ring.label]: this.ring.identity } }];
    return [version, { op: 'add', path: labelPath(this.ring.label), value: this.ring.identity }];
  }

  /** A fresh read of an object; `undefined` when it is gone. */
  async #reread(resource: references.Resource, body: bodies.RawBody, signal: AbortSignal): Promise<bodies.RawBody | undefined> {
    try {
      return await this.#scope.api.get(resource, body.metadata?.namespace ?? null, body.metadata!.name!, { signal });
    } catch (error) {
      if (error instanceof clientErrors.ApiNotFoundError) return undefined;
      throw error;
    }
  }

  /*
   * Rebalancing (R-SHARD-205).
   */

  /**
   * The rebalancer: after every change of the members (and once at the start), while this replica
   * is a member and not paused, hands over the own objects that now hash to another member. Runs
   * until `signal` aborts.
   */
  async rebalance(signal: AbortSignal): Promise<void> {
    let dirty = true;
    const unsubscribe = this.ring.subscribe(() => {
      dirty = true;
    });
    try {
      while (!signal.aborted) {
        if (!dirty) await nextChange(this.ring, signal);
        if (signal.aborted) return;
        await this.#scope.paused?.waitFor(false, signal);
        dirty = false;
        const members = this.ring.members();
        if (!members.includes(this.ring.identity)) continue;
        await this.#rebalanceOnce(signal);
      }
    } catch (error) {
      if (!signal.aborted) throw error;
    } finally {
      unsubscribe();
    }
  }

  /** One pass: every sharded dimension's own objects, each handed over if another member should own it. */
  async #rebalanceOnce(signal: AbortSignal): Promise<void> {
    for (const dimension of [...this.#dimensions]) {
      const watcher = dimension.watcher;
      if (signal.aborted || this.#scope.paused?.isOn()) return;
      let listing: api.Listing;
      try {
        listing = await this.#scope.api.list(watcher.resource, watcher.namespace, { labelSelector: this.selector, signal });
      } catch (error) {
        if (signal.aborted) return;
        this.#logger.error(
          `Rebalancing ${references.resourceName(watcher.resource)} has failed: ${errors.errorMessage(error)}`,
          clientErrors.traceExtra(error),
        );
        continue;
      }
      const moving = listing.items.filter((body) => this.#ownerOf(body) !== this.ring.identity);
      await bounded(moving, CONCURRENCY, (body) => this.#handOver(dimension, body, signal));
    }
  }

  #ownerOf(body: bodies.RawBody): string | undefined {
    return rendezvous.ownerOf(rendezvous.shardKeyOf(body, this.#scope.settings.sharding.key), this.ring.members());
  }

  /** Releases one own object, then relabels it to its new owner — or takes it back if it is this replica's again. */
  async #handOver(dimension: Dimension, body: bodies.RawBody, signal: AbortSignal): Promise<void> {
    const watcher = dimension.watcher;
    const key = bodies.objectKey(body);
    try {
      await this.release(watcher.resource, body);
      let current: bodies.RawBody | undefined = body;
      while (current !== undefined) {
        const owner = this.#ownerOf(current);
        if (owner === undefined || owner === this.ring.identity || this.#scope.paused?.isOn()) return await this.#resume(dimension, current, signal);
        const moved = await this.#relabel(watcher.resource, current, owner, signal);
        if (moved === 'moved') return this.#released(key);
        if (moved === 'gone') return this.#unblock(key);
        const seenVersion = current.metadata?.resourceVersion;
        current = await this.#reread(watcher.resource, current, signal);
        if (current !== undefined && current.metadata?.resourceVersion === seenVersion) {
          throw new Error('the relabel was refused, though nobody changed the object'); // not a lost race: taken back below
        }
        const labelled = current?.metadata?.labels?.[this.ring.label];
        if (current === undefined) return this.#unblock(key);
        if (labelled !== this.ring.identity) return this.#released(key); // someone else moved it: its DELETED comes
      }
    } catch (error) {
      if (signal.aborted) return;
      this.#logger.error(
        `Handing over ${body.metadata?.namespace ?? ''}/${body.metadata?.name} has failed: ${errors.errorMessage(error)}`,
        clientErrors.traceExtra(error),
      );
      // Not moved: this replica still holds the label, so it takes the object back.
      await this.#resume(dimension, body, signal).catch((failure: unknown) => {
        // It stays this replica's, unworked until its next event or re-listing.
        if (!signal.aborted)
          this.#logger.error(`Taking ${body.metadata?.namespace ?? ''}/${body.metadata?.name} back has failed: ${errors.errorMessage(failure)}`);
      });
    }
  }

  /** The relabel: the label must still be this replica's; it becomes `owner`'s. */
  async #relabel(resource: references.Resource, body: bodies.RawBody, owner: string, signal: AbortSignal): Promise<'moved' | 'gone' | 'lost'> {
    const path = labelPath(this.ring.label);
    const patch = [
      { op: 'test', path, value: this.ring.identity },
      { op: 'replace', path, value: owner },
    ];
    try {
      await this.#scope.api.patch(resource, body.metadata?.namespace ?? null, body.metadata!.name!, patch, { type: 'json', signal });
      this.#logger.debug(`Handed ${references.resourceName(resource)} ${body.metadata?.namespace ?? ''}/${body.metadata?.name} over to ${owner}.`);
      return 'moved';
    } catch (error) {
      if (error instanceof clientErrors.ApiNotFoundError) return 'gone';
      if (isLostRace(error)) return 'lost';
      throw error;
    }
  }

  /**
   * After the release, the object is this replica's again: unblocked, re-read, processed as listed.
   * Not while the operator is paused (fenced: its objects may be claimed by the others meanwhile):
   * then it is only unblocked and forgotten as known, and the re-listing after the pause brings it
   * back if it is still this replica's.
   */
  async #resume(dimension: Dimension, body: bodies.RawBody, signal: AbortSignal): Promise<void> {
    const key = bodies.objectKey(body);
    this.#unblock(key);
    if (this.#scope.paused?.isOn()) {
      dimension.known.delete(key);
      return;
    }
    const fresh = await this.#reread(dimension.watcher.resource, body, signal);
    if (fresh === undefined || fresh.metadata?.labels?.[this.ring.label] !== this.ring.identity) return;
    const event: bodies.RawEvent = { type: null, object: fresh };
    if (this.#pass(key, event)) {
      dimension.known.set(key, { namespace: fresh.metadata?.namespace ?? null, name: fresh.metadata?.name ?? '' });
      dimension.watcher.feed(event);
    }
  }

  /*
   * The release of one object (R-SHARD-203).
   */

  /**
   * Releases one object: blocks it, lets its queue worker finish, stops and awaits its daemons and
   * timers, awaits its reconcile calls and holds back new ones, and forgets it. Resolves when this
   * replica no longer works on it; the key stays blocked (see the module's comment).
   */
  release(resource: references.Resource, body: bodies.RawBody): Promise<void> {
    const meta = body.metadata ?? {};
    return this.#release(resource, bodies.objectKey(body), meta.namespace ?? null, meta.name ?? '', false);
  }

  /** The release; `vanishing` for an object forgotten after it left unseen (a handover's release takes such one over). */
  #release(resource: references.Resource, key: string, namespace: string | null, name: string, vanishing: boolean): Promise<void> {
    const block = this.#blocked.get(key);
    // A vanishing object has left already (the listing lacked it): a handover taking it over needs no DELETED.
    if (block === undefined) this.#blocked.set(key, { resource, namespace, name, releasing: true, departed: vanishing, vanishing, returned: undefined });
    else {
      block.releasing = true;
      block.vanishing &&= vanishing;
    }
    const running = this.#releasing.get(key);
    if (running !== undefined) return running;
    const done = this.#letGo(resource, namespace, name, key).finally(() => this.#releasing.delete(key));
    this.#releasing.set(key, done);
    return done;
  }

  async #letGo(resource: references.Resource, namespace: string | null, name: string, key: string): Promise<void> {
    const { reconcilers, memories, indices, cache, barrier } = this.#scope;
    const held = reconcilers?.hold?.(resource, namespace, name); // no new call from now on
    const queues = [...this.#dimensions].map((d) => d.watcher).filter((w) => resourceId(w.resource) === resourceId(resource) && w.queue !== undefined);
    await Promise.all(queues.map((watcher) => watcher.queue!.release(key)));
    await Promise.all([held, this.#stopDaemons(key)]);
    memories.forget(key);
    indices?.forget(key);
    cache?.drop(resource, namespace, name);
    barrier?.release(key);
  }

  /** Stops the object's daemons and timers and waits until each has exited (orphans included). */
  async #stopDaemons(key: string): Promise<void> {
    const daemons = this.#scope.memories.peek(key)?.daemons;
    if (daemons === undefined) return;
    const scope = { settings: this.#scope.settings, clock: this.#scope.clock };
    await Promise.all(
      [...daemons.running.values()].map(async (daemon) => {
        await spawning.stopInMemory(daemon, R.OPERATOR_PAUSING, scope);
        await daemon.done;
      }),
    );
  }

  /** The release is over and the label moved: unblocked now if the watch already saw it leave. */
  #released(key: string): void {
    const block = this.#blocked.get(key);
    if (block === undefined) return;
    block.releasing = false;
    if (block.departed) this.#unblock(key);
  }

  #unblock(key: string): void {
    const block = this.#blocked.get(key);
    if (block === undefined) return;
    this.#blocked.delete(key);
    this.#scope.reconcilers?.unhold?.(block.resource, block.namespace, block.name);
  }
}
