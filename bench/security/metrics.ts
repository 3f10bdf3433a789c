/**
 * Probe of issue 33, item 10: what a deployed operator's health and metrics endpoints give away,
 * and what guarding them costs. It runs the operator as the generated Deployment configures it —
 * the `--liveness` and `--metrics` arguments of a freshly generated project's
 * deploy/deployment.yaml, moved from `0.0.0.0` to loopback ports — against an enforcing devcluster
 * that knows one scraper token allowed to get `/metrics`, with a probe whose error message holds a
 * database URL with its password. Then:
 *
 * - `unauthenticated_200`: of `--requests` (50) requests to the metrics URL without a token, how
 *   many are answered 200 with the metrics (target 0);
 * - `health_error_text`: of `--requests` requests to the liveness endpoint, how many answers hold
 *   the probe's secret (target 0);
 * - `token_reviews_per_100_scrapes`: TokenReviews the operator sends for 100 scrapes in a row with
 *   the scraper's token (target ≤ 10: decisions are cached for 10 s; scrapes 15 s apart cost one
 *   pair each, which the runtime's tests prove on a virtual clock);
 * - `scrapes_ok`: of those 100, how many got the metrics (a check that the guard lets the scraper in).
 *
 * Options: `--requests N`, `--scrapes N`.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as yaml from 'yaml';
import { DevCluster } from '../../devcluster/testing.js';
import * as generator from '../../generator/index.js';
import { OperatorRegistry } from '../../runtime/core/intents/registry.js';
import * as running from '../../runtime/core/reactor/running.js';
import { on } from '../../runtime/on.js';
import type * as report from '../report.js';

const SECRET = 'pr0be-s3cret-passw0rd';
const SCRAPER = 'system:serviceaccount:monitoring:prometheus';
const SCRAPER_TOKEN = 'probe-scraper-token-0123456789';
const CRD = path.join(import.meta.dirname, '../../fixtures/crds/kopfexamples.yaml');

function option(args: readonly string[], name: string, fallback: number): number {
  const index = args.findIndex((arg) => arg === name || arg.startsWith(`${name}=`));
  if (index < 0) return fallback;
  const value = args[index]!.includes('=') ? args[index]!.split('=')[1] : args[index + 1];
  return Number(value);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** GET over HTTP or HTTPS (the operator's certificate is not verified, as scrapers do). */
function get(url: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers = token === undefined ? {} : { authorization: `Bearer ${token}` };
    const client = url.startsWith('https:') ? https : http;
    const req = client.request(url, { headers, rejectUnauthorized: false, agent: false }, (res) => {
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

/** The `--liveness` and `--metrics` values of a generated project's Deployment. */
async function deploymentOptions(work: string): Promise<{ liveness: string; metrics: string }> {
  const project = path.join(work, 'probed');
  await generator.init({ crds: [CRD], out: project });
  const deployment = yaml.parse(fs.readFileSync(path.join(project, 'deploy/deployment.yaml'), 'utf8')) as {
    spec: { template: { spec: { containers: { args: string[] }[] } } };
  };
  const args = deployment.spec.template.spec.containers[0]!.args;
  const value = (flag: string): string => args.find((arg) => arg.startsWith(`${flag}=`))!.slice(flag.length + 1);
  return { liveness: value('--liveness'), metrics: value('--metrics') };
}

/** The Deployment's URLs on loopback: each distinct port becomes a free one. */
async function onLoopback(urls: readonly string[]): Promise<string[]> {
  const ports = new Map<string, number>();
  const result: string[] = [];
  for (const url of urls) {
    const port = /\/\/[^/]*:(\d+)\//.exec(url)![1]!;
    if (!ports.has(port)) ports.set(port, await freePort());
    result.push(url.replace(/\/\/[^/]*:\d+\//, `//127.0.0.1:${ports.get(port)}/`));
  }
  return result;
}

export async function run(args: readonly string[] = []): Promise<report.Result> {
  const requests = option(args, '--requests', 50);
  const scrapes = option(args, '--scrapes', 100);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-probe-metrics-'));
  const deployed = await deploymentOptions(work);
  const [liveness, metrics] = await onLoopback([deployed.liveness, deployed.metrics]);
  const cluster = await DevCluster.start({ auth: 'enforced', crds: [CRD] });
  cluster.auth.addToken({ token: SCRAPER_TOKEN, username: SCRAPER });
  cluster.auth.authorizer.setRules([
    { effect: 'allow', users: [SCRAPER], verbs: ['get'], nonResourceURLs: ['/metrics'] },
    { effect: 'deny', nonResourceURLs: ['/metrics'] },
  ]);
  const registry = new OperatorRegistry();
  on.login({ registry }, function login() {
    return { server: cluster.url, token: cluster.token, ...(cluster.caPem !== undefined ? { caData: cluster.caPem } : {}) };
  });
  on.probe({ registry }, function database() {
    throw new Error(`cannot connect to postgres://app:${SECRET}@db.internal:5432/app`);
  });
  on.event('kopfexamples', { registry }, function seen() {});
  const stop = new AbortController();
  const served = new Map<string, string>();
  let operator: Promise<void> = Promise.resolve();
  const listening = new Promise<void>((resolve, reject) => {
    operator = running.operator({
      registry,
      clusterwide: true,
      standalone: true,
      livenessEndpoint: liveness,
      metricsEndpoint: metrics,
      stopFlag: stop.signal,
      onServing: (list) => {
        for (const { name, url } of list) served.set(name, url);
        if (served.has('metrics')) resolve();
      },
    });
    operator.then(() => reject(new Error('the operator stopped before serving')), reject);
  });
  try {
    await listening;
    const metricsUrl = served.get('metrics')!;
    const livenessUrl = served.get('liveness')!;
    let unauthenticated = 0;
    for (let i = 0; i < requests; i += 1) {
      const answer = await get(metricsUrl);
      if (answer.status === 200 && answer.body.includes('# TYPE')) unauthenticated += 1;
    }
    let leaked = 0;
    for (let i = 0; i < requests; i += 1) {
      if ((await get(livenessUrl)).body.includes(SECRET)) leaked += 1;
    }
    const reviews = (): number => cluster.requests.filter((r) => r.method === 'POST' && r.resource === 'tokenreviews').length;
    const before = reviews();
    let ok = 0;
    for (let i = 0; i < scrapes; i += 1) if ((await get(metricsUrl, SCRAPER_TOKEN)).status === 200) ok += 1;
    const sent = reviews() - before;
    return {
      name: 'security: metrics and health',
      figures: {
        unauthenticated_200: unauthenticated,
        health_error_text: leaked,
        token_reviews_per_100_scrapes: (sent * 100) / scrapes,
        scrapes_ok: ok,
      },
      targets: {
        unauthenticated_200: { max: 0 },
        health_error_text: { max: 0 },
        token_reviews_per_100_scrapes: { max: 10 },
        scrapes_ok: { min: scrapes },
      },
      notes: {
        deployment: `the generated Deployment's --liveness=${deployed.liveness} --metrics=${deployed.metrics}, moved to loopback`,
        unauthenticated_200: `of ${requests} requests to ${metricsUrl} without a token, answered 200 with the metrics`,
        health_error_text: `of ${requests} requests to ${livenessUrl}, answers holding the failing probe's password`,
        token_reviews_per_100_scrapes: `TokenReviews sent for ${scrapes} scrapes in a row with one token allowed to get /metrics (0 when the metrics are not guarded)`,
        scrapes_ok: `of those ${scrapes} scrapes, answered 200`,
      },
    };
  } finally {
    stop.abort();
    await operator.catch((error: unknown) => process.stderr.write(`the operator failed: ${String(error)}\n`));
    await cluster.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}
