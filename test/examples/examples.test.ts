/**
 * The examples in examples/ (TypeScript versions of Kopf's 13-hooks, 14-daemons, 15-timers, 16-indexing and 17-admission)
 * do what their READMEs say: each runs in-process with `KopfRunner` from `kopf-gen/testing`,
 * loaded from its file as `kopf-gen run examples/…/example.ts` loads it, against a devcluster with
 * the reference CRD, on a `VirtualClock` — so seconds of the examples' schedules pass in
 * milliseconds and land on exact virtual times.
 *
 * Scenarios: A-23 (startup, login, probes, cleanup), A-14 (daemons), A-17 (timers with idling),
 * A-20 (indices read by a timer), A-21 (admission webhooks served by the built-in auto-detecting server
 * over HTTPS, configured by the operator, and called by the devcluster as an API server calls them).
 */
import * as path from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { OperatorRegistry } from 'kopf-gen/runtime';
import { type DevCluster, KopfRunner, VirtualClock } from 'kopf-gen/testing';

import { CRD, eventually, KEX, ROOT } from './support.js';
import { startTestCluster, type TestCluster } from '../support/cluster.js';

const PODS = { group: '', version: 'v1', resource: 'pods' } as const;
const FINALIZER = 'kopf.zalando.org/KopfFinalizerMarker';

type Json = Record<string, unknown>;

/** The reference object of the examples (fixtures/objects/kopf-example-1.yaml). */
function kopfExample(spec: Json = {}): Json {
  return {
    apiVersion: 'kopf.dev/v1',
    kind: 'KopfExample',
    metadata: { name: 'kopf-example-1', namespace: 'default', labels: { somelabel: 'somevalue' }, annotations: { someannotation: 'somevalue' } },
    spec: { duration: '1m', field: 'value', items: ['item1', 'item2'], ...spec },
  };
}

describe('examples', () => {
  let cluster: DevCluster;
  let test: TestCluster | undefined;
  let runner: KopfRunner | undefined;

  const stored = (): Json | undefined => cluster.store.get(KEX, 'kopf-example-1', 'default');
  const finalizers = (): unknown => (stored()?.['metadata'] as { finalizers?: unknown } | undefined)?.finalizers;
  /** Log messages of the object, in order, without the `[default/kopf-example-1] ` prefix. */
  const messages = (): string[] =>
    (runner?.output ?? '')
      .split('\n')
      .map((line) => /\[default\/kopf-example-1\] (.*)$/.exec(line)?.[1])
      .filter((m): m is string => m !== undefined);
  const count = (text: string): number => messages().filter((m) => m.includes(text)).length;
  /** The status merge-patches the operator sent for the object, in order. */
  const statusPatches = (): Json[] =>
    cluster.requests
      .filter((r) => r.verb === 'patch' && r.resource === 'kopfexamples' && r.subresource === 'status' && r.name === 'kopf-example-1')
      .map((r) => (JSON.parse(r.body!) as { status: Json }).status);

  async function start(example: string, clock: VirtualClock, flags: readonly string[] = []): Promise<KopfRunner> {
    const file = path.join(ROOT, 'examples', example, 'example.ts');
    runner = new KopfRunner(['run', '-A', '--standalone', '--verbose', ...flags, file], { registry: new OperatorRegistry(), clock, timeout: 10 });
    await runner.start();
    return runner;
  }

  /** All logged lines of the runner (any object or none) containing a text. */
  const grep = (text: string): string[] => (runner?.output ?? '').split('\n').filter((line) => line.includes(text));

  beforeAll(async () => {
    test = await startTestCluster({ tls: false, crds: [CRD], exportKubeconfig: true, prefix: 'kopf-examples-' });
    cluster = test.cluster;
  });
  afterEach(async () => {
    if (runner?.exitCode === null) await runner.stop();
    runner = undefined;
    cluster.requests.clear();
    if (stored()) {
      await cluster.store.patch(KEX, 'kopf-example-1', { metadata: { finalizers: null } }, { namespace: 'default', type: 'merge-patch' });
      if (stored()) await cluster.store.delete(KEX, 'kopf-example-1', { namespace: 'default' });
    }
  });
  afterAll(async () => {
    await test?.stop();
  });

  it('A-23 13-hooks: startup retried before any API call, logins and re-logins, probes via the liveness endpoint, cleanup once', async () => {
    await cluster.store.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'hooked-pod', namespace: 'default' },
      spec: { containers: [{ name: 'main', image: 'busybox' }] },
    });
    cluster.requests.clear();
    const clock = new VirtualClock({ start: Date.parse('2030-01-01T00:00:00Z') });
    const starting = start('13-hooks', clock, ['--liveness=http://127.0.0.1:0/healthz']);

    // The retried startup handler fails 3 times, 1 second apart; nothing talks to the cluster meanwhile.
    for (const left of [3, 2, 1]) {
      await eventually(() => grep(`Activity 'startup_fn_retried' failed temporarily: Going to succeed in ${left}s`).length === 1, `the failure with ${left}s`);
      expect(cluster.requests.all).toEqual([]);
      await clock.advance(1_000);
    }
    await starting;
    expect(grep("Activity 'startup_fn_retried' succeeded.")).toHaveLength(1);
    expect(grep("Activity 'startup_fn_simple' succeeded.")).toHaveLength(1);
    await eventually(() => grep('Initial authentication has finished.').length === 1, 'the initial login');
    expect(grep('Initial authentication has been initiated.')).toHaveLength(1);

    // Probes through the liveness endpoint, once the pod has its background task.
    await eventually(() => grep('Serving the liveness endpoint at ').length === 1, 'the liveness endpoint');
    const url = /Serving the liveness endpoint at (http:\S+)/.exec(grep('Serving the liveness endpoint at ')[0]!)![1]!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/healthz$/);
    await eventually(() => grep("[default/hooked-pod] Handler 'pod_task' succeeded.").length === 1, 'the pod task');
    const probe = async (): Promise<unknown> => {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      return await response.json();
    };
    const expected = { tasks_count: 1, monitored_objects: { default: ['hooked-pod'] } };
    expect(await probe()).toEqual(expected);
    expect(await probe()).toEqual(expected);
    expect(grep("Activity 'tasks_count' succeeded.")).toHaveLength(1); // cached for 10 seconds
    await clock.advance(10_000);
    expect(await probe()).toEqual(expected);
    expect(grep("Activity 'tasks_count' succeeded.")).toHaveLength(2);
    expect(grep("Activity 'monitored_objects' succeeded.")).toHaveLength(2);

    // The credentials expire 30 seconds after the login: the operator logs in again.
    expect(grep("Activity 'login_fn' succeeded.")).toHaveLength(1);
    await clock.advance(20_000);
    await eventually(() => grep('Re-authentication has finished.').length === 1, 'the re-login');
    expect(grep('Re-authentication has been initiated.')).toHaveLength(1);
    expect(grep("Activity 'login_fn' succeeded.")).toHaveLength(2);

    // On stop: the cleanup runs once, after the watchers stopped, and stops the pod tasks.
    await runner!.stop();
    expect(runner!.exitCode).toBe(0);
    const lines = runner!.output.split('\n');
    const at = (text: string): number => lines.findIndex((line) => line.includes(text));
    expect(grep("Activity 'cleanup_fn' succeeded.")).toHaveLength(1);
    expect(at('Stopping the watch-stream for pods.v1 cluster-wide.')).toBeGreaterThan(-1);
    expect(at('Stopping the watch-stream for pods.v1 cluster-wide.')).toBeLessThan(at('Cleaning up...'));
    await eventually(() => grep('[default/hooked-pod] Serving is finished by request.').length === 1, 'the pod task to stop');
    await cluster.store.delete(PODS, 'hooked-pod', { namespace: 'default', gracePeriodSeconds: 0 });
  });

  it('A-14 14-daemons: retries in memory, pings, and on deletion both daemons stop before the finalizer goes', async () => {
    const clock = new VirtualClock({ start: Date.parse('2030-01-01T00:00:00Z') });
    await start('14-daemons', clock);
    await cluster.store.create(kopfExample());

    // The first attempts fail at once; the finalizer is added in the same (first) cycle.
    await eventually(() => count("Daemon 'background_async' failed temporarily: Simulated failure.") === 1, 'the first failures');
    await eventually(() => statusPatches().length === 1, 'the first status patch');
    expect(finalizers()).toEqual([FINALIZER]);

    // Three failures 1 second apart, each attempt's patch applied right after it; then the pings.
    await clock.advance(3_000);
    await eventually(() => count('=> Ping from an async daemon: field="value"') === 1, 'the async ping');
    expect(statusPatches().map((s) => s['message'])).toEqual(['Failed 1 times.', 'Failed 2 times.', 'Failed 3 times.']);
    expect(count("Daemon 'background_sync' failed temporarily: Simulated failure.")).toBe(3);
    expect(count("Daemon 'background_async' failed temporarily: Simulated failure.")).toBe(3);
    expect(count('=> Ping from a sync daemon: field="value", retry=3')).toBe(1);

    // The cooperative daemon pings every 5 seconds (on the operator's clock: stopped.wait(5)).
    await clock.advance(10_000);
    expect(count('=> Ping from a sync daemon: field="value", retry=3')).toBe(3);

    // Deletion: both get the stop flag; the cooperative one exits at once (its last patch is
    // applied), the other one is signalled gracefully, forced after 1 s, and cancelled.
    await cluster.store.delete(KEX, 'kopf-example-1', { namespace: 'default' });
    await eventually(() => count("Daemon 'background_async' is signalled to exit gracefully.") === 1, 'the graceful stage');
    await eventually(() => count("Daemon 'background_sync' has exited on request and will not be retried or restarted.") === 1, 'the cooperative exit');
    expect(stored()).toBeDefined(); // held by the finalizer while a daemon runs
    await clock.advance(1_000);
    await eventually(() => stored() === undefined, 'the object to disappear');

    const log = messages();
    const at = (text: string): number => log.findIndex((m) => m.includes(text));
    expect(at("Daemon 'background_async' is signalled to exit gracefully.")).toBeLessThan(at("Daemon 'background_async' is signalled to exit by force."));
    expect(at("Daemon 'background_async' is signalled to exit by force.")).toBeLessThan(at("Daemon 'background_async' is cancelled. Will escalate."));
    expect(at("Daemon 'background_async' is cancelled. Will escalate.")).toBeLessThan(at('Removing the finalizer, thus allowing the actual deletion.'));
    expect(at("Daemon 'background_sync' has exited on request")).toBeLessThan(at('Removing the finalizer, thus allowing the actual deletion.'));
    expect(statusPatches().at(-1)).toEqual({ message: 'Accompanying is finished.' });

    await runner!.stop();
    expect(runner!.exitCode).toBe(0);
    expect(runner!.exception).toBeNull();
  });

  it('A-17 15-timers: pings only after the object idles, then every interval; a change restarts the idle period', async () => {
    const clock = new VirtualClock({ start: Date.parse('2030-01-01T00:00:00Z') });
    await start('15-timers', clock);
    await cluster.store.create(kopfExample());
    await eventually(() => Array.isArray(finalizers()), 'the finalizer'); // the last event of the creation
    await clock.advance(0); // let the operator take that event before time moves

    // Second by second: when did each timer ping (in virtual seconds since the creation)?
    const sync: number[] = [];
    const async: number[] = [];
    const run = async (from: number, to: number, field: string): Promise<void> => {
      for (let second = from; second <= to; second += 1) {
        const [s, a] = [count(`Ping from a sync timer: field="${field}"`), count(`Ping from an async timer: field="${field}"`)];
        await clock.advance(1_000);
        for (let i = count(`Ping from a sync timer: field="${field}"`); i > s; i -= 1) sync.push(second);
        for (let i = count(`Ping from an async timer: field="${field}"`); i > a; i -= 1) async.push(second);
      }
    };
    await run(1, 20, 'value');
    expect(sync).toEqual([5, 7, 9, 11, 13, 15, 17, 19]);
    expect(async).toEqual([10, 14, 18]);

    // A change at t = 20 s: silence for 5 s (sync) and 10 s (async), then pings with the new value.
    sync.length = 0;
    async.length = 0;
    await cluster.store.patch(KEX, 'kopf-example-1', { spec: { field: 'other' } }, { namespace: 'default', type: 'merge-patch' });
    await clock.advance(0);
    await run(21, 35, 'other');
    expect(sync).toEqual([25, 27, 29, 31, 33, 35]);
    expect(async).toEqual([30, 34]);
    expect(count('field="value"')).toBe(8 + 3);

    // After deletion: no more pings; the finalizer goes and the object disappears.
    await cluster.store.delete(KEX, 'kopf-example-1', { namespace: 'default' });
    await eventually(() => stored() === undefined, 'the object to disappear');
    const pings = count('Ping from');
    await clock.advance(60_000);
    expect(count('Ping from')).toBe(pings);

    await runner!.stop();
    expect(runner!.exitCode).toBe(0);
  });
  it('A-20 16-indexing: the timer reads pods from the indices (keys by value), only after all listed pods are indexed', async () => {
    const pod = async (namespace: string, name: string, phase: string, labels: Record<string, string>): Promise<void> => {
      await cluster.store.create({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace, labels },
        spec: { containers: [{ name: 'main', image: 'busybox' }] },
      });
      await cluster.store.patch(PODS, name, { status: { phase } }, { namespace, type: 'merge-patch', subresource: 'status' });
    };
    await pod('default', 'web-1', 'Running', { app: 'web', somelabel: 'somevalue' });
    await pod('default', 'web-2', 'Pending', { app: 'web' });
    await pod('kube-system', 'dns-1', 'Running', { app: 'dns' });
    await cluster.store.create(kopfExample());
    // The pods are listed slowly: without the readiness barrier, the timer would run first.
    cluster.faults.add({ resource: 'pods', verb: 'list', times: 1, action: { delay: { beforeMs: 300 } } });

    const clock = new VirtualClock({ start: Date.parse('2030-01-01T00:00:00Z') });
    await start('16-indexing', clock);
    await eventually(() => statusPatches().length === 1, 'the first tick');
    expect(statusPatches()[0]).toEqual({ 'running-pods': ['default::web-1', 'kube-system::dns-1'], 'labelled-pods': ['web-1'] });
    expect(count('Pods by label: app=web: web-1, web-2; somelabel=somevalue: web-1; app=dns: dns-1')).toBe(1);

    // Pods change: the indices follow the watch-events; the next tick (5 s later) sees it.
    await cluster.store.patch(PODS, 'web-2', { metadata: { labels: { somelabel: 'somevalue' } } }, { namespace: 'default', type: 'merge-patch' });
    await cluster.store.patch(PODS, 'web-2', { status: { phase: 'Running' } }, { namespace: 'default', type: 'merge-patch', subresource: 'status' });
    await cluster.store.delete(PODS, 'dns-1', { namespace: 'kube-system', gracePeriodSeconds: 0 });
    await eventually(() => cluster.store.get(PODS, 'dns-1', 'kube-system') === undefined, 'the pod to disappear');
    await clock.advance(0);
    await clock.advance(5_000);
    await eventually(() => statusPatches().length === 2, 'the second tick');
    expect(statusPatches()[1]).toEqual({ 'running-pods': ['default::web-1', 'default::web-2'], 'labelled-pods': ['web-1', 'web-2'] });
    expect(count('Pods by label: app=web: web-1, web-2; somelabel=somevalue: web-1, web-2')).toBe(1);

    await runner!.stop();
    expect(runner!.exitCode).toBe(0);
    for (const name of ['web-1', 'web-2']) await cluster.store.delete(PODS, name, { namespace: 'default', gracePeriodSeconds: 0 });
  });
  it('A-21 17-admission: managed configurations, warnings, denials (also by code), dry runs, a mutation, the status subresource, direct reviews, emptied on stop', async () => {
    const clock = new VirtualClock({ start: Date.parse('2030-01-01T00:00:00Z') });
    await start('17-admission', clock);
    const VALIDATING = { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations' } as const;
    const MUTATING = { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'mutatingwebhookconfigurations' } as const;
    type Hook = {
      name: string;
      clientConfig: { url: string; caBundle: string };
      rules: Array<{ resources: string[] }>;
      failurePolicy: string;
      sideEffects: string;
      matchPolicy: string;
      timeoutSeconds: number;
      admissionReviewVersions: string[];
      objectSelector?: unknown;
    };
    const hooks = (which: typeof VALIDATING | typeof MUTATING): Hook[] =>
      (cluster.store.get(which, 'auto.kopf.dev') as { webhooks?: Hook[] } | undefined)?.webhooks ?? [];
    await eventually(() => hooks(VALIDATING).length === 4 && hooks(MUTATING).length === 1, 'the managed webhook configurations');

    const validating = hooks(VALIDATING);
    expect(validating.map((h) => h.name).sort()).toEqual([
      'authhook.auto.kopf.dev',
      'validate-subresources.auto.kopf.dev',
      'validate1.auto.kopf.dev',
      'validate2.spec.field.auto.kopf.dev',
    ]);
    const base = validating[0]!.clientConfig.url.replace(/\/[^/]+(\/spec\.field)?$/, '');
    expect(base).toMatch(/^https:\/\//);
    expect(validating.map((h) => h.clientConfig.url.slice(base.length)).sort()).toEqual([
      '/authhook',
      '/validate1',
      '/validate2/spec.field',
      '/validate_subresources',
    ]);
    for (const hook of validating) {
      expect(hook).toMatchObject({
        failurePolicy: 'Fail',
        sideEffects: 'None',
        matchPolicy: 'Equivalent',
        timeoutSeconds: 30,
        admissionReviewVersions: ['v1', 'v1beta1'],
      });
      expect(hook.rules[0]!.resources).toEqual(hook.name.startsWith('validate-subresources') ? ['kopfexamples/*'] : ['kopfexamples']);
    }
    const [mutating] = hooks(MUTATING);
    expect(mutating!.name).toBe('mutate1.auto.kopf.dev');
    expect(mutating!.objectSelector).toEqual({ matchExpressions: [{ key: 'somelabel', operator: 'In', values: ['somevalue'] }] });

    // Through the devcluster's API as kubectl calls it: the webhooks run on every write.
    const api = async (
      method: string,
      url: string,
      body?: unknown,
      contentType = 'application/json',
    ): Promise<{ status: number; json: Json; warnings: string[] }> => {
      const response = await fetch(`${cluster.url}${url}`, {
        method,
        headers: { 'content-type': contentType },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const warnings = (response.headers.get('warning') ?? '')
        .split(/,(?=\s*299 )/)
        .map((w) => /^\s*299 - "(.*)"\s*$/.exec(w)?.[1] ?? '')
        .filter(Boolean);
      return { status: response.status, json: (await response.json()) as Json, warnings };
    };
    const collection = '/apis/kopf.dev/v1/namespaces/default/kopfexamples';
    const created = await api('POST', collection, kopfExample());
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    expect(created.warnings).toEqual(['Accessing as user-agent: kube-apiserver-admission', 'SSL peer is not identified.']); // validate_subresources is not called: `kopfexamples/*` matches the subresources only, as in Kubernetes
    expect((created.json['spec'] as Json)['injected']).toBe(123);
    expect((stored()!['spec'] as Json)['injected']).toBe(123);

    const wrong = await api('PATCH', `${collection}/kopf-example-1`, { spec: { field: 'wrong' } }, 'application/merge-patch+json');
    expect(wrong.status).toBe(500);
    expect(wrong.json['message']).toBe('admission webhook "validate1.auto.kopf.dev" denied the request: Meh! I don\'t like it. Change the field.');
    const dry = await api('PATCH', `${collection}/kopf-example-1?dryRun=All`, { spec: { field: 'wrong' } }, 'application/merge-patch+json');
    expect(dry.status).toBe(200);
    expect((stored()!['spec'] as Json)['field']).toBe('value');
    const lazy = await api('PATCH', `${collection}/kopf-example-1`, { spec: { field: 'not-allowed' } }, 'application/merge-patch+json');
    expect(lazy.status).toBe(555);
    expect(lazy.json['message']).toBe('admission webhook "validate2.spec.field.auto.kopf.dev" denied the request: I\'m too lazy anyway. Go away!');
    const status = await api('PATCH', `${collection}/kopf-example-1/status`, { status: { field: 'other' } }, 'application/merge-patch+json');
    expect(status.status).toBe(500);
    expect(status.json['message']).toBe(
      'admission webhook "validate-subresources.auto.kopf.dev" denied the request: status.field MUST be equal to spec.field!',
    );
    const matching = await api('PATCH', `${collection}/kopf-example-1/status`, { status: { field: 'value' } }, 'application/merge-patch+json');
    expect(matching.status).toBe(200);

    // Directly, as the spec's reviews: the exact denial, and the mutation as a JSON patch.
    const review = (object: Json): Json => ({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'U',
        kind: { group: 'kopf.dev', version: 'v1', kind: 'KopfExample' },
        resource: { group: 'kopf.dev', version: 'v1', resource: 'kopfexamples' },
        requestKind: { group: 'kopf.dev', version: 'v1', kind: 'KopfExample' },
        requestResource: { group: 'kopf.dev', version: 'v1', resource: 'kopfexamples' },
        name: 'kopf-example-1',
        namespace: 'default',
        operation: 'CREATE',
        userInfo: { username: 'tester' },
        object,
        oldObject: null,
        dryRun: false,
        options: null,
      },
    });
    const ca = Buffer.from(validating[0]!.clientConfig.caBundle, 'base64').toString('utf8');
    const https = await import('node:https');
    const post = (url: string, body: Json): Promise<string> =>
      new Promise((resolve, reject) => {
        const request = https.request(url, { method: 'POST', ca, headers: { 'content-type': 'application/json' } }, (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => {
            text += chunk.toString('utf8');
          });
          response.on('end', () => resolve(text));
        });
        request.on('error', reject);
        request.end(JSON.stringify(body));
      });
    expect(await post(`${base}/validate1`, review(kopfExample({ field: 'wrong' })))).toBe(
      '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"U","allowed":false,"status":{"message":"Meh! I don\'t like it. Change the field.","code":500}}}',
    );
    const mutated = JSON.parse(await post(mutating!.clientConfig.url, review({ ...kopfExample(), spec: {} }))) as {
      response: { allowed: boolean; patchType: string; patch: string };
    };
    expect(mutated.response.allowed).toBe(true);
    expect(mutated.response.patchType).toBe('JSONPatch');
    expect(JSON.parse(Buffer.from(mutated.response.patch, 'base64').toString('utf8'))).toEqual([{ op: 'add', path: '/spec/injected', value: 123 }]);

    // A graceful stop empties both configurations.
    await runner!.stop();
    expect(runner!.exitCode).toBe(0);
    expect(hooks(VALIDATING)).toEqual([]);
    expect(hooks(MUTATING)).toEqual([]);
    expect(cluster.store.get(VALIDATING, 'auto.kopf.dev')).toBeDefined();
  });
});
