/**
 * Conformance checklist C-117..C-119 and the other fault-injection and test controls of D-FAULT:
 * rule matching and counters, injected responses, latency, connection resets and hangs, watch
 * faults, dropping open watches, compaction, restart, pause/resume, the request and watch-event
 * logs, the injectable clock and seeded determinism, over HTTP.
 */
import * as http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../testing/index.js';
import { eventually } from '../../support/waiting.js';
import { startHarness, WIDGETS, CONFIGMAPS, type Harness, type Json } from './harness.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** An open watch stream read in the background, which records how it finished. */
class WatchReader {
  readonly events: Json[] = [];
  status = 0;
  headers: Headers | undefined;
  /** `end`: clean end of the body; `error`: the connection broke; `closed`: we closed it. */
  outcome: 'open' | 'end' | 'error' | 'closed' = 'open';
  private readonly controller = new AbortController();
  private wake: (() => void)[] = [];

  static async open(url: string, headers: Record<string, string> = {}): Promise<WatchReader> {
    const reader = new WatchReader();
    const res = await fetch(url, { signal: reader.controller.signal, headers });
    reader.status = res.status;
    reader.headers = res.headers;
    void reader.pump(res);
    return reader;
  }

  private async pump(res: Response): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      const body = res.body!.getReader();
      for (;;) {
        const { value, done } = await body.read();
        if (done) {
          this.outcome = 'end';
          break;
        }
        buffer += decoder.decode(value, { stream: true });
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (line.trim()) this.events.push(JSON.parse(line) as Json);
        }
        this.notify();
      }
    } catch {
      this.outcome = this.controller.signal.aborted ? 'closed' : 'error';
    }
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = [];
    for (const w of wake) w();
  }

  /** Waits until `predicate` holds (true) or `timeoutMs` passed (false). */
  async until(predicate: () => boolean, timeoutMs = 2000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await Promise.race([new Promise<void>((r) => this.wake.push(r)), sleep(left)]);
    }
    return true;
  }

  count(n: number, timeoutMs = 2000): Promise<boolean> {
    return this.until(() => this.events.length >= n || this.outcome !== 'open', timeoutMs);
  }
  finished(timeoutMs = 2000): Promise<boolean> {
    return this.until(() => this.outcome !== 'open', timeoutMs);
  }
  types(): string[] {
    return this.events.map((e) => `${e['type']} ${e['object']['metadata']?.['name'] ?? ''}`.trim());
  }
  close(): void {
    this.controller.abort();
  }
}

/** A GET on a connection of its own, never one kept by the client from before a restart. */
function getOnNewConnection(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

const widgetsIn = (ns: string): string => `/apis/example.com/v1/namespaces/${ns}/widgets`;
const widgetBody = (name: string, ns = 'default'): Json => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name, namespace: ns },
  spec: { size: 1 },
});
const configMapBody = (name: string): Json => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });

describe('conformance: fault injection and test controls', () => {
  let h: Harness;
  let nsCount = 0;
  const readers: WatchReader[] = [];

  async function namespace(): Promise<string> {
    const name = `faults-${++nsCount}`;
    expect((await h.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })).status).toBe(201);
    return name;
  }

  async function watch(path: string, headers: Record<string, string> = {}): Promise<WatchReader> {
    const reader = await WatchReader.open(`${h.cluster.url}${path}`, headers);
    readers.push(reader);
    return reader;
  }

  const exists = (ns: string, name: string): boolean =>
    h.cluster.store.get({ group: 'example.com', version: 'v1', resource: 'widgets' }, name, ns) !== undefined;

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    for (const r of readers) r.close();
    await h.stop();
  });

  it('C-117 a one-shot 429 rule answers the plain upstream form with Retry-After, then expires', async () => {
    // The rule exactly as the checklist writes it: the action's key at the top level.
    h.cluster.faults.add({ resource: 'widgets', verb: 'list', times: 1, respond: { code: 429, retryAfterSeconds: 2 } });
    const first = await h.get(WIDGETS);
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('2');
    expect(first.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(first.text).toBe('Too many requests, please try again later.\n');
    const second = await h.get(WIDGETS);
    expect(second.status).toBe(200);
    expect(second.json['kind']).toBe('WidgetList');
  });

  it('C-118 dropWatches aborts the connection of open watches, or expires them with ERROR 410', async () => {
    const ns = await namespace();
    const aborted = await watch(`${widgetsIn(ns)}?watch=true`);
    const bystander = await watch(`${CONFIGMAPS}?watch=true&resourceVersion=${h.cluster.revision}`);
    expect(h.cluster.dropWatches({ resource: 'widgets', namespace: ns }, 'abort')).toBe(1);
    expect(await aborted.finished()).toBe(true);
    expect(aborted.outcome).toBe('error');

    const expired = await watch(`${widgetsIn(ns)}?watch=true`);
    expect(h.cluster.dropWatches({ resource: 'widgets', namespace: ns }, 'expire')).toBe(1);
    expect(await expired.finished()).toBe(true);
    expect(expired.outcome).toBe('end');
    expect(expired.events).toHaveLength(1);
    expect(expired.events[0]!['type']).toBe('ERROR');
    expect(expired.events[0]!['object']).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 });
    expect(String(expired.events[0]!['object']['message'])).toMatch(/^too old resource version: \d+ \(\d+\)$/);

    // The ConfigMap watch was not affected and still delivers events.
    expect(bystander.outcome).toBe('open');
    await h.post(CONFIGMAPS, configMapBody('c118'));
    expect(await bystander.count(1)).toBe(true);
    expect(bystander.types()).toEqual(['ADDED c118']);
  });

  it('D-FAULT-6 dropWatches "end" finishes matching streams cleanly and reports how many', async () => {
    const ns = await namespace();
    const a = await watch(`${widgetsIn(ns)}?watch=true`);
    const b = await watch(`${widgetsIn(ns)}?watch=true&labelSelector=x%3Dy`);
    expect(h.cluster.dropWatches({ resource: 'widgets', namespace: `${ns}-other` }, 'end')).toBe(0);
    expect(h.cluster.dropWatches({ group: 'example.com', resource: 'widgets', namespace: ns }, 'end')).toBe(2);
    expect(await a.finished()).toBe(true);
    expect(await b.finished()).toBe(true);
    expect([a.outcome, b.outcome]).toEqual(['end', 'end']);
    expect(a.events).toEqual([]);
  });

  it("D-FAULT-6 dropWatches by user agent ends one client's streams and leaves another's open", async () => {
    const ns = await namespace();
    const operator = await watch(`${widgetsIn(ns)}?watch=true`, { 'user-agent': 'some-operator/1.0' });
    const observer = await watch(`${widgetsIn(ns)}?watch=true`, { 'user-agent': 'load-generator/1' });
    expect(h.cluster.dropWatches({ resource: 'widgets', namespace: ns, userAgent: /^(?!load-generator\/)/ }, 'expire')).toBe(1);
    expect(await operator.finished()).toBe(true);
    expect(operator.events.map((e) => e['object']['code'])).toEqual([410]);
    await h.post(widgetsIn(ns), widgetBody('after-drop', ns));
    expect(await observer.count(1)).toBe(true);
    expect(observer.types()).toEqual(['ADDED after-drop']);
    expect(observer.outcome).toBe('open');
  });

  it('D-FAULT-1 matchers, skip, times, probability, remove and clear select which requests a rule hits, and a handle counts what it applied to', async () => {
    const ns = await namespace();
    const base = widgetsIn(ns);
    await h.post(base, widgetBody('m1', ns));
    await h.post(base, widgetBody('m2', ns));
    const unavailable = { respond: { code: 503 } } as const;

    const byName = h.cluster.faults.add({ name: 'm1', namespace: ns, action: unavailable });
    expect((await h.get(`${base}/m1`)).status).toBe(503);
    expect((await h.get(`${base}/m2`)).status).toBe(200);
    byName.remove();
    expect((await h.get(`${base}/m1`)).status).toBe(200);

    const counted = h.cluster.faults.add({ namespace: ns, method: 'get', skip: 1, times: 2, action: unavailable });
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) codes.push((await h.get(`${base}/m2`)).status);
    expect(codes).toEqual([200, 503, 503, 200]);
    expect(counted.applied()).toBe(2); // expired after its two, and still counted
    counted.remove();

    h.cluster.faults.add({ path: new RegExp(`/namespaces/${ns}/widgets/m2$`), userAgent: /^special-agent/, action: unavailable });
    expect((await h.get(`${base}/m2`)).status).toBe(200);
    expect((await h.request('GET', `${base}/m2`, undefined, { headers: { 'user-agent': 'special-agent/1.0' } })).status).toBe(503);
    h.cluster.faults.clear();
    expect((await h.request('GET', `${base}/m2`, undefined, { headers: { 'user-agent': 'special-agent/1.0' } })).status).toBe(200);

    h.cluster.faults.add({ namespace: ns, probability: 0, action: unavailable });
    h.cluster.faults.add({ namespace: ns, verb: 'get', probability: 1, action: { respond: { code: 500 } } });
    expect((await h.get(`${base}/m1`)).status).toBe(500);
    expect((await h.get(base)).status).toBe(200);
    h.cluster.faults.clear();

    // First matching rule wins; watch: false keeps watches untouched.
    h.cluster.faults.add({ namespace: ns, resource: 'widgets', watch: false, action: { respond: { code: 409 } } });
    h.cluster.faults.add({ namespace: ns, action: unavailable });
    expect((await h.get(base)).status).toBe(409);
    const w = await watch(`${base}?watch=true`);
    expect(w.status).toBe(503);
    h.cluster.faults.clear();
  });

  it('D-FAULT-3 injected responses answer without processing, in Status form with the given details', async () => {
    const ns = await namespace();
    const base = widgetsIn(ns);
    const cases: [Json, number, string, string | undefined][] = [
      [{ code: 429, form: 'status', retryAfterSeconds: 3 }, 429, 'TooManyRequests', '3'],
      [{ code: 500 }, 500, 'InternalError', undefined],
      [{ code: 503, retryAfterSeconds: 1 }, 503, 'ServiceUnavailable', '1'],
      [{ code: 504 }, 504, 'Timeout', undefined],
      [{ code: 409 }, 409, 'Conflict', undefined],
      [{ code: 403, message: 'nope' }, 403, 'Forbidden', undefined],
      [{ code: 500, reason: 'ServiceUnavailable', message: 'custom' }, 500, 'ServiceUnavailable', undefined],
    ];
    for (const [respond, code, reason, retryAfter] of cases) {
      const handle = h.cluster.faults.add({ namespace: ns, verb: 'create', action: { respond: respond as never } });
      const r = await h.post(base, widgetBody('never', ns));
      handle.remove();
      expect(r.status, JSON.stringify(respond)).toBe(code);
      expect(r.json).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason });
      expect(String(r.json['message']).length).toBeGreaterThan(0);
      if (respond['message']) expect(r.json['message']).toBe(respond['message']);
      expect(r.headers.get('retry-after') ?? undefined).toBe(retryAfter);
      if (retryAfter !== undefined && respond['form'] === 'status') expect(r.json['details']['retryAfterSeconds']).toBe(Number(retryAfter));
    }
    expect(exists(ns, 'never')).toBe(false);
  });

  it('D-FAULT-4 reset "before" breaks the connection without processing, "after" once the write is applied', async () => {
    const ns = await namespace();
    h.cluster.faults.add({ namespace: ns, verb: 'create', times: 1, action: { reset: 'before' } });
    await expect(h.post(widgetsIn(ns), widgetBody('r-before', ns))).rejects.toThrow();
    expect(exists(ns, 'r-before')).toBe(false);

    h.cluster.faults.add({ namespace: ns, verb: 'create', times: 1, action: { reset: 'after' } });
    await expect(h.post(widgetsIn(ns), widgetBody('r-after', ns))).rejects.toThrow();
    expect(exists(ns, 'r-after')).toBe(true);

    // The rules expired: the server keeps answering normally.
    expect((await h.post(widgetsIn(ns), widgetBody('r-normal', ns))).status).toBe(201);
  });

  it('D-FAULT-4 hang never answers until the client gives up, and does not process the request', async () => {
    const ns = await namespace();
    h.cluster.faults.add({ namespace: ns, verb: 'create', times: 1, action: { hang: true } });
    const started = Date.now();
    await expect(
      fetch(`${h.cluster.url}${widgetsIn(ns)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(widgetBody('hung', ns)),
        signal: AbortSignal.timeout(400),
      }),
    ).rejects.toThrow();
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    expect(exists(ns, 'hung')).toBe(false);
    expect((await h.get(widgetsIn(ns))).status).toBe(200);
  });

  it('D-FAULT-5 endAfterEvents ends the stream cleanly ("end") or breaks it ("abort") after n events', async () => {
    const ns = await namespace();
    for (const n of ['e1', 'e2', 'e3']) await h.post(widgetsIn(ns), widgetBody(n, ns));
    h.cluster.faults.add({ namespace: ns, watch: true, times: 1, action: { watch: { endAfterEvents: 2, mode: 'end' } } });
    const ended = await watch(`${widgetsIn(ns)}?watch=true`);
    expect(await ended.finished()).toBe(true);
    expect(ended.outcome).toBe('end');
    expect(ended.types()).toEqual(['ADDED e1', 'ADDED e2']);

    h.cluster.faults.add({ namespace: ns, watch: true, times: 1, action: { watch: { endAfterEvents: 1, mode: 'abort' } } });
    const broken = await watch(`${widgetsIn(ns)}?watch=true&resourceVersion=${h.cluster.revision}`);
    expect(broken.outcome).toBe('open');
    await h.post(widgetsIn(ns), widgetBody('e4', ns));
    expect(await broken.finished()).toBe(true);
    expect(broken.outcome).toBe('error');
    expect(broken.types()).toEqual(['ADDED e4']);

    // endAfterEvents: 0 ends before the first (synthetic) event.
    h.cluster.faults.add({ namespace: ns, watch: true, times: 1, action: { watch: { endAfterEvents: 0 } } });
    const none = await watch(`${widgetsIn(ns)}?watch=true`);
    expect(await none.finished()).toBe(true);
    expect(none.outcome).toBe('end');
    expect(none.events).toEqual([]);
  });

  it('D-FAULT-5 errorAfterEvents sends an ERROR event (410 Expired or 500 InternalError) then ends', async () => {
    const ns = await namespace();
    for (const n of ['x1', 'x2']) await h.post(widgetsIn(ns), widgetBody(n, ns));
    h.cluster.faults.add({ namespace: ns, watch: true, times: 1, action: { watch: { errorAfterEvents: 1, error: 410 } } });
    const expired = await watch(`${widgetsIn(ns)}?watch=true`);
    expect(await expired.finished()).toBe(true);
    expect(expired.outcome).toBe('end');
    expect(expired.types()).toEqual(['ADDED x1', 'ERROR']);
    expect(expired.events[1]!['object']).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 });
    expect(String(expired.events[1]!['object']['message'])).toMatch(/^too old resource version: /);

    h.cluster.faults.add({ namespace: ns, watch: true, times: 1, action: { watch: { errorAfterEvents: 0, error: 500 } } });
    const failed = await watch(`${widgetsIn(ns)}?watch=true`);
    expect(await failed.finished()).toBe(true);
    expect(failed.types()).toEqual(['ERROR']);
    expect(failed.events[0]!['object']).toMatchObject({ kind: 'Status', reason: 'InternalError', code: 500 });
  });

  it('D-FAULT-5 stall keeps the stream open without events or bookmarks', async () => {
    const ns = await namespace();
    await h.post(widgetsIn(ns), widgetBody('s1', ns));
    h.cluster.faults.add({ namespace: ns, watch: true, times: 1, action: { watch: { stall: true } } });
    const stalled = await watch(`${widgetsIn(ns)}?watch=true&allowWatchBookmarks=true&timeoutSeconds=1`);
    await h.post(widgetsIn(ns), widgetBody('s2', ns));
    expect(await stalled.finished(3000)).toBe(true);
    expect(stalled.outcome).toBe('end');
    expect(stalled.events).toEqual([]);
  });

  it('D-FAULT-7 compaction leaves open watches running; old RVs then expire', async () => {
    const ns = await namespace();
    const first = (await h.post(widgetsIn(ns), widgetBody('k1', ns))).json;
    const oldRv = first['metadata']['resourceVersion'] as string;
    await h.post(widgetsIn(ns), widgetBody('k2', ns));
    const running = await watch(`${widgetsIn(ns)}?watch=true&resourceVersion=${oldRv}`);
    expect(await running.count(1)).toBe(true);
    h.cluster.compact();
    await h.post(widgetsIn(ns), widgetBody('k3', ns));
    expect(await running.count(2)).toBe(true);
    expect(running.types()).toEqual(['ADDED k2', 'ADDED k3']);
    const late = await watch(`${widgetsIn(ns)}?watch=true&resourceVersion=${oldRv}`);
    expect(await late.finished()).toBe(true);
    expect(late.types()).toEqual(['ERROR']);
    expect(late.events[0]!['object']['code']).toBe(410);
  });

  it('D-FAULT-9 pause holds requests and queues watch events until resume delivers them in order', async () => {
    const ns = await namespace();
    const w = await watch(`${widgetsIn(ns)}?watch=true&resourceVersion=${h.cluster.revision}`);
    h.cluster.pause();
    let answered = false;
    let held: Promise<unknown> | undefined;
    try {
      await h.cluster.store.create(widgetBody('p1', ns));
      await h.cluster.store.create(widgetBody('p2', ns));
      held = h.get(`${widgetsIn(ns)}/p1`).then((r) => {
        answered = true;
        return r;
      });
      // The pause's own account: the request waits at the gate and both events are queued, so
      // none of them was answered or written.
      await eventually(() => h.cluster.held().requests === 1, 'the get to be held by the pause');
      expect(h.cluster.held()).toEqual({ requests: 1, events: 2 });
      expect(answered).toBe(false);
      expect(w.events).toEqual([]);
    } finally {
      h.cluster.resume();
    }
    const r = (await held) as { status: number };
    expect(r.status).toBe(200);
    expect(await w.count(2)).toBe(true);
    expect(w.types()).toEqual(['ADDED p1', 'ADDED p2']);
  });

  it('D-FAULT-9 a watch expired while paused delivers its queued events before the ERROR on resume', async () => {
    const ns = await namespace();
    const w = await watch(`${widgetsIn(ns)}?watch=true&resourceVersion=${h.cluster.revision}`);
    h.cluster.pause();
    try {
      await h.cluster.store.create(widgetBody('q1', ns));
      expect(h.cluster.dropWatches({ resource: 'widgets', namespace: ns }, 'expire')).toBe(1);
      // The event and the ERROR are queued by the pause, not written; the stream stays open.
      expect(h.cluster.held()).toEqual({ requests: 0, events: 2 });
      expect(w.events).toEqual([]);
      expect(w.outcome).toBe('open');
    } finally {
      h.cluster.resume();
    }
    expect(await w.finished()).toBe(true);
    expect(w.outcome).toBe('end');
    expect(w.types()).toEqual(['ADDED q1', 'ERROR']);
  });

  it('D-FAULT-12 the request log records requests, counts them, and can be awaited; watch events are logged', async () => {
    const ns = await namespace();
    h.cluster.requests.clear();
    await h.get(widgetsIn(ns));
    await h.get(widgetsIn(ns));
    await h.request('POST', widgetsIn(ns), widgetBody('l1', ns), { headers: { authorization: `Bearer ${h.cluster.token}`, 'user-agent': 'logger/1.0' } });
    h.cluster.faults.add({ namespace: ns, verb: 'get', times: 1, action: { respond: { code: 503 } } });
    await h.get(`${widgetsIn(ns)}/l1`);
    expect(h.cluster.requests.counts((r) => r.namespace === ns)).toEqual({ 'list widgets': 2, 'create widgets': 1, 'get widgets': 1 });
    const create = h.cluster.requests.filter((r) => r.verb === 'create' && r.namespace === ns)[0]!;
    expect(create).toMatchObject({ method: 'POST', path: widgetsIn(ns), code: 201, fault: false, group: 'example.com', resource: 'widgets' });
    expect(create.headers.authorization).toBe('<redacted>');
    expect(create.headers.userAgent).toBe('logger/1.0');
    expect(create.headers.contentType).toBe('application/json');
    expect(JSON.parse(create.body!)['metadata']['name']).toBe('l1');
    const faulted = h.cluster.requests.filter((r) => r.verb === 'get' && r.namespace === ns)[0]!;
    expect(faulted).toMatchObject({ code: 503, fault: true, name: 'l1' });

    const already = await h.cluster.requests.waitFor((r) => r.verb === 'create' && r.namespace === ns, 100);
    expect(already).toBe(create);
    const future = h.cluster.requests.waitFor((r) => r.verb === 'delete' && r.name === 'l1', 2000);
    await h.del(`${widgetsIn(ns)}/l1`);
    expect((await future).code).toBe(200);
    await expect(h.cluster.requests.waitFor((r) => r.path === '/never', 50)).rejects.toThrow();

    const before = h.cluster.watchEvents.length;
    const w = await watch(`${widgetsIn(ns)}?watch=true&resourceVersion=${h.cluster.revision}`);
    const created = (await h.post(widgetsIn(ns), widgetBody('l2', ns))).json;
    expect(await w.count(1)).toBe(true);
    const logged = h.cluster.watchEvents.slice(before);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toEqual({ stream: expect.any(Number), type: 'ADDED', rv: created['metadata']['resourceVersion'] });
  });
});

describe('conformance: fault delays on the cluster clock', () => {
  // Delays and timed watch ends run on the cluster's clock: each step below is exact, and "not
  // yet" means the clock has not reached the deadline, not that a real wait was too short.
  const clock = new VirtualClock({ start: Date.UTC(2024, 2, 1, 8, 0, 0) });
  let h: Harness;
  const readers: WatchReader[] = [];
  const ns = 'delays';

  beforeAll(async () => {
    h = await startHarness({ clock });
    expect((await h.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status).toBe(201);
  });
  afterAll(async () => {
    for (const r of readers) r.close();
    await h.stop();
  });

  async function watch(path: string): Promise<WatchReader> {
    const reader = await WatchReader.open(`${h.cluster.url}${path}`);
    readers.push(reader);
    return reader;
  }

  const exists = (name: string): boolean => h.cluster.store.get({ group: 'example.com', version: 'v1', resource: 'widgets' }, name, ns) !== undefined;

  it('D-FAULT-2 delay.beforeMs holds the request before it takes effect', async () => {
    h.cluster.faults.add({ namespace: ns, verb: 'create', times: 1, action: { delay: { beforeMs: 300 } } });
    const due = clock.now() + 300;
    let answered = false;
    const pending = h.post(widgetsIn(ns), widgetBody('slow', ns)).then((r) => {
      answered = true;
      return r;
    });
    await eventually(() => clock.nextDue() === due, 'the delay to be scheduled on the cluster clock');
    await clock.advance(299);
    expect(exists('slow')).toBe(false);
    expect(answered).toBe(false);
    await clock.advance(1);
    const r = await pending;
    expect(r.status).toBe(201);
    expect(exists('slow')).toBe(true);
  });

  it('D-FAULT-2 delay.afterMs applies the write (and emits its event) before the delayed response', async () => {
    const w = await watch(`${widgetsIn(ns)}?watch=true&resourceVersion=${h.cluster.revision}`);
    h.cluster.faults.add({ namespace: ns, verb: 'create', times: 1, action: { delay: { afterMs: 400 } } });
    let answered = false;
    const pending = h.post(widgetsIn(ns), widgetBody('applied', ns)).then((r) => {
      answered = true;
      return r;
    });
    expect(await w.count(1)).toBe(true);
    expect(w.types()).toEqual(['ADDED applied']);
    expect(exists('applied')).toBe(true);
    await clock.advance(399);
    expect(answered).toBe(false);
    await clock.advance(1);
    const r = await pending;
    expect(r.status).toBe(201);
    expect(r.json['metadata']['resourceVersion']).toBe(w.events[0]!['object']['metadata']['resourceVersion']);
  });

  it('D-FAULT-5 endAfterMs ends or aborts the stream after a time', async () => {
    h.cluster.faults.add({ namespace: ns, watch: true, times: 1, action: { watch: { endAfterMs: 150, mode: 'end' } } });
    const ended = await watch(`${widgetsIn(ns)}?watch=true&timeoutSeconds=60`);
    await clock.advance(149);
    expect(ended.outcome).toBe('open');
    await clock.advance(1);
    expect(await ended.finished()).toBe(true);
    expect(ended.outcome).toBe('end');
    h.cluster.faults.add({ namespace: ns, watch: true, times: 1, action: { watch: { endAfterMs: 150, mode: 'abort' } } });
    const aborted = await watch(`${widgetsIn(ns)}?watch=true&timeoutSeconds=60`);
    await clock.advance(149);
    expect(aborted.outcome).toBe('open');
    await clock.advance(1);
    expect(await aborted.finished()).toBe(true);
    expect(aborted.outcome).toBe('error');
  });
});

describe('conformance: restart', () => {
  let h: Harness;
  // The downtime runs on the cluster's clock: the test decides when it is over.
  const clock = new VirtualClock({ start: Date.UTC(2024, 5, 1, 12, 0, 0) });

  beforeAll(async () => {
    h = await startHarness({ clock });
  });
  afterAll(async () => {
    await h.stop();
  });

  it('C-119 restart ends watches, refuses connections while down, keeps objects and expires old RVs', async () => {
    const first = await h.widget('before1');
    await h.widget('before2');
    const oldRv = first['metadata']['resourceVersion'] as string;
    const revision = h.cluster.revision;
    const w = await WatchReader.open(`${h.cluster.url}${WIDGETS}?watch=true&resourceVersion=${revision}`);
    const port = h.cluster.port;

    const restarting = h.cluster.restart({ downtimeMs: 300 });
    expect(await w.finished()).toBe(true);
    expect(w.outcome).toBe('error');
    await expect(fetch(`${h.cluster.url}/version`)).rejects.toThrow();
    await clock.advance(299);
    await expect(fetch(`${h.cluster.url}/version`)).rejects.toThrow();
    await clock.advance(1);
    await restarting;

    expect(h.cluster.port).toBe(port);
    const got = await h.get(`${WIDGETS}/before1`);
    expect(got.status).toBe(200);
    expect(got.json['metadata']['resourceVersion']).toBe(oldRv);
    expect(h.cluster.revision).toBe(revision);
    const list = await h.get(WIDGETS);
    expect(list.json['metadata']['resourceVersion']).toBe(String(revision));

    const resumed = await WatchReader.open(`${h.cluster.url}${WIDGETS}?watch=true&resourceVersion=${oldRv}`);
    expect(resumed.status).toBe(200);
    expect(await resumed.finished()).toBe(true);
    expect(resumed.types()).toEqual(['ERROR']);
    expect(resumed.events[0]!['object']).toMatchObject({ reason: 'Expired', code: 410 });
    // Writes continue from the preserved revision counter.
    const after = await h.widget('after');
    expect(Number(after['metadata']['resourceVersion'])).toBe(revision + 1);
  });

  it('D-FAULT-8 restart with refuse: false answers 503 and /readyz 500 while down', async () => {
    const restarting = h.cluster.restart({ downtimeMs: 400, refuse: false });
    // The restart broke every open connection, also the ones the client keeps for reuse, and the
    // client may learn that only when it sends on one: ask on new connections instead.
    const down = await getOnNewConnection(`${h.cluster.url}${WIDGETS}`);
    expect(down.status).toBe(503);
    expect(JSON.parse(down.body)['reason']).toBe('ServiceUnavailable');
    expect((await getOnNewConnection(`${h.cluster.url}/readyz`)).status).toBe(500);
    await clock.advance(399);
    expect((await getOnNewConnection(`${h.cluster.url}/readyz`)).status).toBe(500);
    await clock.advance(1);
    await restarting;
    expect((await h.get(WIDGETS)).status).toBe(200);
    expect((await h.get('/readyz')).status).toBe(200);
  });
});

describe('conformance: history limits, latency, clock and seeds', () => {
  it('D-FAULT-7 historyLimit compacts automatically', async () => {
    const h = await startHarness({ historyLimit: 10, widgets: false });
    try {
      const first = (await h.post(CONFIGMAPS, configMapBody('h0'))).json;
      for (let i = 1; i <= 12; i++) await h.post(CONFIGMAPS, configMapBody(`h${i}`));
      const w = await WatchReader.open(`${h.cluster.url}${CONFIGMAPS}?watch=true&resourceVersion=${first['metadata']['resourceVersion']}`);
      expect(await w.finished()).toBe(true);
      expect(w.types()).toEqual(['ERROR']);
      expect(w.events[0]!['object']['message']).toBe(`too old resource version: ${first['metadata']['resourceVersion']} (${h.cluster.revision - 10})`);
      const recent = await WatchReader.open(`${h.cluster.url}${CONFIGMAPS}?watch=true&resourceVersion=${h.cluster.revision - 2}`);
      expect(await recent.count(2)).toBe(true);
      expect(recent.types()).toEqual(['ADDED h11', 'ADDED h12']);
      recent.close();
    } finally {
      await h.stop();
    }
  });

  it('D-FAULT-7 compactionIntervalMs compacts to the revision of one interval ago', async () => {
    const clock = new VirtualClock({ start: Date.UTC(2024, 4, 1, 10, 0, 0) });
    const h = await startHarness({ clock, compactionIntervalMs: 1000, widgets: false });
    try {
      const before = h.cluster.revision;
      await h.post(CONFIGMAPS, configMapBody('i1'));
      const exact = `${CONFIGMAPS}?resourceVersion=${before}&resourceVersionMatch=Exact`;
      expect((await h.get(exact)).status).toBe(200);
      await clock.advance(3000);
      const r = await h.get(exact);
      expect(r.status).toBe(410);
      expect(r.json['message']).toBe('The resourceVersion for the provided list is too old.');
    } finally {
      await h.stop();
    }
  });

  it('D-FAULT-2 latencyMs delays every non-watch request but not watches', async () => {
    const h = await startHarness({ latencyMs: 400, widgets: false });
    try {
      let started = Date.now();
      expect((await h.get(CONFIGMAPS)).status).toBe(200);
      expect(Date.now() - started).toBeGreaterThanOrEqual(390);
      started = Date.now();
      const w = await WatchReader.open(`${h.cluster.url}${CONFIGMAPS}?watch=true`);
      expect(w.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(400);
      w.close();
    } finally {
      await h.stop();
    }
  });

  it('D-FAULT-13 a virtual clock drives timestamps, bookmark and watch-timeout timers', async () => {
    const clock = new VirtualClock({ start: Date.UTC(2024, 0, 2, 3, 4, 5) });
    const h = await startHarness({ clock });
    try {
      const created = await h.widget('timed');
      expect(created['metadata']['creationTimestamp']).toBe('2024-01-02T03:04:05Z');
      const w = await WatchReader.open(
        `${h.cluster.url}${WIDGETS}?watch=true&allowWatchBookmarks=true&timeoutSeconds=100&resourceVersion=${h.cluster.revision}`,
      );
      // Up to a millisecond before the first bookmark nothing is due: the marker written then is the
      // stream's first event, so nothing came before it.
      await clock.advance(59_999);
      await h.widget('marker');
      expect(await w.count(1)).toBe(true);
      expect(w.types()).toEqual(['ADDED marker']);
      await clock.advance(1);
      expect(await w.count(2)).toBe(true);
      expect(w.types()).toEqual(['ADDED marker', 'BOOKMARK']);
      // About 2 s before the deadline a last bookmark, then the clean end at the deadline.
      await clock.advance(38_000);
      expect(await w.count(3)).toBe(true);
      expect(w.types()).toEqual(['ADDED marker', 'BOOKMARK', 'BOOKMARK']);
      expect(w.outcome).toBe('open');
      await clock.advance(2_000);
      expect(await w.finished()).toBe(true);
      expect(w.outcome).toBe('end');
      expect(w.events).toHaveLength(3);
    } finally {
      await h.stop();
    }
  });

  it('D-FAULT-15 a seed makes generated names, uids and probabilistic faults reproducible', async () => {
    async function run(seed: number): Promise<{ name: string; uid: string; codes: number[] }> {
      const h = await startHarness({ seed, widgets: false });
      try {
        const r = await h.post(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' } });
        expect(r.status).toBe(201);
        h.cluster.faults.add({ resource: 'configmaps', verb: 'list', probability: 0.5, action: { respond: { code: 503 } } });
        const codes: number[] = [];
        for (let i = 0; i < 16; i++) codes.push((await h.get(CONFIGMAPS)).status);
        return { name: r.json['metadata']['name'], uid: r.json['metadata']['uid'], codes };
      } finally {
        await h.stop();
      }
    }
    const a = await run(7);
    const b = await run(7);
    const c = await run(8);
    expect(a.name).toMatch(/^gen-[a-z0-9]{5}$/);
    expect(b).toEqual(a);
    expect(a.codes).toContain(200);
    expect(a.codes).toContain(503);
    expect(c.uid).not.toBe(a.uid);
    expect([c.name, c.codes.join()]).not.toEqual([a.name, a.codes.join()]);
  });
});

describe('fault rule shapes', () => {
  it('D-FAULT-1 a rule needs exactly one action, wrapped or at the top level', async () => {
    const { Faults } = await import('../../../devcluster/faults/rules.js');
    const faults = new Faults(() => 0);
    expect(() => faults.add({ resource: 'x' } as never)).toThrow(/exactly one action/);
    expect(() => faults.add({ resource: 'x', hang: true, reset: 'before' } as never)).toThrow(/exactly one action/);
    faults.add({ resource: 'x', hang: true });
    expect(
      faults.match({
        method: 'GET',
        verb: 'get',
        group: '',
        version: 'v1',
        resource: 'x',
        subresource: undefined,
        namespace: undefined,
        name: undefined,
        watch: false,
        path: '/',
        userAgent: '',
        user: '',
      }),
    ).toEqual({ hang: true });
  });
});
