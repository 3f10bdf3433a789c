/**
 * Jobs over HTTP (D-BI-13): what a client reads back after creating one (upstream's defaults, the
 * generated selector and labels), the validation of create and update, and the rules of `/status`
 * writes — the only way a Job's status changes, since no Job controller runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness, type Json } from '../conformance/harness.js';

const JOBS = '/apis/batch/v1/namespaces/default/jobs';

function job(name: string, spec: Json = {}, extra: Json = {}): Json {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    ...extra,
    metadata: { name, ...(extra['metadata'] ?? {}) },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'pi', image: 'perl:5.34' }] } }, ...spec },
  };
}

describe('Jobs (D-BI-13)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ widgets: false });
  });
  afterAll(async () => {
    await h.stop();
  });

  const create = async (body: Json): Promise<Json> => {
    const r = await h.post(JOBS, body);
    expect(r.status, r.text).toBe(201);
    return r.json;
  };
  const message = async (body: Json): Promise<string> => {
    const r = await h.post(JOBS, body);
    expect(r.status, r.text).toBe(422);
    return r.json['message'];
  };

  it('D-BI-13 create fills in the spec defaults of 1.32 and the pod template defaults', async () => {
    const created = await create(job('j-defaults'));
    expect(created['spec']).toMatchObject({
      completions: 1,
      parallelism: 1,
      backoffLimit: 6,
      completionMode: 'NonIndexed',
      suspend: false,
      manualSelector: false,
      podReplacementPolicy: 'TerminatingOrFailed',
    });
    expect(created['spec']['template']['spec']).toMatchObject({
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      schedulerName: 'default-scheduler',
      securityContext: {},
      containers: [
        {
          name: 'pi',
          image: 'perl:5.34',
          imagePullPolicy: 'IfNotPresent',
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          resources: {},
        },
      ],
    });
    expect(created['spec']['template']['spec']).not.toHaveProperty('serviceAccountName');
    expect(created['metadata']['generation']).toBe(1);
    expect(created).not.toHaveProperty('status');
    expect((await h.get(`${JOBS}/j-defaults`)).json['spec']).toEqual(created['spec']);
  });

  it('D-BI-13 parallelism alone leaves completions unset; backoffLimitPerIndex makes backoffLimit the largest int32', async () => {
    const parallel = await create(job('j-parallel', { parallelism: 3 }));
    expect(parallel['spec']['parallelism']).toBe(3);
    expect(parallel['spec']).not.toHaveProperty('completions');
    const indexed = await create(job('j-indexed', { completionMode: 'Indexed', completions: 3, backoffLimitPerIndex: 1 }));
    expect(indexed['spec']['backoffLimit']).toBe(2147483647);
    expect(indexed['spec']['parallelism']).toBe(1);
  });

  it('D-BI-13 a pod failure policy makes the replacement policy Failed and defaults condition patterns to True', async () => {
    const policy = { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] };
    const created = await create(job('j-policy', { podFailurePolicy: policy }));
    expect(created['spec']['podReplacementPolicy']).toBe('Failed');
    expect(created['spec']['podFailurePolicy']['rules'][0]['onPodConditions']).toEqual([{ type: 'DisruptionTarget', status: 'True' }]);
  });

  it('D-BI-13 the selector and template labels are generated from the uid and name, and the Job takes its labels from the template', async () => {
    const created = await create(job('j-selector'));
    const uid = created['metadata']['uid'];
    expect(created['spec']['selector']).toEqual({ matchLabels: { 'batch.kubernetes.io/controller-uid': uid } });
    const expected = {
      'batch.kubernetes.io/controller-uid': uid,
      'batch.kubernetes.io/job-name': 'j-selector',
      'controller-uid': uid,
      'job-name': 'j-selector',
    };
    expect(created['spec']['template']['metadata']['labels']).toEqual(expected);
    expect(created['metadata']['labels']).toEqual(expected);

    const labelled = await create(job('j-own-labels', {}, { metadata: { labels: { team: 'a' } } }));
    expect(labelled['metadata']['labels']).toEqual({ team: 'a' });
    expect(labelled['spec']['template']['metadata']['labels']['job-name']).toBe('j-own-labels');
  });

  it('D-BI-13 a manual selector is kept as given, must be set, and must select the template', async () => {
    const template = { metadata: { labels: { app: 'm' } }, spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] } };
    const manual = await create(job('j-manual', { manualSelector: true, selector: { matchLabels: { app: 'm' } }, template }));
    expect(manual['spec']['selector']).toEqual({ matchLabels: { app: 'm' } });
    expect(manual['spec']['template']['metadata']['labels']).toEqual({ app: 'm' });
    expect(await message(job('j-manual-none', { manualSelector: true, template }))).toBe('Job.batch "j-manual-none" is invalid: spec.selector: Required value');
    expect(await message(job('j-manual-bad', { manualSelector: true, selector: { matchLabels: { app: 'x' } }, template }))).toBe(
      'Job.batch "j-manual-bad" is invalid: spec.template.metadata.labels: Invalid value: {"app":"m"}: `selector` does not match template `labels`',
    );
  });

  it('D-BI-13 a generated selector that was tampered with is refused', async () => {
    const bad = job('j-tamper', {
      template: { metadata: { labels: { 'controller-uid': 'not-mine' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] } },
    });
    expect(await message(bad)).toMatch(
      /^Job\.batch "j-tamper" is invalid: spec\.template\.metadata\.labels\[controller-uid\]: Invalid value: \{.*\}: must be '[0-9a-f-]{36}'$/,
    );
    const selector = job('j-tamper-selector', { selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'not-mine' } } });
    const text = await message(selector);
    expect(text).toContain('spec.selector: Invalid value: {"matchLabels":{"batch.kubernetes.io/controller-uid":"not-mine"}}: `selector` not auto-generated');
    expect(text).toContain('`selector` does not match template `labels`');
  });

  it("D-BI-13 the template must restart OnFailure or Never, with upstream's message", async () => {
    const always = job('j-always');
    delete always['spec']['template']['spec']['restartPolicy'];
    expect(await message(always)).toBe('Job.batch "j-always" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"');
    const policy = job('j-policy-restart', {
      podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [1] } }] },
      template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'x' }] } },
    });
    expect(await message(policy)).toContain(
      'spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified',
    );
    expect(await message(job('j-negative', { backoffLimit: -1 }))).toBe(
      'Job.batch "j-negative" is invalid: spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0',
    );
    expect(await message(job('j-per-index', { backoffLimitPerIndex: 1 }))).toBe(
      'Job.batch "j-per-index" is invalid: spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode',
    );
  });

  it('D-BI-13 a Job name that is not a DNS label draws a warning on create', async () => {
    const r = await h.post(JOBS, job('j.dotted'));
    expect(r.status).toBe(201);
    expect(r.headers.get('warning')).toContain(
      'metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended',
    );
  });

  it('D-BI-13 the selector, completions and the template are immutable; a spec change bumps the generation', async () => {
    await create(job('j-update'));
    const selector = await h.patch(`${JOBS}/j-update`, { spec: { selector: { matchLabels: { other: 'x' } } } });
    expect(selector.status).toBe(422);
    expect(selector.json['message']).toContain('spec.selector: Invalid value:');
    expect(selector.json['message']).toContain('field is immutable');
    const completions = await h.patch(`${JOBS}/j-update`, { spec: { completions: 2 } });
    expect(completions.status).toBe(422);
    expect(completions.json['message']).toContain('spec.completions: Invalid value: 2: field is immutable');
    const image = await h.patch(`${JOBS}/j-update`, { spec: { template: { spec: { containers: [{ name: 'pi', image: 'perl:5.36' }] } } } });
    expect(image.status).toBe(422);
    expect(image.json['message']).toContain('spec.template: Invalid value:');
    const parallelism = await h.patch(`${JOBS}/j-update`, { spec: { parallelism: 2, activeDeadlineSeconds: 60 } });
    expect(parallelism.status, parallelism.text).toBe(200);
    expect(parallelism.json['metadata']['generation']).toBe(2);
    const labels = await h.patch(`${JOBS}/j-update`, { metadata: { labels: { extra: 'y' } } });
    expect(labels.json['metadata']['generation']).toBe(2);
  });

  it('D-BI-13 a suspended Job that never started may change its scheduling directives', async () => {
    await create(job('j-suspended', { suspend: true }));
    const r = await h.patch(`${JOBS}/j-suspended`, { spec: { template: { spec: { nodeSelector: { zone: 'a' } }, metadata: { annotations: { a: 'b' } } } } });
    expect(r.status, r.text).toBe(200);
    expect(r.json['spec']['template']['spec']['nodeSelector']).toEqual({ zone: 'a' });
  });

  it('D-BI-13 status changes only through /status; a succeeded status as 1.32 requires it is accepted', async () => {
    await create(job('j-status'));
    const ignored = await h.patch(`${JOBS}/j-status`, { status: { active: 1 } });
    expect(ignored.json).not.toHaveProperty('status');
    const started = await h.patch(`${JOBS}/j-status/status`, { status: { startTime: '2024-05-01T10:00:00Z', active: 1, ready: 0 } });
    expect(started.status, started.text).toBe(200);
    const succeeded = {
      status: {
        active: 0,
        succeeded: 1,
        completionTime: '2024-05-01T10:01:00Z',
        conditions: [
          { type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: '2024-05-01T10:01:00Z' },
          { type: 'Complete', status: 'True', lastTransitionTime: '2024-05-01T10:01:00Z' },
        ],
      },
    };
    const done = await h.patch(`${JOBS}/j-status/status`, succeeded);
    expect(done.status, done.text).toBe(200);
    expect(done.json['status']).toMatchObject({ succeeded: 1, startTime: '2024-05-01T10:00:00Z', completionTime: '2024-05-01T10:01:00Z' });
    expect(done.json['metadata']['generation']).toBe(1);
    const selected = await h.get('/apis/batch/v1/namespaces/default/jobs?fieldSelector=status.successful=1');
    expect(selected.json['items'].map((j: Json) => j['metadata']['name'])).toEqual(['j-status']);
  });

  it('D-BI-19 the status write of the user guide is accepted through cluster.store', async () => {
    const JOB = { apiVersion: 'batch/v1', kind: 'Job' };
    await h.cluster.store.create({ ...JOB, metadata: { name: 'backup', namespace: 'default' }, spec: job('backup')['spec'] });
    const now = '2024-05-01T10:00:00Z';
    const status = {
      startTime: now,
      completionTime: now,
      succeeded: 1,
      conditions: [
        { type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: now },
        { type: 'Complete', status: 'True', lastTransitionTime: now },
      ],
    };
    const written = await h.cluster.store.patch(JOB, 'backup', { status }, { namespace: 'default', subresource: 'status' });
    expect(written['status']).toEqual(status);
    expect(h.cluster.store.get(JOB, 'backup', 'default')!['spec']).toMatchObject({ completions: 1, backoffLimit: 6 });
  });

  it('D-BI-13 /status refuses what 1.32 refuses: Complete without SuccessCriteriaMet or completionTime, lost terminal conditions, lower counters', async () => {
    await create(job('j-rules'));
    const invalid = async (status: Json): Promise<string> => {
      const r = await h.patch(`${JOBS}/j-rules/status`, { status });
      expect(r.status, r.text).toBe(422);
      return r.json['message'];
    };
    const complete = [{ type: 'Complete', status: 'True' }];
    const text = await invalid({ startTime: '2024-05-01T10:00:00Z', conditions: complete });
    expect(text).toContain('status.completionTime: Required value: completionTime is required for Complete jobs');
    expect(text).toContain('status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition');
    expect(await invalid({ conditions: [{ type: 'Failed', status: 'True' }] })).toContain(
      'status.conditions: Invalid value: cannot set Failed=True condition without the FailureTarget=true condition',
    );
    expect(await invalid({ completionTime: '2024-05-01T10:00:00Z' })).toContain('cannot set completionTime when there is no Complete=True condition');
    expect(await invalid({ active: 1, ready: 2 })).toContain('status.ready: Invalid value: 2: cannot set more ready pods than active');

    const failed = await h.patch(`${JOBS}/j-rules/status`, {
      status: {
        startTime: '2024-05-01T10:00:00Z',
        failed: 2,
        conditions: [
          { type: 'FailureTarget', status: 'True' },
          { type: 'Failed', status: 'True' },
        ],
      },
    });
    expect(failed.status, failed.text).toBe(200);
    expect(await invalid({ failed: 1 })).toContain('status.failed: Invalid value: 1: cannot decrease the failed counter');
    expect(await invalid({ conditions: null })).toContain('status.conditions: Invalid value: cannot disable the terminal Failed=True condition');
  });
});
