import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../../runtime/cogs/aio/clocks.js';
import * as credentials from '../../../../runtime/cogs/client/credentials.js';
import * as errors from '../../../../runtime/cogs/client/errors.js';
import { flushed } from '../../../support/waiting.js';

const SERVER = 'https://127.0.0.1:6443';

describe('R-AUTH-1 connectionInfo', () => {
  it('returns a frozen copy of valid info', () => {
    const input = { server: SERVER, token: 't', priority: 5 };
    const info = credentials.connectionInfo(input);
    expect(info).toEqual(input);
    expect(info).not.toBe(input);
    expect(Object.isFrozen(info)).toBe(true);
  });

  it.each([
    ['caPath', 'caData'],
    ['certificatePath', 'certificateData'],
    ['privateKeyPath', 'privateKeyData'],
  ])('R-AUTH-1 rejects both %s and %s', (pathKey, dataKey) => {
    expect(() => credentials.connectionInfo({ server: SERVER, [pathKey]: '/x', [dataKey]: 'data' })).toThrow(errors.InvalidConnectionInfoError);
  });

  it.each([
    [{ server: '' }],
    [{ server: 'not a url' }],
    [{ server: 'ftp://example.com' }],
    [{ server: SERVER, priority: Number.NaN }],
    [{ server: SERVER, expiration: new Date('nonsense') }],
  ])('rejects invalid info %j', (input) => {
    expect(() => credentials.connectionInfo(input)).toThrow(errors.InvalidConnectionInfoError);
  });
});

describe('R-AUTH-3 Vault', () => {
  it('starts depleted and not ready; populating makes it ready', () => {
    const vault = new credentials.Vault();
    expect(vault.depleted.isOn()).toBe(true);
    expect(vault.readiness.isOn()).toBe(false);
    expect(vault.populate({ a: { server: SERVER, token: 'a' } })).toBe(1);
    expect(vault.depleted.isOn()).toBe(false);
    expect(vault.readiness.isOn()).toBe(true);
  });

  it('selects the highest priority', async () => {
    const vault = new credentials.Vault();
    vault.populate({
      low: { server: SERVER, token: 'low', priority: 1 },
      high: { server: SERVER, token: 'high', priority: 20 },
      none: { server: SERVER, token: 'none' },
    });
    for (let i = 0; i < 10; i += 1) expect((await vault.select()).key).toBe('high');
  });

  it('picks randomly among equal priorities', async () => {
    let next = 0;
    const values = [0.1, 0.9];
    const vault = new credentials.Vault({ random: () => values[next++ % values.length]! });
    vault.populate([
      ['a', { server: SERVER, token: 'a', priority: 3 }],
      ['b', { server: SERVER, token: 'b', priority: 3 }],
      ['c', { server: SERVER, token: 'c', priority: 1 }],
    ]);
    const picked = [(await vault.select()).key, (await vault.select()).key];
    expect(picked).toEqual(['a', 'b']);
  });

  it('replaces credentials of the same key and skips null entries', async () => {
    const vault = new credentials.Vault();
    vault.populate({ login: { server: SERVER, token: 'old' }, other: null });
    vault.populate({ login: { server: SERVER, token: 'new' } });
    expect(vault.current().map((item) => item.info.token)).toEqual(['new']);
  });

  it('drops expired credentials and falls back to the next ones', async () => {
    const clock = new VirtualClock({ start: 1_000_000 });
    const vault = new credentials.Vault({ clock });
    vault.populate({
      short: { server: SERVER, token: 'short', priority: 10, expiration: new Date(1_000_000 + 5_000) },
      long: { server: SERVER, token: 'long', priority: 1 },
    });
    expect((await vault.select()).key).toBe('short');
    await clock.advance(5_000);
    expect((await vault.select()).key).toBe('long');
    expect(vault.current().map((item) => item.key)).toEqual(['long']);
  });

  it('does not accept credentials that are already expired', () => {
    const clock = new VirtualClock({ start: 10_000 });
    const vault = new credentials.Vault({ clock });
    expect(vault.populate({ old: { server: SERVER, token: 'x', expiration: new Date(9_000) } })).toBe(0);
  });

  it('invalidated credentials are dropped and never accepted again', async () => {
    const vault = new credentials.Vault();
    vault.populate({ a: { server: SERVER, token: 'a', priority: 2 }, b: { server: SERVER, token: 'b', priority: 1 } });
    const first = await vault.select();
    expect(first.key).toBe('a');
    vault.invalidate(first);
    expect((await vault.select()).key).toBe('b');
    expect(vault.isInvalid({ server: SERVER, token: 'a', priority: 2 })).toBe(true);
    expect(vault.populate({ a: { server: SERVER, token: 'a', priority: 2 } })).toBe(0);
    expect((await vault.select()).key).toBe('b');
    expect(vault.populate({ a: { server: SERVER, token: 'a2', priority: 2 } })).toBe(1);
    expect((await vault.select()).info.token).toBe('a2');
  });

  it('becomes depleted when the last credentials are invalidated, and requests wait for a re-login', async () => {
    const vault = new credentials.Vault();
    vault.populate({ a: { server: SERVER, token: 'a' } });
    vault.invalidate(await vault.select());
    expect(vault.depleted.isOn()).toBe(true);
    expect(vault.readiness.isOn()).toBe(false);
    let selected: credentials.VaultItem | undefined;
    const waiting = vault.select().then((item) => {
      selected = item;
    });
    await flushed(); // the vault is in memory: only populate() can wake the waiting request now
    expect(selected).toBeUndefined();
    vault.populate({ a: { server: SERVER, token: 'fresh' } });
    await waiting;
    expect(selected?.info.token).toBe('fresh');
    expect(vault.depleted.isOn()).toBe(false);
  });

  it('fails waiting and later requests with LoginError when a re-login brings nothing valid', async () => {
    const vault = new credentials.Vault();
    vault.populate({ a: { server: SERVER, token: 'a' } });
    const item = await vault.select();
    vault.invalidate(item);
    const waiting = vault.select();
    expect(vault.populate({ a: { server: SERVER, token: 'a' } })).toBe(0);
    await expect(waiting).rejects.toBeInstanceOf(errors.LoginError);
    await expect(vault.select()).rejects.toThrow(/^401 Unauthorized from /);
    vault.populate({ a: null });
    await expect(vault.select()).rejects.toThrow(credentials.OUT_OF_CREDENTIALS);
    vault.populate({ b: { server: SERVER, token: 'b' } });
    expect((await vault.select()).key).toBe('b');
  });

  it('an exhausted vault fails with the reason given to populate(), until a later populate', async () => {
    const vault = new credentials.Vault();
    vault.populate({ a: null }, { reason: 'No credentials found: nothing here.' });
    await expect(vault.select()).rejects.toThrow(new errors.LoginError('No credentials found: nothing here.'));
    vault.populate({ a: null });
    await expect(vault.select()).rejects.toThrow(credentials.OUT_OF_CREDENTIALS);
    vault.populate({ b: { server: SERVER, token: 'b' } }, { reason: 'unused while there are credentials' });
    expect((await vault.select()).key).toBe('b');
  });

  it('a waiting selection rejects when its signal aborts', async () => {
    const vault = new credentials.Vault();
    const controller = new AbortController();
    const waiting = vault.select(controller.signal);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
  });

  it('tells credentials with different dynamic providers apart', () => {
    const vault = new credentials.Vault();
    const one = async (): Promise<string> => 'Bearer one';
    const two = async (): Promise<string> => 'Bearer two';
    vault.populate({ a: { server: SERVER, authorization: one } });
    vault.invalidate(vault.current()[0]!);
    expect(vault.populate({ a: { server: SERVER, authorization: one } })).toBe(0);
    expect(vault.populate({ a: { server: SERVER, authorization: two } })).toBe(1);
  });
});
