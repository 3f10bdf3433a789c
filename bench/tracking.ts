/**
 * What the benchmark knows about its objects, learnt the way any client would: a list and then a
 * watch of `kopfexamples` in all namespaces, re-established from the last resource version when
 * the stream ends. For each object it keeps only what the phases wait for — the create handler's
 * result in the status, the diff-base annotation's `spec.field`, the finalizers, and whether the
 * object is gone — and it resolves waits on whole sets of objects as events arrive. A benchmark
 * that needs more of each object (the chaos benchmark) listens to every change instead.
 */
import * as http from 'node:http';
import * as clients from './clients.js';

/** The diff-base annotation of Kopf (and of compatible frameworks). */
export const DIFF_BASE = 'kopf.zalando.org/last-handled-configuration';

/** What is known about one object; times are driver-side epoch milliseconds of event arrival. */
export interface Seen {
  readonly key: string;
  /** The create handler's result (`status.create_fn`), once present. */
  createResult: Record<string, unknown> | undefined;
  /** When `status.create_fn` was first seen. */
  handledAt: number | undefined;
  /** `spec.field` as stored in the diff-base annotation, once present. */
  diffBaseField: string | undefined;
  /** Whether the annotation is present at all. */
  hasDiffBase: boolean;
  finalizers: number;
  gone: boolean;
}

/** The result of a wait: how many objects met the condition, how many did not, and when it ended. */
export interface WaitResult {
  met: number;
  pending: number;
  endedAt: number;
}

type Condition = (s: Seen | undefined) => boolean;
interface Waiter {
  pending: Set<string>;
  condition: Condition;
  met: number;
  finish: () => void;
}
/** An object as the watch delivers it: the fields the benchmarks read. */
export interface TrackedObject {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  code?: number;
}
interface WatchEvent {
  type: string;
  object: TrackedObject;
}
/**
 * Called for every change the tracker learns of, before waits are checked: the object's key, its
 * new body (undefined once it is gone: a DELETED event, or missing from a re-list) and the event type.
 */
export type ChangeListener = (key: string, object: TrackedObject | undefined, type: string) => void;

const PATH = '/apis/kopf.dev/v1/kopfexamples';

/** Watches every `kopfexamples` object of one server. */
export class Tracker {
  private readonly objects = new Map<string, Seen>();
  private readonly waiters = new Set<Waiter>();
  private readonly rawDiffBases = new Map<string, string>();
  private rv = '';
  private stopped = false;
  private current: http.ClientRequest | undefined;

  constructor(
    private readonly base: string,
    private readonly client: clients.Client,
    private readonly onChange?: ChangeListener,
  ) {}

  /** Lists the objects and starts watching; resolves once the watch is open. */
  async start(): Promise<void> {
    await this.relist();
    await this.watch();
  }

  /** Stops watching; pending waits end at once with what they have. */
  stop(): void {
    this.stopped = true;
    this.current?.destroy();
    for (const waiter of [...this.waiters]) waiter.finish();
  }

  /** What is known about the object `namespace/name`. */
  get(namespace: string, name: string): Seen | undefined {
    return this.objects.get(`${namespace}/${name}`);
  }

  /**
   * Resolves when every object in `keys` (`namespace/name`) meets `condition`, or after
   * `timeoutMs` with the count of those that did not.
   */
  waitAll(keys: Iterable<string>, condition: Condition, timeoutMs: number): Promise<WaitResult> {
    const pending = new Set<string>();
    let met = 0;
    for (const key of keys)
      if (condition(this.objects.get(key))) met++;
      else pending.add(key);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        pending,
        condition,
        met,
        finish: () => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve({ met: waiter.met, pending: pending.size, endedAt: Date.now() });
        },
      };
      const timer = setTimeout(waiter.finish, timeoutMs);
      this.waiters.add(waiter);
      if (!pending.size) waiter.finish();
    });
  }

  private async relist(): Promise<void> {
    const r = await this.client.expect([200], 'GET', PATH);
    const list = JSON.parse(r.text) as { metadata: { resourceVersion: string }; items: TrackedObject[] };
    const present = new Set<string>();
    for (const item of list.items) present.add(this.observe('ADDED', item));
    for (const [key, seen] of this.objects) if (!present.has(key) && !seen.gone) this.observe('DELETED', undefined, key);
    this.rv = list.metadata.resourceVersion;
  }

  private watch(): Promise<void> {
    return new Promise((resolve, reject) => {
      const url = `${this.base}${PATH}?watch=true&allowWatchBookmarks=true&resourceVersion=${this.rv}`;
      const req = http.get(url, { headers: { 'user-agent': clients.USER_AGENT } }, (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`watch answered ${res.statusCode}`));
          res.resume();
          return;
        }
        resolve();
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let nl: number;
          while ((nl = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, nl);
            buffer = buffer.slice(nl + 1);
            if (line.trim()) this.onEvent(JSON.parse(line) as WatchEvent);
          }
        });
        let ended = false;
        const again = (): void => {
          if (!ended) {
            ended = true;
            this.reconnect();
          }
        };
        res.on('end', again);
        res.on('error', again);
        res.on('close', again);
      });
      req.on('error', (err) => {
        if (this.stopped) return;
        reject(err);
      });
      this.current = req;
    });
  }

  private reconnect(): void {
    if (this.stopped) return;
    void (async () => {
      while (!this.stopped) {
        try {
          if (!this.rv) await this.relist();
          await this.watch();
          return;
        } catch {
          this.rv = '';
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    })();
  }

  private onEvent(event: WatchEvent): void {
    if (event.type === 'ERROR') {
      // An expired resource version: the stream ends; list again before watching.
      if (event.object.code === 410) this.rv = '';
      return;
    }
    if (event.object.metadata?.resourceVersion) this.rv = event.object.metadata.resourceVersion;
    if (event.type === 'BOOKMARK') return;
    this.observe(event.type, event.object);
  }

  private observe(type: string, object: TrackedObject | undefined, knownKey?: string): string {
    const key = knownKey ?? `${object?.metadata?.namespace ?? ''}/${object?.metadata?.name ?? ''}`;
    let seen = this.objects.get(key);
    if (!seen) {
      seen = { key, createResult: undefined, handledAt: undefined, diffBaseField: undefined, hasDiffBase: false, finalizers: 0, gone: false };
      this.objects.set(key, seen);
    }
    if (type === 'DELETED' || !object) {
      seen.gone = true;
      this.rawDiffBases.delete(key);
      this.onChange?.(key, undefined, 'DELETED');
    } else {
      this.onChange?.(key, object, type);
      seen.gone = false;
      const result = object.status?.['create_fn'];
      seen.createResult = typeof result === 'object' && result !== null ? (result as Record<string, unknown>) : undefined;
      if (seen.createResult && seen.handledAt === undefined) seen.handledAt = Date.now();
      seen.finalizers = object.metadata?.finalizers?.length ?? 0;
      const raw = object.metadata?.annotations?.[DIFF_BASE];
      seen.hasDiffBase = raw !== undefined;
      if (raw !== this.rawDiffBases.get(key)) {
        if (raw === undefined) this.rawDiffBases.delete(key);
        else this.rawDiffBases.set(key, raw);
        seen.diffBaseField = raw === undefined ? undefined : fieldOf(raw);
      }
    }
    for (const waiter of [...this.waiters]) {
      if (waiter.pending.has(key) && waiter.condition(seen)) {
        waiter.pending.delete(key);
        waiter.met++;
        if (!waiter.pending.size) waiter.finish();
      }
    }
    return key;
  }
}

function fieldOf(raw: string): string | undefined {
  try {
    const essence = JSON.parse(raw) as { spec?: { field?: unknown } };
    return typeof essence.spec?.field === 'string' ? essence.spec.field : undefined;
  } catch {
    return undefined;
  }
}
