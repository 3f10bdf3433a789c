/**
 * The operator's own HTTP servers over loopback: URL parsing with errors naming the option,
 * several endpoints sharing one server, 404/405/HEAD, handlers that throw (500, one line, no
 * stack), bind failures naming the endpoint and the address, and stopping by the signal.
 */
import * as http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type * as loggers from '../../../../runtime/cogs/structs/loggers.js';
import * as endpoints from '../../../../runtime/core/engines/endpoints.js';
import * as engineErrors from '../../../../runtime/core/engines/errors.js';

interface Reply {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

function request(url: string, method = 'GET'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function capturingLogger(): loggers.Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  const log =
    (level: string) =>
    (message: string): void => {
      lines.push(`${level} ${message}`);
    };
  return { lines, debug: log('DEBUG'), info: log('INFO'), warning: log('WARNING'), error: log('ERROR'), critical: log('CRITICAL') };
}

const stops: AbortController[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop.abort();
});

/** Serves endpoints in the background; resolves with their bound URLs by name. */
async function serve(
  list: readonly endpoints.Endpoint[],
  logger: loggers.Logger = capturingLogger(),
): Promise<{ urls: Record<string, string>; stop: AbortController; done: Promise<void> }> {
  const stop = new AbortController();
  stops.push(stop);
  let ready!: (served: readonly endpoints.ServedEndpoint[]) => void;
  const serving = new Promise<readonly endpoints.ServedEndpoint[]>((resolve) => {
    ready = resolve;
  });
  const done = endpoints.serveEndpoints({ endpoints: list, logger, signal: stop.signal, onServing: ready });
  const served = await Promise.race([
    serving,
    done.then(() => {
      throw new Error('stopped before serving');
    }),
  ]);
  return { urls: Object.fromEntries(served.map((s) => [s.name, s.url])), stop, done };
}

const json = (body: unknown): endpoints.EndpointResponse => ({ status: 200, contentType: 'application/json', body: JSON.stringify(body) });

describe('endpoint URLs (R-ACTIVITY-4: http://HOST:PORT/PATH)', () => {
  it('R-ACTIVITY-4 parses host, port and path, with localhost and port 80 as defaults', () => {
    expect(endpoints.parseEndpointUrl('http://0.0.0.0:8080/healthz', '--liveness')).toEqual({ host: '0.0.0.0', port: 8080, path: '/healthz' });
    expect(endpoints.parseEndpointUrl('http://:8080/healthz', '--liveness')).toEqual({ host: 'localhost', port: 8080, path: '/healthz' });
    expect(endpoints.parseEndpointUrl('http://example/x', 'o')).toEqual({ host: 'example', port: 80, path: '/x' });
    expect(endpoints.parseEndpointUrl('http://127.0.0.1:81', 'o')).toEqual({ host: '127.0.0.1', port: 81, path: '/' });
    expect(endpoints.parseEndpointUrl('http://[::1]:90/a/b', 'o')).toEqual({ host: '::1', port: 90, path: '/a/b' });
    expect(endpoints.formatAddress({ host: '::1', port: 90, path: '/a' })).toBe('http://[::1]:90/a');
  });

  it.each([
    ['https://0.0.0.0:8080/healthz', 'the scheme must be http, not https'],
    ['tcp://0.0.0.0:8080', 'the scheme must be http, not tcp'],
    ['0.0.0.0:8080/healthz', 'the scheme must be http, and it has none'],
    ['', 'it is empty'],
    ['http://h:99999/x', 'the port must be between 0 and 65535, not 99999'],
    ['http://u:p@h:80/x', 'credentials are not supported'],
    ['http://h:80/x?a=1', 'a query is not supported'],
    ['http://h:80/x#top', 'a fragment is not supported'],
    ['http://h:port/x', 'it cannot be parsed as a URL'],
  ])('R-ACTIVITY-4 rejects %j with an error naming the option', (url, why) => {
    const attempt = (): unknown => endpoints.parseEndpointUrl(url, '--liveness');
    expect(attempt).toThrow(engineErrors.EndpointUrlError);
    expect(attempt).toThrow(`--liveness: ${JSON.stringify(url)} is not a valid endpoint URL: ${why}`);
  });

  it('R-SEC-9 parses https:// where allowed (port default 443), and refuses it elsewhere', () => {
    expect(endpoints.parseEndpointUrl('https://0.0.0.0:8443/metrics', '--metrics', ['http', 'https'])).toEqual({
      host: '0.0.0.0',
      port: 8443,
      path: '/metrics',
      secure: true,
    });
    expect(endpoints.parseEndpointUrl('https://:/metrics', '--metrics', ['http', 'https'])).toEqual({
      host: 'localhost',
      port: 443,
      path: '/metrics',
      secure: true,
    });
    expect(endpoints.formatAddress({ host: '::1', port: 8443, path: '/metrics', secure: true })).toBe('https://[::1]:8443/metrics');
    expect(() => endpoints.parseEndpointUrl('https://0.0.0.0:8443/healthz', '--liveness')).toThrow('the scheme must be http, not https');
    expect(() => endpoints.parseEndpointUrl('ftp://h/m', '--metrics', ['http', 'https'])).toThrow('the scheme must be http or https, not ftp');
  });

  it('R-SEC-9 a plain and a TLS endpoint on one port are a conflict, found before binding', () => {
    const handle = (): endpoints.EndpointResponse => json({});
    const tls = { cert: 'c', key: 'k' };
    expect(() =>
      endpoints.planServers([
        { name: 'liveness', url: 'http://0.0.0.0:8080/healthz', handle },
        { name: 'metrics', url: 'https://0.0.0.0:8080/metrics', tls, handle },
      ]),
    ).toThrow('The metrics endpoint and the liveness endpoint both use port 8080 of 0.0.0.0, but one over TLS and the other not: give them different ports.');
    expect(() => endpoints.planServers([{ name: 'metrics', url: 'https://0.0.0.0:8443/metrics', handle }])).toThrow('the scheme must be http, not https');
  });

  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['localhost', true],
    ['10.0.0.5', false],
    ['::ffff:10.0.0.5', false],
    ['0.0.0.0', false],
    ['', false],
  ])('R-SEC-14 isLoopbackHost(%j) is %s', (host, loopback) => {
    expect(endpoints.isLoopbackHost(host)).toBe(loopback);
  });

  it('two endpoints with the same path on the same server are a conflict, found before binding', () => {
    const handle = (): endpoints.EndpointResponse => json({});
    expect(() =>
      endpoints.planServers([
        { name: 'liveness', url: 'http://127.0.0.1:0/x', handle },
        { name: 'readiness', url: 'http://127.0.0.1:0/x', handle },
      ]),
    ).toThrow('The readiness endpoint and the liveness endpoint both use http://127.0.0.1:0/x');
  });

  it('groups endpoints by host and port', () => {
    const handle = (): endpoints.EndpointResponse => json({});
    const plan = endpoints.planServers([
      { name: 'liveness', url: 'http://0.0.0.0:8080/healthz', handle },
      { name: 'readiness', url: 'http://0.0.0.0:8080/readyz', handle },
      { name: 'metrics', url: 'http://0.0.0.0:9090/metrics', handle },
    ]);
    expect(plan.map((p) => [p.host, p.port, [...p.paths]])).toEqual([
      [
        '0.0.0.0',
        8080,
        [
          ['/healthz', 'liveness'],
          ['/readyz', 'readiness'],
        ],
      ],
      ['0.0.0.0', 9090, [['/metrics', 'metrics']]],
    ]);
  });
});

describe('serving endpoints over loopback', () => {
  it('R-ACTIVITY-4 endpoints on one host and port share one server; unknown paths get 404', async () => {
    const { urls } = await serve([
      { name: 'liveness', url: 'http://127.0.0.1:0/healthz', handle: () => json({ alive: true }) },
      { name: 'readiness', url: 'http://127.0.0.1:0/readyz', handle: async () => ({ status: 503, contentType: 'text/plain', body: 'not yet' }) },
    ]);
    expect(new URL(urls['liveness']!).port).toBe(new URL(urls['readiness']!).port);
    const live = await request(urls['liveness']!);
    expect([live.status, live.headers['content-type'], JSON.parse(live.body)]).toEqual([200, 'application/json', { alive: true }]);
    const ready = await request(urls['readiness']!);
    expect([ready.status, ready.body]).toEqual([503, 'not yet']);
    const missing = await request(new URL('/nothing', urls['liveness']).href);
    expect(missing.status).toBe(404);
    const query = await request(`${urls['liveness']!}?verbose=1`);
    expect(query.status).toBe(200);
  });

  it('answers HEAD like GET without a body, and other methods with 405', async () => {
    const { urls } = await serve([{ name: 'liveness', url: 'http://127.0.0.1:0/healthz', handle: () => json({ a: 1 }) }]);
    const head = await request(urls['liveness']!, 'HEAD');
    expect([head.status, head.body, head.headers['content-length']]).toEqual([200, '', '7']);
    const post = await request(urls['liveness']!, 'POST');
    expect([post.status, post.headers['allow']]).toEqual([405, 'GET, HEAD']);
  });

  it('R-SEC-14 a handler that throws gets a 500 with a fixed line, without the error text or a stack; it is logged once; the server goes on', async () => {
    const logger = capturingLogger();
    let calls = 0;
    const { urls } = await serve(
      [
        {
          name: 'liveness',
          url: 'http://127.0.0.1:0/healthz',
          handle: async () => {
            calls += 1;
            if (calls === 1) throw new Error('probe exploded\n    at secret (/app/src/x.ts:1:1)');
            if (calls === 2) throw 'a plain string'; // eslint-disable-line @typescript-eslint/only-throw-error
            return json({ ok: true });
          },
        },
      ],
      logger,
    );
    const first = await request(urls['liveness']!);
    expect(first.status).toBe(500);
    expect(first.body).toBe("Internal error of the liveness endpoint; the operator's log tells more.\n");
    expect(first.body).not.toContain('exploded');
    expect(first.body).not.toContain('at secret');
    const second = await request(urls['liveness']!);
    expect([second.status, second.body]).toEqual([500, "Internal error of the liveness endpoint; the operator's log tells more.\n"]);
    expect(logger.lines.filter((line) => line.startsWith('ERROR'))).toEqual([
      'ERROR The liveness endpoint has failed to answer GET /healthz: Error: probe exploded',
      'ERROR The liveness endpoint has failed to answer GET /healthz: a plain string',
    ]);
    expect((await request(urls['liveness']!)).status).toBe(200);
  });

  it('logs one DEBUG line per served endpoint with its real address', async () => {
    const logger = capturingLogger();
    const { urls } = await serve([{ name: 'liveness', url: 'http://127.0.0.1:0/healthz', handle: () => json({}) }], logger);
    expect(logger.lines).toContain(`DEBUG Serving the liveness endpoint at ${urls['liveness']!}`);
  });

  it('stops when the signal aborts: the promise resolves and the port is closed, even with a request in flight', async () => {
    let started!: () => void;
    const inFlight = new Promise<void>((resolve) => {
      started = resolve;
    });
    let sawAbort = false;
    const { urls, stop, done } = await serve([
      {
        name: 'slow',
        url: 'http://127.0.0.1:0/slow',
        handle: ({ signal }) =>
          new Promise((_resolve, reject) => {
            started();
            signal.addEventListener('abort', () => {
              sawAbort = true;
              reject(signal.reason);
            });
          }),
      },
    ]);
    const pending = request(urls['slow']!).then(
      () => 'answered',
      () => 'dropped',
    );
    await inFlight;
    stop.abort();
    await done;
    expect(sawAbort).toBe(true);
    expect(await pending).toBe('dropped');
    await expect(request(urls['slow']!)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('a port that cannot be bound rejects with an error naming the endpoints and the address', async () => {
    const { urls } = await serve([{ name: 'liveness', url: 'http://127.0.0.1:0/healthz', handle: () => json({}) }]);
    const port = new URL(urls['liveness']!).port;
    const stop = new AbortController();
    stops.push(stop);
    const attempt = endpoints.serveEndpoints({
      endpoints: [
        { name: 'metrics', url: `http://127.0.0.1:${port}/metrics`, handle: () => json({}) },
        { name: 'readiness', url: `http://127.0.0.1:${port}/readyz`, handle: () => json({}) },
      ],
      logger: capturingLogger(),
      signal: stop.signal,
    });
    await expect(attempt).rejects.toThrow(engineErrors.EndpointBindError);
    await expect(attempt).rejects.toThrow(
      `Cannot serve the metrics, readiness endpoints at http://127.0.0.1:${port}: EADDRINUSE (the address is already in use`,
    );
  });

  it('bad URLs reject before anything is bound', async () => {
    const stop = new AbortController();
    stops.push(stop);
    await expect(
      endpoints.serveEndpoints({
        endpoints: [{ name: 'liveness', option: 'livenessEndpoint', url: 'https://x/healthz', handle: () => json({}) }],
        logger: capturingLogger(),
        signal: stop.signal,
      }),
    ).rejects.toThrow('livenessEndpoint: "https://x/healthz" is not a valid endpoint URL: the scheme must be http, not https');
  });
});
