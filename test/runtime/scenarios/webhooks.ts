/**
 * Webhook servers written the way a user may write their own (R-ADMISSION-3), for the tests of the
 * admission engine until the built-in servers exist:
 *
 * - `localServer()`: HTTPS with `node:https` on loopback, with a certificate of its own CA (made
 *   with the devcluster's certificate helpers), which it yields as the `caBundle`. It passes the path
 *   below `/` (URL-decoded) as the webhook id and the request headers to the operator's request
 *   function, answers with the review, or with the status and one-line message of a
 *   `WebhookRequestError`; it closes when the operator's signal aborts. (Plain HTTP is not an option:
 *   webhook configurations accept only https URLs.)
 * - `inProcessServer()`: no network at all: it hands the request function to the test, which calls
 *   it directly, and yields the client configurations the test gives.
 */
import type * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as certs from '../../../devcluster/auth/certs.js';
import type * as webhooks from '../../../runtime/cogs/structs/webhooks.js';
import * as structErrors from '../../../runtime/cogs/structs/errors.js';

export interface LocalServer {
  /** The server for `settings.admission.server`. */
  readonly serve: webhooks.WebhookServerFn;
  /** The base URL once listening (`https://127.0.0.1:<port>`). */
  readonly url: () => string;
  /** Each request: its path and the status answered. */
  readonly received: Array<{ readonly path: string; readonly status: number }>;
  /** Whether it has closed after the operator's signal. */
  readonly closed: () => boolean;
  /** The environment it was started with. */
  readonly environment: () => webhooks.WebhookServerEnvironment | undefined;
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return signal.aborted ? Promise.resolve() : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** An HTTPS webhook server on `127.0.0.1` (a random port unless given). */
export function localServer(options: { readonly port?: number } = {}): LocalServer {
  let base = '';
  let isClosed = false;
  let env: webhooks.WebhookServerEnvironment | undefined;
  const received: Array<{ path: string; status: number }> = [];
  async function* serve(fn: webhooks.WebhookFn, environment?: webhooks.WebhookServerEnvironment): AsyncGenerator<webhooks.WebhookClientConfig> {
    env = environment;
    const ca = await certs.createCertificateAuthority();
    const serving = await certs.issueServingCertificate(ca, { hosts: ['localhost', '127.0.0.1'] });
    const server = https.createServer({ key: serving.keyPem, cert: serving.certPem }, (req, res) => {
      void (async () => {
        const path = (req.url ?? '/').split('?')[0]!;
        const text = await readBody(req);
        let payload: unknown = text;
        try {
          payload = JSON.parse(text);
        } catch {
          /* the operator refuses it with HTTP 400 */
        }
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
        let status = 200;
        let body: string;
        try {
          body = JSON.stringify(await fn(payload, { webhook: decodeURIComponent(path.replace(/^\/+/, '')), headers }));
        } catch (error) {
          status = error instanceof structErrors.WebhookRequestError ? error.status : 500;
          body = error instanceof Error ? error.message : String(error);
        }
        received.push({ path, status });
        res.writeHead(status, { 'content-type': status === 200 ? 'application/json' : 'text/plain' }).end(body);
      })();
    });
    await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      yield { url: base, caBundle: Buffer.from(ca.certPem).toString('base64') };
      await untilAborted(environment!.signal);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      isClosed = true;
    }
  }
  return { serve, url: () => base, received, closed: () => isClosed, environment: () => env };
}

export interface InProcessServer {
  readonly serve: webhooks.WebhookServerFn;
  /** The request function, once the operator started the server. */
  readonly fn: () => webhooks.WebhookFn | undefined;
  readonly environment: () => webhooks.WebhookServerEnvironment | undefined;
  /** Yields a client configuration (the first one is yielded at start). */
  readonly yieldConfig: (config: webhooks.WebhookClientConfig) => void;
  /** Ends the iteration (as a server that stops serving). */
  readonly end: () => void;
  /** Whether its iteration has been closed (by the operator, or by `end()`). */
  readonly closed: () => boolean;
}

/** A server that only hands the request function to the test and yields what it is told to. */
export function inProcessServer(first: webhooks.WebhookClientConfig = { url: 'https://hooks.example:9443' }): InProcessServer {
  let captured: webhooks.WebhookFn | undefined;
  let env: webhooks.WebhookServerEnvironment | undefined;
  let isClosed = false;
  const queue: Array<webhooks.WebhookClientConfig | 'end'> = [first];
  let wake: (() => void) | undefined;
  const push = (item: webhooks.WebhookClientConfig | 'end'): void => {
    queue.push(item);
    wake?.();
  };
  async function* serve(fn: webhooks.WebhookFn, environment?: webhooks.WebhookServerEnvironment): AsyncGenerator<webhooks.WebhookClientConfig> {
    captured = fn;
    env = environment;
    try {
      for (;;) {
        while (queue.length === 0) {
          if (environment!.signal.aborted) return;
          await Promise.race([
            new Promise<void>((resolve) => {
              wake = resolve;
            }),
            untilAborted(environment!.signal),
          ]);
        }
        const item = queue.shift()!;
        if (item === 'end') return;
        yield item;
      }
    } finally {
      isClosed = true;
    }
  }
  return { serve, fn: () => captured, environment: () => env, yieldConfig: push, end: () => push('end'), closed: () => isClosed };
}
