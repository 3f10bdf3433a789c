/**
 * The Host and Origin check of a plain-HTTP devcluster (D-SEC-1). Over plain
 * HTTP nothing proves who the server is, so a web page could reach the devcluster through DNS
 * rebinding (its own host name re-pointed at 127.0.0.1, on the devcluster's fixed port) or send it
 * requests from another origin. Such requests carry a `Host` that is not a loopback name, or an
 * `Origin` of a page; kubectl, client-node and the runtime send `Host: 127.0.0.1:<port>` (the
 * server URL of the kubeconfig) and no `Origin`. So, without TLS, a request is refused when its
 * `Host` names anything but `localhost`, a loopback address (`127.x.x.x`, `[::1]`), the configured
 * listening address or an allowed host, or when it has an `Origin` whose host is none of those.
 * The port is not checked (it does not matter for rebinding). With TLS the certificate already
 * binds the names, and nothing is checked.
 */
import * as statuses from './statuses.js';

/** The host names accepted besides loopback ones (lower case, without port or brackets). */
export interface HostCheckOptions {
  readonly allowedHosts: readonly string[];
}

/** The name part of a `Host` header or URL host: lower case, without port, brackets or a final dot. */
export function hostName(host: string): string {
  let name = host.trim().toLowerCase();
  if (name.startsWith('[')) {
    const end = name.indexOf(']');
    name = end > 0 ? name.slice(1, end) : name.slice(1);
  } else {
    const colon = name.lastIndexOf(':');
    if (colon >= 0 && name.indexOf(':') === colon) name = name.slice(0, colon);
  }
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

/** Whether a host name is loopback: `localhost`, `127.0.0.0/8`, `::1`. */
export function isLoopback(name: string): boolean {
  return name === 'localhost' || name === '::1' || name === '0:0:0:0:0:0:0:1' || /^127(\.\d{1,3}){3}$/.test(name);
}

function accepted(name: string, options: HostCheckOptions): boolean {
  return isLoopback(name) || options.allowedHosts.some((h) => hostName(h) === name);
}

const HOW = (name: string): string =>
  `to accept it, start the devcluster with allowedHosts: [${JSON.stringify(name)}] (kopf-gen devcluster --allow-host ${name}) or with TLS`;

/**
 * The 403 for a request that a plain-HTTP devcluster refuses, or undefined when it is accepted.
 *
 * @example
 * check({ host: 'evil.example:8080' }, { allowedHosts: [] })?.message
 * // 'refused Host "evil.example:8080": the devcluster serves plain HTTP to loopback host names only …'
 */
export function check(headers: { host?: string; origin?: string }, options: HostCheckOptions): statuses.ApiError | undefined {
  const host = headers.host;
  if (host !== undefined && host !== '' && !accepted(hostName(host), options)) {
    const name = hostName(host);
    return statuses.forbidden(
      `refused Host ${JSON.stringify(host)}: the devcluster serves plain HTTP to loopback host names only (localhost, 127.0.0.1, [::1]), so that a web page cannot reach it by DNS rebinding; ${HOW(name)}`,
    );
  }
  const origin = headers.origin;
  if (origin !== undefined) {
    const name = originHost(origin);
    if (name === undefined || !accepted(name, options)) {
      return statuses.forbidden(
        `refused Origin ${JSON.stringify(origin)}: the devcluster over plain HTTP does not answer web pages of other origins; ${HOW(name ?? origin)}`,
      );
    }
  }
  return undefined;
}

function originHost(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    return url.hostname ? hostName(url.hostname) : undefined;
  } catch {
    return undefined;
  }
}
