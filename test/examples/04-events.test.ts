/**
 * examples/04-events (Kopf's 04-events in TypeScript), loaded from its file as
 * `kopf-gen run examples/04-events/example.ts` loads it, run in-process with `KopfRunner` on a
 * virtual clock against a devcluster with the examples' CRD. It proves what the example's README
 * promises: the four events the handler posts, with Kopf's payload, stamped with the operator's
 * clock; and that a higher posting level leaves out the `Normal` one.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { OperatorSettings } from 'kopf-gen/runtime';
import { eventually, KEX, START, startExample, useExampleCluster, referenceObject } from './support.js';

type Json = Record<string, unknown>;

const EVENTS = { group: '', version: 'v1', resource: 'events' } as const;

describe('examples/04-events', () => {
  const example = useExampleCluster();
  afterEach(async () => {
    if (example.cluster.store.get(KEX, 'kopf-example-1', 'default')) await example.cluster.store.delete(KEX, 'kopf-example-1', { namespace: 'default' });
    example.cluster.requests.clear();
    for (const event of example.cluster.store.list(EVENTS, 'default')) {
      await example.cluster.store.delete(EVENTS, String((event['metadata'] as Json)['name']), { namespace: 'default' });
    }
  });

  /** Runs the example, creates the object, waits for `expected` events about it, then deletes it. */
  async function run(settings: OperatorSettings | undefined, expected: number): Promise<{ uid: string; events: Json[]; posted: Json[] }> {
    const runner = await startExample('04-events', example.kubeconfig, settings ? { settings } : {});
    try {
      const created = await example.cluster.store.create(referenceObject());
      const uid = String((created['metadata'] as Json)['uid']);
      const about = (): Json[] => example.cluster.store.list(EVENTS, 'default').filter((e) => (e['involvedObject'] as Json)['uid'] === uid);
      // The events are posted one by one in the order they were queued: the `Error` one is the last.
      await eventually(() => about().some((e) => e['type'] === 'Error'), 'the last event to be posted');
      expect(runner.output).toContain("[default/kopf-example-1] Handler 'create_fn' succeeded.");
      await example.cluster.store.delete(KEX, 'kopf-example-1', { namespace: 'default' });
      await eventually(() => runner.output.includes('[default/kopf-example-1] Deleted, really deleted, and we are notified.'), 'the deletion');
      expect(about()).toHaveLength(expected);
      // The stored events come sorted by name; the requests show the order they were posted in.
      const posted = example.cluster.requests.filter((r) => r.verb === 'create' && r.resource === 'events').map((r) => JSON.parse(r.body!) as Json);
      return { uid, events: about(), posted };
    } finally {
      await runner.stop();
      expect(runner.exitCode).toBe(0);
      expect(runner.exception).toBeNull();
    }
  }

  it("A-10 04-events: one event of each kind, with Kopf's payload, in the order posted", async () => {
    const { uid, events, posted } = await run(undefined, 4);
    expect(posted.map((e) => [e['type'], e['reason'], e['message']])).toEqual([
      ['SomeType', 'SomeReason', 'Some message'],
      ['Normal', 'SomeReason', 'Some message'],
      ['Warning', 'SomeReason', 'Some message'],
      ['Error', 'SomeReason', 'Some exception: Exception text.'],
    ]);
    for (const e of events) {
      expect(e['source']).toEqual({ component: 'kopf' });
      expect(e['reportingComponent']).toBe('kopf');
      expect(e['reportingInstance']).toBe('dev');
      expect(String((e['metadata'] as Json)['name'])).toMatch(/^kopf-event-/);
      expect(e['involvedObject']).toEqual({ apiVersion: 'kopf.dev/v1', kind: 'KopfExample', name: 'kopf-example-1', uid, namespace: 'default' });
      // Stamped by the operator's clock, which is the test's virtual one.
      expect(Date.parse(String(e['lastTimestamp']))).toBe(START);
    }
    // The operator's own log lines are not posted unless `settings.posting.loggers` is on.
    expect(events.filter((e) => e['reason'] === 'Logging')).toEqual([]);
  });

  it('A-10 04-events with the posting level at WARNING: no Normal event', async () => {
    const settings = new OperatorSettings();
    settings.posting.level = 30;
    const { posted } = await run(settings, 3);
    expect(posted.map((e) => e['type'])).toEqual(['SomeType', 'Warning', 'Error']);
  });
});
