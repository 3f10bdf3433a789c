/**
 * The example examples/06-peering (Kopf's 06-peering in TypeScript), run as its README says
 * (scenario A-25): the example operator through `KopfRunner` (`kopf-gen run -A --verbose`, no
 * `--standalone`) against a devcluster with Kopf's peering fixture; a developer's operator with
 * priority 666 (`--dev`) in the same process; then `kopf-gen freeze` and `kopf-gen resume`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { OperatorRegistry, on, operator, touchCommand } from 'kopf-gen/runtime';
import { type DevCluster, KopfRunner } from 'kopf-gen/testing';
import { eventually } from '../support/waiting.js';
import { startTestCluster, type TestCluster } from '../support/cluster.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PEERING = { group: 'kopf.dev', version: 'v1', resource: 'clusterkopfpeerings' } as const;

describe('examples/06-peering', () => {
  let cluster: DevCluster;
  let test: TestCluster | undefined;

  beforeAll(async () => {
    test = await startTestCluster({ tls: false, crds: [path.join(ROOT, 'fixtures/crds/kopfexamples.yaml')], exportKubeconfig: true, prefix: 'kopf-peering-' });
    cluster = test.cluster;
    await cluster.load(fs.readFileSync(path.join(ROOT, 'fixtures/crds/peering.yaml'), 'utf8'));
  });
  afterAll(async () => {
    await test?.stop();
  });

  it('A-25 06-peering: the operator pauses for a --dev operator, resumes when it exits, and follows freeze/resume', async () => {
    const status = (): Record<string, { priority?: number; lifetime?: number }> =>
      (cluster.store.get(PEERING, 'default') as { status?: Record<string, { priority?: number }> } | undefined)?.status ?? {};
    const runner = new KopfRunner(['run', '-A', '--verbose', path.join(ROOT, 'examples/06-peering/example.ts')], {
      registry: new OperatorRegistry(),
      timeout: 10,
    });
    await runner.start();
    const grep = (text: string): string[] => runner.output.split('\n').filter((line) => line.includes(text));
    try {
      await eventually(() => Object.values(status()).some((entry) => entry.priority === 0), "the example operator's entry");
      expect(Object.values(status())).toEqual([{ priority: 0, lifetime: 60, lastseen: expect.stringMatching(/\+00:00$/) as unknown }]);

      // A developer's operator with --dev (priority 666) in the same process.
      const developer = new OperatorRegistry();
      const developed: string[] = [];
      on.create(['kopf.dev', 'v1', 'kopfexamples'], { registry: developer }, function dev_create({ name }) {
        developed.push(String(name));
      });
      const stop = new AbortController();
      const dev = operator({ registry: developer, clusterwide: true, priority: 666, identity: 'developer@workstation', stopFlag: stop.signal });
      await eventually(
        () => grep("Pausing operations in favour of [<Peer developer@workstation: priority=666, lifetime=60, lastseen='").length === 1,
        'the example operator to pause',
      );
      await cluster.store.create({ apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name: 'peered-1', namespace: 'default' }, spec: {} });
      await eventually(() => developed.includes('peered-1'), "the developer's handler");
      stop.abort();
      await dev;
      await eventually(
        () => grep('Resuming operations after the pause. Conflicting operators with the same priority are gone.').length === 1,
        'the example operator to resume',
      );
      expect(grep('Created peered-1')).toEqual([]); // handled once in total, by the developer's operator
      await cluster.store.create({ apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name: 'peered-2', namespace: 'default' }, spec: {} });
      await eventually(() => grep('Created peered-2: handled by exactly one of the peering operators.').length === 1, 'the example handler');

      // freeze/resume by hand, as in the README.
      const output = { out: () => undefined, err: () => undefined };
      expect(await touchCommand('freeze', ['--peering', 'default', '--lifetime', '60', '-A'], { output })).toBe(0);
      await eventually(() => grep('Pausing operations in favour of [<Peer ').length === 2, 'the freeze to pause the operator');
      expect(await touchCommand('resume', ['--peering', 'default', '-A'], { output })).toBe(0);
      await eventually(() => grep('Resuming operations after the pause.').length === 2, 'the resume');
    } finally {
      await runner.stop();
    }
    expect(runner.exitCode).toBe(0);
    expect(status()).toEqual({}); // every entry removed on exit
  });
});
