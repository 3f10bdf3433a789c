/**
 * Identity sources: uids and random choices (generated names, probabilistic faults), kept behind
 * one interface so that a test can make them reproducible with a `seed` (D-FAULT-15); otherwise they
 * use the system's randomness.
 */
import * as crypto from 'node:crypto';

export interface Ids {
  uid(): string;
  random(): number;
}

/** A small, fast, seedable PRNG (mulberry32); not for cryptography. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function createIds(seed?: number): Ids {
  if (seed === undefined) return { uid: () => crypto.randomUUID(), random: Math.random };
  const random = seeded(seed);
  return {
    random,
    uid() {
      const bytes = Array.from({ length: 16 }, () => Math.floor(random() * 256));
      bytes[6] = (bytes[6]! & 0x0f) | 0x40;
      bytes[8] = (bytes[8]! & 0x3f) | 0x80;
      const hex = bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    },
  };
}
