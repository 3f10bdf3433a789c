/**
 * Conversion webhooks (R-CONVERT-201..209) through a real operator on the devcluster: converters
 * registered with `on.convert` (a hub `v3` with the spokes `v1` and `v2`), served by the built-in
 * `WebhookServer` over HTTPS on loopback, and ConversionReviews POSTed to it directly with node's
 * https, trusting the CA it announced (the devcluster does not call conversion webhooks itself yet).
 * Managed mode is checked on the CRD the devcluster stores.
 */
import * as https from 'node:https';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import * as clocksModule from '../../../runtime/cogs/aio/clocks.js';
import { OperatorSettings } from '../../../runtime/cogs/configs/settings.js';
import { WebhookRequestError } from '../../../runtime/cogs/structs/errors.js';
import { type KubernetesObject, resource } from '../../../runtime/cogs/structs/resources.js';
import type * as webhooks from '../../../runtime/cogs/structs/webhooks.js';
import * as converting from '../../../runtime/core/engines/converting.js';
import { AdmissionSetupError, ConversionError } from '../../../runtime/core/engines/errors.js';
import * as serving from '../../../runtime/core/engines/serving.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { WebhookServer } from '../../../runtime/kits/webhooks/index.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface WidgetV1 extends KubernetesObject {
  spec?: { size?: number; color?: string };
}
interface WidgetV2 extends KubernetesObject {
  spec?: { count?: number; color?: string };
}
interface WidgetV3 extends KubernetesObject {
  spec?: { replicas?: number; color?: string };
}
const info = { group: 'conv.example.com', plural: 'widgets', kind: 'Widget', namespaced: true } as const;
const V1 = resource<WidgetV1, WidgetV1, unknown, true>({ ...info, version: 'v1' });
const V2 = resource<WidgetV2, WidgetV2, unknown, true>({ ...info, version: 'v2' });
const V3 = resource<WidgetV3, WidgetV3, unknown, true>({ ...info, version: 'v3' });
const CRD_NAME = 'widgets.conv.example.com';
const CRD_REF = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' } as const;

const version = (name: string, storage = false) => ({
  name,
  served: true,
  storage,
  schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
});
const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: CRD_NAME },
  spec: {
    group: 'conv.example.com',
    scope: 'Namespaced',
    names: { kind: 'Widget', plural: 'widgets', singular: 'widget' },
    versions: [version('v1'), version('v2'), version('v3', true)],
  },
};

/** The hub-and-spoke converters: v1 (`size`) ⇄ v3 (`replicas`), v2 (`count`) ⇄ v3; `color` everywhere. */
function register(registry: OperatorRegistry): void {
  on.convert(V1, V3, {
    registry,
    forward: ({ spec: { size, ...spec } = {}, ...object }) => ({ ...object, apiVersion: V3.apiVersion, spec: { ...spec, replicas: size } }),
    backward: ({ spec: { replicas, ...spec } = {}, ...object }) => ({ ...object, apiVersion: V1.apiVersion, spec: { ...spec, size: replicas } }),
  });
  on.convert(V2, V3, {
    registry,
    param: 'the param',
    forward: ({ spec: { count, ...spec } = {}, ...object }, { logger, param }) => {
      if (spec.color === 'explode') throw new ConversionError('no explosive widgets');
      if (spec.color === 'shout') logger.info(`Converting a loud widget with ${String(param)}.`);
      const apiVersion = spec.color === 'stray' ? 'conv.example.com/v9' : V3.apiVersion;
      if (spec.color === 'later') return Promise.resolve({ ...object, apiVersion, spec }) as unknown as WidgetV3;
      return { ...object, apiVersion, spec: { ...spec, replicas: count } };
    },
    backward: ({ spec: { replicas, ...spec } = {}, ...object }) => ({ ...object, apiVersion: V2.apiVersion, spec: { ...spec, count: replicas } }),
  });
}

function widget(apiVersion: string, name: string, spec: Json): Json {
  return { apiVersion, kind: 'Widget', metadata: { name, namespace: 'default', uid: `uid-${name}`, labels: { a: 'b' } }, spec };
}

function review(uid: string, desiredAPIVersion: string, objects: unknown[], apiVersion = 'apiextensions.k8s.io/v1'): Json {
  return { apiVersion, kind: 'ConversionReview', request: { uid, desiredAPIVersion, objects } };
}

/** The built-in server, with the client configurations it yields recorded for the test. */
function recordingServer(): { readonly serve: webhooks.WebhookServerFn; readonly config: () => webhooks.WebhookClientConfig | undefined } {
  const server = new WebhookServer({ addr: '127.0.0.1', host: '127.0.0.1', port: 0 });
  let last: webhooks.WebhookClientConfig | undefined;
  return {
    async *serve(fn, environment) {
      for await (const config of server.serve(fn, environment)) {
        last = config;
        yield config;
      }
    },
    config: () => last,
  };
}

/** POSTs a body to a path of the webhook server, trusting its CA. */
function post(config: webhooks.WebhookClientConfig, path: string, body: unknown): Promise<{ status: number; body: string; json: () => Json }> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      `${config.url!.replace(/\/+$/, '')}/${path}`,
      { method: 'POST', ca: Buffer.from(config.caBundle!, 'base64').toString('utf8'), headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text, json: () => JSON.parse(text) as Json });
        });
      },
    );
    request.on('error', reject);
    request.end(typeof body === 'string' ? body : JSON.stringify(body));
  });
}

let cluster: DevCluster;
const log = new fx.LogCapture();

beforeAll(async () => {
  cluster = await fx.startCluster();
  await cluster.load(JSON.stringify(CRD));
});
afterAll(async () => {
  await cluster?.stop();
});
beforeEach(() => log.install());
afterEach(() => log.uninstall());

async function startConverting(managed: boolean): Promise<{ operator: fx.RunningOperator; config: webhooks.WebhookClientConfig }> {
  const registry = new OperatorRegistry();
  register(registry);
  const server = recordingServer();
  const operator = await fx.startOperator({
    cluster,
    registry,
    waitForWatch: false,
    settings: fx.fastSettings((s) => {
      s.admission.server = server.serve;
      s.conversion.managed = managed;
    }),
  });
  await fx.eventually(() => server.config() !== undefined, 'the webhook server is serving');
  return { operator, config: server.config()! };
}

describe('R-CONVERT conversion webhooks served by the operator', () => {
  let operator: fx.RunningOperator;
  let config: webhooks.WebhookClientConfig;
  const PATH = `convert/${CRD_NAME}`;

  beforeAll(async () => {
    ({ operator, config } = await startConverting(false));
  });
  afterAll(async () => {
    await operator?.stop();
    expect(operator?.error).toBeUndefined();
  });

  it('R-CONVERT-203 converts v1 → v3 and v3 → v1, echoing the uid and the review version', async () => {
    const up = await post(config, PATH, review('U1', V3.apiVersion, [widget(V1.apiVersion, 'w1', { size: 3, color: 'red' })]));
    expect(up.status).toBe(200);
    expect(up.json()).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      response: { uid: 'U1', convertedObjects: [widget(V3.apiVersion, 'w1', { color: 'red', replicas: 3 })], result: { status: 'Success' } },
    });
    const down = (await post(config, PATH, review('U2', V1.apiVersion, [widget(V3.apiVersion, 'w1', { replicas: 4 })]))).json();
    expect(down['response']).toEqual({ uid: 'U2', convertedObjects: [widget(V1.apiVersion, 'w1', { size: 4 })], result: { status: 'Success' } });
  });

  it('R-CONVERT-203 converts spoke to spoke through the hub (v1 → v3 → v2), and passes objects already in the desired version', async () => {
    const reply = (
      await post(config, PATH, review('U3', V2.apiVersion, [widget(V1.apiVersion, 'a', { size: 2 }), widget(V2.apiVersion, 'b', { count: 7 })]))
    ).json();
    expect(reply['response']['result']).toEqual({ status: 'Success' });
    expect(reply['response']['convertedObjects']).toEqual([widget(V2.apiVersion, 'a', { count: 2 }), widget(V2.apiVersion, 'b', { count: 7 })]);
  });

  it('R-CONVERT-203 answers a v1beta1 review in kind', async () => {
    const reply = (await post(config, PATH, review('U4', V3.apiVersion, [widget(V2.apiVersion, 'c', { count: 1 })], 'apiextensions.k8s.io/v1beta1'))).json();
    expect(reply['apiVersion']).toBe('apiextensions.k8s.io/v1beta1');
    expect(reply['kind']).toBe('ConversionReview');
    expect(reply['response']).toMatchObject({ uid: 'U4', result: { status: 'Success' }, convertedObjects: [widget(V3.apiVersion, 'c', { replicas: 1 })] });
  });

  it('R-CONVERT-207 converts 100 objects in their order', async () => {
    const objects = Array.from({ length: 100 }, (_, i) => widget(i % 2 ? V1.apiVersion : V2.apiVersion, `w-${i}`, { size: i, count: i }));
    const reply = (await post(config, PATH, review('U5', V3.apiVersion, objects))).json();
    expect(reply['response']['result']).toEqual({ status: 'Success' });
    const converted = reply['response']['convertedObjects'] as Json[];
    expect(converted.map((o) => [o['metadata']['name'], o['apiVersion'], o['spec']['replicas']])).toEqual(objects.map((_, i) => [`w-${i}`, V3.apiVersion, i]));
  });

  it('R-CONVERT-204 a converter that throws fails the whole review with a message naming the object, the versions and the cause', async () => {
    const objects = [widget(V2.apiVersion, 'fine', { count: 1 }), widget(V2.apiVersion, 'bomb', { color: 'explode' })];
    const reply = await post(config, PATH, review('U6', V1.apiVersion, objects));
    expect(reply.status).toBe(200);
    expect(reply.json()['response']).toEqual({
      uid: 'U6',
      convertedObjects: [],
      result: {
        status: 'Failure',
        message:
          "Cannot convert Widget default/bomb of widgets.conv.example.com from v2 to conv.example.com/v1: the converter 'v2-v3' (v2 → v3) failed: no explosive widgets.",
      },
    });
    expect(log.records.filter((r) => r.message.includes('Cannot convert Widget default/bomb')).map((r) => r.level)).toEqual([fx.ERROR]);
  });

  it('R-CONVERT-204 a wrong apiVersion, a thenable, an unknown version, another kind and a non-object are failures', async () => {
    const failure = async (objects: unknown[], desired = V3.apiVersion): Promise<string> => {
      const reply = await post(config, PATH, review('F', desired, objects));
      expect(reply.status).toBe(200);
      const response = reply.json()['response'];
      expect(response['uid']).toBe('F');
      expect(response['result']['status']).toBe('Failure');
      return response['result']['message'] as string;
    };
    expect(await failure([widget(V2.apiVersion, 'stray', { color: 'stray' })])).toContain(
      'the converter returned apiVersion "conv.example.com/v9", expected "conv.example.com/v3"',
    );
    expect(await failure([widget(V2.apiVersion, 'late', { color: 'later' })])).toContain('converters must be synchronous');
    expect(await failure([widget('conv.example.com/v7', 'odd', {})])).toContain('no conversion leads from v7 to v3');
    expect(await failure([widget(V1.apiVersion, 'x', {})], 'conv.example.com/v8')).toContain('no conversion leads from v1 to v8');
    expect(await failure([{ ...widget(V1.apiVersion, 'g', {}), kind: 'Gadget' }])).toContain('its kind is "Gadget", expected Widget');
    expect(await failure([42])).toContain('the object is number, not an object');
  });

  it('R-CONVERT-205 a malformed review is refused with HTTP 400, an unknown CRD path and an AdmissionReview there with 404', async () => {
    expect((await post(config, PATH, '{not json')).status).toBe(400);
    expect((await post(config, PATH, { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' })).status).toBe(400);
    expect((await post(config, PATH, { ...review('', V1.apiVersion, []) })).status).toBe(400);
    expect(
      (
        await post(config, PATH, {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'ConversionReview',
          request: { uid: 'x', desiredAPIVersion: 'a/b', objects: {} },
        })
      ).status,
    ).toBe(400);
    const unknown = await post(config, 'convert/gadgets.conv.example.com', review('U', V1.apiVersion, []));
    expect(unknown.status).toBe(404);
    expect(unknown.body).toContain('No conversions are registered for \\"gadgets.conv.example.com\\"');
    const admission = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'a' } };
    expect((await post(config, PATH, admission)).status).toBe(404);
    const misplaced = await post(config, '', review('U', V1.apiVersion, []));
    expect(misplaced.status).toBe(400);
    expect(misplaced.body).toContain('conversion webhooks are served at convert/<plural>.<group>');
  });

  it('R-CONVERT-201 converters get the object logger, the desired version and the param', async () => {
    await post(config, PATH, review('L', V1.apiVersion, [widget(V2.apiVersion, 'loud', { color: 'shout' })]));
    expect(log.grep('Converting a loud widget')).toEqual(['[default/loud] Converting a loud widget with the param.']);
  });
});

describe('R-CONVERT-208 managed mode', () => {
  const conversionOf = (): Json | undefined => (cluster.store.get(CRD_REF, CRD_NAME) as Json)['spec']['conversion'];

  it('R-CONVERT-208 with settings.conversion.managed = false, the CRD is not touched', async () => {
    const before = JSON.stringify(conversionOf());
    const { operator, config } = await startConverting(false);
    try {
      // Serving (so past the point where a manager would write) and still untouched.
      const reply = await post(config, converting.webhookIdOf(CRD_NAME), review('N', V3.apiVersion, [widget(V1.apiVersion, 'n', { size: 1 })]));
      expect(reply.json()['response']['result']).toEqual({ status: 'Success' });
      expect(JSON.stringify(conversionOf())).toBe(before);
      expect(log.grep('Configured the conversion webhook')).toEqual([]);
    } finally {
      await operator.stop();
    }
  });

  it('R-CONVERT-208 with settings.conversion.managed = true, the CRD points at the conversion path with the CA bundle, and keeps it at exit', async () => {
    const { operator, config } = await startConverting(true);
    try {
      await fx.eventually(() => conversionOf()?.['strategy'] === 'Webhook', 'the managed conversion');
      expect(conversionOf()).toEqual({
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: ['v1'],
          clientConfig: { url: `${config.url!.replace(/\/+$/, '')}/${converting.webhookIdOf(CRD_NAME)}`, caBundle: config.caBundle },
        },
      });
      await fx.eventually(
        () => log.grep(`Configured the conversion webhook of the CustomResourceDefinition ${CRD_NAME}`, fx.INFO).length === 1,
        'the INFO line of the managed conversion',
      );
      // The URL it wrote answers ConversionReviews.
      const written = conversionOf()!['webhook']['clientConfig'] as webhooks.WebhookClientConfig;
      const reply = await post(
        { ...written, url: written.url!.replace(`/${converting.webhookIdOf(CRD_NAME)}`, '') },
        converting.webhookIdOf(CRD_NAME),
        review('M', V3.apiVersion, [widget(V1.apiVersion, 'm', { size: 1 })]),
      );
      expect(reply.json()['response']['result']).toEqual({ status: 'Success' });
    } finally {
      await operator.stop();
    }
    expect(conversionOf()?.['strategy']).toBe('Webhook');
  });
});

describe('R-CONVERT-201/202/206 registration and set-up', () => {
  it('R-CONVERT-201 on.convert returns the pair with its converters callable directly', () => {
    const registry = new OperatorRegistry();
    const conversion = on.convert(V1, V3, {
      registry,
      forward: ({ spec: { size, ...spec } = {}, ...object }) => ({ ...object, apiVersion: V3.apiVersion, spec: { ...spec, replicas: size } }),
      backward: ({ spec: { replicas, ...spec } = {}, ...object }, { desiredApiVersion }) => ({
        ...object,
        apiVersion: desiredApiVersion,
        spec: { ...spec, size: replicas },
      }),
    });
    expect(conversion.id).toBe('v1-v3');
    expect(conversion.from).toBe(V1);
    expect(conversion.to).toBe(V3);
    expect(conversion.forward({ apiVersion: V1.apiVersion, kind: 'Widget', spec: { size: 2 } })).toEqual({
      apiVersion: V3.apiVersion,
      kind: 'Widget',
      spec: { replicas: 2 },
    });
    expect(conversion.backward({ apiVersion: V3.apiVersion, kind: 'Widget', spec: { replicas: 5 } })).toEqual({
      apiVersion: V1.apiVersion,
      kind: 'Widget',
      spec: { size: 5 },
    });
    expect(registry.conversionHandlers().map((h) => h.id)).toEqual(['v1-v3']);
  });

  it('R-CONVERT-202 registration refuses other kinds, one version twice, a pair twice (either order) and missing converters', () => {
    const registry = new OperatorRegistry();
    const same = { registry, forward: (o: object) => o, backward: (o: object) => o } as never;
    const Gadgets = resource<KubernetesObject>({ group: 'conv.example.com', version: 'v2', plural: 'gadgets', kind: 'Gadget', namespaced: true });
    const Other = resource<KubernetesObject>({ ...info, group: 'other.example.com', version: 'v2' });
    expect(() => on.convert(V1, Gadgets, same)).toThrow(TypeError);
    expect(() => on.convert(V1, Gadgets, same)).toThrow(
      'on.convert() converts between versions of one kind, but got Widget (widgets.conv.example.com) and Gadget (gadgets.conv.example.com).',
    );
    expect(() => on.convert(V1, Other, same)).toThrow(TypeError);
    expect(() => on.convert(V1, V1, same)).toThrow('on.convert() needs two different versions of widgets.conv.example.com, got v1 twice.');
    expect(() => on.convert(V1, V3, { registry, forward: (o: object) => o } as never)).toThrow("needs the option 'backward' as a function");
    expect(() => on.convert(V1, V3, { registry, backward: (o: object) => o } as never)).toThrow("needs the option 'forward' as a function");
    expect(() => on.convert(V1, V3, { ...(same as object), colour: 1 } as never)).toThrow('Unknown options of on.convert(): colour.');
    on.convert(V1, V3, same);
    expect(() => on.convert(V1, V3, same)).toThrow(TypeError);
    expect(() => on.convert(V3, V1, same)).toThrow("The versions v3 and v1 of widgets.conv.example.com have a conversion already ('v1-v3', v1 → v3)");
    expect(registry.conversionHandlers()).toHaveLength(1);
  });

  it('R-CONVERT-210 an admission handler id under convert/ is refused at registration', () => {
    const registry = new OperatorRegistry();
    expect(() => on.validate(V1, { registry, id: 'convert/widgets.conv.example.com' }, () => undefined)).toThrow(
      'The admission handler id "convert/widgets.conv.example.com" starts with "convert/", which is reserved for conversion webhooks',
    );
    expect(() => on.mutate(V1, { registry, id: 'convert/x' }, () => undefined)).toThrow(TypeError);
    on.validate(V1, { registry, id: 'converted' }, () => undefined);
    expect(registry.handlers.map((h) => h.id)).toEqual(['converted']);
  });

  it('R-CONVERT-206 conversions without an admission server stop the operator with an error naming on.convert', () => {
    const registry = new OperatorRegistry();
    register(registry);
    const settings = new OperatorSettings({ warn: () => undefined });
    expect(() => serving.checkSettings(settings, registry)).toThrow(AdmissionSetupError);
    expect(() => serving.checkSettings(settings, registry)).toThrow(/^Conversions are registered \(on\.convert\), but no admission server/);
    settings.admission.server = async function* none() {};
    expect(() => serving.checkSettings(settings, registry)).not.toThrow();
  });
});

describe('R-CONVERT-207/209 the request path', () => {
  it('R-CONVERT-209 conversion requests are counted and timed under the webhook id convert/<crd>, refused ones with their status', async () => {
    const registry = new OperatorRegistry();
    register(registry);
    const requests: Array<[string, number]> = [];
    const inFlight: Array<[string, number]> = [];
    const instruments = {
      webhookRequest: (id: string, code: number) => requests.push([id, code]),
      webhookInFlight: (id: string, change: 1 | -1) => inFlight.push([id, change]),
    };
    const options = { registry, settings: new OperatorSettings({ warn: () => undefined }), clock: clocksModule.realClock, instruments };
    converting.serveConversionRequest(options, review('A', V3.apiVersion, [widget(V1.apiVersion, 'a', {})]), CRD_NAME);
    expect(() => converting.serveConversionRequest(options, '{', CRD_NAME)).toThrow(WebhookRequestError);
    expect(requests).toEqual([
      [`convert/${CRD_NAME}`, 200],
      [`convert/${CRD_NAME}`, 400],
    ]);
    expect(inFlight.map(([, change]) => change)).toEqual([1, -1, 1, -1]);
  });

  it('R-CONVERT-207 a review of 100 objects holds the event loop for only a few milliseconds', () => {
    const registry = new OperatorRegistry();
    register(registry);
    const options = { registry, settings: new OperatorSettings({ warn: () => undefined }), clock: clocksModule.realClock };
    const objects = Array.from({ length: 100 }, (_, i) => widget(V1.apiVersion, `w-${i}`, { size: i, color: 'blue', extra: { nested: [1, 2, 3] } }));
    converting.serveConversionRequest(options, review('W', V2.apiVersion, objects), CRD_NAME); // warm-up
    const started = performance.now();
    const reply = converting.serveConversionRequest(options, review('T', V2.apiVersion, objects), CRD_NAME);
    const elapsed = performance.now() - started;
    expect(reply.response.convertedObjects).toHaveLength(100);
    // Measured at about 3 ms on a shared 2-core machine (with DEBUG logging on): no need to yield between objects.
    expect(elapsed).toBeLessThan(50);
  });
});
