/**
 * The assignment of objects to the members of a ring (`engines/rendezvous`): deterministic, equal
 * shares, and minimal movement when members join or leave — over 10,000 uid-like keys.
 *
 * The tolerance of the shares: a fair random assignment of K = 10,000 keys to N members gives each
 * member Binomial(K, 1/N) keys, whose standard deviation is at most √(K/4) = 50 keys (N = 2).
 * Allowing ±3 percentage points (300 keys, six standard deviations at the worst) leaves a fair hash
 * a chance of about 1e-9 to fail, while a biased one (e.g. one that ignores part of the key, or
 * favours a member's name) misses by far more. The hash is deterministic, so the test cannot flake.
 */
import * as crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';

import * as rendezvous from '../../../../runtime/core/engines/rendezvous.js';
import type * as bodies from '../../../../runtime/cogs/structs/bodies.js';

const KEYS = 10_000;
const TOLERANCE = 0.03;

/** Uid-like keys, the same on every run (derived from a counter, formatted as Kubernetes' uids). */
const keys: string[] = Array.from({ length: KEYS }, (_, i) => {
  const hex = crypto.createHash('sha256').update(`key-${i}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
});

const membersOf = (n: number): string[] => Array.from({ length: n }, (_, i) => `operator-7d9f8c6b5-${'abcdefgh'[i]}x${i}q`);

function owners(members: readonly string[]): string[] {
  return keys.map((key) => rendezvous.ownerOf(key, members)!);
}

function shares(assigned: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const owner of assigned) counts.set(owner, (counts.get(owner) ?? 0) + 1);
  return counts;
}

describe('Sharding: assignment by rendezvous hashing', () => {
  it('R-SHARD-102 is deterministic and independent of the members’ order; no members → undefined', () => {
    const members = membersOf(4);
    const reversed = [...members].reverse();
    const first = owners(members);
    expect(owners(members)).toEqual(first);
    expect(owners(reversed)).toEqual(first);
    expect(rendezvous.ownerOf('any', [])).toBeUndefined();
    expect(rendezvous.ownerOf('any', ['only'])).toBe('only');
    // The same text always hashes to the same weight; different texts to different weights.
    expect(rendezvous.hash64('a\u0000b')).toEqual(rendezvous.hash64('a\u0000b'));
    expect(rendezvous.hash64('a\u0000b')).not.toEqual(rendezvous.hash64('a\u0000c'));
    // The separator matters: ('ab', 'c') and ('a', 'bc') are different pairs.
    expect(rendezvous.weightOf('ab', 'c')).not.toEqual(rendezvous.weightOf('a', 'bc'));
  });

  it('R-SHARD-102 ties are broken by the smaller identity', () => {
    // The same member twice has the same weight: the tie is decided by identity, i.e. either copy.
    expect(rendezvous.ownerOf('k', ['m', 'm'])).toBe('m');
  });

  it.each([1, 2, 3, 4, 5])('R-SHARD-102 %i member(s) share 10,000 keys equally (each within ±3 points of 1/N)', (n) => {
    const members = membersOf(n);
    const counts = shares(owners(members));
    expect([...counts.keys()].sort()).toEqual([...members].sort());
    for (const member of members) {
      const share = (counts.get(member) ?? 0) / KEYS;
      expect(Math.abs(share - 1 / n), `${member}: ${share}`).toBeLessThanOrEqual(TOLERANCE);
    }
  });

  it.each([1, 2, 3, 4])('R-SHARD-103 adding a member to %i moves keys only to the new member, about 1/(N+1) of them', (n) => {
    const before = owners(membersOf(n));
    const joined = `operator-new-${n}`;
    const after = owners([...membersOf(n), joined]);
    let moved = 0;
    for (let i = 0; i < KEYS; i++) {
      if (before[i] === after[i]) continue;
      expect(after[i], `key ${i} moved from ${before[i]} to ${after[i]}`).toBe(joined);
      moved += 1;
    }
    expect(Math.abs(moved / KEYS - 1 / (n + 1)), `moved ${moved}`).toBeLessThanOrEqual(TOLERANCE);
  });

  it.each([2, 3, 4, 5])('R-SHARD-103 removing a member of %i moves only its keys, spread over the others', (n) => {
    const members = membersOf(n);
    const before = owners(members);
    const left = members[1]!;
    const remaining = members.filter((m) => m !== left);
    const after = owners(remaining);
    const received = new Map<string, number>();
    for (let i = 0; i < KEYS; i++) {
      if (before[i] === left) {
        expect(after[i]).not.toBe(left);
        received.set(after[i]!, (received.get(after[i]!) ?? 0) + 1);
      } else {
        expect(after[i], `key ${i} of ${before[i]} moved`).toBe(before[i]);
      }
    }
    // The orphans are spread over every remaining member, not dumped on one.
    expect([...received.keys()].sort()).toEqual([...remaining].sort());
  });

  it('R-SHARD-104 the shard key: the uid, or the namespace (cluster-scoped objects: their uid)', () => {
    const namespaced = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'team-a', uid: 'uid-1' } } as bodies.RawBody;
    const clusterScoped = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', uid: 'uid-2' } } as bodies.RawBody;
    expect(rendezvous.shardKeyOf(namespaced, 'uid')).toBe('uid-1');
    expect(rendezvous.shardKeyOf(namespaced, 'namespace')).toBe('team-a');
    expect(rendezvous.shardKeyOf(clusterScoped, 'uid')).toBe('uid-2');
    expect(rendezvous.shardKeyOf(clusterScoped, 'namespace')).toBe('uid-2');
    // One namespace's objects share their owner with the 'namespace' key.
    const members = membersOf(3);
    const sibling = { ...namespaced, metadata: { ...namespaced.metadata, name: 'b', uid: 'uid-3' } } as bodies.RawBody;
    expect(rendezvous.ownerOf(rendezvous.shardKeyOf(sibling, 'namespace'), members)).toBe(
      rendezvous.ownerOf(rendezvous.shardKeyOf(namespaced, 'namespace'), members),
    );
  });
});
