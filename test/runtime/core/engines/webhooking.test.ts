/**
 * The admission webhook server and the managed configurations in a running operator
 * (R-ADMISSION-2/3/6/7/8): real operators against a devcluster over loopback, through the
 * runtime's HTTP client, with a server that hands the request function to the test (no network:
 * the server protocol is what is tested here; `scenarios/admission.test.ts` goes through HTTP).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../../devcluster/testing.js';
import type * as webhooks from '../../../../runtime/cogs/structs/webhooks.js';
import * as errors from '../../../../runtime/core/actions/errors.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import * as running from '../../../../runtime/core/reactor/running.js';
import { on } from '../../../../runtime/on.js';
import * as fx from '../../../support/operators.js';
import { inProcessServer } from '../../scenarios/webhooks.js';
import * as engineErrors from '../../../../runtime/core/engines/errors.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ROOT = path.resolve(import.meta.dirname, '../../../..');
const WIDGETS_CRD = fs.readFileSync(path.join(ROOT, 'fixtures/crds/widgets.yaml'), 'utf8');
const VALIDATING = { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations' } as const;
const MUTATING = { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'mutatingwebhookconfigurations' } as const;

let cluster: DevCluster;
const log = new fx.LogCapture();

beforeAll(async () => {
  cluster = await fx.startCluster();
});
afterAll(async () => {
  await cluster.stop();
});
beforeEach(() => {
  log.install();
  cluster.requests.clear();
});
afterEach(async () => {
  log.uninstall();
  cluster.faults.clear();
  for (const type of [VALIDATING, MUTATING]) {
    if (cluster.store.get(type, 'auto.kopf.dev') !== undefined) await cluster.store.delete(type, 'auto.kopf.dev');
  }
});

function configuration(type: typeof VALIDATING | typeof MUTATING): Json | undefined {
  return cluster.store.get(type, 'auto.kopf.dev') as Json | undefined;
}

function names(type: typeof VALIDATING | typeof MUTATING): string[] {
  return ((configuration(type)?.['webhooks'] ?? []) as Json[]).map((entry) => entry['name']);
}

function patches(type: typeof VALIDATING | typeof MUTATING): number {
  return cluster.requests.filter((r) => r.method === 'PATCH' && r.resource === type.resource).length;
}

/** A review of the reference object (the request function's input). */
function review(request: Json = {}): Json {
  const object = fx.kopfExample('kopf-example-1', { metadata: { uid: 'uid-1' } });
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'U',
      resource: { group: 'kopf.dev', version: 'v1', resource: 'kopfexamples' },
      operation: 'CREATE',
      userInfo: { username: 'admin' },
      object,
      oldObject: null,
      ...request,
    },
  };
}

function failure(operator: fx.RunningOperator): unknown {
  return operator.error;
}

describe('R-ADMISSION-2 the server requirement', () => {
  it('R-ADMISSION-2 admission handlers without a server stop the operator after the startup activity, before any API request', async () => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function check() {});
    const cleanups: string[] = [];
    on.cleanup({ registry }, function cleanup() {
      cleanups.push('cleanup');
    });
    on.login({ registry }, function login() {
      return { server: cluster.url, token: cluster.token };
    });
    const before = cluster.requests.all.length;
    const error = await running.operator({ registry, settings: fx.fastSettings(), clusterwide: true, standalone: true }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(engineErrors.AdmissionSetupError);
    expect(error).toMatchObject({ code: 'AdmissionSetupError', problem: 'no-server' });
    expect((error as Error).message).toMatch(
      /^Admission handlers are registered \(on.validate, on.mutate\), but no admission server or tunnel is configured: set settings.admission.server/,
    );
    expect(log.grep('Startup activity has failed: Admission handlers are registered')).toHaveLength(1);
    expect(cluster.requests.all.length).toBe(before);
    expect(cleanups).toEqual([]);
  });

  it('R-ADMISSION-2 a server set by a startup handler is started only after resources are discovered', async () => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function check({ warnings }) {
      warnings.push('checked');
    });
    const server = inProcessServer();
    let discoveredFirst = false;
    on.startup({ registry }, function configure({ settings }) {
      settings.admission.server = (fn, environment) => {
        discoveredFirst = cluster.requests.all.some((r) => r.path === '/apis/kopf.dev/v1');
        return server.serve(fn, environment);
      };
    });
    const operator = await fx.startOperator({ cluster, registry, waitForWatch: false });
    try {
      await fx.eventually(() => server.fn() !== undefined, 'the server to start');
      expect(discoveredFirst).toBe(true);
      // So an early request is answered, not refused as an unknown resource.
      expect((await server.fn()!(review())).response).toEqual({ uid: 'U', allowed: true, warnings: ['checked'] });
    } finally {
      await operator.stop();
    }
    expect(operator.error).toBeUndefined();
  });

  it.each<[string, (s: fx.RunningOperator['settings']) => void, engineErrors.AdmissionSetupProblem, RegExp]>([
    [
      'a server that is neither a function nor an object with serve()',
      (s) => {
        s.admission.server = 42 as never;
      },
      'invalid-server',
      /^settings.admission.server must be a server function \(fn, environment\) => AsyncIterable or an object with a serve\(fn, environment\) method, got number\.$/,
    ],
    [
      'an empty managed name',
      (s) => {
        s.admission.server = inProcessServer().serve;
        s.admission.managed = '';
      },
      'invalid-managed',
      /^settings.admission.managed must be a non-empty name/,
    ],
  ])('R-ADMISSION-2 %s stops the operator with a clear error', async (_, configure, problem, message) => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function check() {});
    const operator = await fx.startOperator({ cluster, registry, settings: fx.fastSettings(configure), waitForWatch: false });
    await operator.done;
    expect(failure(operator)).toMatchObject({ code: 'AdmissionSetupError', problem });
    expect((failure(operator) as Error).message).toMatch(message);
  });
});

describe('R-ADMISSION-3 the server protocol', () => {
  it('R-ADMISSION-3 an object server: serve() gets the request function and the environment; its disposal follows the iteration', async () => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function check() {});
    const ca = '-----BEGIN CERTIFICATE-----\nMIIBexample\n-----END CERTIFICATE-----\n';
    on.login({ registry }, function login() {
      return { server: cluster.url, token: cluster.token, caData: Buffer.from(ca).toString('base64') };
    });
    const inner = inProcessServer();
    const events: string[] = [];
    const server: webhooks.WebhookServerObject = {
      serve(fn, environment) {
        events.push('serve');
        return inner.serve(fn, environment);
      },
      async [Symbol.asyncDispose]() {
        events.push(`dispose (closed: ${inner.closed()})`);
      },
    };
    const operator = await fx.startOperator({
      cluster,
      registry,
      settings: fx.fastSettings((s) => {
        s.admission.server = server;
      }),
      waitForWatch: false,
    });
    await fx.eventually(() => inner.fn() !== undefined, 'the server to start');
    const environment = inner.environment()!;
    expect({ apiServer: environment.apiServer, apiServerCa: environment.apiServerCa, aborted: environment.signal.aborted }).toEqual({
      apiServer: cluster.url,
      apiServerCa: ca,
      aborted: false,
    });
    await operator.stop();
    expect(environment.signal.aborted).toBe(true);
    expect(events).toEqual(['serve', 'dispose (closed: true)']);
    expect(operator.error).toBeUndefined();
  });

  it('R-ADMISSION-3 each yielded client configuration reconfigures the webhooks; the end of the iteration stops the operator', async () => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function check() {});
    const server = inProcessServer({ url: 'https://first.example:9443' });
    const settings = fx.fastSettings((s) => {
      s.admission.server = server.serve;
      s.admission.managed = 'auto.kopf.dev';
    });
    const operator = await fx.startOperator({ cluster, registry, settings, waitForWatch: false });
    await fx.eventually(
      () => configuration(VALIDATING)?.['webhooks']?.[0]?.clientConfig?.url === 'https://first.example:9443/check',
      'the first configuration',
    );
    server.yieldConfig({ url: 'https://second.example:9443/hooks/', caBundle: 'Q0E=' });
    await fx.eventually(
      () => configuration(VALIDATING)?.['webhooks']?.[0]?.clientConfig?.url === 'https://second.example:9443/hooks/check',
      'the second configuration',
    );
    expect(configuration(VALIDATING)!['webhooks'][0].clientConfig).toEqual({ url: 'https://second.example:9443/hooks/check', caBundle: 'Q0E=' });
    server.end();
    await operator.done;
    expect(operator.error).toBeUndefined();
    expect(log.grep('The admission webhook server has stopped serving: the operator stops.')).toHaveLength(1);
    expect(log.grep('has finished unexpectedly')).toEqual([]);
    expect(names(VALIDATING)).toEqual([]); // cleaned up at the stop
  });

  it('R-ADMISSION-3 a yielded configuration without a url or service stops the operator with a clear error', async () => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function check() {});
    const server = inProcessServer({ caBundle: 'Q0E=' } as webhooks.WebhookClientConfig);
    const operator = await fx.startOperator({
      cluster,
      registry,
      settings: fx.fastSettings((s) => {
        s.admission.server = server.serve;
      }),
      waitForWatch: false,
    });
    await operator.done;
    expect(failure(operator)).toMatchObject({
      problem: 'invalid-client-config',
      message: 'The admission server yielded a client configuration without a url or a service (namespace and name): {"caBundle":"Q0E="}.',
    });
    expect(server.closed()).toBe(true);
  });
});

describe('R-ADMISSION-6 memos in a running operator', () => {
  it("R-ADMISSION-6 updates use the object's memo of the operator; creations a copy of the operator memo that is thrown away", async () => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function remember({ memo, operation }) {
      memo[`by-${operation}`] = true;
    });
    const server = inProcessServer();
    const operator = await fx.startOperator({
      cluster,
      registry,
      settings: fx.fastSettings((s) => {
        s.admission.server = server.serve;
      }),
      waitForWatch: false,
    });
    try {
      await fx.eventually(() => server.fn() !== undefined, 'the server to start');
      await server.fn()!(review({ operation: 'CREATE' }));
      await server.fn()!(review({ operation: 'UPDATE', oldObject: fx.kopfExample() }));
      const memory = operator.context.memories.recall('uid-1', { listing: false });
      expect({ ...memory.memo }).toEqual({ 'by-UPDATE': true });
      expect({ ...operator.context.memo }).toEqual({});
    } finally {
      await operator.stop();
    }
  });
});

describe('R-ADMISSION-7 managed configurations through the real client', () => {
  it("R-ADMISSION-7 both configurations are created and patched with the handlers' entries", async () => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function validate1() {});
    on.validate('kopfexamples', { registry, subresource: '*' }, function validate_subresources() {});
    on.mutate('kopfexamples', { registry, labels: { somelabel: 'somevalue' }, sideEffects: true, ignoreFailures: true }, function mutate1() {});
    const server = inProcessServer({ url: 'https://hooks.example:9443', caBundle: 'Q0E=' });
    const operator = await fx.startOperator({
      cluster,
      registry,
      settings: fx.fastSettings((s) => {
        s.admission.server = server.serve;
        s.admission.managed = 'auto.kopf.dev';
      }),
      waitForWatch: false,
    });
    try {
      await fx.eventually(() => names(MUTATING).length === 1, 'the configurations');
      const validating = configuration(VALIDATING)!;
      expect(validating['kind']).toBe('ValidatingWebhookConfiguration');
      expect(validating['webhooks']).toEqual([
        {
          name: 'validate1.auto.kopf.dev',
          sideEffects: 'None',
          failurePolicy: 'Fail',
          matchPolicy: 'Equivalent',
          rules: [{ apiGroups: ['kopf.dev'], apiVersions: ['v1'], resources: ['kopfexamples'], operations: ['*'], scope: '*' }],
          clientConfig: { url: 'https://hooks.example:9443/validate1', caBundle: 'Q0E=' },
          timeoutSeconds: 30,
          admissionReviewVersions: ['v1', 'v1beta1'],
          namespaceSelector: {},
          objectSelector: {},
        },
        {
          name: 'validate-subresources.auto.kopf.dev',
          sideEffects: 'None',
          failurePolicy: 'Fail',
          matchPolicy: 'Equivalent',
          rules: [{ apiGroups: ['kopf.dev'], apiVersions: ['v1'], resources: ['kopfexamples/*'], operations: ['*'], scope: '*' }],
          clientConfig: { url: 'https://hooks.example:9443/validate_subresources', caBundle: 'Q0E=' },
          timeoutSeconds: 30,
          admissionReviewVersions: ['v1', 'v1beta1'],
          namespaceSelector: {},
          objectSelector: {},
        },
      ]);
      expect(configuration(MUTATING)!['webhooks']).toEqual([
        expect.objectContaining({
          name: 'mutate1.auto.kopf.dev',
          sideEffects: 'NoneOnDryRun',
          failurePolicy: 'Ignore',
          objectSelector: { matchExpressions: [{ key: 'somelabel', operator: 'In', values: ['somevalue'] }] },
          clientConfig: { url: 'https://hooks.example:9443/mutate1', caBundle: 'Q0E=' },
        }),
      ]);
      expect(log.grep('Reconfiguring the validating webhook auto.kopf.dev.')).toHaveLength(1);
      expect(log.grep('Reconfiguring the mutating webhook auto.kopf.dev.')).toHaveLength(1);
    } finally {
      await operator.stop();
    }
  });

  it('R-ADMISSION-7 existing configurations are taken over (HTTP 409 is fine) and their entries replaced', async () => {
    await cluster.store.create({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'auto.kopf.dev' },
      webhooks: [{ name: 'old.auto.kopf.dev', clientConfig: { url: 'https://old.example/x' }, sideEffects: 'None', admissionReviewVersions: ['v1'] }],
    });
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function fresh() {});
    const server = inProcessServer();
    const operator = await fx.startOperator({
      cluster,
      registry,
      settings: fx.fastSettings((s) => {
        s.admission.server = server.serve;
        s.admission.managed = 'auto.kopf.dev';
      }),
      waitForWatch: false,
    });
    try {
      await fx.eventually(() => names(VALIDATING).join() === 'fresh.auto.kopf.dev', 'the replaced entries');
      expect(cluster.requests.filter((r) => r.method === 'POST' && r.resource === VALIDATING.resource).map((r) => r.code)).toContain(409);
    } finally {
      await operator.stop();
    }
    expect(operator.error).toBeUndefined();
  });

  it('R-ADMISSION-7 a newly served resource that a handler selects re-patches the entries with its rule', async () => {
    const registry = new OperatorRegistry();
    on.validate(['example.com', 'widgets'], { registry }, function widgets() {});
    const server = inProcessServer();
    const operator = await fx.startOperator({
      cluster,
      registry,
      settings: fx.fastSettings((s) => {
        s.admission.server = server.serve;
        s.admission.managed = 'auto.kopf.dev';
      }),
      waitForWatch: false,
    });
    try {
      await fx.eventually(() => names(VALIDATING).length === 1, 'the first entries');
      expect(configuration(VALIDATING)!['webhooks'][0].rules).toEqual([]);
      const before = patches(VALIDATING);
      await cluster.load(WIDGETS_CRD);
      await fx.eventually(() => configuration(VALIDATING)!['webhooks'][0].rules.length === 1, 'the rule of widgets');
      expect(configuration(VALIDATING)!['webhooks'][0].rules[0]).toMatchObject({ apiGroups: ['example.com'], resources: ['widgets'] });
      expect(patches(VALIDATING)).toBe(before + 1);
    } finally {
      await operator.stop();
      await cluster.store.delete({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' }, 'widgets.example.com');
    }
  });

  it.each([
    ['create', 'POST'],
    ['patch', 'PATCH'],
  ])('R-ADMISSION-7 HTTP 403 on %s stops the operator with an error about RBAC permissions', async (action, method) => {
    cluster.faults.add({ method, resource: 'validatingwebhookconfigurations', action: { respond: { code: 403, message: 'not allowed here' } } });
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function check() {});
    const server = inProcessServer();
    const operator = await fx.startOperator({
      cluster,
      registry,
      settings: fx.fastSettings((s) => {
        s.admission.server = server.serve;
        s.admission.managed = 'auto.kopf.dev';
      }),
      waitForWatch: false,
    });
    await operator.done;
    expect(failure(operator)).toMatchObject({ code: 'AdmissionSetupError', problem: 'forbidden' });
    expect((failure(operator) as Error).message).toBe(
      `Not enough RBAC permissions to ${action} the validatingwebhookconfigurations.admissionregistration.k8s.io 'auto.kopf.dev': ` +
        "not allowed here. Grant the operator's service account create and patch on validatingwebhookconfigurations.admissionregistration.k8s.io.",
    );
    expect(log.grep('Admission webhook manager has failed: Not enough RBAC permissions')).toHaveLength(1);
    expect(log.grep('Cleaning up')).toEqual([]);
  });

  it('R-ADMISSION-7 camelCase handler ids get lowercase entry names, which the cluster accepts', async () => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function validateWidgets() {});
    on.validate('kopfexamples', { registry, id: 'Check/Spec.Field' }, () => undefined);
    const server = inProcessServer({ url: 'https://hooks.example:9443' });
    const operator = await fx.startOperator({
      cluster,
      registry,
      settings: fx.fastSettings((s) => {
        s.admission.server = server.serve;
        s.admission.managed = 'auto.kopf.dev';
      }),
      waitForWatch: false,
    });
    try {
      await fx.eventually(() => names(VALIDATING).length === 2, 'the validating entries');
      expect(names(VALIDATING)).toEqual(['validatewidgets.auto.kopf.dev', 'check.spec.field.auto.kopf.dev']);
      expect((configuration(VALIDATING)!['webhooks'] as Json[]).map((entry) => entry['clientConfig']['url'])).toEqual([
        'https://hooks.example:9443/validateWidgets',
        'https://hooks.example:9443/Check/Spec.Field',
      ]);
      expect(operator.error).toBeUndefined();
    } finally {
      await operator.stop();
    }
  });

  it('R-ADMISSION-7 handler ids whose entry names Kubernetes would refuse stop the operator before anything is written', async () => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function _check() {});
    const server = inProcessServer();
    const operator = await fx.startOperator({
      cluster,
      registry,
      settings: fx.fastSettings((s) => {
        s.admission.server = server.serve;
        s.admission.managed = 'auto.kopf.dev';
      }),
      waitForWatch: false,
    });
    await operator.done;
    expect(failure(operator)).toMatchObject({ problem: 'invalid-name' });
    expect((failure(operator) as Error).message).toMatch(
      /^The webhook name '-check.auto.kopf.dev' of the admission handler '_check' would be refused by Kubernetes: it is not a DNS subdomain .* Give the handler an id/,
    );
    expect(cluster.requests.filter((r) => r.resource === VALIDATING.resource)).toEqual([]);
  });
});

describe('R-ADMISSION-8 cleanup', () => {
  it('R-ADMISSION-8 a graceful stop keeps only the entries of persistent handlers', async () => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function temporary() {});
    on.validate('kopfexamples', { registry, persistent: true }, function kept() {});
    on.mutate('kopfexamples', { registry }, function mutating() {});
    const server = inProcessServer();
    const operator = await fx.startOperator({
      cluster,
      registry,
      settings: fx.fastSettings((s) => {
        s.admission.server = server.serve;
        s.admission.managed = 'auto.kopf.dev';
      }),
      waitForWatch: false,
    });
    await fx.eventually(() => names(VALIDATING).length === 2 && names(MUTATING).length === 1, 'the configurations');
    await operator.stop();
    expect(operator.error).toBeUndefined();
    expect(names(VALIDATING)).toEqual(['kept.auto.kopf.dev']);
    expect(configuration(MUTATING)!['webhooks']).toEqual([]);
    expect(log.grep('Cleaning up the admission webhook auto.kopf.dev.')).toHaveLength(1);
  });

  it('R-ADMISSION-8 a stop while a configuration write is in flight (written, response pending) still cleans up', async () => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function temporary() {});
    on.mutate('kopfexamples', { registry }, function mutating() {});
    // The write of the mutating entries is stored at once, its response held back.
    cluster.faults.add({ verb: 'patch', resource: 'mutatingwebhookconfigurations', times: 1, delay: { afterMs: 30_000 } });
    const server = inProcessServer();
    const operator = await fx.startOperator({
      cluster,
      registry,
      settings: fx.fastSettings((s) => {
        s.admission.server = server.serve;
        s.admission.managed = 'auto.kopf.dev';
      }),
      waitForWatch: false,
    });
    await fx.eventually(() => names(VALIDATING).length === 1 && names(MUTATING).length === 1, 'the configurations');
    await operator.stop();
    expect(operator.error).toBeUndefined();
    expect(configuration(VALIDATING)!['webhooks']).toEqual([]);
    expect(configuration(MUTATING)!['webhooks']).toEqual([]);
    expect(log.grep('Cleaning up the admission webhook auto.kopf.dev.')).toHaveLength(1);
  });

  it('R-ADMISSION-8 without a client configuration there is nothing to clean up', async () => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function check() {});
    const never: webhooks.WebhookServerFn = async function* serve(_fn, environment) {
      await new Promise<void>((resolve) => environment!.signal.addEventListener('abort', () => resolve()));
    };
    const operator = await fx.startOperator({
      cluster,
      registry,
      settings: fx.fastSettings((s) => {
        s.admission.server = never;
        s.admission.managed = 'auto.kopf.dev';
      }),
      waitForWatch: false,
    });
    await fx.eventually(() => configuration(VALIDATING) !== undefined && configuration(MUTATING) !== undefined, 'the created configurations');
    await operator.stop();
    expect(operator.error).toBeUndefined();
    expect(patches(VALIDATING) + patches(MUTATING)).toBe(0);
    expect(log.grep('Cleaning up')).toEqual([]);
  });
});

describe('AdmissionError', () => {
  it('R-ADMISSION-5 its HTTP code is `status` (Kopf: `code`), default 500; `code` is the literal error code', () => {
    expect(new errors.AdmissionError('x', 555)).toMatchObject({ status: 555, code: 'AdmissionError', message: 'x' });
    expect(new errors.AdmissionError('x').status).toBe(500);
  });
});
