/**
 * The ring of a sharded operator (docs/sharding.md): the vocabulary that the membership (who the
 * live replicas are, from their Leases), the assignment (which replica owns an object) and the
 * reactor's handoff share, so that each of them can be built and tested without the others.
 *
 * An object's owner is the value of its label `shard.kopf-gen.dev/<ring>`; a replica watches
 * only the objects labelled with its identity, and only an object's owner works on it.
 */

/** The prefix of the label that names an object's owner: `shard.kopf-gen.dev/<ring>`. */
export const LABEL_PREFIX = 'shard.kopf-gen.dev/';

/** The label of the ring's Leases, whose value is the ring's name. */
export const RING_LABEL = 'shard.kopf-gen.dev/ring';

/** The label that names an object's owner in `ring`. */
export function ownerLabelOf(ring: string): string {
  return `${LABEL_PREFIX}${ring}`;
}

/** The live replicas of one ring, as one replica sees them. */
export interface Ring {
  /** The ring's name (`settings.sharding.ring`). */
  readonly name: string;
  /** This replica's identity (the value of the owner label on its objects). */
  readonly identity: string;
  /** The owner label of this ring's objects (`ownerLabelOf(name)`). */
  readonly label: string;
  /**
   * The live members, sorted, including this replica while it is joined and not fenced; empty
   * before this replica has joined.
   */
  members(): readonly string[];
  /** Calls `listener` after every change of `members()`; returns the unsubscription. */
  subscribe(listener: () => void): () => void;
  /**
   * Whether the replica `identity` is confirmed gone by a fresh read: its Lease is absent,
   * released, or unchanged for the Lease's duration as observed on this replica's clock. `false`
   * for a live replica and for one whose Lease exists but has not been observed long enough.
   */
  isGone(identity: string, signal: AbortSignal): Promise<boolean>;
}
