/**
 * Credentials going bad while the operator works (R-AUTH-3, R-AUTH-5): a PATCH answered with 401
 * invalidates the credentials, the login activity runs again, and the same request is retried with
 * the new token — the handler's work is neither lost nor repeated. Expired tokens likewise.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../devcluster/testing.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

const LHC = 'kopf.zalando.org/last-handled-configuration';

describe('re-authentication while handling', () => {
  let cluster: DevCluster;
  const logs = new fx.LogCapture();
  beforeEach(async () => {
    cluster = await fx.startCluster({ auth: 'enforced' });
    logs.install();
  });
  afterEach(async () => {
    logs.uninstall();
    await cluster.stop();
  });

  function addToken(token: string, expiresAt?: Date): void {
    cluster.auth.addToken({ token, username: `operator-${token}`, groups: ['system:masters'], ...(expiresAt ? { expiresAt } : {}) });
  }

  it('R-AUTH-3 R-AUTH-5 a 401 on a PATCH re-runs the login and retries the same request with the new token', async () => {
    addToken('token-1');
    let current = 'token-1';
    const logins: string[] = [];
    const registry = new OperatorRegistry();
    on.login({ registry }, function login_fn() {
      logins.push(current);
      return { server: cluster.url, token: current };
    });
    const gate = fx.deferred();
    const created: string[] = [];
    on.create('kopfexamples', { registry }, async function create_fn({ name }: { name: string }) {
      created.push(name);
      await gate.promise;
      return { done: true };
    });
    const op = await fx.startOperator({ cluster, registry });
    await cluster.store.create(fx.kopfExample());
    await fx.eventually(() => created.length === 1, 'the handler');
    // The token is revoked while the handler runs; the login handler now hands out another one.
    cluster.auth.revokeToken('token-1');
    addToken('token-2');
    current = 'token-2';
    gate.resolve();
    await fx.eventually(() => fx.annotationsOf(cluster, 'kopf-example-1')[LHC] !== undefined, 'the diff-base');
    await fx.atRest(logs, 'kopf-example-1');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(created).toEqual(['kopf-example-1']);
    expect(logins).toEqual(['token-1', 'token-2']);
    expect(logs.grep('authentication has', fx.INFO)).toEqual([
      'Initial authentication has been initiated.',
      'Initial authentication has finished.',
      'Re-authentication has been initiated.',
      'Re-authentication has finished.',
    ]);
    // The first write after the revocation is the status's (results go before progress, R-PATCH-10).
    const patches = cluster.requests.filter((r) => r.method === 'PATCH' && r.name === 'kopf-example-1' && r.subresource === 'status');
    expect(patches.slice(0, 2).map((r) => r.code)).toEqual([401, 200]);
    expect(patches[1]!.user).toBe('operator-token-2');
    expect(patches[1]!.body).toBe(patches[0]!.body);
    expect(logs.grep('Throttling')).toEqual([]);
    expect(logs.grep("Handler 'create_fn' succeeded.")).toHaveLength(1);
  });

  it('R-AUTH-3 expired credentials are replaced through the login activity and objects keep being handled', async () => {
    let counter = 0;
    const registry = new OperatorRegistry();
    on.login({ registry }, function login_fn() {
      counter += 1;
      const token = `token-${counter}`;
      const expiration = new Date(Date.now() + 1500);
      addToken(token, counter === 1 ? expiration : undefined);
      return { server: cluster.url, token, ...(counter === 1 ? { expiration } : {}) };
    });
    const created: string[] = [];
    on.create('kopfexamples', { registry }, function create_fn({ name }: { name: string }) {
      created.push(name);
    });
    const op = await fx.startOperator({ cluster, registry });
    await cluster.store.create(fx.kopfExample('kex-before'));
    await fx.eventually(() => created.length === 1, 'the first object');
    await fx.eventually(() => logs.grep('Re-authentication has finished.').length === 1, 're-authentication', 5000);
    await cluster.store.create(fx.kopfExample('kex-after'));
    await fx.eventually(() => fx.annotationsOf(cluster, 'kex-after')[LHC] !== undefined, 'the second object');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(created).toEqual(['kex-before', 'kex-after']);
    expect(counter).toBe(2);
    const late = cluster.requests.filter((r) => r.method === 'PATCH' && r.name === 'kex-after');
    expect(late.length).toBeGreaterThan(0);
    expect(late.map((r) => r.user)).toEqual(late.map(() => 'operator-token-2'));
  });
});
