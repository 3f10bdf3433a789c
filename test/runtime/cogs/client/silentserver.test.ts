/**
 * A server that accepts connections and never answers (R-SEC-25): the first request names it
 * within the TLS handshake timeout, on the virtual clock, instead of waiting out the request
 * timeout in silence.
 */
import * as net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../../runtime/cogs/aio/clocks.js';
import * as api from '../../../../runtime/cogs/client/api.js';
import * as credentials from '../../../../runtime/cogs/client/credentials.js';
import * as errors from '../../../../runtime/cogs/client/errors.js';
import * as settings from '../../../../runtime/cogs/configs/settings.js';
import * as references from '../../../../runtime/cogs/structs/references.js';
import { until } from '../../../support/waiting.js';
import { RecordingLogger } from './helpers.js';

const NAMESPACES = references.makeResource({ group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false });

describe('R-SEC-25 a server that accepts connections but never answers', () => {
  let server: net.Server;
  let port: number;
  const sockets = new Set<net.Socket>();
  beforeEach(async () => {
    server = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  afterEach(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('R-SEC-25 is named within the TLS handshake timeout (10 s by default), long before the request timeout', async () => {
    const clock = new VirtualClock({ start: Date.UTC(2030, 0, 1), quiescenceTimeout: 10 });
    const vault = new credentials.Vault({ clock });
    vault.populate({ login: { server: `https://127.0.0.1:${port}`, token: 't' } });
    const s = new settings.OperatorSettings();
    s.networking.errorBackoffs = [];
    expect(s.networking.tlsHandshakeTimeout).toBe(10);
    expect(s.networking.requestTimeout).toBe(300);
    const logger = new RecordingLogger();
    const client = new api.HttpKubeApi({ vault, settings: s, logger, clock });
    try {
      const failure = client.list(NAMESPACES, null).catch((e: unknown) => e);
      // Once connected, the earliest timer is the handshake's, not the request's 300 s.
      await until(() => (clock.nextDue() === clock.now() + 10_000 ? true : undefined), 'the handshake timer');
      await clock.advance(10_000);
      const error = (await failure) as errors.RequestTimeoutError;
      expect(error).toBeInstanceOf(errors.RequestTimeoutError);
      expect(error.unsent).toBe(true);
      expect(error.message).toBe(
        `GET https://127.0.0.1:${port}/api/v1/namespaces got no TLS handshake from 127.0.0.1:${port} within 10 s: ` +
          'the server accepts connections but does not answer (settings.networking.tlsHandshakeTimeout).',
      );
      expect(logger.messages('error')).toEqual([
        `Request attempt #1/1 failed; escalating: GET https://127.0.0.1:${port}/api/v1/namespaces -> RequestTimeoutError: got no TLS handshake from 127.0.0.1:${port} within 10 s: the server accepts connections but does not answer (settings.networking.tlsHandshakeTimeout)`,
      ]);
    } finally {
      client.close();
    }
  });
});
