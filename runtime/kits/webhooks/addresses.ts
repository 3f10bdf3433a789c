/**
 * Where a webhook server listens versus where the API server reaches it.
 *
 * A server may listen on every interface (`0.0.0.0`, `::`, or no address at all), but nobody can
 * connect to those: the URL handed to the API server needs a real host. These pure functions turn
 * the listening options into that host, into the URL of the client configuration (with the port
 * left out when it is the scheme's default, IPv6 in brackets), into the root path requests are
 * routed under, and into the names the generated certificate must carry.
 */
import * as certificates from './certificates.js';

/** A reference to the Service in front of an in-cluster server. */
export interface ServiceOptions {
  readonly namespace: string;
  readonly name: string;
  /** The Service's port; default: the port the server listens on (Service port = container port). */
  readonly port?: number;
}

/**
 * The host to reach a listening address by (Kopf's rule): no address → `localhost`; `0.0.0.0` →
 * `127.0.0.1`; `::` → `::1`; anything else as it is.
 */
export function accessibleHost(addr: string | undefined): string {
  if (!addr) return 'localhost';
  const ip = certificates.canonicalIp(addr);
  if (ip === '0.0.0.0') return '127.0.0.1';
  if (ip === '::') return '::1';
  return addr;
}

/** The root path requests are served under: `''` or `/a/b` (one leading slash, no trailing one). */
export function rootPath(path: string | undefined): string {
  const trimmed = (path ?? '').replace(/^\/+|\/+$/g, '');
  return trimmed ? `/${trimmed}` : '';
}

/** `scheme://host[:port]/path`, the port left out when it is the scheme's default. */
export function buildUrl(scheme: 'http' | 'https', host: string, port: number, path: string): string {
  const ip = certificates.canonicalIp(host);
  const hostpart = ip?.includes(':') ? `[${ip}]` : host;
  const isDefault = (scheme === 'http' && port === 80) || (scheme === 'https' && port === 443);
  return `${scheme}://${hostpart}${isDefault ? '' : `:${port}`}${rootPath(path)}`;
}

/** The DNS names a Service is reached by inside a cluster (the API server uses `<name>.<namespace>.svc`). */
export function serviceNames(service: ServiceOptions): string[] {
  return [`${service.name}.${service.namespace}.svc`, `${service.name}.${service.namespace}.svc.cluster.local`];
}

/**
 * The names of a generated certificate: the Service's names (if any), the host (or the accessible
 * address), the accessible address, and the extra SANs; the first DNS name becomes the common name.
 */
export function certificateNames(options: {
  readonly host: string | undefined;
  readonly addr: string | undefined;
  readonly service: ServiceOptions | undefined;
  readonly extraSans: readonly string[];
}): string[] {
  const addr = accessibleHost(options.addr);
  return [...(options.service ? serviceNames(options.service) : []), options.host ?? addr, addr, ...options.extraSans];
}
