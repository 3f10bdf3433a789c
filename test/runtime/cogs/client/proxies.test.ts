import * as http from 'node:http';
import * as net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../../devcluster/testing.js';
import * as api from '../../../../runtime/cogs/client/api.js';
import * as credentials from '../../../../runtime/cogs/client/credentials.js';
import * as proxies from '../../../../runtime/cogs/client/proxies.js';
import * as settings from '../../../../runtime/cogs/configs/settings.js';
import * as references from '../../../../runtime/cogs/structs/references.js';
import { RecordingLogger } from './helpers.js';

const NAMESPACES = references.makeResource({ group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false });

describe('R-AUTH-4 proxy selection', () => {
  const target = new URL('https://api.example.com:6443');
  const env = { HTTPS_PROXY: 'http://env-proxy:3128', NO_PROXY: 'localhost,.internal' };

  it('R-AUTH-4 honours an explicit proxyUrl', () => {
    expect(proxies.proxyFor(target, { proxyUrl: 'http://explicit:8080' }, env)?.host).toBe('explicit:8080');
  });

  it('R-AUTH-4 ignores environment proxies unless trustEnv', () => {
    expect(proxies.proxyFor(target, {}, env)).toBeUndefined();
    expect(proxies.proxyFor(target, { trustEnv: true }, env)?.host).toBe('env-proxy:3128');
    expect(proxies.proxyFor(target, { trustEnv: true }, { https_proxy: 'http://lower:1' })?.host).toBe('lower:1');
    expect(proxies.proxyFor(new URL('http://plain:80'), { trustEnv: true }, env)).toBeUndefined();
  });

  it.each([
    ['https://localhost:6443', true],
    ['https://api.internal', true],
    ['https://deep.api.internal:443', true],
    ['https://internal.example.com', false],
    ['https://api.example.com', false],
  ])('R-AUTH-4 NO_PROXY decides for %s: excluded %s', (url, excluded) => {
    expect(proxies.isExcluded(new URL(url), env.NO_PROXY)).toBe(excluded);
    expect(proxies.proxyFor(new URL(url), { trustEnv: true }, env) === undefined).toBe(excluded);
  });

  it('rejects non-http proxies and encodes proxy credentials', () => {
    expect(() => proxies.proxyFor(target, { proxyUrl: 'socks5://x:1' })).toThrow(TypeError);
    expect(proxies.proxyAuthorization(new URL('http://us%40er:p%3Ass@proxy:1'))).toBe(`Basic ${Buffer.from('us@er:p:ss').toString('base64')}`);
    expect(proxies.proxyAuthorization(new URL('http://proxy:1'))).toBeUndefined();
  });
});

/** A minimal forward proxy: CONNECT tunnels and absolute-form HTTP requests, with a log. */
async function startProxy(): Promise<{ url: string; log: string[]; close(): Promise<void> }> {
  const log: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    log.push(`${req.method} ${req.url}`);
    const upstream = http.request(req.url!, { method: req.method, headers: req.headers }, (response) => {
      res.writeHead(response.statusCode ?? 502, response.headers);
      response.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    log.push(`CONNECT ${req.url}`);
    const [host, port] = req.url!.split(':');
    const upstream = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
  });
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

for (const tls of [true, false]) {
  describe(`R-AUTH-4 requests through a proxy to an ${tls ? 'HTTPS' : 'HTTP'} devcluster`, () => {
    let cluster: DevCluster;
    let proxy: Awaited<ReturnType<typeof startProxy>>;
    beforeAll(async () => {
      cluster = await DevCluster.start({ tls });
      proxy = await startProxy();
    });
    afterAll(async () => {
      await proxy?.close();
      await cluster?.stop();
    });

    it(`R-AUTH-4 honours proxyUrl (${tls ? 'CONNECT tunnel' : 'absolute-form request'})`, async () => {
      const vault = new credentials.Vault();
      vault.populate({ login: { server: cluster.url, token: cluster.token, caData: cluster.caPem, proxyUrl: proxy.url } });
      const client = new api.HttpKubeApi({ vault, settings: new settings.OperatorSettings(), logger: new RecordingLogger() });
      try {
        const listing = await client.list(NAMESPACES, null);
        expect(listing.items.map((item) => item.metadata?.name)).toContain('default');
        expect(proxy.log).toEqual([tls ? `CONNECT 127.0.0.1:${cluster.port}` : `GET ${cluster.url}/api/v1/namespaces`]);
        expect(cluster.requests.all.at(-1)?.headers.authorization).toBe('<redacted>');
      } finally {
        client.close();
      }
    });
  });
}
