/**
 * Pod termination: the devcluster runs no kubelet, yet operators and tests expect a gracefully
 * deleted pod to disappear eventually. So a pod marked for graceful deletion is deleted with grace 0
 * after `podTerminationDelayMs`, as a kubelet would once its containers stopped (D-BI-7, D-VERB-28).
 */
import type * as core from '../api/core.js';
import * as objects from '../api/objects.js';
import * as internal from './internal.js';
import type * as loop from './loop.js';

export function startPodTermination(c: core.Core, queue: loop.ControllerLoop, delayMs: number): void {
  c.store.subscribe((change) => {
    if (change.storage !== 'pods' || change.type === 'DELETED') return;
    const meta = objects.metaOf(change.object);
    if (meta['deletionTimestamp'] === undefined || Number(meta['deletionGracePeriodSeconds'] ?? 0) === 0) return;
    const namespace = objects.namespaceOf(change.object);
    const name = objects.nameOf(change.object);
    queue.enqueueLater(
      `pod-termination:${change.key}`,
      delayMs,
      async () => {
        const type = c.registry.find('', 'v1', 'pods');
        if (type) await internal.remove(c, type, namespace, name, 'kubelet', undefined, 0);
      },
      (ms, callback) => c.clock.schedule(ms, callback),
    );
  });
}
