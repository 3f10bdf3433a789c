/**
 * State-folder benchmark (D-PERSIST-302): what keeping the devcluster's objects in a folder costs.
 * Creates and merge-patches ConfigMaps over keep-alive HTTP with 8 clients, against a devcluster
 * without a state folder and one with, alternately (several rounds, best of each, so a busy
 * machine hurts both alike); then the start-up time of a cluster restoring them, and the folder's
 * size. Runs in-process on the sources:
 *
 *   npm run bench -- persistence [--objects 10000] [--rounds 3]
 *
 * Target: a state folder costs no visible throughput (kept ÷ plain ≥ 80 %, the run-to-run noise of
 * a busy machine is about ±25 %).
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { DevCluster } from '../devcluster/testing.js';
import type * as report from './report.js';

const CLIENTS = 8;

function option(args: readonly string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = Number(args[i + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} needs a positive whole number, not ${args[i + 1] ?? 'nothing'}`);
  return value;
}

function send(agent: http.Agent, url: string, method: string, body: unknown, contentType = 'application/json'): Promise<number> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = http.request(url, { method, agent, headers: { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** Writes per second of `total` requests made by `CLIENTS` concurrent clients. */
async function rate(total: number, make: (i: number) => Promise<number>, expected: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (let i = next++; i < total; i = next++) {
        const status = await make(i);
        if (status !== expected) throw new Error(`request ${i} answered ${status}`);
      }
    }),
  );
  return total / ((performance.now() - started) / 1000);
}

async function phases(cluster: DevCluster, objects: number): Promise<{ create: number; patch: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  const base = `${cluster.url}/api/v1/namespaces/default/configmaps`;
  const create = await rate(
    objects,
    (i) => send(agent, base, 'POST', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, labels: { app: 'bench' } }, data: { i: String(i) } }),
    201,
  );
  const patch = await rate(objects, (i) => send(agent, `${base}/cm-${i}`, 'PATCH', { data: { patched: 'yes' } }, 'application/merge-patch+json'), 200);
  agent.destroy();
  return { create, patch };
}

function folderBytes(dir: string): number {
  return fs.readdirSync(dir).reduce((sum, f) => sum + fs.statSync(path.join(dir, f)).size, 0);
}

export async function run(args: readonly string[] = []): Promise<report.Result> {
  const objects = option(args, 'objects', 10_000);
  const rounds = option(args, 'rounds', 3);
  const best = { plain: { create: 0, patch: 0 }, kept: { create: 0, patch: 0 } };
  let stateDir = '';
  for (let round = 0; round < rounds; round++) {
    for (const mode of ['plain', 'kept'] as const) {
      if (mode === 'kept') stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-bench-state-'));
      const cluster = await DevCluster.start({ tls: false, ...(mode === 'kept' ? { stateDir } : {}) });
      const r = await phases(cluster, objects);
      await cluster.stop();
      best[mode].create = Math.max(best[mode].create, r.create);
      best[mode].patch = Math.max(best[mode].patch, r.patch);
      if (mode === 'kept' && round < rounds - 1) fs.rmSync(stateDir, { recursive: true, force: true });
    }
  }
  const bytes = folderBytes(stateDir);
  const started = performance.now();
  const restored = await DevCluster.start({ tls: false, stateDir });
  const restoreMs = performance.now() - started;
  const count = restored.store.list({ apiVersion: 'v1', kind: 'ConfigMap' }, 'default').length;
  await restored.stop();
  fs.rmSync(stateDir, { recursive: true, force: true });
  return {
    name: 'persistence',
    figures: {
      objects,
      plain_create_per_s: Math.round(best.plain.create),
      kept_create_per_s: Math.round(best.kept.create),
      kept_create_ratio: best.kept.create / best.plain.create,
      plain_patch_per_s: Math.round(best.plain.patch),
      kept_patch_per_s: Math.round(best.kept.patch),
      kept_patch_ratio: best.kept.patch / best.plain.patch,
      restore_ms: Math.round(restoreMs),
      restored_objects: count,
      folder_mib: bytes / 1024 / 1024,
    },
    targets: { kept_create_ratio: { min: 0.8 }, kept_patch_ratio: { min: 0.8 }, restored_objects: { min: objects } },
    notes: {
      measured: `${objects} ConfigMaps created then merge-patched by ${CLIENTS} keep-alive clients over plain HTTP, against a devcluster without and with a state folder, alternately, best of ${rounds} rounds; then the start-up of a devcluster restoring them`,
    },
  };
}
