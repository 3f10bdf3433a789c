/**
 * Test helpers: a loopback HTTPS server configured as the devcluster configures its own
 * (`requestCert: true, rejectUnauthorized: false`, trusting the cluster CA for client
 * certificates), and a one-shot HTTPS client that trusts only a given CA.
 */
import * as https from 'node:https';
import type * as net from 'node:net';
import type * as tls from 'node:tls';

export interface PeerReport {
  authorized: boolean;
  authorizationError: string | null;
  peer: tls.PeerCertificate | Record<string, never>;
  authorization: string | undefined;
}

export interface TestServer {
  port: number;
  close(): Promise<void>;
}

/**
 * Starts an HTTPS server on 127.0.0.1. `respond` gets what the TLS layer reports about the
 * client and returns a status code and JSON body.
 */
export async function startServer(
  opts: { certPem: string; keyPem: string; clientCaPem: string },
  respond: (report: PeerReport) => { status: number; body: unknown },
): Promise<TestServer> {
  const server = https.createServer(
    {
      cert: opts.certPem,
      key: opts.keyPem,
      ca: opts.clientCaPem,
      requestCert: true,
      rejectUnauthorized: false,
    },
    (req, res) => {
      const socket = req.socket as tls.TLSSocket;
      const report: PeerReport = {
        authorized: socket.authorized,
        authorizationError: socket.authorizationError ? String(socket.authorizationError) : null,
        peer: socket.getPeerCertificate(),
        authorization: req.headers.authorization,
      };
      const { status, body } = respond(report);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface ClientOptions {
  port: number;
  /** The only CA the client trusts. */
  caPem: string;
  /** Name checked against the server certificate; connects to 127.0.0.1 either way. */
  servername?: string;
  certPem?: string;
  keyPem?: string;
  headers?: Record<string, string>;
}

/** GET / over HTTPS; resolves with status and parsed body, rejects on TLS errors (with `code`). */
export function get(opts: ClientOptions): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: opts.port,
        path: '/',
        method: 'GET',
        agent: false,
        ca: opts.caPem,
        cert: opts.certPem,
        key: opts.keyPem,
        headers: opts.headers,
        ...(opts.servername ? { servername: opts.servername } : {}),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}
