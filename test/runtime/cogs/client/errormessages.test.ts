/**
 * R-CLIENT-501: the API's errors name the request they answered — the Kubernetes verb, the resource
 * (group/version/resource, namespace and name) and the URL, never credentials — so that "the server
 * could not find the requested resource" says which resource. Through the real client against a
 * devcluster over loopback, and the parsing of paths on its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../../devcluster/testing.js';
import * as errors from '../../../../runtime/cogs/client/errors.js';
import { ApiForbiddenError, ApiNotFoundError, builtins, connect, type KubeClient, resource } from '../../../../runtime/index.js';

let cluster: DevCluster;
let client: KubeClient;

beforeAll(async () => {
  cluster = await DevCluster.start();
  client = await connect({ connection: { server: cluster.url, token: cluster.token, caData: cluster.caPem! } });
});
afterAll(async () => {
  await client?.close();
  await cluster?.stop();
});

describe('R-CLIENT-501 errors name the verb, the resource and the URL', () => {
  it('R-CLIENT-501 a missing object: get, the resource with its namespace and name, and the URL', async () => {
    const error = await client.get(builtins.ConfigMaps, 'absent', { namespace: 'default' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiNotFoundError);
    const notFound = error as ApiNotFoundError;
    expect(notFound.code).toBe('ApiNotFound');
    expect(notFound.detail).toBe('configmaps "absent" not found');
    expect(notFound.message).toBe(
      `configmaps "absent" not found: get v1/configmaps "absent" in namespace "default" (GET ${cluster.url}/api/v1/namespaces/default/configmaps/absent)`,
    );
    expect(notFound.request).toMatchObject({
      verb: 'get',
      method: 'GET',
      target: { group: '', version: 'v1', resource: 'configmaps', namespace: 'default', name: 'absent' },
    });
  });

  it('R-CLIENT-501 "the server could not find the requested resource": the list of an unserved resource names it', async () => {
    const Gadgets = resource({ group: 'example.com', version: 'v9', plural: 'gadgets', kind: 'Gadget', namespaced: true });
    const error = await client.list(Gadgets, { namespace: 'default', labelSelector: 'app=x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiNotFoundError);
    expect((error as Error).message).toBe(
      'the server could not find the requested resource: list example.com/v9/gadgets in namespace "default" ' +
        `(GET ${cluster.url}/apis/example.com/v9/namespaces/default/gadgets?labelSelector=app%3Dx)`,
    );
  });

  it('R-CLIENT-501 writes name their verb: patch of a subresource, delete of a cluster-scoped object', async () => {
    const patch = await client.patch(builtins.ConfigMaps, 'absent', { data: { a: 'b' } }, { namespace: 'default' }).catch((e: unknown) => e);
    expect((patch as Error).message).toContain(': patch v1/configmaps "absent" in namespace "default" (PATCH ');
    const deletion = await client.delete(builtins.Namespaces, 'absent').catch((e: unknown) => e);
    expect((deletion as Error).message).toBe(`namespaces "absent" not found: delete v1/namespaces "absent" (DELETE ${cluster.url}/api/v1/namespaces/absent)`);
  });

  it("R-CLIENT-501 a 403 keeps its denial (parsed from the server's words) and names the URL once", async () => {
    cluster.auth.authorizer.setRules([{ effect: 'deny', apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]);
    try {
      const error = await client.get(builtins.Secrets, 's', { namespace: 'default' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiForbiddenError);
      const forbidden = error as ApiForbiddenError;
      expect(forbidden.denial).toMatchObject({ verb: 'get', resource: 'secrets', namespace: 'default' });
      expect(forbidden.message).toContain(`: get v1/secrets "s" in namespace "default" (GET ${cluster.url}/api/v1/namespaces/default/secrets/s)`);
      expect(forbidden.message.split(cluster.url)).toHaveLength(2);
    } finally {
      cluster.auth.authorizer.setRules([]);
    }
  });
});

describe('R-CLIENT-501 a watch ended by the server', () => {
  it('R-CLIENT-501 a too old resource version (ERROR 410 in the stream) names the watch', async () => {
    const first = await client.create(builtins.ConfigMaps, { metadata: { name: 'old', namespace: 'default' } });
    await client.patch(builtins.ConfigMaps, 'old', { data: { a: 'b' } }, { namespace: 'default' });
    cluster.compact();
    const watching = async (): Promise<void> => {
      for await (const _ of client.watch(builtins.ConfigMaps, { namespace: 'default', resourceVersion: first.metadata!.resourceVersion! })) void _;
    };
    const error = await watching().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ApiGone', request: { verb: 'watch' } });
    expect((error as Error).message).toMatch(
      /^too old resource version: \d+ \(\d+\): watch v1\/configmaps in namespace "default" \(GET \/api\/v1\/namespaces\/default\/configmaps\)$/,
    );
  });
});

describe('R-CLIENT-501 the request as messages name it', () => {
  it.each([
    ['GET', '/api/v1/namespaces/default/pods/p', 'get', { group: '', version: 'v1', resource: 'pods', namespace: 'default', name: 'p' }],
    ['GET', '/api/v1/pods', 'list', { group: '', version: 'v1', resource: 'pods' }],
    ['GET', '/apis/kopf.dev/v1/kopfexamples?watch=true&resourceVersion=5', 'watch', { group: 'kopf.dev', version: 'v1', resource: 'kopfexamples' }],
    [
      'PATCH',
      '/apis/kopf.dev/v1/namespaces/ns/kopfexamples/x/status',
      'patch',
      { group: 'kopf.dev', resource: 'kopfexamples', namespace: 'ns', name: 'x', subresource: 'status' },
    ],
    ['PUT', '/api/v1/namespaces/ns/finalize', 'update', { resource: 'namespaces', name: 'ns', subresource: 'finalize' }],
    ['GET', '/api/v1/namespaces/ns', 'get', { resource: 'namespaces', name: 'ns' }],
    ['DELETE', '/api/v1/namespaces/ns/configmaps', 'deletecollection', { resource: 'configmaps', namespace: 'ns' }],
    ['POST', '/apis/apps/v1/namespaces/ns/deployments', 'create', { group: 'apps', resource: 'deployments', namespace: 'ns' }],
  ] as const)('R-CLIENT-501 %s %s is %s', (method, path, verb, target) => {
    const request = errors.failedRequest(method, `https://10.0.0.1:6443${path}`);
    expect(request.verb).toBe(verb);
    expect(request.target).toMatchObject(target);
  });

  it('R-CLIENT-501 discovery paths are named as paths', () => {
    const request = errors.failedRequest('GET', 'https://10.0.0.1:6443/apis/kopf.dev/v1');
    expect(request.target).toBeUndefined();
    expect(errors.describeRequest(request)).toBe('get /apis/kopf.dev/v1 (GET https://10.0.0.1:6443/apis/kopf.dev/v1)');
  });

  it('R-CLIENT-501 no credentials in the URL: user info dropped, secret-like parameters redacted, selectors kept', () => {
    const request = errors.failedRequest('GET', 'https://admin:hunter2@10.0.0.1/api/v1/pods?labelSelector=a%3Db&access_token=abc&fieldSelector=x');
    expect(request.url).toBe('https://10.0.0.1/api/v1/pods?labelSelector=a%3Db&access_token=REDACTED&fieldSelector=x');
    const error = errors.apiErrorFor(404, '{"kind":"Status","message":"gone away"}', { request });
    expect(error.message).not.toContain('hunter2');
    expect(error.message).not.toContain('abc');
    expect(error.message).toBe(`gone away: list v1/pods (GET ${request.url})`);
  });
});
