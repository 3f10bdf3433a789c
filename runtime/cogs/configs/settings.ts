/**
 * Operator settings: every tunable of the runtime, with its default, in one object (R-CONFIG-1).
 *
 * Each operator owns one `OperatorSettings` instance (R-CONFIG-2: embedded operators never share
 * one); startup handlers receive it and may change it before anything else runs. Groups and
 * defaults follow Kopf's `OperatorSettings` (camelCase names; Kopf's names are noted where they
 * differ beyond casing). **All durations are in seconds**, fractions allowed, as in Kopf; `null`
 * means "not set / disabled" where the description says so.
 *
 * The persistence group holds the storage objects from `progress` and `diffbase`.
 */

import * as diffbase from './diffbase.js';
import * as progress from './progress.js';
import type * as webhooks from '../structs/webhooks.js';

/** A setting was given a value it cannot take. */
export class SettingsError extends Error {
  readonly code = 'InvalidSetting' as const;
  override readonly name = 'SettingsError';
}

/** Process-level behaviour. */
export class ProcessSettings {
  /** Hard exit this many seconds after a termination signal; `null` disables. Default 600 s. */
  ultimateExitingTimeout: number | null = 600;
}

/** Posting k8s-events (R-POST). */
export class PostingSettings {
  /** Post k8s-events at all. Default `true`. */
  enabled = true;
  /** Also post per-object log messages as k8s-events. Default `false`. */
  loggers = false;
  /** Minimum level for posting: 10 DEBUG, 20 INFO, 30 WARNING, 40 ERROR, 50 CRITICAL. Default 20. */
  level = 20;
  /** The events' reporting component and source component. Default `'kopf'`. */
  reportingComponent = 'kopf';
  /** The events' reporting instance. Default `'dev'`. */
  reportingInstance = 'dev';
  /** `generateName` of posted events. Default `'kopf-event-'`. */
  eventNamePrefix = 'kopf-event-';
}

/** Cross-operator coordination (R-PEER). */
export class PeeringSettings {
  /** Name of the peering object. Default `'default'`. */
  name = 'default';
  /** This operator's priority; the highest active priority runs, lower ones pause. Default 0. */
  priority = 0;
  /** Seconds a peer's entry stays valid without a keep-alive. Default 60 s. */
  lifetime = 60;
  /** Pause while the peering object is absent (instead of running freely). Default `false`. */
  mandatory = false;
  /** Disable peering entirely. Default `false`. */
  standalone = false;
  /** Do not log keep-alives. Default `false`. */
  stealth = false;
  /** Cluster-wide vs namespaced peering; `null` = derived from the namespaces served. Default `null`. */
  clusterwide: boolean | null = null;
}

/**
 * Leader election on a `coordination.k8s.io/v1` Lease, as client-go does it: an alternative to
 * Kopf's peering where replicas run as hot standbys and the one holding the Lease works
 * (docs/leader-election.md). On when `leaseName` is set; Kopf peering is off then. The durations
 * are seconds, with client-go's defaults, and must keep `retryPeriod < renewDeadline <
 * leaseDuration`: the leader pauses when it could not renew for `renewDeadline`, while the others
 * wait `leaseDuration` after the last renewal they saw, so two leaders never work at once.
 */
export class LeaderElectionSettings {
  /** The Lease's name; `null` = no Lease election. Default `null`. */
  leaseName: string | null = null;
  /**
   * The Lease's namespace; `null` = `$POD_NAMESPACE`, else the in-cluster service account's
   * namespace, else `default`. Default `null`.
   */
  leaseNamespace: string | null = null;
  /** Seconds a standby waits after the last renewal it saw before it takes over (whole seconds). Default 15 s. */
  leaseDuration = 15;
  /** Seconds the leader keeps trying to renew before it pauses (lost leadership). Default 10 s. */
  renewDeadline = 10;
  /** Seconds between renewals of the leader, and between the standbys' attempts. Default 2 s. */
  retryPeriod = 2;

  /**
   * Checks the timings (an operator calls it at startup, and after the startup activity).
   *
   * @throws SettingsError naming the setting and its value.
   */
  validate(): void {
    const durations = { leaseDuration: this.leaseDuration, renewDeadline: this.renewDeadline, retryPeriod: this.retryPeriod } as const;
    for (const [name, value] of Object.entries(durations)) {
      if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
        throw new SettingsError(`leaderElection.${name} must be a positive number of seconds, got ${String(value)}.`);
      }
    }
    if (!Number.isInteger(this.leaseDuration)) {
      throw new SettingsError(`leaderElection.leaseDuration must be a whole number of seconds (the Lease's leaseDurationSeconds), got ${this.leaseDuration}.`);
    }
    if (!(this.renewDeadline < this.leaseDuration)) {
      throw new SettingsError(
        `leaderElection.renewDeadline (${this.renewDeadline} s) must be less than leaderElection.leaseDuration (${this.leaseDuration} s).`,
      );
    }
    if (!(this.retryPeriod < this.renewDeadline)) {
      throw new SettingsError(`leaderElection.retryPeriod (${this.retryPeriod} s) must be less than leaderElection.renewDeadline (${this.renewDeadline} s).`);
    }
    if (this.leaseName !== null && (typeof this.leaseName !== 'string' || this.leaseName === '')) {
      throw new SettingsError(`leaderElection.leaseName must be a non-empty string or null, got ${JSON.stringify(this.leaseName)}.`);
    }
    if (this.leaseNamespace !== null && (typeof this.leaseNamespace !== 'string' || this.leaseNamespace === '')) {
      throw new SettingsError(`leaderElection.leaseNamespace must be a non-empty string or null, got ${JSON.stringify(this.leaseNamespace)}.`);
    }
  }
}

/** Watch streams (R-WATCH). */
export class WatchingSettings {
  /** `timeoutSeconds` sent with watch requests; `null` = the server's default. Default `null`. */
  serverTimeout: number | null = null;
  /** Client-side limit of one watch request's total duration, seconds; `null` = none. Default `null`. */
  clientTimeout: number | null = null;
  /** Connect timeout of watch requests, seconds; `null` = none. Default `null`. */
  connectTimeout: number | null = null;
  /** Pause between watch reconnects, seconds. Default 0.1 s. */
  reconnectBackoff = 0.1;
  /** Reconnect after this many seconds without any data on a watch. Default 70 s. */
  inactivityTimeout = 70;
}

/** Per-object queueing (R-QUEUE). Kopf also calls this group `batching` (deprecated). */
export class QueueingSettings {
  /** Maximum concurrent per-object workers; `null` = unlimited. Default `null`. */
  workerLimit: number | null = null;
  /** Seconds an idle per-object worker lives before exiting. Default 5 s. */
  idleTimeout = 5;
  /** Seconds given to workers to drain when a watcher stops. Default 2 s. */
  exitTimeout = 2;
  /** Throttling delays after unexpected errors, seconds, used in order (the last repeats). */
  errorDelays: readonly number[] = [1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610];
  /** Deprecated; has no effect. Default 0.1 s. */
  batchWindow = 0.1;
}

/** Discovery of CRDs and namespaces (R-RES, R-SCOPE). */
export class ScanningSettings {
  /** Disable observing CRDs and namespaces (use only what exists at startup). Default `false`. */
  disabled = false;
}

/** Admission webhooks (R-ADMISSION). */
export class AdmissionSettings {
  /** The webhook server or tunnel serving admission requests; `null` = none. Default `null`. */
  server: webhooks.WebhookServerLike | null = null;
  /** Name of the managed webhook configurations; `null` = not managed. Default `null`. */
  managed: string | null = null;
}

/**
 * The operator's health: probes, the liveness verdict on watch-streams, and readiness (served with
 * the liveness endpoint; see docs/health.md). All budgets are seconds; `null` disables a check.
 *
 * The defaults are safe with real API servers: they send a bookmark on every watch about once a
 * minute, and the watcher itself reconnects a silent stream after `watching.inactivityTimeout`
 * (70 s), so five minutes without a single line, or without a connection, means something is wrong.
 */
export class HealthSettings {
  /**
   * Seconds a probe may run before the liveness endpoint answers without it (HTTP 500 naming the
   * probe); keep it below the kubelet's `timeoutSeconds`. Default 5 s.
   */
  probeTimeout = 5;
  /**
   * Seconds a watch-stream's initial listing, resource discovery and the readiness barrier of the
   * indices (R-INDEX-7) may take before the operator counts as unhealthy. Default 300 s.
   */
  listingBudget: number | null = 300;
  /**
   * Seconds a watch-stream that should be open may stay without a connection (reconnecting,
   * re-listing, failing) before the operator counts as unhealthy. Default 300 s.
   */
  downtimeBudget: number | null = 300;
  /**
   * Seconds a watch-stream may go without any line — events or bookmarks, across reconnections —
   * before the operator counts as unhealthy. Set `null` for API servers that send no bookmarks
   * (e.g. some aggregated APIs) and resources that rarely change. Default 300 s.
   */
  silenceBudget: number | null = 300;
  /**
   * The path of the readiness endpoint, served on the liveness endpoint's host and port;
   * `null` serves none. Default `'/readyz'`.
   */
  readinessPath: string | null = '/readyz';
}

/** Handler execution (R-ERRORS). */
export class ExecutionSettings {
  /** Back-off after arbitrary (unexpected) handler errors, seconds. Default 60 s. */
  defaultBackoff = 60;
  private workers: number | null = null;

  /**
   * Size of the pool for synchronous handlers; `null` = the runtime's choice. Default `null`.
   * The port may not use a pool at all, but values below 1 throw a `SettingsError`.
   */
  get maxWorkers(): number | null {
    return this.workers;
  }

  set maxWorkers(value: number | null) {
    if (value !== null && !(value >= 1)) throw new SettingsError(`execution.maxWorkers must be at least 1, got ${value}.`);
    this.workers = value;
  }
}

/** Daemons and timers (R-DAEMON, R-TIMER). */
export class BackgroundSettings {
  /** How often a stopping daemon/timer is re-checked for cancellation, seconds. Default 60 s. */
  cancellationPolling = 60;
  /** See R-DAEMON-11: how long an instantly exiting daemon is waited for; `null` = off. Default `null`. */
  instantExitTimeout: number | null = null;
  /** See R-DAEMON-11: zero-time cycles given to an instantly exiting daemon. Default 10. */
  instantExitZeroTimeCycles = 10;
}

/** API requests (R-AUTH). */
export class NetworkingSettings {
  /** Total timeout of one API request, seconds. Default 300 s. */
  requestTimeout: number | null = 300;
  /** Connect timeout of API requests, seconds; `null` = none. Default `null`. */
  connectTimeout: number | null = null;
  /** Back-offs between retries of failed requests, seconds, in order. */
  errorBackoffs: readonly number[] = [1, 1, 2, 3, 5, 8, 13, 21];
  /** Always obey the server's `Retry-After` (even beyond the back-offs). Default `false`. */
  enforceRetryAfter = false;
  /** Use proxy settings from environment variables. Default `false`. */
  trustEnv = false;
  /**
   * Seconds a kubeconfig user's exec credential plugin may run before it is killed and the login
   * fails (R-AUTH-7); `null` = no limit (as kubectl). Default 60 s.
   */
  execPluginTimeout: number | null = 60;
}

/** Where the operator keeps its state on objects (R-STORAGE, R-FINAL). */
export class PersistenceSettings {
  /** The finalizer. Default `kopf.zalando.org/KopfFinalizerMarker`. */
  finalizer = 'kopf.zalando.org/KopfFinalizerMarker';
  /** Per-handler progress storage. Default `new SmartProgressStorage()` (R-STORAGE-1). */
  progressStorage: progress.ProgressStorage = new progress.SmartProgressStorage();
  /** Last-handled essence storage. Default `new AnnotationsDiffBaseStorage()` (R-STORAGE-2). */
  diffbaseStorage: diffbase.DiffBaseStorage = new diffbase.AnnotationsDiffBaseStorage();
  /** Seconds to wait for the operator's own patch to come back before going on. Default 5 s. */
  consistencyTimeout = 5;
}

/**
 * All settings of one operator. Every group is a fresh object per instance.
 *
 * @example
 * const settings = new OperatorSettings();
 * settings.execution.defaultBackoff = 1;
 * settings.watching.serverTimeout = 10;
 */
export class OperatorSettings {
  readonly process = new ProcessSettings();
  readonly posting = new PostingSettings();
  readonly peering = new PeeringSettings();
  readonly leaderElection = new LeaderElectionSettings();
  readonly watching = new WatchingSettings();
  readonly queueing = new QueueingSettings();
  readonly scanning = new ScanningSettings();
  readonly admission = new AdmissionSettings();
  readonly health = new HealthSettings();
  readonly execution = new ExecutionSettings();
  readonly background = new BackgroundSettings();
  readonly networking = new NetworkingSettings();
  readonly persistence = new PersistenceSettings();
  private readonly warn: (message: string) => void;

  /** @param options.warn receives deprecation warnings (default: a Node `DeprecationWarning`). */
  constructor(options?: { readonly warn?: (message: string) => void }) {
    this.warn = options?.warn ?? ((message) => process.emitWarning(message, 'DeprecationWarning'));
  }

  /** @deprecated Use `queueing`; this legacy alias returns the same object and warns. */
  get batching(): QueueingSettings {
    this.warn('settings.batching is deprecated; use settings.queueing instead.');
    return this.queueing;
  }
}
