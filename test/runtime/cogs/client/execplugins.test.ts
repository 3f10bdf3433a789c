/**
 * Exec credential plugins: the request they get, the credentials they give, caching until expiry,
 * and failures — with a scripted process runner on a virtual clock, and with a real executable.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import * as certs from '../../../../devcluster/auth/certs.js';
import { VirtualClock } from '../../../../runtime/cogs/aio/clocks.js';
import * as errors from '../../../../runtime/cogs/client/errors.js';
import * as execplugins from '../../../../runtime/cogs/client/execplugins.js';
import type * as kubeconfigs from '../../../../runtime/cogs/client/kubeconfigs.js';
import * as settings from '../../../../runtime/cogs/configs/settings.js';
import { eventually } from '../../../support/waiting.js';
import { tempDir } from './helpers.js';

const V1 = 'client.authentication.k8s.io/v1';
const V1BETA1 = 'client.authentication.k8s.io/v1beta1';
const T0 = Date.UTC(2030, 0, 1);

const USER = { name: 'me', source: '/home/me/.kube/config' };
const CLUSTER: kubeconfigs.KubeconfigCluster = { name: 'c', source: USER.source, server: 'https://c.example:6443' };

function execConfig(overrides: Partial<kubeconfigs.ExecConfig> = {}): kubeconfigs.ExecConfig {
  return { apiVersion: V1, command: 'get-token', args: ['--for', 'c'], env: [], provideClusterInfo: false, interactiveMode: 'Never', ...overrides };
}

interface Call {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
}

/** A runner that records calls and answers from a script of results (the last one repeats). */
function scripted(...results: Array<execplugins.ProcessResult | Error>): { run: execplugins.ProcessRunner; calls: Call[] } {
  const calls: Call[] = [];
  const run: execplugins.ProcessRunner = async (command, args, options) => {
    const result = results[Math.min(calls.length, results.length - 1)]!;
    calls.push({ command, args, env: options.env });
    if (result instanceof Error) throw result;
    return result;
  };
  return { run, calls };
}

/** A real client certificate and key (the checks of R-SEC-24 look into them), and another key. */
let PAIR: certs.KeyPairPem;
let OTHER: certs.KeyPairPem;
let EXPIRED: certs.KeyPairPem;
const EXPIRY = new Date(Date.UTC(2024, 5, 30, 12, 0, 0));
beforeAll(async () => {
  const ca = await certs.createCertificateAuthority();
  PAIR = await certs.issueClientCertificate(ca, { username: 'me' });
  OTHER = await certs.issueClientCertificate(ca, { username: 'other' });
  EXPIRED = await certs.issueClientCertificate(ca, { username: 'me', notBefore: new Date(Date.UTC(2024, 0, 1)), notAfter: EXPIRY });
});

function credential(status: Record<string, unknown>, apiVersion = V1): execplugins.ProcessResult {
  return { exitCode: 0, stdout: JSON.stringify({ apiVersion, kind: 'ExecCredential', status }), stderr: '' };
}

describe('the ExecCredential request', () => {
  it('runs the command with its args and env over the base environment, and KUBERNETES_EXEC_INFO without cluster info', async () => {
    const { run, calls } = scripted(credential({ token: 'abc' }));
    const exec = new execplugins.ExecCredentials(
      execConfig({
        env: [
          { name: 'REGION', value: 'eu' },
          { name: 'SHARED', value: 'mine' },
        ],
      }),
      USER,
      CLUSTER,
      {
        run,
        env: { PATH: '/bin', SHARED: 'base' },
      },
    );
    expect(await exec.authorization()).toBe('Bearer abc');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.command).toBe('get-token');
    expect(calls[0]!.args).toEqual(['--for', 'c']);
    expect(calls[0]!.env).toMatchObject({ PATH: '/bin', REGION: 'eu', SHARED: 'mine' });
    expect(JSON.parse(calls[0]!.env['KUBERNETES_EXEC_INFO']!)).toEqual({ apiVersion: V1, kind: 'ExecCredential', spec: { interactive: false } });
  });

  it('passes the cluster when provideClusterInfo is set (a CA file as Base64 data)', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'ca.pem'), 'PEM');
    const cluster: kubeconfigs.KubeconfigCluster = {
      ...CLUSTER,
      certificateAuthority: path.join(dir, 'ca.pem'),
      tlsServerName: 'api',
      proxyUrl: 'http://proxy:3128',
      execExtension: { audience: 'k8s' },
    };
    const { run, calls } = scripted(credential({ token: 'abc' }, V1BETA1));
    await new execplugins.ExecCredentials(execConfig({ apiVersion: V1BETA1, provideClusterInfo: true }), USER, cluster, { run }).authorization();
    expect(JSON.parse(calls[0]!.env['KUBERNETES_EXEC_INFO']!)).toEqual({
      apiVersion: V1BETA1,
      kind: 'ExecCredential',
      spec: {
        interactive: false,
        cluster: {
          server: 'https://c.example:6443',
          'tls-server-name': 'api',
          'certificate-authority-data': Buffer.from('PEM').toString('base64'),
          'proxy-url': 'http://proxy:3128',
          config: { audience: 'k8s' },
        },
      },
    });
  });
});

describe('the credentials and their caching', () => {
  it('a token is cached until its expirationTimestamp, then the plugin runs again', async () => {
    const clock = new VirtualClock({ start: T0 });
    const { run, calls } = scripted(credential({ token: 'one', expirationTimestamp: new Date(T0 + 60_000).toISOString() }), credential({ token: 'two' }));
    const exec = new execplugins.ExecCredentials(execConfig(), USER, CLUSTER, { run, clock });
    expect(await exec.authorization()).toBe('Bearer one');
    await clock.advanceTo(T0 + 59_999);
    expect(await exec.authorization()).toBe('Bearer one');
    expect(calls).toHaveLength(1);
    await clock.advanceTo(T0 + 60_000);
    expect(await exec.authorization()).toBe('Bearer two');
    expect(calls).toHaveLength(2);
  });

  it('without an expiry, the credentials are kept for the life of the login; a new login runs the plugin again', async () => {
    const clock = new VirtualClock({ start: T0 });
    const { run, calls } = scripted(credential({ token: 'forever' }));
    const exec = new execplugins.ExecCredentials(execConfig(), USER, CLUSTER, { run, clock });
    await exec.authorization();
    await clock.advanceTo(T0 + 365 * 24 * 3600_000);
    expect(await exec.authorization()).toBe('Bearer forever');
    expect(calls).toHaveLength(1);
    await new execplugins.ExecCredentials(execConfig(), USER, CLUSTER, { run, clock }).authorization();
    expect(calls).toHaveLength(2);
  });

  it('concurrent requests share one run of the plugin', async () => {
    let release: (result: execplugins.ProcessResult) => void = () => undefined;
    let runs = 0;
    const run: execplugins.ProcessRunner = () => {
      runs += 1;
      return new Promise((resolve) => {
        release = resolve;
      });
    };
    const exec = new execplugins.ExecCredentials(execConfig(), USER, CLUSTER, { run });
    const both = Promise.all([exec.authorization(), exec.clientCertificate()]);
    await Promise.resolve();
    release(credential({ token: 't', clientCertificateData: PAIR.certPem, clientKeyData: PAIR.keyPem }));
    expect(await both).toEqual(['Bearer t', { certificateData: PAIR.certPem, privateKeyData: PAIR.keyPem }]);
    expect(runs).toBe(1);
  });

  it('a client certificate without a token gives no Authorization header', async () => {
    const data = { clientCertificateData: Buffer.from(PAIR.certPem).toString('base64'), clientKeyData: Buffer.from(PAIR.keyPem).toString('base64') };
    const { run } = scripted(credential(data));
    const exec = new execplugins.ExecCredentials(execConfig(), USER, CLUSTER, { run });
    expect(await exec.authorization()).toBeUndefined();
    expect(await exec.clientCertificate()).toEqual({ certificateData: data.clientCertificateData, privateKeyData: data.clientKeyData });
  });
});

describe('failures are LoginErrors naming the plugin', () => {
  const notFound = Object.assign(new Error('spawn get-token ENOENT'), { code: 'ENOENT' });
  const cases: Array<[string, Partial<kubeconfigs.ExecConfig>, execplugins.ProcessResult | Error, string]> = [
    [
      'a non-zero exit code with the first line of stderr',
      {},
      { exitCode: 3, stdout: '', stderr: 'error: token expired\n\nrun `login` again\n3\n4\n5\n6\n' },
      'The exec plugin "get-token" of user "me" (/home/me/.kube/config) exited with code 3: error: token expired (and 5 more lines of stderr)',
    ],
    [
      'a kill by a signal',
      {},
      { exitCode: null, signal: 'SIGKILL', stdout: '', stderr: '' },
      'The exec plugin "get-token" of user "me" (/home/me/.kube/config) was killed by SIGKILL (no stderr).',
    ],
    [
      'a command that does not exist, with the install hint',
      { installHint: 'Install get-token:\n  brew install get-token' },
      notFound,
      'The exec plugin "get-token" of user "me" (/home/me/.kube/config) failed: the command was not found. Install get-token: brew install get-token',
    ],
    [
      'output that is not JSON',
      {},
      { exitCode: 0, stdout: 'Please log in.', stderr: '' },
      'The exec plugin "get-token" of user "me" (/home/me/.kube/config) printed invalid ExecCredential JSON (14 bytes).',
    ],
    [
      'another apiVersion than requested',
      {},
      credential({ token: 't' }, V1BETA1),
      `The exec plugin "get-token" of user "me" (/home/me/.kube/config) printed an ExecCredential of apiVersion "${V1BETA1}", not the requested ${V1}.`,
    ],
    [
      'neither a token nor a certificate',
      {},
      credential({}),
      'The exec plugin "get-token" of user "me" (/home/me/.kube/config) printed an ExecCredential with neither a token nor a client certificate.',
    ],
    [
      'a certificate without its key',
      {},
      credential({ clientCertificateData: 'CERT' }),
      'The exec plugin "get-token" of user "me" (/home/me/.kube/config) printed an ExecCredential with only one of clientCertificateData and clientKeyData.',
    ],
    [
      'an invalid expiry',
      {},
      credential({ token: 't', expirationTimestamp: 'soon' }),
      'The exec plugin "get-token" of user "me" (/home/me/.kube/config) printed an invalid expirationTimestamp "soon".',
    ],
  ];
  it.each(cases)('%s', async (_title, overrides, result, message) => {
    const { run } = scripted(result);
    const exec = new execplugins.ExecCredentials(execConfig(overrides), USER, CLUSTER, { run });
    const error = await exec.authorization().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errors.LoginError);
    expect((error as Error).message).toBe(message);
  });

  it('a failed run is not cached: the next request runs the plugin again', async () => {
    const { run, calls } = scripted({ exitCode: 1, stdout: '', stderr: 'offline' }, credential({ token: 'back' }));
    const exec = new execplugins.ExecCredentials(execConfig(), USER, CLUSTER, { run });
    await expect(exec.authorization()).rejects.toThrow('exited with code 1: offline');
    expect(await exec.authorization()).toBe('Bearer back');
    expect(calls).toHaveLength(2);
  });

  it('a plugin that insists on a terminal is refused at login', () => {
    expect(() => new execplugins.ExecCredentials(execConfig({ interactiveMode: 'Always' }), USER, CLUSTER)).toThrow(
      new errors.LoginError(
        'The exec plugin "get-token" of user "me" (/home/me/.kube/config) needs a terminal (interactiveMode: Always), which an operator does not have.',
      ),
    );
  });
});

describe('a real executable', () => {
  /** Writes an executable node script printing an ExecCredential built from its environment. */
  function writePlugin(dir: string): string {
    const file = path.join(dir, 'plugin.mjs');
    fs.writeFileSync(
      file,
      [
        `#!${process.execPath}`,
        'const request = JSON.parse(process.env.KUBERNETES_EXEC_INFO);',
        "if (process.argv[2] === '--fail') { console.error('no session for ' + process.env.PROFILE); process.exit(7); }",
        'const token = [process.argv[2], process.env.PROFILE, request.spec.interactive, request.spec.cluster?.server].join(":");',
        "console.log(JSON.stringify({ apiVersion: request.apiVersion, kind: 'ExecCredential', status: { token } }));",
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    return file;
  }

  it('prints an ExecCredential read through the real process runner', async () => {
    const command = writePlugin(tempDir());
    const exec = new execplugins.ExecCredentials(
      execConfig({ command, args: ['arg'], env: [{ name: 'PROFILE', value: 'dev' }], provideClusterInfo: true }),
      USER,
      CLUSTER,
    );
    expect(await exec.authorization()).toBe('Bearer arg:dev:false:https://c.example:6443');
  });

  it('fails with its exit code and stderr', async () => {
    const command = writePlugin(tempDir());
    const exec = new execplugins.ExecCredentials(execConfig({ command, args: ['--fail'], env: [{ name: 'PROFILE', value: 'dev' }] }), USER, CLUSTER);
    await expect(exec.authorization()).rejects.toThrow(
      `The exec plugin ${JSON.stringify(command)} of user "me" (/home/me/.kube/config) exited with code 7: no session for dev`,
    );
  });

  it('a missing command names the install hint', async () => {
    const command = path.join(tempDir(), 'absent');
    const exec = new execplugins.ExecCredentials(execConfig({ command, installHint: 'See https://example.com/install.' }), USER, CLUSTER);
    await expect(exec.authorization()).rejects.toThrow(/failed: the command was not found\. See https:\/\/example\.com\/install\.$/);
  });
});

describe('a hanging plugin (R-AUTH-7)', () => {
  /** Whether a process exists (a zombie or a live one). */
  function alive(pid: number): boolean {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }

  it('R-AUTH-7 a plugin that never finishes is killed with its children after the timeout, and the login fails naming the command and the timeout', async () => {
    const dir = tempDir();
    const command = path.join(dir, 'hanging.sh');
    // A shell script that starts a child and waits for it forever: both must die.
    fs.writeFileSync(command, `#!/bin/sh\necho $$ > "${dir}/plugin.pid"\nsleep 1000 &\necho $! > "${dir}/child.pid"\nwait\n`, { mode: 0o755 });
    const exec = new execplugins.ExecCredentials(execConfig({ command, args: [] }), USER, CLUSTER, { timeout: 1 });
    // A deadline of the test's own, so that a plugin never ended fails here rather than at the suite's timeout.
    const failure = await Promise.race([
      exec.authorization().catch((error: unknown) => error),
      new Promise((resolve) => setTimeout(() => resolve(new Error('the plugin still runs after 10 s')), 10_000).unref()),
    ]);
    expect(failure).toBeInstanceOf(errors.ExecPluginTimeoutError);
    expect(failure).toBeInstanceOf(errors.LoginError); // a login failure like any other plugin failure
    expect(failure).toMatchObject({ code: 'ExecPluginTimeout', command, timeout: 1 });
    expect((failure as Error).message).toBe(
      `The exec plugin ${JSON.stringify(command)} of user "me" (/home/me/.kube/config) did not finish within 1 seconds and was killed (settings.networking.execPluginTimeout).`,
    );
    const pids = ['plugin.pid', 'child.pid'].map((file) => Number(fs.readFileSync(path.join(dir, file), 'utf8')));
    await eventually(() => pids.every((pid) => !alive(pid)), 'the plugin and its child to be gone');
  });

  it('R-AUTH-7 the runner is given the timeout in milliseconds (60 s by default), or none when it is null', async () => {
    const seen: (number | undefined)[] = [];
    const run: execplugins.ProcessRunner = async (_command, _args, options) => {
      seen.push(options.timeoutMs);
      return credential({ token: 't' });
    };
    await new execplugins.ExecCredentials(execConfig(), USER, CLUSTER, { run }).authorization();
    await new execplugins.ExecCredentials(execConfig(), USER, CLUSTER, { run, timeout: 0.5 }).authorization();
    await new execplugins.ExecCredentials(execConfig(), USER, CLUSTER, { run, timeout: null }).authorization();
    expect(seen).toEqual([60_000, 500, undefined]);
    expect(new settings.OperatorSettings().networking.execPluginTimeout).toBe(execplugins.DEFAULT_EXEC_TIMEOUT);
  });
});

describe('what a plugin prints stays out of errors and memory (R-SEC-23)', () => {
  const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXBheWxvYWQ.c2lnbmF0dXJl';

  it('R-SEC-23 trailing output after the ExecCredential is described by its position, never quoted', async () => {
    const json = JSON.stringify({ apiVersion: V1, kind: 'ExecCredential', status: { token: TOKEN } });
    const { run } = scripted({ exitCode: 0, stdout: `${json}\n${TOKEN}\n`, stderr: '' });
    const error = (await new execplugins.ExecCredentials(execConfig(), USER, CLUSTER, { run }).authorization().catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(errors.LoginError);
    expect(error.message).toBe(
      `The exec plugin "get-token" of user "me" (/home/me/.kube/config) printed invalid ExecCredential JSON at byte ${json.length + 1} (${json.length + TOKEN.length + 2} bytes).`,
    );
    for (const part of [TOKEN, ...TOKEN.split('.')]) expect(`${error.message} ${String(error.cause ?? '')}`).not.toContain(part);
  });

  it('R-SEC-23 of stderr, one line: the first, cut, with control characters escaped and credential-like words redacted', async () => {
    const failure = async (stderr: string): Promise<string> => {
      const { run } = scripted({ exitCode: 1, stdout: '', stderr });
      return ((await new execplugins.ExecCredentials(execConfig(), USER, CLUSTER, { run }).authorization().catch((e: unknown) => e)) as Error).message;
    };
    const title = 'The exec plugin "get-token" of user "me" (/home/me/.kube/config) exited with code 1: ';
    expect(await failure(`\x1b[31mfailed\x1b[0m\r\ntoken=${TOKEN}\n`)).toBe(`${title}\\u001b[31mfailed\\u001b[0m (and 1 more line of stderr)`);
    expect(await failure(`error: the token ${TOKEN} was rejected; see /home/me/.config/get-token/settings.yaml\n`)).toBe(
      `${title}error: the token <${TOKEN.length} characters redacted> was rejected; see /home/me/.config/get-token/settings.yaml`,
    );
    const prose = 'no session; please log in again. '.repeat(20);
    expect(await failure(prose)).toBe(`${title}${prose.trim().slice(0, execplugins.STDERR_SUMMARY)}…`);
  });

  it('R-SEC-23 a real plugin printing without end is killed at the output limit and the login fails', async () => {
    const dir = tempDir();
    const command = path.join(dir, 'chatty.sh');
    // Prints forever (and its child with it): only the limit ends it.
    fs.writeFileSync(command, `#!/bin/sh\necho $$ > "${dir}/plugin.pid"\nyes ${TOKEN}\n`, { mode: 0o755 });
    const exec = new execplugins.ExecCredentials(execConfig({ command, args: [] }), USER, CLUSTER, { maxOutput: 64 * 1024, timeout: 30 });
    const failure = await Promise.race([
      exec.authorization().catch((error: unknown) => error),
      new Promise((resolve) => setTimeout(() => resolve(new Error('the plugin still runs after 10 s')), 10_000).unref()),
    ]);
    expect(failure).toBeInstanceOf(errors.LoginError);
    expect((failure as Error).message).toBe(
      `The exec plugin ${JSON.stringify(command)} of user "me" (/home/me/.kube/config) printed more than 65536 bytes and was killed; an ExecCredential is far smaller.`,
    );
    const pid = Number(fs.readFileSync(path.join(dir, 'plugin.pid'), 'utf8'));
    await eventually(() => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    }, 'the plugin to be gone');
  });

  it('R-SEC-23 the runner is given the output limit (1 MiB by default)', async () => {
    const seen: (number | undefined)[] = [];
    const run: execplugins.ProcessRunner = async (_command, _args, options) => {
      seen.push(options.maxOutput);
      return credential({ token: 't' });
    };
    await new execplugins.ExecCredentials(execConfig(), USER, CLUSTER, { run }).authorization();
    await new execplugins.ExecCredentials(execConfig(), USER, CLUSTER, { run, maxOutput: 4096 }).authorization();
    expect(seen).toEqual([1024 * 1024, 4096]);
    // A runner that ignores the limit is held to it all the same.
    await expect(new execplugins.ExecCredentials(execConfig(), USER, CLUSTER, { run, maxOutput: 10 }).authorization()).rejects.toThrow(
      'printed more than 10 bytes and was killed',
    );
  });
});

describe('a client certificate that cannot work fails the login in words (R-SEC-24)', () => {
  const TITLE = 'The exec plugin "get-token" of user "me" (/home/me/.kube/config)';
  const failure = async (status: Record<string, unknown>): Promise<Error> => {
    const { run } = scripted(credential(status));
    return (await new execplugins.ExecCredentials(execConfig(), USER, CLUSTER, { run }).clientCertificate().catch((e: unknown) => e)) as Error;
  };

  it('R-SEC-24 a key of another certificate', async () => {
    const error = await failure({ clientCertificateData: PAIR.certPem, clientKeyData: OTHER.keyPem });
    expect(error).toBeInstanceOf(errors.LoginError);
    expect(error.message).toBe(`${TITLE} printed a client certificate that does not match its private key (the key belongs to another certificate).`);
  });

  it('R-SEC-24 an expired certificate names its expiry', async () => {
    const error = await failure({ clientCertificateData: EXPIRED.certPem, clientKeyData: EXPIRED.keyPem });
    expect(error.message).toBe(`${TITLE} printed a client certificate that expired on 2024-06-30T12:00:00.000Z.`);
  });

  it('R-SEC-24 material that is no certificate or no key, without quoting it', async () => {
    expect((await failure({ clientCertificateData: 'CERT-SECRET', clientKeyData: PAIR.keyPem })).message).toBe(
      `${TITLE} printed a client certificate that is not a PEM certificate.`,
    );
    expect((await failure({ clientCertificateData: PAIR.certPem, clientKeyData: 'KEY-SECRET' })).message).toBe(
      `${TITLE} printed a client certificate that comes with a key that is not a PEM private key.`,
    );
  });
});
