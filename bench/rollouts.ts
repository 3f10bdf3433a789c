/**
 * Reassignments of a sharded operator during a rolling update, Deployment versus StatefulSet
 * (`npm run bench -- rollouts`; docs/sharding.md, "Deployment or StatefulSet").
 *
 * A sharded replica that stops gracefully deletes its Lease, and the others claim its objects; a
 * replica that joins takes over the objects that hash to it (R-SHARD-107, R-SHARD-202/205). So
 * what a rollout costs is the number of owner changes, each of them one handoff (a release and a
 * relabel), and that number follows from the assignment alone: this benchmark replays the
 * rollouts' membership changes over the runtime's own rendezvous assignment (`ownerOf`) for N
 * object uids and counts the owner changes. It starts no processes: the protocol's timing is
 * measured by `npm run bench -- sharding`; here only the counts, which do not depend on timing.
 *
 * - Deployment (`maxSurge: 1, maxUnavailable: 0`): per old pod, a new pod with a new name joins,
 *   then the old pod leaves.
 * - Deployment (`maxSurge: 0, maxUnavailable: 1`): the old pod leaves, then a new pod joins.
 * - StatefulSet (`RollingUpdate`, one pod at a time): `<name>-i` leaves and comes back under the
 *   same name, so it gets back exactly the objects it had.
 */
import { randomUUID } from 'node:crypto';
import * as util from 'node:util';
import * as rendezvous from '../runtime/core/engines/rendezvous.js';
import { wholeNumber } from './options.js';
import type * as report from './report.js';

/** One step of a rollout: a member joins or leaves. */
type Step = { readonly join: string } | { readonly leave: string };

/** The owner changes of `keys` over the steps, starting from `members`; returns moves per object. */
export function replay(keys: readonly string[], members: readonly string[], steps: readonly Step[]): number {
  let ring = [...members].sort();
  let owners = keys.map((key) => rendezvous.ownerOf(key, ring));
  let moves = 0;
  for (const step of steps) {
    ring = 'join' in step ? [...ring, step.join].sort() : ring.filter((member) => member !== step.leave);
    const next = keys.map((key) => rendezvous.ownerOf(key, ring));
    for (let i = 0; i < keys.length; i++) if (next[i] !== owners[i]) moves++;
    owners = next;
  }
  return moves / keys.length;
}

/** The steps of each kind of rollout of `replicas` pods. */
export function rollouts(replicas: number): Record<'surge' | 'unavailable' | 'statefulset', { members: string[]; steps: Step[] }> {
  const old = Array.from({ length: replicas }, (_, i) => `operator-6d5f7c9b8-${String.fromCharCode(97 + i)}x${i}q`);
  const fresh = Array.from({ length: replicas }, (_, i) => `operator-7f4c8d6a9-${String.fromCharCode(97 + i)}z${i}k`);
  const stateful = Array.from({ length: replicas }, (_, i) => `operator-${i}`);
  return {
    surge: { members: old, steps: old.flatMap((pod, i): Step[] => [{ join: fresh[i]! }, { leave: pod }]) },
    unavailable: { members: old, steps: old.flatMap((pod, i): Step[] => [{ leave: pod }, { join: fresh[i]! }]) },
    statefulset: { members: stateful, steps: [...stateful].reverse().flatMap((pod): Step[] => [{ leave: pod }, { join: pod }]) },
  };
}

export async function run(args: readonly string[]): Promise<report.Result> {
  const { values } = util.parseArgs({
    args: [...args],
    strict: false,
    allowPositionals: true,
    options: { objects: { type: 'string' }, replicas: { type: 'string' } },
  });
  const objects = wholeNumber(values['objects'], 20_000, 'objects');
  const sizes = (typeof values['replicas'] === 'string' ? values['replicas'] : '2,4,8').split(',').map((n) => wholeNumber(n, 1, 'replicas'));
  if (sizes.some((n) => n > 26)) throw new Error(`--replicas must be at most 26, not ${String(values['replicas'])}`);
  const keys = Array.from({ length: objects }, () => randomUUID());
  const figures: Record<string, number> = {};
  const targets: Record<string, report.Target> = {};
  for (const replicas of sizes) {
    const kinds = rollouts(replicas);
    for (const [kind, { members, steps }] of Object.entries(kinds)) figures[`rollout_${kind}_R${replicas}_moves_per_object`] = replay(keys, members, steps);
    // Adding one replica to R (the rebalance target: ≤ 25 % when a 5th joins 4).
    const grown = kinds.statefulset.members;
    figures[`join_one_to_R${replicas}_moved_fraction`] = replay(keys, grown, [{ join: `operator-${replicas}` }]);
    if (replicas === 4) targets[`join_one_to_R${replicas}_moved_fraction`] = { max: 0.25 };
  }
  return {
    name: 'rollouts',
    figures,
    targets,
    notes: {
      model: `owner changes per object over ${objects} random uids, replayed on the runtime's rendezvous assignment; no processes (timings: npm run bench -- sharding)`,
      surge: 'Deployment, maxSurge 1 / maxUnavailable 0: per old pod, a new pod joins, then the old one leaves',
      unavailable: 'Deployment, maxSurge 0 / maxUnavailable 1: per old pod, the old one leaves, then a new pod joins',
      statefulset: 'StatefulSet, one pod at a time: <name>-i leaves and rejoins under the same name',
    },
  };
}
