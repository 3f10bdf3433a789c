/**
 * The request log (D-FAULT-12): what clients sent and what they got, with counts per verb and
 * resource. Benchmarks count API calls with it; tests assert exact wire sequences against it.
 */

export interface RequestRecord {
  time: number;
  method: string;
  path: string;
  query: string;
  verb: string;
  group: string | undefined;
  resource: string | undefined;
  subresource: string | undefined;
  namespace: string | undefined;
  name: string | undefined;
  headers: { accept?: string; contentType?: string; userAgent?: string; authorization?: string };
  body: string | undefined;
  user: string;
  code: number;
  responseBody: string | undefined;
  durationMs: number;
  fault: boolean;
}

type Waiter = { predicate: (r: RequestRecord) => boolean; resolve: (r: RequestRecord) => void };

export class RequestLog {
  private entries: RequestRecord[] = [];
  private waiters: Waiter[] = [];
  /** Keep response bodies (off by default: memory). */
  keepResponses = false;
  /** Keep request bodies (on by default). */
  keepBodies = true;

  get all(): readonly RequestRecord[] {
    return this.entries;
  }

  record(entry: RequestRecord): void {
    this.entries.push(entry);
    if (!this.waiters.length) return;
    const still: Waiter[] = [];
    for (const w of this.waiters)
      if (w.predicate(entry)) w.resolve(entry);
      else still.push(w);
    this.waiters = still;
  }

  clear(): void {
    this.entries = [];
  }

  filter(predicate: (r: RequestRecord) => boolean): RequestRecord[] {
    return this.entries.filter(predicate);
  }

  /** Counts per `verb resource[/sub]`, e.g. `{ 'patch kopfexamples': 3, 'patch kopfexamples/status': 1 }`. */
  counts(predicate: (r: RequestRecord) => boolean = () => true): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.entries) {
      if (!predicate(r)) continue;
      const key = `${r.verb} ${r.resource ?? r.path}${r.subresource ? `/${r.subresource}` : ''}`;
      out[key] = (out[key] ?? 0) + 1;
    }
    return out;
  }

  /** Resolves with the first request (already logged or future) matching the predicate. */
  waitFor(predicate: (r: RequestRecord) => boolean, timeoutMs = 10_000): Promise<RequestRecord> {
    const found = this.entries.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        reject(new Error(`No matching request within ${timeoutMs} ms`));
      }, timeoutMs);
      const done = (r: RequestRecord): void => {
        clearTimeout(timer);
        resolve(r);
      };
      this.waiters.push({ predicate, resolve: done });
    });
  }
}
