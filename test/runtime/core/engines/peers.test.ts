// The identity of an operator among peers (R-PEER-3) and the records of the peering objects,
// byte for byte as Kopf writes and reads them (R-PEER-4), with the evaluation of one state of the
// peering object (R-PEER-6, R-PEER-8) and how malformed entries written by others are treated.
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../../runtime/cogs/aio/clocks.js';
import * as identities from '../../../../runtime/core/engines/identities.js';
import * as peers from '../../../../runtime/core/engines/peers.js';

const T0 = Date.UTC(2026, 10, 24, 10, 0, 0) + 123.456; // 2026-11-24T10:00:00.123456Z

describe('R-PEER-3 identity', () => {
  const fixed = { user: 'alice', host: 'laptop', clock: new VirtualClock({ start: T0 }), random: () => 0.99 };

  it('R-PEER-3 $POD_ID wins over everything', () => {
    expect(identities.detectOwnId({ manual: false, env: { POD_ID: 'op-7d9f-x2' }, ...fixed })).toBe('op-7d9f-x2');
    expect(identities.detectOwnId({ manual: true, env: { POD_ID: 'op-7d9f-x2' }, ...fixed })).toBe('op-7d9f-x2');
  });

  it('R-PEER-3 operators: <user>@<host>/<UTC YYYYmmddHHMMSS>/<3 chars of a-z without g and 0-9>', () => {
    expect(identities.detectOwnId({ manual: false, env: {}, ...fixed })).toBe('alice@laptop/20261124100000/999');
    let n = 0;
    const sequence = [0, 6 / 35, 0.5];
    expect(identities.detectOwnId({ manual: false, env: {}, ...fixed, random: () => sequence[n++]! })).toBe('alice@laptop/20261124100000/ahs');
    for (let i = 0; i < 200; i += 1) {
      const id = identities.detectOwnId({ manual: false, env: {}, user: 'u', host: 'h', clock: new VirtualClock({ start: T0 }) });
      expect(id).toMatch(/^u@h\/20261124100000\/[a-fh-z0-9]{3}$/);
    }
  });

  it('R-PEER-3 freeze/resume: <user>@<host>; the user from LOGNAME/USER/LNAME/USERNAME first', () => {
    expect(identities.detectOwnId({ manual: true, env: {}, ...fixed })).toBe('alice@laptop');
    expect(identities.detectOwnId({ manual: true, env: { USER: 'bob', LOGNAME: 'carol' }, host: 'h' })).toBe('carol@h');
    expect(identities.detectOwnId({ manual: true, env: { USERNAME: 'dave' }, host: 'h' })).toBe('dave@h');
    expect(identities.detectOwnId({ manual: true, env: { POD_ID: '', USER: 'eve' }, host: 'h' })).toBe('eve@h');
  });

  it('R-PEER-3 the host name loses .local and .localdomain', () => {
    expect(identities.hostName('mac.local')).toBe('mac');
    expect(identities.hostName('box.localdomain.local')).toBe('box');
    expect(identities.hostName('node-1.example.com')).toBe('node-1.example.com');
  });
});

describe('R-PEER-4 record format', () => {
  it('R-PEER-4 lastseen is Python isoformat() of UTC: microseconds unless zero, +00:00', () => {
    expect(peers.formatLastseen(T0)).toBe('2026-11-24T10:00:00.123456+00:00');
    expect(peers.formatLastseen(Date.UTC(2026, 10, 24, 10, 0, 0))).toBe('2026-11-24T10:00:00+00:00');
    expect(peers.formatLastseen(Date.UTC(2026, 10, 24, 10, 0, 0) + 5)).toBe('2026-11-24T10:00:00.005000+00:00');
    expect(peers.formatLastseen(Date.UTC(2026, 10, 24, 10, 0, 0) + 999.9999)).toBe('2026-11-24T10:00:01+00:00');
  });

  it('R-PEER-4 the entry is {priority, lifetime, lastseen} in this order, as JSON byte for byte', () => {
    expect(JSON.stringify({ status: { 'alice@laptop/20261124100000/x7k': peers.recordOf(100, 60, T0) } })).toBe(
      '{"status":{"alice@laptop/20261124100000/x7k":{"priority":100,"lifetime":60,"lastseen":"2026-11-24T10:00:00.123456+00:00"}}}',
    );
  });

  it('R-PEER-4 reading accepts what Kopf writes and other ISO-8601 forms', () => {
    const kopf = '2026-11-24T10:00:00.123456+00:00';
    expect(peers.parseLastseen(kopf)).toBeCloseTo(T0, 6);
    expect(peers.parseLastseen(peers.formatLastseen(T0))).toBeCloseTo(T0, 6);
    expect(peers.parseLastseen('2026-11-24T10:00:00Z')).toBe(Date.UTC(2026, 10, 24, 10, 0, 0));
    expect(peers.parseLastseen('2026-11-24T12:00:00+02:00')).toBe(Date.UTC(2026, 10, 24, 10, 0, 0));
    expect(peers.parseLastseen('2026-11-24T10:00:00')).toBe(Date.UTC(2026, 10, 24, 10, 0, 0)); // naive = UTC
    expect(peers.parseLastseen('2026-11-24 10:00:00.5')).toBe(Date.UTC(2026, 10, 24, 10, 0, 0) + 500);
    for (const bad of ['yesterday', '', '2026-13-01T00:00:00Z', '2026-02-30T00:00:00Z', '10:00:00']) expect(peers.parseLastseen(bad)).toBeUndefined();
  });

  it('R-PEER-4 missing fields: priority 0, lifetime 60, lastseen now; extra keys are tolerated', () => {
    const peer = peers.parsePeer('x', { extra: { nested: true }, message: 'hi' }, T0);
    expect(peer).toEqual({ identity: 'x', priority: 0, lifetime: 60, lastseen: T0, deadline: T0 + 60_000 });
    expect(peers.parsePeer('y', { priority: '100', lifetime: '30.7', lastseen: null }, T0)).toMatchObject({ priority: 100, lifetime: 30, lastseen: T0 });
  });

  it('R-PEER-4 malformed entries are reported, not used, and never crash the reading', () => {
    const status = {
      good: { priority: 1, lifetime: 60, lastseen: '2026-11-24T10:00:00+00:00' },
      words: { priority: 'high' },
      forever: { lifetime: 'forever' },
      when: { lastseen: 'yesterday' },
      number: { lastseen: 12345 },
      scalar: 'alive',
      list: [1, 2],
      nothing: null,
    };
    const { peers: found, malformed } = peers.parsePeers(status, T0);
    expect(found.map((p) => p.identity)).toEqual(['good']);
    expect(malformed).toEqual([
      { identity: 'words', reason: 'priority is not a number: "high"' },
      { identity: 'forever', reason: 'lifetime is not a number: "forever"' },
      { identity: 'when', reason: 'lastseen is not an ISO-8601 time: "yesterday"' },
      { identity: 'number', reason: 'lastseen is not an ISO-8601 time: 12345' },
      { identity: 'scalar', reason: 'the entry is not an object' },
      { identity: 'list', reason: 'the entry is not an object' },
      { identity: 'nothing', reason: 'the entry is not an object' },
    ]);
    for (const status of [null, 'text', 42, [], undefined]) expect(peers.parsePeers(status, T0)).toEqual({ peers: [], malformed: [] });
  });
});

describe('R-PEER-6 evaluation of one state', () => {
  const at = (secondsAgo: number): string => peers.formatLastseen(T0 - secondsAgo * 1000);

  it('R-PEER-6 dead entries (lastseen + lifetime in the past) are found, self included', () => {
    const verdict = peers.judge(
      {
        me: { priority: 0, lifetime: 60, lastseen: at(61) },
        old: { priority: 9, lifetime: 10, lastseen: at(10) }, // deadline == now: dead
        fresh: { priority: 9, lifetime: 10, lastseen: at(9) },
      },
      'me',
      0,
      T0,
    );
    expect(verdict.dead.map((p) => p.identity)).toEqual(['me', 'old']);
    expect(verdict.higher.map((p) => p.identity)).toEqual(['fresh']);
  });

  it('R-PEER-8 R-PEER-6 higher, same and lower priorities of live others; self is never a peer', () => {
    const status = {
      me: { priority: 5, lifetime: 60, lastseen: at(1) },
      up: { priority: 6, lifetime: 60, lastseen: at(1) },
      twin: { priority: 5, lifetime: 60, lastseen: at(1) },
      down: { priority: 4, lifetime: 60, lastseen: at(1) },
    };
    const verdict = peers.judge(status, 'me', 5, T0);
    expect(verdict.higher.map((p) => p.identity)).toEqual(['up']);
    expect(verdict.same.map((p) => p.identity)).toEqual(['twin']);
    expect(verdict.dead).toEqual([]);
  });

  it('R-PEER-6 peers are printed as Kopf prints them', () => {
    const [peer] = peers.parsePeers({ 'op@host/20261124100000/abc': { priority: 100, lifetime: 60, lastseen: '2026-11-24T10:00:00.123456+00:00' } }, T0).peers;
    expect(peers.describePeers([peer!])).toBe("[<Peer op@host/20261124100000/abc: priority=100, lifetime=60, lastseen='2026-11-24T10:00:00.123456+00:00'>]");
  });
});
