/**
 * The client users already have (R-CLIENT-502, R-CLIENT-503): `@kubernetes/client-node` inside
 * handlers with the operator's live credentials — rotated tokens and 401s included — and a
 * client-node `KubeConfig` as the connection of `operator()`, `KopfRunner` and `connect()`. Through
 * the real clients against a devcluster that enforces authentication, over loopback.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../../devcluster/testing.js';
import { builtins } from '../../../../runtime/core/intents/builtins.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import { kubeConfig } from '../../../../runtime/clientnode.js';
import { InvalidConnectionInfoError, KopfRunner, connect, operator } from '../../../../runtime/index.js';
import { on } from '../../../../runtime/on.js';
import { tempDir } from '../../../support/cluster.js';
import * as fx from '../../../support/operators.js';
import { operatorFile } from '../launching/support.js';

const KEX = ['kopf.dev', 'v1', 'kopfexamples'] as const;

let cluster: DevCluster;
let logs: fx.LogCapture;

beforeEach(async () => {
  logs = new fx.LogCapture().install();
  cluster = await fx.startCluster({ auth: 'enforced' });
});
afterEach(async () => {
  logs.uninstall();
  await cluster?.stop();
});

/** The codes of the requests that created ConfigMaps, in order. */
function configMapPosts(): number[] {
  return cluster.requests.filter((r) => r.method === 'POST' && r.resource === 'configmaps').map((r) => r.code);
}

function childOf(name: string): unknown {
  return cluster.store.get({ apiVersion: 'v1', kind: 'ConfigMap' }, `${name}-child`, 'default');
}

/** A client-node `KubeConfig` of the cluster's kubeconfig file (as `kc.loadFromDefault()` reads one). */
function clientNodeConfig(token?: string): KubeConfig {
  const file = cluster.writeKubeconfig(path.join(tempDir('kopf-clientnode-'), 'kubeconfig'), token === undefined ? {} : { token });
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  return kc;
}

describe("R-CLIENT-502 kubeConfig(): client-node with the operator's live credentials", () => {
  it("R-CLIENT-502 a handler creates a ConfigMap through CoreV1Api with the operator's credentials", async () => {
    const registry = new OperatorRegistry();
    cluster.auth.addToken({ token: 'operator-token', username: 'operator', groups: ['system:masters'] });
    on.create(KEX, { registry }, async function create_fn({ name, namespace }) {
      const kc = await kubeConfig();
      expect(kc.getCurrentCluster()?.server).toBe(cluster.url);
      const core = kc.makeApiClient(CoreV1Api);
      const created = await core.createNamespacedConfigMap({
        namespace: namespace!,
        body: { metadata: { name: `${name}-child` }, data: { by: 'client-node' } },
      });
      return { uid: created.metadata?.uid };
    });
    const op = await fx.startOperator({ cluster, registry, token: 'operator-token' });
    await cluster.store.create(fx.kopfExample('plain'));
    await fx.eventually(() => childOf('plain') !== undefined, 'the child made by client-node');
    const post = cluster.requests.filter((r) => r.method === 'POST' && r.resource === 'configmaps')[0];
    expect(post).toMatchObject({ user: 'operator', code: 201 });
    await op.stop();
    expect(op.error).toBeUndefined();
  });

  it('R-CLIENT-502 a KubeConfig taken before a token rotation uses the new token after the operator re-logs in', async () => {
    const registry = new OperatorRegistry();
    let token = 'first-token-1';
    cluster.auth.addToken({ token, username: 'operator', groups: ['system:masters'] });
    let kept: KubeConfig | undefined;
    on.create(KEX, { registry }, async function create_fn({ name, client }) {
      if (name === 'before') {
        kept = await kubeConfig();
        await kept.makeApiClient(CoreV1Api).createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: `${name}-child` } } });
      } else {
        // The operator's own client meets the revoked token: the operator re-logs in.
        await client.create(builtins.ConfigMaps, { metadata: { name: `${name}-child`, namespace: 'default' } });
      }
    });
    const op = await fx.startOperator({ cluster, registry, token: () => token });
    await cluster.store.create(fx.kopfExample('before'));
    await fx.eventually(() => childOf('before') !== undefined, 'the child made before the rotation');
    cluster.auth.revokeToken('first-token-1');
    token = 'second-token-2';
    cluster.auth.addToken({ token, username: 'operator-2', groups: ['system:masters'] });
    await cluster.store.create(fx.kopfExample('after'));
    await fx.eventually(() => childOf('after') !== undefined, 'the child made after the rotation');
    expect(logs.grep('Re-authentication has finished.', fx.INFO)).toHaveLength(1);
    // The same KubeConfig, made with the first token, now sends the second.
    const read = await kept!.makeApiClient(CoreV1Api).readNamespacedConfigMap({ name: 'after-child', namespace: 'default' });
    expect(read.metadata?.name).toBe('after-child');
    const last = cluster.requests.filter((r) => r.method === 'GET' && r.resource === 'configmaps').at(-1);
    expect(last).toMatchObject({ code: 200, user: 'operator-2' });
    await op.stop();
    expect(op.error).toBeUndefined();
  });

  it('R-CLIENT-502 a 401 that client-node receives invalidates the credentials: the operator re-logs in and the next call succeeds', async () => {
    const registry = new OperatorRegistry();
    let token = 'first-token-1';
    cluster.auth.addToken({ token, username: 'operator', groups: ['system:masters'] });
    const statuses: number[] = [];
    on.create(KEX, { registry }, async function create_fn({ name }) {
      const core = (await kubeConfig()).makeApiClient(CoreV1Api);
      const body = { metadata: { name: `${name}-child` } };
      try {
        await core.createNamespacedConfigMap({ namespace: 'default', body });
      } catch (error) {
        if (!(error instanceof ApiException)) throw error;
        statuses.push(error.code);
        // The same API client again: its credentials wait for the re-login, then are the new ones.
        await core.createNamespacedConfigMap({ namespace: 'default', body });
      }
    });
    const op = await fx.startOperator({ cluster, registry, token: () => token });
    // Rotated before the operator has made any request with the old token but its watches.
    cluster.auth.revokeToken('first-token-1');
    token = 'second-token-2';
    cluster.auth.addToken({ token, username: 'operator', groups: ['system:masters'] });
    await cluster.store.create(fx.kopfExample('rejected'));
    await fx.eventually(() => childOf('rejected') !== undefined, 'the child after the re-login');
    expect(statuses).toEqual([401]);
    expect(configMapPosts()).toEqual([401, 201]);
    expect(logs.grep('Re-authentication has finished.', fx.INFO)).toHaveLength(1);
    await op.stop();
    expect(op.error).toBeUndefined();
  });

  it('R-CLIENT-502 a connect()ed client gives scripts the same; without a client outside an operator, kubeConfig() says where it works', async () => {
    await using client = await connect({ connection: { server: cluster.url, token: cluster.token, caData: cluster.caPem! } });
    const core = (await kubeConfig(client)).makeApiClient(CoreV1Api);
    const list = await core.listNamespace();
    expect(list.items.map((ns) => ns.metadata?.name)).toContain('default');
    await expect(kubeConfig()).rejects.toMatchObject({ code: 'ClientUsageError', message: expect.stringContaining('handlers of a running operator only') });
  });

  it('R-CLIENT-502 without @kubernetes/client-node installed, kubeConfig() says how to install it', async () => {
    await using client = await connect({ connection: { server: cluster.url, token: cluster.token, caData: cluster.caPem! } });
    const missing = Object.assign(new Error("Cannot find package '@kubernetes/client-node' imported from x"), { code: 'ERR_MODULE_NOT_FOUND' });
    await expect(kubeConfig(client, { loader: () => Promise.reject(missing) })).rejects.toMatchObject({
      code: 'ClientNodeUnavailable',
      message: 'kubeConfig() needs the optional package @kubernetes/client-node, which is not installed: run `npm install @kubernetes/client-node`.',
    });
  });
});

describe('R-CLIENT-503 a client-node KubeConfig as the connection', () => {
  it("R-CLIENT-503 operator() logs in with a KubeConfig's current context (server, CA, token) and re-reads it at a re-login", async () => {
    cluster.auth.addToken({ token: 'kc-token-1', username: 'from-kc', groups: ['system:masters'] });
    const kc = clientNodeConfig('kc-token-1');
    const registry = new OperatorRegistry();
    on.create(KEX, { registry }, async function create_fn({ name, client }) {
      await client.create(builtins.ConfigMaps, { metadata: { name: `${name}-child`, namespace: 'default' } });
    });
    const stopper = new AbortController();
    const running = operator({ registry, connection: kc, clusterwide: true, standalone: true, stopFlag: stopper.signal, settings: fx.fastSettings() });
    try {
      await cluster.store.create(fx.kopfExample('by-kc'));
      await fx.eventually(() => childOf('by-kc') !== undefined, 'the child');
      expect(cluster.requests.filter((r) => r.method === 'POST' && r.resource === 'configmaps')[0]).toMatchObject({ user: 'from-kc', code: 201 });
      // The owner of the KubeConfig switches it to new credentials; the old ones stop working.
      cluster.auth.addToken({ token: 'kc-token-2', username: 'from-kc-2', groups: ['system:masters'] });
      const next = clientNodeConfig('kc-token-2');
      kc.loadFromOptions({ clusters: next.clusters, users: next.users, contexts: next.contexts, currentContext: next.currentContext });
      cluster.auth.revokeToken('kc-token-1');
      await cluster.store.create(fx.kopfExample('by-kc-2'));
      await fx.eventually(() => childOf('by-kc-2') !== undefined, 'the child after the re-login');
      expect(cluster.requests.filter((r) => r.method === 'POST' && r.resource === 'configmaps').at(-1)).toMatchObject({ user: 'from-kc-2', code: 201 });
    } finally {
      stopper.abort();
      await running;
    }
  });

  it('R-CLIENT-503 KopfRunner runs an operator file with connection: a KubeConfig', async () => {
    cluster.auth.addToken({ token: 'runner-token', username: 'runner', groups: ['system:masters'] });
    const dir = tempDir('kopf-clientnode-runner-');
    fs.writeFileSync(path.join(dir, 'package.json'), '{"type": "module"}\n');
    const file = operatorFile(
      dir,
      'operator.ts',
      "on.create(['kopf.dev', 'v1', 'kopfexamples'], function create_fn({ name, logger }) { logger.info(`Created ${name}.`); });",
    );
    const kc = clientNodeConfig('runner-token');
    await using runner = await new KopfRunner(['run', '-A', '--standalone', file], {
      connection: kc,
      registry: new OperatorRegistry(),
      settings: fx.fastSettings(),
      timeout: 20,
      env: {},
    }).start();
    await cluster.store.create(fx.kopfExample('by-runner'));
    await fx.eventually(() => runner.output.includes("Handler 'create_fn' succeeded."), 'the handler');
    expect(runner.output).toContain('Created by-runner.');
    expect(cluster.requests.filter((r) => r.resource === 'kopfexamples').every((r) => r.user === 'runner')).toBe(true);
  });

  it.each([
    [
      'impersonateUser',
      (kc: KubeConfig) => Object.assign(kc.getCurrentUser()!, { impersonateUser: 'someone' }),
      'user "devcluster-admin" field "impersonateUser"',
    ],
    ['a SOCKS proxy', (kc: KubeConfig) => Object.assign(kc.getCurrentCluster()!, { proxyUrl: 'socks5://127.0.0.1:1080' }), 'field "proxyUrl"'],
    [
      'custom authenticators',
      (kc: KubeConfig) => kc.addAuthenticator({ isAuthProvider: () => true, applyAuthentication: async () => undefined }),
      'custom authenticators (addAuthenticator)',
    ],
    ['an unknown field', (kc: KubeConfig) => Object.assign(kc.getCurrentUser()!, { tokenFromTheFuture: 'x' }), 'field "tokenFromTheFuture"'],
  ] as const)('R-CLIENT-503 %s: operator() fails at once naming it', async (_what, change, named) => {
    const kc = clientNodeConfig();
    change(kc);
    const failure = await operator({ registry: new OperatorRegistry(), connection: kc, clusterwide: true, standalone: true }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(InvalidConnectionInfoError);
    expect((failure as Error).message).toContain(named);
    expect((failure as Error).message).toContain('cannot be honoured by kopf-gen');
  });
});
