/**
 * The listening socket of a webhook server: an HTTPS (or, when insecure, HTTP) server bound to an
 * address and port, whose certificate can be swapped in place.
 *
 * Swapping the secure context instead of re-binding keeps the port and never refuses a connection
 * during a certificate rotation: new handshakes get the new certificate, connections already open
 * finish with the old one. Closing destroys every open connection at once (also those still in,
 * or never starting, a TLS handshake), so that an operator's exit is never held up by a client.
 * The connection discipline is the one of all the operator's servers (`core/engines/hardening`):
 * a connection limit, header, request, keep-alive and handshake timeouts (`DEFAULT_LIMITS`), and
 * every connection that fails — handshake failures (clients that do not trust the certificate, or
 * whose own certificate is refused), malformed HTTP, any timeout — is destroyed, logged as one
 * DEBUG line, and never reaches the request handling (R-SEC-5).
 */
import * as http from 'node:http';
import * as https from 'node:https';
import type * as net from 'node:net';

import type * as loggers from '../../cogs/structs/loggers.js';
import * as hardening from '../../core/engines/hardening.js';
import * as errors from './errors.js';
import type * as materials from './materials.js';

/** A bound server. */
export interface Listener {
  /** The port actually bound (the random one when port 0 was asked for). */
  readonly port: number;
  readonly scheme: 'http' | 'https';
  /** Presents new TLS material from now on (HTTPS only). */
  update(material: materials.Material): void;
  /** The connections open now (TCP, in or after the TLS handshake). */
  readonly connections: number;
  /** Stops listening and destroys all connections; resolves when closed (idempotent). */
  close(): Promise<void>;
}

/**
 * The webhook server's default limits (R-SEC-5). The API server gives a webhook at most 30 s
 * (`timeoutSeconds`, default 10 s) and sends its request at once: a handshake or request headers
 * taking 10 s, or a request body 30 s, come from no API server. 1,024 connections are far more than
 * the API servers of a cluster keep open to one webhook, and far fewer than a container's file
 * descriptors. Idle keep-alive connections close after 5 s (Node's default; the API server's
 * client reconnects transparently).
 */
export const DEFAULT_LIMITS: hardening.ServerLimits = Object.freeze({
  maxConnections: 1024,
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  keepAliveTimeout: 5_000,
  handshakeTimeout: 10_000,
});

/** Where and how to listen. */
export interface ListenOptions {
  /** The address; `undefined`: all interfaces. */
  readonly addr: string | undefined;
  /** The port; `0`: a random free one. */
  readonly port: number;
  readonly material: materials.Material;
  readonly handler: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  readonly logger: loggers.Logger;
  /** Default `DEFAULT_LIMITS`. */
  readonly limits?: hardening.ServerLimits;
}

/**
 * Binds a server.
 *
 * @throws errors.WebhookListenError if the address cannot be bound (in use, not local, denied).
 */
export async function listen(options: ListenOptions): Promise<Listener> {
  const { material, logger } = options;
  const limits = options.limits ?? DEFAULT_LIMITS;
  const secure = material.secure;
  const serverOptions = hardening.serverOptions(limits);
  const server: http.Server = secure
    ? https.createServer(
        { ...serverOptions, ...secure.context, requestCert: secure.requestCert, rejectUnauthorized: secure.rejectUnauthorized },
        options.handler,
      )
    : http.createServer(serverOptions, options.handler);
  const hardened = hardening.harden(server, { limits, logger, title: 'The webhook server' });

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => {
      const where = `${options.addr ?? '*'}:${options.port || '(random)'}`;
      reject(new errors.WebhookListenError(`The webhook server cannot listen on ${where}: ${errors.oneLine(error)}`, { cause: error }));
    };
    server.once('error', onError);
    server.listen({ port: options.port, host: options.addr }, () => {
      server.off('error', onError);
      resolve();
    });
  });
  server.on('error', (error: Error) => logger.error(`The webhook server failed: ${errors.oneLine(error)}`));

  const address = server.address() as net.AddressInfo;
  return {
    port: address.port,
    scheme: secure ? 'https' : 'http',
    get connections(): number {
      return hardened.connections;
    },
    update(next: materials.Material): void {
      if (next.secure && server instanceof https.Server) server.setSecureContext(next.secure.context);
    },
    close(): Promise<void> {
      return hardened.close();
    },
  };
}
