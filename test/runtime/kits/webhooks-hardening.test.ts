/**
 * The webhook server against hostile or unlucky clients, over real sockets on loopback
 * (R-SEC-5..8): connections that never start TLS, slow headers, too many connections, a stop with
 * such connections still open, bodies nested too deep or with too many items, random webhook paths
 * through the real admission engine and its metrics, and what all of that writes to the log. The
 * server's timers are Node's own (not the operator's clock), so the tests configure small timeouts
 * and wait for the sockets' close events.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import * as clocks from '../../../runtime/cogs/aio/clocks.js';
import * as settingsModule from '../../../runtime/cogs/configs/settings.js';
import * as references from '../../../runtime/cogs/structs/references.js';
import * as admission from '../../../runtime/core/engines/admission.js';
import * as memos from '../../../runtime/core/intents/memos.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { OperatorMetrics } from '../../../runtime/core/reactor/reporting.js';
import { WEBHOOK_DEPTH_LIMIT, WEBHOOK_ITEM_LIMIT, WebhookOptionsError, WebhookServer } from '../../../runtime/index.js';
import * as listening from '../../../runtime/kits/webhooks/listening.js';
import * as materials from '../../../runtime/kits/webhooks/materials.js';
import * as serving from '../../../runtime/kits/webhooks/serving.js';
import { ShapeScanner } from '../../../runtime/kits/webhooks/scanning.js';
import { on } from '../../../runtime/on.js';
import { eventually } from '../../support/waiting.js';
import { RecordingLogger } from '../cogs/client/helpers.js';
import { call, FakeFn, review, serve, type Served } from './webhooks-helpers.js';

const listeners: listening.Listener[] = [];
const running: Served[] = [];
const clients: net.Socket[] = [];

afterEach(async () => {
  for (const socket of clients.splice(0)) socket.destroy();
  for (const served of running.splice(0)) {
    served.stop.abort();
    await served.iterator.return?.();
  }
  await Promise.all(listeners.splice(0).map((listener) => listener.close()));
});

/** Small limits, so that Node's own timers fire within a test. */
const SMALL: listening.ListenOptions['limits'] = {
  maxConnections: 64,
  handshakeTimeout: 300,
  headersTimeout: 300,
  requestTimeout: 600,
  keepAliveTimeout: 300,
};

/** An HTTPS listener with a generated certificate, answering every request with 200. */
async function listen(limits = SMALL, logger = new RecordingLogger()): Promise<listening.Listener> {
  const material = await materials.loadMaterial({ insecure: false, names: ['127.0.0.1'] });
  const handler = (_req: http.IncomingMessage, res: http.ServerResponse): void => {
    res.end('ok');
  };
  const listener = await listening.listen({ addr: '127.0.0.1', port: 0, material, handler, logger, limits });
  listeners.push(listener);
  return listener;
}

/** A TCP connection to `port` that says nothing (so it never starts TLS). */
async function silent(port: number): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  clients.push(socket);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  return socket;
}

/** Resolves when the socket is closed; rejects after `ms` real milliseconds (a deadline, not a wait). */
function closed(socket: net.Socket, ms = 5000): Promise<void> {
  if (socket.destroyed && socket.closed) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the server did not close the connection')), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A TLS connection that completes its handshake and then sends only part of its request headers. */
async function slowHeaders(port: number): Promise<tls.TLSSocket> {
  const socket = tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false });
  socket.on('error', () => undefined);
  clients.push(socket);
  await new Promise<void>((resolve) => socket.once('secureConnect', resolve));
  socket.write('POST /v HTTP/1.1\r\nHost: x\r\n');
  return socket;
}

describe('R-SEC-5 connections', () => {
  it('R-SEC-5 connections that never start TLS are released when the clients leave', async () => {
    const listener = await listen({ ...SMALL, handshakeTimeout: 60_000 });
    const sockets = await Promise.all(Array.from({ length: 20 }, () => silent(listener.port)));
    await eventually(() => listener.connections === 20, 'the server to count 20 connections');
    for (const socket of sockets) socket.end();
    await eventually(() => listener.connections === 0, 'the server to release the connections the clients left');
  });

  it('R-SEC-5 connections that never start TLS are destroyed at the handshake timeout, not half-closed', async () => {
    const logger = new RecordingLogger();
    const listener = await listen(SMALL, logger);
    const sockets = await Promise.all(Array.from({ length: 20 }, () => silent(listener.port)));
    // The clients stay: only the server can end these connections.
    await Promise.all(sockets.map((socket) => closed(socket)));
    await eventually(() => listener.connections === 0, 'the server to hold no connection');
    expect(logger.messages('warning')).toEqual([]);
    expect(logger.messages('debug').some((m) => m.includes('TLS handshake'))).toBe(true);
  });

  it('R-SEC-5 a client sending its headers slowly is cut at the header timeout', async () => {
    const listener = await listen();
    const sockets = await Promise.all(Array.from({ length: 10 }, () => slowHeaders(listener.port)));
    await Promise.all(sockets.map((socket) => closed(socket)));
    await eventually(() => listener.connections === 0, 'the server to hold no connection');
  });

  it('R-SEC-5 connections over the limit are dropped at once; one WARNING says so', async () => {
    const logger = new RecordingLogger();
    const listener = await listen({ ...SMALL, maxConnections: 5, handshakeTimeout: 60_000 }, logger);
    const kept = await Promise.all(Array.from({ length: 5 }, () => silent(listener.port)));
    await eventually(() => listener.connections === 5, 'the server to count 5 connections');
    const extra = await Promise.all(Array.from({ length: 3 }, () => silent(listener.port)));
    await Promise.all(extra.map((socket) => closed(socket)));
    expect(listener.connections).toBe(5);
    expect(kept.every((socket) => !socket.destroyed)).toBe(true);
    expect(logger.messages('warning')).toEqual(['The webhook server has refused a connection: 5 connections are open (the limit).']);
  });

  it('R-SEC-5 stopping destroys every connection, also those in or before a TLS handshake or with slow headers', async () => {
    const fn = new FakeFn();
    const server = new WebhookServer({ addr: '127.0.0.1', handshakeTimeout: 60, headersTimeout: 60, requestTimeout: 120, logger: new RecordingLogger() });
    const served = await serve(server, fn.fn);
    const port = Number(new URL(served.first.url!).port);
    const sockets = [
      ...(await Promise.all(Array.from({ length: 10 }, () => silent(port)))),
      ...(await Promise.all(Array.from({ length: 5 }, () => slowHeaders(port)))),
    ];
    served.stop.abort();
    const ended = served.iterator.next();
    const deadline = new Promise<string>((resolve) => setTimeout(() => resolve('still serving after 3 s'), 3000).unref());
    expect(await Promise.race([ended.then(() => 'stopped'), deadline])).toBe('stopped');
    await Promise.all(sockets.map((socket) => closed(socket)));
  });

  it('R-SEC-5 the limits are options in seconds, checked at construction', () => {
    expect(() => new WebhookServer({ maxConnections: 0 })).toThrow(WebhookOptionsError);
    expect(() => new WebhookServer({ headersTimeout: -1 })).toThrow(/headersTimeout must be a positive number of seconds/);
    expect(() => new WebhookServer({ depthLimit: 1.5 })).toThrow(/depthLimit must be a positive integer/);
    expect(listening.DEFAULT_LIMITS).toEqual({
      maxConnections: 1024,
      handshakeTimeout: 10_000,
      headersTimeout: 10_000,
      requestTimeout: 30_000,
      keepAliveTimeout: 5_000,
    });
  });
});

/** `depth` nested arrays with a review around them. */
function nested(depth: number): string {
  return JSON.stringify(review()).replace(/}$/, `,"padding":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`);
}

describe('R-SEC-7 body shapes', () => {
  it('R-SEC-7 a body nested deeper than the limit gets 400 with a Status, before anything parses it; at the limit it is served', async () => {
    const fn = new FakeFn();
    const logger = new RecordingLogger();
    const served = await serve(new WebhookServer({ addr: '127.0.0.1', logger }), fn.fn);
    running.push(served);
    const url = `${served.first.url}/v`;
    const caBundle = served.first.caBundle;
    expect(WEBHOOK_DEPTH_LIMIT).toBe(1000);
    expect((await call(url, { caBundle, body: nested(1000) })).status).toBe(200);
    expect(fn.calls).toHaveLength(1);

    const deep = await call(url, { caBundle, body: nested(1001) });
    expect(deep.status).toBe(400);
    expect(JSON.parse(deep.text)).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'BadRequest',
      code: 400,
      message: 'The request body nests objects and arrays deeper than the limit of 1000 levels.',
    });
    const deeper = await call(url, { caBundle, body: '['.repeat(100_000) + ']'.repeat(100_000), chunked: true }).catch((e: Error) => e);
    if (deeper instanceof Error) expect(deeper.message).toMatch(/ECONNRESET|EPIPE|socket hang up/);
    else expect(deeper.status).toBe(400);
    expect(fn.calls).toHaveLength(1);
  });

  it('R-SEC-7 a body with more items than the limit gets 400; brackets and commas inside strings do not count', async () => {
    const fn = new FakeFn();
    const served = await serve(new WebhookServer({ addr: '127.0.0.1', itemLimit: 100, depthLimit: 10, logger: new RecordingLogger() }), fn.fn);
    running.push(served);
    const url = `${served.first.url}/v`;
    const caBundle = served.first.caBundle;
    expect(WEBHOOK_ITEM_LIMIT).toBe(1_000_000);
    const tricky = JSON.stringify({ ...review(), text: `[[[[[[[[[[[[,,,,,,,,,,,,${'[,'.repeat(500)}\\"[[[[` });
    expect((await call(url, { caBundle, body: tricky })).status).toBe(200);
    const many = await call(url, { caBundle, body: JSON.stringify({ ...review(), items: Array.from({ length: 100 }, () => []) }) });
    expect(many.status).toBe(400);
    expect(JSON.parse(many.text).message).toBe('The request body has more objects, arrays, members and items than the limit of 100.');
    expect(fn.calls).toHaveLength(1);
  });

  it('R-SEC-7 the scan keeps its place across chunks (strings and escapes split anywhere)', () => {
    const text = `{"a":"x\\\\\\"[[[","b":[[1,2]]}`;
    for (let split = 0; split <= text.length; split++) {
      const scanner = new ShapeScanner({ depth: 2, items: 100 });
      const bytes = Buffer.from(text);
      expect(scanner.feed(bytes.subarray(0, split)) ?? scanner.feed(bytes.subarray(split))).toBe('too-deep');
      const lenient = new ShapeScanner({ depth: 3, items: 100 });
      expect(lenient.feed(bytes.subarray(0, split)) ?? lenient.feed(bytes.subarray(split))).toBeNull();
    }
  });
});

const KEX = references.makeResource({ group: 'kopf.dev', version: 'v1', plural: 'kopfexamples', kind: 'KopfExample', namespaced: true });

/** The real admission engine with one handler, `check`, and metrics. */
function engine(logger: RecordingLogger, metrics: OperatorMetrics) {
  const registry = new OperatorRegistry();
  on.validate('kopfexamples', { registry }, function check() {});
  return admission.webhookFn({
    registry,
    settings: new settingsModule.OperatorSettings({ warn: () => undefined }),
    clock: clocks.realClock,
    resources: { webhooks: [KEX] },
    memos: { recallMemo: () => new memos.Memo() },
    signal: new AbortController().signal,
    instruments: metrics,
    logger,
  });
}

describe('R-SEC-6 and R-SEC-8 through the server', () => {
  it('R-SEC-6 random webhook paths get 404 with a Status and leave the metrics as they were', async () => {
    const logger = new RecordingLogger();
    const metrics = new OperatorMetrics({ processMetrics: false });
    const served = await serve(new WebhookServer({ addr: '127.0.0.1', insecure: true, logger }), engine(logger, metrics));
    running.push(served);
    expect((await call(`${served.first.url}/check`)).status).toBe(200);
    const before = (await metrics.scrape()).body;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    try {
      const replies = await Promise.all(
        Array.from({ length: 500 }, async (_, i) => {
          const body = JSON.stringify(review(`uid-${i}`));
          return new Promise<{ status: number; text: string }>((resolve, reject) => {
            const request = http.request(`${served.first.url}/random-${i}-${Math.random()}`, { method: 'POST', agent }, (response) => {
              let text = '';
              response.on('data', (chunk: Buffer) => (text += chunk.toString()));
              response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
            });
            request.on('error', reject);
            request.end(body);
          });
        }),
      );
      expect(replies.every((reply) => reply.status === 404)).toBe(true);
      expect(JSON.parse(replies[0]!.text)).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
    } finally {
      agent.destroy();
    }
    expect((await metrics.scrape()).body).toBe(before);
    // One WARNING line per refused request (the engine's), none from the server.
    expect(logger.messages('warning')).toHaveLength(500);
  });

  it('R-SEC-8 client errors are one WARNING line each, without a stack; names with newlines stay on one line', async () => {
    const logger = new RecordingLogger();
    const metrics = new OperatorMetrics({ processMetrics: false });
    const served = await serve(new WebhookServer({ addr: '127.0.0.1', path: '/hooks', insecure: true, logger }), engine(logger, metrics));
    running.push(served);
    const url = served.first.url!;
    const replies = [
      await call(`${url}/check`, { body: '{not json' }),
      await call(`${url}/check`, { body: JSON.stringify({ kind: 'Pod' }) }),
      await call(`${url}/check`, { body: nested(5000) }),
      await call(`${url}/no%0Asuch%1B[2J`),
      await call(`${new URL(url).origin}/elsewhere%0Aforged`),
    ];
    expect(replies.map((reply) => reply.status)).toEqual([400, 400, 400, 404, 404]);
    const shown = logger.records.filter((record) => record.level !== 'debug');
    expect(shown).toHaveLength(5);
    for (const record of shown) {
      expect(record.level).toBe('warning');
      expect(record.extra?.error).toBeUndefined();
      expect(record.message).not.toMatch(/[\u0000-\u001f\u007f]/);
    }
    expect(shown[3]!.message).toBe('Admission request is refused with HTTP 404: No admission handler has the webhook id "no\\nsuch\\u001b[2J".');
    // A request the server itself refused (outside the root) is not the engine's: still one line.
    expect(shown[4]!.message).toBe('Webhook request POST /elsewhere%0Aforged refused with HTTP 404: No webhooks are served at /elsewhere%0Aforged.');
  });
});

describe('R-SEC-501 large answers', () => {
  it('R-SEC-501 an answer of 300 kB never fills the socket past its high-water mark, and the keep-alive connection serves the next request', async () => {
    const material = await materials.loadMaterial({ insecure: false, names: ['127.0.0.1'] });
    const big = { response: { uid: 'uid-1', padding: 'x'.repeat(300_000) } };
    const fn = (async () => big) as unknown as Parameters<typeof serving.handleRequests>[0];
    const handle = serving.handleRequests(fn, { root: '', bodyLimit: serving.DEFAULT_BODY_LIMIT, logger: new RecordingLogger() });
    // Every write of the server's sockets is watched: `false` means the socket holds more than its high-water mark.
    const watched = new WeakSet<net.Socket>();
    let over = 0;
    const sockets = new Set<net.Socket>();
    const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
      const socket = req.socket;
      sockets.add(socket);
      if (!watched.has(socket)) {
        watched.add(socket);
        const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
        socket.write = ((...args: unknown[]): boolean => {
          const ok = write(...args);
          if (!ok) over += 1;
          return ok;
        }) as typeof socket.write;
      }
      handle(req, res);
    };
    const listener = await listening.listen({ addr: '127.0.0.1', port: 0, material, handler, logger: new RecordingLogger() }); // default limits: 5 s keep-alive
    listeners.push(listener);
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: material.caPem });
    try {
      const post = (): Promise<{ status: number; length: number }> =>
        new Promise((resolve, reject) => {
          const req = https.request(
            `https://127.0.0.1:${listener.port}/v`,
            { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
            (res) => {
              let length = 0;
              res.on('data', (chunk: Buffer) => {
                length += chunk.length;
              });
              res.on('end', () => resolve({ status: res.statusCode ?? 0, length }));
            },
          );
          req.on('error', reject);
          req.end(JSON.stringify(review()));
        });
      const expected = Buffer.byteLength(JSON.stringify(big));
      expect(await post()).toEqual({ status: 200, length: expected });
      expect(await post()).toEqual({ status: 200, length: expected });
      expect(sockets.size).toBe(1);
      expect(over).toBe(0);
    } finally {
      agent.destroy();
    }
  });
});
