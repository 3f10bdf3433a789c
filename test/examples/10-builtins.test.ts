/**
 * A-29 with examples/10-builtins (Kopf's 10-builtins in TypeScript): loaded from its file as
 * `kopf-gen run examples/10-builtins/example.ts` loads it, run in-process with `KopfRunner` on a
 * virtual clock against a devcluster. Pods outside the system namespaces are handled (finalizer,
 * diff-base, never their status) and deleted by the operator 30 virtual seconds later, unless they
 * are deleted before — then their killer is cancelled; pods in `kube-*` are left alone; services
 * get an annotation with their ports.
 */
import { describe, expect, it } from 'vitest';

import { VirtualClock } from 'kopf-gen/testing';

import { eventually, START, startExample, useExampleCluster } from './support.js';

const PODS = { group: '', version: 'v1', resource: 'pods' } as const;
const SERVICES = { group: '', version: 'v1', resource: 'services' } as const;
const FINALIZER = 'kopf.zalando.org/KopfFinalizerMarker';
const DIFF_BASE = 'kopf.zalando.org/last-handled-configuration';

type Meta = { name: string; finalizers?: string[]; annotations?: Record<string, string> };

describe('examples/10-builtins', () => {
  const example = useExampleCluster({ crds: [] });

  it('A-29 10-builtins: pods are killed after 30 s unless deleted before; kube-* pods are left alone; services are annotated', async () => {
    const clock = new VirtualClock({ start: START });
    const runner = await startExample('10-builtins', example.kubeconfig, { clock });
    const lines = (object: string): string[] => runner.output.split('\n').filter((line) => line.includes(`[${object}] `));
    const count = (object: string, text: string): number => lines(object).filter((line) => line.includes(`[${object}] ${text}`)).length;
    const meta = (namespace: string, name: string): Meta | undefined => example.cluster.store.get(PODS, name, namespace)?.['metadata'] as Meta | undefined;
    const pod = async (namespace: string): Promise<string> => {
      const created = await example.cluster.store.create({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { generateName: 'kopf-pod-', namespace },
        spec: { containers: [{ name: 'the-only-one', image: 'busybox', command: ['sh', '-x', '-c', 'sleep 1'] }] },
      });
      return (created['metadata'] as Meta).name;
    };
    try {
      // A system pod first, then two pods in `default`: one to be killed, one deleted before.
      const system = await pod('kube-system');
      const victim = await pod('default');
      const survivor = await pod('default');
      for (const name of [victim, survivor]) {
        await eventually(() => count(`default/${name}`, 'Creation is processed: 1 succeeded; 0 failed.') === 1, `the creation of ${name}`);
        await eventually(() => count(`default/${name}`, "Daemon 'pod_killer' is invoked.") === 1, `the killer of ${name}`);
        expect(count(`default/${name}`, '=== Pod killing happens in 30s (images: busybox).')).toBe(1);
        // While alive, the pod carries the finalizer and the diff-base (patched after the log line).
        await eventually(() => meta('default', name)?.annotations?.[DIFF_BASE] !== undefined, `the diff-base of ${name}`);
        expect(meta('default', name)?.finalizers).toEqual([FINALIZER]);
      }
      await clock.advance(0);

      // 5 seconds later, the survivor is deleted: its killer is cancelled.
      await clock.advance(5_000);
      await example.cluster.store.delete(PODS, survivor, { namespace: 'default' });
      await eventually(() => count(`default/${survivor}`, '=== Pod killing is cancelled!') === 1, 'the cancelled killer');
      await eventually(() => meta('default', survivor) === undefined, 'the survivor to be deleted');
      expect(meta('default', victim)).toBeDefined();

      // 30 seconds after its creation, the victim is deleted by the operator.
      await clock.advance(24_999);
      expect(count(`default/${victim}`, '=== Pod killing happens NOW!')).toBe(0);
      await clock.advance(1);
      await eventually(() => count(`default/${victim}`, '=== Pod killing happens NOW!') === 1, 'the killing');
      await eventually(() => meta('default', victim) === undefined, 'the victim to be deleted');
      const deletions = example.cluster.requests.filter((r) => r.verb === 'delete' && r.resource === 'pods');
      expect(deletions.map((r) => [r.name, (r.headers.userAgent ?? '').startsWith('kopf-ts/')])).toEqual([[victim, true]]);
      expect(count(`default/${victim}`, '=== Pod killing is cancelled!')).toBe(0);

      // The system pod is untouched: no handler, no finalizer, no annotation — also a minute later.
      await clock.advance(60_000);
      expect(lines(`kube-system/${system}`)).toEqual([]);
      expect(meta('kube-system', system)?.finalizers).toBeUndefined();
      expect(meta('kube-system', system)?.annotations).toBeUndefined();

      // The operator never wrote to the pods' status.
      expect(example.cluster.requests.filter((r) => r.resource === 'pods' && r.subresource === 'status' && r.verb === 'patch')).toEqual([]);

      // Services get their ports in an annotation.
      await example.cluster.store.create({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace: 'default' },
        spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
      });
      const annotations = (): Record<string, string> | undefined => (example.cluster.store.get(SERVICES, 'web', 'default')?.['metadata'] as Meta).annotations;
      await eventually(() => annotations()?.['example.kopf.dev/ports'] !== undefined, 'the annotation of the service');
      expect(annotations()?.['example.kopf.dev/ports']).toBe('80/TCP');
      expect(count('default/web', '=== Service of type ClusterIP exposes 80/TCP.')).toBe(1);
      await example.cluster.store.delete(SERVICES, 'web', { namespace: 'default' });
      await example.cluster.store.delete(PODS, system, { namespace: 'kube-system' });
    } finally {
      await runner.stop();
    }
    expect(runner.exitCode).toBe(0);
    expect(runner.exception).toBeNull();
  });
});
