/**
 * `kubectl auth can-i`, `kubectl auth can-i --list` and `kubectl auth whoami` against a TLS
 * devcluster (D-AUTH-11..15): kubectl 1.32 with a generated kubeconfig and a fresh cache per run,
 * once with authentication not enforced (everything allowed, the devcluster admin) and once
 * enforced, as a token user whom rules allow some things and deny others. Each test also checks
 * the review kubectl posted, as the devcluster recorded it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as YAML from 'yaml';
import { DevCluster } from '../../../devcluster/testing.js';
import { requireKubectl } from '../../support/kubectl.js';
import * as kubectl from './kubectl.js';

/** kubectl 1.32: the `kubectl.1.32` build next to the `kubectl` on PATH, else that `kubectl` (itself 1.32). */
function kubectl132(): string {
  const onPath = requireKubectl();
  const found = (process.env['PATH'] ?? '')
    .split(path.delimiter)
    .map((dir) => path.join(dir, onPath))
    .find((file) => fs.existsSync(file));
  const versioned = found ? path.join(path.dirname(fs.realpathSync(found)), 'kubectl.1.32') : undefined;
  return versioned && fs.existsSync(versioned) ? versioned : onPath;
}

const BIN = kubectl132();

interface Setup {
  cluster: DevCluster;
  target: kubectl.KubectlTarget;
}

async function setUp(options: Parameters<typeof DevCluster.start>[0], token?: string): Promise<Setup> {
  const cluster = await DevCluster.start(options);
  cluster.requests.keepResponses = true;
  const workDir = kubectl.makeWorkDir('kubectl-auth-');
  const config = cluster.kubeconfigObject();
  if (token) config.users[0]!.user.token = token;
  const kubeconfig = path.join(workDir, 'kubeconfig');
  fs.writeFileSync(kubeconfig, YAML.stringify(config), { mode: 0o600 });
  return { cluster, target: { kubeconfig, workDir } };
}

async function tearDown(setup: Setup | undefined): Promise<void> {
  if (!setup) return;
  await setup.cluster.stop();
  fs.rmSync(setup.target.workDir, { recursive: true, force: true });
}

/**
 * The answer to the one POST to `resource` since `mark` (kubectl posts reviews in protobuf; the
 * devcluster answers in JSON, and access reviews echo their spec).
 */
function answered(setup: Setup, mark: number, resource: string): Record<string, any> {
  const found = setup.cluster.requests.all.slice(mark).filter((r) => r.method === 'POST' && r.resource === resource);
  expect(found, `one POST of ${resource}`).toHaveLength(1);
  expect(found[0]!.code).toBe(201);
  expect(found[0]!.headers.contentType).toBe('application/vnd.kubernetes.protobuf');
  return JSON.parse(found[0]!.responseBody ?? '{}') as Record<string, any>;
}

describe(`kubectl auth (${path.basename(BIN)}) without enforced authentication`, () => {
  let setup: Setup;

  beforeAll(async () => {
    setup = await setUp({});
  });
  afterAll(async () => {
    await tearDown(setup);
  });

  it('D-AUTH-12 `auth can-i create jobs` says yes', async () => {
    const mark = setup.cluster.requests.all.length;
    const r = kubectl.expectSuccess(await kubectl.run(BIN, setup.target, ['auth', 'can-i', 'create', 'jobs']), 'kubectl auth can-i create jobs');
    expect(r.stdout.trim()).toBe('yes');
    const review = answered(setup, mark, 'selfsubjectaccessreviews');
    // Jobs are served, so kubectl names their group (batch).
    expect(review['spec']['resourceAttributes']).toEqual({ namespace: 'default', verb: 'create', group: 'batch', resource: 'jobs' });
    expect(review['status']).toEqual({ allowed: true });
  });

  it('D-AUTH-13 `auth can-i --list` shows the wildcard rules of an allow-all cluster', async () => {
    const r = kubectl.expectSuccess(await kubectl.run(BIN, setup.target, ['auth', 'can-i', '--list']), 'kubectl auth can-i --list');
    expect(r.stdout).toMatch(/^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs$/m);
    expect(r.stdout).toMatch(/^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m);
    expect(r.stdout).toMatch(/^\s+\[\*\]\s+\[\]\s+\[\*\]$/m);
    expect(r.stderr).toBe('');
  });

  it('D-AUTH-15 `auth whoami` names the devcluster admin', async () => {
    const r = kubectl.expectSuccess(await kubectl.run(BIN, setup.target, ['auth', 'whoami']), 'kubectl auth whoami');
    expect(r.stdout).toMatch(/^Username\s+devcluster-admin$/m);
    expect(r.stdout).toMatch(/^Groups\s+\[system:masters system:authenticated\]$/m);
  });
});

describe(`kubectl auth (${path.basename(BIN)}) with enforced authentication`, () => {
  let setup: Setup;

  beforeAll(async () => {
    setup = await setUp({ auth: 'enforced' }, 'alice-token');
    setup.cluster.auth.addToken({ token: 'alice-token', username: 'alice', uid: 'alice-uid', groups: ['devs'] });
    setup.cluster.auth.authorizer.setDefaultDecision('deny');
    setup.cluster.auth.authorizer.setRules([
      { effect: 'allow', users: ['alice'], verbs: ['create'], resources: ['jobs'] },
      { effect: 'allow', groups: ['devs'], verbs: ['get', 'list'], resources: ['configmaps'], namespaces: ['default'] },
    ]);
  });
  afterAll(async () => {
    await tearDown(setup);
  });

  it('D-AUTH-12 `auth can-i` follows the rules: yes for what they allow, no (exit 1) for the rest', async () => {
    const yes = kubectl.expectSuccess(await kubectl.run(BIN, setup.target, ['auth', 'can-i', 'create', 'jobs']), 'kubectl auth can-i create jobs');
    expect(yes.stdout.trim()).toBe('yes');
    const mark = setup.cluster.requests.all.length;
    const no = await kubectl.run(BIN, setup.target, ['auth', 'can-i', 'delete', 'jobs']);
    expect(no.code, no.stderr).toBe(1);
    expect(no.stdout.trim()).toBe('no');
    expect(answered(setup, mark, 'selfsubjectaccessreviews')['status']).toEqual({ allowed: false });
  });

  it('D-AUTH-13 `auth can-i --list` lists the rules that apply to the user in the namespace', async () => {
    const mark = setup.cluster.requests.all.length;
    const r = kubectl.expectSuccess(await kubectl.run(BIN, setup.target, ['auth', 'can-i', '--list']), 'kubectl auth can-i --list');
    expect(answered(setup, mark, 'selfsubjectrulesreviews')['status']['incomplete']).toBe(false);
    expect(r.stdout).toMatch(/^jobs\.\*\s+\[\]\s+\[\]\s+\[create\]$/m);
    expect(r.stdout).toMatch(/^configmaps\.\*\s+\[\]\s+\[\]\s+\[get list\]$/m);
    expect(r.stdout).toMatch(/^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m);
    expect(r.stdout).toMatch(/^\s+\[\/apis\/\*\]\s+\[\]\s+\[get\]$/m);
    expect(r.stdout).not.toMatch(/^\*\.\*/m);
    const elsewhere = kubectl.expectSuccess(
      await kubectl.run(BIN, setup.target, ['auth', 'can-i', '--list', '-n', 'other']),
      'kubectl auth can-i --list -n other',
    );
    expect(elsewhere.stdout).not.toMatch(/^configmaps/m);
  });

  it('D-AUTH-15 `auth whoami` names the token user', async () => {
    const r = kubectl.expectSuccess(await kubectl.run(BIN, setup.target, ['auth', 'whoami']), 'kubectl auth whoami');
    expect(r.stdout).toMatch(/^Username\s+alice$/m);
    expect(r.stdout).toMatch(/^UID\s+alice-uid$/m);
    expect(r.stdout).toMatch(/^Groups\s+\[devs system:authenticated\]$/m);
  });
});
