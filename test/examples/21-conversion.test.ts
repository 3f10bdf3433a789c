/**
 * examples/21-conversion end to end (acceptance scenario A-40): the example's operator, loaded
 * from its file as `kopf-gen run examples/21-conversion/example.ts` loads it and run in-process
 * with `KopfRunner`, serves its converters over HTTPS (`WebhookAutoServer`, its own certificate)
 * and points the Sprocket CRD at them itself (managed mode); the devcluster calls that webhook as
 * kube-apiserver does whenever a client reads, writes or watches a version other than the storage
 * version (v2). The clients are real: kubectl (run asynchronously — the devcluster answers it from
 * this process), the typed client of `kopf-gen/runtime` with the generated v1 and v2 descriptors,
 * and ConversionReviews POSTed straight to the operator, trusting the CA of the CRD's caBundle.
 *
 * The tests share one cluster and one operator and build on each other, in order: managed mode,
 * v1 → v2, v2 → v1, a v1 patch keeping a v2-only field, lists and tables, a watch, the handler,
 * then the failures (a refused digest, reviews with bad input, an unknown version, a converter
 * returning the wrong apiVersion) — after each of which the operator still runs and nothing
 * was stored.
 */
import * as childprocess from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as yaml from 'yaml';

import { connect, type KubeClient, type KubernetesObject, OperatorRegistry, OperatorSettings, on, resource } from 'kopf-gen/runtime';
import type { KopfRunner } from 'kopf-gen/testing';

import { V2_ONLY } from '../../examples/21-conversion/converters.js';
import * as V1 from '../../fixtures/generated/sprockets.conversion.kopf-gen.dev.v1.js';
import * as V2 from '../../fixtures/generated/sprockets.conversion.kopf-gen.dev.v2.js';
import { startTestCluster, type TestCluster } from '../support/cluster.js';
import { requireKubectl } from '../support/kubectl.js';
import { eventually, objectMessages, ROOT, startExample } from './support.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const CRD_FILE = path.join(ROOT, 'fixtures/crds/conversion.yaml');
const CRD_NAME = 'sprockets.conversion.kopf-gen.dev';
const CRDS = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' } as const;
const STORED = { group: 'conversion.kopf-gen.dev', version: 'v2', resource: 'sprockets' } as const;
const INPUTS = path.join(ROOT, 'fixtures/objects/inputs');
const IMAGE_1 = 'registry.example.com:5000/team/sprocket:1.2';
const DIGEST = `app:1.2@sha256:${'0'.repeat(64)}`;
/** The prefix of every message of a failed conversion, as kube-apiserver words it. */
const FAILED = (from: string): string => `conversion webhook for conversion.kopf-gen.dev/${from}, Kind=Sprocket failed: `;

/** A further version of the Sprocket, added to the CRD by the last tests only (v2's schema). */
type SprocketV3 = Omit<V2.Sprocket, 'apiVersion'> & { apiVersion: 'conversion.kopf-gen.dev/v3' };
const V3 = resource<SprocketV3, SprocketV3, unknown, true>({
  group: 'conversion.kopf-gen.dev',
  version: 'v3',
  plural: 'sprockets',
  kind: 'Sprocket',
  namespaced: true,
});

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

describe('examples/21-conversion (A-40)', () => {
  let test: TestCluster;
  let runner: KopfRunner;
  let client: KubeClient;
  const calls: { name: string; kind?: string; ok: boolean }[] = [];

  /** kubectl against the devcluster, asynchronously (the devcluster runs in this process). */
  const kubectl = (...args: string[]): Promise<Ran> =>
    new Promise((resolve) => {
      childprocess.execFile(requireKubectl(), ['--kubeconfig', test.kubeconfig, ...args], { encoding: 'utf8', timeout: 20_000 }, (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
      });
    });
  const kubectlJson = async (...args: string[]): Promise<Json> => {
    const ran = await kubectl(...args, '-o', 'json');
    expect(ran.code, ran.stderr).toBe(0);
    return JSON.parse(ran.stdout) as Json;
  };
  const crd = (): Json => test.cluster.store.get(CRDS, CRD_NAME) as Json;
  /** The object as the devcluster stores it (in v2, the storage version); `null` if absent. */
  const stored = (name: string): Json | null => (test.cluster.store.get(STORED, name, 'default') as Json | undefined) ?? null;
  const conversionCalls = (): number => calls.filter((c) => c.kind === 'conversion').length;
  const input = (name: string): Json => ({ ...(yaml.parse(fs.readFileSync(path.join(INPUTS, name), 'utf8')) as Json) });

  beforeAll(async () => {
    test = await startTestCluster({ tls: false, crds: [CRD_FILE], prefix: 'kopf-example-', onWebhookCall: (call) => calls.push(call) });
    // A converter between v2 and v3 returning the wrong apiVersion, for the last test (v3 is served only then).
    const registry = new OperatorRegistry();
    on.convert(V2.Sprockets, V3, {
      registry,
      forward: (object) => ({ ...object, apiVersion: 'conversion.kopf-gen.dev/v2' }) as unknown as SprocketV3,
      backward: (object) => ({ ...object, apiVersion: 'conversion.kopf-gen.dev/v3' }) as unknown as V2.Sprocket,
    });
    runner = await startExample('21-conversion', test.kubeconfig, { registry });
    // No retries: the failures below are 500s, which the client would otherwise retry for a minute.
    const settings = new OperatorSettings();
    settings.networking.errorBackoffs = [];
    client = await connect({ kubeconfig: test.kubeconfig, settings });
    await eventually(() => crd()['spec']['conversion']?.['webhook']?.['clientConfig']?.['url'] !== undefined, "the operator's conversion settings in the CRD");
  });
  afterAll(async () => {
    await client?.close();
    if (runner !== undefined) {
      await runner.stop();
      expect(runner.exitCode).toBe(0);
    }
    await test?.stop();
  });

  /** POSTs a body to the conversion webhook as the CRD names it, trusting the CRD's caBundle. */
  const review = (body: unknown): Promise<{ status: number; json: Json }> => {
    const { url, caBundle } = crd()['spec']['conversion']['webhook']['clientConfig'] as { url: string; caBundle: string };
    return new Promise((resolve, reject) => {
      const request = https.request(
        url,
        { method: 'POST', ca: Buffer.from(caBundle, 'base64').toString('utf8'), headers: { 'content-type': 'application/json' } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: Json = {};
            try {
              json = JSON.parse(text) as Json;
            } catch {
              json = { text };
            }
            resolve({ status: res.statusCode ?? 0, json });
          });
        },
      );
      request.on('error', reject);
      request.end(typeof body === 'string' ? body : JSON.stringify(body));
    });
  };
  const conversionReview = (uid: string, desiredAPIVersion: string, objects: unknown[]): Json => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: { uid, desiredAPIVersion, objects },
  });

  it('R-CONVERT-208 A-40: managed mode points the CRD at the operator (URL of its conversion path, CA bundle) and says so at INFO', async () => {
    const conversion = crd()['spec']['conversion'] as Json;
    expect(conversion['strategy']).toBe('Webhook');
    expect(conversion['webhook']['conversionReviewVersions']).toEqual(['v1']);
    const clientConfig = conversion['webhook']['clientConfig'] as Json;
    expect(clientConfig['url']).toMatch(/^https:\/\/[^/]+\/convert\/sprockets\.conversion\.kopf-gen\.dev$/);
    expect(clientConfig['service']).toBeUndefined();
    expect(Buffer.from(clientConfig['caBundle'] as string, 'base64').toString('utf8')).toContain('-----BEGIN CERTIFICATE-----');
    const configured = /\[INFO +\] Configured the conversion webhook of the CustomResourceDefinition sprockets\.conversion\.kopf-gen\.dev at https:/;
    await eventually(() => configured.test(runner.output), 'the INFO line of managed mode');
  });

  it('D-CONV-405 D-CONV-408 A-40: written in v1 through kubectl, read in v2 through kubectl and the typed client; stored in v2', async () => {
    const created = await kubectl('create', '-n', 'default', '-f', path.join(INPUTS, 'sprocket-v1.yaml'));
    expect(created.code, created.stderr).toBe(0);
    const expected = { replicas: 3, image: { repository: 'registry.example.com:5000/team/sprocket', tag: '1.2' }, colour: 'blue' };

    const viaKubectl = await kubectlJson('get', '-n', 'default', 'sprockets.v2.conversion.kopf-gen.dev/sprocket-1');
    expect(viaKubectl['apiVersion']).toBe('conversion.kopf-gen.dev/v2');
    expect(viaKubectl['spec']).toEqual(expected);
    expect(viaKubectl['metadata']['annotations']['example.com/owner']).toBe('team-a');

    const viaClient = await client.get(V2.Sprockets, 'sprocket-1', { namespace: 'default' });
    expect(viaClient.apiVersion).toBe('conversion.kopf-gen.dev/v2');
    expect(viaClient.spec).toEqual(expected);
    const inV1 = await client.get(V1.Sprockets, 'sprocket-1', { namespace: 'default' });
    expect(inV1.apiVersion).toBe('conversion.kopf-gen.dev/v1');
    expect(inV1.spec).toEqual({ size: 3, image: IMAGE_1, colour: 'blue' });

    expect(stored('sprocket-1')?.['apiVersion']).toBe('conversion.kopf-gen.dev/v2');
    expect(stored('sprocket-1')?.['spec']).toEqual(expected);
  });

  it('D-CONV-403 D-CONV-408 A-40: written in v2 through the typed client, read in v1 (paused kept in the annotation) and in v2 again (no annotation)', async () => {
    const created = await client.create(V2.Sprockets, input('sprocket-v2.yaml') as V2.SprocketInput, { namespace: 'default' });
    expect(created.spec).toEqual({ replicas: 2, image: { repository: 'sprocket' }, paused: true });

    const viaKubectl = await kubectlJson('get', '-n', 'default', 'sprockets.v1.conversion.kopf-gen.dev/sprocket-2');
    expect(viaKubectl['apiVersion']).toBe('conversion.kopf-gen.dev/v1');
    expect(viaKubectl['spec']).toEqual({ size: 2, image: 'sprocket' });
    expect(viaKubectl['metadata']['annotations'][V2_ONLY]).toBe('{"paused":true}');
    const viaClient = await client.get(V1.Sprockets, 'sprocket-2', { namespace: 'default' });
    expect(viaClient.spec).toEqual({ size: 2, image: 'sprocket' });
    expect(viaClient.metadata?.annotations?.[V2_ONLY]).toBe('{"paused":true}');

    const back = await kubectlJson('get', '-n', 'default', 'sprockets.v2.conversion.kopf-gen.dev/sprocket-2');
    expect(back['spec']).toEqual({ replicas: 2, image: { repository: 'sprocket' }, paused: true });
    expect(back['metadata']['annotations']?.[V2_ONLY]).toBeUndefined();
    expect(stored('sprocket-2')?.['metadata']['annotations']?.[V2_ONLY]).toBeUndefined();
  });

  it("D-CONV-405 A-40: a v1 client's merge patch keeps the v2-only field", async () => {
    const patched = await kubectl('patch', '-n', 'default', 'sprockets.v1.conversion.kopf-gen.dev/sprocket-2', '--type', 'merge', '-p', '{"spec":{"size":5}}');
    expect(patched.code, patched.stderr).toBe(0);
    expect(stored('sprocket-2')?.['spec']).toEqual({ replicas: 5, image: { repository: 'sprocket' }, paused: true });
    expect(stored('sprocket-2')?.['metadata']['annotations']?.[V2_ONLY]).toBeUndefined();
    const viaClient = await client.get(V1.Sprockets, 'sprocket-2', { namespace: 'default' });
    expect(viaClient.spec.size).toBe(5);
  });

  it('D-CONV-404 D-CONV-407 A-40: objects written in either version list in each, converted with one review per list, and print the v1 columns', async () => {
    const before = conversionCalls();
    const inV1 = await kubectlJson('get', '-n', 'default', 'sprockets.v1.conversion.kopf-gen.dev');
    expect(conversionCalls() - before).toBe(1);
    expect((inV1['items'] as Json[]).map((item) => [item['apiVersion'], item['metadata']['name'], item['spec']])).toEqual([
      ['conversion.kopf-gen.dev/v1', 'sprocket-1', { size: 3, image: IMAGE_1, colour: 'blue' }],
      ['conversion.kopf-gen.dev/v1', 'sprocket-2', { size: 5, image: 'sprocket' }],
    ]);
    const listed = await client.list(V1.Sprockets, { namespace: 'default' });
    expect(listed.items.map((item) => item.spec.size)).toEqual([3, 5]);
    const inV2 = await client.list(V2.Sprockets, { namespace: 'default' });
    expect(inV2.items.map((item) => item.spec.replicas)).toEqual([3, 5]);

    const table = await kubectl('get', '-n', 'default', 'sprockets.v1.conversion.kopf-gen.dev');
    expect(table.code, table.stderr).toBe(0);
    const rows = table.stdout
      .trim()
      .split('\n')
      .map((line) => line.split(/\s+/).slice(0, 3));
    expect(rows).toEqual([
      ['NAME', 'SIZE', 'IMAGE'],
      ['sprocket-1', '3', IMAGE_1],
      ['sprocket-2', '5', 'sprocket'],
    ]);
  });

  it('D-CONV-406 A-40: a watch in v1 sees the ADDED and MODIFIED events of an object written in v2, converted', async () => {
    const { resourceVersion } = await client.list(V1.Sprockets, { namespace: 'default' });
    const abort = new AbortController();
    const events: { type: string; object: V1.Sprocket }[] = [];
    const watching = (async () => {
      try {
        for await (const event of client.watch(V1.Sprockets, { namespace: 'default', resourceVersion, signal: abort.signal })) {
          events.push(event);
        }
      } catch (error) {
        if (!abort.signal.aborted) throw error;
      }
    })();
    try {
      await client.create(V2.Sprockets, { ...(input('sprocket-v2.yaml') as V2.Sprocket), metadata: { name: 'sprocket-3' } }, { namespace: 'default' });
      await client.patch(V2.Sprockets, 'sprocket-3', { spec: { replicas: 4 } }, { namespace: 'default' });
      const mine = (): { type: string; object: V1.Sprocket }[] => events.filter((e) => e.object.metadata?.name === 'sprocket-3');
      await eventually(() => mine().some((e) => e.type === 'MODIFIED' && e.object.spec.size === 4), 'the converted MODIFIED event');
      expect(mine()[0]!.type).toBe('ADDED');
      expect(mine()[0]!.object.spec).toEqual({ size: 2, image: 'sprocket' });
      for (const event of mine()) {
        expect(event.object.apiVersion).toBe('conversion.kopf-gen.dev/v1');
        expect(event.object.metadata?.annotations?.[V2_ONLY]).toBe('{"paused":true}');
        expect(event.object.spec).not.toHaveProperty('replicas');
      }
    } finally {
      abort.abort();
      await watching;
    }
  });

  it('R-CONVERT-203 A-40: the v2 handler ran for the object created in v1, and its status reads the same in both versions', async () => {
    await eventually(() => objectMessages(runner, 'default/sprocket-1').includes("Handler 'rollout' succeeded."), 'the handler of sprocket-1');
    expect(objectMessages(runner, 'default/sprocket-1')).toContain(`Rolling out 3 × ${IMAGE_1}.`);
    await eventually(() => stored('sprocket-1')?.['status']?.['rollout'] !== undefined, 'the status of sprocket-1');
    const rollout = { replicas: 3, image: IMAGE_1, paused: false };
    expect((await client.get(V2.Sprockets, 'sprocket-1', { namespace: 'default' })).status).toEqual({ rollout });
    expect((await client.get(V1.Sprockets, 'sprocket-1', { namespace: 'default' })).status).toEqual({ rollout });
  });

  it('D-CONV-401 D-CONV-404 D-CRD-501 A-40: with objects stored in both versions (the storage version moved), a list converts only the others, in one review; the operator watches on with the new settings', async () => {
    const storage = (v1: boolean): Promise<unknown> =>
      test.cluster.store.patch(
        CRDS,
        CRD_NAME,
        [
          { op: 'replace', path: '/spec/versions/0/storage', value: v1 },
          { op: 'replace', path: '/spec/versions/1/storage', value: !v1 },
        ],
        { type: 'json-patch' },
      );
    const converted = (): string[] => runner.output.split('\n').filter((line) => line.includes('Converted ') && line.includes(' object(s) of sprockets.'));
    await storage(true);
    try {
      const old = path.join(test.dir, 'sprocket-old.yaml');
      fs.writeFileSync(old, yaml.stringify({ ...input('sprocket-v1.yaml'), metadata: { name: 'sprocket-old' }, spec: { size: 7, image: 'old:1' } }));
      const created = await kubectl('create', '-n', 'default', '-f', old);
      expect(created.code, created.stderr).toBe(0);
      const inV1 = { group: 'conversion.kopf-gen.dev', version: 'v1', resource: 'sprockets' } as const;
      expect(test.cluster.store.get(inV1, 'sprocket-old', 'default')?.['apiVersion']).toBe('conversion.kopf-gen.dev/v1'); // stored as written
      await eventually(
        () => objectMessages(runner, 'default/sprocket-old').includes('Handling cycle is finished, waiting for new changes.'),
        'the handling of sprocket-old',
      );

      const before = { calls: conversionCalls(), lines: converted().length };
      const inV2 = await kubectlJson('get', '-n', 'default', 'sprockets.v2.conversion.kopf-gen.dev');
      expect((inV2['items'] as Json[]).map((item) => [item['apiVersion'], item['metadata']['name'], item['spec']['replicas']])).toEqual([
        ['conversion.kopf-gen.dev/v2', 'sprocket-1', 3],
        ['conversion.kopf-gen.dev/v2', 'sprocket-2', 5],
        ['conversion.kopf-gen.dev/v2', 'sprocket-3', 4],
        ['conversion.kopf-gen.dev/v2', 'sprocket-old', 7],
      ]);
      expect(conversionCalls() - before.calls).toBe(1);
      await eventually(() => converted().length > before.lines, "the operator's log of the review");
      expect(converted().slice(before.lines)).toEqual([
        expect.stringContaining('Converted 1 object(s) of sprockets.conversion.kopf-gen.dev to conversion.kopf-gen.dev/v2.'),
      ]);

      const again = { calls: conversionCalls(), lines: converted().length };
      const listedV1 = await client.list(V1.Sprockets, { namespace: 'default' });
      expect(listedV1.items.map((item) => item.spec.size)).toEqual([3, 5, 4, 7]);
      expect(conversionCalls() - again.calls).toBe(1);
      await eventually(() => converted().length > again.lines, "the operator's log of the review");
      expect(converted().slice(again.lines)).toEqual([
        expect.stringContaining('Converted 3 object(s) of sprockets.conversion.kopf-gen.dev to conversion.kopf-gen.dev/v1.'),
      ]);
    } finally {
      await storage(false);
      const deleted = await kubectl('delete', '-n', 'default', 'sprockets.v1.conversion.kopf-gen.dev/sprocket-old', '--ignore-not-found');
      expect(deleted.code, deleted.stderr).toBe(0);
    }
    expect(stored('sprocket-old')).toBeNull();
  });

  it('R-CONVERT-204 D-CONV-402 D-CONV-405 A-40: a digest the converter refuses fails the write with its message, stores nothing, and the operator runs on', async () => {
    const bad = path.join(test.dir, 'sprocket-digest.yaml');
    fs.writeFileSync(bad, yaml.stringify({ ...input('sprocket-v1.yaml'), metadata: { name: 'sprocket-digest' }, spec: { size: 1, image: DIGEST } }));
    const created = await kubectl('create', '-n', 'default', '-f', bad);
    expect(created.code).not.toBe(0);
    expect(created.stderr).toContain(`Internal error occurred: ${FAILED('v1')}`);
    expect(created.stderr).toContain(`spec.image: v2 has no place for the digest of "${DIGEST}"`);
    expect(stored('sprocket-digest')).toBeNull();
    await expect(client.get(V2.Sprockets, 'sprocket-digest', { namespace: 'default' })).rejects.toMatchObject({ status: 404 });

    // An update of an existing object, through the typed client: refused alike, the stored object unchanged.
    const before = stored('sprocket-1')!;
    const failure = await client.patch(V1.Sprockets, 'sprocket-1', { spec: { image: DIGEST } }, { namespace: 'default' }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ status: 500 });
    expect((failure as Error).message).toContain(FAILED('v1'));
    expect((failure as Error).message).toContain('Cannot convert Sprocket default/sprocket-1');
    expect(stored('sprocket-1')).toEqual(before);

    // Still serving: the next write in v1 converts and is handled.
    expect(runner.exitCode).toBeNull();
    const next = path.join(test.dir, 'sprocket-4.yaml');
    fs.writeFileSync(next, yaml.stringify({ ...input('sprocket-v1.yaml'), metadata: { name: 'sprocket-4' }, spec: { size: 1, image: 'app:2' } }));
    const created4 = await kubectl('create', '-n', 'default', '-f', next);
    expect(created4.code, created4.stderr).toBe(0);
    await eventually(() => objectMessages(runner, 'default/sprocket-4').includes('Rolling out 1 × app:2.'), 'the handler of sprocket-4');
  });

  it('R-CONVERT-203 R-CONVERT-204 A-40: reviews POSTed to the operator with bad input fail (malformed object, unknown version, a refused value) and it runs on', async () => {
    const v1: Json = { ...input('sprocket-v1.yaml'), metadata: { name: 'sprocket-x', namespace: 'default', uid: 'uid-x' } };

    const good = await review(conversionReview('uid-0', 'conversion.kopf-gen.dev/v2', [v1]));
    expect(good.status).toBe(200);
    expect(good.json['response']).toMatchObject({ uid: 'uid-0', result: { status: 'Success' } });
    expect(good.json['response']['convertedObjects'][0]['spec']['replicas']).toBe(3);

    const malformed = await review(conversionReview('uid-1', 'conversion.kopf-gen.dev/v2', [v1, 'not an object']));
    expect(malformed.status).toBe(200);
    expect(malformed.json['response']['uid']).toBe('uid-1');
    expect(malformed.json['response']['result']['status']).toBe('Failure');
    expect(malformed.json['response']['result']['message']).toContain('the object is string, not an object');
    expect(malformed.json['response']['convertedObjects'] ?? []).toEqual([]);

    const noKind = await review(conversionReview('uid-2', 'conversion.kopf-gen.dev/v2', [{ ...v1, kind: undefined }]));
    expect(noKind.json['response']['result']).toMatchObject({ status: 'Failure' });
    expect(noKind.json['response']['result']['message']).toContain('its kind is missing, expected Sprocket');

    const unknownDesired = await review(conversionReview('uid-3', 'conversion.kopf-gen.dev/v9', [v1]));
    expect(unknownDesired.json['response']['result']['status']).toBe('Failure');
    expect(unknownDesired.json['response']['result']['message']).toContain('default/sprocket-x');
    expect(unknownDesired.json['response']['result']['message']).toContain('no conversion leads from v1 to v9');

    const unknownSource = await review(conversionReview('uid-4', 'conversion.kopf-gen.dev/v2', [{ ...v1, apiVersion: 'conversion.kopf-gen.dev/v0' }]));
    expect(unknownSource.json['response']['result']['message']).toContain('no conversion leads from v0 to v2');

    const refused = await review(conversionReview('uid-5', 'conversion.kopf-gen.dev/v2', [{ ...v1, spec: { size: 1, image: DIGEST } }]));
    expect(refused.json['response']['result']['status']).toBe('Failure');
    expect(refused.json['response']['result']['message']).toContain("the converter 'v1-v2' (v1 → v2) failed");
    expect(refused.json['response']['result']['message']).toContain('v2 has no place for the digest');

    const notAReview = await review('{"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"}');
    expect(notAReview.status).toBe(400);
    const notJson = await review('{');
    expect(notJson.status).toBe(400);

    expect(runner.exitCode).toBeNull();
    const after = await review(conversionReview('uid-6', 'conversion.kopf-gen.dev/v1', [good.json['response']['convertedObjects'][0]]));
    expect(after.json['response']['result']).toEqual({ status: 'Success' });
    expect(after.json['response']['convertedObjects'][0]['spec']).toEqual(v1['spec']);
  });

  it('D-CONV-402 D-CONV-405 A-40: through the devcluster, a version without converters and a converter returning the wrong apiVersion fail with the Failure message; nothing is stored', async () => {
    const served = (name: string): Json => ({ ...(crd()['spec']['versions'] as Json[])[1], name, storage: false });
    await test.cluster.store.patch(
      CRDS,
      CRD_NAME,
      [
        { op: 'add', path: '/spec/versions/-', value: served('v3') },
        { op: 'add', path: '/spec/versions/-', value: served('v4') },
      ],
      { type: 'json-patch' },
    );
    await eventually(
      async () => (await kubectl('get', '-n', 'default', 'sprockets.v4.conversion.kopf-gen.dev')).stderr.includes('Internal error'),
      'the v4 version served',
    );

    const unknown = await kubectl('get', '-n', 'default', 'sprockets.v4.conversion.kopf-gen.dev/sprocket-1', '-o', 'json');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain(FAILED('v2'));
    expect(unknown.stderr).toContain('no conversion leads from v2 to v4 (the conversions know v2, v3, v1)');

    const wrong = await kubectl('get', '-n', 'default', 'sprockets.v3.conversion.kopf-gen.dev/sprocket-1', '-o', 'json');
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain(FAILED('v2'));
    expect(wrong.stderr).toContain('the converter returned apiVersion "conversion.kopf-gen.dev/v2", expected "conversion.kopf-gen.dev/v3"');

    const failure = await client
      .create(
        V3,
        { ...(input('sprocket-v2.yaml') as SprocketV3), apiVersion: 'conversion.kopf-gen.dev/v3', metadata: { name: 'sprocket-v3' } },
        {
          namespace: 'default',
        },
      )
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ status: 500 });
    expect((failure as Error).message).toContain(FAILED('v3'));
    expect((failure as Error).message).toContain('the converter returned apiVersion "conversion.kopf-gen.dev/v3", expected "conversion.kopf-gen.dev/v2"');
    expect(stored('sprocket-v3')).toBeNull();

    expect(runner.exitCode).toBeNull();
    const still = await client.get(V1.Sprockets, 'sprocket-1', { namespace: 'default' });
    expect(still.spec.size).toBe(3);
    expect((await test.cluster.store.list(STORED, 'default')).map((object) => (object as KubernetesObject).metadata?.name)).toEqual([
      'sprocket-1',
      'sprocket-2',
      'sprocket-3',
      'sprocket-4',
    ]);
  });
});
