/**
 * examples/20-reconcile, the kubebuilder book's CronJob as one reconcile handler owning Jobs,
 * loaded from its file as `kopf-gen run examples/20-reconcile/example.ts` loads it and run
 * in-process with `KopfRunner` against a devcluster. The devcluster and the operator share one
 * virtual clock, so that the CronJob's `creationTimestamp`, the Jobs' and the handler's `now` are
 * on the same time line, and a scheduled run is exactly when the test moves the clock to it.
 *
 * No Job controller runs on the devcluster: the test plays it and writes the Jobs' status
 * (started, complete or failed). What the example promises, one behaviour per test: a Job at each
 * scheduled time (with no request in between: no polling, no timer, and no finalizer on the
 * CronJob), the concurrency policies Forbid and Replace, suspend, the starting deadline, the
 * history limits, and `status.active`/`status.lastScheduleTime` as the book writes them. The
 * first block checks the pure schedule computations without a cluster.
 */
import * as path from 'node:path';

import { describe, expect, it } from 'vitest';

import { OperatorRegistry } from 'kopf-gen/runtime';
import { type DevCluster, KopfRunner, VirtualClock } from 'kopf-gen/testing';

import type { CronJob } from '../../examples/cronjobs.js';
import { jobFor, MAX_MISSED, nextSchedule, SCHEDULED_AT, ScheduleError } from '../../examples/20-reconcile/scheduling.js';
import { startTestCluster, type TestCluster } from '../support/cluster.js';
import { eventually, objectMessages, ROOT, START } from './support.js';

const CRONJOBS_CRD = path.join(ROOT, 'fixtures/crds/cronjobs.yaml');
const CRONJOBS = { group: 'batch.tutorial.kopf-gen.dev', version: 'v1', resource: 'cronjobs' } as const;
const CRONJOB = { apiVersion: 'batch.tutorial.kopf-gen.dev/v1', kind: 'CronJob' } as const;
const JOBS = { group: 'batch', version: 'v1', resource: 'jobs' } as const;
const JOB = { apiVersion: 'batch/v1', kind: 'Job' } as const;
const NS = 'default';
const MINUTE = 60_000;
type Json = Record<string, any>;

const at = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19)}Z`;
const unix = (ms: number): number => Math.floor(ms / 1000);

/** A CronJob body for the pure tests, created at `START`. */
function cronJob(spec: Partial<CronJob['spec']>, status: CronJob['status'] = {}): CronJob {
  return {
    apiVersion: CRONJOB.apiVersion,
    kind: CRONJOB.kind,
    metadata: { name: 'c', namespace: NS, uid: 'u-1', creationTimestamp: at(START) },
    spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { spec: { containers: [] } } } }, ...spec },
    status,
  };
}

describe('examples/20-reconcile: the schedule, computed from the given time', () => {
  it('20-reconcile: the last missed run and the next one, counted from lastScheduleTime or the creation', () => {
    const created = nextSchedule(cronJob({ schedule: '*/5 * * * *' }), new Date(START + 12 * MINUTE));
    expect(created.missed?.toISOString()).toBe('2030-01-01T00:10:00.000Z');
    expect(created.next.toISOString()).toBe('2030-01-01T00:15:00.000Z');
    const recorded = nextSchedule(cronJob({ schedule: '*/5 * * * *' }, { lastScheduleTime: at(START + 10 * MINUTE) }), new Date(START + 12 * MINUTE));
    expect(recorded.missed).toBeUndefined();
  });

  it('20-reconcile: runs older than startingDeadlineSeconds are not missed runs', () => {
    const schedule = nextSchedule(cronJob({ schedule: '*/5 * * * *', startingDeadlineSeconds: 30 }), new Date(START + 5 * MINUTE + 45_000));
    expect(schedule.missed).toBeUndefined();
    expect(schedule.next.toISOString()).toBe('2030-01-01T00:10:00.000Z');
  });

  it('20-reconcile: a bad schedule and too many missed runs are errors with their codes', () => {
    expect(() => nextSchedule(cronJob({ schedule: 'every day' }), new Date(START))).toThrow(ScheduleError);
    const late = (): unknown => nextSchedule(cronJob({}), new Date(START + (MAX_MISSED + 1) * MINUTE));
    expect(late).toThrow(expect.objectContaining({ code: 'TOO_MANY_MISSED' }));
  });

  it('20-reconcile: the Job of a run is named after its time, annotated with it, controlled by the CronJob', () => {
    const job = jobFor(
      cronJob({ jobTemplate: { metadata: { labels: { app: 'x' } }, spec: { template: { spec: { containers: [] } } } } }),
      new Date(START + MINUTE),
    );
    expect(job.metadata).toMatchObject({
      name: `c-${unix(START + MINUTE)}`,
      namespace: NS,
      labels: { app: 'x' },
      annotations: { [SCHEDULED_AT]: '2030-01-01T00:01:00Z' },
      ownerReferences: [{ apiVersion: CRONJOB.apiVersion, kind: 'CronJob', name: 'c', uid: 'u-1', controller: true }],
    });
  });
});

/** A devcluster and the example, on one virtual clock at `START`. */
class Scenario {
  private constructor(
    readonly test: TestCluster,
    readonly clock: VirtualClock,
    readonly registry: OperatorRegistry,
    private runner: KopfRunner | undefined,
  ) {}

  /** Starts the devcluster (with the CronJob CRD) and, unless `operator: false`, the example. */
  static async start(options: { operator?: boolean } = {}): Promise<Scenario> {
    const clock = new VirtualClock({ start: START });
    const test = await startTestCluster({ tls: false, crds: [CRONJOBS_CRD], prefix: 'kopf-example-', clock });
    const scenario = new Scenario(test, clock, new OperatorRegistry(), undefined);
    if (options.operator !== false) await scenario.startOperator();
    return scenario;
  }

  get cluster(): DevCluster {
    return this.test.cluster;
  }

  get output(): string {
    return this.runner?.output ?? '';
  }

  async startOperator(): Promise<void> {
    const file = path.join(ROOT, 'examples', '20-reconcile', 'example.ts');
    this.runner = new KopfRunner(['run', '-A', '--standalone', '--verbose', file], {
      registry: this.registry,
      clock: this.clock,
      timeout: 10,
      kubeconfig: this.test.kubeconfig,
    });
    await this.runner.start();
  }

  async stop(): Promise<void> {
    try {
      await this.runner?.stop();
      if (this.runner) expect(this.runner.exitCode).toBe(0);
    } finally {
      await this.test.stop();
    }
  }

  async create(name: string, spec: Partial<CronJob['spec']>): Promise<Json> {
    return (await this.cluster.store.create({
      ...CRONJOB,
      metadata: { name, namespace: NS },
      spec: {
        schedule: '* * * * *',
        jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'hello', image: 'busybox', command: ['date'] }] } } } },
        ...spec,
      },
    })) as Json;
  }

  cron(name: string): Json {
    return this.cluster.store.get(CRONJOBS, name, NS) as Json;
  }

  /** The Jobs whose controller is the CronJob `name`, by name. */
  jobs(name: string): string[] {
    const uid = this.cron(name)['metadata']['uid'];
    return this.cluster.store
      .list(JOBS, NS)
      .filter((j) => ((j['metadata'] as Json)['ownerReferences'] ?? []).some((r: Json) => r['uid'] === uid && r['controller'] === true))
      .map((j) => (j['metadata'] as Json)['name'] as string)
      .sort();
  }

  job(name: string): Json | undefined {
    return this.cluster.store.get(JOBS, name, NS) as Json | undefined;
  }

  /** How many status writes the operator has sent for the CronJob `name`: one per reconcile call that got that far. */
  statusWrites(name: string): number {
    return this.cluster.requests.filter((r) => r.verb === 'patch' && r.resource === 'cronjobs' && r.subresource === 'status' && r.name === name).length;
  }

  /** Waits until the operator has finished one more reconcile call of `name` than `before`. */
  async reconciled(name: string, before: number): Promise<void> {
    await eventually(() => this.statusWrites(name) > before, `a reconcile call of ${name}`);
  }

  /** Moves the clock to `time` (epoch ms). */
  async moveTo(time: number): Promise<void> {
    await this.clock.advanceTo(time);
  }

  /** The test as the Job controller: the Job has started at `startedAt` and, with `outcome`, has finished now. */
  async finish(job: string, outcome: 'Complete' | 'Failed' | undefined, startedAt: number): Promise<void> {
    const now = at(this.clock.now());
    const conditions =
      outcome === 'Complete'
        ? [
            { type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: now },
            { type: 'Complete', status: 'True', lastTransitionTime: now },
          ]
        : outcome === 'Failed'
          ? [
              { type: 'FailureTarget', status: 'True', lastTransitionTime: now, reason: 'BackoffLimitExceeded' },
              { type: 'Failed', status: 'True', lastTransitionTime: now, reason: 'BackoffLimitExceeded' },
            ]
          : [];
    // A finished Job has no active pods: the API server rejects `active > 0` next to a finished condition.
    const status: Json = { startTime: at(startedAt), ...(outcome ? { conditions, active: null } : { active: 1 }) };
    if (outcome === 'Complete') Object.assign(status, { completionTime: now, succeeded: 1 });
    if (outcome === 'Failed') Object.assign(status, { failed: 1 });
    await this.cluster.store.patch(JOB, job, { status }, { namespace: NS, subresource: 'status' });
  }

  messages(name: string): string[] {
    return this.runner ? objectMessages(this.runner, `${NS}/${name}`) : [];
  }
}

const jobName = (cron: string, time: number): string => `${cron}-${unix(time)}`;

describe('examples/20-reconcile: the CronJob on the devcluster, on virtual time', () => {
  it('20-reconcile: a Job at each scheduled time, created at that time; no request in between, no timer, no finalizer', async () => {
    const s = await Scenario.start();
    try {
      await s.create('every-minute', {});
      await s.reconciled('every-minute', 0);
      expect(s.jobs('every-minute')).toEqual([]);

      await s.moveTo(START + MINUTE);
      const first = jobName('every-minute', START + MINUTE);
      await eventually(() => s.jobs('every-minute').length === 1, 'the first Job');
      const job = s.job(first)!;
      // Created at its scheduled time (the clock stood still there): a requeue, not a poll.
      expect(job['metadata']['creationTimestamp']).toBe('2030-01-01T00:01:00Z');
      expect(job['metadata']['annotations'][SCHEDULED_AT]).toBe('2030-01-01T00:01:00Z');
      await eventually(() => s.cron('every-minute')['status']?.['active']?.length === 1, 'status.active');
      expect(s.cron('every-minute')['status']).toEqual({
        active: [{ apiVersion: 'batch/v1', kind: 'Job', name: first, namespace: NS, uid: job['metadata']['uid'], resourceVersion: expect.any(String) }],
        lastScheduleTime: '2030-01-01T00:01:00Z',
      });

      // Between two runs the operator reads nothing: it waits on its clock, it does not poll. (Its
      // watches stay open, and the k8s-event of the INFO line above may be posted late.)
      const before = s.cluster.requests.all.length;
      await s.moveTo(START + MINUTE + 30_000);
      expect(s.cluster.requests.all.slice(before).filter((r) => r.verb !== 'watch' && r.resource !== 'events')).toEqual([]);

      // The Job finishes: its change alone reconciles the CronJob, which no longer lists it as active.
      const writes = s.statusWrites('every-minute');
      await s.finish(first, 'Complete', START + MINUTE);
      await s.reconciled('every-minute', writes);
      await eventually(() => s.cron('every-minute')['status']?.['active'] === undefined, 'the finished Job no longer active');
      expect(s.cron('every-minute')['status']['lastScheduleTime']).toBe('2030-01-01T00:01:00Z');

      await s.moveTo(START + 2 * MINUTE);
      await eventually(() => s.jobs('every-minute').length === 2, 'the second Job');
      expect(s.jobs('every-minute')).toEqual([first, jobName('every-minute', START + 2 * MINUTE)]);
      expect(s.job(jobName('every-minute', START + 2 * MINUTE))!['metadata']['creationTimestamp']).toBe('2030-01-01T00:02:00Z');

      // One reconcile handler, no timer or daemon; no finalizer on the CronJob.
      expect(s.registry.handlers.map((h) => h.kind)).toEqual(['reconcile']);
      expect(s.cron('every-minute')['metadata']['finalizers']).toBeUndefined();
    } finally {
      await s.stop();
    }
  });

  it('20-reconcile: Forbid skips a run while a Job runs; a run missed beyond the deadline is not started late', async () => {
    const s = await Scenario.start();
    try {
      await s.create('forbid', { concurrencyPolicy: 'Forbid', startingDeadlineSeconds: 10 });
      await s.reconciled('forbid', 0);
      await s.moveTo(START + MINUTE);
      const first = jobName('forbid', START + MINUTE);
      await eventually(() => s.jobs('forbid').length === 1, 'the first Job');
      await s.finish(first, undefined, START + MINUTE);

      await s.moveTo(START + 2 * MINUTE);
      await eventually(() => s.messages('forbid').some((m) => m.includes('is skipped: 1 Job(s) still running (Forbid)')), 'the skipped run');
      expect(s.jobs('forbid')).toEqual([first]);

      await s.moveTo(START + 2 * MINUTE + 30_000);
      const writes = s.statusWrites('forbid');
      await s.finish(first, 'Complete', START + MINUTE);
      await s.reconciled('forbid', writes);
      await eventually(() => s.cron('forbid')['status']?.['active'] === undefined, 'the finished Job no longer active');
      expect(s.jobs('forbid')).toEqual([first]);
      expect(s.cron('forbid')['status']).toEqual({ lastScheduleTime: '2030-01-01T00:01:00Z' });

      await s.moveTo(START + 3 * MINUTE);
      await eventually(() => s.jobs('forbid').length === 2, 'the next run');
      expect(s.jobs('forbid')).toEqual([first, jobName('forbid', START + 3 * MINUTE)]);
    } finally {
      await s.stop();
    }
  });

  it('20-reconcile: Replace deletes the running Job and starts the new run', async () => {
    const s = await Scenario.start();
    try {
      await s.create('replace', { concurrencyPolicy: 'Replace' });
      await s.reconciled('replace', 0);
      await s.moveTo(START + MINUTE);
      const first = jobName('replace', START + MINUTE);
      await eventually(() => s.jobs('replace').length === 1, 'the first Job');
      await s.finish(first, undefined, START + MINUTE);

      await s.moveTo(START + 2 * MINUTE);
      const second = jobName('replace', START + 2 * MINUTE);
      await eventually(() => s.jobs('replace').join() === second, 'the first Job replaced by the second');
      await eventually(() => s.cron('replace')['status']?.['active']?.[0]?.['name'] === second, 'status.active');
      expect(s.cron('replace')['status']['active']).toHaveLength(1);
      expect(s.cron('replace')['status']['lastScheduleTime']).toBe('2030-01-01T00:02:00Z');
    } finally {
      await s.stop();
    }
  });

  it('20-reconcile: suspend stops new runs; resuming starts the latest missed one', async () => {
    const s = await Scenario.start();
    try {
      await s.create('suspend', {});
      await s.reconciled('suspend', 0);
      await s.moveTo(START + MINUTE);
      const first = jobName('suspend', START + MINUTE);
      await eventually(() => s.jobs('suspend').length === 1, 'the first Job');

      await s.cluster.store.patch(CRONJOB, 'suspend', { spec: { suspend: true } }, { namespace: NS });
      await eventually(() => s.messages('suspend').some((m) => m.includes('Suspended: no run is started.')), 'the suspension seen');
      await s.moveTo(START + 4 * MINUTE + 30_000);
      expect(s.jobs('suspend')).toEqual([first]);

      await s.cluster.store.patch(CRONJOB, 'suspend', { spec: { suspend: false } }, { namespace: NS });
      // No deadline: the latest run missed while suspended starts now (as the book's and Kubernetes' CronJob do).
      await eventually(() => s.jobs('suspend').length === 2, 'the run after resuming');
      expect(s.jobs('suspend')).toEqual([first, jobName('suspend', START + 4 * MINUTE)]);
    } finally {
      await s.stop();
    }
  });

  it('20-reconcile: a run missed while the operator was away is started on its return only within startingDeadlineSeconds', async () => {
    const s = await Scenario.start({ operator: false });
    try {
      await s.create('strict', { schedule: '*/5 * * * *', startingDeadlineSeconds: 30 });
      await s.create('lenient', { schedule: '*/5 * * * *' });
      await s.moveTo(START + 5 * MINUTE + 45_000);
      await s.startOperator();
      await s.reconciled('strict', 0);
      await eventually(() => s.jobs('lenient').length === 1, "the lenient CronJob's late run");
      expect(s.jobs('lenient')).toEqual([jobName('lenient', START + 5 * MINUTE)]);
      expect(s.jobs('strict')).toEqual([]);

      await s.moveTo(START + 10 * MINUTE);
      await eventually(() => s.jobs('strict').length === 1, "the strict CronJob's next run");
      expect(s.jobs('strict')).toEqual([jobName('strict', START + 10 * MINUTE)]);
    } finally {
      await s.stop();
    }
  });

  it('20-reconcile: history limits delete the oldest finished Jobs, successful and failed apart', async () => {
    const s = await Scenario.start();
    try {
      await s.create('history', { successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 1 });
      await s.reconciled('history', 0);
      const run = async (minute: number, outcome: 'Complete' | 'Failed'): Promise<string> => {
        await s.moveTo(START + minute * MINUTE);
        const name = jobName('history', START + minute * MINUTE);
        await eventually(() => s.job(name) !== undefined, `the Job of minute ${minute}`);
        // The call that created it has written its status: the next status write is the next call's.
        await eventually(() => s.cron('history')['status']?.['lastScheduleTime'] === at(START + minute * MINUTE), `lastScheduleTime of minute ${minute}`);
        await s.moveTo(START + minute * MINUTE + 20_000);
        const writes = s.statusWrites('history');
        await s.finish(name, outcome, START + minute * MINUTE);
        await s.reconciled('history', writes);
        return name;
      };
      const ok1 = await run(1, 'Complete');
      expect(s.jobs('history')).toEqual([ok1]);
      const ok2 = await run(2, 'Complete');
      await eventually(() => s.job(ok1) === undefined, 'the older successful Job deleted');
      const bad3 = await run(3, 'Failed');
      expect(s.jobs('history')).toEqual([ok2, bad3]);
      const bad4 = await run(4, 'Failed');
      await eventually(() => s.job(bad3) === undefined, 'the older failed Job deleted');
      expect(s.jobs('history')).toEqual([ok2, bad4]);
      await eventually(() => s.cron('history')['status']?.['active'] === undefined, 'no active Job');
      expect(s.cron('history')['status']).toEqual({ lastScheduleTime: '2030-01-01T00:04:00Z' });
    } finally {
      await s.stop();
    }
  });
});
