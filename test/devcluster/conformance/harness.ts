/**
 * Shared harness for the conformance suites (devcluster reference section 13): starts a devcluster on
 * loopback, sets up the Widget CRD ("Setup W"), and talks plain HTTP with `fetch` so tests can
 * assert exact status codes, headers and bodies.
 */
import * as path from 'node:path';
import { DevCluster, type DevClusterOptions } from '../../../devcluster/testing.js';

export const WIDGETS_CRD = path.resolve(import.meta.dirname, '../../../fixtures/crds/widgets.yaml');
export const WIDGETS = '/apis/example.com/v1/namespaces/default/widgets';
export const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';

export type Json = { [key: string]: any };

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON body (undefined when the body is not JSON). */
  json: Json;
}

export interface Harness {
  cluster: DevCluster;
  request(
    method: string,
    urlPath: string,
    body?: unknown,
    opts?: { contentType?: string; accept?: string; headers?: Record<string, string> },
  ): Promise<HttpResult>;
  get(urlPath: string, accept?: string): Promise<HttpResult>;
  post(urlPath: string, body: unknown): Promise<HttpResult>;
  put(urlPath: string, body: unknown): Promise<HttpResult>;
  patch(urlPath: string, body: unknown, type?: 'merge' | 'json' | 'strategic' | 'apply'): Promise<HttpResult>;
  del(urlPath: string, body?: unknown): Promise<HttpResult>;
  /** Creates a Widget `name` with the given spec (default size 1) and returns it. */
  widget(name: string, spec?: Json, extra?: Json): Promise<Json>;
  stop(): Promise<void>;
}

const PATCH_TYPES = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

/** Starts a plain-HTTP devcluster (TLS is covered by its own tests) with the Widget CRD loaded unless `widgets: false`. */
export async function startHarness(opts: DevClusterOptions & { widgets?: boolean } = {}): Promise<Harness> {
  const { widgets = true, ...options } = opts;
  const cluster = await DevCluster.start({ tls: false, ...options });
  if (widgets) await cluster.load(WIDGETS_CRD);
  const request: Harness['request'] = async (method, urlPath, body, o = {}) => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.accept) headers['accept'] = o.accept;
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      headers['content-type'] = o.contentType ?? 'application/json';
    }
    const res = await fetch(cluster.url + urlPath, { method, headers, body: payload });
    const text = await res.text();
    let json: Json = undefined as unknown as Json;
    try {
      json = JSON.parse(text) as Json;
    } catch {
      /* not JSON */
    }
    return { status: res.status, headers: res.headers, text, json };
  };
  const h: Harness = {
    cluster,
    request,
    get: (p, accept) => request('GET', p, undefined, { accept }),
    post: (p, b) => request('POST', p, b),
    put: (p, b) => request('PUT', p, b),
    patch: (p, b, type = 'merge') => request('PATCH', p, b, { contentType: PATCH_TYPES[type] }),
    del: (p, b) => request('DELETE', p, b),
    async widget(name, spec = { size: 1 }, extra = {}) {
      const r = await request('POST', WIDGETS, {
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        ...extra,
        metadata: { name, ...(extra['metadata'] ?? {}) },
        spec,
      });
      if (r.status !== 201) throw new Error(`creating widget ${name} failed: ${r.status} ${r.text}`);
      return r.json;
    },
    stop: () => cluster.stop(),
  };
  return h;
}

/** Reads a watch stream until `count` events arrived or `timeoutMs` passed; returns the parsed events. */
export async function readWatch(
  url: string,
  opts: { count?: number; timeoutMs?: number; accept?: string; onOpen?: () => Promise<void> | void } = {},
): Promise<{ status: number; events: Json[]; ended: boolean }> {
  const { count = Infinity, timeoutMs = 2000 } = opts;
  const controller = new AbortController();
  const res = await fetch(url, { signal: controller.signal, headers: opts.accept ? { accept: opts.accept } : {} });
  const events: Json[] = [];
  let ended = false;
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const opened = opts.onOpen ? Promise.resolve(opts.onOpen()) : Promise.resolve();
  try {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        ended = true;
        break;
      }
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.trim()) events.push(JSON.parse(line) as Json);
      }
      if (events.length >= count) break;
    }
  } catch (err) {
    if (!(err instanceof Error && err.name === 'AbortError')) throw err;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  await opened;
  return { status: res.status, events, ended };
}
