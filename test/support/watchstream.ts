/**
 * A watch stream read event by event, for tests that act between events: open the watch (resolved
 * once the server flushed the headers, D-WATCH-2), write something, then wait for the event it
 * causes. Waiting is for the event itself, with a deadline that names what never came; nothing
 * sleeps. Plain HTTP and HTTPS (with the cluster's CA) alike; the test closes the stream.
 */
import * as http from 'node:http';
import * as https from 'node:https';

export type WatchEvent = { type: string; object: Record<string, any> };

export interface WatchStream {
  /** The HTTP status of the watch request. */
  readonly status: number;
  /** The next event; rejects naming `what` after `timeoutMs`, or when the stream ends first. */
  next(what: string, timeoutMs?: number): Promise<WatchEvent>;
  /** Events until one satisfies `done` (included), in order. */
  until(done: (event: WatchEvent) => boolean, what: string, timeoutMs?: number): Promise<WatchEvent[]>;
  close(): void;
}

export interface WatchOptions {
  readonly headers?: Record<string, string>;
  /** The CA of an HTTPS server (a devcluster's `caPem`). */
  readonly ca?: string;
}

/** Opens `url` (a watch request) and resolves once the response headers arrived. */
export function openWatch(url: string, options: WatchOptions = {}): Promise<WatchStream> {
  const client = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.get(url, { headers: options.headers ?? {}, ca: options.ca }, (res) => {
      const queued: WatchEvent[] = [];
      let buffer = '';
      let ended = false;
      let wake: (() => void) | undefined;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl).trim();
          buffer = buffer.slice(nl + 1);
          if (line) queued.push(JSON.parse(line) as WatchEvent);
        }
        wake?.();
      });
      const finish = (): void => {
        ended = true;
        wake?.();
      };
      res.on('end', finish);
      res.on('error', finish);
      res.on('close', finish);

      /** The next queued event, waiting for one until `deadline` (a timeout signal: a deadline, not a wait) aborts. */
      const take = async (deadline: AbortSignal, what: string): Promise<WatchEvent> => {
        while (queued.length === 0) {
          if (ended) throw new Error(`the watch ${url} ended before ${what}`);
          if (deadline.aborted) throw new Error(`Timed out waiting for ${what} on ${url}`);
          const arrived = await new Promise<boolean>((done) => {
            const expire = (): void => done(false);
            deadline.addEventListener('abort', expire, { once: true });
            wake = () => {
              deadline.removeEventListener('abort', expire);
              done(true);
            };
          });
          wake = undefined;
          if (!arrived) throw new Error(`Timed out waiting for ${what} on ${url}`);
        }
        return queued.shift()!;
      };

      resolve({
        status: res.statusCode ?? 0,
        next: (what, timeoutMs = 5000) => take(AbortSignal.timeout(timeoutMs), what),
        async until(done, what, timeoutMs = 5000) {
          const deadline = AbortSignal.timeout(timeoutMs);
          const seen: WatchEvent[] = [];
          for (;;) {
            const event = await take(deadline, what);
            seen.push(event);
            if (done(event)) return seen;
          }
        },
        close() {
          res.destroy();
          req.destroy();
        },
      });
    });
    req.on('error', reject);
  });
}
