/**
 * The handler argument `client` (R-KWARGS-9: a new argument beside Kopf's): the operator's typed
 * client in change handlers, daemons, timers, indexers, webhooks, cleanup handlers and probes —
 * over the operator's own connection, so that a 401 re-logs in through the operator's vault
 * (R-AUTH-3) — and whose calls fail permanently where it cannot work (startup, login).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../../devcluster/testing.js';
import * as clocks from '../../../../runtime/cogs/aio/clocks.js';
import * as clients from '../../../../runtime/cogs/client/clients.js';
import * as settingsModule from '../../../../runtime/cogs/configs/settings.js';
import * as references from '../../../../runtime/cogs/structs/references.js';
import * as invocation from '../../../../runtime/core/actions/invocation.js';
import * as admission from '../../../../runtime/core/engines/admission.js';
import { builtins } from '../../../../runtime/core/intents/builtins.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import { daemon, on, timer } from '../../../../runtime/on.js';
import * as fx from '../../../support/operators.js';
import { until } from '../../../support/waiting.js';

const KEX = ['kopf.dev', 'v1', 'kopfexamples'] as const;

/** Calls `fn` until it resolves (real time; e.g. reading an object another handler creates); the last error after 4 s. */
async function retried<T>(fn: () => Promise<T>): Promise<T> {
  let last: unknown;
  const outcome = await until(
    async () => {
      try {
        return { value: await fn() };
      } catch (error) {
        last = error;
        return undefined;
      }
    },
    'a call to succeed',
    4_000,
    20,
  ).catch(() => undefined);
  if (outcome === undefined) throw last;
  return outcome.value;
}

let cluster: DevCluster;
let logs: fx.LogCapture;

beforeEach(() => {
  logs = new fx.LogCapture().install();
});
afterEach(async () => {
  logs.uninstall();
  await cluster?.stop();
});

describe('R-KWARGS-9 the handler argument `client`', () => {
  it('a create handler creates a ConfigMap; a daemon, a timer and an indexer read it; cleanup deletes it', async () => {
    cluster = await fx.startCluster();
    const registry = new OperatorRegistry();
    const seen: string[] = [];
    on.create(KEX, { registry }, async function create_fn({ client, name, namespace }) {
      const created = await client.create(builtins.ConfigMaps, { metadata: { name: `${name}-child`, namespace: namespace! }, data: { owner: name } });
      return { created: created.metadata?.uid };
    });
    daemon(KEX, { registry }, async function watcher_fn({ client, name, namespace, stopped }) {
      const child = await retried(() => client.get(builtins.ConfigMaps, `${name}-child`, { namespace: namespace! }));
      seen.push(`daemon ${child.data?.['owner']}`);
      await stopped.wait();
    });
    timer(KEX, { registry, interval: 0.1 }, async function ticker_fn({ client, namespace }) {
      const { items } = await client.list(builtins.ConfigMaps, { namespace: namespace! });
      if (!seen.includes('timer')) seen.push('timer');
      return items.length;
    });
    on.index(KEX, { registry }, async function by_name({ client, name }) {
      // Indexers may read the cluster too (here: the namespace's existence).
      const ns = await client.get(builtins.Namespaces, 'default');
      return { [name]: ns.metadata?.name };
    });
    on.cleanup({ registry }, async function cleanup_fn({ client }) {
      await client.delete(builtins.ConfigMaps, 'kex-child', { namespace: 'default' });
      seen.push('cleanup');
    });
    const op = await fx.startOperator({ cluster, registry });
    await cluster.store.create(fx.kopfExample('kex'));
    await fx.eventually(() => seen.includes('daemon kex') && seen.includes('timer'), 'the daemon and the timer to read the child');
    expect(cluster.store.get({ apiVersion: 'v1', kind: 'ConfigMap' }, 'kex-child', 'default')).toMatchObject({ data: { owner: 'kex' } });
    expect(logs.grep("Handler 'create_fn' succeeded.")).toHaveLength(1);
    expect(logs.grep('failed with')).toEqual([]); // the indexer too: it would log "Indexer 'by_name' failed …"
    await op.stop();
    expect(op.error).toBeUndefined();
    expect(seen).toContain('cleanup');
    expect(cluster.store.get({ apiVersion: 'v1', kind: 'ConfigMap' }, 'kex-child', 'default')).toBeUndefined();
    // The handlers' requests went through the operator's client: the same user agent as the framework's.
    const posts = cluster.requests.filter((r) => r.method === 'POST' && r.resource === 'configmaps');
    const watches = fx.watchRequests(cluster);
    expect(posts).toHaveLength(1);
    expect(posts[0]!.headers.userAgent).toBe(watches[0]!.headers.userAgent);
  });

  it("R-AUTH-3 a handler's request rejected with 401 re-logs in through the operator's vault and succeeds", async () => {
    cluster = await fx.startCluster({ auth: 'enforced' });
    const registry = new OperatorRegistry();
    let token = 'first-token-1';
    cluster.auth.addToken({ token, username: 'devcluster-admin', groups: ['system:masters'] });
    on.create(KEX, { registry }, async function create_fn({ client, name }) {
      await client.create(builtins.ConfigMaps, { metadata: { name: `${name}-child`, namespace: 'default' } });
    });
    const op = await fx.startOperator({ cluster, registry, token: () => token });
    // The credentials are rotated while the operator runs: the old token stops working.
    cluster.auth.revokeToken('first-token-1');
    token = 'second-token-2';
    cluster.auth.addToken({ token, username: 'devcluster-admin', groups: ['system:masters'] });
    await cluster.store.create(fx.kopfExample('rotated'));
    await fx.eventually(() => cluster.store.get({ apiVersion: 'v1', kind: 'ConfigMap' }, 'rotated-child', 'default') !== undefined, 'the child');
    const posts = cluster.requests.filter((r) => r.method === 'POST' && r.resource === 'configmaps').map((r) => r.code);
    expect(posts).toEqual([401, 201]);
    expect(logs.grep('Re-authentication has finished.', fx.INFO)).toHaveLength(1);
    await op.stop();
    expect(op.error).toBeUndefined();
  });

  it('startup and login handlers that call `client` fail permanently, saying why', async () => {
    cluster = await fx.startCluster();
    const registry = new OperatorRegistry();
    on.startup({ registry }, async function startup_fn({ client }) {
      await client.get(builtins.Namespaces, 'default');
    });
    const op = await fx.startOperator({ cluster, registry, waitForWatch: false });
    await op.done;
    expect(op.error).toMatchObject({ code: 'ActivityError' });
    expect(
      logs.grep("Activity 'startup_fn' failed permanently: `client` is not available to startup handlers: the operator logs in after the startup activity."),
    ).toHaveLength(1);

    const logging = new OperatorRegistry();
    on.login({ registry: logging }, async function login_fn({ client }) {
      await client.get(builtins.Namespaces, 'default');
      return null;
    });
    const failed = await fx.startOperator({ cluster, registry: logging, waitForWatch: false });
    await failed.done;
    expect(failed.error).toMatchObject({ code: 'ActivityError' });
    expect(logs.grep("Activity 'login_fn' failed permanently: `client` is not available to login handlers")).toHaveLength(1);
  });

  it('admission handlers get the client given to the webhook engine; outside an operator it is refused loudly', async () => {
    const registry = new OperatorRegistry();
    let received: unknown;
    on.validate('kopfexamples', { registry }, function check_fn({ client }) {
      received = client;
    });
    const client = new clients.KubeClient({ request: () => Promise.resolve({}), watch: () => Promise.reject(new Error('no watching here')) });
    const KEXR = references.makeResource({ group: 'kopf.dev', version: 'v1', plural: 'kopfexamples', kind: 'KopfExample' });
    const fn = admission.webhookFn({
      registry,
      settings: new settingsModule.OperatorSettings({ warn: () => undefined }),
      clock: clocks.realClock,
      client,
      resources: { webhooks: [KEXR] },
      memos: { recallMemo: () => ({}) },
      signal: new AbortController().signal,
    });
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'U',
        kind: { group: 'kopf.dev', version: 'v1', kind: 'KopfExample' },
        resource: { group: 'kopf.dev', version: 'v1', resource: 'kopfexamples' },
        name: 'x',
        namespace: 'default',
        operation: 'CREATE',
        userInfo: { username: 'admin' },
        object: fx.kopfExample('x'),
        oldObject: null,
        dryRun: false,
      },
    };
    await fn(review);
    expect(received).toBe(client);
    await expect(invocation.currentClient().get(builtins.Namespaces, 'default')).rejects.toThrow(
      '`client` is available to handlers of a running operator only; elsewhere, make one with connect().',
    );
  });
});
