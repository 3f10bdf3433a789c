/**
 * One virtual clock for the devcluster and the operator. The devcluster's clock and the runtime's
 * have one shape (the devcluster declares it without importing the runtime), so a test hands the
 * same `VirtualClock` to both: the cluster's timestamps and watch timeouts and the operator's timers
 * then move together, in virtual minutes that take a fraction of a real second.
 */
import * as path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { OperatorRegistry, OperatorSettings } from 'kopf-gen/runtime';
import { type Clock, KopfRunner, VirtualClock } from 'kopf-gen/testing';

import { startTestCluster, type TestCluster } from '../support/cluster.js';
import { eventually } from '../support/waiting.js';

const OPERATOR = path.join(import.meta.dirname, 'ticking-operator.ts');
const CRD = path.join(import.meta.dirname, '../../fixtures/crds/kopfexamples.yaml');
const KEX = { group: 'kopf.dev', version: 'v1', resource: 'kopfexamples' } as const;
const START = Date.parse('2030-01-01T00:00:00Z');

// The runtime's virtual clock is a devcluster clock as it is (checked by the compiler).
const fits: Clock = new VirtualClock();
void fits;

describe('one virtual clock for the devcluster and the operator', () => {
  const clock = new VirtualClock({ start: START });
  let test: TestCluster;

  beforeAll(async () => {
    // Plain HTTP: a TLS peer checks the cluster's certificate against the wall clock, and this
    // one would be issued on 1 January 2030.
    test = await startTestCluster({ crds: [CRD], clock, tls: false, prefix: 'kopf-oneclock-' });
  });
  afterAll(async () => {
    await test?.stop();
  });

  it('D-FAULT-13 R-TEST-2 the cluster ends watches and the operator ticks on the same virtual minutes', async () => {
    const { cluster } = test;
    const settings = new OperatorSettings();
    settings.watching.serverTimeout = 60; // the cluster ends every watch after one virtual minute
    const runner = new KopfRunner(['run', '-A', '--standalone', OPERATOR], {
      registry: new OperatorRegistry(),
      settings,
      kubeconfig: test.kubeconfig,
      clock,
      timeout: 10,
    });
    await runner.start();
    const watches = (): number => cluster.requests.filter((r) => r.verb === 'watch' && r.resource === 'kopfexamples').length;
    const stored = (): { metadata: { creationTimestamp?: string }; status?: { ticks?: number; at?: string } } | undefined =>
      cluster.store.get(KEX, 'kopf-example-1', 'default') as never;

    await cluster.store.create({ apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name: 'kopf-example-1', namespace: 'default' }, spec: {} });
    // The cluster stamps the object with the virtual time; the operator ticks at once.
    expect(stored()?.metadata.creationTimestamp).toBe('2030-01-01T00:00:00Z');
    await eventually(() => stored()?.status?.ticks === 1, 'the first tick');
    const before = watches();
    expect(before).toBe(1);

    await clock.advance(10 * 60_000);

    // The operator's timer: 60 more ticks, the last one at exactly 10 virtual minutes.
    expect(stored()?.status).toEqual({ ticks: 61, at: '2030-01-01T00:10:00.000Z' });
    // The cluster's watch timeouts on the same clock: the operator's watch ended at every virtual
    // minute, and the operator watched again each time (at 1, 2, … 10 minutes).
    await eventually(() => watches() === before + 10, 'the watch started again at 10 virtual minutes');

    await runner.stop();
    expect(runner.exitCode).toBe(0);
  });
});
