/**
 * The listening socket of a webhook server: an HTTPS (or, when insecure, HTTP) server bound to an
 * address and port, whose certificate can be swapped in place.
 *
 * Swapping the secure context instead of re-binding keeps the port and never refuses a connection
 * during a certificate rotation: new handshakes get the new certificate, connections already open
 * finish with the old one. Closing ends every open connection at once, so that an operator's exit
 * is never held up by a keep-alive connection of the API server. Handshake failures (clients that
 * do not trust the certificate, or whose own certificate is refused) and malformed HTTP are logged
 * as one line each and never reach the request handling.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import type * as net from 'node:net';

import type * as loggers from '../../cogs/structs/loggers.js';
import * as errors from './errors.js';
import type * as materials from './materials.js';

/** A bound server. */
export interface Listener {
  /** The port actually bound (the random one when port 0 was asked for). */
  readonly port: number;
  readonly scheme: 'http' | 'https';
  /** Presents new TLS material from now on (HTTPS only). */
  update(material: materials.Material): void;
  /** Stops listening and ends all connections; resolves when closed (idempotent). */
  close(): Promise<void>;
}

/** Where and how to listen. */
export interface ListenOptions {
  /** The address; `undefined`: all interfaces. */
  readonly addr: string | undefined;
  /** The port; `0`: a random free one. */
  readonly port: number;
  readonly material: materials.Material;
  readonly handler: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  readonly logger: loggers.Logger;
}

/**
 * Binds a server.
 *
 * @throws errors.WebhookListenError if the address cannot be bound (in use, not local, denied).
 */
export async function listen(options: ListenOptions): Promise<Listener> {
  const { material, logger } = options;
  const secure = material.secure;
  const server: http.Server = secure
    ? https.createServer({ ...secure.context, requestCert: secure.requestCert, rejectUnauthorized: secure.rejectUnauthorized }, options.handler)
    : http.createServer(options.handler);
  server.on('tlsClientError', (error: Error) => {
    logger.debug(`Webhook client failed the TLS handshake: ${errors.oneLine(error)}`);
  });
  server.on('clientError', (error: Error, socket: net.Socket) => {
    logger.debug(`Webhook client sent a malformed HTTP request: ${errors.oneLine(error)}`);
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
  });

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
  let closing: Promise<void> | undefined;
  return {
    port: address.port,
    scheme: secure ? 'https' : 'http',
    update(next: materials.Material): void {
      if (next.secure && server instanceof https.Server) server.setSecureContext(next.secure.context);
    },
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
