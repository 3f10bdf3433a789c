/**
 * End to end (R-ADMISSION-9, R-ADMISSION-3): a devcluster, which calls webhooks over HTTPS and
 * verifies them against the configuration's `caBundle` (no insecure option), accepts the TLS of a
 * `WebhookServer` with a generated certificate — by URL, and by a service reference (resolved to
 * the loopback port, verified by the name `<name>.<namespace>.svc`). The webhook configurations
 * are created through the runtime's own client, and a rejection reaches the caller with the
 * function's message.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../devcluster/testing.js';
import { ApiError } from '../../../runtime/cogs/client/errors.js';
import type * as references from '../../../runtime/cogs/structs/references.js';
import type * as webhooks from '../../../runtime/cogs/structs/webhooks.js';
import { WebhookServer } from '../../../runtime/index.js';
import { clientFor, type Client } from '../cogs/client/helpers.js';
import { kopfExample, startCluster } from '../../support/operators.js';
import { FakeFn, serve, uidOf, type Served } from './webhooks-helpers.js';

describe('R-ADMISSION-9 a devcluster calls the built-in server over verified TLS', () => {
  const fn = new FakeFn();
  let servicePort = 0;
  let cluster: DevCluster;
  let client: Client;
  let configurations: references.Resource;
  let kopfexamples: references.Resource;
  const running: Served[] = [];

  beforeAll(async () => {
    cluster = await startCluster({ webhookServiceResolver: (_namespace, _name, _port) => `127.0.0.1:${servicePort}` });
    // No retries: a rejection is final, and the test wants it at once.
    client = clientFor(cluster, {
      configure: (s) => {
        s.networking.errorBackoffs = [];
      },
    });
    const resources = await client.api.scanResources(['admissionregistration.k8s.io', 'kopf.dev']);
    configurations = resources.find((r) => r.plural === 'validatingwebhookconfigurations')!;
    kopfexamples = resources.find((r) => r.plural === 'kopfexamples')!;
    fn.behaviour = (body) => {
      const name = (body as { request: { object: { metadata: { name: string } } } }).request.object.metadata.name;
      return {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: name.startsWith('bad-')
          ? { uid: uidOf(body), allowed: false, status: { message: `${name} is not welcome here`, code: 403 } }
          : { uid: uidOf(body), allowed: true },
      };
    };
  });
  afterAll(async () => {
    for (const served of running) {
      served.stop.abort();
      await served.iterator.return?.();
    }
    await cluster?.stop();
  });

  async function register(name: string, clientConfig: webhooks.WebhookClientConfig, id: string): Promise<void> {
    const withId =
      clientConfig.url !== undefined
        ? { ...clientConfig, url: `${clientConfig.url}/${id}` }
        : { ...clientConfig, service: { ...clientConfig.service!, path: `${clientConfig.service!.path ?? ''}/${id}` } };
    await client.api.create(configurations, null, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name },
      webhooks: [
        {
          name: `${id.replaceAll('/', '.')}.${name}`,
          clientConfig: withId,
          sideEffects: 'None',
          failurePolicy: 'Fail',
          admissionReviewVersions: ['v1'],
          rules: [{ apiGroups: ['kopf.dev'], apiVersions: ['v1'], resources: ['kopfexamples'], operations: ['CREATE'], scope: '*' }],
        },
      ],
    });
  }

  async function createRejected(name: string): Promise<ApiError> {
    const error = await client.api.create(kopfexamples, 'default', kopfExample(name)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }

  it('R-ADMISSION-9 by URL: the generated certificate verifies, allowed objects are created, rejected ones fail with the message', async () => {
    const served = await serve(new WebhookServer({ addr: '127.0.0.1', path: '/hooks' }), fn.fn);
    running.push(served);
    expect(served.first.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/hooks$/);
    await register('by-url.example.com', served.first, 'validate1');

    await client.api.create(kopfexamples, 'default', kopfExample('good-1'));
    const rejected = await createRejected('bad-1');
    expect(rejected.status).toBe(403);
    expect(rejected.message).toContain('admission webhook "validate1.by-url.example.com" denied the request: bad-1 is not welcome here');
    const calls = fn.calls.filter((c) => c.context?.webhook === 'validate1');
    expect(calls).toHaveLength(2);
    expect(calls[0]!.context?.headers?.['content-type']).toBe('application/json');
    await cluster.store.delete({ group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations' }, 'by-url.example.com');
  });

  it('R-ADMISSION-9 by service reference: the generated certificate carries <name>.<namespace>.svc', async () => {
    const served = await serve(new WebhookServer({ addr: '127.0.0.1', path: '/svc', service: { namespace: 'ops', name: 'op' } }), fn.fn);
    running.push(served);
    servicePort = served.first.service!.port!;
    expect(served.first.service).toEqual({ namespace: 'ops', name: 'op', port: servicePort, path: '/svc' });
    await register('by-service.example.com', served.first, 'validate2/spec.field');

    const rejected = await createRejected('bad-2');
    expect(rejected.message).toContain('admission webhook "validate2.spec.field.by-service.example.com" denied the request: bad-2 is not welcome here');
    expect(fn.calls.at(-1)!.context?.webhook).toBe('validate2/spec.field');
  });
});
