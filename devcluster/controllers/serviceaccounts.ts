/**
 * The service-account controller: every namespace gets a `default` ServiceAccount shortly after it
 * is created, as in a real cluster, so that manifests and tools that assume one find it (D-BI-11).
 */
import type * as core from '../api/core.js';
import * as creating from '../api/creating.js';
import * as statuses from '../server/statuses.js';
import * as revisions from '../store/revisions.js';
import * as internal from './internal.js';
import type * as loop from './loop.js';

export function startServiceAccounts(c: core.Core, queue: loop.ControllerLoop): void {
  c.store.subscribe((change) => {
    if (change.storage !== 'namespaces' || change.type !== 'ADDED') return;
    const ns = change.key;
    queue.enqueue(`sa:${ns}`, async () => {
      if (c.store.get('serviceaccounts', revisions.objectKey(ns, 'default'))) return;
      const type = c.registry.find('', 'v1', 'serviceaccounts');
      if (!type) return;
      try {
        await creating.create(c, internal.systemRequest(type, ns, undefined, 'service-account-controller'), {
          apiVersion: 'v1',
          kind: 'ServiceAccount',
          metadata: { name: 'default', namespace: ns },
        });
      } catch (err) {
        // A namespace that is already terminating or gone, or an existing account, needs nothing.
        if (err instanceof statuses.ApiError && [403, 404, 409].includes(err.code)) return;
        throw err;
      }
    });
  });
}
