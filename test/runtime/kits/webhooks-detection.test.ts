/**
 * Recognising the local cluster from its API server (R-ADMISSION-9, `WebhookAutoServer`): local TLS
 * servers stand in for the API servers of k3s, minikube and Docker Desktop with certificates shaped
 * like theirs, and for a cluster that says nothing in its certificate but reports a k3s version.
 */
import * as net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../runtime/cogs/aio/clocks.js';
import { WebhookAutoServer } from '../../../runtime/index.js';
import * as detection from '../../../runtime/kits/webhooks/detection.js';
import { RecordingLogger } from '../cogs/client/helpers.js';
import { call, fakeApiServer, FakeFn, serve, type FakeApiServer } from './webhooks-helpers.js';

const shapes = {
  k3s: { caName: 'k3s-server-ca@1700000000', commonName: 'k3s', organizations: ['k3s'], dnsNames: ['kubernetes', 'localhost'] },
  minikube: { caName: 'minikubeCA', commonName: 'minikube', organizations: ['system:masters'], dnsNames: ['minikubeCA', 'control-plane.minikube.internal'] },
  dockerDesktop: { caName: 'kubernetes', commonName: 'kube-apiserver', dnsNames: ['docker-for-desktop', 'kubernetes.docker.internal', 'kubernetes'] },
  k3sByVersion: { caName: 'kubernetes', commonName: 'kube-apiserver', gitVersion: 'v1.30.4+k3s1' },
  plain: { caName: 'kubernetes', commonName: 'kube-apiserver' },
} as const;

const servers: Partial<Record<keyof typeof shapes, FakeApiServer>> = {};

beforeAll(async () => {
  for (const [name, shape] of Object.entries(shapes)) servers[name as keyof typeof shapes] = await fakeApiServer(shape);
});
afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.close()));
});

describe('R-ADMISSION-9 cluster detection', () => {
  it('R-ADMISSION-9 recognises k3s, minikube and Docker Desktop by the API server certificate, k3s also by its version', async () => {
    expect(await detection.detectCluster(servers.k3s!.url)).toBe('k3d');
    expect(await detection.detectCluster(servers.minikube!.url)).toBe('minikube');
    expect(await detection.detectCluster(servers.dockerDesktop!.url)).toBe('docker-desktop');
    expect(await detection.detectCluster(servers.k3sByVersion!.url)).toBe('k3d');
    expect(await detection.detectCluster(servers.plain!.url)).toBeNull();
    expect(await detection.detectCluster('http://127.0.0.1:1')).toBeNull();
  });

  it("R-ADMISSION-9 the rules on the certificate names (Kopf's)", () => {
    expect(detection.recogniseCertificate({ issuer: { CN: 'k3s-client-ca@1' }, subject: { CN: 'whatever' } })).toBe('k3d');
    expect(detection.recogniseCertificate({ subject: { O: ['system:masters', 'k3s'] } })).toBe('k3d');
    expect(detection.recogniseCertificate({ issuer: { CN: 'minikubeCA' } })).toBe('minikube');
    expect(detection.recogniseCertificate({ subjectaltname: 'DNS:kubernetes, DNS:docker-for-desktop, IP Address:127.0.0.1' })).toBe('docker-desktop');
    expect(detection.recogniseCertificate({ subject: { CN: 'kube-apiserver' }, subjectaltname: 'DNS:docker-for-desktop.example' })).toBeNull();
    expect(detection.recogniseVersion('v1.30.4+k3s1')).toBe('k3d');
    expect(detection.recogniseVersion('v1.30.4')).toBeNull();
  });
});

describe('R-ADMISSION-9 WebhookAutoServer', () => {
  it('R-ADMISSION-9 serves as the variant of the recognised cluster, with the given options, and logs the choice', async () => {
    const cases = [
      [servers.k3s!, 'host.k3d.internal', 'WebhookK3dServer'],
      [servers.minikube!, 'host.minikube.internal', 'WebhookMinikubeServer'],
      [servers.dockerDesktop!, 'host.docker.internal', 'WebhookDockerDesktopServer'],
    ] as const;
    for (const [apiServer, host, className] of cases) {
      const logger = new RecordingLogger();
      const served = await serve(new WebhookAutoServer({ addr: '127.0.0.1', path: '/hooks', logger }), new FakeFn().fn, { apiServer: apiServer.url });
      try {
        expect(new URL(served.first.url!).hostname).toBe(host);
        expect(new URL(served.first.url!).pathname).toBe('/hooks');
        expect(logger.messages('info').some((m) => m.includes(`serving webhooks with ${className} (host ${host})`))).toBe(true);
        const reply = await call(`${served.first.url}/v`, { caBundle: served.first.caBundle, loopback: true });
        expect(reply.status).toBe(200);
        expect(reply.peer?.subject.CN).toBe(host);
      } finally {
        served.stop.abort();
        await served.iterator.return?.();
      }
    }
  });

  it('R-ADMISSION-9 an unrecognised, unknown, non-HTTPS or unreachable API server means a plain WebhookServer', async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const port = (probe.address() as net.AddressInfo).port;
        probe.close(() => resolve(port));
      });
    });
    const environments = [
      [{ apiServer: servers.plain!.url }, 'info', 'Cluster detection recognised no local cluster; serving webhooks with WebhookServer.'],
      [{}, 'info', 'Cluster detection: the API server is not known; using no cluster-specific host.'],
      [{ apiServer: 'http://127.0.0.1:8080' }, 'info', 'Cluster detection: the API server http://127.0.0.1:8080 is not HTTPS; using no cluster-specific host.'],
      [
        { apiServer: `https://127.0.0.1:${closed}` },
        'warning',
        'Cluster detection failed; using no cluster-specific host: cannot read the certificate of 127.0.0.1:',
      ],
    ] as const;
    for (const [environment, level, message] of environments) {
      const logger = new RecordingLogger();
      const served = await serve(new WebhookAutoServer({ logger }), new FakeFn().fn, environment);
      try {
        expect(new URL(served.first.url!).hostname).toBe('localhost');
        expect(logger.messages(level).some((m) => m.startsWith(message))).toBe(true);
      } finally {
        served.stop.abort();
        await served.iterator.return?.();
      }
    }
  });

  it('R-ADMISSION-9 an API server that never completes the handshake is given up after 5 s of the clock', async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const clock = new VirtualClock({ quiescenceTimeout: 50 });
      const logger = new RecordingLogger();
      const apiServer = `https://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
      const stop = new AbortController();
      const iterator = new WebhookAutoServer({ addr: '127.0.0.1', clock, logger })
        .serve(new FakeFn().fn, { apiServer, signal: stop.signal })
        [Symbol.asyncIterator]();
      let settled = false;
      const first = iterator.next().then((result) => {
        settled = true;
        return result;
      });
      await clock.advance(4_999);
      expect(settled).toBe(false);
      await clock.advance(1);
      expect((await first).value?.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(logger.messages('warning')).toEqual([
        expect.stringMatching(/^Cluster detection failed; using no cluster-specific host: .*no TLS handshake with 127\.0\.0\.1:\d+ in time/),
      ]);
      stop.abort();
      await iterator.return?.();
    } finally {
      silent.close();
    }
  });

  it('R-ADMISSION-3 generated projects construct it without options', () => {
    const server = new WebhookAutoServer();
    expect(typeof server.serve).toBe('function');
    expect(typeof server[Symbol.asyncDispose]).toBe('function');
  });
});
