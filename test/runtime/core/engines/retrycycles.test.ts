/**
 * R-KWARGS-2 for daemons and timers: `started` is the first attempt of the retry cycle, and
 * `runtime` (and so the `timeout` option) counts from it — not from the moment the task began to
 * sleep its `initialDelay` or to wait for the object to idle. Otherwise a timer with `idle: 600`
 * and `timeout: 60` would fail for good at its first error, 600 seconds "late".
 *
 * The operator runs through KopfRunner against the devcluster on a virtual clock.
 */
import * as path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { OperatorRegistry } from 'kopf-gen/runtime';
import { type DevCluster, KopfRunner, VirtualClock } from 'kopf-gen/testing';
import { eventually } from '../../../support/waiting.js';
import { startTestCluster, type TestCluster } from '../../../support/cluster.js';

const OPERATOR = path.join(import.meta.dirname, 'retrycycles-operator.ts');
const CRD = path.resolve(import.meta.dirname, '../../../../fixtures/crds/kopfexamples.yaml');
const T0 = Date.parse('2030-01-01T00:00:00Z');
const at = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString();

describe('retry cycles of daemons and timers', () => {
  let cluster: DevCluster;
  let test: TestCluster | undefined;

  beforeAll(async () => {
    test = await startTestCluster({ tls: false, crds: [CRD], exportKubeconfig: true, prefix: 'kopf-retrycycles-' });
    cluster = test.cluster;
  });
  afterAll(async () => {
    await test?.stop();
  });

  it('R-KWARGS-2 R-TIMER-4 started and runtime count from the first attempt, not from the initial delay or the idle wait', async () => {
    const clock = new VirtualClock({ start: T0 });
    const runner = new KopfRunner(['run', '-A', '--standalone', '--verbose', OPERATOR], { registry: new OperatorRegistry(), clock, timeout: 10 });
    await runner.start();
    await cluster.store.create({ apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name: 'kopf-example-1', namespace: 'default' }, spec: {} });
    await eventually(
      () =>
        Array.isArray(
          (
            cluster.store.get({ group: 'kopf.dev', version: 'v1', resource: 'kopfexamples' }, 'kopf-example-1', 'default')?.['metadata'] as {
              finalizers?: unknown;
            }
          ).finalizers,
        ),
      'the finalizer',
    );
    await clock.advance(0);
    for (let second = 0; second < 610; second += 5) await clock.advance(5_000);
    await runner.stop();

    const lines = runner.output
      .split('\n')
      .map((line) => /\] ((?:idler|delayed): .*)$/.exec(line)?.[1])
      .filter((line) => line !== undefined);
    expect(lines).toEqual([
      `delayed: retry=0 started=${at(30)} runtime=0`,
      `idler: retry=0 started=${at(600)} runtime=0`,
      `idler: retry=1 started=${at(600)} runtime=5`,
    ]);
    expect(runner.output).toContain("Timer 'idler' succeeded.");
    expect(runner.output).not.toContain('would time out');
  });
});
