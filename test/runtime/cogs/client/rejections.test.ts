/**
 * Credentials the API server keeps rejecting (R-SEC-22): a login that re-issues credentials after
 * every 401 — an exec plugin above all — is given a bounded number of tries with a back-off on the
 * clock, then fails with one line naming the 401, the server and the user. The vault alone on a
 * virtual clock, and real plugins and static credentials against an enforcing devcluster.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../../devcluster/testing.js';
import { VirtualClock } from '../../../../runtime/cogs/aio/clocks.js';
import * as credentials from '../../../../runtime/cogs/client/credentials.js';
import * as errors from '../../../../runtime/cogs/client/errors.js';
import { builtins, connect } from '../../../../runtime/index.js';
import { flushed } from '../../../support/waiting.js';
import { drive, RecordingLogger, tempDir } from './helpers.js';

const SERVER = 'https://k8s.example:6443';
const T0 = Date.UTC(2030, 0, 1);
const NAMESPACES = builtins.Namespaces;

describe('R-SEC-22 the vault bounds the 401s of a login in a row', () => {
  /** Logs in as `login` would, with a new token each time (as an exec plugin does). */
  function relogin(vault: credentials.Vault, n: number): number {
    return vault.populate({ login: { server: SERVER, token: `token-${n}`, principal: 'user "dev" of /home/dev/.kube/config' } });
  }

  it('R-SEC-22 re-issued credentials are used at once after the 1st 401, after 5 s after the 2nd, and refused after the 3rd', async () => {
    const clock = new VirtualClock({ start: T0 });
    const vault = new credentials.Vault({ clock });
    relogin(vault, 1);
    vault.invalidate(await vault.select());
    expect(relogin(vault, 2)).toBe(1);
    expect(vault.selectNow()?.info.token).toBe('token-2'); // no back-off after the first
    vault.invalidate(vault.selectNow()!);
    expect(relogin(vault, 3)).toBe(1);
    expect(vault.selectNow()).toBeUndefined(); // held back…
    expect(vault.depleted.isOn()).toBe(false); // …without another re-login
    const selected = vault.select();
    await clock.advance(4999);
    await flushed();
    expect(vault.selectNow()).toBeUndefined();
    await clock.advance(1);
    expect((await selected).info.token).toBe('token-3');
    vault.invalidate(await vault.select());
    expect(relogin(vault, 4)).toBe(0);
    const error = await vault.select().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errors.LoginError);
    expect((error as Error).message).toBe(
      `401 Unauthorized from ${SERVER} as user "dev" of /home/dev/.kube/config: the API server rejected the credentials 3 times in a row, ` +
        'also those the login re-issued after each 401. Renew or fix these credentials (a revoked or expired token, a client certificate the ' +
        'cluster does not trust, a plugin or login handler that logs in to another account), then restart the operator.',
    );
  });

  it('R-SEC-22 an answer other than 401 ends the streak: a token that worked is re-issued after its 401 as before', async () => {
    const clock = new VirtualClock({ start: T0 });
    const vault = new credentials.Vault({ clock });
    relogin(vault, 1);
    for (let n = 2; n < 10; n += 1) {
      const item = await vault.select();
      vault.accepted(item); // e.g. a 200, or a 403: the server knows who this is
      vault.invalidate(item);
      expect(relogin(vault, n)).toBe(1);
      expect(vault.selectNow()?.info.token).toBe(`token-${n}`);
    }
  });

  it('R-SEC-22 concurrent 401s of the same credentials count once', async () => {
    const vault = new credentials.Vault({ clock: new VirtualClock({ start: T0 }), reissueBackoffs: [0, 0] });
    relogin(vault, 1);
    const item = await vault.select();
    for (let i = 0; i < 5; i += 1) vault.invalidate(item);
    expect(relogin(vault, 2)).toBe(1);
    expect(vault.selectNow()?.info.token).toBe('token-2');
    vault.invalidate(vault.selectNow()!);
    expect(relogin(vault, 3)).toBe(1);
    vault.invalidate(vault.selectNow()!);
    expect(relogin(vault, 4)).toBe(0);
  });

  it('R-SEC-22 credentials given again as they were are refused at once, naming the login when there is no principal', async () => {
    const vault = new credentials.Vault();
    vault.populate({ login_fn: { server: `${SERVER}/`, token: 'static' } });
    vault.invalidate(await vault.select());
    expect(vault.populate({ login_fn: { server: `${SERVER}/`, token: 'static' } })).toBe(0);
    await expect(vault.select()).rejects.toThrow(
      new errors.LoginError(
        `401 Unauthorized from ${SERVER} as the credentials of login "login_fn": the API server rejected these credentials, and the login gave ` +
          'the same ones again. Renew or fix these credentials (a revoked or expired token, a client certificate the cluster does not trust, ' +
          'a plugin or login handler that logs in to another account), then restart the operator.',
      ),
    );
  });
});

describe('R-SEC-22 against an enforcing devcluster', () => {
  let cluster: DevCluster;
  beforeAll(async () => {
    cluster = await DevCluster.start({ auth: 'enforced' });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  function kubeconfigWith(dir: string, user: Record<string, unknown>): string {
    const config = YAML.parse(cluster.kubeconfig()) as { users: { name: string; user: unknown }[] };
    config.users[0]!.user = user;
    const file = path.join(dir, 'config');
    fs.writeFileSync(file, YAML.stringify(config));
    return file;
  }

  /** A plugin counting its runs in `dir/runs` and printing `token-<prefix>-<run>`: a token the cluster does not know. */
  function writePlugin(dir: string, prefix: string): string {
    const file = path.join(dir, 'plugin.mjs');
    fs.writeFileSync(
      file,
      [
        `#!${process.execPath}`,
        "import * as fs from 'node:fs';",
        "const runs = new URL('runs', import.meta.url);",
        "const n = Number(fs.existsSync(runs) ? fs.readFileSync(runs, 'utf8') : '0') + 1;",
        'fs.writeFileSync(runs, String(n));',
        'const { apiVersion } = JSON.parse(process.env.KUBERNETES_EXEC_INFO);',
        `console.log(JSON.stringify({ apiVersion, kind: 'ExecCredential', status: { token: '${prefix}-' + n } }));`,
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    return file;
  }

  it('R-SEC-22 an exec plugin whose tokens are rejected runs 3 times (5 s of back-off on the clock), then the request fails with one line', async () => {
    const dir = tempDir();
    const command = writePlugin(dir, 'revoked');
    const file = kubeconfigWith(dir, { exec: { apiVersion: 'client.authentication.k8s.io/v1', command, interactiveMode: 'Never' } });
    const clock = new VirtualClock({ start: T0 });
    const logger = new RecordingLogger();
    await using client = await connect({ kubeconfig: file, clock, logger });
    const { error, slept } = await drive(clock, client.list(NAMESPACES));
    expect(error).toBeInstanceOf(errors.LoginError);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^401 Unauthorized from ${cluster.url.replace(/\/+$/, '')} as user "devcluster-admin" of ${file} \\(exec plugin ${JSON.stringify(command).replace(/[.\\]/g, '\\$&')}\\): ` +
          'the API server rejected the credentials 3 times in a row, also those the login re-issued after each 401\\. Renew or fix',
      ),
    );
    expect(fs.readFileSync(path.join(dir, 'runs'), 'utf8')).toBe('3');
    expect(slept).toEqual([5000]);
    expect(logger.messages().filter((line) => line.includes('revoked-'))).toEqual([]);
  });

  it('R-SEC-22 a revoked static token fails with the 401, the server and the user, not "Ran out of valid credentials"', async () => {
    cluster.auth.addToken({ token: 'soon-revoked', username: 'static-user', groups: ['system:masters'] });
    const file = kubeconfigWith(tempDir(), { token: 'soon-revoked' });
    await using client = await connect({ kubeconfig: file });
    expect((await client.list(NAMESPACES)).items.length).toBeGreaterThan(0);
    cluster.auth.revokeToken('soon-revoked');
    const error = await client.list(NAMESPACES).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errors.LoginError);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^401 Unauthorized from ${cluster.url.replace(/\/+$/, '')} as user "devcluster-admin" of ${file}: ` +
          'the API server rejected these credentials, and the login gave the same ones again\\. Renew or fix',
      ),
    );
    expect((error as Error).message).not.toContain('soon-revoked');
  });
});

describe('R-SEC-24 client certificates that cannot work, against an enforcing devcluster', () => {
  let cluster: DevCluster;
  beforeAll(async () => {
    cluster = await DevCluster.start({ auth: 'enforced' });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  function kubeconfigWith(dir: string, user: Record<string, unknown>): string {
    const config = YAML.parse(cluster.kubeconfig()) as { users: { name: string; user: unknown }[] };
    config.users[0]!.user = user;
    const file = path.join(dir, 'config');
    fs.writeFileSync(file, YAML.stringify(config));
    return file;
  }

  async function failureWith(user: Record<string, unknown>): Promise<{ error: Error; file: string }> {
    const file = kubeconfigWith(tempDir(), user);
    const client = await connect({ kubeconfig: file });
    try {
      return { error: (await client.list(NAMESPACES).catch((e: unknown) => e)) as Error, file };
    } finally {
      await client.close();
    }
  }

  it('R-SEC-24 an expired client certificate names its expiry and the user, not a bare 401', async () => {
    const notAfter = new Date(Math.floor(Date.now() / 1000) * 1000 - 3_600_000);
    const pair = await cluster.auth.issueClientCert({
      username: 'cert-user',
      groups: ['system:masters'],
      notBefore: new Date(notAfter.getTime() - 3_600_000),
      notAfter,
    });
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'tls.crt'), pair.certPem);
    fs.writeFileSync(path.join(dir, 'tls.key'), pair.keyPem);
    const { error, file } = await failureWith({ 'client-certificate': path.join(dir, 'tls.crt'), 'client-key': path.join(dir, 'tls.key') });
    expect(error).toBeInstanceOf(errors.LoginError);
    expect(error.message).toBe(
      `The client certificate of user "devcluster-admin" of ${file} (certificatePath ${dir}/tls.crt, privateKeyPath ${dir}/tls.key) ` +
        `expired on ${notAfter.toISOString()}.`,
    );
  });

  it('R-SEC-24 a certificate with the key of another is one line naming both fields, no OpenSSL error', async () => {
    const pair = await cluster.auth.issueClientCert({ username: 'cert-user', groups: ['system:masters'] });
    const other = await cluster.auth.issueClientCert({ username: 'other-user', groups: ['system:masters'] });
    const { error, file } = await failureWith({
      'client-certificate-data': Buffer.from(pair.certPem).toString('base64'),
      'client-key-data': Buffer.from(other.keyPem).toString('base64'),
    });
    expect(error).toBeInstanceOf(errors.LoginError);
    expect(error.message).toBe(
      `The client certificate of user "devcluster-admin" of ${file} (certificateData, privateKeyData) ` +
        'does not match its private key (the key belongs to another certificate).',
    );
    expect(cluster.requests.all.filter((r) => r.user === 'cert-user' || r.user === 'other-user')).toEqual([]);
  });
});
