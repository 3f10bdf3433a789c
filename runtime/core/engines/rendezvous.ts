/**
 * The assignment of objects to the replicas of a ring (docs/sharding.md): rendezvous hashing
 * (highest random weight). Each member weighs each key with a hash of both; the heaviest member
 * owns the key. Pure and deterministic, so every replica computes the same owner from the same
 * member list without talking to the others; adding a member moves only the keys it now wins.
 *
 * The weight is a 64-bit non-cryptographic hash (two independent 32-bit halves) of
 * `member + '\u0000' + key`; equal weights are broken by the identity (the smaller wins).
 */

import type * as bodies from '../../cogs/structs/bodies.js';

/** What assigns an object to a replica: its uid, or its namespace (one namespace's objects stay together). */
export type ShardKeyMode = 'uid' | 'namespace';

/** One 32-bit half of the weight: FNV-1a over UTF-16 code units from `seed`, then avalanched. */
function half(text: string, seed: number): number {
  let hash = seed >>> 0;
  for (let at = 0; at < text.length; at += 1) {
    hash ^= text.charCodeAt(at);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x7feb352d) >>> 0;
  hash ^= hash >>> 15;
  hash = Math.imul(hash, 0x846ca68b) >>> 0;
  hash ^= hash >>> 16;
  return hash >>> 0;
}

/** The weight of `member` for `key`, as its high and low 32-bit halves. */
function weightOf(member: string, key: string): readonly [number, number] {
  const text = `${member}\u0000${key}`;
  return [half(text, 0x811c9dc5), half(text, 0x9e3779b9)];
}

/** Whether weight `a` of member `ma` beats weight `b` of member `mb` (ties: the smaller identity). */
function heavier(a: readonly [number, number], ma: string, b: readonly [number, number], mb: string): boolean {
  if (a[0] !== b[0]) return a[0] > b[0];
  if (a[1] !== b[1]) return a[1] > b[1];
  return ma < mb;
}

/**
 * The member that owns `key`: the one with the highest weight; `undefined` for no members.
 *
 * @example
 * ownerOf(uid, ['replica-a', 'replica-b']) // 'replica-b', on every replica alike
 */
export function ownerOf(key: string, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let weight: readonly [number, number] = [0, 0];
  for (const member of members) {
    const candidate = weightOf(member, key);
    if (best === undefined || heavier(candidate, member, weight, best)) {
      best = member;
      weight = candidate;
    }
  }
  return best;
}

/** The key an object is assigned by: its uid, or its namespace (a cluster-scoped object's: its uid). */
export function shardKeyOf(body: bodies.RawBody | object, mode: ShardKeyMode): string {
  const meta = (body as bodies.RawBody).metadata ?? {};
  const uid = typeof meta.uid === 'string' ? meta.uid : '';
  if (mode === 'namespace' && typeof meta.namespace === 'string' && meta.namespace !== '') return meta.namespace;
  return uid;
}
