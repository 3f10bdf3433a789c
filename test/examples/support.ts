/**
 * What the tests of examples/ share: where the repository and the examples' CRD are, a devcluster
 * for a test file with a kubeconfig to reach it, an example started in-process as
 * `kopf-gen run -A --standalone --verbose examples/NN-name/example.ts` starts it (on a virtual
 * clock unless told otherwise), the log messages it printed about one object, and a real-time wait
 * for what such an operator does against the devcluster (its I/O is real even when its clock is
 * virtual).
 */
import * as path from 'node:path';
import { afterAll, beforeAll } from 'vitest';

import { OperatorRegistry } from 'kopf-gen/runtime';
import { type DevCluster, KopfRunner, type KopfRunnerOptions, VirtualClock } from 'kopf-gen/testing';

import { startTestCluster, type TestCluster } from '../support/cluster.js';
export { eventually } from '../support/waiting.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const CRD = path.join(ROOT, 'fixtures/crds/kopfexamples.yaml');
export const KEX = { group: 'kopf.dev', version: 'v1', resource: 'kopfexamples' } as const;
/** Where the examples' virtual clocks start. */
export const START = Date.parse('2030-01-01T00:00:00Z');

/** What a test file started with `useExampleCluster()` reads in its tests. */
export interface ExampleCluster {
  /** The file's devcluster. */
  readonly cluster: DevCluster;
  /** The path of a kubeconfig for it. */
  readonly kubeconfig: string;
}

/**
 * Registers the `beforeAll`/`afterAll` hooks of an example's test file: a devcluster (plain HTTP)
 * with the examples' CRD (or the given `crds`) and its kubeconfig in a fresh temporary folder;
 * the cluster stops after the file's last test. Read `cluster` and `kubeconfig` inside the tests.
 */
export function useExampleCluster(options: { crds?: string[] } = {}): ExampleCluster {
  let test: TestCluster | undefined;
  beforeAll(async () => {
    test = await startTestCluster({ tls: false, crds: options.crds ?? [CRD], prefix: 'kopf-example-' });
  });
  afterAll(async () => {
    await test?.stop();
  });
  const started = (): TestCluster => {
    if (test === undefined) throw new Error('The devcluster exists only while the tests of the file run.');
    return test;
  };
  return {
    get cluster() {
      return started().cluster;
    },
    get kubeconfig() {
      return started().kubeconfig;
    },
  };
}

/** The reference object of the runtime specification (`fixtures/objects/kopf-example-1.yaml`) in `default`, as a fresh body. */
export function referenceObject(): Record<string, unknown> {
  return {
    apiVersion: 'kopf.dev/v1',
    kind: 'KopfExample',
    metadata: { name: 'kopf-example-1', namespace: 'default', labels: { somelabel: 'somevalue' }, annotations: { someannotation: 'somevalue' } },
    spec: { duration: '1m', field: 'value', items: ['item1', 'item2'] },
  };
}

/**
 * Starts `examples/<name>/example.ts` in-process with a fresh registry, a 10-second start/stop
 * limit and a virtual clock at `START`; `options` override any of these (a `clock` of the test's
 * own, `settings`, …). Resolves once the operator is ready.
 */
export async function startExample(name: string, kubeconfig: string | undefined, options: KopfRunnerOptions = {}): Promise<KopfRunner> {
  const file = path.join(ROOT, 'examples', name, 'example.ts');
  const runner = new KopfRunner(['run', '-A', '--standalone', '--verbose', file], {
    registry: new OperatorRegistry(),
    clock: new VirtualClock({ start: START }),
    timeout: 10,
    kubeconfig,
    ...options,
  });
  await runner.start();
  return runner;
}

/** The messages a runner logged about an object (`namespace/name`), without the `[namespace/name] ` prefix, in order. */
export function objectMessages(runner: KopfRunner, object: string): string[] {
  const prefix = `[${object}] `;
  return runner.output
    .split('\n')
    .map((line) => {
      const at = line.indexOf(prefix);
      return at < 0 ? undefined : line.slice(at + prefix.length);
    })
    .filter((m): m is string => m !== undefined);
}
