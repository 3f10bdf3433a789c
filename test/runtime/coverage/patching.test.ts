/**
 * Patching through a running operator: vanished objects (R-PATCH-4), the inconsistency warning
 * when the server prunes what was patched (R-PATCH-5), and one patch per cycle, none for `DELETED`
 * events (R-PATCH-6).
 */
import { afterEach, describe, expect, it } from 'vitest';
import * as YAML from 'yaml';

import { DevCluster } from '../../../devcluster/testing.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as application from '../../../runtime/core/actions/application.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

type Json = Record<string, unknown>;
const LHC = 'kopf.zalando.org/last-handled-configuration';

/** The reference CRD, but with a structural status schema that prunes unknown fields. */
function pruningCrd(): Json {
  const crd = YAML.parse(fx.KOPF_CRD) as { spec: { versions: { schema: { openAPIV3Schema: { properties: Json } } }[] } };
  crd.spec.versions[0]!.schema.openAPIV3Schema.properties['status'] = {
    type: 'object',
    properties: { create_fn: { type: 'object', properties: { known: { type: 'string' } } } },
  };
  return crd as unknown as Json;
}

function patchRequests(
  cluster: DevCluster,
  name = 'kopf-example-1',
): { subresource: string | undefined; type: string | undefined; code: number; body: unknown }[] {
  return cluster.requests
    .filter((r) => r.method === 'PATCH' && r.resource === 'kopfexamples' && r.name === name)
    .map((r) => ({ subresource: r.subresource, type: r.headers.contentType, code: r.code, body: JSON.parse(r.body ?? 'null') as unknown }));
}

describe('patching', () => {
  let cluster: DevCluster | undefined;
  const logs = new fx.LogCapture();
  afterEach(async () => {
    logs.uninstall();
    await cluster?.stop();
    cluster = undefined;
  });

  it('R-PATCH-4 an object gone before the patch: the 404 stops the application silently (one request, a DEBUG line, no error)', async () => {
    cluster = await fx.startCluster();
    logs.install();
    const c = cluster;
    const registry = new OperatorRegistry();
    on.create('kopfexamples', { registry }, async function create_fn({ name, patch }: { name: string; patch: { fns: ((b: Json) => void)[] } }) {
      if (name === 'kopf-example-1') await c.store.delete(fx.KEX, name, { namespace: 'default' });
      patch.fns.push((body) => {
        ((body['metadata'] as Json)['labels'] as Json)['touched'] = 'yes';
      });
      return { message: 'hello' };
    });
    const op = await fx.startOperator({ cluster, registry });
    await cluster.store.create(fx.kopfExample());
    await fx.eventually(() => logs.grep('Deleted, really deleted, and we are notified.').length > 0, 'the DELETED event');
    // The operator goes on: another object is handled in full.
    await cluster.store.create(fx.kopfExample('kopf-example-2'));
    await fx.eventually(() => fx.annotationsOf(cluster!, 'kopf-example-2')[LHC] !== undefined, 'the other object');
    await fx.atRest(logs, 'kopf-example-2');
    await op.stop();

    expect(op.error).toBeUndefined();
    const requests = patchRequests(cluster);
    expect(requests.map((r) => [r.subresource, r.type, r.code])).toEqual([['status', 'application/merge-patch+json', 404]]);
    const lines = logs.records.filter((r) => r.line.startsWith('[default/kopf-example-1] '));
    expect(lines.filter((r) => r.message === 'Patching was skipped: the object does not exist anymore.').map((r) => r.level)).toEqual([fx.DEBUG]);
    expect(lines.filter((r) => r.level >= fx.WARNING).map((r) => r.line)).toEqual([]);
    expect(logs.grep('Throttling')).toEqual([]);
  });

  it('R-PATCH-4 a 404 on a later request (the object) skips the rest of the patch: no JSON-patch follows', async () => {
    cluster = await fx.startCluster();
    logs.install();
    const registry = new OperatorRegistry();
    on.create('kopfexamples', { registry }, function create_fn({ patch }: { patch: { fns: ((b: Json) => void)[] } }) {
      patch.fns.push((body) => {
        ((body['metadata'] as Json)['labels'] as Json)['touched'] = 'yes';
      });
      return { message: 'hello' };
    });
    const op = await fx.startOperator({ cluster, registry });
    // The object's merge-patch, after the status's (R-PATCH-10).
    cluster.faults.add({ method: 'PATCH', resource: 'kopfexamples', skip: 1, times: 1, action: { respond: { code: 404 } } });
    await cluster.store.create(fx.kopfExample());
    await fx.eventually(() => logs.grep('Patching was skipped: the object does not exist anymore.').length > 0, 'the skip');
    await fx.atRest(logs, 'kopf-example-1');
    await op.stop();

    expect(op.error).toBeUndefined();
    // No JSON-patch follows the 404: the next request is of the next cycle.
    expect(
      patchRequests(cluster)
        .map((r) => [r.subresource, r.type, r.code])
        .slice(0, 3),
    ).toEqual([
      ['status', 'application/merge-patch+json', 200],
      [undefined, 'application/merge-patch+json', 404],
      ['status', 'application/merge-patch+json', 200],
    ]);
    // The object is read to confirm it is gone; it is not, so it is not taken for vanished: its
    // next event (the stored status's) is handled, and the handler is redone (R-PATCH-9).
    const reads = cluster.requests.filter((r) => r.method === 'GET' && r.verb === 'get' && r.name === 'kopf-example-1');
    expect(reads.map((r) => r.code)).toEqual([200]);
    expect(logs.grep('The event is skipped: the object is known to be gone.')).toEqual([]);
    expect(logs.records.filter((r) => r.level >= fx.WARNING).map((r) => r.line)).toEqual([]);
  });

  it('R-PATCH-5 a status result pruned by a structural schema is warned about as an inconsistency', async () => {
    cluster = await DevCluster.start({ tls: false });
    await cluster.load([pruningCrd()]);
    logs.install();
    const registry = new OperatorRegistry();
    on.create('kopfexamples', { registry }, function create_fn() {
      return { message: 'hello world', known: 'kept' };
    });
    const op = await fx.startOperator({ cluster, registry });
    await cluster.store.create(fx.kopfExample());
    await fx.eventually(() => logs.grep('Creation is processed:').length > 0, 'the creation');
    await fx.eventually(() => logs.grep('Merge-patching finished with inconsistencies').length > 0, 'the warning');
    await fx.atRest(logs, 'kopf-example-1');
    await op.stop();

    expect(op.error).toBeUndefined();
    const status = (cluster.store.get(fx.KEX, 'kopf-example-1', 'default') as Json)['status'];
    expect(status).toEqual({ create_fn: { known: 'kept' } }); // the devcluster pruned the unknown field
    const warnings = logs.records.filter((r) => r.message.startsWith('Merge-patching finished with inconsistencies: '));
    expect(warnings.map((r) => [r.level, r.line.split(': ')[0]])).toEqual([
      [fx.WARNING, '[default/kopf-example-1] Merge-patching finished with inconsistencies'],
    ]);
    const diff = JSON.parse(warnings[0]!.message.slice('Merge-patching finished with inconsistencies: '.length)) as unknown[][];
    expect(diff.map((item) => item[1])).toEqual([['status', 'create_fn', 'message']]);
    expect(diff[0]![2]).toBe('hello world');
    expect(diff[0]![3] ?? null).toBeNull();
    // The main merge-patch (the diff-base) was stored as sent: no warning for it.
    expect(fx.annotationsOf(cluster, 'kopf-example-1')[LHC]).toBeDefined();
  });

  it('R-PATCH-5 harmless removals (empty annotations, labels, finalizers) are not inconsistencies; other missing fields are', () => {
    const response = { metadata: { name: 'x' }, spec: {} };
    expect(application.inconsistencies({ metadata: { annotations: {}, labels: {}, finalizers: [] } }, response)).toEqual([]);
    expect(application.inconsistencies({ metadata: { annotations: { a: null } } }, response)).toEqual([]);
    expect(application.inconsistencies({ spec: { list: [] } }, response)).toEqual([['spec', 'list']]);
    expect(application.inconsistencies({ status: { fn: { message: 'm' } } }, response)).toEqual([['status', 'fn', 'message']]);
    expect(application.inconsistencies({ metadata: { labels: { a: 'b' } } }, { metadata: { labels: { a: 'c' } } })).toEqual([['metadata', 'labels', 'a']]);
  });

  it('R-PATCH-6 framework and handler changes of one cycle go out as one patch; nothing is patched for DELETED events', async () => {
    cluster = await fx.startCluster();
    logs.install();
    const registry = new OperatorRegistry();
    on.create('kopfexamples', { registry }, function create_fn({ patch }: { patch: { metadata: { labels: Json; annotations: Json } } }) {
      patch.metadata.labels['handled'] = 'yes';
      patch.metadata.annotations['example.com/note'] = 'created';
      return { message: 'hello world' };
    });
    // Returns a result only for the DELETED event: it would need a patch, which must not be sent.
    const eventTypes: (string | null)[] = [];
    on.event('kopfexamples', { registry }, function ev_fn({ type }: { type: string | null }) {
      eventTypes.push(type);
      return type === 'DELETED' ? { gone: true } : null;
    });
    const op = await fx.startOperator({ cluster, registry });
    await cluster.store.create(fx.kopfExample());
    await fx.eventually(() => logs.grep('Something has changed, but we are not interested').length > 0, 'the noop');
    await fx.atRest(logs, 'kopf-example-1');
    const creation = patchRequests(cluster);
    const patchesBefore = cluster.requests.filter((r) => r.method === 'PATCH').length;
    await cluster.store.delete(fx.KEX, 'kopf-example-1', { namespace: 'default' });
    await fx.eventually(() => eventTypes.includes('DELETED'), 'the DELETED event');
    await fx.eventually(() => logs.grep('Deleted, really deleted, and we are notified.').length > 0, 'the gone cause');
    await fx.atRest(logs, 'kopf-example-1', { gone: true });
    await op.stop();

    expect(op.error).toBeUndefined();
    // One patch per cycle: the creation cycle sends the status merge-patch, then the object's
    // merge-patch (the handler's labels and annotations with the framework's diff-base); the handler's labels
    // changed the essence, so the next cycle (an update without handlers) stores the diff-base again.
    const cycles = logs.records
      .map(
        (r) =>
          /^(Creation is in progress|Updating is in progress|Merge-patching the resource|Merge-patching the status|JSON-patching the resource)/.exec(
            r.message,
          )?.[1],
      )
      .filter((m) => m !== undefined);
    expect(cycles).toEqual([
      'Creation is in progress',
      'Merge-patching the status',
      'Merge-patching the resource',
      'Updating is in progress',
      'Merge-patching the resource',
    ]);
    expect(creation.map((r) => [r.subresource, r.type])).toEqual([
      ['status', 'application/merge-patch+json'],
      [undefined, 'application/merge-patch+json'],
      [undefined, 'application/merge-patch+json'],
    ]);
    expect(Object.keys((creation[2]!.body as { metadata: { annotations: Json } }).metadata.annotations)).toEqual([LHC]);
    const main = creation[1]!.body as { metadata: { labels: Json; annotations: Json } };
    expect(main.metadata.labels).toEqual({ handled: 'yes' });
    expect(Object.keys(main.metadata.annotations).sort()).toEqual(['example.com/note', LHC].sort());
    expect(creation[0]!.body).toEqual({ status: { create_fn: { message: 'hello world' } } });
    // Nothing for the DELETED event.
    expect(cluster.requests.filter((r) => r.method === 'PATCH').length).toBe(patchesBefore);
    expect(logs.grep('Patching was skipped')).toEqual([]);
  });
});
