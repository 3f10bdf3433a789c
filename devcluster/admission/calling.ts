/**
 * One call of one admission webhook (D-ADM-6..11): POST of an AdmissionReview to a URL or a
 * resolved service reference over HTTPS (verified against the webhook's caBundle, or Node's trust
 * store), with the webhook's timeout; the answer is validated (apiVersion, kind, uid, patch
 * fields). Anything that goes wrong is a call failure with a readable detail. The request carries
 * the headers a real API server sends, `User-Agent: kube-apiserver-admission` included, so that
 * webhook servers which log or check their caller see the same thing here as in a cluster.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import * as tls from 'node:tls';
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

interface Target {
  url: URL;
  servername: string | undefined;
  ca: string | undefined;
}

function targetOf(spec: JsonObject, opts: CallOptions): Target {
  const cc = json.isObject(spec['clientConfig']) ? spec['clientConfig'] : {};
  const ca = typeof cc['caBundle'] === 'string' && cc['caBundle'] ? Buffer.from(cc['caBundle'], 'base64').toString('utf8') : undefined;
  const timeout = Number(spec['timeoutSeconds'] ?? 10);
  if (typeof cc['url'] === 'string') {
    const url = new URL(cc['url']);
    url.searchParams.set('timeout', `${timeout}s`);
    return { url, servername: undefined, ca };
  }
  const svc = json.isObject(cc['service']) ? cc['service'] : {};
  const ns = String(svc['namespace'] ?? '');
  const name = String(svc['name'] ?? '');
  const port = Number(svc['port'] ?? 443);
  const hostPort = opts.resolver(ns, name, port);
  const url = new URL(`https://${hostPort}${typeof svc['path'] === 'string' ? svc['path'] : '/'}`);
  url.searchParams.set('timeout', `${timeout}s`);
  return { url, servername: `${name}.${ns}.svc`, ca };
}

export function callWebhook(spec: JsonObject, review: JsonObject, opts: CallOptions): Promise<CallResult> {
  let target: Target;
  try {
    target = targetOf(spec, opts);
  } catch (err) {
    return Promise.resolve({ ok: false, detail: `invalid client config: ${err instanceof Error ? err.message : String(err)}` });
  }
  const timeoutMs = Number(spec['timeoutSeconds'] ?? 10) * 1000;
  const body = JSON.stringify(review);
  const isHttps = target.url.protocol === 'https:';
  if (!isHttps && !opts.insecure) return Promise.resolve({ ok: false, detail: `Post "${target.url}": only https is allowed` });
  return new Promise((resolve) => {
    const options: https.RequestOptions = {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'user-agent': ADMISSION_USER_AGENT,
        'content-length': Buffer.byteLength(body),
      },
      timeout: timeoutMs,
    };
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
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) {
          resolve({ ok: false, detail: `Post "${target.url}": unexpected status code ${res.statusCode}` });
          return;
        }
        try {
          const parsed = JSON.parse(text) as unknown;
          resolve(json.isObject(parsed) ? { ok: true, response: parsed } : { ok: false, detail: 'received invalid webhook response: not an object' });
        } catch (err) {
          resolve({ ok: false, detail: `received invalid webhook response: ${err instanceof Error ? err.message : String(err)}` });
        }
      });
      res.on('error', (err) => resolve({ ok: false, detail: `Post "${target.url}": ${err.message}` }));
    });
    req.on('timeout', () => {
      req.destroy(new Error('context deadline exceeded'));
    });
    req.on('error', (err) => resolve({ ok: false, detail: `Post "${target.url}": ${err.message}` }));
    req.end(body);
  });
}
