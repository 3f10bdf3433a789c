import * as fs from 'node:fs';
import * as path from 'node:path';
import * as YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../../devcluster/testing.js';
import * as api from '../../../../runtime/cogs/client/api.js';
import * as connections from '../../../../runtime/cogs/client/connections.js';
import * as credentials from '../../../../runtime/cogs/client/credentials.js';
import * as errors from '../../../../runtime/cogs/client/errors.js';
import * as logins from '../../../../runtime/cogs/client/logins.js';
import * as settings from '../../../../runtime/cogs/configs/settings.js';
import * as references from '../../../../runtime/cogs/structs/references.js';
import { RecordingLogger, tempDir } from './helpers.js';

const NAMESPACES = references.makeResource({ group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false });

/** Proves the credentials work: lists namespaces through the real client. */
async function listWith(info: credentials.ConnectionInfo | null, networking: { errorBackoffs?: number[] } = {}): Promise<string[]> {
  const vault = new credentials.Vault();
  vault.populate({ login: info });
  const s = new settings.OperatorSettings();
  if (networking.errorBackoffs) s.networking.errorBackoffs = networking.errorBackoffs;
  const client = new api.HttpKubeApi({ vault, settings: s, logger: new RecordingLogger() });
  try {
    const listing = await client.list(NAMESPACES, null);
    return listing.items.map((item) => item.metadata?.name ?? '');
  } finally {
    client.close();
  }
}

describe('R-AUTH-2 built-in logins against an HTTPS devcluster with enforced auth', () => {
  let cluster: DevCluster;
  beforeAll(async () => {
    cluster = await DevCluster.start({ auth: 'enforced' });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('R-AUTH-2 logs in with a kubeconfig file: server, CA data, token, namespace, priority 10', async () => {
    const file = cluster.writeKubeconfig(path.join(tempDir(), 'config'), { namespace: 'kube-system' });
    const info = logins.loginWithKubeconfig({ paths: [file] });
    expect(info).toMatchObject({ server: cluster.url, token: cluster.token, defaultNamespace: 'kube-system', priority: logins.PRIORITY_OF_KUBECONFIG });
    expect(typeof info?.caData).toBe('string');
    expect(await listWith(info)).toContain('default');
    const last = cluster.requests.all.at(-1)!;
    expect(last.code).toBe(200);
    expect(last.user).not.toBe('');
  });

  it('R-AUTH-2 reads $KUBECONFIG as a path list where the first file defining an entry wins', async () => {
    const dir = tempDir();
    const good = cluster.writeKubeconfig(path.join(dir, 'good'));
    const bad = YAML.parse(cluster.kubeconfig()) as Record<string, any>;
    bad['clusters'][0].cluster.server = 'https://127.0.0.1:1';
    bad['users'][0].user.token = 'wrong';
    bad['contexts'].push({ name: 'other', context: { cluster: 'devcluster', user: 'devcluster-admin', namespace: 'other' } });
    bad['current-context'] = 'other';
    const badFile = path.join(dir, 'bad');
    fs.writeFileSync(badFile, YAML.stringify(bad));
    const env = { KUBECONFIG: [path.join(dir, 'missing'), good, badFile].join(path.delimiter) };
    const paths = logins.kubeconfigPaths(env);
    expect(paths).toEqual([path.join(dir, 'missing'), good, badFile]);
    const info = logins.loginWithKubeconfig({ paths });
    expect(info).toMatchObject({ server: cluster.url, token: cluster.token });
    expect(info?.defaultNamespace).toBeUndefined();
    expect(await listWith(info)).toContain('default');
    const saved = process.env['KUBECONFIG'];
    process.env['KUBECONFIG'] = env.KUBECONFIG;
    try {
      expect(logins.loginWithKubeconfig()).toEqual(info);
    } finally {
      if (saved === undefined) delete process.env['KUBECONFIG'];
      else process.env['KUBECONFIG'] = saved;
    }
    const reversed = logins.loginWithKubeconfig({ paths: [badFile, good] });
    expect(reversed).toMatchObject({ server: 'https://127.0.0.1:1', token: 'wrong', defaultNamespace: 'other' });
  });

  it('R-AUTH-2 uses ~/.kube/config when $KUBECONFIG is not set', () => {
    expect(logins.kubeconfigPaths({ HOME: '/home/someone' })).toEqual([path.join('/home/someone', '.kube', 'config')]);
  });

  it('R-AUTH-2 returns null when no kubeconfig exists', () => {
    expect(logins.loginWithKubeconfig({ paths: [path.join(tempDir(), 'absent')] })).toBeNull();
  });

  it('R-AUTH-2 a missing current context raises LoginError', () => {
    const config = YAML.parse(cluster.kubeconfig()) as Record<string, unknown>;
    delete config['current-context'];
    const file = path.join(tempDir(), 'config');
    fs.writeFileSync(file, YAML.stringify(config));
    expect(() => logins.loginWithKubeconfig({ paths: [file] })).toThrow(errors.LoginError);
    const unknown = { ...config, 'current-context': 'nowhere' };
    fs.writeFileSync(file, YAML.stringify(unknown));
    expect(() => logins.loginWithKubeconfig({ paths: [file] })).toThrow(errors.LoginError);
  });

  it('R-AUTH-2 honours certificate-authority files relative to the kubeconfig and insecure-skip-tls-verify', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'ca.pem'), cluster.caPem!);
    const config = YAML.parse(cluster.kubeconfig()) as Record<string, any>;
    delete config['clusters'][0].cluster['certificate-authority-data'];
    config['clusters'][0].cluster['certificate-authority'] = 'ca.pem';
    fs.writeFileSync(path.join(dir, 'config'), YAML.stringify(config));
    const info = logins.loginWithKubeconfig({ paths: [path.join(dir, 'config')] });
    expect(info?.caPath).toBe(path.join(dir, 'ca.pem'));
    expect(await listWith(info)).toContain('default');

    delete config['clusters'][0].cluster['certificate-authority'];
    config['clusters'][0].cluster['insecure-skip-tls-verify'] = true;
    fs.writeFileSync(path.join(dir, 'config'), YAML.stringify(config));
    const insecure = logins.loginWithKubeconfig({ paths: [path.join(dir, 'config')] });
    expect(insecure?.insecure).toBe(true);
    expect(await listWith(insecure)).toContain('default');
  });

  it('R-AUTH-2 takes a client certificate and key from the kubeconfig', async () => {
    const pair = await cluster.auth.issueClientCert({ username: 'cert-user', groups: ['system:masters'] });
    const config = YAML.parse(cluster.kubeconfig()) as Record<string, any>;
    config['users'][0].user = {
      'client-certificate-data': Buffer.from(pair.certPem).toString('base64'),
      'client-key-data': Buffer.from(pair.keyPem).toString('base64'),
    };
    const file = path.join(tempDir(), 'config');
    fs.writeFileSync(file, YAML.stringify(config));
    const info = logins.loginWithKubeconfig({ paths: [file] });
    expect(info?.token).toBeUndefined();
    expect(await listWith(info)).toContain('default');
    expect(cluster.requests.all.at(-1)?.user).toBe('cert-user');
  });

  /** A kubeconfig for the cluster whose user (or cluster) is replaced; written to `dir/config`. */
  function kubeconfigWith(dir: string, changes: { user?: Record<string, unknown>; cluster?: Record<string, unknown> }): string {
    const config = YAML.parse(cluster.kubeconfig()) as Record<string, any>;
    if (changes.user) config['users'][0].user = changes.user;
    if (changes.cluster) config['clusters'][0].cluster = { ...config['clusters'][0].cluster, ...changes.cluster };
    const file = path.join(dir, 'config');
    fs.writeFileSync(file, YAML.stringify(config));
    return file;
  }

  /**
   * Writes an executable node script at `dir/bin/plugin.mjs` that counts its runs in `dir/runs` and
   * prints an ExecCredential: `exec-token-<run>`, or the client certificate in `dir/tls.{crt,key}`.
   */
  function writePlugin(dir: string): void {
    fs.mkdirSync(path.join(dir, 'bin'));
    fs.writeFileSync(
      path.join(dir, 'bin', 'plugin.mjs'),
      [
        `#!${process.execPath}`,
        "import * as fs from 'node:fs';",
        "const dir = new URL('..', import.meta.url);",
        "const runs = Number(fs.existsSync(new URL('runs', dir)) ? fs.readFileSync(new URL('runs', dir), 'utf8') : '0') + 1;",
        "fs.writeFileSync(new URL('runs', dir), String(runs));",
        'const { apiVersion } = JSON.parse(process.env.KUBERNETES_EXEC_INFO);',
        "const status = process.argv[2] === 'certificate'",
        "  ? { clientCertificateData: fs.readFileSync(new URL('tls.crt', dir), 'utf8'), clientKeyData: fs.readFileSync(new URL('tls.key', dir), 'utf8') }",
        '  : { token: `exec-token-${runs}` };',
        "console.log(JSON.stringify({ apiVersion, kind: 'ExecCredential', status }));",
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
  }

  const EXEC = { apiVersion: 'client.authentication.k8s.io/v1', command: './bin/plugin.mjs', interactiveMode: 'Never' };

  it('R-AUTH-2 runs exec plugins (a path relative to the kubeconfig) for a token', async () => {
    const dir = tempDir();
    writePlugin(dir);
    cluster.auth.addToken({ token: 'exec-token-1', username: 'exec-user', groups: ['system:masters'] });
    const info = logins.loginWithKubeconfig({ paths: [kubeconfigWith(dir, { user: { exec: EXEC } })] });
    expect(info?.token).toBeUndefined();
    expect(fs.existsSync(path.join(dir, 'runs'))).toBe(false); // not before the first request
    expect(await listWith(info)).toContain('default');
    expect(cluster.requests.all.at(-1)?.user).toBe('exec-user');
  });

  it('R-AUTH-3 a token from an exec plugin rejected with 401 is dropped; the re-login runs the plugin again', async () => {
    const dir = tempDir();
    writePlugin(dir);
    cluster.auth.addToken({ token: 'exec-token-1', username: 'first', groups: ['system:masters'] });
    cluster.auth.addToken({ token: 'exec-token-2', username: 'second', groups: ['system:masters'] });
    const file = kubeconfigWith(dir, { user: { exec: EXEC } });
    const vault = new credentials.Vault();
    vault.populate({ kubeconfig: logins.loginWithKubeconfig({ paths: [file] }) });
    const client = new api.HttpKubeApi({ vault, settings: new settings.OperatorSettings(), logger: new RecordingLogger() });
    try {
      await client.list(NAMESPACES, null);
      cluster.auth.revokeToken('exec-token-1');
      cluster.requests.clear();
      const pending = client.list(NAMESPACES, null);
      await vault.depleted.waitFor(true);
      expect(vault.populate({ kubeconfig: logins.loginWithKubeconfig({ paths: [file] }) })).toBe(1);
      expect((await pending).items.length).toBeGreaterThan(0);
      expect(cluster.requests.all.map((r) => [r.code, r.user])).toEqual([
        [401, ''],
        [200, 'second'],
      ]);
      expect(fs.readFileSync(path.join(dir, 'runs'), 'utf8')).toBe('2');
    } finally {
      client.close();
    }
  });

  it('R-AUTH-2 an exec plugin may give a client certificate instead of a token', async () => {
    const dir = tempDir();
    writePlugin(dir);
    const pair = await cluster.auth.issueClientCert({ username: 'exec-cert-user', groups: ['system:masters'] });
    fs.writeFileSync(path.join(dir, 'tls.crt'), pair.certPem);
    fs.writeFileSync(path.join(dir, 'tls.key'), pair.keyPem);
    const info = logins.loginWithKubeconfig({ paths: [kubeconfigWith(dir, { user: { exec: { ...EXEC, args: ['certificate'] } } })] });
    expect(await listWith(info)).toContain('default');
    expect(cluster.requests.all.at(-1)?.user).toBe('exec-cert-user');
  });

  it('R-AUTH-2 tls-server-name verifies the server certificate against that name', async () => {
    const dir = tempDir();
    const info = logins.loginWithKubeconfig({ paths: [kubeconfigWith(dir, { cluster: { 'tls-server-name': 'kubernetes.default.svc' } })] });
    expect(info?.tlsServerName).toBe('kubernetes.default.svc');
    expect(await listWith(info)).toContain('default');
    const wrong = logins.loginWithKubeconfig({ paths: [kubeconfigWith(dir, { cluster: { 'tls-server-name': 'wrong.example' } })] });
    const error = await listWith(wrong, { errorBackoffs: [] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errors.ConnectionError);
    expect((error as Error).message).toMatch(/wrong\.example/);
  });

  it('R-AUTH-2 auth-provider oidc loads @kubernetes/client-node on first use and sends its id-token', async () => {
    const part = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');
    const idToken = `${part({ alg: 'none' })}.${part({ sub: 'oidc-user', exp: Math.floor(Date.now() / 1000) + 3600 })}.signature`;
    cluster.auth.addToken({ token: idToken, username: 'oidc-user', groups: ['system:masters'] });
    const imported: string[] = [];
    const info = logins.loginWithKubeconfig({
      paths: [kubeconfigWith(tempDir(), { user: { 'auth-provider': { name: 'oidc', config: { 'id-token': idToken, 'client-id': 'kubectl' } } } })],
      plugins: {
        importModule: (specifier) => {
          imported.push(specifier);
          return import(specifier);
        },
      },
    });
    expect(imported).toEqual([]);
    expect(await info?.authorization?.()).toBe(`Bearer ${idToken}`);
    expect(imported).toEqual(['@kubernetes/client-node']);
    expect(await listWith(info)).toContain('default');
    expect(cluster.requests.all.at(-1)?.user).toBe('oidc-user');
  });

  it('R-AUTH-2 auth-provider gcp without @kubernetes/client-node installed still sends the token the entry holds', async () => {
    cluster.auth.addToken({ token: 'ya29.current', username: 'gcp-user', groups: ['system:masters'] });
    const file = kubeconfigWith(tempDir(), {
      user: { 'auth-provider': { name: 'gcp', config: { 'access-token': 'ya29.current', expiry: '2099-01-01T00:00:00Z' } } },
    });
    const missing = Object.assign(new Error("Cannot find package '@kubernetes/client-node' imported from /app/node_modules/kopf-gen/runtime"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    const info = logins.loginWithKubeconfig({ paths: [file], plugins: { importModule: () => Promise.reject(missing) } });
    expect(await info?.authorization?.()).toBe('Bearer ya29.current');
    expect(await listWith(info)).toContain('default');
    expect(cluster.requests.all.at(-1)?.user).toBe('gcp-user');
  });

  it('R-AUTH-2 auth-provider oidc without @kubernetes/client-node installed and without a token says how to install it', async () => {
    const file = kubeconfigWith(tempDir(), { user: { 'auth-provider': { name: 'oidc', config: { 'client-id': 'kubectl' } } } });
    const missing = Object.assign(new Error("Cannot find package '@kubernetes/client-node' imported from /app/node_modules/kopf-gen/runtime"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    const info = logins.loginWithKubeconfig({ paths: [file], plugins: { importModule: () => Promise.reject(missing) } });
    const error = await info?.authorization?.().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errors.LoginError);
    expect((error as Error).message).toBe(`Run \`npm install @kubernetes/client-node\` to use auth-provider "oidc" (user "devcluster-admin" in ${file}).`);
  });

  it('R-AUTH-2 a static auth-provider access-token is a bearer token', async () => {
    cluster.auth.addToken({ token: 'static-access', username: 'static-user', groups: ['system:masters'] });
    const info = logins.loginWithKubeconfig({
      paths: [kubeconfigWith(tempDir(), { user: { 'auth-provider': { name: 'custom', config: { 'access-token': 'static-access' } } } })],
    });
    expect(info).toMatchObject({ token: 'static-access' });
    expect(info?.authorization).toBeUndefined();
    expect(await listWith(info)).toContain('default');
    expect(cluster.requests.all.at(-1)?.user).toBe('static-user');
  });

  it('R-AUTH-2 logs in with a service account folder: token, CA, namespace, priority 20', async () => {
    const folder = tempDir();
    fs.writeFileSync(path.join(folder, 'token'), `${cluster.token}\n`);
    fs.writeFileSync(path.join(folder, 'ca.crt'), cluster.caPem!);
    fs.writeFileSync(path.join(folder, 'namespace'), 'kube-public\n');
    const info = logins.loginWithServiceAccount({ folder, server: cluster.url });
    expect(info).toMatchObject({
      server: cluster.url,
      token: cluster.token,
      caPath: path.join(folder, 'ca.crt'),
      defaultNamespace: 'kube-public',
      priority: logins.PRIORITY_OF_SERVICE_ACCOUNT,
    });
    expect(await listWith(info)).toContain('kube-public');
  });

  it('R-AUTH-2 without credentials, the message names KUBECONFIG, the default kubeconfig and the service-account token', () => {
    const folder = path.join(tempDir(), 'serviceaccount');
    const tail = `and ${path.join(folder, 'token')} does not exist (not running in a pod). Point KUBECONFIG at a kubeconfig file or register a login handler (on.login).`;
    expect(logins.noCredentialsMessage({ env: { HOME: '/home/someone' }, folder })).toBe(
      `No credentials found: KUBECONFIG is not set, /home/someone/.kube/config does not exist, ${tail}`,
    );
    const list = ['/etc/a', '/etc/b'].join(path.delimiter);
    expect(logins.noCredentialsMessage({ env: { HOME: '/home/someone', KUBECONFIG: list }, folder })).toBe(
      `No credentials found: KUBECONFIG=${list} lists no existing file (the default /home/someone/.kube/config is not read when KUBECONFIG is set), ${tail}`,
    );
  });

  it('R-CLI-701 nothing to log in with: only when no kubeconfig file, service-account token or explicit source exists', () => {
    const files = new Set<string>();
    const exists = (file: string): boolean => files.has(file);
    const env = { HOME: '/home/someone' };
    expect(connections.missingCredentials({ env }, exists)).toMatch(
      /^No credentials found: KUBECONFIG is not set, \/home\/someone\/\.kube\/config does not exist/,
    );
    expect(connections.missingCredentials({ env, kubeconfig: '/etc/missing' }, exists)).toBeUndefined();
    expect(connections.missingCredentials({ env, connection: { server: 'https://127.0.0.1:1' } }, exists)).toBeUndefined();
    files.add(path.join(logins.SERVICE_ACCOUNT_FOLDER, 'token'));
    expect(connections.missingCredentials({ env }, exists)).toBeUndefined();
    files.clear();
    files.add('/home/someone/.kube/config');
    expect(connections.missingCredentials({ env }, exists)).toBeUndefined();
    // KUBECONFIG set: the default file is not read, so it does not count.
    expect(connections.missingCredentials({ env: { ...env, KUBECONFIG: '/etc/a' } }, exists)).toMatch(/KUBECONFIG=\/etc\/a lists no existing file/);
    files.add('/etc/a');
    expect(connections.missingCredentials({ env: { ...env, KUBECONFIG: ['/etc/b', '/etc/a'].join(path.delimiter) } }, exists)).toBeUndefined();
  });

  it('R-AUTH-2 the service-account login defaults to the in-cluster server and is null without a token', () => {
    const folder = tempDir();
    expect(logins.loginWithServiceAccount({ folder })).toBeNull();
    fs.writeFileSync(path.join(folder, 'token'), 'abc');
    expect(logins.loginWithServiceAccount({ folder })).toMatchObject({ server: 'https://kubernetes.default.svc', token: 'abc' });
    expect(logins.loginWithServiceAccount({ folder })?.caPath).toBeUndefined();
  });
});
