/**
 * R-CLIENT-503: a client-node `KubeConfig`'s current context as the runtime's credentials — every
 * field client-node keeps, converted as the kubeconfig login converts a file's entry, and what the
 * runtime cannot honour refused by name. The logins against a devcluster are in
 * `test/runtime/kits/clientnode/live.test.ts`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import * as clientnodeconfigs from '../../../../runtime/cogs/client/clientnodeconfigs.js';
import * as connections from '../../../../runtime/cogs/client/connections.js';
import { tempDir } from '../../../support/cluster.js';

function configOf(user: Record<string, unknown>, cluster: Record<string, unknown> = {}, namespace?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://10.0.0.1:6443', skipTLSVerify: false, ...cluster }],
    users: [{ name: 'u', ...user }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u', ...(namespace ? { namespace } : {}) }],
    currentContext: 'ctx',
  });
  return kc;
}

describe('R-CLIENT-503 a client-node KubeConfig as credentials', () => {
  it('R-CLIENT-503 server, CA data, token, insecure, tls-server-name, proxy and namespace', () => {
    const kc = configOf({ token: 't0ken' }, { caData: 'Q0E=', skipTLSVerify: true, tlsServerName: 'kubernetes', proxyUrl: 'http://proxy:3128' }, 'team');
    const info = clientnodeconfigs.connectionFromClientNode(kc);
    expect(info).toMatchObject({
      server: 'https://10.0.0.1:6443',
      caData: 'Q0E=',
      insecure: true,
      tlsServerName: 'kubernetes',
      proxyUrl: 'http://proxy:3128',
      token: 't0ken',
      defaultNamespace: 'team',
      principal: 'user "u" of the @kubernetes/client-node KubeConfig',
    });
  });

  it('R-CLIENT-503 client certificate files and basic auth', () => {
    const dir = tempDir('kopf-clientnode-');
    for (const file of ['ca.crt', 'tls.crt', 'tls.key']) fs.writeFileSync(path.join(dir, file), 'PEM');
    const kc = configOf(
      { certFile: path.join(dir, 'tls.crt'), keyFile: path.join(dir, 'tls.key'), username: 'admin', password: 'secret' },
      { caFile: path.join(dir, 'ca.crt') },
    );
    expect(clientnodeconfigs.connectionFromClientNode(kc)).toMatchObject({
      caPath: path.join(dir, 'ca.crt'),
      certificatePath: path.join(dir, 'tls.crt'),
      privateKeyPath: path.join(dir, 'tls.key'),
      username: 'admin',
      password: 'secret',
    });
  });

  it("R-CLIENT-503 an exec plugin becomes the runtime's exec credentials (a dynamic Authorization)", () => {
    const kc = configOf({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'get-token', args: ['--x'] } });
    const info = clientnodeconfigs.connectionFromClientNode(kc);
    expect(typeof info.authorization).toBe('function');
    expect(info.principal).toBe('user "u" of the @kubernetes/client-node KubeConfig (exec plugin "get-token")');
  });

  it("R-CLIENT-503 loadFromCluster()'s user (auth-provider tokenFile) becomes a tokenFile, re-read at every login", () => {
    const dir = tempDir('kopf-clientnode-');
    const tokenFile = path.join(dir, 'token');
    fs.writeFileSync(tokenFile, 'first\n');
    const kc = configOf({ authProvider: { name: 'tokenFile', config: { tokenFile } } });
    const [login] = connections.builtinLogins({ connection: kc });
    expect(login!.fn()).toMatchObject({ token: 'first' });
    fs.writeFileSync(tokenFile, 'second\n');
    expect(login!.fn()).toMatchObject({ token: 'second' });
  });

  it('R-CLIENT-503 a KubeConfig with no current context, or naming an unknown user, fails as a kubeconfig would', () => {
    const empty = new KubeConfig();
    expect(() => clientnodeconfigs.connectionFromClientNode(empty)).toThrow('the @kubernetes/client-node KubeConfig has no current context.');
    const kc = configOf({ token: 'x' });
    kc.contexts = [{ name: 'ctx', cluster: 'c', user: 'ghost' }];
    expect(() => clientnodeconfigs.connectionFromClientNode(kc)).toThrow('names an unknown user "ghost"');
  });

  it('R-CLIENT-503 a ConnectionInfo is not taken for a KubeConfig', () => {
    expect(clientnodeconfigs.isClientNodeKubeConfig({ server: 'https://x', token: 't' })).toBe(false);
    expect(clientnodeconfigs.isClientNodeKubeConfig(new KubeConfig())).toBe(true);
  });
});
