/**
 * The connection discipline of the operator's own HTTP(S) servers (the webhook server, the health
 * and metrics endpoints): whoever can reach a port must not be able to hold the operator's file
 * descriptors, memory or exit hostage.
 *
 * - **Every failed connection is destroyed**, never half-closed: Node reports malformed HTTP,
 *   header and request timeouts, and (for HTTPS) handshake failures and handshake timeouts as
 *   client errors; a socket merely `end()`ed after one stays open (in CLOSE-WAIT once the client
 *   leaves) for as long as the process lives. Malformed HTTP still gets its `400` first.
 * - **Limits**: at most `maxConnections` connections at once (more are dropped at once by Node),
 *   the request headers within `headersTimeout`, the whole request within `requestTimeout`, idle
 *   keep-alive connections closed after `keepAliveTimeout`, the TLS handshake within
 *   `handshakeTimeout`.
 * - **Stopping never waits for a client**: the server tracks its sockets from the first byte of
 *   TCP (also those still in, or never starting, a TLS handshake, which the HTTP layer does not
 *   know yet) and destroys them all when it closes.
 *
 * This module only configures a server the caller built; what a server answers is the caller's.
 */

import type * as http from 'node:http';
import type * as net from 'node:net';
import type * as loggers from '../../cogs/structs/loggers.js';

/** The limits of one server; times in milliseconds. */
export interface ServerLimits {
  /** Connections at once (TCP, TLS handshakes included); further ones are dropped at once. */
  readonly maxConnections: number;
  /** From the connection's start (or the previous response) to the end of the request headers. */
  readonly headersTimeout: number;
  /** From the start of a request to the end of its body. */
  readonly requestTimeout: number;
  /** How long an idle keep-alive connection stays open after a response. */
  readonly keepAliveTimeout: number;
  /** From a TLS connection's start to the end of its handshake (HTTPS only). */
  readonly handshakeTimeout: number;
}

/**
 * The options of `http.createServer`/`https.createServer` that carry the limits (the timeouts are
 * checked every `connectionsCheckingInterval`, so that interval follows the shortest of them).
 */
export function serverOptions(limits: ServerLimits): http.ServerOptions & { readonly handshakeTimeout: number } {
  const shortest = Math.min(limits.headersTimeout, limits.requestTimeout);
  return {
    headersTimeout: limits.headersTimeout,
    requestTimeout: limits.requestTimeout,
    keepAliveTimeout: limits.keepAliveTimeout,
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(shortest / 2))),
    handshakeTimeout: limits.handshakeTimeout,
  };
}

/** A hardened server's connections. */
export interface Hardened {
  /** The connections open now (TCP, in or after the TLS handshake). */
  readonly connections: number;
  /** Stops listening and destroys every connection; resolves when the server is closed (idempotent). */
  close(): Promise<void>;
}

/** Where a hardened server reports what it did to a client. */
export interface HardeningOptions {
  readonly limits: ServerLimits;
  /** One DEBUG line per failed connection, one WARNING when the connection limit is first hit. */
  readonly logger: loggers.Logger;
  /** How the server calls itself in log lines, e.g. `The webhook server`. */
  readonly title: string;
}

const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';

/**
 * Applies the limits and the connection discipline (see the module's comment) to a server before
 * it listens; build it with `serverOptions(limits)` for the handshake timeout and timely checks.
 *
 * @example
 * const server = https.createServer({ ...tlsOptions, ...serverOptions(limits) }, handler);
 * const hardened = harden(server, { limits, logger, title: 'The webhook server' });
 * // … later:
 * await hardened.close();
 */
export function harden(server: http.Server, options: HardeningOptions): Hardened {
  const { limits, logger, title } = options;
  const sockets = new Set<net.Socket>();
  server.maxConnections = limits.maxConnections;
  // Also here, for servers built without `serverOptions()` (then checked every 30 s, Node's default).
  server.headersTimeout = limits.headersTimeout;
  server.requestTimeout = limits.requestTimeout;
  server.keepAliveTimeout = limits.keepAliveTimeout;
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  let dropped = 0;
  server.on('drop', () => {
    dropped += 1;
    if (dropped === 1) logger.warning(`${title} has refused a connection: ${limits.maxConnections} connections are open (the limit).`);
    else logger.debug(`${title} has refused a connection over the limit of ${limits.maxConnections}.`);
  });
  // For HTTPS, Node reports handshake failures both here and as `clientError`; either destroys.
  server.on('tlsClientError', (error: Error, socket: net.Socket) => {
    if (socket.destroyed) return; // reported as a client error already
    logger.debug(`${title} has closed a connection that failed the TLS handshake: ${summary(error)}`);
    socket.destroy();
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: net.Socket) => {
    logger.debug(`${title} has closed a connection after a client error: ${summary(error)}`);
    if (isMalformedHttp(error) && socket.writable && !socket.destroyed) {
      socket.end(BAD_REQUEST, () => socket.destroy());
    } else {
      socket.destroy();
    }
  });

  let closing: Promise<void> | undefined;
  return {
    get connections(): number {
      return sockets.size;
    },
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        if (!server.listening) {
          for (const socket of sockets) socket.destroy();
          resolve();
          return;
        }
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}

/** Whether Node's HTTP parser refused the bytes (then a 400 is owed); not for timeouts or TLS. */
function isMalformedHttp(error: NodeJS.ErrnoException): boolean {
  return typeof error.code === 'string' && error.code.startsWith('HPE_');
}

function summary(error: NodeJS.ErrnoException): string {
  const text = `${error.code ?? error.name}: ${error.message}`;
  return text
    .replace(/\s*[\r\n]+\s*/g, ' ')
    .trim()
    .slice(0, 300);
}
