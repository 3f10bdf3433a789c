import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as clocks from '../../../../runtime/cogs/aio/clocks.js';
import * as credentials from '../../../../runtime/cogs/client/credentials.js';
import * as settingsModule from '../../../../runtime/cogs/configs/settings.js';
import * as errors from '../../../../runtime/core/actions/errors.js';
import * as activities from '../../../../runtime/core/engines/activities.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import { on } from '../../../../runtime/on.js';
import { Captured, eventually, tempDir } from '../reactor/lifecycle.js';
import { drive } from '../../cogs/client/helpers.js';
import * as engineErrors from '../../../../runtime/core/engines/errors.js';

let log: Captured;
beforeEach(() => {
  log = new Captured();
});
afterEach(() => {
  log.restore();
});

const T0 = Date.UTC(2024, 0, 1);

function world(registry = new OperatorRegistry()) {
  const clock = new clocks.VirtualClock({ start: T0 });
  const settings = new settingsModule.OperatorSettings();
  return { registry, clock, settings, memo: { shared: true }, signal: new AbortController().signal };
}

describe('runActivity (R-ACTIVITY-1/2/5)', () => {
  it('R-ACTIVITY-1 handlers run in one go, then the unfinished ones are retried together when due', async () => {
    const w = world();
    const calls: string[] = [];
    on.startup({ registry: w.registry }, function first({ retry }) {
      calls.push(`first#${retry}@${w.clock.now() - T0}`);
      if (retry < 2) throw new errors.TemporaryError('later', { delay: 1.5 });
    });
    on.startup({ registry: w.registry }, function second({ retry }) {
      calls.push(`second#${retry}@${w.clock.now() - T0}`);
      if (retry < 1) throw new errors.TemporaryError('soon', { delay: 1 });
      return 'done';
    });
    const { value, slept } = await drive(w.clock, activities.runActivity({ ...w, activity: 'startup', handlers: w.registry.activityHandlers('startup') }));
    expect(calls).toEqual(['first#0@0', 'second#0@0', 'second#1@1000', 'first#1@1500', 'first#2@3000']);
    expect(slept).toEqual([1000, 500, 1500]);
    expect(value).toEqual(
      new Map([
        ['first', undefined],
        ['second', 'done'],
      ]),
    );
  });

  it('R-ACTIVITY-5 activity handlers are described as "Activity \'<id>\'" in the logs', async () => {
    const w = world();
    on.startup({ registry: w.registry }, function startup_fn({ retry }) {
      if (retry === 0) throw new errors.TemporaryError('Going to succeed in 1s', { delay: 1 });
    });
    await drive(w.clock, activities.runActivity({ ...w, activity: 'startup', handlers: w.registry.activityHandlers('startup') }));
    expect(log.lines).toEqual([
      "Activity 'startup_fn' is invoked.",
      "Activity 'startup_fn' failed temporarily: Going to succeed in 1s",
      "Activity 'startup_fn' is invoked.",
      "Activity 'startup_fn' succeeded.",
    ]);
    expect(new Set(log.records.map((r) => r.name))).toEqual(new Set(['kopf.activities.startup']));
  });

  it('R-KWARGS-7 activity handlers get logger, memo, settings, activity, param, retry kwargs and indices, no resource kwargs', async () => {
    const w = world();
    let seen: Record<string, unknown> = {};
    on.cleanup({ registry: w.registry, param: 42 }, function cleanup_fn(kwargs) {
      seen = { ...kwargs };
      kwargs.logger.info('Cleaning up...');
    });
    await drive(
      w.clock,
      activities.runActivity({ ...w, activity: 'cleanup', handlers: w.registry.activityHandlers('cleanup'), indices: { byName: 'the-index' } }),
    );
    expect(seen['activity']).toBe('cleanup');
    expect(seen['memo']).toBe(w.memo);
    expect(seen['settings']).toBe(w.settings);
    expect(seen['param']).toBe(42);
    expect(seen['retry']).toBe(0);
    expect(seen['started']).toEqual(new Date(T0));
    expect(seen['runtime']).toBe(0);
    expect(seen['byName']).toBe('the-index');
    expect(seen['signal']).toBe(w.signal);
    expect('body' in seen || 'patch' in seen || 'name' in seen).toBe(false);
    expect(log.lines).toContain('Cleaning up...');
  });

  it('R-ERRORS-3 arbitrary errors retry after the backoff (TEMPORARY by default); retries limit fails the activity', async () => {
    const w = world();
    w.settings.execution.defaultBackoff = 2;
    const calls: number[] = [];
    on.startup({ registry: w.registry, retries: 3 }, function flaky() {
      calls.push(w.clock.now() - T0);
      throw new Error('Whoops!');
    });
    on.startup({ registry: w.registry }, function fine() {});
    const { error, slept } = await drive(w.clock, activities.runActivity({ ...w, activity: 'startup', handlers: w.registry.activityHandlers('startup') }));
    expect(calls).toEqual([0, 2000, 4000]);
    expect(slept).toEqual([2000, 2000]);
    expect(error).toBeInstanceOf(engineErrors.ActivityError);
    expect((error as engineErrors.ActivityError).code).toBe('ActivityError');
    expect((error as engineErrors.ActivityError).cause).toBeInstanceOf(errors.HandlerRetriesError);
    expect([...(error as engineErrors.ActivityError).outcomes.keys()]).toEqual(['flaky', 'fine']);
    expect(log.matching("Activity 'flaky' failed with an exception and will try again in 2 seconds: Whoops!")).toHaveLength(2);
    expect(log.matching("Activity 'flaky' failed with an exception and will stop now (it would exceed 3 retries on the next attempt): Whoops!")).toHaveLength(
      1,
    );
  });

  it('R-ACTIVITY-2 without handlers an activity finishes at once with no results', async () => {
    const w = world();
    await expect(activities.runActivity({ ...w, activity: 'cleanup', handlers: [] })).resolves.toEqual(new Map());
    expect(log.lines).toEqual([]);
  });

  it('R-ERRORS-8 aborting cancels a running handler and rejects the activity', async () => {
    const w = world();
    const controller = new AbortController();
    on.startup({ registry: w.registry }, async function slow() {
      await new Promise(() => undefined);
    });
    const running = activities.runActivity({ ...w, signal: controller.signal, activity: 'startup', handlers: w.registry.activityHandlers('startup') });
    await eventually(() => log.lines.length > 0, 'the invocation');
    controller.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(log.matching("Activity 'slow' is cancelled. Will escalate.")).toHaveLength(1);
  });
});

describe('authentication (R-AUTH-1..3)', () => {
  it('R-AUTH-1 login results populate the vault; null results are skipped', async () => {
    const w = world();
    on.login({ registry: w.registry }, function login_a() {
      return { server: 'https://a.example:6443', token: 'a', priority: 5 };
    });
    on.login({ registry: w.registry }, function login_b() {
      return null;
    });
    const vault = new credentials.Vault();
    const accepted = await activities.authenticate({ ...w, handlers: w.registry.activityHandlers('authentication'), vault, title: 'Initial authentication' });
    expect(accepted).toBe(1);
    expect(vault.current().map((item) => [item.key, item.info.token])).toEqual([['login_a', 'a']]);
    expect(log.matching('authentication')).toEqual(['Initial authentication has been initiated.', 'Initial authentication has finished.']);
  });

  it('R-AUTH-2 without login handlers, the built-in logins are used: service account, then kubeconfig', async () => {
    expect(activities.loginHandlers([]).map((h) => h.id)).toEqual(['login_with_service_account', 'login_with_kubeconfig']);
    const dir = tempDir();
    const file = path.join(dir, 'config');
    fs.writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: here',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]',
        'users: [{name: u, user: {token: from-kubeconfig}}]',
        'contexts: [{name: here, context: {cluster: c, user: u, namespace: ns1}}]',
        '',
      ].join('\n'),
    );
    const saved = process.env['KUBECONFIG'];
    process.env['KUBECONFIG'] = file;
    try {
      const w = world();
      const vault = new credentials.Vault();
      await activities.authenticate({ ...w, handlers: [], vault });
      expect(vault.current().map((item) => [item.key, item.info.token, item.info.defaultNamespace, item.info.priority])).toEqual([
        ['login_with_kubeconfig', 'from-kubeconfig', 'ns1', 10],
      ]);
      expect(log.matching("Activity 'login_with_kubeconfig' succeeded.")).toHaveLength(1);
    } finally {
      if (saved === undefined) delete process.env['KUBECONFIG'];
      else process.env['KUBECONFIG'] = saved;
    }
  });

  it('R-AUTH-3 when the built-in logins fail, the vault refuses requests saying how they failed', async () => {
    const file = path.join(tempDir(), 'config');
    fs.writeFileSync(file, 'apiVersion: v1\nkind: Config\ncurrent-context: nowhere\n');
    const saved = process.env['KUBECONFIG'];
    process.env['KUBECONFIG'] = file;
    try {
      const w = world();
      const vault = new credentials.Vault();
      await activities.authenticate({ ...w, handlers: [], vault, title: 'Initial authentication' });
      expect(log.matching('Initial authentication has failed: no credentials were retrieved from the login handlers.')).toHaveLength(1);
      await expect(vault.select()).rejects.toThrow(
        `No credentials: login_with_kubeconfig failed: The kubeconfig's context "nowhere" is not defined (${file}).`,
      );
    } finally {
      if (saved === undefined) delete process.env['KUBECONFIG'];
      else process.env['KUBECONFIG'] = saved;
    }
  });

  it('R-AUTH-3 no credentials from the login handlers: the WARNING, and the vault refuses requests', async () => {
    const w = world();
    on.login({ registry: w.registry }, function login_fn() {
      return null;
    });
    const vault = new credentials.Vault();
    await activities.authenticate({ ...w, handlers: w.registry.activityHandlers('authentication'), vault, title: 'Re-authentication' });
    expect(log.matching('Re-authentication has failed: no credentials were retrieved from the login handlers.')).toHaveLength(1);
    expect(log.records.find((r) => r.message.includes('has failed'))?.level).toBe(30);
    await expect(vault.select()).rejects.toMatchObject({ name: 'LoginError', message: credentials.OUT_OF_CREDENTIALS }); // Kopf's message
  });

  it('R-AUTH-3 the authenticator logs in at start and again whenever the vault is depleted', async () => {
    const w = world();
    let n = 0;
    on.login({ registry: w.registry }, function login_fn() {
      n += 1;
      return { server: 'https://k.example', token: `t${n}` };
    });
    const vault = new credentials.Vault();
    const controller = new AbortController();
    const task = activities.authenticator({ ...w, signal: controller.signal, handlers: w.registry.activityHandlers('authentication'), vault });
    const first = await vault.select();
    expect(first.info.token).toBe('t1');
    vault.invalidate(first);
    expect((await vault.select()).info.token).toBe('t2');
    controller.abort();
    await task;
    expect(log.matching('authentication')).toEqual([
      'Initial authentication has been initiated.',
      'Initial authentication has finished.',
      'Re-authentication has been initiated.',
      'Re-authentication has finished.',
    ]);
  });

  it('R-AUTH-3 expiring credentials trigger a re-login when they expire', async () => {
    const w = world();
    let n = 0;
    on.login({ registry: w.registry }, function login_fn() {
      n += 1;
      return { server: 'https://k.example', token: `t${n}`, expiration: new Date(w.clock.now() + 30_000) };
    });
    const vault = new credentials.Vault({ clock: w.clock });
    const controller = new AbortController();
    const task = activities.authenticator({ ...w, signal: controller.signal, handlers: w.registry.activityHandlers('authentication'), vault });
    expect((await vault.select()).info.token).toBe('t1');
    await eventually(() => w.clock.nextDue() !== undefined, 'the expiry timer');
    expect(w.clock.nextDue()! - w.clock.now()).toBe(30_000);
    await w.clock.advance(30_000);
    await eventually(() => n === 2, 'the re-login');
    expect((await vault.select()).info.token).toBe('t2');
    controller.abort();
    await task;
    expect(log.matching('Re-authentication has finished.')).toHaveLength(1);
  });

  it('R-AUTH-1 a login handler failing for good fails the authenticator', async () => {
    const w = world();
    on.login({ registry: w.registry, errors: 'PERMANENT' }, function login_fn() {
      throw new Error('No kubeconfig.');
    });
    const vault = new credentials.Vault();
    await expect(activities.authenticator({ ...w, handlers: w.registry.activityHandlers('authentication'), vault })).rejects.toBeInstanceOf(
      engineErrors.ActivityError,
    );
    expect(log.matching("Activity 'login_fn' failed with an exception and will stop now: No kubeconfig.")).toHaveLength(1);
  });
});
