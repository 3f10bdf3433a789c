/**
 * The options of an operator (R-LIFE-1): what `operator()`, `run()` and `spawnTasks()` accept, and
 * their checks, all made before anything starts — the peering options (R-PEER), the scope
 * (R-SCOPE-1), Lease election against Kopf peering and standalone mode, sharding against both
 * (`OperatorModeError`), the connection options and the endpoint URLs. `configure` makes them all
 * and writes the options that are settings into the settings (peering, scope, Lease election,
 * sharding). Apart from `running` so that
 * what an option means, and when it is refused, reads without how the tasks run.
 */

import * as fs from 'node:fs';
import type * as clocks from '../../cogs/aio/clocks.js';
import * as connections from '../../cogs/client/connections.js';
import type * as credentials from '../../cogs/client/credentials.js';
import * as settingsModule from '../../cogs/configs/settings.js';
import type * as references from '../../cogs/structs/references.js';
import type * as lifecycles from '../actions/lifecycles.js';
import * as logging from '../actions/logging.js';
import * as endpoints from '../engines/endpoints.js';
import type * as registries from '../intents/registry.js';
import { EndpointOptionsError } from '../engines/errors.js';
import { OperatorModeError, OperatorScopeError, PeeringOptionsError } from './errors.js';
import type * as inventory from './inventory.js';
import type * as observation from './observation.js';
import type { ReadyFlag, StopFlag } from './stopping.js';

const logger = logging.getLogger('kopf.reactor.running');

/** The schemes of `metricsEndpoint`: plain (development) or secure (R-SEC-9). */
export const METRICS_SCHEMES: readonly endpoints.EndpointScheme[] = ['http', 'https'];

/** Runs one resource in one namespace until the signal aborts (default: `orchestration.runWatcher`). */
export type Watcher = (context: inventory.OperatorContext, resource: references.Resource, namespace: string | null, signal: AbortSignal) => Promise<void>;

/**
 * Options of `operator()`, `run()` and `spawnTasks()` (R-LIFE-1). The connection options
 * (`kubeconfig`, `kubeconfigContext`, `connection`, `env`) say where the built-in login gets
 * credentials instead of the process's environment (`connections.ConnectionOptions`).
 */
export interface OperatorOptions extends connections.ConnectionOptions {
  /** Default: the global default registry. */
  readonly registry?: registries.OperatorRegistry;
  /** Default: fresh settings. The options below write into it (e.g. `peering.priority`). */
  readonly settings?: settingsModule.OperatorSettings;
  /** The operator memo (activity handlers get it; objects get copies). Default: an empty `Memo`. */
  readonly memo?: object;
  /** Serve all namespaces (`--all-namespaces`). Not together with `namespaces`. */
  readonly clusterwide?: boolean;
  /** Namespace patterns (globs, or regular expressions matching whole names), OR-ed (R-SCOPE-2). */
  readonly namespaces?: readonly observation.NamespacePattern[];
  /** Sets `settings.peering.standalone`. */
  readonly standalone?: boolean;
  /** The priority among peers (R-PEER-8): sets `settings.peering.priority`. An integer. */
  readonly priority?: number;
  /** The peering object's name: sets `settings.peering.name` and makes peering mandatory (R-PEER-2). */
  readonly peeringName?: string;
  /**
   * Leader election on this Lease (`settings.leaderElection.leaseName`, docs/leader-election.md):
   * replicas are hot standbys, only the Lease's holder works. Not together with `standalone`,
   * `peeringName` or `priority`.
   */
  readonly leaseName?: string;
  /** The Lease's namespace (`settings.leaderElection.leaseNamespace`). Default: `$POD_NAMESPACE`, else the service account's, else `default`. */
  readonly leaseNamespace?: string;
  /**
   * Sharding (docs/sharding.md, R-SHARD-111): the ring's name, `settings.sharding.ring`. The objects
   * are spread over the replicas of the ring, each holding a Lease of its own. Not together with
   * `peeringName`, `priority` or `leaseName` (`standalone` is fine: sharding does not peer).
   */
  readonly shards?: string;
  /** This replica's identity in the ring (`settings.sharding.identity`). Default: `$POD_NAME`, else `<hostname>-<pid>`. Needs `shards`. */
  readonly shardIdentity?: string;
  /** What assigns objects to replicas (`settings.sharding.key`): `'uid'` (default) or `'namespace'`. Needs `shards`. */
  readonly shardKey?: 'uid' | 'namespace';
  /**
   * `http://HOST:PORT/PATH` of the liveness endpoint (R-ACTIVITY-4): the probes' results and the
   * watch health; the readiness endpoint is served on the same host and port at
   * `settings.health.readinessPath` (default `/readyz`). Default: none (docs/health.md).
   */
  readonly livenessEndpoint?: string;
  /**
   * Where the operator serves its Prometheus metrics (docs/metrics.md). Default: no metrics are
   * collected at all. `https://HOST:PORT/PATH` (e.g. `https://0.0.0.0:8443/metrics`, what the
   * generated Deployment passes) serves them securely (R-SEC-9..12): over TLS, to callers whose
   * bearer token the API server authenticates (TokenReview) and allows `get` on the path
   * (SubjectAccessReview). `http://HOST:PORT/PATH` serves them to anyone, in plain HTTP: meant for
   * development on `localhost` (a WARNING says so on any other host).
   */
  readonly metricsEndpoint?: string;
  /**
   * A directory with the serving certificate of `https://` metrics as `tls.crt` and `tls.key` (the
   * layout of a `kubernetes.io/tls` Secret, e.g. cert-manager's), read at start. Default: a
   * self-signed certificate made in memory at every start (R-SEC-9).
   */
  readonly metricsTlsDir?: string;
  /** Called once the operator's endpoints (liveness, readiness, metrics) listen, with their URLs (ports resolved). */
  readonly onServing?: (served: readonly endpoints.ServedEndpoint[]) => void;
  /** Raised → the operator stops gracefully (INFO `Stop-flag is raised. Operator is stopping.`). */
  readonly stopFlag?: StopFlag;
  /** Raised right after the startup activity succeeded (R-ACTIVITY-3). */
  readonly readyFlag?: ReadyFlag;
  /** The lifecycle of change handlers. Default: the global default lifecycle. */
  readonly lifecycle?: lifecycles.Lifecycle;
  /** A credentials vault, e.g. pre-populated (then no initial login runs). Default: a new one. */
  readonly vault?: credentials.Vault;
  /**
   * This operator's identity among peers (R-PEER-3), also the Lease's `holderIdentity` in Lease
   * election. Default: `$POD_ID`, else `<user>@<host>/<UTC time>/<3 random chars>`.
   */
  readonly identity?: string;
  /** Stop on SIGINT/SIGTERM (R-LIFE-3/4). Default `false` for `operator()`, `true` for `run()`. */
  readonly handleSignals?: boolean;
  /** The forced exit after a signal (R-LIFE-4). Default `process.exit`. */
  readonly exit?: (code: number) => void;
  /** Default: the real clock. */
  readonly clock?: clocks.Clock;
  /** Default: `orchestration.runWatcher` (a seam for tests and embedders). */
  readonly watcher?: Watcher;
  /**
   * With `settings.sharding.ring`: what makes the ring (the membership of this replica). Default:
   * the Lease-based membership (a seam for tests and embedders, like `watcher`).
   */
  readonly ringFactory?: inventory.RingFactory;
}

/**
 * Checks the peering options before anything starts: `peeringName` and `identity` non-empty,
 * `priority` an integer, and no `peeringName`, `priority` or `identity` together with
 * `standalone: true` (they would do nothing).
 *
 * @throws PeeringOptionsError naming the option.
 */
export function checkPeeringOptions(options: Pick<OperatorOptions, 'standalone' | 'peeringName' | 'priority' | 'identity' | 'leaseName'>): void {
  if (options.peeringName !== undefined && (typeof options.peeringName !== 'string' || options.peeringName === '')) {
    throw new PeeringOptionsError(`peeringName must be a non-empty name of a peering object, got ${JSON.stringify(options.peeringName)}.`);
  }
  if (options.identity !== undefined && (typeof options.identity !== 'string' || options.identity === '')) {
    throw new PeeringOptionsError(`identity must be a non-empty string, got ${JSON.stringify(options.identity)}.`);
  }
  if (options.priority !== undefined && !Number.isSafeInteger(options.priority)) {
    throw new PeeringOptionsError(`priority must be an integer, got ${String(options.priority)}.`);
  }
  if (options.standalone === true) {
    if (options.peeringName !== undefined)
      throw new PeeringOptionsError('standalone and peeringName cannot be used together: a standalone operator does not peer.');
    if (options.priority !== undefined) throw new PeeringOptionsError('standalone and priority cannot be used together: a priority only ranks peers.');
    if (options.identity !== undefined && options.leaseName === undefined) {
      throw new PeeringOptionsError('standalone and identity cannot be used together: an identity only names the operator among peers (or as a Lease holder).');
    }
  }
}

const NO_SCOPE_WARNING =
  'Absence of either namespaces or cluster-wide flag will become an error soon. ' + 'For now, switching to the cluster-wide mode for backward compatibility.';

/**
 * The operator's scope (R-SCOPE-1): both modes → throws; neither → WARNING and cluster-wide.
 *
 * @throws OperatorScopeError for `clusterwide` with `namespaces`.
 */
export function resolveScope(options: Pick<OperatorOptions, 'clusterwide' | 'namespaces'>): {
  clusterwide: boolean;
  namespaces: observation.NamespacePattern[];
} {
  const patterns = [...(options.namespaces ?? [])];
  if (options.clusterwide && patterns.length > 0) {
    throw new OperatorScopeError('The operator can be either cluster-wide or namespaced, not both.');
  }
  if (!options.clusterwide && patterns.length === 0) {
    logger.warning(NO_SCOPE_WARNING);
    return { clusterwide: true, namespaces: [] };
  }
  return { clusterwide: options.clusterwide === true, namespaces: patterns };
}

/**
 * Writes `leaseName`/`leaseNamespace` into `settings.leaderElection` and checks that Lease election
 * is not combined with options of Kopf peering or standalone mode; returns whether it is on.
 *
 * @throws OperatorModeError for a combination; configErrors.SettingsError for bad timings.
 */
export function applyLeaseOptions(options: OperatorOptions, settings: settingsModule.OperatorSettings): boolean {
  const election = settings.leaderElection;
  if (options.leaseName !== undefined) election.leaseName = options.leaseName;
  if (options.leaseNamespace !== undefined) election.leaseNamespace = options.leaseNamespace;
  if (election.leaseName === null) {
    if (options.leaseNamespace !== undefined) throw new OperatorModeError("leaseNamespace is given without leaseName: Lease election needs the Lease's name.");
    return false;
  }
  const others: ReadonlyArray<[keyof OperatorOptions, boolean]> = [
    ['standalone', options.standalone === true],
    ['peeringName', options.peeringName !== undefined],
    ['priority', options.priority !== undefined],
  ];
  for (const [name, given] of others) {
    if (given) throw new OperatorModeError(`leaseName (Lease election) and ${name} (Kopf peering) exclude each other: choose one mode of coordination.`);
  }
  checkLeaseSettings(settings);
  return true;
}

/**
 * With `settings.leaderElection.leaseName` set: valid timings, and no setting of another mode of
 * coordination (`peering.standalone`, `peering.mandatory`). Checked again after the startup activity.
 *
 * @throws OperatorModeError for a combination; configErrors.SettingsError for bad timings.
 */
export function checkLeaseSettings(settings: settingsModule.OperatorSettings): void {
  if (settings.leaderElection.leaseName === null) return;
  for (const name of ['standalone', 'mandatory'] as const) {
    if (settings.peering[name]) {
      throw new OperatorModeError(
        `settings.leaderElection.leaseName (Lease election) and settings.peering.${name} exclude each other: choose one mode of coordination.`,
      );
    }
  }
  settings.leaderElection.validate();
}

/**
 * Writes `shards`/`shardIdentity`/`shardKey` into `settings.sharding` and checks that sharding is
 * not combined with Kopf peering or Lease election; returns whether it is on.
 *
 * @throws OperatorModeError for a combination, or a sharding option without a ring;
 *   configErrors.SettingsError for invalid values.
 */
export function applyShardOptions(options: OperatorOptions, settings: settingsModule.OperatorSettings): boolean {
  const sharding = settings.sharding;
  if (options.shards !== undefined) sharding.ring = options.shards;
  if (options.shardIdentity !== undefined) sharding.identity = options.shardIdentity;
  if (options.shardKey !== undefined) sharding.key = options.shardKey;
  if (sharding.ring === null) {
    for (const name of ['shardIdentity', 'shardKey'] as const) {
      if (options[name] !== undefined) throw new OperatorModeError(`${name} is given without shards: sharding needs the ring's name.`);
    }
    return false;
  }
  const others: ReadonlyArray<[keyof OperatorOptions, string, boolean]> = [
    ['peeringName', 'Kopf peering', options.peeringName !== undefined],
    ['priority', 'Kopf peering', options.priority !== undefined],
    ['leaseName', 'Lease election', options.leaseName !== undefined],
  ];
  for (const [name, mode, given] of others) {
    if (given) throw new OperatorModeError(`shards (sharding) and ${name} (${mode}) exclude each other: choose one mode of coordination.`);
  }
  checkShardSettings(settings);
  return true;
}

/**
 * With `settings.sharding.ring` set: valid sharding settings, and no setting of another mode of
 * coordination (`peering.mandatory`, `leaderElection.leaseName`). Checked again after the startup
 * activity.
 *
 * @throws OperatorModeError for a combination; configErrors.SettingsError for invalid values.
 */
export function checkShardSettings(settings: settingsModule.OperatorSettings): void {
  if (settings.sharding.ring === null) return;
  if (settings.peering.mandatory) {
    throw new OperatorModeError('settings.sharding.ring (sharding) and settings.peering.mandatory exclude each other: choose one mode of coordination.');
  }
  if (settings.leaderElection.leaseName !== null) {
    throw new OperatorModeError(
      'settings.sharding.ring (sharding) and settings.leaderElection.leaseName (Lease election) exclude each other: choose one mode of coordination.',
    );
  }
  settings.sharding.validate();
}

/** The in-cluster service account's namespace, if the operator runs in a pod. */
export function readServiceAccountNamespace(): string | undefined {
  try {
    return fs.readFileSync('/var/run/secrets/kubernetes.io/serviceaccount/namespace', 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Checks the options before anything starts, and writes those that are settings into the settings
 * (peering, scope, Lease election, sharding).
 */
export function configure(options: OperatorOptions): { settings: settingsModule.OperatorSettings; scope: Scope } {
  checkPeeringOptions(options);
  const settings = options.settings ?? new settingsModule.OperatorSettings();
  applyShardOptions(options, settings);
  applyLeaseOptions(options, settings);
  connections.checkConnectionOptions(options);
  if (options.livenessEndpoint !== undefined) endpoints.parseEndpointUrl(options.livenessEndpoint, 'livenessEndpoint');
  if (options.metricsEndpoint !== undefined) {
    const address = endpoints.parseEndpointUrl(options.metricsEndpoint, 'metricsEndpoint', METRICS_SCHEMES);
    if (options.metricsTlsDir !== undefined && !address.secure) {
      throw new EndpointOptionsError('metricsTlsDir is given, but metricsEndpoint is not an https:// URL: the certificate would not be used.');
    }
  } else if (options.metricsTlsDir !== undefined) {
    throw new EndpointOptionsError('metricsTlsDir is given without metricsEndpoint: there are no metrics to serve with it.');
  }
  const scope = resolveScope(options);
  if (options.standalone !== undefined) settings.peering.standalone = options.standalone;
  if (options.peeringName !== undefined) {
    settings.peering.mandatory = true;
    settings.peering.name = options.peeringName;
  }
  if (options.priority !== undefined) settings.peering.priority = options.priority;
  settings.peering.clusterwide = scope.clusterwide;
  return { settings, scope };
}

export type Scope = ReturnType<typeof resolveScope>;
