/**
 * `kopf-gen devcluster`: runs the embedded API server in the foreground, prints where its
 * kubeconfig is and how to use it with kubectl, and stops cleanly on SIGINT/SIGTERM. `--rbac`
 * enforces authentication and RBAC (D-AUTH-16), `--allow-host` widens the Host check of
 * `--no-tls` (D-SEC-1), and it refuses to start inside a pod unless `--dev-cluster-in-pod`
 * (D-SEC-2, `pods.ts`). `--state-dir` keeps the cluster's objects in a folder across runs, and
 * `--reset` empties that folder first (D-PERSIST-301, D-PERSIST-307).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DevCluster } from '../devcluster/testing.js';
import * as pods from './pods.js';

export interface DevclusterCommandOptions {
  port: string;
  tls: boolean;
  kubeconfig: string;
  crd?: string[];
  /** Enforce authentication and RBAC (`auth: "enforced"`, `authorization: "rbac"`). */
  rbac?: boolean;
  /** Host names accepted besides loopback ones without TLS. */
  allowHost?: string[];
  /** Start even inside a pod. */
  devClusterInPod?: boolean;
  /** The folder the objects are kept in across runs. */
  stateDir?: string;
  /** Empty `stateDir` before starting. */
  reset?: boolean;
}

/**
 * @throws Error with one line: a bad option, a missing CRD file, or a pod without `--dev-cluster-in-pod`.
 */
export async function run(opts: DevclusterCommandOptions, detection: pods.PodDetection = {}): Promise<void> {
  const evidence = pods.podEvidence(detection);
  if (evidence && !opts.devClusterInPod) throw new Error(pods.refusal(evidence));
  const port = Number(opts.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be an integer between 0 and 65535, got "${opts.port}"`);
  for (const file of opts.crd ?? []) {
    if (!fs.existsSync(file)) throw new Error(`--crd ${file}: no such file`);
  }
  if (opts.reset && !opts.stateDir) throw new Error('--reset needs --state-dir: it empties that folder');
  if (opts.stateDir && opts.reset) DevCluster.resetState(opts.stateDir);
  const kept = opts.stateDir !== undefined && fs.existsSync(opts.stateDir) && fs.readdirSync(opts.stateDir).some((f) => f.endsWith('.jsonl'));
  // The CRDs are given at start, so over a kept state a CRD of the same name is updated, as
  // `kubectl apply` would (D-PERSIST-308), rather than refused as existing.
  const cluster = await DevCluster.start({
    port,
    tls: opts.tls,
    ...(opts.rbac ? { authorization: 'rbac' as const } : {}),
    ...(opts.allowHost?.length ? { allowedHosts: opts.allowHost } : {}),
    ...(opts.stateDir ? { stateDir: opts.stateDir } : {}),
    ...(opts.crd?.length ? { crds: opts.crd.map((f) => fs.readFileSync(f, 'utf8')) } : {}),
  });
  const kubeconfig = path.resolve(cluster.writeKubeconfig(opts.kubeconfig));
  process.stdout.write(
    [
      `devcluster is serving at ${cluster.url}${opts.rbac ? ' (RBAC enforced: the kubeconfig is the admin, in system:masters)' : ''}`,
      `kubeconfig: ${kubeconfig}`,
      ...(opts.stateDir ? [`state: ${path.resolve(opts.stateDir)} (${kept ? 'objects kept from the last run' : 'new'}; --reset empties it)`] : []),
      `try: kubectl --kubeconfig ${kubeconfig} get namespaces`,
      'press Ctrl+C to stop',
      '',
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.stdout.write(`received ${signal}, stopping the devcluster\n`);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void cluster.stop().then(resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
