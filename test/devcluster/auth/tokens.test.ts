import { describe, expect, it } from 'vitest';
import * as tokens from '../../../devcluster/auth/tokens.js';

const T0 = new Date('2025-01-01T00:00:00Z');
const at = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);

describe('TokenTable', () => {
  it('D-AUTH-2 a known token yields its user with system:authenticated added', () => {
    const table = new tokens.TokenTable();
    table.add({ token: 'tok-alice', username: 'alice', uid: 'u-1', groups: ['devs'], extra: { scope: ['a'] } });
    expect(table.lookup('tok-alice', T0)).toEqual({
      username: 'alice',
      uid: 'u-1',
      groups: ['devs', 'system:authenticated'],
      extra: { scope: ['a'] },
    });
    expect(table.lookup('tok-bob', T0)).toBeUndefined();
  });

  it('D-AUTH-2 system:authenticated is not duplicated and uid defaults to empty', () => {
    const table = new tokens.TokenTable();
    table.add({ token: 't', username: 'u', groups: ['system:authenticated', 'g', 'g'] });
    expect(table.lookup('t', T0)).toEqual({ username: 'u', uid: '', groups: ['g', 'system:authenticated'] });
  });

  it('D-AUTH-2 expiry follows the injected clock: valid before expiresAt, rejected from it on', () => {
    const table = new tokens.TokenTable();
    table.add({ token: 't', username: 'u', expiresAt: at(60) });
    expect(table.lookup('t', at(59.999))?.username).toBe('u');
    expect(table.lookup('t', at(60))).toBeUndefined();
    expect(table.lookup('t', at(3600))).toBeUndefined();
  });

  it('D-AUTH-14 check says why a token does not authenticate: unknown, not yet valid, expired', () => {
    const table = new tokens.TokenTable();
    table.add({ token: 't', username: 'u', notBefore: at(10), expiresAt: at(60) });
    expect(table.check('nope', at(20))).toEqual({ ok: false, problem: 'unknown' });
    expect(table.check('t', at(9))).toEqual({ ok: false, problem: 'notYetValid' });
    expect(table.check('t', at(60))).toEqual({ ok: false, problem: 'expired' });
    expect(table.check('t', at(20))).toEqual({
      ok: true,
      user: { username: 'u', uid: '', groups: ['system:authenticated'] },
      audiences: ['https://kubernetes.default.svc.cluster.local'],
    });
    table.revoke('t');
    expect(table.check('t', at(20))).toEqual({ ok: false, problem: 'unknown' });
  });

  it('D-AUTH-14 a token issued for other audiences does not authenticate to the API server, but does where its audience is asked for', () => {
    const table = new tokens.TokenTable();
    table.add({ token: 'v', username: 'system:serviceaccount:default:vault', audiences: ['vault'] });
    expect(table.check('v', at(1))).toEqual({ ok: false, problem: 'audience' });
    expect(table.lookup('v', at(1))).toBeUndefined();
    expect(table.check('v', at(1), ['vault'])).toMatchObject({ ok: true, audiences: ['vault'] });
  });

  it('D-AUTH-2 a not-yet-valid token is rejected until notBefore', () => {
    const table = new tokens.TokenTable();
    table.add({ token: 't', username: 'u', notBefore: at(10) });
    expect(table.lookup('t', at(9))).toBeUndefined();
    expect(table.lookup('t', at(10))?.username).toBe('u');
  });

  it('D-AUTH-2 revoke and setExpiry act on later lookups', () => {
    const table = new tokens.TokenTable();
    table.add({ token: 'a', username: 'ua' });
    table.add({ token: 'b', username: 'ub' });
    expect(table.revoke('a')).toBe(true);
    expect(table.revoke('a')).toBe(false);
    expect(table.lookup('a', T0)).toBeUndefined();
    expect(table.setExpiry('b', at(5))).toBe(true);
    expect(table.lookup('b', at(6))).toBeUndefined();
    expect(table.setExpiry('b', undefined)).toBe(true);
    expect(table.lookup('b', at(6))?.username).toBe('ub');
    expect(table.setExpiry('missing', at(1))).toBe(false);
    expect(table.size).toBe(1);
  });

  it('adding an existing token replaces its entry', () => {
    const table = new tokens.TokenTable();
    table.add({ token: 't', username: 'first' });
    table.add({ token: 't', username: 'second', groups: ['g'] });
    expect(table.lookup('t', T0)).toEqual({ username: 'second', uid: '', groups: ['g', 'system:authenticated'] });
  });

  it('entries and lookups are copies: mutating them does not change the table', () => {
    const table = new tokens.TokenTable();
    const groups = ['g'];
    table.add({ token: 't', username: 'u', groups });
    groups.push('sneaky');
    const first = table.lookup('t', T0)!;
    first.groups.push('other');
    expect(table.lookup('t', T0)!.groups).toEqual(['g', 'system:authenticated']);
  });

  it('malformed entries are refused with a coded error', () => {
    const table = new tokens.TokenTable();
    const bad: tokens.TokenEntry[] = [
      { token: '', username: 'u' },
      { token: 'has space', username: 'u' },
      { token: 't', username: '' },
      { token: 't', username: 'u', expiresAt: new Date('nonsense') },
    ];
    for (const entry of bad) expect(() => table.add(entry)).toThrowError(expect.objectContaining({ code: 'InvalidTokenEntry' }));
    expect(table.size).toBe(0);
  });
});

describe('service-account tokens', () => {
  it('D-AUTH-9 a service-account entry names the account, its groups and expires after expirationSeconds', () => {
    const entry = tokens.serviceAccountTokenEntry({ namespace: 'ns1', name: 'robot', uid: 'sa-uid', now: T0, expirationSeconds: 600 });
    expect(entry.token.length).toBeGreaterThan(30);
    const table = new tokens.TokenTable();
    table.add(entry);
    expect(table.lookup(entry.token, at(599))).toEqual({
      username: 'system:serviceaccount:ns1:robot',
      uid: 'sa-uid',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated'],
    });
    expect(table.lookup(entry.token, at(600))).toBeUndefined();
    expect(tokens.serviceAccountTokenEntry({ namespace: 'n', name: 'x', now: T0 }).expiresAt).toEqual(at(3600));
  });

  it('D-AUTH-9 a token issued for audiences is found only where one of them is accepted (the API server by default)', () => {
    const table = new tokens.TokenTable();
    table.add({ token: 'for-vault', username: 'system:serviceaccount:n:x', audiences: ['vault'] });
    table.add({ token: 'for-api', username: 'system:serviceaccount:n:y', audiences: [tokens.API_AUDIENCE, 'vault'] });
    table.add({ token: 'static', username: 'alice' });
    expect(table.lookup('for-vault', T0)).toBeUndefined();
    expect(table.lookup('for-vault', T0, ['vault'])?.username).toBe('system:serviceaccount:n:x');
    expect(table.lookup('for-api', T0)?.username).toBe('system:serviceaccount:n:y');
    expect(table.lookup('static', T0, ['anything'])?.username).toBe('alice');
  });

  it('generated tokens are distinct', () => {
    expect(tokens.generateToken()).not.toBe(tokens.generateToken());
  });
});
