/**
 * CronJobs over HTTP (D-BI-14): defaults (the job template gets pod-template defaults only), the
 * schedule and time-zone validation with upstream's messages, and the rules of the job template;
 * and the schedule parser on its own, case by case.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as cronschedule from '../../../devcluster/builtins/cronschedule.js';
import { startHarness, type Harness, type Json } from '../conformance/harness.js';

const CRONJOBS = '/apis/batch/v1/namespaces/default/cronjobs';

function cronJob(name: string, spec: Json = {}): Json {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name },
    spec: {
      schedule: '*/1 * * * *',
      jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'hello', image: 'busybox:1.28' }] } } } },
      ...spec,
    },
  };
}

describe('CronJobs (D-BI-14)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ widgets: false });
  });
  afterAll(async () => {
    await h.stop();
  });

  const message = async (body: Json): Promise<string> => {
    const r = await h.post(CRONJOBS, body);
    expect(r.status, r.text).toBe(422);
    return r.json['message'];
  };

  it('D-BI-14 create fills in the defaults; the job template gets pod defaults but no Job defaults', async () => {
    const r = await h.post(CRONJOBS, cronJob('cj-defaults'));
    expect(r.status, r.text).toBe(201);
    expect(r.json['spec']).toMatchObject({ concurrencyPolicy: 'Allow', suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 });
    const jobSpec = r.json['spec']['jobTemplate']['spec'];
    expect(Object.keys(jobSpec)).toEqual(['template']);
    expect(jobSpec['template']['spec']).toMatchObject({
      restartPolicy: 'OnFailure',
      dnsPolicy: 'ClusterFirst',
      schedulerName: 'default-scheduler',
      terminationGracePeriodSeconds: 30,
      securityContext: {},
      containers: [{ name: 'hello', imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' }],
    });
    expect(r.json['metadata']['generation']).toBe(1);
    const updated = await h.patch(`${CRONJOBS}/cj-defaults`, { spec: { suspend: true } });
    expect(updated.json['metadata']['generation']).toBe(2);
  });

  it("D-BI-14 the schedule is required and must be cron syntax, with the cron library's messages", async () => {
    expect(await message(cronJob('cj-none', { schedule: '' }))).toBe('CronJob.batch "cj-none" is invalid: spec.schedule: Required value');
    expect(await message(cronJob('cj-fields', { schedule: 'foo' }))).toBe(
      'CronJob.batch "cj-fields" is invalid: spec.schedule: Invalid value: "foo": expected exactly 5 fields, found 1: [foo]',
    );
    expect(await message(cronJob('cj-range', { schedule: '0 25 * * *' }))).toBe(
      'CronJob.batch "cj-range" is invalid: spec.schedule: Invalid value: "0 25 * * *": end of range (25) above maximum (23): 25',
    );
    expect(await message(cronJob('cj-tz', { schedule: 'TZ=UTC 0 * * * *' }))).toBe(
      'CronJob.batch "cj-tz" is invalid: spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
    );
    const described = await h.post(CRONJOBS, cronJob('cj-hourly', { schedule: '@hourly' }));
    expect(described.status, described.text).toBe(201);
  });

  it('D-BI-14 the time zone must be an IANA name, not Local', async () => {
    const ok = await h.post(CRONJOBS, cronJob('cj-berlin', { timeZone: 'Europe/Berlin' }));
    expect(ok.status, ok.text).toBe(201);
    expect(await message(cronJob('cj-mars', { timeZone: 'Mars/Olympus' }))).toBe(
      'CronJob.batch "cj-mars" is invalid: spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus',
    );
    expect(await message(cronJob('cj-local', { timeZone: 'Local' }))).toBe(
      'CronJob.batch "cj-local" is invalid: spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones',
    );
    expect(await message(cronJob('cj-empty-zone', { timeZone: '' }))).toContain('spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string');
  });

  it('D-BI-14 the job template is validated as a Job spec whose selector is generated', async () => {
    const always = cronJob('cj-always');
    delete always['spec']['jobTemplate']['spec']['template']['spec']['restartPolicy'];
    expect(await message(always)).toBe(
      'CronJob.batch "cj-always" is invalid: spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
    );
    const selected = cronJob('cj-selector');
    selected['spec']['jobTemplate']['spec']['selector'] = { matchLabels: { a: 'b' } };
    expect(await message(selected)).toBe(
      'CronJob.batch "cj-selector" is invalid: spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: `selector` will be auto-generated',
    );
    expect(await message(cronJob('cj-policy', { concurrencyPolicy: 'Sometimes' }))).toBe(
      'CronJob.batch "cj-policy" is invalid: spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"',
    );
    const long = 'c'.repeat(53);
    expect(await message(cronJob(long))).toBe(
      `CronJob.batch "${long}" is invalid: metadata.name: Invalid value: "${long}": must be no more than 52 characters`,
    );
  });

  it('D-BI-14 status is written only through /status', async () => {
    await h.post(CRONJOBS, cronJob('cj-status'));
    const ignored = await h.patch(`${CRONJOBS}/cj-status`, { status: { lastScheduleTime: '2024-05-01T10:00:00Z' } });
    expect(ignored.json).not.toHaveProperty('status');
    const written = await h.patch(`${CRONJOBS}/cj-status/status`, { status: { lastScheduleTime: '2024-05-01T10:00:00Z' } });
    expect(written.status, written.text).toBe(200);
    expect(written.json['status']).toEqual({ lastScheduleTime: '2024-05-01T10:00:00Z' });
  });
});

describe('cron schedules (D-BI-14)', () => {
  it.each([
    ['*/5 * * * *', undefined],
    ['0 0 1 jan,JUL MON-fri', undefined],
    ['5-10/2 1,2 ? * 0', undefined],
    ['@every 1h30m', undefined],
    ['', 'empty spec string'],
    ['* * * *', 'expected exactly 5 fields, found 4: [* * * *]'],
    ['60 * * * *', 'end of range (60) above maximum (59): 60'],
    ['* * 0 * *', 'beginning of range (0) below minimum (1): 0'],
    ['5-1 * * * *', 'beginning of range (5) beyond end of range (1): 5-1'],
    ['*/0 * * * *', 'step of range should be a positive number: */0'],
    ['1-2-3 * * * *', 'too many hyphens: 1-2-3'],
    ['*/2/3 * * * *', 'too many slashes: */2/3'],
    ['x * * * *', 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'],
    ['@sometimes', 'unrecognized descriptor: @sometimes'],
  ])('D-BI-14 %j → %s', (schedule, error) => {
    expect(cronschedule.scheduleError(schedule)).toBe(error);
  });

  it('D-BI-14 time zones are the IANA names the platform knows, with their exact case', () => {
    expect(cronschedule.timeZoneProblem('America/New_York')).toBeUndefined();
    expect(cronschedule.timeZoneProblem('UTC')).toBeUndefined();
    expect(cronschedule.timeZoneProblem('america/new_york')).toBe('unknown time zone america/new_york');
    expect(cronschedule.timeZoneProblem('Nowhere/Land')).toBe('unknown time zone Nowhere/Land');
  });
});
