/**
 * Scenario A-21 (admission webhooks, Kopf's `17-admission`) on the devcluster: the operator serves
 * its validating and mutating handlers through a webhook server written the way users may write
 * theirs (HTTPS on loopback, `scenarios/webhooks.ts`), manages the configurations `auto.kopf.dev`,
 * and kubectl talks to the cluster as users do: rejections with the handlers' messages, warnings,
 * dry runs, mutations stored, the status subresource, the failure policies when the server is down,
 * a webhook that times out, the cleanup at a graceful stop, and a certificate rotation of the
 * built-in `WebhookServer` followed by the managed configurations and the cluster. (The other TLS
 * flavours of the built-in servers are tested with their kit.)
 */
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import * as certs from '../../../devcluster/auth/certs.js';
import type { DevCluster } from '../../../devcluster/testing.js';
import { VirtualClock } from '../../../runtime/cogs/aio/clocks.js';
import * as errors from '../../../runtime/core/actions/errors.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { WebhookServer } from '../../../runtime/kits/webhooks/index.js';
import { on } from '../../../runtime/on.js';
import * as kubectl from '../../devcluster/clients/kubectl.js';
import * as fx from '../../support/operators.js';
import { localServer, type LocalServer } from './webhooks.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const VALIDATING = { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations' } as const;
const MUTATING = { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'mutatingwebhookconfigurations' } as const;
const COMMON = { failurePolicy: 'Fail', sideEffects: 'None', matchPolicy: 'Equivalent', timeoutSeconds: 30, admissionReviewVersions: ['v1', 'v1beta1'] };

let cluster: DevCluster;
let target: kubectl.KubectlTarget;
let binary: string;
const log = new fx.LogCapture();

beforeAll(async () => {
  binary = kubectl.requireBinary(kubectl.findKubectls()[1]!);
  cluster = await fx.startCluster();
  const workDir = kubectl.makeWorkDir('admission-');
  target = { kubeconfig: cluster.writeKubeconfig(path.join(workDir, 'kubeconfig')), workDir };
});
afterAll(async () => {
  await cluster?.stop();
  if (target) fs.rmSync(target.workDir, { recursive: true, force: true });
});
beforeEach(() => log.install());
afterEach(async () => {
  log.uninstall();
  for (const type of [VALIDATING, MUTATING]) {
    if (cluster.store.get(type, 'auto.kopf.dev') !== undefined) await cluster.store.delete(type, 'auto.kopf.dev');
  }
  for (const object of cluster.store.list(fx.KEX) as Json[])
    await cluster.store.delete(fx.KEX, object['metadata']['name'], { namespace: 'default', admission: false });
});

function configuration(type: typeof VALIDATING | typeof MUTATING): Json | undefined {
  return cluster.store.get(type, 'auto.kopf.dev') as Json | undefined;
}

function entries(type: typeof VALIDATING | typeof MUTATING): Json[] {
  return (configuration(type)?.['webhooks'] ?? []) as Json[];
}

/** Runs `kubectl create -f -` with an object of the reference CRD. */
function create(name: string, spec: Json = {}, args: string[] = []): Promise<kubectl.KubectlResult> {
  const body = fx.kopfExample(name) as Json;
  return kubectl.run(binary, target, ['create', '-f', '-', ...args], { input: JSON.stringify({ ...body, spec: { ...body['spec'], ...spec } }) });
}

/** The A-21 operator: Kopf's 17-admission handlers; the startup handler sets the server. */
function a21(server: LocalServer, calls: string[]): OperatorRegistry {
  const registry = new OperatorRegistry();
  on.startup({ registry }, function configure({ settings }) {
    settings.admission.server = server.serve;
    settings.admission.managed = 'auto.kopf.dev';
  });
  on.validate('kopfexamples', { registry }, function authhook({ headers, sslPeer, warnings }) {
    calls.push('authhook');
    warnings.push(`Accessing as user-agent: ${headers['user-agent'] ?? '(unidentified)'}`);
    warnings.push(`Accepting: ${headers['accept'] ?? '(anything)'}`);
    warnings.push(`SSL peer is ${Object.keys(sslPeer).length > 0 ? 'identified' : 'not identified'}.`);
  });
  on.validate('kopfexamples', { registry }, function validate1({ spec, dryRun }) {
    calls.push('validate1');
    if (!dryRun && spec['field'] === 'wrong') throw new errors.AdmissionError("Meh! I don't like it. Change the field.");
  });
  on.validate('kopfexamples', { registry, field: 'spec.field', value: 'not-allowed' }, function validate2() {
    calls.push('validate2');
    throw new errors.AdmissionError("I'm too lazy anyway. Go away!", 555);
  });
  on.validate('kopfexamples', { registry, subresource: '*' }, function validate_subresources({ subresource }) {
    calls.push(`validate_subresources:${subresource}`);
  });
  on.mutate('kopfexamples', { registry, labels: { somelabel: 'somevalue' } }, function mutate1({ patch }) {
    calls.push('mutate1');
    patch.spec['injected'] = 123;
  });
  return registry;
}

/** POSTs a review straight to the webhook server, trusting the CA it announced. */
function post(url: string, caBundle: string, review: Json): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(review);
    const request = https.request(
      url,
      { method: 'POST', ca: Buffer.from(caBundle, 'base64').toString('utf8'), headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    request.on('error', reject);
    request.end(data);
  });
}

function review(uid: string, object: Json): Json {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      resource: { group: 'kopf.dev', version: 'v1', resource: 'kopfexamples' },
      operation: 'CREATE',
      userInfo: { username: 'someone' },
      object,
      oldObject: null,
      dryRun: false,
    },
  };
}

/** The API server's own answer to a creation (kubectl does not show the code). */
async function createThroughApi(body: Json): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${cluster.url}/apis/kopf.dev/v1/namespaces/default/kopfexamples`, {
    method: 'POST',
    headers: { authorization: `Bearer ${cluster.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

describe('A-21 admission webhooks', () => {
  it('A-21 R-ADMISSION-2..8 configurations, rejections, warnings, dry runs, mutations, subresources, direct requests, cleanup', async () => {
    const server = localServer();
    const calls: string[] = [];
    const operator = await fx.startOperator({ cluster, registry: a21(server, calls), settings: fx.fastSettings(), waitForWatch: false });
    try {
      await fx.eventually(() => entries(VALIDATING).length === 4 && entries(MUTATING).length === 1, 'the managed configurations');
      const url = server.url();
      const caBundle = entries(VALIDATING)[0]!['clientConfig']['caBundle'] as string;
      const rule = (resource: string) => [{ apiGroups: ['kopf.dev'], apiVersions: ['v1'], resources: [resource], operations: ['*'], scope: '*' }];
      // The cluster stores a missing objectSelector (null) as {}, as Kubernetes defaults it.
      expect(
        entries(VALIDATING).map(
          ({ name, clientConfig, rules, objectSelector, failurePolicy, sideEffects, matchPolicy, timeoutSeconds, admissionReviewVersions }) => ({
            name,
            url: clientConfig['url'],
            rules,
            objectSelector,
            failurePolicy,
            sideEffects,
            matchPolicy,
            timeoutSeconds,
            admissionReviewVersions,
          }),
        ),
      ).toEqual([
        { name: 'authhook.auto.kopf.dev', url: `${url}/authhook`, rules: rule('kopfexamples'), objectSelector: {}, ...COMMON },
        { name: 'validate1.auto.kopf.dev', url: `${url}/validate1`, rules: rule('kopfexamples'), objectSelector: {}, ...COMMON },
        { name: 'validate2.spec.field.auto.kopf.dev', url: `${url}/validate2/spec.field`, rules: rule('kopfexamples'), objectSelector: {}, ...COMMON },
        { name: 'validate-subresources.auto.kopf.dev', url: `${url}/validate_subresources`, rules: rule('kopfexamples/*'), objectSelector: {}, ...COMMON },
      ]);
      expect(entries(MUTATING)).toEqual([
        expect.objectContaining({
          name: 'mutate1.auto.kopf.dev',
          ...COMMON,
          rules: rule('kopfexamples'),
          objectSelector: { matchExpressions: [{ key: 'somelabel', operator: 'In', values: ['somevalue'] }] },
          clientConfig: { url: `${url}/mutate1`, caBundle },
        }),
      ]);
      expect(log.grep('Reconfiguring the validating webhook auto.kopf.dev.').length).toBeGreaterThanOrEqual(1);
      expect(server.environment()).toMatchObject({ apiServer: cluster.url });

      // The reference object is created with the warnings shown and the injected field stored.
      const created = await create('kopf-example-1');
      expect(created.code).toBe(0);
      // The headers are those of the API server's call (D-ADM-13).
      expect(created.stderr).toMatch(/^Warning: Accessing as user-agent: kube-apiserver-admission$/m);
      expect(created.stderr).toMatch(/^Warning: Accepting: application\/json, \*\/\*$/m);
      expect(created.stderr).toMatch(/^Warning: SSL peer is not identified\.$/m);
      expect((cluster.store.get(fx.KEX, 'kopf-example-1', 'default') as Json)['spec']['injected']).toBe(123);
      expect(calls).toEqual(expect.arrayContaining(['mutate1', 'authhook', 'validate1']));
      expect(calls).not.toContain('validate2');

      // A wrong field is rejected by validate1 — unless it is a dry run.
      const wrong = await create('kopf-example-2', { field: 'wrong' });
      expect(wrong.code).not.toBe(0);
      expect(wrong.stderr).toContain('admission webhook "validate1.auto.kopf.dev" denied the request: Meh! I don\'t like it. Change the field.');
      expect(cluster.store.get(fx.KEX, 'kopf-example-2', 'default')).toBeUndefined();
      const dry = await create('kopf-example-2', { field: 'wrong' }, ['--dry-run=server']);
      expect(dry.code).toBe(0);
      expect(cluster.store.get(fx.KEX, 'kopf-example-2', 'default')).toBeUndefined();

      // A not-allowed field is rejected by validate2 with its code.
      const lazy = await createThroughApi({ ...fx.kopfExample('kopf-example-3'), spec: { field: 'not-allowed' } });
      expect(lazy.status).toBe(555);
      expect(lazy.body['message']).toBe('admission webhook "validate2.spec.field.auto.kopf.dev" denied the request: I\'m too lazy anyway. Go away!');

      // The status subresource goes only to validate_subresources.
      calls.length = 0;
      await cluster.store.patch(fx.KEX, 'kopf-example-1', { status: { seen: true } }, { namespace: 'default', type: 'merge-patch', subresource: 'status' });
      expect(calls).toEqual(['validate_subresources:status']);

      // Direct requests to the server, as the runtime reference writes them.
      const object = { ...fx.kopfExample('kopf-example-4'), spec: { field: 'wrong' } };
      const rejected = await post(`${url}/validate1`, caBundle, review('U', object));
      expect(rejected).toEqual({
        status: 200,
        body: '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"U","allowed":false,"status":{"message":"Meh! I don\'t like it. Change the field.","code":500}}}',
      });
      const mutated = JSON.parse((await post(`${url}/mutate1`, caBundle, review('M', { ...fx.kopfExample('kopf-example-5'), spec: {} }))).body) as Json;
      expect(mutated['response']).toMatchObject({ uid: 'M', allowed: true, patchType: 'JSONPatch' });
      expect(JSON.parse(Buffer.from(mutated['response']['patch'], 'base64').toString('utf8'))).toEqual([{ op: 'add', path: '/spec/injected', value: 123 }]);
    } finally {
      await operator.stop();
    }

    // A graceful stop empties both configurations and closes the server.
    expect(operator.error).toBeUndefined();
    expect(configuration(VALIDATING)!['webhooks']).toEqual([]);
    expect(configuration(MUTATING)!['webhooks']).toEqual([]);
    expect(server.closed()).toBe(true);
  });

  it('A-21 R-ADMISSION-7/8 with the server down, persistent entries fail requests (failurePolicy Fail) or let them pass (Ignore)', async () => {
    const server = localServer();
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry, id: 'strict', persistent: true, labels: { policy: 'strict' } }, () => undefined);
    on.validate('kopfexamples', { registry, id: 'lenient', persistent: true, ignoreFailures: true, labels: { policy: 'lenient' } }, () => undefined);
    const operator = await fx.startOperator({
      cluster,
      registry,
      waitForWatch: false,
      settings: fx.fastSettings((s) => {
        s.admission.server = server.serve;
        s.admission.managed = 'auto.kopf.dev';
      }),
    });
    await fx.eventually(() => entries(VALIDATING).length === 2, 'the managed configuration');
    await operator.stop();
    expect(server.closed()).toBe(true);
    expect(entries(VALIDATING).map((entry) => [entry['name'], entry['failurePolicy']])).toEqual([
      ['strict.auto.kopf.dev', 'Fail'],
      ['lenient.auto.kopf.dev', 'Ignore'],
    ]);

    const labelled = (name: string, policy: string): Json => fx.kopfExample(name, { metadata: { labels: { policy } } });
    const strict = await createThroughApi(labelled('kopf-strict', 'strict'));
    expect(strict.status).toBe(500);
    expect(strict.body['message']).toMatch(/^Internal error occurred: failed calling webhook "strict.auto.kopf.dev": failed to call webhook: /);
    const lenient = await createThroughApi(labelled('kopf-lenient', 'lenient'));
    expect(lenient.status).toBe(201);
  });

  it('A-21 R-ADMISSION-7 a handler slower than the webhook timeout fails the request (failurePolicy Fail)', async () => {
    const server = localServer();
    const registry = new OperatorRegistry();
    const release = fx.deferred();
    const entered = fx.deferred();
    on.validate('kopfexamples', { registry }, async function slow() {
      entered.resolve();
      await release.promise;
    });
    const operator = await fx.startOperator({
      cluster,
      registry,
      waitForWatch: false,
      settings: fx.fastSettings((s) => {
        s.admission.server = server.serve;
        s.admission.managed = 'auto.kopf.dev';
      }),
    });
    try {
      await fx.eventually(() => entries(VALIDATING).length === 1, 'the managed configuration');
      // The entries always say 30 s (R-ADMISSION-7); the cluster is told 1 s so the test is quick.
      await cluster.store.patch(
        VALIDATING,
        'auto.kopf.dev',
        { webhooks: entries(VALIDATING).map((entry) => ({ ...entry, timeoutSeconds: 1 })) },
        { type: 'merge-patch' },
      );
      const started = Date.now();
      const result = await createThroughApi(fx.kopfExample('kopf-slow'));
      await entered.promise;
      expect(result.status).toBe(500);
      expect(result.body['message']).toMatch(
        /^Internal error occurred: failed calling webhook "slow.auto.kopf.dev": failed to call webhook: .*context deadline exceeded/,
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect(cluster.store.get(fx.KEX, 'kopf-slow', 'default')).toBeUndefined();
    } finally {
      release.resolve();
      await operator.stop();
    }
    expect(operator.error).toBeUndefined();
  });

  it('A-21 R-ADMISSION-8 R-ADMISSION-9 a certificate rotation: the configurations announce the new CA and the cluster keeps calling the webhook over verified TLS', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-rotation-'));
    const files = { certfile: path.join(dir, 'tls.crt'), pkeyfile: path.join(dir, 'tls.key'), cafile: path.join(dir, 'ca.crt') };
    const issue = async (name: string): Promise<string> => {
      const ca = await certs.createCertificateAuthority({ commonName: name });
      const serving = await certs.issueServingCertificate(ca, { hosts: ['localhost', '127.0.0.1'] });
      fs.writeFileSync(files.certfile, serving.certPem);
      fs.writeFileSync(files.pkeyfile, serving.keyPem);
      fs.writeFileSync(files.cafile, ca.certPem);
      return Buffer.from(ca.certPem).toString('base64');
    };
    const firstCa = await issue('first-ca');
    const clock = new VirtualClock({ start: 1_000_000 }); // the server's file checks, every 60 s
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function check({ spec }) {
      if (spec['field'] === 'wrong') throw new errors.AdmissionError('wrong is wrong', 422);
    });
    const server = new WebhookServer({ addr: '127.0.0.1', ...files, clock });
    const operator = await fx.startOperator({
      cluster,
      registry,
      waitForWatch: false,
      settings: fx.fastSettings((s) => {
        s.admission.server = server;
        s.admission.managed = 'auto.kopf.dev';
      }),
    });
    try {
      await fx.eventually(() => entries(VALIDATING)[0]?.['clientConfig']?.['caBundle'] === firstCa, 'the configuration with the first CA');
      const before = await createThroughApi(fx.kopfExample('kopf-before', { spec: { field: 'wrong' } }));
      expect(before.status).toBe(422);
      expect(before.body['message']).toBe('admission webhook "check.auto.kopf.dev" denied the request: wrong is wrong');

      const secondCa = await issue('second-ca');
      await clock.advance(60_000);
      await fx.eventually(() => entries(VALIDATING)[0]?.['clientConfig']?.['caBundle'] === secondCa, 'the configuration with the rotated CA');
      const after = await createThroughApi(fx.kopfExample('kopf-after', { spec: { field: 'wrong' } }));
      expect(after.status, JSON.stringify(after.body)).toBe(422);
      expect(after.body['message']).toBe('admission webhook "check.auto.kopf.dev" denied the request: wrong is wrong');
      expect((await createThroughApi(fx.kopfExample('kopf-fine'))).status).toBe(201);
    } finally {
      await operator.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(operator.error).toBeUndefined();
  });
});
