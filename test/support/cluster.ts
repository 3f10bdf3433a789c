/**
 * Starting a devcluster for a test file: the cluster, a kubeconfig for it in a fresh temporary
 * folder, and optionally `KUBECONFIG` pointed at it (as a user's operator finds its cluster) and
 * restored when the cluster stops. Every suite that runs an operator or a client against the
 * devcluster starts it this way.
 *
 * @example
 * let test: TestCluster;
 * beforeAll(async () => { test = await startTestCluster({ crds: [CRD], exportKubeconfig: true }); });
 * afterAll(async () => { await test?.stop(); });
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { DevCluster, type DevClusterOptions } from '../../devcluster/testing.js';

export interface TestClusterOptions extends DevClusterOptions {
  /** Points `process.env.KUBECONFIG` at the cluster until `stop()` (default: false). */
  readonly exportKubeconfig?: boolean;
  /** The temporary folder's name prefix (default `kopf-test-`). */
  readonly prefix?: string;
}

export interface TestCluster {
  readonly cluster: DevCluster;
  /** The kubeconfig file written for the cluster. */
  readonly kubeconfig: string;
  /** The temporary folder holding it (free for the test's own files). */
  readonly dir: string;
  /** Stops the cluster and restores `KUBECONFIG` if it was exported. */
  stop(): Promise<void>;
}

/** A fresh temporary folder. */
export function tempDir(prefix = 'kopf-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** The kubeconfig of a cluster exported as `KUBECONFIG`, and how to put the previous value back. */
export interface ExportedKubeconfig {
  readonly kubeconfig: string;
  restore(): void;
}

/**
 * Writes the cluster's kubeconfig into `dir` and points `process.env.KUBECONFIG` at it, for
 * suites that start their cluster with a helper of their own; `restore()` undoes it.
 */
export function exportKubeconfig(cluster: DevCluster, dir: string = tempDir()): ExportedKubeconfig {
  const saved = process.env['KUBECONFIG'];
  const kubeconfig = cluster.writeKubeconfig(path.join(dir, 'kubeconfig'));
  process.env['KUBECONFIG'] = kubeconfig;
  return {
    kubeconfig,
    restore() {
      if (saved === undefined) delete process.env['KUBECONFIG'];
      else process.env['KUBECONFIG'] = saved;
    },
  };
}

/** Starts a devcluster with `options` (HTTPS unless `tls: false`, as `DevCluster.start`) and writes its kubeconfig. */
export async function startTestCluster(options: TestClusterOptions = {}): Promise<TestCluster> {
  const { exportKubeconfig: exporting = false, prefix, ...rest } = options;
  const cluster = await DevCluster.start(rest);
  const dir = tempDir(prefix);
  const exported = exporting ? exportKubeconfig(cluster, dir) : undefined;
  const kubeconfig = exported?.kubeconfig ?? cluster.writeKubeconfig(path.join(dir, 'kubeconfig'));
  return {
    cluster,
    kubeconfig,
    dir,
    async stop() {
      exported?.restore();
      await cluster.stop();
    },
  };
}
