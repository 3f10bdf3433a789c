/**
 * examples/02-children (Kopf's 02-children in TypeScript), loaded from its file as
 * `kopf-gen run examples/02-children/example.ts` loads it, run in-process with `KopfRunner` against
 * a devcluster given to the runner explicitly (`kubeconfig`). The create handler adopts a pod and
 * creates it with the typed client (R-HIER-5); the pod's uid lands in the parent's status; deleting
 * the parent lets the devcluster's garbage collector delete the pod.
 */
import * as path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { OperatorRegistry } from 'kopf-gen/runtime';
import { type DevCluster, KopfRunner } from 'kopf-gen/testing';

import { CRD, eventually, KEX, ROOT } from './support.js';
import { startTestCluster, type TestCluster } from '../support/cluster.js';

const PODS = { group: '', version: 'v1', resource: 'pods' } as const;

type Json = Record<string, unknown>;
type Meta = { name?: string; uid?: string; namespace?: string; generateName?: string; labels?: Record<string, string>; ownerReferences?: Json[] };

describe('examples/02-children', () => {
  let cluster: DevCluster;
  let kubeconfig: string;
  let test: TestCluster | undefined;

  beforeAll(async () => {
    test = await startTestCluster({ tls: false, crds: [CRD], prefix: 'kopf-example-02-' });
    ({ cluster, kubeconfig } = test);
  });
  afterAll(async () => {
    await test?.stop();
  });

  it('R-HIER-5 02-children: the handler creates an adopted pod with the typed client; the pod goes with its parent', async () => {
    const file = path.join(ROOT, 'examples', '02-children', 'example.ts');
    const runner = new KopfRunner(['run', '-A', '--standalone', '--verbose', file], { registry: new OperatorRegistry(), timeout: 10, kubeconfig });
    await runner.start();
    try {
      const parent = (await cluster.store.create({
        apiVersion: 'kopf.dev/v1',
        kind: 'KopfExample',
        metadata: { name: 'kopf-example-1', namespace: 'default', labels: { somelabel: 'somevalue' } },
        spec: { duration: '1m', field: 'value', items: ['item1', 'item2'] },
      })) as Json;
      const parentUid = (parent['metadata'] as Meta).uid!;
      const children = (): Json[] =>
        cluster.store.list(PODS, 'default').filter((pod) => ((pod['metadata'] as Meta).ownerReferences ?? []).some((ref) => ref['uid'] === parentUid));
      const status = (): Json | undefined => cluster.store.get(KEX, 'kopf-example-1', 'default')?.['status'] as Json | undefined;
      await eventually(() => status()?.['create_fn'] !== undefined, 'the handler result in the status');

      const pods = children();
      expect(pods).toHaveLength(1);
      const meta = pods[0]!['metadata'] as Meta;
      expect(meta.generateName).toBe('kopf-example-1-');
      expect(meta.namespace).toBe('default');
      expect(meta.labels).toEqual({ somelabel: 'somevalue' });
      expect(meta.ownerReferences).toEqual([
        {
          apiVersion: 'kopf.dev/v1',
          kind: 'KopfExample',
          name: 'kopf-example-1',
          uid: parentUid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      const container = ((pods[0]!['spec'] as Json)['containers'] as Json[])[0]!;
      expect(container['env']).toEqual([{ name: 'FIELD', value: 'value' }]);
      expect(container['args']).toEqual(['echo "FIELD=$FIELD"\nsleep 1m\n']);
      expect(status()!['create_fn']).toEqual({ children: [meta.uid] });
      expect(runner.output).toContain(`[default/kopf-example-1] Pod ${meta.name} is created.`);
      // The pod was created by the operator through its own client over HTTP.
      expect(cluster.requests.filter((r) => r.verb === 'create' && r.resource === 'pods')).toHaveLength(1);

      // Deleting the parent lets the garbage collector delete the child.
      await cluster.store.delete(KEX, 'kopf-example-1', { namespace: 'default' });
      await eventually(() => cluster.store.get(KEX, 'kopf-example-1', 'default') === undefined, 'the parent to be deleted');
      await eventually(() => children().length === 0, 'the child pod to be garbage-collected');
    } finally {
      await runner.stop();
    }
    expect(runner.exitCode).toBe(0);
  });
});
