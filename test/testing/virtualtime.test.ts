/**
 * The user story of `kopf-gen/testing` (issue "Testing on time that users control"): a test runs
 * an operator in-process against the devcluster on a virtual clock, moves the clock by ten
 * minutes, and sees every tick of a 10-second timer — in well under a second of real time. Kopf's
 * users can only wait for such things in real time.
 *
 * Everything comes from the public entry point, `kopf-gen/testing` (in this repository resolved to
 * the sources through the `kopf-gen-source` condition); the operator is a module file, loaded as
 * `kopf-gen run` would load it.
 */
import * as path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { OperatorRegistry } from 'kopf-gen/runtime';
import { type DevCluster, KopfRunner, VirtualClock } from 'kopf-gen/testing';
import { eventually } from '../support/waiting.js';
import { startTestCluster, type TestCluster } from '../support/cluster.js';

const OPERATOR = path.join(import.meta.dirname, 'ticking-operator.ts');
const STUBBORN = path.join(import.meta.dirname, 'stubborn-operator.ts');
const CRD = path.join(import.meta.dirname, '../../fixtures/crds/kopfexamples.yaml');
const KEX = { group: 'kopf.dev', version: 'v1', resource: 'kopfexamples' } as const;

describe('virtual time for operators under test (kopf-gen/testing)', () => {
  let cluster: DevCluster;
  let test: TestCluster | undefined;

  beforeAll(async () => {
    test = await startTestCluster({ crds: [CRD], exportKubeconfig: true, prefix: 'kopf-virtualtime-' });
    cluster = test.cluster;
  });
  afterAll(async () => {
    await test?.stop();
  });

  it('R-TEST-2 R-TIMER-2 a 10-second timer fires once at creation and 60 times more in 10 virtual minutes', async () => {
    const clock = new VirtualClock({ start: Date.parse('2030-01-01T00:00:00Z') });
    const runner = new KopfRunner(['run', '-A', '--standalone', OPERATOR], { registry: new OperatorRegistry(), clock, timeout: 10 });
    await runner.start();
    // What the timer wrote, request by request, as the devcluster received it.
    const ticks = (): { ticks: number; at: string }[] =>
      cluster.requests
        .filter((r) => r.verb === 'patch' && r.resource === 'kopfexamples' && r.subresource === 'status')
        .map((r) => (JSON.parse(r.body!) as { status: { ticks: number; at: string } }).status);
    const stored = (): { ticks?: number } | undefined =>
      (cluster.store.get(KEX, 'kopf-example-1', 'default') as { status?: { ticks?: number } } | undefined)?.status;

    await cluster.store.create({
      apiVersion: 'kopf.dev/v1',
      kind: 'KopfExample',
      metadata: { name: 'kopf-example-1', namespace: 'default' },
      spec: { field: 'value' },
    });
    // The first tick comes at once (no initial delay, no idling): t = 0.
    await eventually(() => stored()?.ticks === 1, 'the first tick');
    const created = clock.now();

    const real = Date.now();
    await clock.advance(10 * 60_000);
    const elapsed = Date.now() - real;
    console.log(`10 virtual minutes took ${elapsed} ms of real time.`);

    // t = 10 s, 20 s, …, 600 s: 60 ticks, each at its exact virtual time, plus the one at t = 0.
    expect(clock.now() - created).toBe(600_000);
    expect(stored()?.ticks).toBe(61);
    expect(ticks()).toEqual(Array.from({ length: 61 }, (_, i) => ({ ticks: i + 1, at: new Date(created + i * 10_000).toISOString() })));
    expect(runner.output.match(/Tick #\d+\./g)).toHaveLength(61);
    expect(runner.output.match(/Timer 'tick' succeeded\./g)).toHaveLength(61);

    await runner.stop();
    expect(runner.exitCode).toBe(0);
    await cluster.store.patch(KEX, 'kopf-example-1', { metadata: { finalizers: null } }, { namespace: 'default', type: 'merge-patch' });
    await cluster.store.delete(KEX, 'kopf-example-1', { namespace: 'default' });
  });

  it('R-TEST-1 R-DAEMON-8 stop() moves a virtual clock through the stop stages of a daemon that ignores its flag', async () => {
    const clock = new VirtualClock({ start: Date.parse('2030-01-01T00:00:00Z') });
    const runner = new KopfRunner(['run', '-A', '--standalone', '--verbose', STUBBORN], { registry: new OperatorRegistry(), clock, timeout: 10 });
    await runner.start();
    await cluster.store.create({ apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name: 'kopf-example-2', namespace: 'default' }, spec: {} });
    await eventually(() => runner.output.includes('Running until cancelled.'), 'the daemon');

    // Nobody advances the clock here: the runner does, as the operator's exit waits on it.
    const before = clock.now();
    await runner.stop();
    console.log(`The stop took ${clock.now() - before} virtual ms.`);
    expect(runner.exitCode).toBe(0);
    const lines = runner.output.split('\n');
    const at = (text: string): number => lines.findIndex((line) => line.includes(text));
    expect(at("Daemon 'stubborn' is signalled to exit gracefully.")).toBeGreaterThan(at('Stop-flag is raised.'));
    expect(at("Daemon 'stubborn' is signalled to exit by force.")).toBeGreaterThan(at("Daemon 'stubborn' is signalled to exit gracefully."));
    expect(at("Daemon 'stubborn' is cancelled. Will escalate.")).toBeGreaterThan(at("Daemon 'stubborn' is signalled to exit by force."));
    expect(runner.output).not.toContain('did not exit in time');
    expect(clock.now() - before).toBeGreaterThanOrEqual(1_000); // the graceful stage, on virtual time
  });
});
