/**
 * Sharding with the handler kinds beyond cause handlers and daemons (R-SHARD-201, R-SHARD-203):
 * reconcile handlers and timers run only in the replica that owns the object, and a handoff moves
 * them after the old owner's reconcile call in flight and its timer have ended. Two to three
 * operators in this process on one devcluster, over a ring the test controls (`support/rings`);
 * every reconcile call and every timer tick notes the owner label the object had at that moment,
 * which must be the caller's own. Nothing sleeps: the tests wait for the ledger's entries.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../../devcluster/testing.js';
import * as rendezvous from '../../../../runtime/core/engines/rendezvous.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import { on } from '../../../../runtime/on.js';
import * as fx from '../../../support/operators.js';
import { RingView, ownerIn, startReplica, uidIn } from '../../../support/rings.js';

interface Call {
  readonly by: string;
  readonly name: string;
  readonly what: 'reconcile' | 'reconciled' | 'tick' | 'exit';
  /** The object's owner label in the cluster at that moment. */
  readonly label: string | undefined;
}

describe('Sharding with reconcile handlers and timers (R-SHARD-201, R-SHARD-203)', () => {
  let cluster: DevCluster;
  let view: RingView;
  let ledger: Call[];
  /** Holds the reconcile calls of the objects named here until the test lets them go. */
  let gates: Map<string, fx.Deferred>;
  const operators: fx.RunningOperator[] = [];

  beforeEach(async () => {
    cluster = await fx.startCluster();
    view = new RingView('kex');
    ledger = [];
    gates = new Map();
  });
  afterEach(async () => {
    for (const gate of gates.values()) gate.resolve();
    await Promise.all(operators.splice(0).map((op) => op.stop()));
    await cluster.stop();
  });

  const labelOf = (name: string): string | undefined => ownerIn(cluster, name, 'kex');
  const uidOf = (name: string): string => uidIn(cluster, name);
  const note = (by: string, name: string, what: Call['what']): void => {
    ledger.push({ by, name, what, label: labelOf(name) });
  };

  async function start(identity: string): Promise<fx.RunningOperator> {
    const registry = new OperatorRegistry();
    on.reconcile('kopfexamples', { registry, id: 'converge' }, async ({ name }) => {
      note(identity, name, 'reconcile');
      await gates.get(name)?.promise;
      note(identity, name, 'reconciled');
    });
    on.timer('kopfexamples', { registry, id: 'tick', interval: 0.02 }, ({ name }) => {
      note(identity, name!, 'tick');
    });
    on.daemon('kopfexamples', { registry, id: 'watchman' }, async ({ name, stopped }) => {
      await stopped.wait();
      ledger.push({ by: identity, name: name!, what: 'exit', label: labelOf(name!) });
    });
    const op = await startReplica(cluster, view, identity, registry);
    operators.push(op);
    return op;
  }

  /** Every call and tick happened while the object was labelled with the replica that made it. */
  function expectOnlyOwnersWorked(): void {
    expect(ledger.filter((call) => call.label !== call.by)).toEqual([]);
  }

  it('R-SHARD-201 reconcile calls and timer ticks run only in the owner of the object', async () => {
    view.setMembers(['op-a', 'op-b']);
    await Promise.all(['op-a', 'op-b'].map((id) => start(id)));
    const names = Array.from({ length: 8 }, (_, i) => `obj-${i}`);
    for (const name of names) await cluster.store.create(fx.kopfExample(name));
    await fx.eventually(
      () => names.every((name) => ['reconciled', 'tick'].every((what) => ledger.some((c) => c.name === name && c.what === what && c.by === labelOf(name)))),
      'a reconcile call and a timer tick of every object in its owner',
    );
    for (const name of names) {
      expect(labelOf(name)).toBe(rendezvous.ownerOf(uidOf(name), ['op-a', 'op-b']));
      expect(new Set(ledger.filter((c) => c.name === name).map((c) => c.by))).toEqual(new Set([labelOf(name)]));
    }
    expect(new Set(names.map(labelOf))).toEqual(new Set(['op-a', 'op-b'])); // both replicas own some
    expectOnlyOwnersWorked();
  });

  it('R-SHARD-203 a handoff waits for the reconcile call in flight; the old owner’s timer ticks no more once the object is relabelled', async () => {
    view.setMembers(['op-a']);
    await start('op-a');
    await cluster.store.create(fx.kopfExample('moving'));
    await fx.eventually(() => ledger.some((c) => c.name === 'moving' && c.what === 'tick' && c.by === 'op-a'), 'op-a to tick');
    // A replica the object hashes to once it joins; a reconcile call of op-a held in flight.
    const uid = uidOf('moving');
    const newcomer = Array.from({ length: 64 }, (_, i) => `op-n${i}`).find((id) => rendezvous.ownerOf(uid, ['op-a', id]) === id)!;
    const gate = fx.deferred();
    gates.set('moving', gate);
    await cluster.store.patch(fx.KEX, 'moving', { spec: { field: 'changed' } }, { namespace: 'default', type: 'merge-patch' });
    await fx.eventually(() => ledger.filter((c) => c.what === 'reconcile').length > ledger.filter((c) => c.what === 'reconciled').length, 'a held call');
    await start(newcomer);
    view.setMembers(['op-a', newcomer]);
    const a = operators[0]!;
    await fx.eventually(() => (a.context.sharder as unknown as { blocked: number }).blocked === 1, 'op-a to begin the release');
    // The rest of the release is done (the daemons stopped); the call in flight still holds the object.
    await fx.eventually(() => ledger.some((c) => c.what === 'exit' && c.by === 'op-a'), "op-a's daemon to exit");
    await cluster.store.create(fx.kopfExample('marker')); // a round trip through the API server
    await fx.eventually(() => labelOf('marker') !== undefined, 'the marker to be claimed');
    expect(labelOf('moving')).toBe('op-a'); // held: not relabelled while op-a's call runs
    gate.resolve();
    await fx.eventually(
      () =>
        labelOf('moving') === newcomer &&
        ['reconciled', 'tick'].every((what) => ledger.some((c) => c.name === 'moving' && c.what === what && c.by === newcomer)),
      'the newcomer to reconcile and tick the object',
    );
    // op-a's held call ended before the relabel, and op-a did nothing after the newcomer began.
    const firstOfNewcomer = ledger.findIndex((c) => c.by === newcomer && c.name === 'moving');
    expect(ledger.slice(firstOfNewcomer).filter((c) => c.by === 'op-a' && c.name === 'moving')).toEqual([]);
    expect(ledger.slice(0, firstOfNewcomer).filter((c) => c.what === 'reconciled' && c.by === 'op-a').length).toBeGreaterThan(0);
    expectOnlyOwnersWorked();
  });
});
