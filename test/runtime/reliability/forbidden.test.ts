/**
 * A 403 in the operator's own requests (R-SEC-1, R-SEC-2): with `get` denied on the served
 * resource, the re-reads that check a write whose response was lost cannot be made. The client
 * reports the 403 once and does not retry it; the write is resent instead (a merge-patch stores
 * the same values again, a JSON-patch whose resourceVersion test then fails is carried over), so
 * the handler still runs once and the object is fully handled — nothing is throttled, and no
 * line per object or per attempt repeats the denial.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

const FINALIZER = 'kopf.zalando.org/KopfFinalizerMarker';
const LHC = 'kopf.zalando.org/last-handled-configuration';

describe('R-SEC-2 re-reads the operator may not do', () => {
  const suite = fx.clusterPerTest();
  const { logs } = suite;
  afterEach(() => suite.cluster.auth.authorizer.setRules([]));

  const denyGet = (): void => suite.cluster.auth.authorizer.setRules([{ effect: 'deny', verbs: ['get'], resources: ['kopfexamples'] }]);
  const reads = (name: string): number[] =>
    suite.cluster.requests.filter((r) => r.method === 'GET' && r.verb === 'get' && r.resource === 'kopfexamples' && r.name === name).map((r) => r.code);

  it('R-SEC-2 R-SEC-1 writes whose responses were lost are resent when they cannot be re-read: one run, one report, nothing retried as transient', async () => {
    denyGet();
    const registry = new OperatorRegistry();
    const created: string[] = [];
    const deleted: string[] = [];
    on.create('kopfexamples', { registry }, function create_fn({ name }: { name: string }) {
      created.push(name);
      return { done: true };
    });
    on.delete('kopfexamples', { registry }, function delete_fn({ name }: { name: string }) {
      deleted.push(name);
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    // The finalizer's JSON-patch and the object's merge-patch (after the status's): stored, then
    // the connection breaks before the response.
    suite.cluster.faults.add({ method: 'PATCH', resource: 'kopfexamples', times: 1, action: { reset: 'after' } });
    suite.cluster.faults.add({ method: 'PATCH', resource: 'kopfexamples', skip: 2, times: 1, action: { reset: 'after' } });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => fx.annotationsOf(suite.cluster, 'kopf-example-1')[LHC] !== undefined && created.length > 0, 'the diff-base');
    await fx.atRest(logs, 'kopf-example-1');
    const stored = suite.cluster.store.get(fx.KEX, 'kopf-example-1', 'default') as { metadata: { finalizers?: string[] } };
    expect(stored.metadata.finalizers).toEqual([FINALIZER]);

    await suite.cluster.store.delete(fx.KEX, 'kopf-example-1', { namespace: 'default' });
    await fx.eventually(() => suite.cluster.store.get(fx.KEX, 'kopf-example-1', 'default') === undefined, 'the object to go');
    await fx.atRest(logs, 'kopf-example-1', { gone: true });
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(created).toEqual(['kopf-example-1']);
    expect(deleted).toEqual(['kopf-example-1']);
    // Each lost response led to one forbidden re-read, never retried.
    expect(reads('kopf-example-1')).toEqual([403, 403]);
    const reports = logs.grep('Forbidden (HTTP 403)', fx.ERROR);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatch(/user "[^"]+" may not get "kopfexamples\.kopf\.dev" in namespace "default": GET \S+\/kopfexamples\/kopf-example-1 — /);
    expect(logs.grep('ApiForbiddenError').filter((line) => line.includes('Request attempt'))).toEqual([]);
    expect(logs.grep('Throttling')).toEqual([]);
    expect(logs.records.filter((r) => r.level >= fx.WARNING && /forbidden/i.test(r.line))).toHaveLength(1);
  });
});
