import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../../devcluster/testing.js';
import { VirtualClock } from '../../../../runtime/cogs/aio/clocks.js';
import * as api from '../../../../runtime/cogs/client/api.js';
import * as credentials from '../../../../runtime/cogs/client/credentials.js';
import * as errors from '../../../../runtime/cogs/client/errors.js';
import * as logins from '../../../../runtime/cogs/client/logins.js';
import * as requests from '../../../../runtime/cogs/client/requests.js';
import * as transport from '../../../../runtime/cogs/client/transport.js';
import * as settings from '../../../../runtime/cogs/configs/settings.js';
import * as references from '../../../../runtime/cogs/structs/references.js';
import { type Client, RecordingLogger, clientFor, drive, tempDir } from './helpers.js';
import { eventually, flushed } from '../../../support/waiting.js';

const NAMESPACES = references.makeResource({ group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false });
const CONFIGMAPS = references.makeResource({ group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap' });

describe('R-AUTH-4 authorization header', () => {
  it.each([
    [{ scheme: 'Token', token: 'abc' }, 'Token abc'],
    [{ scheme: 'Negotiate' }, 'Negotiate'],
    [{ token: 'abc' }, 'Bearer abc'],
    [{ username: 'u', password: 'p' }, `Basic ${Buffer.from('u:p').toString('base64')}`],
    [{ token: 'abc', username: 'u', password: 'p' }, 'Bearer abc'],
    [{}, undefined],
  ])('R-AUTH-4 %j gives %s', async (fields, expected) => {
    expect(await transport.authorizationOf({ server: 'https://x', ...fields })).toBe(expected);
  });

  it('R-AUTH-4 a dynamic provider wins over static fields, unless it gives nothing', async () => {
    expect(await transport.authorizationOf({ server: 'https://x', token: 'static', authorization: async () => 'Bearer dynamic' })).toBe('Bearer dynamic');
    expect(await transport.authorizationOf({ server: 'https://x', token: 'static', authorization: async () => undefined })).toBe('Bearer static');
  });

  it('R-AUTH-5 network failures have a short text, also when Node aggregates several addresses', () => {
    const refused = (address: string): Error => Object.assign(new Error(`connect ECONNREFUSED ${address}`), { code: 'ECONNREFUSED' });
    expect(transport.failureOf(refused('127.0.0.1:1'))).toBe('connect ECONNREFUSED 127.0.0.1:1');
    expect(transport.failureOf(new AggregateError([refused('::1:1'), refused('127.0.0.1:1')], ''))).toBe(
      'connect ECONNREFUSED ::1:1; connect ECONNREFUSED 127.0.0.1:1',
    );
    expect(transport.failureOf(Object.assign(new Error(''), { code: 'ECONNRESET' }))).toBe('ECONNRESET');
  });

  it('R-AUTH-4 accepts CA and key material as PEM or Base64 of PEM', () => {
    const pem = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
    expect(transport.pemOf(pem)).toBe(pem);
    expect(transport.pemOf(Buffer.from(pem).toString('base64'))).toBe(pem);
    expect(transport.pemOf(new TextEncoder().encode(pem))).toBe(pem);
  });
});

describe('R-AUTH-5 back-off schedules', () => {
  it('R-AUTH-5 a list gives its length plus one attempts, a number one retry, other iterables unknown counts', () => {
    expect(requests.backoffsOf([1, 2, 3]).count).toBe(4);
    expect(requests.backoffsOf([]).count).toBe(1);
    expect([...requests.backoffsOf(5).delays]).toEqual([5]);
    expect(requests.backoffsOf(5).count).toBe(2);
    expect(requests.backoffsOf(new Set([1, 2])).count).toBeUndefined();
  });

  it.each([
    [new errors.ConnectionError('reset'), true],
    [new errors.RequestTimeoutError('slow'), true],
    [errors.apiErrorFor(500, ''), true],
    [errors.apiErrorFor(503, ''), true],
    [errors.apiErrorFor(429, ''), true],
    [errors.apiErrorFor(403, ''), false],
    [errors.apiErrorFor(401, ''), false],
    [errors.apiErrorFor(404, ''), false],
    [errors.apiErrorFor(409, ''), false],
    [errors.apiErrorFor(422, ''), false],
    [new Error('other'), false],
  ])('R-AUTH-5 %s is retriable: %s', (error, expected) => {
    expect(requests.isRetriable(error)).toBe(expected);
  });
});

describe('R-PATCH-9 ambiguous failures', () => {
  it.each([
    [new errors.ConnectionError('reset'), true],
    [new errors.RequestTimeoutError('slow'), true],
    [new errors.ConnectionError('refused', { unsent: true }), false],
    [new errors.RequestTimeoutError('could not connect', { unsent: true }), false],
    [errors.apiErrorFor(500, ''), true],
    [errors.apiErrorFor(503, ''), true],
    [errors.apiErrorFor(429, ''), false],
    [errors.apiErrorFor(403, ''), false],
    [errors.apiErrorFor(422, ''), false],
  ])('R-PATCH-9 %s may have been acted on: %s', (error, expected) => {
    expect(requests.isAmbiguous(error)).toBe(expected);
  });

  it('R-PATCH-9 a refused connection is known unsent', async () => {
    const vault = new credentials.Vault();
    vault.populate({ main: { server: 'http://127.0.0.1:1' } });
    const s = new settings.OperatorSettings();
    s.networking.errorBackoffs = [];
    const refused = new api.HttpKubeApi({ vault, settings: s, logger: new RecordingLogger() });
    const error = await refused.list(NAMESPACES, null).catch((e: unknown) => e);
    refused.close();
    expect(error).toBeInstanceOf(errors.ConnectionError);
    expect((error as errors.ConnectionError).unsent).toBe(true);
  });
});

for (const tls of [true, false]) {
  describe(`requests against an ${tls ? 'HTTPS' : 'HTTP'} devcluster`, () => {
    let cluster: DevCluster;
    let client: Client;
    let clock: VirtualClock;
    beforeAll(async () => {
      cluster = await DevCluster.start({ tls });
    });
    afterAll(async () => {
      await cluster?.stop();
    });
    afterEach(() => {
      client?.api.close();
      cluster.faults.clear();
    });

    const fresh = (configure?: (s: settings.OperatorSettings) => void): Client => {
      clock = new VirtualClock({ start: Date.now() });
      client = clientFor(cluster, {
        clock,
        configure: (s) => {
          s.networking.requestTimeout = null;
          configure?.(s);
        },
      });
      return client;
    };
    const listNamespaces = (): Promise<api.Listing> => client.api.list(NAMESPACES, null);
    const urlOf = (path: string): string => `${cluster.url}${path}`;
    const nsRequests = (): number => cluster.requests.filter((r) => r.path === '/api/v1/namespaces').length;

    it('R-QUEUE-2 the client tells when it is saturated (a backlog of twice its connections) and when the backlog has drained', async () => {
      fresh();
      cluster.faults.add({ method: 'GET', resource: 'configmaps', delay: { beforeMs: 300 } });
      const get = (): Promise<unknown> => client.api.list(CONFIGMAPS, 'default');
      const first = Array.from({ length: requests.MAX_CONCURRENT_REQUESTS + requests.SATURATION_BACKLOG - 1 }, get);
      expect(client.api.unsaturated()).toBeUndefined();
      const more = Array.from({ length: 5 }, get);
      const drained = client.api.unsaturated();
      expect(drained).toBeInstanceOf(Promise);
      let done = 0;
      for (const p of [...first, ...more])
        void p.then(() => {
          done += 1;
        });
      await drained;
      // Drained: the backlog is down to one round of connections (the first round has answered).
      expect(done).toBeGreaterThanOrEqual(requests.MAX_CONCURRENT_REQUESTS);
      expect(done).toBeLessThan(first.length + more.length);
      expect(client.api.unsaturated()).toBeUndefined();
      await Promise.all([...first, ...more]);
    });

    it('R-QUEUE-7 a wait for the backlog to drain ends with the signal', async () => {
      fresh();
      cluster.faults.add({ method: 'GET', resource: 'configmaps', delay: { beforeMs: 200 } });
      const all = Array.from({ length: requests.MAX_CONCURRENT_REQUESTS + requests.SATURATION_BACKLOG + 1 }, () => client.api.list(CONFIGMAPS, 'default'));
      const stop = new AbortController();
      stop.abort(new Error('stopping'));
      await expect(client.api.unsaturated(stop.signal)).rejects.toThrow('stopping');
      await Promise.all(all);
    });

    it('R-AUTH-4 sends the Authorization header and the kopf-ts User-Agent', async () => {
      fresh();
      cluster.requests.clear();
      await listNamespaces();
      const record = cluster.requests.all.at(-1)!;
      expect(record.headers.authorization).toBe('<redacted>');
      expect(record.headers.userAgent).toBe(transport.USER_AGENT);
      expect(transport.USER_AGENT).toMatch(/^kopf-ts\/\d+\.\d+\.\d+/);
      await client.api.request({ method: 'GET', path: '/api/v1/namespaces', headers: { 'User-Agent': 'my-operator/1.0' } });
      expect(cluster.requests.all.at(-1)!.headers.userAgent).toBe('my-operator/1.0');
    });

    it('R-AUTH-5 retries HTTP 500 with the default back-offs and logs each failed attempt', async () => {
      fresh();
      cluster.faults.add({ resource: 'namespaces', verb: 'list', times: 2, action: { respond: { code: 500 } } });
      const outcome = await drive(clock, listNamespaces());
      expect(outcome.error).toBeUndefined();
      expect(outcome.value?.items.length).toBeGreaterThan(0);
      expect(outcome.slept).toEqual([1000, 1000]);
      expect(client.logger.messages('error')).toEqual([
        `Request attempt #1/9 failed; will retry: GET ${urlOf('/api/v1/namespaces')} -> ApiServerError: Internal error occurred: injected fault`,
        `Request attempt #2/9 failed; will retry: GET ${urlOf('/api/v1/namespaces')} -> ApiServerError: Internal error occurred: injected fault`,
      ]);
    });

    it('R-AUTH-5 escalates HTTP 503 after the configured back-offs', async () => {
      fresh((s) => {
        s.networking.errorBackoffs = [2, 3];
      });
      cluster.faults.add({ resource: 'namespaces', verb: 'list', times: 5, action: { respond: { code: 503 } } });
      const before = nsRequests();
      const outcome = await drive(clock, listNamespaces());
      expect(outcome.error).toBeInstanceOf(errors.ApiServerError);
      expect((outcome.error as errors.ApiError).status).toBe(503);
      expect(outcome.slept).toEqual([2000, 3000]);
      expect(nsRequests() - before).toBe(3);
      const logs = client.logger.messages('error');
      expect(logs).toHaveLength(3);
      expect(logs[0]).toMatch(/^Request attempt #1\/3 failed; will retry: GET \S+\/api\/v1\/namespaces -> ApiServerError: /);
      expect(logs[1]).toMatch(/^Request attempt #2\/3 failed; will retry: /);
      expect(logs[2]).toMatch(/^Request attempt #3\/3 failed; escalating: GET \S+\/api\/v1\/namespaces -> ApiServerError: /);
    });

    it('R-AUTH-5 an empty errorBackoffs disables retries', async () => {
      fresh((s) => {
        s.networking.errorBackoffs = [];
      });
      cluster.faults.add({ resource: 'namespaces', verb: 'list', times: 1, action: { respond: { code: 500 } } });
      const before = nsRequests();
      const outcome = await drive(clock, listNamespaces());
      expect(outcome.error).toBeInstanceOf(errors.ApiServerError);
      expect(outcome.slept).toEqual([]);
      expect(nsRequests() - before).toBe(1);
      expect(client.logger.messages('error')).toEqual([
        `Request attempt #1/1 failed; escalating: GET ${urlOf('/api/v1/namespaces')} -> ApiServerError: Internal error occurred: injected fault`,
      ]);
    });

    it('R-AUTH-5 honours a longer Retry-After of a plain-text 429 and keeps its text', async () => {
      fresh();
      cluster.faults.add({ resource: 'namespaces', verb: 'list', times: 1, action: { respond: { code: 429, retryAfterSeconds: 7 } } });
      const outcome = await drive(clock, listNamespaces());
      expect(outcome.error).toBeUndefined();
      expect(outcome.slept).toEqual([7000]);
      expect(client.logger.messages('error')).toEqual([
        `Request attempt #1/9 failed; will retry: GET ${urlOf('/api/v1/namespaces')} -> ApiTooManyRequestsError: Too many requests, please try again later.`,
      ]);
    });

    it('R-AUTH-5 a shorter Retry-After loses to the back-off unless enforceRetryAfter is set', async () => {
      fresh((s) => {
        s.networking.errorBackoffs = [3];
      });
      cluster.faults.add({ resource: 'namespaces', verb: 'list', times: 1, action: { respond: { code: 429, retryAfterSeconds: 1 } } });
      expect((await drive(clock, listNamespaces())).slept).toEqual([3000]);
      client.api.close();

      fresh((s) => {
        s.networking.errorBackoffs = [3];
        s.networking.enforceRetryAfter = true;
      });
      cluster.faults.add({ resource: 'namespaces', verb: 'list', times: 1, action: { respond: { code: 429, retryAfterSeconds: 1 } } });
      expect((await drive(clock, listNamespaces())).slept).toEqual([1000]);
    });

    it('R-AUTH-5 a 429 Status with details.retryAfterSeconds is escalated with its payload after the last attempt', async () => {
      fresh((s) => {
        s.networking.errorBackoffs = [1];
      });
      cluster.faults.add({ resource: 'namespaces', verb: 'list', times: 2, action: { respond: { code: 429, retryAfterSeconds: 2, form: 'status' } } });
      const outcome = await drive(clock, listNamespaces());
      expect(outcome.slept).toEqual([2000]);
      const error = outcome.error as errors.ApiTooManyRequestsError;
      expect(error).toBeInstanceOf(errors.ApiTooManyRequestsError);
      expect(error.payload).toMatchObject({ kind: 'Status', code: 429, reason: 'TooManyRequests' });
      expect(error.details?.retryAfterSeconds).toBe(2);
    });

    describe('R-SEC-1 a 403 is permanent', () => {
      afterEach(() => cluster.auth.authorizer.setRules([]));
      const deny = (verbs: string[], resources: string[], namespaces?: string[]): void =>
        cluster.auth.authorizer.setRules([{ effect: 'deny', apiGroups: [''], resources, verbs, ...(namespaces ? { namespaces } : {}) }]);
      const reports = (): string[] => client.logger.messages('error').filter((line) => line.startsWith('Forbidden (HTTP 403)'));

      it('R-SEC-1 a 403 is not retried: one request, no back-off, the error names what was denied', async () => {
        fresh();
        deny(['list'], ['namespaces']);
        const before = nsRequests();
        const outcome = await drive(clock, listNamespaces());
        expect(outcome.error).toBeInstanceOf(errors.ApiForbiddenError);
        expect(outcome.slept).toEqual([]);
        expect(nsRequests() - before).toBe(1);
        const error = outcome.error as errors.ApiForbiddenError;
        expect(error.code).toBe('ApiForbidden');
        expect(error.denial).toEqual({ user: expect.any(String), verb: 'list', resource: 'namespaces', group: '', namespace: null });
        expect(client.logger.messages('error').filter((line) => line.startsWith('Request attempt'))).toEqual([]);
      });

      it('R-SEC-1 the 403 is reported in one line naming user, verb, resource and namespace, once per verb, resource and namespace', async () => {
        fresh();
        deny(['get', 'list'], ['configmaps'], ['default']);
        for (let i = 0; i < 3; i += 1) await expect(client.api.get(CONFIGMAPS, 'default', `cm-${i}`)).rejects.toBeInstanceOf(errors.ApiForbiddenError);
        const user = (await client.api.get(CONFIGMAPS, 'default', 'x').catch((e: errors.ApiForbiddenError) => e.denial?.user)) as string;
        expect(user).toBeTruthy();
        expect(reports()).toEqual([
          `Forbidden (HTTP 403): user "${user}" may not get "configmaps" in namespace "default": GET ${urlOf('/api/v1/namespaces/default/configmaps/cm-0')} — the operator's RBAC lacks this permission; not retried. Grant it (deploy/rbac.yaml of a generated project). Reported once per verb, resource and namespace.`,
        ]);
        expect(client.logger.messages('debug').filter((line) => line.startsWith('Forbidden (HTTP 403)'))).toHaveLength(3);
        // Another verb is another report; so is another client (operator).
        await expect(client.api.list(CONFIGMAPS, 'default')).rejects.toBeInstanceOf(errors.ApiForbiddenError);
        expect(reports()).toHaveLength(2);
        expect(reports()[1]).toContain(`may not list "configmaps" in namespace "default"`);
      });

      it('R-SEC-1 a 403 opening a watch-stream is reported the same way', async () => {
        fresh();
        deny(['watch'], ['namespaces']);
        await expect(client.api.watch(NAMESPACES, null, { resourceVersion: '1' })).rejects.toBeInstanceOf(errors.ApiForbiddenError);
        expect(reports()).toHaveLength(1);
        expect(reports()[0]).toMatch(/^Forbidden \(HTTP 403\): user "[^"]+" may not watch "namespaces" at the cluster scope: GET /);
      });
    });

    it.each([404, 409, 422])('R-AUTH-5 does not retry HTTP %i', async (code) => {
      fresh();
      cluster.faults.add({ resource: 'namespaces', verb: 'list', times: 1, action: { respond: { code } } });
      const before = nsRequests();
      const outcome = await drive(clock, listNamespaces());
      expect(outcome.error).toBeInstanceOf(errors.ApiClientError);
      expect((outcome.error as errors.ApiError).status).toBe(code);
      expect(outcome.slept).toEqual([]);
      expect(nsRequests() - before).toBe(1);
      expect(client.logger.messages('error')).toEqual([]);
    });

    it('R-AUTH-5 a real 404 carries the NotFound Status', async () => {
      fresh();
      const error = await client.api.get(CONFIGMAPS, 'default', 'absent').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(errors.ApiNotFoundError);
      expect((error as errors.ApiNotFoundError).reason).toBe('NotFound');
      expect((error as errors.ApiNotFoundError).details).toMatchObject({ name: 'absent', kind: 'configmaps' });
    });

    it('R-AUTH-5 retries connections reset before the response', async () => {
      fresh();
      cluster.faults.add({ resource: 'namespaces', verb: 'list', times: 2, action: { reset: 'before' } });
      const outcome = await drive(clock, listNamespaces());
      expect(outcome.error).toBeUndefined();
      expect(outcome.slept).toEqual([1000, 1000]);
      const logs = client.logger.messages('error');
      expect(logs).toHaveLength(2);
      expect(logs[0]).toMatch(/^Request attempt #1\/9 failed; will retry: GET \S+ -> ConnectionError: /);
    });

    it('R-PATCH-9 a write reset after the server stored it is verified, not resent; one not stored is resent', async () => {
      fresh();
      const name = `verified-${tls}`;
      await client.api.create(CONFIGMAPS, 'default', { metadata: { name }, data: { a: '1' } });
      const patchOf = (value: string, found: string[]): Promise<unknown> =>
        client.api.patch(
          CONFIGMAPS,
          'default',
          name,
          { data: { a: value } },
          {
            verify: async () => {
              const current = await client.api.get(CONFIGMAPS, 'default', name);
              found.push(String((current['data'] as Record<string, string>)['a']));
              return (current['data'] as Record<string, string>)['a'] === value ? current : undefined;
            },
          },
        );
      const patches = (): number => cluster.requests.filter((r) => r.method === 'PATCH' && r.name === name).length;

      cluster.faults.add({ resource: 'configmaps', verb: 'patch', times: 1, action: { reset: 'after' } });
      const stored: string[] = [];
      const outcome = await drive(clock, patchOf('2', stored));
      expect(outcome.error).toBeUndefined();
      expect(stored).toEqual(['2']);
      expect(patches()).toBe(1);
      expect(outcome.slept).toEqual([]);
      expect(client.logger.messages('warning')[0]).toMatch(
        /^Request attempt #1\/9 failed, but what it writes is stored; not sending it again: PATCH \S+ -> ConnectionError: /,
      );

      cluster.faults.add({ resource: 'configmaps', verb: 'patch', times: 1, action: { reset: 'before' } });
      const absent: string[] = [];
      const retried = await drive(clock, patchOf('3', absent));
      expect(retried.error).toBeUndefined();
      expect(absent).toEqual(['2']);
      expect(patches()).toBe(3);
      expect(retried.slept).toEqual([1000]);
    });

    it('R-AUTH-6 a request exceeding requestTimeout fails with a timeout and is retried', async () => {
      client = clientFor(cluster, {
        configure: (s) => {
          s.networking.requestTimeout = 0.2;
          s.networking.errorBackoffs = [0.01];
        },
      });
      cluster.faults.add({ resource: 'namespaces', verb: 'list', times: 1, action: { delay: { beforeMs: 1500 } } });
      const started = Date.now();
      const listing = await listNamespaces();
      expect(listing.items.length).toBeGreaterThan(0);
      expect(Date.now() - started).toBeLessThan(1400);
      expect(client.logger.messages('error')[0]).toMatch(/failed; will retry: GET \S+ -> RequestTimeoutError: /);
    });

    it('aborting the signal stops a request without retries', async () => {
      client = clientFor(cluster);
      const delayed = cluster.faults.add({ resource: 'namespaces', verb: 'list', times: 1, action: { delay: { beforeMs: 2000 } } });
      const controller = new AbortController();
      const pending = client.api.list(NAMESPACES, null, { signal: controller.signal });
      pending.catch(() => undefined);
      // Aborted once the request is at the server (held there by the delay).
      await eventually(() => delayed.applied() === 1, 'the request at the server');
      controller.abort(new Error('stopped'));
      await expect(pending).rejects.toThrow('stopped');
      expect(client.logger.messages('error')).toEqual([]);
    });
  });
}

describe('R-AUTH-3 re-authentication on HTTP 401 with enforced auth', () => {
  let cluster: DevCluster;
  beforeAll(async () => {
    cluster = await DevCluster.start({ auth: 'enforced', tls: false });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const makeApi = (vault: credentials.Vault): api.HttpKubeApi =>
    new api.HttpKubeApi({ vault, settings: new settings.OperatorSettings(), logger: new RecordingLogger() });

  it('R-AUTH-3 a revoked token is invalidated and the next credentials are used', async () => {
    cluster.auth.addToken({ token: 'token-a', username: 'user-a', groups: ['system:masters'] });
    cluster.auth.addToken({ token: 'token-b', username: 'user-b', groups: ['system:masters'] });
    const vault = new credentials.Vault();
    vault.populate({ a: { server: cluster.url, token: 'token-a', priority: 2 }, b: { server: cluster.url, token: 'token-b', priority: 1 } });
    const client = makeApi(vault);
    await client.list(NAMESPACES, null);
    expect(cluster.requests.all.at(-1)?.user).toBe('user-a');
    cluster.auth.revokeToken('token-a');
    cluster.requests.clear();
    await client.list(NAMESPACES, null);
    expect(cluster.requests.all.map((r) => [r.code, r.user])).toEqual([
      [401, ''],
      [200, 'user-b'],
    ]);
    expect(vault.current().map((item) => item.key)).toEqual(['b']);
    expect(vault.populate({ a: { server: cluster.url, token: 'token-a', priority: 2 } })).toBe(0);
    client.close();
  });

  it('R-AUTH-3 an expired token depletes the vault; requests wait for the re-login and then succeed', async () => {
    cluster.auth.addToken({ token: 'token-t', username: 'user-t', groups: ['system:masters'] });
    const vault = new credentials.Vault();
    vault.populate({ login: { server: cluster.url, token: 'token-t' } });
    const client = makeApi(vault);
    await client.list(NAMESPACES, null);
    cluster.auth.setExpiry('token-t', new Date(Date.now() - 1000));
    cluster.requests.clear();
    let done = false;
    const pending = client.list(NAMESPACES, null).then((listing) => {
      done = true;
      return listing;
    });
    await vault.depleted.waitFor(true);
    expect(vault.readiness.isOn()).toBe(false);
    await flushed(); // the request waits in the vault, which only populate() refills
    expect(done).toBe(false);
    cluster.auth.addToken({ token: 'token-u', username: 'user-u', groups: ['system:masters'] });
    vault.populate({ login: { server: cluster.url, token: 'token-u' } });
    const listing = await pending;
    expect(listing.items.length).toBeGreaterThan(0);
    expect(cluster.requests.all.map((r) => [r.code, r.user])).toEqual([
      [401, ''],
      [200, 'user-u'],
    ]);
    client.close();
  });

  it('R-AUTH-3 requests fail with LoginError when the re-login brings no valid credentials', async () => {
    const vault = new credentials.Vault();
    vault.populate({ login: { server: cluster.url, token: 'never-valid' } });
    const client = makeApi(vault);
    const pending = client.list(NAMESPACES, null);
    await vault.depleted.waitFor(true);
    vault.populate({ login: { server: cluster.url, token: 'never-valid' } });
    await expect(pending).rejects.toBeInstanceOf(errors.LoginError);
    client.close();
  });
});

describe('R-AUTH-5 a stale kubeconfig: the server refuses connections', () => {
  /** A loopback port that nothing listens on (it was free a moment ago). */
  async function closedPort(): Promise<number> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }

  it('R-AUTH-5 each failed attempt is one line with a short error; the final error is one line', async () => {
    const port = await closedPort();
    const file = path.join(tempDir(), 'config');
    fs.writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: stale',
        `clusters: [{name: gone, cluster: {server: "https://127.0.0.1:${port}"}}]`,
        'users: [{name: me, user: {token: old}}]',
        'contexts: [{name: stale, context: {cluster: gone, user: me}}]',
        '',
      ].join('\n'),
    );
    const vault = new credentials.Vault();
    vault.populate({ kubeconfig: logins.loginWithKubeconfig({ paths: [file] }) });
    const clock = new VirtualClock({ start: Date.now() });
    const logger = new RecordingLogger();
    const client = new api.HttpKubeApi({ vault, settings: new settings.OperatorSettings(), logger, clock });
    try {
      const outcome = await drive(clock, client.list(NAMESPACES, null));
      const url = `https://127.0.0.1:${port}/api/v1/namespaces`;
      const refused = `connect ECONNREFUSED 127.0.0.1:${port}`;
      expect(outcome.error).toBeInstanceOf(errors.ConnectionError);
      expect((outcome.error as Error).message).toBe(`GET ${url} failed: ${refused}`);
      expect(outcome.slept).toEqual([1000, 1000, 2000, 3000, 5000, 8000, 13000, 21000]);
      expect(logger.messages('error')).toEqual([
        ...[1, 2, 3, 4, 5, 6, 7, 8].map((i) => `Request attempt #${i}/9 failed; will retry: GET ${url} -> ConnectionError: ${refused}`),
        `Request attempt #9/9 failed; escalating: GET ${url} -> ConnectionError: ${refused}`,
      ]);
      expect(logger.records.filter((record) => record.extra !== undefined)).toEqual([]); // no error attached: no stack traces
    } finally {
      client.close();
    }
  });
});

describe('R-AUTH-6 connect timeout', () => {
  it('R-AUTH-6 a TLS handshake that never completes fails after connectTimeout', async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => {
      sockets.add(socket);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const vault = new credentials.Vault();
    vault.populate({ login: { server: `https://127.0.0.1:${port}`, token: 't' } });
    const s = new settings.OperatorSettings();
    s.networking.connectTimeout = 0.2;
    s.networking.errorBackoffs = [];
    const logger = new RecordingLogger();
    const client = new api.HttpKubeApi({ vault, settings: s, logger });
    try {
      const started = Date.now();
      const error = await client.list(NAMESPACES, null).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(errors.RequestTimeoutError);
      expect((error as Error).message).toMatch(/could not connect within 200 ms/);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(logger.messages('error')[0]).toMatch(
        /^Request attempt #1\/1 failed; escalating: GET https:\/\/127\.0\.0\.1:\d+\/api\/v1\/namespaces -> RequestTimeoutError: /,
      );
    } finally {
      client.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
