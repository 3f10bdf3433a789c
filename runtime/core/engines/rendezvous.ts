/**
 * Which replica of a ring owns an object (R-SHARD-102..104): rendezvous, or highest-random-weight,
 * hashing. Every member gets a pseudo-random weight per key, and the member with the highest weight
 * owns the key. It needs no shared state and no coordination: every replica that knows the same
 * members computes the same owner. When a member joins, it takes exactly the keys for which it now
 * has the highest weight (about 1/(N+1) of them), and no key moves between the other members; when
 * a member leaves, only its keys move, each to the member with the next-highest weight.
 *
 * The weight is a 64-bit non-cryptographic hash of `member + "\0" + key`, kept as two 32-bit
 * halves (JavaScript's bit operations are 32-bit); it only needs to spread well, not to resist an
 * adversary: whoever can name objects can already relabel them.
 */

import * as bodies from '../../cogs/structs/bodies.js';

/** What assigns an object to a replica (`settings.sharding.key`). */
export type ShardKeyMode = 'uid' | 'namespace';

/** A 64-bit weight as its high and low 32-bit halves (unsigned). */
export interface Weight {
  readonly high: number;
  readonly low: number;
}

/** Odd multipliers with well-mixed bits (the 32-bit FNV prime and two golden-ratio-like constants). */
const PRIME_A = 0x01000193;
const PRIME_B = 0x9e3779b1;
const MIX_1 = 0x85ebca6b;
const MIX_2 = 0xc2b2ae35;

/** Scrambles a 32-bit state so that every input bit affects every output bit (an avalanche step). */
function avalanche(state: number): number {
  let h = state;
  h ^= h >>> 16;
  h = Math.imul(h, MIX_1);
  h ^= h >>> 13;
  h = Math.imul(h, MIX_2);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * The 64-bit weight of `text`: two lanes of multiply-xor over its UTF-16 code units, each started
 * from its own seed, crossed and scrambled at the end so that the halves are independent.
 *
 * @example
 * hash64('replica-a\u0000uid-1') // { high: …, low: … }, always the same for the same text
 */
export function hash64(text: string): Weight {
  let a = 0x811c9dc5;
  let b = 0x2545f491;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    a = Math.imul(a ^ unit, PRIME_A);
    b = Math.imul(b ^ unit, PRIME_B);
    b ^= b >>> 15;
  }
  const length = text.length;
  const high = avalanche(a ^ Math.imul(b, MIX_2) ^ length);
  const low = avalanche(b ^ Math.imul(high, MIX_1) ^ a);
  return { high, low };
}

/** The weight of `member` for `key`. */
export function weightOf(member: string, key: string): Weight {
  return hash64(`${member}\u0000${key}`);
}

/** Whether weight `a` of member `ma` beats weight `b` of member `mb` (ties: the smaller identity wins). */
function beats(a: Weight, ma: string, b: Weight, mb: string): boolean {
  if (a.high !== b.high) return a.high > b.high;
  if (a.low !== b.low) return a.low > b.low;
  return ma < mb;
}

/**
 * The owner of `key` among `members`: the member with the highest weight; `undefined` when there
 * are no members. The order of `members` does not matter.
 *
 * @example
 * ownerOf('3f2a…-uid', ['replica-a', 'replica-b']) // 'replica-b' (on every replica)
 */
export function ownerOf(key: string, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestWeight: Weight = { high: 0, low: 0 };
  for (const member of members) {
    const weight = weightOf(member, key);
    if (best === undefined || beats(weight, member, bestWeight, best)) {
      best = member;
      bestWeight = weight;
    }
  }
  return best;
}

/**
 * The key that assigns `body` to a member: its uid for `'uid'`; its namespace for `'namespace'`
 * (so one namespace's objects stay together), and a cluster-scoped object's uid. An object
 * without a uid (never one from the API) is keyed as its per-object queue keys it.
 */
export function shardKeyOf(body: bodies.RawBody, mode: ShardKeyMode): string {
  const namespace = body.metadata?.namespace;
  if (mode === 'namespace' && typeof namespace === 'string' && namespace !== '') return namespace;
  return bodies.objectKey(body);
}
