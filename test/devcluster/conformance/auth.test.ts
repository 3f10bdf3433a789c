/**
 * Authentication and authorization over TLS (devcluster reference section 10): bearer tokens with an
 * injected clock, client certificates issued by the cluster's CA, and authorization rules.
 */
import * as https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../devcluster/testing.js';
import { VirtualClock } from '../../../testing/index.js';
import { WIDGETS_CRD } from './harness.js';

interface Reply {
  status: number;
  json: any;
}

function call(cluster: DevCluster, path: string, opts: { token?: string; cert?: { certPem: string; keyPem: string }; method?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      cluster.url + path,
      {
        method: opts.method ?? 'GET',
        ca: cluster.caPem,
        cert: opts.cert?.certPem,
        key: opts.cert?.keyPem,
        headers: opts.token ? { authorization: `Bearer ${opts.token}` } : {},
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => {
          text += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('authentication and authorization', () => {
  let cluster: DevCluster;
  const clock = new VirtualClock({ start: Date.now() });

  beforeAll(async () => {
    cluster = await DevCluster.start({ auth: 'enforced', clock });
    await cluster.load(WIDGETS_CRD);
    await cluster.store.create({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'default' }, spec: { size: 1 } });
  });
  afterAll(async () => {
    await cluster.stop();
  });

  it('C-115 no credentials → 401; a valid token → 200; an expired token → 401; a client certificate names the user', async () => {
    const none = await call(cluster, '/api/v1/namespaces');
    expect(none.status).toBe(401);
    expect(none.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Unauthorized',
      reason: 'Unauthorized',
      code: 401,
    });

    cluster.auth.addToken({ token: 'bob-token', username: 'bob', expiresAt: new Date(clock.now() + 60_000) });
    expect((await call(cluster, '/api/v1/namespaces', { token: 'bob-token' })).status).toBe(200);
    await clock.advance(61_000);
    expect((await call(cluster, '/api/v1/namespaces', { token: 'bob-token' })).status).toBe(401);

    const alice = await cluster.auth.issueClientCert({ username: 'alice', groups: ['devs'] });
    cluster.requests.clear();
    expect((await call(cluster, '/api/v1/namespaces/default/configmaps', { cert: alice })).status).toBe(200);
    expect(cluster.requests.all.at(-1)!.user).toBe('alice');
    const expired = await cluster.auth.issueClientCert({
      username: 'old',
      notBefore: new Date(clock.now() - 7_200_000),
      notAfter: new Date(clock.now() - 3_600_000),
    });
    expect((await call(cluster, '/api/v1/namespaces', { cert: expired })).status).toBe(401);
  });

  it('C-116 a deny rule gives the exact 403 message while other verbs pass', async () => {
    cluster.auth.authorizer.setRules([{ effect: 'deny', users: ['alice'], verbs: ['delete'], resources: ['widgets'] }]);
    const alice = await cluster.auth.issueClientCert({ username: 'alice', groups: ['devs'] });
    const denied = await call(cluster, '/apis/example.com/v1/namespaces/default/widgets/w1', { cert: alice, method: 'DELETE' });
    expect(denied.status).toBe(403);
    expect(denied.json.message).toBe(
      'widgets.example.com "w1" is forbidden: User "alice" cannot delete resource "widgets" in API group "example.com" in the namespace "default"',
    );
    expect(denied.json.details).toEqual({ name: 'w1', group: 'example.com', kind: 'widgets' });
    expect((await call(cluster, '/apis/example.com/v1/namespaces/default/widgets', { cert: alice })).status).toBe(200);
    expect(cluster.store.get({ apiVersion: 'example.com/v1', kind: 'Widget' }, 'w1')).toBeDefined();
    cluster.auth.authorizer.setRules([]);
  });
});
