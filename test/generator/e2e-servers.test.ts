/**
 * A generated project's own servers, end to end, with the real commands in child processes:
 * `kopf-gen init --webhooks` from the Kopf example CRD, the validating stub edited the way its
 * comment suggests (deny one value of `spec.field`), `npm run typecheck`, then `npm run operator`
 * on the embedded devcluster with the health and metrics options of the generated Deployment.
 * kubectl applies a valid and an invalid object (the webhook the operator serves and configures
 * itself admits one and denies the other), and the Deployment's startup, liveness and readiness
 * probes and its Prometheus annotations are followed to the endpoints they name (the metrics over
 * HTTPS, with the devcluster's token).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as YAML from 'yaml';
import * as demo from '../../scripts/demo.js';
import { requireKubectl } from '../support/kubectl.js';
import { childEnv, run, until } from '../support/processes.js';

const CRD = path.join(demo.CHECKOUT, 'fixtures/crds/kopfexamples.yaml');
const SAMPLE = path.join(demo.CHECKOUT, 'fixtures/objects/kopf-example-1.yaml');

interface Probe {
  httpGet: { path: string; port: string | number };
}
interface Container {
  args: string[];
  ports: Array<{ name: string; containerPort: number }>;
  startupProbe: Probe;
  livenessProbe: Probe;
  readinessProbe: Probe;
}
interface Deployment {
  spec: { template: { metadata: { annotations: Record<string, string> }; spec: { containers: Container[] } } };
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

/** GET over HTTPS without verifying the operator's self-signed certificate (as scrapers do). */
function getInsecure(url: string, token?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers = token === undefined ? {} : { authorization: `Bearer ${token}` };
    const req = https.request(url, { headers, rejectUnauthorized: false, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function get(url: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url);
  return { status: response.status, text: await response.text() };
}

describe("a generated project with a validating handler, running on the devcluster with the Deployment's options", () => {
  let work: string;
  let project: string;
  let operator: ChildProcess | undefined;
  let log = '';
  let deployment: Deployment;
  /** The free ports the Deployment's endpoints were moved to for this machine, by the Deployment's port. */
  const servedPorts = new Map<string, number>();
  /** The devcluster's kubeconfig, whose token the metrics' scrape presents. */
  let kubeconfigFile = '';

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-e2e-servers-'));
    project = path.join(work, 'kopf-example-operator');
    const init = await run(process.execPath, [path.join(demo.CHECKOUT, 'bin/kopf-gen.js'), 'init', '--crd', CRD, '--out', project, '--webhooks'], {
      cwd: work,
      timeoutMs: 30_000,
    });
    if (init.code !== 0) throw new Error(`kopf-gen init --webhooks exited with ${init.code}:\n${init.output}`);
    demo.linkNodeModules(project);
    deployment = YAML.parse(fs.readFileSync(path.join(project, 'deploy/deployment.yaml'), 'utf8')) as Deployment;
  }, 40_000);

  afterAll(() => {
    if (operator?.pid !== undefined && operator.exitCode === null) {
      for (const pid of demo.scriptProcesses(operator.pid)) process.kill(pid, 'SIGKILL');
      operator.kill('SIGKILL');
    }
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('the validating stub, edited to deny spec.field "wrong" with a typed AdmissionError, type-checks', async () => {
    const file = path.join(project, 'src/handlers/kopf-example.ts');
    const stub = fs.readFileSync(file, 'utf8');
    const signature = /async function validateKopfExample\(\{ name, operation, logger \}\) \{\n/;
    expect(stub).toMatch(signature);
    const edited = stub
      .replace("import { on } from 'kopf-gen/runtime';", "import { AdmissionError, on } from 'kopf-gen/runtime';")
      .replace(
        signature,
        (found) =>
          `${found.replace('logger }', 'logger, spec }')}  if (spec.field === 'wrong') throw new AdmissionError('spec.field must not be "wrong"', 422);\n`,
      );
    expect(edited).toContain('AdmissionError, on');
    fs.writeFileSync(file, edited);
    const typecheck = await run('npm', ['run', 'typecheck'], { cwd: project, timeoutMs: 60_000 });
    expect(typecheck.code, typecheck.output).toBe(0);
  }, 70_000);

  it('R-ADMISSION-8 A-21 npm run operator serves and configures the webhook: kubectl apply of an invalid object is denied, a valid one admitted', async () => {
    requireKubectl();
    // The Deployment's health and metrics options, each port moved to a free port of this machine.
    const container = deployment.spec.template.spec.containers[0]!;
    const served: string[] = [];
    for (const arg of container.args.filter((each) => each.startsWith('--liveness=') || each.startsWith('--metrics='))) {
      const port = await freePort();
      servedPorts.set(/\/\/0\.0\.0\.0:(\d+)\//.exec(arg)![1]!, port);
      served.push(arg.replace(/\/\/0\.0\.0\.0:\d+\//, `//127.0.0.1:${port}/`));
    }
    expect(served).toHaveLength(2);
    expect(servedPorts.size).toBe(2);
    const home = fs.mkdtempSync(path.join(work, 'home-'));
    operator = spawn('npm', ['run', 'operator', '--', ...served], {
      cwd: project,
      env: childEnv({ HOME: home, KUBECONFIG: undefined }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    operator.stdout!.on('data', (chunk: Buffer) => {
      log += chunk.toString('utf8');
    });
    operator.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString('utf8');
    });

    const kubeconfig = await until(() => /kubeconfig: (\S+);/.exec(log)?.[1], `the devcluster's log line; the log so far:\n${log}`, 60_000);
    kubeconfigFile = kubeconfig;
    const kubectl = (...args: string[]): Promise<{ stdout: string; stderr: string }> =>
      promisify(execFile)('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', path.join(work, 'kubectl-cache'), ...args], {
        encoding: 'utf8',
        timeout: 20_000,
      });
    await until(
      async () => {
        const { stdout } = await kubectl('get', 'validatingwebhookconfigurations', '-o', 'name');
        return stdout.trim() ? stdout : undefined;
      },
      `the managed validating webhook configuration; the operator's log so far:\n${log}`,
      60_000,
    );

    const wrong = fs
      .readFileSync(SAMPLE, 'utf8')
      .replace(/name: kopf-example-1/, 'name: kopf-example-wrong')
      .replace(/field: .*/, 'field: wrong');
    const wrongFile = path.join(work, 'wrong.yaml');
    fs.writeFileSync(wrongFile, wrong);
    const denied = await kubectl('apply', '-f', wrongFile).then(
      () => 'admitted',
      (error: { stderr?: string }) => error.stderr ?? String(error),
    );
    expect(denied, log).toMatch(/denied the request: spec\.field must not be "wrong"/);
    expect((await kubectl('apply', '-f', SAMPLE)).stdout).toContain('kopfexample.kopf.dev/kopf-example-1 created');
    const listed = (await kubectl('get', 'kopfexamples', '-n', 'default', '-o', 'name')).stdout;
    expect(listed).toContain('kopf-example-1');
    expect(listed).not.toContain('kopf-example-wrong');
    expect(log).toMatch(/Serving admission webhooks for development/);
  }, 120_000);

  it("R-ACTIVITY-4 R-SEC-15 the Deployment's startup, liveness and readiness probes and its metrics annotations reach real endpoints; the metrics want a token", async () => {
    expect(operator?.exitCode ?? null, log).toBeNull();
    const template = deployment.spec.template;
    const container = template.spec.containers[0]!;
    const liveness = container.args.find((arg) => arg.startsWith('--liveness='));
    const port = /^--liveness=http:\/\/0\.0\.0\.0:(\d+)\//.exec(liveness ?? '')?.[1];
    expect(port, `the Deployment's liveness option: ${liveness}`).toBeDefined();
    const served = servedPorts.get(port!)!;
    expect(served).toBeGreaterThan(0);
    // The probes name the port by name: it must be the container port the endpoint listens on.
    for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) {
      const named = container.ports.find((p) => p.name === probe.httpGet.port);
      expect(named?.containerPort, `the probe's port ${probe.httpGet.port}`).toBe(Number(port));
      const answer = await until(
        async () => {
          const r = await get(`http://127.0.0.1:${served}${probe.httpGet.path}`);
          return r.status === 200 ? r : undefined;
        },
        `${probe.httpGet.path} answering 200; the operator's log so far:\n${log}`,
        30_000,
      );
      expect(answer.status).toBe(200);
    }
    // The health port serves nothing else.
    expect((await get(`http://127.0.0.1:${served}/metrics`)).status).toBe(404);
    const annotations = template.metadata.annotations;
    expect(annotations['prometheus.io/scrape']).toBe('true');
    expect(annotations['prometheus.io/scheme']).toBe('https');
    const metricsPort = servedPorts.get(annotations['prometheus.io/port']!);
    expect(metricsPort, `the metrics port ${annotations['prometheus.io/port']} among ${[...servedPorts.keys()].join(', ')}`).toBeDefined();
    const metricsUrl = `https://127.0.0.1:${metricsPort}${annotations['prometheus.io/path']}`;
    expect((await getInsecure(metricsUrl)).status).toBe(401);
    // The devcluster's own token: its TokenReview knows it, and it may get /metrics (auth: none).
    const token = /token: (\S+)/.exec(fs.readFileSync(kubeconfigFile, 'utf8'))?.[1];
    expect(token).toBeDefined();
    const metrics = await getInsecure(metricsUrl, token);
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/^# TYPE \w+ (counter|gauge|histogram)/m);
    expect(metrics.text).toMatch(/controller_runtime_webhook_requests_total\{[^}]*\} [1-9]/);
  }, 60_000);
});
