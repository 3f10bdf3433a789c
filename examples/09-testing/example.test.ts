/**
 * The test of the operator in example.ts, as a project would write it for its own operator: the
 * operator runs in the test process with `KopfRunner` (as `kopf-gen run` would run it), against
 * the embedded devcluster over loopback HTTP, on a `VirtualClock` that the test moves.
 *
 * Nothing sleeps in real time: the test waits for what must happen (a log line, an event, a status
 * field) with `vi.waitFor`, and moves the operator's time with `clock.advance()` to see its timer
 * fire. In this repository, it runs from test/examples/09-testing.test.ts in `npm test`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import { OperatorRegistry } from 'kopf-gen/runtime';
import { DevCluster, KopfRunner, VirtualClock } from 'kopf-gen/testing';

const OPERATOR = path.join(import.meta.dirname, 'example.ts');
const CRD = path.join(import.meta.dirname, '../../fixtures/crds/kopfexamples.yaml');
const KEX = { group: 'kopf.dev', version: 'v1', resource: 'kopfexamples' } as const;
const EVENTS = { group: '', version: 'v1', resource: 'events' } as const;
const WAIT = { timeout: 10_000, interval: 10 }; // real time, for a loaded machine

describe('examples/09-testing', () => {
  let cluster: DevCluster;
  let kubeconfig: string;

  beforeAll(async () => {
    cluster = await DevCluster.start({ tls: false, crds: [CRD] });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-example-09-'));
    kubeconfig = cluster.writeKubeconfig(path.join(dir, 'kubeconfig'));
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('A-11 09-testing: the create handler logs, its log lines become events, and the timer beats every 10 virtual minutes', async () => {
    const clock = new VirtualClock({ start: Date.parse('2030-01-01T00:00:00Z') });
    // A new registry per runner: the module's handlers register into it at every start.
    const runner = new KopfRunner(['run', '--all-namespaces', '--standalone', '--verbose', OPERATOR], {
      registry: new OperatorRegistry(),
      kubeconfig,
      clock,
      timeout: 10,
    });
    await runner.start();
    const status = (): Record<string, unknown> | undefined => cluster.store.get(KEX, 'kopf-example-1', 'default')?.['status'] as Record<string, unknown>;
    try {
      const created = await cluster.store.create({
        apiVersion: 'kopf.dev/v1',
        kind: 'KopfExample',
        metadata: { name: 'kopf-example-1', namespace: 'default' },
        spec: { field: 'value' },
      });
      const uid = (created['metadata'] as { uid: string }).uid;

      // The handler's line and the framework's own lines, in the captured output.
      await vi.waitFor(() => expect(runner.output).toContain('[default/kopf-example-1] Creation is processed: 1 succeeded; 0 failed.'), WAIT);
      expect(runner.output).toContain('[default/kopf-example-1] Creation is in progress:');
      expect(runner.output).toContain('[default/kopf-example-1] Something was logged here.');

      // The log lines of INFO and above, posted as events of the object; no DEBUG line among them.
      const events = (): Array<[unknown, unknown, unknown]> =>
        cluster.store
          .list(EVENTS, 'default')
          .filter((event) => (event['involvedObject'] as { uid?: string }).uid === uid)
          .map((event) => [event['type'], event['reason'], event['message']]);
      await vi.waitFor(
        () =>
          expect(events()).toEqual(
            expect.arrayContaining([
              ['Normal', 'Logging', 'Something was logged here.'],
              ['Normal', 'Logging', "Handler 'create_fn' succeeded."],
              ['Normal', 'Logging', 'Creation is processed: 1 succeeded; 0 failed.'],
            ]),
          ),
        WAIT,
      );
      expect(events().filter(([, , message]) => String(message).includes('is in progress'))).toEqual([]);

      // The timer beats at once, then every 600 seconds of the operator's time.
      await vi.waitFor(() => expect(status()?.['lastSeen']).toBe('2030-01-01T00:00:00.000Z'), WAIT);
      await clock.advance(599_000);
      expect(status()?.['lastSeen']).toBe('2030-01-01T00:00:00.000Z');
      await clock.advance(1_000);
      await vi.waitFor(() => expect(status()?.['lastSeen']).toBe('2030-01-01T00:10:00.000Z'), WAIT);
      await clock.advance(30 * 60_000);
      await vi.waitFor(() => expect(status()?.['lastSeen']).toBe('2030-01-01T00:40:00.000Z'), WAIT);

      await cluster.store.delete(KEX, 'kopf-example-1', { namespace: 'default' });
      await vi.waitFor(() => expect(runner.output).toContain('[default/kopf-example-1] Deleted, really deleted, and we are notified.'), WAIT);
    } finally {
      await runner.stop();
    }

    // The operator did not fail, neither at the start nor on the way.
    expect(runner.exception).toBeNull();
    expect(runner.exitCode).toBe(0);
  });
});
