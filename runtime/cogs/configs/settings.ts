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
 *
 * A setting that does not exist cannot be set (R-CONFIG-3): the settings object and each of its
 * groups throw a `SettingsError` naming the setting (and the one probably meant) instead of
 * silently keeping a value nothing reads. Settings kept from Kopf that have no effect here warn
 * once per settings object when they are set (R-CONFIG-4): `queueing.batchWindow`,
 * `execution.maxWorkers`, and the `batching` alias.
 */

import * as diffbase from './diffbase.js';
import * as progress from './progress.js';
import * as secrets from './secrets.js';
import type * as webhooks from '../structs/webhooks.js';
import { SettingsError } from './errors.js';

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
    checkTimings('leaderElection', this);
    if (this.leaseName !== null && (typeof this.leaseName !== 'string' || this.leaseName === '')) {
      throw new SettingsError(`leaderElection.leaseName must be a non-empty string or null, got ${JSON.stringify(this.leaseName)}.`);
    }
    if (this.leaseNamespace !== null && (typeof this.leaseNamespace !== 'string' || this.leaseNamespace === '')) {
      throw new SettingsError(`leaderElection.leaseNamespace must be a non-empty string or null, got ${JSON.stringify(this.leaseNamespace)}.`);
    }
  }
}

/**
 * Sharding (docs/sharding.md): the objects of the served resources are spread over the operator's
 * replicas, each holding its own `coordination.k8s.io/v1` Lease; an object's owner is written into
 * the label `shard.kopf-gen.dev/<ring>` of the object, and each replica watches only its own.
 * On when `ring` is set; Kopf peering and Lease election are off then. The durations are seconds and
 * must keep `retryPeriod < renewDeadline < leaseDuration` (as `leaderElection`): a replica stops
 * working when it could not renew its Lease for `renewDeadline`, while the others take its objects
 * over only after its Lease has not changed for `leaseDuration`.
 */
export class ShardingSettings {
  /** The ring's name: the replicas of one operator share it (a label name, ≤ 63 characters); `null` = no sharding. Default `null`. */
  ring: string | null = null;
  /**
   * This replica's identity (a label value, ≤ 63 characters); `null` = `$POD_NAME`, else
   * `<hostname>-<pid>` made a label value. Default `null`.
   */
  identity: string | null = null;
  /**
   * The Leases' namespace; `null` = `$POD_NAMESPACE`, else the in-cluster service account's
   * namespace, else `default`. Default `null`.
   */
  namespace: string | null = null;
  /** What assigns an object to a replica: its `uid`, or its `namespace` (one namespace's objects stay together). Default `'uid'`. */
  key: 'uid' | 'namespace' = 'uid';
  /** Seconds after the last renewal a replica saw before it considers the renewer gone (whole seconds). Default 15 s. */
  leaseDuration = 15;
  /** Seconds a replica keeps trying to renew its Lease before it stops working (fences itself). Default 10 s. */
  renewDeadline = 10;
  /** Seconds between renewals, and between reads of the ring's Leases. Default 2 s. */
  retryPeriod = 2;

  /**
   * Checks the timings (as `leaderElection`'s), the ring's name (a label name's part after the
   * prefix: it makes the owner label `shard.kopf-gen.dev/<ring>`), the identity (a label value),
   * the key and the namespace. An operator calls it at startup, and after the startup activity.
   *
   * @throws SettingsError naming the setting and its value.
   */
  validate(): void {
    checkTimings('sharding', this);
    if (this.ring !== null && (typeof this.ring !== 'string' || !isLabelNamePart(this.ring))) {
      throw new SettingsError(
        `sharding.ring must be null or a label name (at most 63 characters: letters, digits, '-', '_', '.', starting and ending with a letter or digit), got ${JSON.stringify(this.ring)}.`,
      );
    }
    if (this.identity !== null && (typeof this.identity !== 'string' || this.identity === '' || !isLabelValue(this.identity))) {
      throw new SettingsError(
        `sharding.identity must be null or a non-empty label value (at most 63 characters: letters, digits, '-', '_', '.', starting and ending with a letter or digit), got ${JSON.stringify(this.identity)}.`,
      );
    }
    if (this.key !== 'uid' && this.key !== 'namespace') {
      throw new SettingsError(`sharding.key must be 'uid' or 'namespace', got ${JSON.stringify(this.key)}.`);
    }
    if (this.namespace !== null && (typeof this.namespace !== 'string' || this.namespace === '')) {
      throw new SettingsError(`sharding.namespace must be a non-empty string or null, got ${JSON.stringify(this.namespace)}.`);
    }
  }
}

/** The name part of a label key, and a non-empty label value: at most 63 characters, alphanumeric at both ends. */
const LABEL_WORD = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** Whether `text` is a label name without its prefix (`shard.kopf-gen.dev/<text>`). */
export function isLabelNamePart(text: string): boolean {
  return text.length <= 63 && LABEL_WORD.test(text);
}

/** Whether `text` is a label value (the empty value included). */
export function isLabelValue(text: string): boolean {
  return text === '' || isLabelNamePart(text);
}

/**
 * The Lease timings shared by `leaderElection` and `sharding`: positive seconds, a whole
 * `leaseDuration` (the Lease's `leaseDurationSeconds`), `retryPeriod < renewDeadline < leaseDuration`.
 */
function checkTimings(group: string, timings: { readonly leaseDuration: number; readonly renewDeadline: number; readonly retryPeriod: number }): void {
  const durations = { leaseDuration: timings.leaseDuration, renewDeadline: timings.renewDeadline, retryPeriod: timings.retryPeriod } as const;
  for (const [name, value] of Object.entries(durations)) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
      throw new SettingsError(`${group}.${name} must be a positive number of seconds, got ${String(value)}.`);
    }
  }
  if (!Number.isInteger(timings.leaseDuration)) {
    throw new SettingsError(`${group}.leaseDuration must be a whole number of seconds (the Lease's leaseDurationSeconds), got ${timings.leaseDuration}.`);
  }
  if (!(timings.renewDeadline < timings.leaseDuration)) {
    throw new SettingsError(`${group}.renewDeadline (${timings.renewDeadline} s) must be less than ${group}.leaseDuration (${timings.leaseDuration} s).`);
  }
  if (!(timings.retryPeriod < timings.renewDeadline)) {
    throw new SettingsError(`${group}.retryPeriod (${timings.retryPeriod} s) must be less than ${group}.renewDeadline (${timings.renewDeadline} s).`);
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

/** Receives the warnings about settings that have no effect (once per setting and settings object). */
type Warn = (message: string) => void;

/** How deprecations are told when nobody asked otherwise: a Node `DeprecationWarning`. */
const emitDeprecation: Warn = (message) => process.emitWarning(message, 'DeprecationWarning');

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
  private window = 0.1;
  private windowWarned = false;
  private readonly warnOf: Warn;

  /** @param options.warn receives the deprecation warning of `batchWindow` (default: a Node `DeprecationWarning`). */
  constructor(options?: { readonly warn?: Warn }) {
    this.warnOf = options?.warn ?? emitDeprecation;
  }

  /**
   * Deprecated, no effect (Kopf's batching is gone: every event is processed). Setting it warns
   * once (R-CONFIG-4). Default 0.1 s.
   */
  get batchWindow(): number {
    return this.window;
  }

  set batchWindow(value: number) {
    if (!this.windowWarned) {
      this.windowWarned = true;
      this.warnOf('settings.queueing.batchWindow is deprecated and has no effect: every event is processed as it comes.');
    }
    this.window = value;
  }
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

/** Conversion webhooks of CRDs (R-CONVERT-208). */
export class ConversionSettings {
  /**
   * Whether the operator writes `spec.conversion` of every CRD it has converters for, pointing it at
   * its admission server (`settings.admission.server`), and keeps it up to date when the server's
   * certificate changes. Changing CRDs is a cluster-admin action: off by default. Default `false`.
   */
  managed = false;
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
  /**
   * Whether the liveness endpoint says why a probe failed (its error message) — to callers on the
   * loopback interface only (`kubectl port-forward`, a sidecar); everyone else, the kubelet
   * included, gets only that it failed, and the message is in the operator's log. Default `false`
   * (R-SEC-14).
   */
  details = false;
}

/** Handler execution (R-ERRORS). */
export class ExecutionSettings {
  /** Back-off after arbitrary (unexpected) handler errors, seconds. Default 60 s. */
  defaultBackoff = 60;
  private workers: number | null = null;
  private workersWarned = false;
  private readonly warnOf: Warn;

  /** @param options.warn receives the warning that `maxWorkers` has no effect (default: a Node `DeprecationWarning`). */
  constructor(options?: { readonly warn?: Warn }) {
    this.warnOf = options?.warn ?? emitDeprecation;
  }

  /**
   * Kopf's size of the thread pool of synchronous handlers. Accepted and validated (values below 1
   * throw a `SettingsError`), but without effect: handlers run on the event loop, there is no
   * pool. Setting it warns once (R-CONFIG-4); `queueing.workerLimit` limits how many objects are
   * handled at once. Default `null`.
   */
  get maxWorkers(): number | null {
    return this.workers;
  }

  set maxWorkers(value: number | null) {
    if (value !== null && !(value >= 1)) throw new SettingsError(`execution.maxWorkers must be at least 1, got ${value}.`);
    if (!this.workersWarned) {
      this.workersWarned = true;
      this.warnOf(
        'settings.execution.maxWorkers has no effect: handlers run on the event loop, not in a thread pool; use settings.queueing.workerLimit to limit how many objects are handled at once.',
      );
    }
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
  /**
   * Seconds the TLS handshake of a new connection may take, from the TCP connection on (R-SEC-25;
   * client-go's default): a server that accepts connections but never answers fails the request
   * then, naming its address, rather than at `requestTimeout`. `null` = no limit (as Kopf). Default 10 s.
   */
  tlsHandshakeTimeout: number | null = 10;
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
  /**
   * Secret-like fields by kind (`Kind` for the core group, else `Kind.group`): their values are
   * stored in the diff-base as sha-256 digests and never logged (R-SEC-18, R-SEC-20). Default
   * `{ Secret: ['data', 'stringData'] }`; add e.g. `settings.persistence.secretFields['Database.example.com'] = ['spec.password']`.
   */
  secretFields: Record<string, readonly (string | readonly string[])[]> = secrets.defaultSecretFields();
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
  readonly process: ProcessSettings;
  readonly posting: PostingSettings;
  readonly peering: PeeringSettings;
  readonly leaderElection: LeaderElectionSettings;
  readonly sharding: ShardingSettings;
  readonly watching: WatchingSettings;
  readonly queueing: QueueingSettings;
  readonly scanning: ScanningSettings;
  readonly admission: AdmissionSettings;
  readonly conversion: ConversionSettings;
  readonly health: HealthSettings;
  readonly execution: ExecutionSettings;
  readonly background: BackgroundSettings;
  readonly networking: NetworkingSettings;
  readonly persistence: PersistenceSettings;
  private readonly warn: Warn;

  /** @param options.warn receives deprecation warnings (default: a Node `DeprecationWarning`). */
  constructor(options?: { readonly warn?: Warn }) {
    this.warn = options?.warn ?? emitDeprecation;
    const warn = this.warn;
    this.process = strict(new ProcessSettings(), 'settings.process');
    this.posting = strict(new PostingSettings(), 'settings.posting');
    this.peering = strict(new PeeringSettings(), 'settings.peering');
    this.leaderElection = strict(new LeaderElectionSettings(), 'settings.leaderElection');
    this.sharding = strict(new ShardingSettings(), 'settings.sharding');
    this.watching = strict(new WatchingSettings(), 'settings.watching');
    this.queueing = strict(new QueueingSettings({ warn }), 'settings.queueing');
    this.scanning = strict(new ScanningSettings(), 'settings.scanning');
    this.admission = strict(new AdmissionSettings(), 'settings.admission');
    this.conversion = strict(new ConversionSettings(), 'settings.conversion');
    this.health = strict(new HealthSettings(), 'settings.health');
    this.execution = strict(new ExecutionSettings({ warn }), 'settings.execution');
    this.background = strict(new BackgroundSettings(), 'settings.background');
    this.networking = strict(new NetworkingSettings(), 'settings.networking');
    this.persistence = strict(new PersistenceSettings(), 'settings.persistence');
    // biome-ignore lint/correctness/noConstructorReturn: the settings object refuses unknown settings as its groups do (R-CONFIG-3)
    return strict(this, 'settings');
  }

  /** @deprecated Use `queueing`; this legacy alias returns the same object and warns. */
  get batching(): QueueingSettings {
    this.warn('settings.batching is deprecated; use settings.queueing instead.');
    return this.queueing;
  }
}

/**
 * Settings of Kopf whose name here is not just Kopf's in camelCase, or that mean something else:
 * the setting meant by a name that does not exist in a group.
 */
const MEANT: Readonly<Record<string, string>> = {
  namespaced: 'clusterwide (true for cluster-wide peering, false for namespaced)',
  batching: 'queueing',
};

/** The setting probably meant by an unknown name of a group: Kopf's snake_case in camelCase, a known alias, or none. */
function meant(target: object, name: string): string | undefined {
  const camel = name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
  if (camel !== name && camel in target) return camel;
  return Object.hasOwn(MEANT, name) ? MEANT[name] : undefined;
}

/** The fields behind the accessors of the groups: not settings. */
const INTERNAL: ReadonlySet<string> = new Set(['constructor', 'warn', 'warnOf', 'window', 'windowWarned', 'workers', 'workersWarned']);

/** The settings of a group (its fields and settable accessors), for the error of an unknown one. */
function known(target: object): string[] {
  const names = new Set<string>();
  for (let proto: object | null = target; proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const [name, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(proto))) {
      if (INTERNAL.has(name) || typeof descriptor.value === 'function' || (descriptor.get !== undefined && descriptor.set === undefined)) continue;
      names.add(name);
    }
  }
  return [...names].sort();
}

/**
 * A settings object that throws a `SettingsError` when a setting it does not have is assigned or
 * defined (R-CONFIG-3): `settings.peering.namespaced = true` would otherwise be kept and never read.
 */
function strict<T extends object>(target: T, path: string): T {
  const refuse = (name: string | symbol): never => {
    const text = String(name);
    const suggestion = meant(target, text);
    const hint = suggestion !== undefined ? `did you mean ${path}.${suggestion}?` : `the settings there are: ${known(target).join(', ')}.`;
    throw new SettingsError(`${path}.${text} is not a setting: ${hint}`);
  };
  return new Proxy(target, {
    set(object, name, value, receiver) {
      if (typeof name === 'string' && !(name in object)) refuse(name);
      return Reflect.set(object, name, value, receiver);
    },
    defineProperty(object, name, descriptor) {
      if (typeof name === 'string' && !(name in object)) refuse(name);
      return Reflect.defineProperty(object, name, descriptor);
    },
  });
}
