/**
 * examples/19-client-node, loaded from its file as `kopf-gen run examples/19-client-node/example.ts`
 * loads it, run in-process with `KopfRunner` on a virtual clock against a devcluster: the create
 * handler makes the object's ConfigMap through `@kubernetes/client-node` with the operator's
 * credentials (R-CLIENT-502) — client-node's request, not the operator's client — and the timer
 * reads it back through client-node every 10 virtual seconds.
 */
import { describe, expect, it } from 'vitest';

import { VirtualClock } from 'kopf-gen/testing';

import { eventually, KEX, objectMessages, referenceObject, START, startExample, useExampleCluster } from './support.js';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' } as const;

type Meta = { name?: string; uid?: string; ownerReferences?: { uid?: string }[] };

describe('examples/19-client-node', () => {
  const example = useExampleCluster();

  it('R-CLIENT-502 19-client-node: the handler creates an owned ConfigMap with client-node; the timer reads it back', async () => {
    const clock = new VirtualClock({ start: START });
    const runner = await startExample('19-client-node', example.kubeconfig, { clock });
    try {
      const parent = await example.cluster.store.create(referenceObject());
      const parentUid = (parent['metadata'] as Meta).uid;
      const messages = (): string[] => objectMessages(runner, 'default/kopf-example-1');
      await eventually(() => messages().includes('Creation is processed: 1 succeeded; 0 failed.'), 'the creation');
      const children = example.cluster.store.list(CONFIGMAPS, 'default').filter((cm) => (cm['metadata'] as Meta).ownerReferences?.[0]?.uid === parentUid);
      expect(children).toHaveLength(1);
      const name = (children[0]!['metadata'] as Meta).name!;
      expect(children[0]!['data']).toEqual({ field: 'value' });
      expect(messages()).toContain(`ConfigMap ${name} is created with @kubernetes/client-node.`);
      const status = (): Record<string, unknown> | undefined =>
        example.cluster.store.get(KEX, 'kopf-example-1', 'default')?.['status'] as Record<string, unknown> | undefined;
      await eventually(() => status()?.['create_fn'] !== undefined, 'the result in the status');
      expect(status()!['create_fn']).toEqual({ configmap: name });
      // client-node sent it, not the operator's own client.
      const posts = example.cluster.requests.filter((r) => r.verb === 'create' && r.resource === 'configmaps');
      expect(posts).toHaveLength(1);
      expect(posts[0]!.headers.userAgent ?? '').not.toMatch(/^kopf-ts\//);

      await clock.advance(10_000);
      await eventually(() => messages().includes(`ConfigMap ${name} holds field=value.`), 'the timer reading through client-node');
      expect(example.cluster.requests.filter((r) => r.verb === 'get' && r.resource === 'configmaps' && r.name === name).length).toBeGreaterThan(0);
    } finally {
      await runner.stop();
    }
    expect(runner.exitCode).toBe(0);
  });
});
