/**
 * The handoff of sharded operators (R-SHARD-201..207, R-SHARD-501): two to three operators in this process on
 * one devcluster, each with its own settings (`sharding.ring`, `sharding.identity`) and a ring
 * over one view the test controls (`support/rings`). A ledger of daemon starts and exits per
 * operator proves the guarantee: never two replicas running the daemon of one object at once.
 * Nothing sleeps: the tests wait for ledger entries, labels and the sharder's state.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../../devcluster/testing.js';
import { VirtualClock } from '../../../../runtime/cogs/aio/clocks.js';
import * as rendezvous from '../../../../runtime/core/engines/rendezvous.js';
import * as rings from '../../../../runtime/core/engines/rings.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import { on } from '../../../../runtime/on.js';
import * as fx from '../../../support/operators.js';
import { RingView, handledIn, ownerIn, startReplica, uidIn } from '../../../support/rings.js';
import { EPOCH, virtualSettings } from '../../../support/virtualtime.js';
import { advanceUntil } from '../../../support/waiting.js';

const LABEL = rings.ownerLabelOf('kex');

interface Entry {
  readonly by: string;
  readonly name: string;
  readonly what: 'start' | 'exit' | 'handled' | 'updated' | 'resumed';
  /** The object's owner label in the cluster at that moment. */
  readonly label: string | undefined;
}

describe('Sharding: claiming, rebalancing, release (R-SHARD)', () => {
  let cluster: DevCluster;
  let view: RingView;
  let ledger: Entry[];
  const operators: fx.RunningOperator[] = [];
  /** Gates of long-running create handlers, by object name. */
  let gates: Map<string, fx.Deferred>;

  beforeEach(async () => {
    cluster = await fx.startCluster();
    view = new RingView('kex');
    ledger = [];
    gates = new Map();
  });
  afterEach(async () => {
    for (const op of operators) view.fence(op.context.ring?.identity ?? '', false);
    await Promise.all(operators.splice(0).map((op) => op.stop()));
    for (const gate of gates.values()) gate.resolve();
    await cluster.stop();
  });

  const labelOf = (name: string): string | undefined => ownerIn(cluster, name, 'kex');
  const handledOf = (name: string): boolean => handledIn(cluster, name);
  const uidOf = (name: string): string => uidIn(cluster, name);

  async function start(identity: string, options: { readonly index?: boolean } = {}): Promise<fx.RunningOperator> {
    const registry = new OperatorRegistry();
    if (options.index) on.index('kopfexamples', { registry, id: 'owners' }, ({ name }) => ({ [name!]: identity }));
    on.daemon('kopfexamples', { registry, id: 'worker' }, async ({ name, stopped }) => {
      ledger.push({ by: identity, name: name!, what: 'start', label: labelOf(name!) });
      await stopped.wait();
      ledger.push({ by: identity, name: name!, what: 'exit', label: labelOf(name!) });
    });
    on.create('kopfexamples', { registry, id: 'create' }, async ({ name }) => {
      await gates.get(name!)?.promise;
      ledger.push({ by: identity, name: name!, what: 'handled', label: labelOf(name!) });
    });
    on.resume('kopfexamples', { registry, id: 'resume' }, async ({ name }) => {
      ledger.push({ by: identity, name: name!, what: 'resumed', label: labelOf(name!) });
    });
    on.update('kopfexamples', { registry, id: 'update' }, async ({ name }) => {
      ledger.push({ by: identity, name: name!, what: 'updated', label: labelOf(name!) });
    });
    const op = await startReplica(cluster, view, identity, registry);
    operators.push(op);
    return op;
  }

  async function create(names: readonly string[]): Promise<void> {
    for (const name of names) await cluster.store.create(fx.kopfExample(name));
  }

  /** The daemons running now, per object, from the ledger (also checks that never two ran at once). */
  function running(): Map<string, string> {
    const now = new Map<string, string>();
    for (const entry of ledger) {
      if (entry.what === 'start') {
        expect(now.get(entry.name), `two daemons of ${entry.name} at once`).toBeUndefined();
        now.set(entry.name, entry.by);
      } else if (entry.what === 'exit') {
        expect(now.get(entry.name)).toBe(entry.by);
        now.delete(entry.name);
      }
    }
    return now;
  }

  /** Waits until every object is labelled with its hash owner among `members` and its daemon runs there. */
  async function settledOn(names: readonly string[], members: readonly string[]): Promise<void> {
    await fx.eventually(
      () => names.every((name) => labelOf(name) === rendezvous.ownerOf(uidOf(name), members) && running().get(name) === labelOf(name)),
      `the objects to run on their owners among ${members.join(', ')}`,
    );
  }

  const claimPatches = (name: string): number =>
    cluster.requests.filter(
      (r) =>
        r.method === 'PATCH' &&
        r.resource === 'kopfexamples' &&
        r.name === name &&
        r.code < 300 &&
        (r.body ?? '').includes('"test"') &&
        (r.body ?? '').includes('shard.kopf-gen.dev~1kex'),
    ).length;

  it('R-SHARD-201, R-SHARD-202: unlabelled objects are claimed by their hash owner exactly once; each replica watches and handles only its own', async () => {
    view.setMembers(['op-a', 'op-b', 'op-c']);
    await Promise.all(['op-a', 'op-b', 'op-c'].map((id) => start(id)));
    const names = Array.from({ length: 12 }, (_, i) => `obj-${i}`);
    await create(names);
    await settledOn(names, view.members);
    await fx.eventually(() => names.every((name) => ledger.some((e) => e.name === name && e.what === 'handled')), 'the create handlers');
    for (const name of names) expect(claimPatches(name)).toBe(1);
    // Each object's daemon and create handler ran once, on its owner only.
    for (const name of names) {
      expect(ledger.filter((e) => e.name === name && e.what === 'start').map((e) => e.by)).toEqual([labelOf(name)]);
      expect(ledger.filter((e) => e.name === name && e.what === 'handled').map((e) => e.by)).toEqual([labelOf(name)]);
    }
    // The own watches carry the selector of their replica.
    const selectors = fx.watchRequests(cluster).map((r) => new URLSearchParams(r.query).get('labelSelector'));
    for (const id of view.members) expect(selectors).toContain(`${LABEL}=${id}`);
  });

  it('R-SHARD-203, R-SHARD-205: adding a member moves exactly the objects that hash to it, each after its old owner’s daemon exited', async () => {
    view.setMembers(['op-a', 'op-b']);
    await Promise.all(['op-a', 'op-b'].map((id) => start(id)));
    const names = Array.from({ length: 12 }, (_, i) => `obj-${i}`);
    await create(names);
    await settledOn(names, ['op-a', 'op-b']);
    await fx.eventually(() => names.every((name) => handledOf(name)), 'the objects handled, their diff-base stored');
    const before = new Map(names.map((name) => [name, labelOf(name)]));
    await start('op-c');
    view.setMembers(['op-a', 'op-b', 'op-c']);
    await settledOn(names, view.members);
    const moved = names.filter((name) => labelOf(name) !== before.get(name));
    expect(moved).toEqual(names.filter((name) => rendezvous.ownerOf(uidOf(name), view.members) === 'op-c'));
    expect(moved.every((name) => labelOf(name) === 'op-c')).toBe(true);
    for (const name of moved) {
      const entries = ledger.filter((e) => e.name === name);
      // The old owner's daemon exited while the object was still labelled with it; then the new one started.
      expect(entries.filter((e) => e.what === 'start' || e.what === 'exit').map((e) => [e.by, e.what])).toEqual([
        [before.get(name), 'start'],
        [before.get(name), 'exit'],
        ['op-c', 'start'],
      ]);
      expect(entries.find((e) => e.what === 'exit')!.label).toBe(before.get(name));
    }
    // A move is not a change of the object: no update handler ran on the new owner (R-SHARD-208); the
    // new owner resumes each moved object once, as a restarted operator would (R-SHARD-209).
    expect(ledger.filter((e) => e.what === 'updated')).toEqual([]);
    await fx.eventually(() => moved.every((name) => ledger.some((e) => e.name === name && e.what === 'resumed')), 'the resume handlers of the moved objects');
    expect(
      ledger
        .filter((e) => e.what === 'resumed')
        .map((e) => `${e.by} ${e.name}`)
        .sort(),
    ).toEqual(moved.map((name) => `op-c ${name}`).sort());
    // Nothing moved between the old members.
    for (const name of names.filter((n) => !moved.includes(n))) expect(ledger.filter((e) => e.name === name && e.what === 'start')).toHaveLength(1);
    for (const op of operators) expect((op.context.sharder as unknown as { blocked: number }).blocked).toBe(0);
  });

  it('R-SHARD-206: a fenced member’s objects are claimed by the others only after isGone confirms it', async () => {
    view.setMembers(['op-a', 'op-b']);
    await Promise.all(['op-a', 'op-b'].map((id) => start(id)));
    const names = Array.from({ length: 8 }, (_, i) => `obj-${i}`);
    await create(names);
    await settledOn(names, ['op-a', 'op-b']);
    await fx.eventually(() => names.every((name) => handledOf(name)), 'the objects handled, their diff-base stored');
    const ofB = names.filter((name) => labelOf(name) === 'op-b');
    expect(ofB.length).toBeGreaterThan(0);
    const confirmed = fx.deferred<boolean>();
    view.gone = (identity) => (identity === 'op-b' ? confirmed.promise : false);
    view.fence('op-b'); // its Lease is not renewed: it pauses, its daemons stop
    await fx.eventually(() => ofB.every((name) => running().get(name) === undefined), "op-b's daemons to stop");
    view.setMembers(['op-a']);
    await fx.eventually(() => view.asked.some((q) => q.by === 'op-a' && q.about === 'op-b'), 'op-a to ask whether op-b is gone');
    expect(ofB.map(labelOf)).toEqual(ofB.map(() => 'op-b'));
    confirmed.resolve(true);
    await settledOn(names, ['op-a']);
    for (const name of ofB) {
      // The claimer resumes what op-b had handled, as a restarted operator would (R-SHARD-209).
      await fx.eventually(() => ledger.some((e) => e.name === name && e.what === 'resumed'), `the resume handler of ${name}`);
      expect(ledger.filter((e) => e.name === name && e.what === 'resumed').map((e) => e.by)).toEqual(['op-a']);
      expect(ledger.filter((e) => e.name === name && (e.what === 'start' || e.what === 'exit')).map((e) => [e.by, e.what])).toEqual([
        ['op-b', 'start'],
        ['op-b', 'exit'],
        ['op-a', 'start'],
      ]);
    }
  });

  it('R-SHARD-203: a change of the members during a long-running handler waits for it; the relabel comes after it', async () => {
    view.setMembers(['op-a']);
    await start('op-a');
    const gate = fx.deferred();
    gates.set('slow', gate);
    await create(['slow']);
    await fx.eventually(() => labelOf('slow') === 'op-a', 'op-a to claim the object');
    const uid = uidOf('slow');
    // A replica that the object hashes to once it joins.
    const newcomer = Array.from({ length: 64 }, (_, i) => `op-n${i}`).find((id) => rendezvous.ownerOf(uid, ['op-a', id]) === id)!;
    await start(newcomer);
    view.setMembers(['op-a', newcomer]);
    const a = operators[0]!;
    await fx.eventually(() => (a.context.sharder as unknown as { blocked: number }).blocked === 1, 'op-a to begin the release');
    expect(labelOf('slow')).toBe('op-a');
    expect(ledger.filter((e) => e.what === 'handled')).toEqual([]);
    gate.resolve();
    await settledOn(['slow'], view.members);
    const handled = ledger.find((e) => e.what === 'handled')!;
    expect(handled).toMatchObject({ by: 'op-a', label: 'op-a' });
    // The handler ended before the daemon was stopped, and both before the newcomer started.
    expect(ledger.filter((e) => e.name === 'slow' && e.what !== 'resumed').map((e) => [e.by, e.what])).toEqual([
      ['op-a', 'start'],
      ['op-a', 'handled'],
      ['op-a', 'exit'],
      [newcomer, 'start'],
    ]);
  });

  it('R-SHARD-204: an object that is this replica’s again once released is re-read and processed as listed', async () => {
    view.setMembers(['op-a']);
    const a = await start('op-a');
    const gate = fx.deferred();
    gates.set('back', gate);
    await create(['back']);
    await fx.eventually(() => running().get('back') === 'op-a', 'the daemon to run on op-a');
    const uid = uidOf('back');
    const newcomer = Array.from({ length: 64 }, (_, i) => `op-n${i}`).find((id) => rendezvous.ownerOf(uid, ['op-a', id]) === id)!;
    await start(newcomer);
    view.setMembers(['op-a', newcomer]);
    await fx.eventually(() => (a.context.sharder as unknown as { blocked: number }).blocked === 1, 'op-a to begin the release');
    // The newcomer leaves again before the release is over: the object stays op-a's.
    view.fence(newcomer);
    view.setMembers(['op-a']);
    gate.resolve();
    await fx.eventually(() => ledger.filter((e) => e.what === 'start').length === 2 && running().get('back') === 'op-a', 'the daemon to run on op-a again');
    expect(labelOf('back')).toBe('op-a');
    // Processed as listed: the object, handled before its release, is resumed (R-SHARD-209).
    await fx.eventually(() => ledger.some((e) => e.what === 'resumed'), 'the resume handler');
    expect(ledger.map((e) => [e.by, e.what])).toEqual([
      ['op-a', 'start'],
      ['op-a', 'handled'],
      ['op-a', 'exit'],
      ['op-a', 'start'],
      ['op-a', 'resumed'],
    ]);
    expect((a.context.sharder as unknown as { blocked: number }).blocked).toBe(0);
  });

  it('R-SHARD-501: a fenced replica whose objects were claimed while its watch was closed forgets them at its re-listing', async () => {
    view.setMembers(['op-a', 'op-b']);
    const [, b] = await Promise.all(['op-a', 'op-b'].map((id) => start(id, { index: true })));
    const names = Array.from({ length: 8 }, (_, i) => `obj-${i}`);
    await create(names);
    await settledOn(names, ['op-a', 'op-b']);
    const ofB = names.filter((name) => labelOf(name) === 'op-b');
    expect(ofB.length).toBeGreaterThan(0);
    const uids = ofB.map(uidOf);
    const remembered = (): number => uids.filter((uid) => b!.context.memories.peek(uid) !== undefined).length;
    const indexed = (): number => b!.context.indices?.objects ?? 0;
    await fx.eventually(() => indexed() === ofB.length, "op-b's index to hold its objects");
    view.gone = (identity) => identity === 'op-b';
    view.fence('op-b');
    const watch = (): { paused: boolean; listed: boolean } | undefined => b!.context.streams?.snapshots().find((s) => s.description.startsWith('kopfexamples'));
    await fx.eventually(() => watch()?.paused === true, "op-b's watch to close");
    view.setMembers(['op-a']);
    await settledOn(names, ['op-a']);
    // op-b saw nothing of it: its memories and index still hold the objects.
    expect([remembered(), indexed()]).toEqual([ofB.length, ofB.length]);
    view.fence('op-b', false);
    await fx.eventually(() => watch()?.paused === false && watch()?.listed === true, "op-b's watch to list again");
    await fx.eventually(() => remembered() === 0 && indexed() === 0, 'op-b to forget the objects it no longer owns');
    expect((b!.context.sharder as unknown as { blocked: number }).blocked).toBe(0);
    // op-b started nothing for them again, and never ran a daemon alongside op-a.
    for (const name of ofB) expect(ledger.filter((e) => e.name === name && e.what === 'start').map((e) => e.by)).toEqual(['op-b', 'op-a']);
    expect(running().size).toBe(names.length);
  });

  it('R-SHARD-202: an object whose labelled owner is not confirmed gone is looked at again after retryPeriod on the operator’s clock, then claimed', async () => {
    const clock = new VirtualClock({ start: EPOCH });
    view.setMembers(['op-a']);
    const asked: number[] = [];
    // op-b is not gone at the first question, and gone at the next one.
    view.gone = (identity) => identity === 'op-b' && asked.push(clock.now()) > 1;
    const registry = new OperatorRegistry();
    on.event('kopfexamples', { registry, id: 'seen' }, () => undefined);
    const settings = virtualSettings((s) => {
      s.sharding.ring = 'kex';
      s.sharding.identity = 'op-a';
      s.sharding.retryPeriod = 2;
    });
    operators.push(await fx.startOperator({ cluster, registry, settings, clock, ringFactory: view.factory('op-a') }));
    const labels = (fx.kopfExample('orphan')['metadata'] as { labels?: Record<string, string> }).labels;
    await cluster.store.create(fx.kopfExample('orphan', { metadata: { labels: { ...labels, [LABEL]: 'op-b' } } }));
    await fx.eventually(() => asked.length === 1, 'op-a to ask whether op-b is gone');
    expect(labelOf('orphan')).toBe('op-b');
    await advanceUntil(clock, () => labelOf('orphan') === 'op-a', 'op-a to claim the object');
    // Asked again exactly retryPeriod later on the operator's clock; claimed once.
    expect(asked.map((t) => t - asked[0]!)).toEqual([0, 2000]);
    expect(claimPatches('orphan')).toBe(1);
  });
});
