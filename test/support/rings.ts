/**
 * A ring the test controls, for the handoff's tests without the Lease-based membership: one
 * shared view of the members (set by the test), each operator's `StaticRing` over it with its own
 * identity, whether a replica is gone answered by the test (possibly later: a deferred answer), and
 * a fence per replica (a member of that operator's pause set, as the membership's fencing is).
 */
import type * as toggles from '../../runtime/cogs/aio/toggles.js';
import * as rings from '../../runtime/core/engines/rings.js';
import type { DevCluster } from '../../devcluster/testing.js';
import type { OperatorRegistry } from '../../runtime/core/intents/registry.js';
import type * as inventory from '../../runtime/core/reactor/inventory.js';
import * as fx from './operators.js';

/** The members and the verdicts on gone replicas, shared by the rings of the operators of one test. */
export class RingView {
  #members: readonly string[] = [];
  readonly #listeners = new Set<() => void>();
  readonly #fences = new Map<string, toggles.Toggle>();
  /** Answers `isGone` (default: no one is gone); may return a promise the test settles later. */
  gone: (identity: string) => boolean | Promise<boolean> = () => false;
  /** Every `isGone` question asked, by whom and about whom. */
  readonly asked: { readonly by: string; readonly about: string }[] = [];

  constructor(readonly name = 'kex') {}

  /** The members as every replica sees them: sorted. */
  get members(): readonly string[] {
    return this.#members;
  }

  /** Sets the members and tells every ring's subscribers. */
  setMembers(members: readonly string[]): void {
    this.#members = [...members].sort();
    for (const listener of [...this.#listeners]) listener();
  }

  /** Pauses (fences) or resumes one replica, as its membership would. */
  fence(identity: string, fenced = true): void {
    this.#fences.get(identity)?.turnTo(fenced);
  }

  /** The `ringFactory` of the replica `identity`. */
  factory(identity: string): inventory.RingFactory {
    return (parts) => {
      this.#fences.set(identity, parts.paused.makeToggle(false, 'ring membership'));
      return { ring: new StaticRing(this, identity), run: (signal) => untilAborted(signal) };
    };
  }

  /** @internal */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/** One replica's ring over a shared view. */
export class StaticRing implements rings.Ring {
  readonly label: string;

  constructor(
    private readonly view: RingView,
    readonly identity: string,
  ) {
    this.label = rings.ownerLabelOf(view.name);
  }

  get name(): string {
    return this.view.name;
  }

  members(): readonly string[] {
    return this.view.members;
  }

  subscribe(listener: () => void): () => void {
    return this.view.subscribe(listener);
  }

  async isGone(identity: string): Promise<boolean> {
    this.view.asked.push({ by: this.identity, about: identity });
    return await this.view.gone(identity);
  }
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return signal.aborted ? Promise.resolve() : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/**
 * Starts one replica of the test's ring `view` as an operator of `registry` on `cluster`: sharded
 * as `identity`, its ring `view`'s, reading it every 50 ms.
 */
export async function startReplica(cluster: DevCluster, view: RingView, identity: string, registry: OperatorRegistry): Promise<fx.RunningOperator> {
  const settings = fx.fastSettings((s) => {
    s.sharding.ring = view.name;
    s.sharding.identity = identity;
    s.sharding.retryPeriod = 0.05;
  });
  return await fx.startOperator({ cluster, registry, settings, ringFactory: view.factory(identity) });
}

/** A kopfexample's metadata as stored now (in `default`), if it exists. */
function metadataOf(cluster: DevCluster, name: string): { labels?: Record<string, string>; annotations?: Record<string, string>; uid?: string } | undefined {
  return cluster.store.get(fx.KEX, name, 'default')?.['metadata'] as ReturnType<typeof metadataOf>;
}

/** The owner a kopfexample is labelled with in `ring` now. */
export function ownerIn(cluster: DevCluster, name: string, ring: string): string | undefined {
  return metadataOf(cluster, name)?.labels?.[rings.ownerLabelOf(ring)];
}

/** A kopfexample's uid. */
export function uidIn(cluster: DevCluster, name: string): string {
  return metadataOf(cluster, name)!.uid!;
}

/** Whether a kopfexample has been handled: its diff-base is stored. */
export function handledIn(cluster: DevCluster, name: string): boolean {
  return metadataOf(cluster, name)?.annotations?.[fx.LHC] !== undefined;
}
