/**
 * Servers: what a generated operator serves besides watching — its health and metrics endpoint,
 * and, when the user's code registers admission handlers, its webhooks — as the manifests and
 * the generated code must agree on them.
 *
 * The Deployment passes `--liveness` on the plain-HTTP health port its probes use (the kubelet does
 * not authenticate, so that port serves nothing but healthy/unhealthy), and `--metrics` as an
 * `https://` URL on a port of its own, where only callers with a token allowed to get `/metrics`
 * are answered; the NetworkPolicy admits each port from where its callers come (`METRICS`,
 * `networkPolicy`). The webhook Service forwards to the container's webhook port, where the operator serves with
 * the certificate that cert-manager issues into a Secret the Deployment mounts; the generated
 * startup handler (src/generated/admission.ts) reads the same directory, names the same Service,
 * and manages the webhook configurations under the name the RBAC allows. Every one of these
 * values is decided here, once, so that no two files can disagree. `checkDeployment` tells what a
 * user-owned Deployment lacks for serving webhooks, because `generate` may not rewrite it. Pure.
 */
import * as yaml from 'yaml';

/** The operator's health endpoint: liveness and readiness, in plain HTTP, on a port of their own. */
export const HEALTH = {
  port: 8080,
  /** The container port's name, which the probes refer to. */
  portName: 'health',
  livenessPath: '/healthz',
  readinessPath: '/readyz',
} as const;

/**
 * The operator's metrics: HTTPS on a port of their own, for callers whose token may `get` the path
 * (the runtime's TokenReview and SubjectAccessReview; the ClusterRole `<name>-metrics-reader`
 * grants it), with the certificate the operator makes at start — as kubebuilder's scaffold does.
 */
export const METRICS = {
  port: 8443,
  /** The container port's name, which the scrape configuration and the NetworkPolicy refer to. */
  portName: 'metrics',
  path: '/metrics',
  scheme: 'https',
  /** The label of namespaces whose pods may scrape (the NetworkPolicy), as kubebuilder's `metrics: enabled`. */
  namespaceLabel: 'metrics',
  namespaceLabelValue: 'enabled',
} as const;

/** The operator's admission webhook server, in the cluster. */
export const WEBHOOKS = {
  /** The container port the operator listens on with TLS. */
  port: 9443,
  portName: 'webhooks',
  /** The Service port the API server calls (HTTPS's default, so client configurations may omit it). */
  servicePort: 443,
  /** Where the Deployment mounts the serving certificate's Secret (tls.crt, tls.key, ca.crt). */
  tlsDir: '/etc/webhooks/tls',
  /** The environment variable that gives the generated code that directory, and says it runs in the cluster. */
  tlsDirVariable: 'WEBHOOK_TLS_DIR',
  /** The volume of the Secret in the Deployment. */
  volumeName: 'webhook-tls',
} as const;

/**
 * The operator's command-line arguments in the Deployment: its endpoints on all interfaces of the
 * pod (the kubelet and Prometheus reach it at the pod's IP) — health in plain HTTP, the metrics
 * secure — then its scope, then the Lease of leader election if the project has one (in the pod's
 * namespace, which deploy/rbac.yaml allows).
 */
export function deploymentArgs(scopeArgs: readonly string[], lease?: string): string[] {
  return [
    `--liveness=http://0.0.0.0:${HEALTH.port}${HEALTH.livenessPath}`,
    `--metrics=${METRICS.scheme}://0.0.0.0:${METRICS.port}${METRICS.path}`,
    ...scopeArgs,
    ...(lease !== undefined ? [`--lease=${lease}`] : []),
  ];
}

/** The names of a project's webhook objects (all in the operator's namespace, except the configurations). */
export interface WebhookNames {
  readonly namespace: string;
  /** The Service the webhook configurations refer to (a DNS-1035 label). */
  readonly service: string;
  /** The DNS names of that Service, which the serving certificate carries. */
  readonly dnsNames: readonly string[];
  /** The cluster-scoped Validating/MutatingWebhookConfiguration the operator manages. */
  readonly managed: string;
  readonly selfSignedIssuer: string;
  readonly caCertificate: string;
  readonly caSecret: string;
  readonly caIssuer: string;
  readonly servingCertificate: string;
  /** The Secret of the serving certificate, which the Deployment mounts. */
  readonly servingSecret: string;
}

/**
 * The names of the webhook objects of a project whose Kubernetes name (namespace, service account,
 * Deployment) is `kubeName`. The managed configurations are named `<kubeName>.kopf.dev` — the
 * domain of the runtime's own resources (peerings), so that operators never collide with other
 * software's configurations and their entries (`<handler id>.<kubeName>.kopf.dev`) are qualified
 * names as the API requires.
 */
export function webhookNames(kubeName: string): WebhookNames {
  const service = label(kubeName, '-webhooks');
  return {
    namespace: kubeName,
    service,
    dnsNames: [`${service}.${kubeName}.svc`, `${service}.${kubeName}.svc.cluster.local`],
    managed: `${kubeName}.kopf.dev`,
    selfSignedIssuer: `${kubeName}-selfsigned`,
    caCertificate: `${kubeName}-webhooks-ca`,
    caSecret: `${kubeName}-webhooks-ca`,
    caIssuer: `${kubeName}-webhooks-ca`,
    servingCertificate: `${kubeName}-webhooks-tls`,
    servingSecret: `${kubeName}-webhooks-tls`,
  };
}

/** A DNS-1035 label (Service names): `name` + `suffix`, at most 63 characters, starting with a letter. */
function label(name: string, suffix: string): string {
  const start = /^[a-z]/.test(name) ? name : `op-${name}`;
  return `${start.slice(0, 63 - suffix.length).replace(/-+$/, '')}${suffix}`;
}

/** What a Deployment lacks for serving webhooks, as one phrase each; empty when it has everything. */
export function checkDeployment(text: string, names: WebhookNames): string[] {
  let documents: unknown[];
  try {
    documents = yaml.parseAllDocuments(text).map((document) => document.toJS() as unknown);
  } catch (error) {
    return [`it could not be read as YAML (${error instanceof Error ? error.message : String(error)})`];
  }
  const deployment = documents.find((document) => record(document)?.['kind'] === 'Deployment');
  const pod = record(record(record(record(deployment)?.['spec'])?.['template'])?.['spec']);
  if (pod === undefined) return ['it holds no Deployment with a pod template'];
  const volumes = list(pod['volumes']).map(record);
  const volume = volumes.find((each) => record(each?.['secret'])?.['secretName'] === names.servingSecret);
  const containers = list(pod['containers']).map(record);
  const container = containers.find((each) => each?.['name'] === 'operator') ?? containers[0];
  const missing: string[] = [];
  if (volume === undefined) missing.push(`a volume of the Secret ${names.servingSecret}`);
  const mounted =
    volume !== undefined &&
    list(container?.['volumeMounts'])
      .map(record)
      .some((mount) => mount?.['name'] === volume['name'] && mount?.['mountPath'] === WEBHOOKS.tlsDir);
  if (!mounted) missing.push(`its mount at ${WEBHOOKS.tlsDir} in the operator's container`);
  const variable = list(container?.['env'])
    .map(record)
    .some((env) => env?.['name'] === WEBHOOKS.tlsDirVariable && env?.['value'] === WEBHOOKS.tlsDir);
  if (!variable) missing.push(`the environment variable ${WEBHOOKS.tlsDirVariable}=${WEBHOOKS.tlsDir}`);
  const port = list(container?.['ports'])
    .map(record)
    .some((each) => each?.['containerPort'] === WEBHOOKS.port);
  if (!port) missing.push(`the container port ${WEBHOOKS.port} (named ${WEBHOOKS.portName})`);
  return missing;
}

/**
 * The Lease a user-owned Deployment's operator container elects its leader on (`--lease=NAME` or
 * `--lease NAME` in its args), `null` without one, `undefined` when the file cannot be read: so
 * that `generate` can say when it and the project's `"lease"` (which the RBAC follows) disagree.
 */
export function deploymentLease(text: string): string | null | undefined {
  return deploymentFlag(text, '--lease');
}

/**
 * The value of a flag (`--shards=RING` or `--shards RING`) in a user-owned Deployment's operator
 * container's args, `null` when the args lack it, `undefined` when the file cannot be read.
 */
export function deploymentFlag(text: string, flag: string): string | null | undefined {
  let documents: unknown[];
  try {
    documents = yaml.parseAllDocuments(text).map((document) => document.toJS() as unknown);
  } catch {
    return undefined;
  }
  const deployment = documents.find((document) => record(document)?.['kind'] === 'Deployment');
  const containers = list(record(record(record(record(deployment)?.['spec'])?.['template'])?.['spec'])?.['containers']).map(record);
  const container = containers.find((each) => each?.['name'] === 'operator') ?? containers[0];
  if (container === undefined) return undefined;
  const args = list(container['args']).map(String);
  for (const [index, arg] of args.entries()) {
    if (arg.startsWith(`${flag}=`)) return arg.slice(flag.length + 1);
    if (arg === flag) return args[index + 1] ?? null;
  }
  return null;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
