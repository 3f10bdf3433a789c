import * as fs from 'node:fs';
import * as path from 'node:path';
import * as YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../../devcluster/testing.js';
import * as api from '../../../../runtime/cogs/client/api.js';
import * as credentials from '../../../../runtime/cogs/client/credentials.js';
import * as errors from '../../../../runtime/cogs/client/errors.js';
import * as logins from '../../../../runtime/cogs/client/logins.js';
import * as settings from '../../../../runtime/cogs/configs/settings.js';
import * as references from '../../../../runtime/cogs/structs/references.js';
import { RecordingLogger, tempDir } from './helpers.js';

const NAMESPACES = references.makeResource({ group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false });

/** Proves the credentials work: lists namespaces through the real client. */
async function listWith(info: credentials.ConnectionInfo | null): Promise<string[]> {
  const vault = new credentials.Vault();
  vault.populate({ login: info });
  const client = new api.HttpKubeApi({ vault, settings: new settings.OperatorSettings(), logger: new RecordingLogger() });
  try {
    const listing = await client.list(NAMESPACES, null);
    return listing.items.map((item) => item.metadata?.name ?? '');
  } finally {
    client.close();
  }
}

describe('R-AUTH-2 built-in logins against an HTTPS devcluster with enforced auth', () => {
  let cluster: DevCluster;
  beforeAll(async () => { cluster = await DevCluster.start({ auth: 'enforced' }); });
  afterAll(async () => { await cluster?.stop(); });

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
      if (saved === undefined) delete process.env['KUBECONFIG']; else process.env['KUBECONFIG'] = saved;
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

  it('R-AUTH-2 runs exec plugins through the KubeConfig authenticators', async () => {
    const dir = tempDir();
    const script = path.join(dir, 'plugin.sh');
    const credential = { apiVersion: 'client.authentication.k8s.io/v1beta1', kind: 'ExecCredential', status: { token: 'exec-token' } };
    fs.writeFileSync(script, `#!/bin/sh\necho '${JSON.stringify(credential)}'\n`, { mode: 0o755 });
    cluster.auth.addToken({ token: 'exec-token', username: 'exec-user', groups: ['system:masters'] });
    const config = YAML.parse(cluster.kubeconfig()) as Record<string, any>;
    config['users'][0].user = { exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: script, args: [] } };
    fs.writeFileSync(path.join(dir, 'config'), YAML.stringify(config));
    const info = logins.loginWithKubeconfig({ paths: [path.join(dir, 'config')] });
    expect(info?.token).toBeUndefined();
    expect(await info?.authorization?.()).toBe('Bearer exec-token');
    expect(await listWith(info)).toContain('default');
    expect(cluster.requests.all.at(-1)?.user).toBe('exec-user');
  });

  it('R-AUTH-2 logs in with a service account folder: token, CA, namespace, priority 20', async () => {
    const folder = tempDir();
    fs.writeFileSync(path.join(folder, 'token'), `${cluster.token}\n`);
    fs.writeFileSync(path.join(folder, 'ca.crt'), cluster.caPem!);
    fs.writeFileSync(path.join(folder, 'namespace'), 'kube-public\n');
    const info = logins.loginWithServiceAccount({ folder, server: cluster.url });
    expect(info).toMatchObject({ server: cluster.url, token: cluster.token, caPath: path.join(folder, 'ca.crt'), defaultNamespace: 'kube-public', priority: logins.PRIORITY_OF_SERVICE_ACCOUNT });
    expect(await listWith(info)).toContain('kube-public');
  });

  it('R-AUTH-2 the service-account login defaults to the in-cluster server and is null without a token', () => {
    const folder = tempDir();
    expect(logins.loginWithServiceAccount({ folder })).toBeNull();
    fs.writeFileSync(path.join(folder, 'token'), 'abc');
    expect(logins.loginWithServiceAccount({ folder })).toMatchObject({ server: 'https://kubernetes.default.svc', token: 'abc' });
    expect(logins.loginWithServiceAccount({ folder })?.caPath).toBeUndefined();
  });
});
