/**
 * Secure metrics as a scraper and an intruder see them (R-SEC-9..13): an operator serving
 * `https://…/metrics` against an enforcing devcluster, whose TokenReview and SubjectAccessReview
 * (D-AUTH-11..14) answer from its token table and rules — the scraper's token is allowed `get` on
 * `/metrics`, another user's is denied. Requests go over real HTTPS (the operator's self-signed
 * certificate, not verified, as scrapers are configured), and the reviews the operator sends are
 * counted in the devcluster's request log; the cache runs on the operator's virtual clock.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../devcluster/testing.js';
import * as clocks from '../../../runtime/cogs/aio/clocks.js';
import { EndpointCertificateError, EndpointOptionsError } from '../../../runtime/core/engines/errors.js';
import { selfSignedCertificate } from '../../../runtime/core/engines/selfsigning.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as running from '../../../runtime/core/reactor/running.js';
import { parseRunArgs } from '../../../runtime/kits/launching/launching.js';
import { UsageError } from '../../../runtime/kits/launching/errors.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';
import { virtualSettings } from '../../support/virtualtime.js';

const SCRAPER = 'system:serviceaccount:monitoring:prometheus';
const SCRAPER_TOKEN = 'scraper-token-0123456789';
const INTRUDER_TOKEN = 'intruder-token-0123456789';

interface Reply {
  readonly status: number;
  readonly body: string;
}

/** GET over HTTPS without verifying the server (as a scraper with `insecureSkipVerify`). */
function scrape(url: string, token?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers = token === undefined ? {} : { authorization: `Bearer ${token}` };
    const req = https.request(url, { method: 'GET', headers, rejectUnauthorized: false, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The reviews the devcluster has answered so far. */
function reviews(cluster: DevCluster): { tokenReviews: number; accessReviews: number } {
  const count = (resource: string): number => cluster.requests.filter((r) => r.method === 'POST' && r.resource === resource).length;
  return { tokenReviews: count('tokenreviews'), accessReviews: count('subjectaccessreviews') };
}

describe('secure metrics against the devcluster’s reviews', () => {
  let cluster: DevCluster;
  let op: fx.RunningOperator | undefined;
  let url = '';
  const logs = new fx.LogCapture();
  beforeEach(async () => {
    cluster = await fx.startCluster({ auth: 'enforced' });
    cluster.auth.addToken({ token: SCRAPER_TOKEN, username: SCRAPER, groups: ['system:serviceaccounts'] });
    cluster.auth.addToken({ token: INTRUDER_TOKEN, username: 'mallory' });
    // The operator itself (the admin) may do anything by the default decision; /metrics only the scraper.
    cluster.auth.authorizer.setRules([
      { effect: 'allow', users: [SCRAPER], verbs: ['get'], nonResourceURLs: ['/metrics'] },
      { effect: 'deny', nonResourceURLs: ['/metrics'] },
    ]);
    logs.install();
  });
  afterEach(async () => {
    await op?.stop();
    op = undefined;
    logs.uninstall();
    await cluster.stop();
  });

  async function start(clock?: clocks.Clock, metricsTlsDir?: string): Promise<fx.RunningOperator> {
    const registry = new OperatorRegistry();
    on.event('kopfexamples', { registry }, function seen() {});
    let served: string | undefined;
    op = await fx.startOperator({
      cluster,
      registry,
      metricsEndpoint: 'https://127.0.0.1:0/metrics',
      onServing: (list) => {
        served = list.find((each) => each.name === 'metrics')?.url;
      },
      ...(clock ? { clock, settings: virtualSettings() } : {}),
      ...(metricsTlsDir !== undefined ? { metricsTlsDir } : {}),
    });
    await fx.eventually(() => served !== undefined, 'the metrics endpoint');
    url = served!;
    return op;
  }

  it('R-SEC-9 serves https:// metrics over TLS with a self-signed certificate made in memory; plain HTTP gets no answer', async () => {
    await start();
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const { port } = new URL(url);
    const certificate = await new Promise<crypto.X509Certificate>((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port: Number(port), rejectUnauthorized: false }, () => {
        const raw = socket.getPeerX509Certificate();
        socket.destroy();
        if (raw === undefined) reject(new Error('no certificate'));
        else resolve(raw);
      });
      socket.on('error', reject);
    });
    expect(certificate.verify(certificate.publicKey)).toBe(true); // self-signed
    expect(certificate.subjectAltName).toContain('IP Address:127.0.0.1');
    const plain = await new Promise<string>((resolve) => {
      const req = http.request(`http://127.0.0.1:${port}/metrics`, { agent: false }, (res) => resolve(`answered ${res.statusCode}`));
      req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
      req.end();
    });
    expect(plain).not.toMatch(/^answered/);
  });

  it('R-SEC-9 with --metrics-tls-dir, serves the certificate of that directory (tls.crt, tls.key: a cert-manager Secret)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-metrics-tls-'));
    const own = selfSignedCertificate(['metrics.example.test']);
    fs.writeFileSync(path.join(dir, 'tls.crt'), own.certPem);
    fs.writeFileSync(path.join(dir, 'tls.key'), own.keyPem);
    await start(undefined, dir);
    const { port } = new URL(url);
    const fingerprint = await new Promise<string>((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port: Number(port), rejectUnauthorized: false }, () => {
        resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? '');
        socket.destroy();
      });
      socket.on('error', reject);
    });
    expect(fingerprint).toBe(new crypto.X509Certificate(own.certPem).fingerprint256);
    expect((await scrape(url, SCRAPER_TOKEN)).status).toBe(200);
  });

  it('R-SEC-10 without a token: 401, and no review is sent; with a token the API server does not know: 401', async () => {
    await start();
    const before = reviews(cluster);
    const none = await scrape(url);
    expect(none).toEqual({ status: 401, body: 'Unauthorized\n' });
    expect(reviews(cluster)).toEqual(before);
    const bad = await scrape(url, 'not-a-token-of-this-cluster');
    expect(bad).toEqual({ status: 401, body: 'Unauthorized\n' });
    expect(reviews(cluster)).toEqual({ tokenReviews: before.tokenReviews + 1, accessReviews: before.accessReviews });
  });

  it('R-SEC-11 a user without the right to get /metrics: 403; the scraper allowed to: 200 with the metrics', async () => {
    await start();
    const denied = await scrape(url, INTRUDER_TOKEN);
    expect(denied).toEqual({ status: 403, body: 'Forbidden\n' });
    expect(denied.body).not.toContain('controller_runtime');
    const allowed = await scrape(url, SCRAPER_TOKEN);
    expect(allowed.status).toBe(200);
    expect(allowed.body).toMatch(/^# HELP controller_runtime_reconcile_total /m);
    // The review the operator sent asked what RBAC's metrics-reader role grants.
    const sent = cluster.requests.filter((r) => r.resource === 'subjectaccessreviews').map((r) => JSON.parse(r.body ?? '{}') as { spec: unknown });
    expect(sent.map((review) => review.spec)).toContainEqual(
      expect.objectContaining({ user: SCRAPER, nonResourceAttributes: { path: '/metrics', verb: 'get' } }),
    );
  });

  it('R-SEC-12 decisions are cached for 10 s per token on the operator’s clock: 20 scrapes cost one pair of reviews, the next pair comes after 10 s', async () => {
    const clock = new clocks.VirtualClock({ start: Date.parse('2030-01-01T00:00:00Z'), quiescenceTimeout: 50 });
    await start(clock);
    const before = reviews(cluster);
    const first = await Promise.all(Array.from({ length: 5 }, () => scrape(url, SCRAPER_TOKEN)));
    for (let i = 0; i < 15; i += 1) first.push(await scrape(url, SCRAPER_TOKEN));
    expect(first.map((reply) => reply.status)).toEqual(Array(20).fill(200));
    expect(await scrape(url, INTRUDER_TOKEN)).toMatchObject({ status: 403 });
    expect(await scrape(url, INTRUDER_TOKEN)).toMatchObject({ status: 403 });
    expect(reviews(cluster)).toEqual({ tokenReviews: before.tokenReviews + 2, accessReviews: before.accessReviews + 2 });
    await clock.advance(9_000);
    await scrape(url, SCRAPER_TOKEN);
    expect(reviews(cluster).tokenReviews).toBe(before.tokenReviews + 2);
    await clock.advance(1_000);
    expect((await scrape(url, SCRAPER_TOKEN)).status).toBe(200);
    expect(reviews(cluster)).toEqual({ tokenReviews: before.tokenReviews + 3, accessReviews: before.accessReviews + 3 });
  });

  it('R-SEC-12 a revoked token is refused once its cached decision expires', async () => {
    const clock = new clocks.VirtualClock({ start: Date.parse('2030-01-01T00:00:00Z'), quiescenceTimeout: 50 });
    await start(clock);
    expect((await scrape(url, SCRAPER_TOKEN)).status).toBe(200);
    cluster.auth.revokeToken(SCRAPER_TOKEN);
    await clock.advance(10_000);
    expect((await scrape(url, SCRAPER_TOKEN)).status).toBe(401);
  });

  it('R-SEC-11 reviews that fail (the operator may not create them) answer 500, never the metrics, with one WARNING', async () => {
    cluster.auth.authorizer.setRules([
      { effect: 'allow', users: [SCRAPER], verbs: ['get'], nonResourceURLs: ['/metrics'] },
      { effect: 'deny', resources: ['tokenreviews'] },
    ]);
    await start();
    const replies = [await scrape(url, SCRAPER_TOKEN), await scrape(url, SCRAPER_TOKEN)];
    expect(replies.map((reply) => reply.status)).toEqual([500, 500]);
    expect(replies[0]!.body).not.toContain('controller_runtime');
    expect(logs.grep('Cannot review the access of a caller of /metrics', fx.WARNING)).toHaveLength(1);
  });
});

describe('plain-HTTP metrics', () => {
  let cluster: DevCluster;
  const logs = new fx.LogCapture();
  beforeEach(async () => {
    cluster = await fx.startCluster();
    logs.install();
  });
  afterEach(async () => {
    logs.uninstall();
    await cluster.stop();
  });

  it('R-SEC-13 http:// metrics are served to anyone, as asked; on a host other than loopback, with a WARNING saying so', async () => {
    for (const host of ['127.0.0.1', '0.0.0.0']) {
      const registry = new OperatorRegistry();
      on.event('kopfexamples', { registry }, function seen() {});
      let served = '';
      const op = await fx.startOperator({
        cluster,
        registry,
        metricsEndpoint: `http://${host}:0/metrics`,
        onServing: (list) => {
          served = list.find((each) => each.name === 'metrics')!.url;
        },
      });
      try {
        await fx.eventually(() => served !== '', 'the metrics endpoint');
        const response = await fetch(served.replace('0.0.0.0', '127.0.0.1'));
        expect(response.status).toBe(200);
      } finally {
        await op.stop();
      }
    }
    const warnings = logs.grep('are served in plain HTTP to anyone who can reach them', fx.WARNING);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('http://0.0.0.0:0/metrics');
  });
});

describe('the options of secure metrics', () => {
  it('R-SEC-9 --metrics takes https:// and http:// URLs; --metrics-tls-dir needs an https:// one', () => {
    expect(parseRunArgs(['--metrics=https://0.0.0.0:8443/metrics', 'op.ts'])?.metricsEndpoint).toBe('https://0.0.0.0:8443/metrics');
    expect(parseRunArgs(['--metrics=http://localhost:8080/metrics', 'op.ts'])?.metricsEndpoint).toBe('http://localhost:8080/metrics');
    const output = { out: (): void => {}, err: (): void => {} };
    expect(() => parseRunArgs(['--metrics=tcp://0.0.0.0:8443/metrics', 'op.ts'], { output })).toThrow('the scheme must be http or https, not tcp');
    expect(parseRunArgs(['--metrics=https://0.0.0.0:8443/metrics', '--metrics-tls-dir=/etc/metrics/tls', 'op.ts'])?.metricsTlsDir).toBe('/etc/metrics/tls');
    expect(() => parseRunArgs(['--metrics=http://0.0.0.0:8080/metrics', '--metrics-tls-dir=/etc/metrics/tls', 'op.ts'], { output })).toThrow(UsageError);
  });

  it('R-SEC-9 metricsTlsDir without https:// metrics is refused before anything starts; an unreadable one stops the operator naming the file', async () => {
    const registry = new OperatorRegistry();
    await expect(running.operator({ registry, clusterwide: true, metricsEndpoint: 'http://127.0.0.1:0/metrics', metricsTlsDir: '/nowhere' })).rejects.toThrow(
      EndpointOptionsError,
    );
    const cluster = await fx.startCluster();
    try {
      on.event('kopfexamples', { registry }, function seen() {});
      const op = await fx.startOperator({ cluster, registry, metricsEndpoint: 'https://127.0.0.1:0/metrics', waitForWatch: false, metricsTlsDir: '/nowhere' });
      await op.done;
      expect(op.error).toBeInstanceOf(EndpointCertificateError);
      expect(String(op.error)).toContain('/nowhere/tls.crt: ENOENT');
    } finally {
      await cluster.stop();
    }
  });
});
