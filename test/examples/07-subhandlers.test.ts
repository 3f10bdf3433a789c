/**
 * A-13 with examples/07-subhandlers (Kopf's 07-subhandlers in TypeScript): loaded from its file as
 * `kopf-gen run examples/07-subhandlers/example.ts` loads it, run in-process with `KopfRunner`
 * against a devcluster with the reference CRD. The parent runs twice, each sub-handler once; the
 * first cycle's records are Kopf's, byte for byte in what they say (`"message":"None"` for the
 * waiting parent); at the end all three records are removed.
 */
import * as path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { OperatorRegistry } from 'kopf-gen/runtime';
import { type DevCluster, KopfRunner } from 'kopf-gen/testing';

import { CRD, eventually, KEX, ROOT } from './support.js';
import { startTestCluster, type TestCluster } from '../support/cluster.js';

type Json = Record<string, unknown>;

describe('examples/07-subhandlers', () => {
  let cluster: DevCluster;
  let test: TestCluster | undefined;

  beforeAll(async () => {
    test = await startTestCluster({ tls: false, crds: [CRD], exportKubeconfig: true, prefix: 'kopf-example-07-' });
    cluster = test.cluster;
  });
  afterAll(async () => {
    await test?.stop();
  });

  it("A-13 07-subhandlers: create_fn twice, create_fn/item1 and create_fn/item2 once each; Kopf's records; all purged at the end", async () => {
    const file = path.join(ROOT, 'examples', '07-subhandlers', 'example.ts');
    const runner = new KopfRunner(['run', '-A', '--standalone', '--verbose', file], { registry: new OperatorRegistry(), timeout: 10 });
    await runner.start();
    try {
      await cluster.store.create({
        apiVersion: 'kopf.dev/v1',
        kind: 'KopfExample',
        metadata: { name: 'kopf-example-1', namespace: 'default', labels: { somelabel: 'somevalue' } },
        spec: { items: ['item1', 'item2'] },
      });
      const lines = (): string[] => runner.output.split('\n').filter((line) => line.includes('[default/kopf-example-1]'));
      const count = (text: string): number => lines().filter((line) => line.includes(text)).length;
      await eventually(() => count('Creation is processed: 1 succeeded; 0 failed.') === 1, 'the creation to be processed');

      expect(count('=== Handling creation for item1. ===')).toBe(1);
      expect(count('=== Handling creation for item2. ===')).toBe(1);
      expect(count("Handler 'create_fn/item1' succeeded.")).toBe(1);
      expect(count("Handler 'create_fn/item2' succeeded.")).toBe(1);
      expect(count("Handler 'create_fn' has unfinished sub-handlers. Will retry soon.")).toBe(1);
      expect(count("Handler 'create_fn' succeeded.")).toBe(1);

      // The first cycle's patch of the object: the parent waits ("message":"None"), item1 is done, item2 is pending.
      const patches = cluster.requests
        .filter((r) => r.verb === 'patch' && r.resource === 'kopfexamples' && r.subresource === undefined && r.name === 'kopf-example-1')
        .map((r) => (JSON.parse(r.body!) as { metadata?: { annotations?: Record<string, string | null> } }).metadata?.annotations ?? {});
      const first = patches.find((annotations) => typeof annotations['kopf.zalando.org/create_fn'] === 'string')!;
      const record = (key: string): Json => JSON.parse(first[`kopf.zalando.org/${key}`]!) as Json;
      expect(first['kopf.zalando.org/create_fn']).toMatch(
        /^\{"started":"[^"]+","delayed":"[^"]+","purpose":"create","retries":1,"success":false,"failure":false,"message":"None","subrefs":\["create_fn\/item1","create_fn\/item2"\]\}$/,
      );
      expect(record('create_fn.item1')).toMatchObject({ retries: 1, success: true, failure: false });
      expect(record('create_fn.item2')).toMatchObject({ retries: 0, success: false, failure: false });

      // At the end, all three records are removed.
      const records = (): string[] =>
        Object.keys((cluster.store.get(KEX, 'kopf-example-1', 'default')!['metadata'] as { annotations?: Record<string, string> }).annotations ?? {}).filter(
          (key) => key.startsWith('kopf.zalando.org/create_fn'),
        );
      await eventually(() => records().length === 0, 'the records to be removed');
    } finally {
      await runner.stop();
    }
    expect(runner.exitCode).toBe(0);
  });
});
