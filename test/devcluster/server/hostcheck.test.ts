/**
 * The Host/Origin check of a plain-HTTP devcluster (D-SEC-1): requests a web page could send by
 * DNS rebinding or from another origin are refused with a 403 that says why and how to allow the
 * host, while kubectl and client-node (which send `Host: 127.0.0.1:<port>`) keep working. With TLS
 * nothing is checked.
 */
import * as k8s from '@kubernetes/client-node';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as hostcheck from '../../../devcluster/server/hostcheck.js';
import { DevCluster } from '../../../devcluster/testing.js';
import { requireKubectl } from '../../support/kubectl.js';
import * as kubectl from '../clients/kubectl.js';

interface Reply {
  status: number;
  json: Record<string, any>;
}

/** A GET with the given headers (Host included), over http or https. */
function get(cluster: DevCluster, pathname: string, headers: Record<string, string>): Promise<Reply> {
  const url = new URL(cluster.url + pathname);
  const options = { method: 'GET', headers: { authorization: `Bearer ${cluster.token}`, ...headers }, ca: cluster.caPem };
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? https : http).request(url, options, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : {} }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('host names', () => {
  it('D-SEC-1 the name of a Host header: lower case, without port, brackets or final dot; loopback names are localhost, 127/8 and ::1', () => {
    expect(hostcheck.hostName('LocalHost:8080')).toBe('localhost');
    expect(hostcheck.hostName('[::1]:6443')).toBe('::1');
    expect(hostcheck.hostName('example.com.')).toBe('example.com');
    expect(hostcheck.hostName('127.0.0.1')).toBe('127.0.0.1');
    for (const name of ['localhost', '127.0.0.1', '127.1.2.3', '::1']) expect(hostcheck.isLoopback(name)).toBe(true);
    for (const name of ['localhost.example.com', '10.0.0.1', '0.0.0.0', '1.127.0.0.1', '']) expect(hostcheck.isLoopback(name)).toBe(false);
  });
});

describe('a plain-HTTP devcluster', () => {
  let cluster: DevCluster;

  beforeAll(async () => {
    cluster = await DevCluster.start({ tls: false, allowedHosts: ['dev.example:1234'] });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('D-SEC-1 refuses a foreign Host (DNS rebinding) with a 403 saying why and how to allow it', async () => {
    const r = await get(cluster, '/api/v1/namespaces', { host: `evil.example:${cluster.port}` });
    expect(r.status).toBe(403);
    expect(r.json).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
    expect(r.json['message']).toBe(
      `refused Host "evil.example:${cluster.port}": the devcluster serves plain HTTP to loopback host names only (localhost, 127.0.0.1, [::1]), ` +
        'so that a web page cannot reach it by DNS rebinding; to accept it, start the devcluster with allowedHosts: ["evil.example"] ' +
        '(kopf-gen devcluster --allow-host evil.example) or with TLS',
    );
    expect(cluster.store.list({ apiVersion: 'v1', kind: 'Namespace' }).length).toBe(4);
  });

  it('D-SEC-1 refuses a request from a web page of another origin, even with a loopback Host', async () => {
    const r = await get(cluster, '/api/v1/namespaces', { origin: 'http://evil.example' });
    expect(r.status).toBe(403);
    expect(r.json['message']).toMatch(/^refused Origin "http:\/\/evil\.example": the devcluster over plain HTTP does not answer web pages of other origins; /);
    expect((await get(cluster, '/api/v1/namespaces', { origin: 'null' })).status).toBe(403);
  });

  it('D-SEC-1 accepts loopback hosts and origins, and the allowed hosts', async () => {
    for (const host of [`127.0.0.1:${cluster.port}`, `localhost:${cluster.port}`, 'localhost', `[::1]:${cluster.port}`, 'dev.example']) {
      expect((await get(cluster, '/api/v1/namespaces', { host })).status, host).toBe(200);
    }
    expect((await get(cluster, '/api/v1/namespaces', { origin: 'http://localhost:3000' })).status).toBe(200);
    expect((await get(cluster, '/api/v1/namespaces', { origin: 'http://dev.example' })).status).toBe(200);
  });

  it('D-SEC-1 kubectl and client-node keep working over plain HTTP', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(cluster.kubeconfig());
    const namespaces = await kc.makeApiClient(k8s.CoreV1Api).listNamespace();
    expect(namespaces.items.length).toBe(4);
    const workDir = kubectl.makeWorkDir('kubectl-host-');
    try {
      const target = { kubeconfig: cluster.writeKubeconfig(path.join(workDir, 'kubeconfig')), workDir };
      const r = kubectl.expectSuccess(await kubectl.run(requireKubectl(), target, ['get', 'namespaces', '-o', 'name']), 'kubectl get namespaces');
      expect(r.stdout).toContain('namespace/default');
    } finally {
      fs.rmSync(workDir, { recursive: true, force: true });
    }
  });
});

describe('a TLS devcluster', () => {
  it('D-SEC-1 checks no Host (the certificate binds the names)', async () => {
    const cluster = await DevCluster.start();
    try {
      expect((await get(cluster, '/api/v1/namespaces', { host: 'kubernetes.default.svc' })).status).toBe(200);
    } finally {
      await cluster.stop();
    }
  });
});
