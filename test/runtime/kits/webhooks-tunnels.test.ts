/**
 * The ngrok tunnels (R-ADMISSION-9, optional): failing at start, clearly, without the optional
 * package; with a fake `@ngrok/ngrok` injected through the loader, forwarding the public URL to a
 * local plain-HTTP server; and the auto tunnel's choice between a local server and the tunnel.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MissingDependencyError, WebhookAutoTunnel, WebhookNgrokTunnel, WebhookOptionsError } from '../../../runtime/index.js';
import type { NgrokForwardConfig, NgrokModule } from '../../../runtime/index.js';
import { RecordingLogger } from '../cogs/client/helpers.js';
import { call, fakeApiServer, FakeFn, refuses, serve, type FakeApiServer } from './webhooks-helpers.js';

/** A stand-in for `@ngrok/ngrok`: records what it forwards and whether the tunnel was closed. */
class FakeNgrok implements NgrokModule {
  readonly forwarded: NgrokForwardConfig[] = [];
  closed = 0;
  failure: Error | undefined;

  async forward(config: NgrokForwardConfig) {
    if (this.failure) throw this.failure;
    this.forwarded.push(config);
    return {
      url: (): string => `https://tunnel-${this.forwarded.length}.ngrok.example/`,
      close: async (): Promise<void> => {
        this.closed += 1;
      },
    };
  }
}

describe('R-ADMISSION-9 WebhookNgrokTunnel', () => {
  it('R-ADMISSION-9 without @ngrok/ngrok installed, serving fails at start and says how to install it', async () => {
    expect(fs.existsSync(path.resolve(import.meta.dirname, '../../../node_modules/@ngrok/ngrok'))).toBe(false);
    const error = await serve(new WebhookNgrokTunnel(), new FakeFn().fn).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingDependencyError);
    expect((error as MissingDependencyError).code).toBe('MissingDependencyError');
    expect((error as MissingDependencyError).dependency).toBe('@ngrok/ngrok');
    expect((error as Error).message).toContain('needs the optional package @ngrok/ngrok, which is not installed: run `npm install @ngrok/ngrok`');
  });

  it('R-ADMISSION-9 forwards the public URL to a local plain-HTTP server and announces it without a CA; closes both on stop', async () => {
    const ngrok = new FakeNgrok();
    const fn = new FakeFn();
    const logger = new RecordingLogger();
    const served = await serve(
      new WebhookNgrokTunnel({ addr: '127.0.0.1', path: '/hooks', token: 'tok', domain: 'my.ngrok.example', loader: async () => ngrok, logger }),
      fn.fn,
    );
    expect(served.first).toEqual({ url: 'https://tunnel-1.ngrok.example/hooks' });
    expect(ngrok.forwarded).toHaveLength(1);
    const forwarded = ngrok.forwarded[0]!;
    expect(forwarded).toEqual({ addr: expect.stringMatching(/^127\.0\.0\.1:\d+$/), authtoken: 'tok', domain: 'my.ngrok.example' });
    expect(logger.messages('info')).toContain('Accessing the webhooks through ngrok at https://tunnel-1.ngrok.example/hooks');

    // What ngrok would deliver arrives at the local server over plain HTTP.
    const reply = await call(`http://${forwarded.addr}/hooks/validate1`);
    expect(reply.status).toBe(200);
    expect(fn.calls[0]!.context?.webhook).toBe('validate1');

    const next = served.iterator.next();
    served.stop.abort();
    expect((await next).done).toBe(true);
    expect(ngrok.closed).toBe(1);
    expect(await refuses(Number(forwarded.addr.split(':')[1]))).toBe(true);
  });

  it('R-ADMISSION-9 the token defaults to NGROK_AUTHTOKEN; a failing forward fails serving and closes the local server', async () => {
    const ngrok = new FakeNgrok();
    const served = await serve(new WebhookNgrokTunnel({ loader: async () => ngrok }), new FakeFn().fn);
    expect(ngrok.forwarded[0]).toEqual({ addr: expect.stringMatching(/^localhost:\d+$/), authtoken_from_env: true });
    served.stop.abort();
    await served.iterator.return?.();

    const failing = new FakeNgrok();
    failing.failure = new Error('authentication failed: ERR_NGROK_105');
    await expect(serve(new WebhookNgrokTunnel({ addr: '127.0.0.1', port: 0, loader: async () => failing }), new FakeFn().fn)).rejects.toThrow('ERR_NGROK_105');
  });

  it('R-ADMISSION-9 bad options fail when constructed', () => {
    expect(() => new WebhookNgrokTunnel({ token: '' })).toThrow(WebhookOptionsError);
    expect(() => new WebhookNgrokTunnel({ port: -1 })).toThrow('WebhookNgrokTunnel: port must be an integer from 0 to 65535, got -1');
  });
});

describe('R-ADMISSION-9 WebhookAutoTunnel', () => {
  let k3s: FakeApiServer;
  let plain: FakeApiServer;
  beforeAll(async () => {
    k3s = await fakeApiServer({ caName: 'k3s-server-ca@1700000000', commonName: 'k3s' });
    plain = await fakeApiServer({ caName: 'kubernetes', commonName: 'kube-apiserver' });
  });
  afterAll(async () => {
    await k3s.close();
    await plain.close();
  });

  it('R-ADMISSION-9 a recognised local cluster gets a local HTTPS server, no tunnel', async () => {
    const ngrok = new FakeNgrok();
    const served = await serve(new WebhookAutoTunnel({ addr: '127.0.0.1', loader: async () => ngrok }), new FakeFn().fn, { apiServer: k3s.url });
    try {
      expect(served.first.url).toMatch(/^https:\/\/host\.k3d\.internal:\d+$/);
      expect(served.first.caBundle).toBeTypeOf('string');
      expect(ngrok.forwarded).toHaveLength(0);
      expect((await call(`${served.first.url}/v`, { caBundle: served.first.caBundle, loopback: true })).status).toBe(200);
    } finally {
      served.stop.abort();
      await served.iterator.return?.();
    }
  });

  it('R-ADMISSION-9 any other cluster gets the ngrok tunnel (and its clear failure without the package)', async () => {
    const ngrok = new FakeNgrok();
    const served = await serve(new WebhookAutoTunnel({ path: '/p', loader: async () => ngrok }), new FakeFn().fn, { apiServer: plain.url });
    try {
      expect(served.first).toEqual({ url: 'https://tunnel-1.ngrok.example/p' });
    } finally {
      served.stop.abort();
      await served.iterator.return?.();
    }
    await expect(serve(new WebhookAutoTunnel(), new FakeFn().fn, {})).rejects.toBeInstanceOf(MissingDependencyError);
  });
});
