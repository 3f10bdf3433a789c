import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWatch, startHarness, type Harness, type Json } from '../conformance/harness.js';

const TABLE = 'application/json;as=Table;g=meta.k8s.io;v=v1';

describe('watch fan-out', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ widgets: false });
  });
  afterAll(async () => {
    await h.stop();
  });

  it("D-WATCH-6 one change reaches every stream in that stream's served form, type and filter", async () => {
    const ns = 'fanout';
    expect((await h.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status).toBe(201);
    const rv = (await h.get(`/api/v1/namespaces/${ns}/events`)).json['metadata']['resourceVersion'] as string;
    const core = `${h.cluster.url}/api/v1/namespaces/${ns}/events?watch=true&resourceVersion=${rv}`;
    const newer = `${h.cluster.url}/apis/events.k8s.io/v1/namespaces/${ns}/events?watch=true&resourceVersion=${rv}`;

    const opened: Promise<void>[] = [];
    const open = (): { ready: Promise<void>; onOpen: () => void } => {
      let onOpen!: () => void;
      const ready = new Promise<void>((resolve) => {
        onOpen = resolve;
      });
      opened.push(ready);
      return { ready, onOpen };
    };
    const watches = Promise.all([
      readWatch(core, { count: 2, onOpen: open().onOpen }),
      readWatch(core, { count: 2, onOpen: open().onOpen }),
      readWatch(newer, { count: 2, onOpen: open().onOpen }),
      readWatch(`${core}&labelSelector=keep%3Dyes`, { count: 2, onOpen: open().onOpen }),
      readWatch(core, { count: 2, accept: TABLE, onOpen: open().onOpen }),
    ]);
    await Promise.all(opened);
    const created = await h.post(`/api/v1/namespaces/${ns}/events`, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'e1', labels: { keep: 'yes' } },
      involvedObject: { kind: 'Pod', name: 'p', namespace: ns },
      reason: 'Started',
      message: 'hello',
      type: 'Normal',
    });
    expect(created.status).toBe(201);
    const patched = await h.patch(`/api/v1/namespaces/${ns}/events/e1`, { metadata: { labels: { keep: null } }, message: 'bye' });
    expect(patched.status).toBe(200);
    const [first, second, events, selected, table] = await watches;

    const summary = (w: { events: Json[] }): string[] => w.events.map((e) => `${e['type']} ${e['object']['metadata']?.['resourceVersion'] ?? ''}`);
    const createdRv = created.json['metadata']['resourceVersion'] as string;
    const patchedRv = patched.json['metadata']['resourceVersion'] as string;
    expect(summary(first)).toEqual([`ADDED ${createdRv}`, `MODIFIED ${patchedRv}`]);
    expect(second.events).toEqual(first.events);
    expect(first.events[1]!['object']).toEqual(patched.json);

    // The events.k8s.io view of the same change: its own apiVersion and field names.
    expect(events.events.map((e) => e['type'])).toEqual(['ADDED', 'MODIFIED']);
    const modified = events.events[1]!['object'];
    expect(modified['apiVersion']).toBe('events.k8s.io/v1');
    expect(modified['note']).toBe('bye');
    expect(modified['message']).toBeUndefined();
    expect(first.events[1]!['object']['apiVersion']).toBe('v1');

    // Stopping to match: the previous state, stamped with the new revision.
    expect(summary(selected)).toEqual([`ADDED ${createdRv}`, `DELETED ${patchedRv}`]);
    expect(selected.events[1]!['object']['metadata']['labels']).toEqual({ keep: 'yes' });
    expect(selected.events[1]!['object']['message']).toBe('hello');

    expect(table.events.map((e) => `${e['type']} ${e['object']['kind']}`)).toEqual(['ADDED Table', 'MODIFIED Table']);
  });
});
