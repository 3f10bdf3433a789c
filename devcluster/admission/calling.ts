/**
 * One call of one webhook — an admission webhook (D-ADM-6..11) or a CRD's conversion webhook
 * (D-CONV-401): POST of a review to a URL or a resolved service reference over HTTPS (verified against the webhook's caBundle, or Node's trust
 * store), with the webhook's timeout; the answer is validated (apiVersion, kind, uid, patch
 * fields). Anything that goes wrong is a call failure with a readable detail.
 *
 * The request carries the headers a real API server (Go's HTTP client) sends, in its order and with
 * its canonical names — `Host`, `User-Agent: kube-apiserver-admission`, `Content-Length`,
 * `Accept` (JSON, then anything), `Content-Type: application/json`, `Accept-Encoding: gzip` — and
 * no `Connection` header (D-ADM-13): webhook servers that log or check their caller, or read
 * headers case-sensitively (a plain dict of aiohttp's headers, as in Kopf's examples), see the
 * same thing here as in a cluster. A gzip-encoded answer is decoded, as Go's client does.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import * as tls from 'node:tls';
import * as zlib from 'node:zlib';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

/** The `User-Agent` of a real API server's admission calls. */
export const ADMISSION_USER_AGENT = 'kube-apiserver-admission';

export type ServiceResolver = (namespace: string, name: string, port: number) => string;

export const defaultServiceResolver: ServiceResolver = (_ns, _name, port) => `127.0.0.1:${port}`;

export interface CallOptions {
  resolver: ServiceResolver;
  /** Allow http:// URLs and skip certificate verification (divergence, D-ADM-10). */
  insecure: boolean;
}

export type CallResult = { ok: true; response: JsonObject } | { ok: false; detail: string };

/** What differs between kinds of webhook calls: admission webhooks name their timeout, conversion webhooks cannot. */
export interface CallShape {
  /** The call's timeout when the webhook's spec names none (admission: 10 s; conversion: 30 s, D-CONV-401). */
  defaultTimeoutSeconds?: number;
  /** The `User-Agent` header (default: the admission one). */
  userAgent?: string;
}

const timeoutSecondsOf = (spec: JsonObject, shape: CallShape): number => Number(spec['timeoutSeconds'] ?? shape.defaultTimeoutSeconds ?? 10);

interface Target {
  /** Where the request goes (a service reference resolved to `host:port`). */
  url: URL;
  /** The URL as the API server names it: for a service, `https://<name>.<namespace>.svc:<port><path>`. */
  shown: string;
  /** The `Host` header: the URL's host, or `<name>.<namespace>.svc:<port>` for a service. */
  host: string;
  servername: string | undefined;
  ca: string | undefined;
}

function targetOf(spec: JsonObject, opts: CallOptions, timeout: number): Target {
  const cc = json.isObject(spec['clientConfig']) ? spec['clientConfig'] : {};
  const ca = typeof cc['caBundle'] === 'string' && cc['caBundle'] ? Buffer.from(cc['caBundle'], 'base64').toString('utf8') : undefined;
  if (typeof cc['url'] === 'string') {
    const url = new URL(cc['url']);
    url.searchParams.set('timeout', `${timeout}s`);
    return { url, shown: url.toString(), host: url.host, servername: undefined, ca };
  }
  const svc = json.isObject(cc['service']) ? cc['service'] : {};
  const ns = String(svc['namespace'] ?? '');
  const name = String(svc['name'] ?? '');
  const port = Number(svc['port'] ?? 443);
  const path = typeof svc['path'] === 'string' ? svc['path'] : '/';
  const url = new URL(`https://${opts.resolver(ns, name, port)}${path}`);
  url.searchParams.set('timeout', `${timeout}s`);
  const host = `${name}.${ns}.svc:${port}`;
  return { url, shown: `https://${host}${url.pathname}${url.search}`, host, servername: `${name}.${ns}.svc`, ca };
}

/** The request headers of a webhook call, named, valued and ordered as Go's client sends them. */
export function requestHeaders(host: string, body: string, userAgent = ADMISSION_USER_AGENT): Record<string, string> {
  return {
    Host: host,
    'User-Agent': userAgent,
    'Content-Length': String(Buffer.byteLength(body)),
    Accept: 'application/json, */*',
    'Content-Type': 'application/json',
    'Accept-Encoding': 'gzip',
  };
}

/** The response body as text, gunzipped when the server compressed it. */
function bodyText(res: http.IncomingMessage, raw: Buffer): string {
  const encoding = String(res.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  return (encoding === 'gzip' ? zlib.gunzipSync(raw) : raw).toString('utf8');
}

/**
 * POSTs `review` to the webhook `spec` describes (`clientConfig`, optional `timeoutSeconds`) and
 * resolves to its parsed answer or a failure detail; never rejects.
 */
export function callWebhook(spec: JsonObject, review: JsonObject, opts: CallOptions, shape: CallShape = {}): Promise<CallResult> {
  const timeoutSeconds = timeoutSecondsOf(spec, shape);
  let target: Target;
  try {
    target = targetOf(spec, opts, timeoutSeconds);
  } catch (err) {
    return Promise.resolve({ ok: false, detail: `invalid client config: ${err instanceof Error ? err.message : String(err)}` });
  }
  const timeoutMs = timeoutSeconds * 1000;
  const body = JSON.stringify(review);
  const isHttps = target.url.protocol === 'https:';
  const shown = target.shown;
  if (!isHttps && !opts.insecure) return Promise.resolve({ ok: false, detail: `Post "${shown}": only https is allowed` });
  return new Promise((resolve) => {
    const options: https.RequestOptions = { method: 'POST', headers: requestHeaders(target.host, body, shape.userAgent), timeout: timeoutMs };
    if (isHttps) {
      options.ca = target.ca;
      options.servername = target.servername;
      options.rejectUnauthorized = !opts.insecure;
      if (target.servername) {
        const expected = target.servername;
        options.checkServerIdentity = (_host, cert) => tls.checkServerIdentity(expected, cert);
      }
    }
    const req = (isHttps ? https : http).request(target.url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        if (res.statusCode !== 200) {
          resolve({ ok: false, detail: `Post "${shown}": unexpected status code ${res.statusCode}` });
          return;
        }
        try {
          const parsed = JSON.parse(bodyText(res, Buffer.concat(chunks))) as unknown;
          resolve(json.isObject(parsed) ? { ok: true, response: parsed } : { ok: false, detail: 'received invalid webhook response: not an object' });
        } catch (err) {
          resolve({ ok: false, detail: `received invalid webhook response: ${err instanceof Error ? err.message : String(err)}` });
        }
      });
      res.on('error', (err) => resolve({ ok: false, detail: `Post "${shown}": ${err.message}` }));
    });
    req.on('timeout', () => {
      req.destroy(new Error('context deadline exceeded'));
    });
    req.on('error', (err) => resolve({ ok: false, detail: `Post "${shown}": ${err.message}` }));
    // Go's client sends no Connection header; Node adds one unless told not to.
    req.removeHeader('Connection');
    req.end(body);
  });
}
