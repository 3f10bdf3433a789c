/**
 * Kubeconfig documents for the devcluster: how any client — the runtime, kubectl, a Python Kopf
 * operator — finds and trusts it (D-GEN-1/2). One cluster, one user, one context, with the generated
 * CA embedded and either a bearer token or a client certificate.
 */
import * as YAML from 'yaml';

export interface KubeconfigInput {
  server: string;
  caPem?: string;
  token?: string;
  clientCertPem?: string;
  clientKeyPem?: string;
  name?: string;
  namespace?: string;
}

export interface KubeconfigObject {
  apiVersion: 'v1';
  kind: 'Config';
  clusters: { name: string; cluster: { server: string; 'certificate-authority-data'?: string; 'insecure-skip-tls-verify'?: boolean } }[];
  users: { name: string; user: { token?: string; 'client-certificate-data'?: string; 'client-key-data'?: string } }[];
  contexts: { name: string; context: { cluster: string; user: string; namespace?: string } }[];
  'current-context': string;
  preferences: Record<string, never>;
}

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

export function buildKubeconfig(input: KubeconfigInput): KubeconfigObject {
  const name = input.name ?? 'devcluster';
  const user: KubeconfigObject['users'][number]['user'] = {};
  if (input.token) user.token = input.token;
  if (input.clientCertPem && input.clientKeyPem) {
    user['client-certificate-data'] = b64(input.clientCertPem);
    user['client-key-data'] = b64(input.clientKeyPem);
  }
  const cluster: KubeconfigObject['clusters'][number]['cluster'] = { server: input.server };
  if (input.caPem) cluster['certificate-authority-data'] = b64(input.caPem);
  // Plain-HTTP servers: @kubernetes/client-node refuses http:// unless verification is off.
  else if (input.server.startsWith('http:')) cluster['insecure-skip-tls-verify'] = true;
  const context: KubeconfigObject['contexts'][number]['context'] = { cluster: name, user: `${name}-admin` };
  if (input.namespace) context.namespace = input.namespace;
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name: `${name}-admin`, user }],
    contexts: [{ name, context }],
    'current-context': name,
    preferences: {},
  };
}

export function kubeconfigYaml(config: KubeconfigObject): string {
  return YAML.stringify(config);
}
