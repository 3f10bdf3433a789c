/**
 * HTTP proxies for the transport (R-AUTH-4): which proxy a request goes through, and an agent that
 * tunnels HTTPS through it.
 *
 * An explicit `proxyUrl` of the credentials is always honoured. Proxies from environment variables
 * (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`, also lower-case) are used only when
 * `settings.networking.trustEnv` or the credentials' `trustEnv` is true. HTTPS targets are reached
 * with `CONNECT host:port` and TLS inside the tunnel; plain-HTTP targets are requested from the
 * proxy in absolute form (`transport` does that part). Only `http://` proxies are supported.
 */

import * as http from 'node:http';
import * as https from 'node:https';
import type * as stream from 'node:stream';
import * as tls from 'node:tls';

/** Whether `host` is excluded by a `NO_PROXY` list (`*`, exact names, domain suffixes, `host:port`). */
export function isExcluded(target: URL, noProxy: string | undefined): boolean {
  if (!noProxy) return false;
  const host = target.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = target.port || (target.protocol === 'https:' ? '443' : '80');
  return noProxy
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter(Boolean)
    .some((entry) => {
      if (entry === '*') return true;
      const [name, entryPort] = entry.split(/:(?=\d+$)/);
      if (entryPort !== undefined && entryPort !== port) return false;
      const domain = name!.replace(/^\*?\./, '');
      return host === domain || host.endsWith(`.${domain}`);
    });
}

/**
 * The proxy for a target: the explicit `proxyUrl`, else (only when `trustEnv`) the environment's
 * proxy for the target's scheme unless `NO_PROXY` excludes it; `undefined` for a direct connection.
 *
 * @throws TypeError for an unparsable or non-`http://` proxy URL.
 */
export function proxyFor(
  target: URL,
  options: { readonly proxyUrl?: string; readonly trustEnv?: boolean },
  env: NodeJS.ProcessEnv = process.env,
): URL | undefined {
  let raw = options.proxyUrl;
  if (!raw && options.trustEnv) {
    const pick = (name: string): string | undefined => env[name] || env[name.toLowerCase()] || undefined;
    const candidate = target.protocol === 'https:' ? (pick('HTTPS_PROXY') ?? pick('HTTP_PROXY')) : pick('HTTP_PROXY');
    if (candidate && !isExcluded(target, pick('NO_PROXY'))) raw = candidate;
  }
  if (!raw) return undefined;
  const proxy = new URL(raw);
  if (proxy.protocol !== 'http:') throw new TypeError(`Only http:// proxies are supported, got ${raw}`);
  return proxy;
}

/** The `Proxy-Authorization` header for credentials embedded in the proxy URL. */
export function proxyAuthorization(proxy: URL): string | undefined {
  if (!proxy.username) return undefined;
  const user = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return `Basic ${Buffer.from(user, 'utf8').toString('base64')}`;
}

/**
 * A keep-alive HTTPS agent whose sockets are TLS connections inside `CONNECT` tunnels through
 * `proxy`. TLS options (CA, client certificate, verification) apply to the target server.
 */
export class TunnelingAgent extends https.Agent {
  constructor(
    private readonly proxy: URL,
    options: https.AgentOptions,
  ) {
    super(options);
  }

  override createConnection(options: https.RequestOptions, callback?: (error: Error | null, stream: stream.Duplex) => void): stream.Duplex | null | undefined {
    const host = String(options.host ?? options.hostname ?? 'localhost');
    const authority = `${host.includes(':') ? `[${host}]` : host}:${options.port ?? 443}`;
    const headers: Record<string, string> = { host: authority };
    const authorization = proxyAuthorization(this.proxy);
    if (authorization) headers['proxy-authorization'] = authorization;
    const request = http.request({ host: this.proxy.hostname, port: this.proxy.port || 80, method: 'CONNECT', path: authority, headers });
    request.once('connect', (response, socket) => {
      if (response.statusCode !== 200) {
        socket.destroy();
        callback?.(new Error(`The proxy ${this.proxy.host} refused to connect to ${authority}: HTTP ${response.statusCode}`), socket);
        return;
      }
      const { path: _path, ...rest } = options as https.RequestOptions & tls.ConnectionOptions;
      const secure = tls.connect({ ...rest, socket, servername: rest.servername ?? (/^[\d.:]+$/.test(host) ? undefined : host) });
      callback?.(null, secure);
    });
    // On errors Node ignores the stream argument; the typings just do not say so.
    request.once('error', (error) => callback?.(error, undefined as unknown as stream.Duplex));
    request.end();
    return undefined;
  }
}
