/**
 * A strategy context for unit tests of the built-in strategies: a fixed clock, counting uids, a
 * seeded random source and an in-memory set of other stored objects per storage.
 */
import type { Strategy, StrategyContext } from '../../../devcluster/api/resources.js';
import type * as json from '../../../devcluster/json.js';

type JsonObject = json.JsonObject;
type Json = { [key: string]: any };

/** A context whose `listAll(storage)` returns `stored[storage]`; `random` cycles through `randoms`. */
export function testContext(stored: Record<string, JsonObject[]> = {}, randoms: number[] = [0.5]): StrategyContext {
  let uid = 0;
  let r = 0;
  return {
    now: () => new Date('2024-05-01T10:00:00Z'),
    uid: () => `uid-${++uid}`,
    random: () => randoms[r++ % randoms.length]!,
    lookup: (storage, key) =>
      (stored[storage] ?? []).find((o) => {
        const m = o['metadata'] as JsonObject;
        return `${m['namespace'] ? `${String(m['namespace'])}/` : ''}${String(m['name'])}` === key;
      }),
    listAll: (storage) => stored[storage] ?? [],
  };
}

/** A strategy whose prepare hooks return loosely typed JSON, so tests can index results freely. */
export interface LooseStrategy extends Omit<Strategy, 'prepareForCreate' | 'prepareForUpdate'> {
  prepareForCreate(obj: Json, ctx: StrategyContext): Json;
  prepareForUpdate(obj: Json, old: Json, ctx: StrategyContext): Json;
}

/** The same strategy, typed for tests (see {@link LooseStrategy}). */
export const loose = (s: Strategy): LooseStrategy => s as LooseStrategy;
