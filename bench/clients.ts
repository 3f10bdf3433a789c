/**
 * The load generator's HTTP client: plain requests over a keep-alive agent, each carrying the
 * benchmark's own user agent so the devcluster's request log can tell its requests from the
 * operator's, and a small pool that runs a numbered job with a fixed number of workers.
 */
import * as http from 'node:http';

/** The user agent of every request the benchmark itself sends. */
export const USER_AGENT = 'kopf-gen-bench/1';

/** A response: status code and body text. */
export interface Response {
  status: number;
  text: string;
}

/** Raised when a request answers with an unexpected status. */
export class RequestFailedError extends Error {
  readonly code = 'REQUEST_FAILED' as const;
  constructor(
    readonly method: string,
    readonly url: string,
    readonly status: number,
    readonly text: string,
  ) {
    super(`${method} ${url} answered ${status}: ${text.slice(0, 300)}`);
  }
}

/** A keep-alive client for one server. */
export class Client {
  private readonly agent: http.Agent;

  constructor(
    private readonly base: string,
    maxSockets: number,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets });
  }

  /** Sends one request; a body is JSON-encoded and sent with `contentType`. */
  request(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Response> {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const headers: http.OutgoingHttpHeaders = { 'user-agent': USER_AGENT, accept: 'application/json' };
      if (payload !== undefined) {
        headers['content-type'] = contentType;
        headers['content-length'] = Buffer.byteLength(payload);
      }
      const req = http.request(this.base + path, { method, agent: this.agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Like `request`, but rejects with `RequestFailedError` unless the status is one of `expected`. */
  async expect(expected: readonly number[], method: string, path: string, body?: unknown, contentType?: string): Promise<Response> {
    const r = await this.request(method, path, body, contentType);
    if (!expected.includes(r.status)) throw new RequestFailedError(method, path, r.status, r.text);
    return r;
  }

  /** Closes the idle sockets. */
  close(): void {
    this.agent.destroy();
  }
}

/** Runs `job(0)` … `job(total - 1)` with `workers` running at a time; rejects on the first failure. */
export async function pool(workers: number, total: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(workers, total) }, async () => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        await job(i);
      }
    }),
  );
}
