/**
 * Whether the command line runs inside a Kubernetes pod, for the devcluster's refusal to start
 * there (D-SEC-2). The devcluster is a development server: it trusts loopback and, by default,
 * treats every request as its admin. Started by mistake in a deployed container (an explicit
 * `--dev-cluster` left in a manifest, `kopf-gen devcluster` in an image), it would serve an
 * unauthenticated API next to the real one. So `kopf-gen devcluster` and `kopf-gen run
 * --dev-cluster` refuse when the pod's marks are present — the `KUBERNETES_SERVICE_HOST` variable
 * the kubelet sets in every container, or a mounted service-account token — unless forced with
 * `--dev-cluster-in-pod`. The environment and the token's path are injectable for tests.
 */
import * as fs from 'node:fs';

/** Where a pod's service-account token is mounted. */
export const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** The flag that starts the devcluster in a pod anyway. */
export const IN_POD_FLAG = '--dev-cluster-in-pod';

/** What is looked at; every member defaults to the real process's. */
export interface PodDetection {
  readonly env?: NodeJS.ProcessEnv;
  readonly tokenPath?: string;
}

/** Why this looks like a pod (`KUBERNETES_SERVICE_HOST is set`, `a service-account token is mounted at …`), or undefined. */
export function podEvidence(detection: PodDetection = {}): string | undefined {
  const env = detection.env ?? process.env;
  if (env['KUBERNETES_SERVICE_HOST']) return 'KUBERNETES_SERVICE_HOST is set';
  const token = detection.tokenPath ?? SERVICE_ACCOUNT_TOKEN;
  if (fs.existsSync(token)) return `a service-account token is mounted at ${token}`;
  return undefined;
}

/** The one line of the refusal, naming the evidence and the flag. */
export function refusal(evidence: string): string {
  return (
    `refusing to start the devcluster inside a Kubernetes pod (${evidence}): it is a development server that ` +
    `trusts loopback and serves an API beside the real one; pass ${IN_POD_FLAG} to start it anyway`
  );
}
