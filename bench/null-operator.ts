/**
 * The null operator of the `operator` benchmark (`--null`): the API requests of the runtime reference's
 * reference traces (4.2 create with a delete handler, 4.5 update, 4.6 delete) for
 * `kopfexamples.kopf.dev/v1`, and nothing else — no framework, no handlers, no logging. Its
 * throughput on a devcluster is what the API side allows: the bench's "API-bound limit".
 *
 * It lists and watches the resource in all namespaces (bookmarks allowed; a stream that ends is
 * watched again from the last resource version; `410 Gone` lists again), and per event of an
 * object, by what the object holds (F = the finalizer, LHC = the diff-base annotation):
 *   - no deletion timestamp, no F → JSON-patch: test the resource version, add `finalizers: [F]`;
 *   - F, no LHC → merge-patch LHC = `{"spec": …}` + "\n" (the create "handler" starts here), then
 *     merge-patch `/status` with `create_fn: {message: 'hello world', started: <epoch ms>}`;
 *   - LHC whose spec differs from the object's → merge-patch LHC with the new spec;
 *   - deletion timestamp and F → JSON-patch: test the resource version, remove the finalizers;
 *   - anything else → nothing.
 * Events of one object are handled one at a time: while one is handled, only the newest further
 * event is kept, and it is skipped if its resource version is older than the last patch response
 * for that object (the patch's own event follows). Requests go over one keep-alive agent with at
 * most 64 sockets; the watch has its own connection.
 *
 * Reads the server URL from `KUBECONFIG` (the bench's devcluster: plain HTTP, no credentials);
 * exits at once on SIGTERM or SIGINT. Run compiled, with plain Node (see `operator.ts`).
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as YAML from 'yaml';

const FINALIZER = 'kopf.zalando.org/KopfFinalizerMarker';
const LHC = 'kopf.zalando.org/last-handled-configuration';
const PATH = '/apis/kopf.dev/v1/kopfexamples';
const USER_AGENT = 'kopf-gen-bench-null-operator/1';

interface Meta {
  name?: string;
  namespace?: string;
  resourceVersion?: string;
  deletionTimestamp?: string;
  finalizers?: string[];
  annotations?: Record<string, string>;
}
interface Obj {
  metadata?: Meta;
  spec?: unknown;
  code?: number;
}
interface WatchEvent {
  type: string;
  object: Obj;
}

/** One object's queue: whether an event is being handled, the newest waiting one, the last patched rv. */
interface Slot {
  busy: boolean;
  next: Obj | undefined;
  patchedRv: bigint;
  gone: boolean;
}

function serverUrl(): string {
  const file = process.env['KUBECONFIG'];
  if (!file) throw new Error('KUBECONFIG is not set');
  interface Kubeconfig {
    'current-context'?: string;
    contexts?: { name: string; context: { cluster: string } }[];
    clusters?: { name: string; cluster: { server: string } }[];
  }
  const config = YAML.parse(fs.readFileSync(file, 'utf8')) as Kubeconfig;
  const context = config.contexts?.find((c) => c.name === config['current-context'])?.context;
  const cluster = config.clusters?.find((c) => c.name === context?.cluster) ?? config.clusters?.[0];
  if (!cluster) throw new Error(`${file}: no cluster`);
  return cluster.cluster.server.replace(/\/$/, '');
}

const base = serverUrl();
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const slots = new Map<string, Slot>();
let rv = '';
let failures = 0;

/** A resource version as a number for ordering (the devcluster's are integers); -1 if not numeric. */
function order(version: string | undefined): bigint {
  return version && /^\d+$/.test(version) ? BigInt(version) : -1n;
}

/** Sends one request; resolves with the status and the parsed JSON body (undefined if none). */
function request(method: string, url: string, body?: unknown, contentType?: string): Promise<{ status: number; body: Obj | undefined }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: http.OutgoingHttpHeaders = { 'user-agent': USER_AGENT, accept: 'application/json' };
    if (payload !== undefined) {
      headers['content-type'] = contentType;
      headers['content-length'] = Buffer.byteLength(payload);
    }
    const req = http.request(base + url, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: Obj | undefined;
        try {
          parsed = text ? (JSON.parse(text) as Obj) : undefined;
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const objectPath = (m: Meta): string => `/apis/kopf.dev/v1/namespaces/${m.namespace}/kopfexamples/${m.name}`;
const essence = (obj: Obj): string => `${JSON.stringify({ spec: obj.spec })}\n`;

/** Sends one patch; records the response's resource version for the object's slot. */
async function patch(slot: Slot, url: string, body: unknown, type: 'json-patch' | 'merge-patch'): Promise<void> {
  const r = await request('PATCH', url, body, `application/${type}+json`);
  if (r.status >= 200 && r.status < 300) {
    const version = order(r.body?.metadata?.resourceVersion);
    if (version > slot.patchedRv) slot.patchedRv = version;
  } else if (failures++ < 20) {
    // A failed test of the resource version, or an object gone meanwhile: a newer event follows.
    process.stderr.write(`PATCH ${url} answered ${r.status}\n`);
  }
}

/** What the reference traces send for one event of the object. */
async function handle(slot: Slot, obj: Obj): Promise<void> {
  const meta = obj.metadata ?? {};
  const url = objectPath(meta);
  const hasFinalizer = meta.finalizers?.includes(FINALIZER) ?? false;
  const diffBase = meta.annotations?.[LHC];
  if (meta.deletionTimestamp) {
    if (hasFinalizer) {
      await patch(
        slot,
        url,
        [
          { op: 'test', path: '/metadata/resourceVersion', value: meta.resourceVersion },
          { op: 'remove', path: '/metadata/finalizers' },
        ],
        'json-patch',
      );
    }
  } else if (!hasFinalizer) {
    await patch(
      slot,
      url,
      [
        { op: 'test', path: '/metadata/resourceVersion', value: meta.resourceVersion },
        { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] },
      ],
      'json-patch',
    );
  } else if (diffBase === undefined) {
    const started = Date.now();
    await patch(slot, url, { metadata: { annotations: { [LHC]: essence(obj) } } }, 'merge-patch');
    await patch(slot, `${url}/status`, { status: { create_fn: { message: 'hello world', started } } }, 'merge-patch');
  } else {
    let old: unknown;
    try {
      old = (JSON.parse(diffBase) as { spec?: unknown }).spec;
    } catch {
      old = undefined;
    }
    if (JSON.stringify(old) !== JSON.stringify(obj.spec)) {
      await patch(slot, url, { metadata: { annotations: { [LHC]: essence(obj) } } }, 'merge-patch');
    }
  }
}

/** Handles the slot's waiting events one by one, newest only, skipping those older than its last patch. */
async function drain(key: string, slot: Slot): Promise<void> {
  slot.busy = true;
  try {
    while (slot.next && !slot.gone) {
      const obj = slot.next;
      slot.next = undefined;
      const version = order(obj.metadata?.resourceVersion);
      if (version >= 0n && version < slot.patchedRv) continue;
      try {
        await handle(slot, obj);
      } catch (err) {
        if (failures++ < 20) process.stderr.write(`${key}: ${err instanceof Error ? err.message : String(err)}\n`);
      }
    }
  } finally {
    slot.busy = false;
    if (slot.gone) slots.delete(key);
  }
}

function onObject(type: string, obj: Obj): void {
  const key = `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
  let slot = slots.get(key);
  if (type === 'DELETED') {
    if (slot) {
      slot.gone = true;
      slot.next = undefined;
      if (!slot.busy) slots.delete(key);
    }
    return;
  }
  if (!slot) {
    slot = { busy: false, next: undefined, patchedRv: -1n, gone: false };
    slots.set(key, slot);
  }
  slot.gone = false;
  slot.next = obj;
  if (!slot.busy) void drain(key, slot);
}

async function list(): Promise<void> {
  const r = await request('GET', PATH);
  if (r.status !== 200) throw new Error(`list answered ${r.status}`);
  const listed = r.body as unknown as { metadata: { resourceVersion: string }; items: Obj[] };
  const present = new Set<string>();
  for (const item of listed.items) {
    present.add(`${item.metadata?.namespace ?? ''}/${item.metadata?.name ?? ''}`);
    onObject('ADDED', item);
  }
  for (const key of [...slots.keys()]) {
    if (!present.has(key)) {
      const [namespace, name] = key.split('/');
      onObject('DELETED', { metadata: { namespace, name } });
    }
  }
  rv = listed.metadata.resourceVersion;
}

/** One watch stream from `rv`; resolves when it ends (`expired` if the server answered 410). */
function watchOnce(): Promise<{ expired: boolean }> {
  return new Promise((resolve, reject) => {
    let expired = false;
    const url = `${base}${PATH}?watch=true&allowWatchBookmarks=true&resourceVersion=${rv}`;
    const req = http.get(url, { headers: { 'user-agent': USER_AGENT } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        resolve({ expired: res.statusCode === 410 });
        return;
      }
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (!line.trim()) continue;
          const event = JSON.parse(line) as WatchEvent;
          if (event.type === 'ERROR') {
            if (event.object.code === 410) expired = true;
            continue;
          }
          if (event.object.metadata?.resourceVersion) rv = event.object.metadata.resourceVersion;
          if (event.type !== 'BOOKMARK') onObject(event.type, event.object);
        }
      });
      res.on('end', () => resolve({ expired }));
      res.on('error', () => resolve({ expired }));
      res.on('close', () => resolve({ expired }));
    });
    req.on('error', reject);
  });
}

async function main(): Promise<void> {
  await list();
  for (;;) {
    try {
      const { expired } = await watchOnce();
      if (expired) await list();
    } catch (err) {
      process.stderr.write(`watch: ${err instanceof Error ? err.message : String(err)}\n`);
      await new Promise((r) => setTimeout(r, 100));
      try {
        await list();
      } catch {
        /* retried on the next round */
      }
    }
  }
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
main().catch((err: unknown) => {
  process.stderr.write(`null operator: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
