/**
 * Conformance checklist C-77..C-87: watch start positions, replay and expiry, bookmarks, the
 * watch-list initial-events bookmark, parameter validation, server-side timeouts, selector
 * transitions, single-object watches and the response framing, over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWatch, startHarness, type Harness, type Json } from './harness.js';

const widgetsIn = (ns: string): string => `/apis/example.com/v1/namespaces/${ns}/widgets`;
const summary = (events: Json[]): string[] => events.map((e) => `${e['type']} ${e['object']['metadata']?.['name'] ?? ''}`.trim());
const rvs = (events: Json[]): number[] => events.map((e) => Number(e['object']['metadata']['resourceVersion']));

describe('conformance: watch', () => {
  let h: Harness;
  let nsCount = 0;

  /** A fresh namespace per test, so synthetic events only show that test's objects. */
  async function namespace(): Promise<string> {
    const name = `watch-${++nsCount}`;
    const r = await h.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    expect(r.status).toBe(201);
    return name;
  }

  async function widgetIn(ns: string, name: string, spec: Json = { size: 1 }, labels?: Record<string, string>): Promise<Json> {
    const r = await h.post(widgetsIn(ns), { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, ...(labels ? { labels } : {}) }, spec });
    expect(r.status).toBe(201);
    return r.json;
  }

  beforeAll(async () => {
    h = await startHarness({ bookmarkIntervalMs: 200, tooLargeRvWaitMs: 100 });
  });
  afterAll(async () => {
    await h.stop();
  });

  it('C-77 a watch from the list RV sees ADDED, MODIFIED, DELETED with increasing RVs and no synthetic events', async () => {
    const ns = await namespace();
    await widgetIn(ns, 'old');
    const list = await h.get(widgetsIn(ns));
    const listRv = Number(list.json['metadata']['resourceVersion']);
    const w = await readWatch(`${h.cluster.url}${widgetsIn(ns)}?watch=true&resourceVersion=${listRv}`, {
      count: 3,
      onOpen: async () => {
        await widgetIn(ns, 'w77');
        expect((await h.patch(`${widgetsIn(ns)}/w77`, { spec: { size: 2 } })).status).toBe(200);
        expect((await h.del(`${widgetsIn(ns)}/w77`)).status).toBe(200);
      },
    });
    expect(w.status).toBe(200);
    expect(summary(w.events)).toEqual(['ADDED w77', 'MODIFIED w77', 'DELETED w77']);
    const seen = rvs(w.events);
    expect(seen[0]).toBeGreaterThan(listRv);
    expect(seen[1]).toBeGreaterThan(seen[0]!);
    expect(seen[2]).toBeGreaterThan(seen[1]!);
    expect(w.events[1]!['object']['spec']['size']).toBe(2);
  });

  it('C-78 a watch without resourceVersion (or 0) starts with sorted synthetic ADDED events, then live ones', async () => {
    for (const query of ['watch=true', 'watch=true&resourceVersion=0']) {
      const ns = await namespace();
      await widgetIn(ns, 'b');
      await widgetIn(ns, 'a');
      const live = 'live';
      const w = await readWatch(`${h.cluster.url}${widgetsIn(ns)}?${query}`, {
        count: 3,
        onOpen: async () => {
          await widgetIn(ns, live);
        },
      });
      expect(w.status).toBe(200);
      expect(summary(w.events), query).toEqual(['ADDED a', 'ADDED b', `ADDED ${live}`]);
      expect(rvs(w.events)[2]).toBeGreaterThan(Math.max(rvs(w.events)[0]!, rvs(w.events)[1]!));
    }
  });

  it('C-79 a watch from an RV inside the history replays exactly the later changes', async () => {
    const ns = await namespace();
    await widgetIn(ns, 'r1');
    const second = await widgetIn(ns, 'r2');
    const n = Number(second['metadata']['resourceVersion']);
    await widgetIn(ns, 'r3');
    await h.patch(`${widgetsIn(ns)}/r1`, { spec: { size: 4 } });
    await h.del(`${widgetsIn(ns)}/r2`);
    const w = await readWatch(`${h.cluster.url}${widgetsIn(ns)}?watch=true&resourceVersion=${n}`, { timeoutMs: 500 });
    expect(w.status).toBe(200);
    expect(summary(w.events)).toEqual(['ADDED r3', 'MODIFIED r1', 'DELETED r2']);
    for (const rv of rvs(w.events)) expect(rv).toBeGreaterThan(n);
    expect(rvs(w.events)).toEqual([...rvs(w.events)].sort((x, y) => x - y));
  });

  it('C-80 a watch from a compacted RV gets HTTP 200, one ERROR 410 Expired, then the end of the stream', async () => {
    const ns = await namespace();
    const first = await widgetIn(ns, 'x1');
    const old = Number(first['metadata']['resourceVersion']);
    await widgetIn(ns, 'x2');
    h.cluster.compact();
    const compaction = h.cluster.revision;
    const w = await readWatch(`${h.cluster.url}${widgetsIn(ns)}?watch=true&resourceVersion=${old}`, { timeoutMs: 2000 });
    expect(w.status).toBe(200);
    expect(w.ended).toBe(true);
    expect(w.events).toHaveLength(1);
    const status = w.events[0]!;
    expect(status['type']).toBe('ERROR');
    expect(status['object']).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 });
    expect(status['object']['message']).toBe(`too old resource version: ${old} (${compaction})`);
    // A watch from exactly the compaction point is still valid.
    const ok = await readWatch(`${h.cluster.url}${widgetsIn(ns)}?watch=true&resourceVersion=${compaction}`, {
      count: 1,
      onOpen: async () => {
        await widgetIn(ns, 'x3');
      },
    });
    expect(summary(ok.events)).toEqual(['ADDED x3']);
  });

  it('C-81 bookmarks are sent only when allowed and carry only kind, apiVersion and resourceVersion', async () => {
    const ns = await namespace();
    const w = await readWatch(`${h.cluster.url}${widgetsIn(ns)}?watch=true&allowWatchBookmarks=true`, { count: 1, timeoutMs: 1000 });
    expect(w.events).toHaveLength(1);
    const bookmark = w.events[0]!;
    expect(bookmark['type']).toBe('BOOKMARK');
    expect(bookmark['object']).toEqual({ kind: 'Widget', apiVersion: 'example.com/v1', metadata: { resourceVersion: expect.any(String) } });
    expect(Number(bookmark['object']['metadata']['resourceVersion'])).toBeGreaterThanOrEqual(h.cluster.revision - 1);

    const without = await readWatch(`${h.cluster.url}${widgetsIn(ns)}?watch=true`, { timeoutMs: 1000 });
    expect(without.status).toBe(200);
    expect(without.events.filter((e) => e['type'] === 'BOOKMARK')).toEqual([]);
  });

  it('C-82 sendInitialEvents ends the initial ADDED events with an annotated BOOKMARK', async () => {
    const ns = await namespace();
    await widgetIn(ns, 'i2');
    const last = await widgetIn(ns, 'i1');
    const stateRv = h.cluster.revision;
    const w = await readWatch(`${h.cluster.url}${widgetsIn(ns)}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`, {
      count: 4,
      onOpen: async () => {
        await widgetIn(ns, 'i3');
      },
    });
    expect(w.status).toBe(200);
    expect(summary(w.events.slice(0, 3))).toEqual(['ADDED i1', 'ADDED i2', 'BOOKMARK']);
    expect(w.events[2]!['object']).toEqual({
      kind: 'Widget',
      apiVersion: 'example.com/v1',
      metadata: { resourceVersion: String(stateRv), annotations: { 'k8s.io/initial-events-end': 'true' } },
    });
    expect(Number(last['metadata']['resourceVersion'])).toBeLessThanOrEqual(stateRv);
    // The periodic bookmarks may interleave; the live event follows.
    const rest = await readWatch(`${h.cluster.url}${widgetsIn(ns)}?watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan`, {
      count: 1,
      onOpen: async () => {
        await widgetIn(ns, 'i4');
      },
    });
    expect(summary(rest.events)).toEqual(['ADDED i4']);
    expect(summary(w.events).filter((s) => s.startsWith('ADDED'))).toEqual(['ADDED i1', 'ADDED i2', 'ADDED i3']);

    // The initial state is served "not older than" N: a compacted N is fine, a future N waits, then 504.
    h.cluster.compact();
    const initial = 'watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true';
    const old = await readWatch(`${h.cluster.url}${widgetsIn(ns)}?${initial}&resourceVersion=${stateRv}`, { count: 5 });
    expect(summary(old.events)).toEqual(['ADDED i1', 'ADDED i2', 'ADDED i3', 'ADDED i4', 'BOOKMARK']);
    expect(old.events[4]!['object']['metadata']['resourceVersion']).toBe(String(h.cluster.revision));
    const future = await h.get(`${widgetsIn(ns)}?${initial}&resourceVersion=${h.cluster.revision + 100}`);
    expect(future.status).toBe(504);
    expect(future.json['details']['causes'][0]['reason']).toBe('ResourceVersionTooLarge');
  });

  it('C-83 sendInitialEvents without resourceVersionMatch=NotOlderThan is 422, not a stream', async () => {
    const r = await h.get(`${widgetsIn('default')}?watch=true&sendInitialEvents=true`);
    expect(r.status).toBe(422);
    expect(r.json['kind']).toBe('Status');
    expect(r.json['reason']).toBe('Invalid');
    expect(r.json['message']).toMatch(/^ListOptions\.meta\.k8s\.io "" is invalid: /);
    expect((r.json['details']['causes'] as Json[]).map((c) => c['field'])).toContain('resourceVersionMatch');
  });

  it('C-84 timeoutSeconds ends the stream cleanly without an ERROR event', async () => {
    const ns = await namespace();
    await widgetIn(ns, 't1');
    const started = Date.now();
    const w = await readWatch(`${h.cluster.url}${widgetsIn(ns)}?watch=true&timeoutSeconds=1`, { timeoutMs: 5000 });
    const elapsed = Date.now() - started;
    expect(w.status).toBe(200);
    expect(w.ended).toBe(true);
    expect(summary(w.events)).toEqual(['ADDED t1']);
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(2500);
  });

  it('C-85 label selector transitions: leaving is DELETED with old labels and new RV, returning is ADDED', async () => {
    const ns = await namespace();
    await widgetIn(ns, 'l1', { size: 1 }, { app: 'x' });
    await widgetIn(ns, 'other', { size: 1 }, { app: 'y' });
    const rv = h.cluster.revision;
    let relabelRv = 0;
    let backRv = 0;
    const w = await readWatch(`${h.cluster.url}${widgetsIn(ns)}?watch=true&resourceVersion=${rv}&labelSelector=app%3Dx`, {
      count: 3,
      onOpen: async () => {
        await h.patch(`${widgetsIn(ns)}/other`, { spec: { size: 2 } });
        const away = await h.patch(`${widgetsIn(ns)}/l1`, { metadata: { labels: { app: 'y' } } });
        relabelRv = Number(away.json['metadata']['resourceVersion']);
        await h.patch(`${widgetsIn(ns)}/l1`, { spec: { size: 3 } });
        const back = await h.patch(`${widgetsIn(ns)}/l1`, { metadata: { labels: { app: 'x' } } });
        backRv = Number(back.json['metadata']['resourceVersion']);
        await h.patch(`${widgetsIn(ns)}/l1`, { spec: { size: 4 } });
      },
    });
    expect(summary(w.events)).toEqual(['DELETED l1', 'ADDED l1', 'MODIFIED l1']);
    const [gone, added, modified] = w.events as [Json, Json, Json];
    expect(gone['object']['metadata']['labels']).toEqual({ app: 'x' });
    expect(gone['object']['spec']['size']).toBe(1);
    expect(Number(gone['object']['metadata']['resourceVersion'])).toBe(relabelRv);
    expect(added['object']['metadata']['labels']).toEqual({ app: 'x' });
    expect(added['object']['spec']['size']).toBe(3);
    expect(Number(added['object']['metadata']['resourceVersion'])).toBe(backRv);
    expect(modified['object']['spec']['size']).toBe(4);
  });

  it('C-86 a watch on one object URL only sees that object', async () => {
    const ns = await namespace();
    await widgetIn(ns, 'w1');
    await widgetIn(ns, 'w2');
    const w = await readWatch(`${h.cluster.url}${widgetsIn(ns)}/w1?watch=true`, {
      count: 3,
      onOpen: async () => {
        await h.patch(`${widgetsIn(ns)}/w2`, { spec: { size: 2 } });
        await h.patch(`${widgetsIn(ns)}/w1`, { spec: { size: 3 } });
        await h.del(`${widgetsIn(ns)}/w2`);
        await h.del(`${widgetsIn(ns)}/w1`);
      },
    });
    expect(summary(w.events)).toEqual(['ADDED w1', 'MODIFIED w1', 'DELETED w1']);
    const mismatch = await h.get(`${widgetsIn(ns)}/w1?watch=true&fieldSelector=metadata.name%3Dw2`);
    expect(mismatch.status).toBe(400);
    expect(mismatch.json['message']).toBe("fieldSelector metadata.name doesn't match requested name");
  });

  it('C-87 watch headers arrive before any event; each event is one compact JSON line', async () => {
    const ns = await namespace();
    const controller = new AbortController();
    const started = Date.now();
    const res = await fetch(`${h.cluster.url}${widgetsIn(ns)}?watch=true`, { signal: controller.signal });
    const headerMs = Date.now() - started;
    try {
      expect(res.status).toBe(200);
      expect(headerMs).toBeLessThan(200);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.headers.get('transfer-encoding')).toBe('chunked');
      await widgetIn(ns, 'f1');
      await h.patch(`${widgetsIn(ns)}/f1`, { spec: { size: 2, extra: { nested: { deep: [1, 2] } } } });
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      while (text.split('\n').length < 3) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      const lines = text.split('\n');
      expect(lines).toHaveLength(3);
      expect(lines[2]).toBe('');
      for (const line of lines.slice(0, 2)) {
        expect(line).toBe(JSON.stringify(JSON.parse(line)));
      }
      expect(lines.slice(0, 2).map((l) => JSON.parse(l)['type'])).toEqual(['ADDED', 'MODIFIED']);
    } finally {
      controller.abort();
    }
  });
});
