/**
 * The kubeconfig reader: kubectl's file list, merging and path rules, clear errors for bad input,
 * and an oracle table comparing what it resolves with what @kubernetes/client-node's `KubeConfig`
 * resolves for the same files.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import * as YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import type * as credentials from '../../../../runtime/cogs/client/credentials.js';
import * as errors from '../../../../runtime/cogs/client/errors.js';
import * as kubeconfigs from '../../../../runtime/cogs/client/kubeconfigs.js';
import * as logins from '../../../../runtime/cogs/client/logins.js';
import { tempDir } from './helpers.js';

type Doc = Record<string, unknown>;

const cluster = (name: string, fields: Doc): Doc => ({ name, cluster: fields });
const user = (name: string, fields: Doc): Doc => ({ name, user: fields });
const context = (name: string, fields: Doc): Doc => ({ name, context: fields });
const config = (doc: { clusters?: Doc[]; users?: Doc[]; contexts?: Doc[]; current?: string }): Doc => ({
  apiVersion: 'v1',
  kind: 'Config',
  clusters: doc.clusters ?? [],
  users: doc.users ?? [],
  contexts: doc.contexts ?? [],
  ...(doc.current !== undefined ? { 'current-context': doc.current } : {}),
});

/** Writes files (YAML for objects, text otherwise) under a fresh folder; returns their paths by name. */
function writeAll(files: Record<string, Doc | string>): { dir: string; at: (name: string) => string } {
  const dir = tempDir();
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, typeof content === 'string' ? content : YAML.stringify(content));
  }
  return { dir, at: (name) => path.join(dir, name) };
}

const CA = Buffer.from('-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n').toString('base64');

describe('kubeconfig paths (R-AUTH-2)', () => {
  it('R-AUTH-2 KUBECONFIG is a path list split by the OS separator, empty entries ignored', () => {
    expect(kubeconfigs.kubeconfigPaths({ KUBECONFIG: ['/a', '', '/b', ''].join(path.delimiter) })).toEqual(['/a', '/b']);
  });

  it('R-AUTH-2 without KUBECONFIG, ~/.kube/config of $HOME', () => {
    expect(kubeconfigs.kubeconfigPaths({ HOME: '/home/someone' })).toEqual([path.join('/home/someone', '.kube', 'config')]);
    expect(kubeconfigs.kubeconfigPaths({ HOME: '/home/someone', KUBECONFIG: '' })).toEqual([path.join('/home/someone', '.kube', 'config')]);
  });

  it('missing files are skipped; nothing at all is null', () => {
    const { at } = writeAll({ real: config({ clusters: [cluster('c', { server: 'https://c' })], contexts: [context('x', { cluster: 'c' })], current: 'x' }) });
    expect(kubeconfigs.loadKubeconfig([at('absent'), at('real')])?.files).toEqual([at('real')]);
    expect(kubeconfigs.loadKubeconfig([at('absent')])).toBeNull();
  });
});

describe('merging and paths (kubectl rules)', () => {
  it('the first file defining a name wins; the current context is the first non-empty one', () => {
    const { at } = writeAll({
      one: config({ clusters: [cluster('c', { server: 'https://first' })], users: [user('u', { token: 'first' })] }),
      two: config({
        clusters: [cluster('c', { server: 'https://second' }), cluster('d', { server: 'https://d' })],
        users: [user('u', { token: 'second' })],
        contexts: [context('x', { cluster: 'c', user: 'u', namespace: 'ns' })],
        current: 'x',
      }),
      three: config({ contexts: [context('x', { cluster: 'd' })], current: 'other' }),
    });
    const merged = kubeconfigs.loadKubeconfig([at('one'), at('two'), at('three')])!;
    expect(merged.currentContext).toBe('x');
    expect(merged.clusters.get('c')).toMatchObject({ server: 'https://first', source: at('one') });
    expect(merged.contexts.get('x')).toMatchObject({ cluster: 'c', source: at('two') });
    expect([...merged.clusters.keys()]).toEqual(['c', 'd']);
    expect(logins.loginWithKubeconfig({ paths: [at('one'), at('two'), at('three')] })).toEqual({
      server: 'https://first',
      token: 'first',
      defaultNamespace: 'ns',
      priority: logins.PRIORITY_OF_KUBECONFIG,
      principal: `user "u" of ${at('one')}`,
    });
  });

  it('relative paths are relative to the folder of the file that defined the entry', () => {
    const { dir, at } = writeAll({
      'a/config': config({ clusters: [cluster('c', { server: 'https://c', 'certificate-authority': 'certs/ca.pem' })], current: 'x' }),
      'a/certs/ca.pem': 'ca',
      'b/config': config({
        users: [user('u', { 'client-certificate': 'tls.crt', 'client-key': '../keys/tls.key', tokenFile: 'token' })],
        contexts: [context('x', { cluster: 'c', user: 'u' })],
      }),
      'b/tls.crt': 'crt',
      'keys/tls.key': 'key',
      'b/token': ' from-file \n',
    });
    expect(logins.loginWithKubeconfig({ paths: [at('a/config'), at('b/config')] })).toEqual({
      server: 'https://c',
      priority: 10,
      caPath: path.join(dir, 'a/certs/ca.pem'),
      certificatePath: path.join(dir, 'b/tls.crt'),
      privateKeyPath: path.join(dir, 'keys/tls.key'),
      token: 'from-file',
      principal: `user "u" of ${at('b/config')}`,
    });
  });

  it('an exec command with a path separator is relative to the kubeconfig; a bare name is left to PATH', () => {
    const exec = (command: string): Doc => ({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command, interactiveMode: 'Never' } });
    const { dir, at } = writeAll({
      config: config({ clusters: [cluster('c', { server: 'https://c' })], users: [user('rel', exec('./bin/plugin')), user('bare', exec('aws'))] }),
    });
    const users = kubeconfigs.loadKubeconfig([at('config')])!.users;
    expect(users.get('rel')?.exec?.command).toBe(path.join(dir, 'bin/plugin'));
    expect(users.get('bare')?.exec?.command).toBe('aws');
  });

  it('a token wins over a tokenFile (which is then not read)', () => {
    const { at } = writeAll({
      config: config({
        clusters: [cluster('c', { server: 'https://c' })],
        users: [user('u', { token: 'inline', tokenFile: 'absent' })],
        contexts: [context('x', { cluster: 'c', user: 'u' })],
        current: 'x',
      }),
    });
    expect(logins.loginWithKubeconfig({ paths: [at('config')] })?.token).toBe('inline');
  });

  it('R-AUTH-2 a given context is used instead of the current one', () => {
    const { at } = writeAll({
      config: config({
        clusters: [cluster('c', { server: 'https://c' }), cluster('d', { server: 'https://d' })],
        contexts: [context('x', { cluster: 'c' }), context('y', { cluster: 'd', namespace: 'why' })],
        current: 'x',
      }),
    });
    expect(logins.loginWithKubeconfig({ paths: [at('config')], context: 'y' })).toEqual({
      server: 'https://d',
      defaultNamespace: 'why',
      priority: 10,
      principal: 'no user (context "y")',
    });
  });

  it('tls-server-name is carried to the connection info', () => {
    const { at } = writeAll({
      config: config({
        clusters: [cluster('c', { server: 'https://10.0.0.1', 'tls-server-name': 'api.internal' })],
        contexts: [context('x', { cluster: 'c' })],
        current: 'x',
      }),
    });
    expect(logins.loginWithKubeconfig({ paths: [at('config')] })?.tlsServerName).toBe('api.internal');
  });
});

describe('bad kubeconfigs are LoginErrors naming the file and the entry', () => {
  const good = (extra: { clusters?: Doc[]; users?: Doc[]; contexts?: Doc[] } = {}): Doc =>
    config({
      clusters: extra.clusters ?? [cluster('c', { server: 'https://c' })],
      users: extra.users ?? [user('u', { token: 't' })],
      contexts: extra.contexts ?? [context('x', { cluster: 'c', user: 'u' })],
      current: 'x',
    });
  const cases: Array<[string, Doc | string, RegExp]> = [
    ['a file that is not YAML', 'clusters: [unclosed\n', /config is not a valid YAML file: /],
    ['a YAML file that is not a kubeconfig', 'just some text\n', /config is not a kubeconfig .*: it is a string\./],
    ['another kind of object', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }, /config is not a kubeconfig .*: it is kind "Pod"\./],
    ['clusters that are not a list', { clusters: { c: {} } }, /config: "clusters" must be a list/],
    ['an entry without a name', { clusters: [{ cluster: { server: 'https://c' } }] }, /config: clusters\[0\] has no name\./],
    [
      'a field of the wrong type',
      good({ clusters: [cluster('c', { server: 'https://c', 'insecure-skip-tls-verify': 'yes please' })] }),
      /config: cluster "c": "insecure-skip-tls-verify" must be true or false/,
    ],
    [
      'a context naming an unknown cluster',
      good({ contexts: [context('x', { cluster: 'nowhere', user: 'u' })] }),
      /config: context "x" names an unknown cluster "nowhere"/,
    ],
    [
      'a context naming an unknown user',
      good({ contexts: [context('x', { cluster: 'c', user: 'nobody' })] }),
      /config: context "x" names an unknown user "nobody"/,
    ],
    ['a cluster without a server', good({ clusters: [cluster('c', {})] }), /config: cluster "c" has no server\./],
    [
      'a missing certificate-authority file',
      good({ clusters: [cluster('c', { server: 'https://c', 'certificate-authority': 'ca.pem' })] }),
      /config: cluster "c": the certificate-authority file .*ca\.pem does not exist\./,
    ],
    [
      'a missing client-key file',
      good({ users: [user('u', { 'client-certificate-data': CA, 'client-key': 'k.pem' })] }),
      /config: user "u": the client-key file .*k\.pem does not exist\./,
    ],
    ['a missing tokenFile', good({ users: [user('u', { tokenFile: 'token' })] }), /config: user "u": the tokenFile file .*token does not exist\./],
    [
      'both a CA file and CA data',
      good({ clusters: [cluster('c', { server: 'https://c', 'certificate-authority': '/etc/hostname', 'certificate-authority-data': CA })] }),
      /cluster "c": both certificate-authority and certificate-authority-data are set/,
    ],
    [
      'impersonation',
      good({ users: [user('u', { token: 't', as: 'admin', 'as-groups': ['system:masters'] })] }),
      /user "u": impersonation \(as, as-groups\) is not supported/,
    ],
    [
      'an unsupported exec apiVersion',
      good({ users: [user('u', { exec: { apiVersion: 'client.authentication.k8s.io/v1alpha1', command: 'x' } })] }),
      /exec plugin "x" of user "u" .* has apiVersion "client.authentication.k8s.io\/v1alpha1"; supported: /,
    ],
    [
      'an exec plugin without a command',
      good({ users: [user('u', { exec: { apiVersion: 'client.authentication.k8s.io/v1' } })] }),
      /config: user "u".exec: the exec plugin has no "command"\./,
    ],
    [
      'an auth-provider without a token',
      good({ users: [user('u', { 'auth-provider': { name: 'custom', config: {} } })] }),
      /user "u": auth-provider "custom" has no access-token and is not supported/,
    ],
  ];
  it.each(cases)('%s', (_title, content, message) => {
    const { at } = writeAll({ config: content });
    let thrown: unknown;
    try {
      logins.loginWithKubeconfig({ paths: [at('config')] });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(errors.LoginError);
    expect((thrown as Error).message).toMatch(message);
    expect((thrown as Error).message).toContain(at('config'));
    expect((thrown as Error).message).not.toContain('\n');
  });

  it('R-AUTH-2 a missing current context raises LoginError naming the files', () => {
    const { at } = writeAll({ config: config({ clusters: [cluster('c', { server: 'https://c' })], contexts: [context('x', { cluster: 'c' })] }) });
    expect(() => logins.loginWithKubeconfig({ paths: [at('config')] })).toThrow(
      new errors.LoginError(`The kubeconfig has no current context (${at('config')}).`),
    );
    expect(() => logins.loginWithKubeconfig({ paths: [at('config')], context: 'y' })).toThrow(`The kubeconfig's context "y" is not defined (${at('config')}).`);
  });

  it('an empty file is an empty kubeconfig (it has no current context)', () => {
    const { at } = writeAll({ config: '' });
    expect(kubeconfigs.loadKubeconfig([at('config')])).toMatchObject({ files: [at('config')], currentContext: undefined });
  });
});

/** What client-node's `KubeConfig` resolves for the current context, as connection info (or 'LoginError'). */
function oracle(paths: readonly string[]): credentials.ConnectionInfo | 'LoginError' {
  const loaded: k8s.KubeConfig[] = [];
  try {
    for (const file of paths.filter((p) => fs.existsSync(p))) {
      const kc = new k8s.KubeConfig();
      kc.loadFromFile(file);
      loaded.push(kc);
    }
  } catch {
    return 'LoginError';
  }
  const first = <T extends { name: string }>(lists: T[][]): T[] => {
    const seen = new Map<string, T>();
    for (const list of lists) for (const item of list) if (!seen.has(item.name)) seen.set(item.name, item);
    return [...seen.values()];
  };
  const merged = new k8s.KubeConfig();
  merged.loadFromOptions({
    clusters: first(loaded.map((c) => c.getClusters())),
    users: first(loaded.map((c) => c.getUsers())),
    contexts: first(loaded.map((c) => c.getContexts())),
    currentContext: loaded.map((c) => c.getCurrentContext()).find(Boolean),
  });
  const name = merged.getCurrentContext();
  const ctx = name ? merged.getContextObject(name) : null;
  const kcCluster = merged.getCurrentCluster();
  const kcUser = ctx?.user ? merged.getUser(ctx.user) : null;
  if (!ctx || !kcCluster || (ctx.user && !kcUser)) return 'LoginError';
  const info: Record<string, unknown> = { server: kcCluster.server, priority: logins.PRIORITY_OF_KUBECONFIG };
  if (kcCluster.caFile) info['caPath'] = kcCluster.caFile;
  else if (kcCluster.caData) info['caData'] = kcCluster.caData;
  if (kcCluster.skipTLSVerify) info['insecure'] = true;
  if (kcCluster.proxyUrl) info['proxyUrl'] = kcCluster.proxyUrl;
  if (kcCluster.tlsServerName) info['tlsServerName'] = kcCluster.tlsServerName;
  if (kcUser?.certFile) info['certificatePath'] = kcUser.certFile;
  else if (kcUser?.certData) info['certificateData'] = kcUser.certData;
  if (kcUser?.keyFile) info['privateKeyPath'] = kcUser.keyFile;
  else if (kcUser?.keyData) info['privateKeyData'] = kcUser.keyData;
  if (kcUser?.username) info['username'] = kcUser.username;
  if (kcUser?.password) info['password'] = kcUser.password;
  const accessToken = (kcUser?.authProvider as { config?: Record<string, string> } | undefined)?.config?.['access-token'];
  if (kcUser?.token) info['token'] = kcUser.token;
  else if (accessToken) info['token'] = accessToken;
  if (ctx.namespace) info['defaultNamespace'] = ctx.namespace;
  return info as unknown as credentials.ConnectionInfo;
}

/** What our reader resolves, without the function-valued fields and the port-specific `principal`. */
function ours(paths: readonly string[]): credentials.ConnectionInfo | 'LoginError' | null {
  try {
    const info = logins.loginWithKubeconfig({ paths });
    const kept = (key: string, value: unknown): boolean => typeof value !== 'function' && key !== 'principal';
    return info && (Object.fromEntries(Object.entries(info).filter(([key, value]) => kept(key, value))) as unknown as credentials.ConnectionInfo);
  } catch (error) {
    if (error instanceof errors.LoginError) return 'LoginError';
    throw error;
  }
}

describe('oracle: the same resolution as @kubernetes/client-node', () => {
  const base = { clusters: [cluster('c', { server: 'https://c.example:6443', 'certificate-authority-data': CA })], users: [user('u', { token: 'tok' })] };
  type Files = Record<string, Doc | string> | ((dir: string) => Record<string, Doc | string>);
  const table: Array<[string, Files, string[]]> = [
    [
      'one file: server, CA data, token, namespace',
      { config: config({ ...base, contexts: [context('x', { cluster: 'c', user: 'u', namespace: 'ns1' })], current: 'x' }) },
      ['config'],
    ],
    [
      'several files: the first definition of each name and the first current context win',
      {
        one: config({ clusters: [cluster('c', { server: 'https://one' })], users: [user('u', { token: 'one' })] }),
        two: config({ ...base, contexts: [context('x', { cluster: 'c', user: 'u' }), context('y', { cluster: 'c' })], current: 'x' }),
        three: config({ contexts: [context('x', { cluster: 'c', namespace: 'three' })], current: 'y' }),
      },
      ['missing', 'one', 'two', 'three'],
    ],
    [
      'the current context from a later file than the context it names',
      { one: config({ current: 'x' }), two: config({ ...base, contexts: [context('x', { cluster: 'c', user: 'u' })], current: 'other' }) },
      ['one', 'two'],
    ],
    [
      'relative certificate and key files, per defining file',
      {
        'a/config': config({ clusters: [cluster('c', { server: 'https://c', 'certificate-authority': 'ca.pem' })], current: 'x' }),
        'a/ca.pem': 'ca',
        'b/config': config({
          users: [user('u', { 'client-certificate': 'pki/tls.crt', 'client-key': 'pki/tls.key' })],
          contexts: [context('x', { cluster: 'c', user: 'u' })],
        }),
        'b/pki/tls.crt': 'crt',
        'b/pki/tls.key': 'key',
      },
      ['a/config', 'b/config'],
    ],
    [
      'absolute certificate files',
      (dir) => ({
        config: config({
          clusters: [cluster('c', { server: 'https://c', 'certificate-authority': path.join(dir, 'ca.pem') })],
          contexts: [context('x', { cluster: 'c' })],
          current: 'x',
        }),
        'ca.pem': 'ca',
      }),
      ['config'],
    ],
    [
      'certificate and key data',
      {
        config: config({
          ...base,
          users: [user('u', { 'client-certificate-data': CA, 'client-key-data': CA })],
          contexts: [context('x', { cluster: 'c', user: 'u' })],
          current: 'x',
        }),
      },
      ['config'],
    ],
    [
      'basic auth',
      {
        config: config({
          ...base,
          users: [user('u', { username: 'admin', password: 's3cret' })],
          contexts: [context('x', { cluster: 'c', user: 'u' })],
          current: 'x',
        }),
      },
      ['config'],
    ],
    [
      'insecure, a proxy and a TLS server name; a trailing slash of the server',
      {
        config: config({
          clusters: [
            cluster('c', { server: 'https://10.1.2.3/', 'insecure-skip-tls-verify': true, 'proxy-url': 'http://proxy:3128', 'tls-server-name': 'kubernetes' }),
          ],
          users: [user('u', { token: 'tok' })],
          contexts: [context('x', { cluster: 'c', user: 'u' })],
          current: 'x',
        }),
      },
      ['config'],
    ],
    ['a context without a user', { config: config({ ...base, contexts: [context('x', { cluster: 'c' })], current: 'x' }) }, ['config']],
    [
      'a static auth-provider access-token',
      {
        config: config({
          ...base,
          users: [user('u', { 'auth-provider': { name: 'custom', config: { 'access-token': 'from-provider' } } })],
          contexts: [context('x', { cluster: 'c', user: 'u' })],
          current: 'x',
        }),
      },
      ['config'],
    ],
    ['no current context', { config: config({ ...base, contexts: [context('x', { cluster: 'c', user: 'u' })] }) }, ['config']],
    ['a current context that is not defined', { config: config({ ...base, contexts: [context('x', { cluster: 'c', user: 'u' })], current: 'y' }) }, ['config']],
    ['an unknown cluster', { config: config({ ...base, contexts: [context('x', { cluster: 'd', user: 'u' })], current: 'x' }) }, ['config']],
    ['an unknown user', { config: config({ ...base, contexts: [context('x', { cluster: 'c', user: 'v' })], current: 'x' }) }, ['config']],
    ['a cluster without a server', { config: config({ clusters: [cluster('c', {})], contexts: [context('x', { cluster: 'c' })], current: 'x' }) }, ['config']],
  ];
  const outcomes: string[] = [];
  const write = (files: Files): ReturnType<typeof writeAll> => {
    const dir = tempDir();
    const content = typeof files === 'function' ? files(dir) : files;
    for (const [name, text] of Object.entries(content)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), typeof text === 'string' ? text : YAML.stringify(text));
    }
    return { dir, at: (name) => path.join(dir, name) };
  };

  it.each(table)('%s', (_title, files, order) => {
    const { at } = write(files);
    const paths = order.map(at);
    const expected = oracle(paths);
    outcomes.push(expected === 'LoginError' ? 'error' : 'info');
    expect(ours(paths)).toEqual(expected);
  });

  it('the table has both successes and LoginErrors (or it proves little)', () => {
    expect(new Set(outcomes)).toEqual(new Set(['error', 'info']));
  });
});
