/**
 * DevCluster: an in-process Kubernetes API server on loopback (D-GEN-1..8).
 *
 * It wires the store, the registry of served types, the watch hub, the controllers, the HTTP(S)
 * listener with authentication/authorization, and the test controls of D-FAULT. Everything a
 * client can observe goes through the same pipeline as a real request, including the out-of-band
 * writes of `cluster.store` (they only skip the network).
 *
 * Limits (documented divergences, in the spirit of controller-runtime's fake client doc): no
 * workloads run, no protobuf, CEL best effort, no validation ratcheting,
 * built-in `/status` writes replace only `status`.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type * as net from 'node:net';
import * as path from 'node:path';
import type * as tls from 'node:tls';
import * as YAML from 'yaml';
import * as chain from './admission/chain.js';
import * as calling from './admission/calling.js';
import * as clock from './clock.js';
import * as ids from './ids.js';
import * as core from './api/core.js';
import * as converting from './api/converting.js';
import * as creating from './api/creating.js';
import * as deleting from './api/deleting.js';
import * as objects from './api/objects.js';
import * as resources from './api/resources.js';
import * as updating from './api/updating.js';
import * as watching from './api/watching.js';
import * as authentication from './auth/authentication.js';
import * as authorization from './auth/authorization.js';
import * as bootstrap from './auth/bootstrap.js';
import * as certs from './auth/certs.js';
import * as rbac from './auth/rbac.js';
import * as reviews from './auth/reviews.js';
import * as tokens from './auth/tokens.js';
import * as users from './auth/users.js';
import * as catalog from './builtins/catalog.js';
import * as crdkind from './builtins/customresourcedefinitions.js';
import * as controllers from './controllers/index.js';
import * as loop from './controllers/loop.js';
import * as faultrules from './faults/rules.js';
import * as kubeconfig from './kubeconfig.js';
import * as handling from './server/handling.js';
import * as hostcheck from './server/hostcheck.js';
import * as requestlog from './server/requestlog.js';
import * as statuses from './server/statuses.js';
import * as revisions from './store/revisions.js';
import * as persistence from './persistence/state.js';
import * as loading from './persistence/loading.js';
import type { JsonObject } from './json.js';
import * as json from './json.js';

export interface DevClusterOptions {
  /** Listening port; 0 picks a free one. */
  port?: number;
  /** Listening address; loopback unless explicitly configured (D-GEN-1). */
  host?: string;
  /** HTTPS with a generated CA (default true). */
  tls?: boolean;
  /**
   * Without TLS, requests are refused unless their `Host` (and `Origin`, if any) names loopback or
   * the listening address (D-SEC-1): these host names are accepted too.
   */
  allowedHosts?: readonly string[];
  /** Reported by `/version` (default `v1.32.0`, the version whose API the devcluster serves). */
  version?: string;
  startRevision?: number;
  historyLimit?: number;
  /** Periodic compaction to "the revision of N ms ago" (default off). */
  compactionIntervalMs?: number;
  bookmarkIntervalMs?: number;
  /** Server-side watch lifetime in ms without timeoutSeconds (default random in [1800 s, 3600 s)). */
  watchDefaultTimeoutMs?: number;
  tooLargeRvWaitMs?: number;
  /**
   * `"none"`: every request is the admin (default, unless `authorization` is `"rbac"`);
   * `"enforced"`: requests authenticate with a token or client certificate (D-AUTH-1).
   */
  auth?: 'none' | 'enforced';
  /**
   * Who may do what (D-AUTH-16): `"rules"` (default) — the rule list of `cluster.auth.authorizer`
   * with its default decision; `"rbac"` — the stored Roles, ClusterRoles and bindings decide, after
   * the rule list and the `system:masters` group, as kube-apiserver's RBAC authorizer. `"rbac"`
   * implies `auth: "enforced"` (with `auth: "none"` every request would be the admin).
   */
  authorization?: authorization.AuthorizationMode;
  /** Anonymous requests in enforced mode (default false). */
  anonymous?: boolean;
  aggregatedDiscovery?: boolean;
  /** `/openapi/v3` served (`"full"`, the default) or answered 404 as by a server without it (D-WIRE-34). */
  openapiV3?: '404' | 'full';
  controllers?: Partial<controllers.ControllerSwitches>;
  /** Garbage collector options: `deleteOrphansOnCreate` (default true) collects dependents created with missing owners (D-VERB-35). */
  gc?: { deleteOrphansOnCreate?: boolean };
  /** Delay before the pod-termination controller completes graceful deletions (ms). */
  podTerminationDelayMs?: number;
  cel?: 'on' | 'off';
  /**
   * The cluster's time: timestamps and every timer (default: the real clock). The virtual clock of
   * `kopf-gen/testing` fits, and the same instance can drive the operator under test.
   */
  clock?: clock.Clock;
  seed?: number;
  /** Fixed delay applied to every non-watch request (D-FAULT-2). */
  latencyMs?: number;
  /** Events a slow watch client may have pending before its stream ends (D-WATCH-14). */
  watchQueueLimit?: number;
  /** CRDs to create at start (objects, YAML text or file paths). */
  crds?: (JsonObject | string)[];
  /** Maps a webhook's service reference to `host:port` (default `127.0.0.1:<port>`, D-ADM-11). */
  webhookServiceResolver?: calling.ServiceResolver;
  /** Allow http:// webhook URLs and skip certificate checks (divergence, D-ADM-10). */
  webhookInsecure?: boolean;
  /**
   * Called after each webhook call with its name, duration in milliseconds (wall time, from the
   * request's start to the answer or the failure) and whether the call itself succeeded
   * (D-ADM-8 failures: false). For measuring webhook servers from the API server's side.
   */
  onWebhookCall?: (call: chain.WebhookCallRecord) => void;
  /**
   * The timeout of conversion webhook calls, in seconds (default 30, upstream's, which a CRD cannot
   * change; D-CONV-401). Tests of a webhook that never answers make it small.
   */
  conversionWebhookTimeoutSeconds?: number;
  /** Called with warnings of the emulator itself (CEL rules skipped, controller errors). */
  onWarning?: (message: string) => void;
  /**
   * The folder the cluster's objects are kept in (D-PERSIST-301): at start every object kept there
   * is served again (with its uid, resourceVersion, timestamps and finalizers), every write is
   * journaled there, and `stop()` writes what is pending. Created if missing; locked while the
   * cluster runs (D-PERSIST-305); `DevCluster.resetState(dir)` empties it (D-PERSIST-307).
   */
  stateDir?: string;
  /** Records after which the state folder's journal is compacted into a snapshot (default 10,000). */
  stateSnapshotEvery?: number;
}

/** Options of the cluster's kubeconfig: the context's namespace, and a token other than the admin's. */
export interface KubeconfigOptions {
  namespace?: string;
  token?: string;
}

export interface RestartOptions {
  downtimeMs?: number;
  refuse?: boolean;
  resetHistory?: boolean;
}

/** A reference to a resource for the out-of-band store API. */
export type TypeRef = { apiVersion: string; kind: string } | { group: string; version: string; resource: string };

export class DevCluster {
  readonly clock: clock.Clock;
  readonly faults: faultrules.Faults;
  readonly requests = new requestlog.RequestLog();
  readonly watchEvents: watching.WatchLogEntry[] = [];
  readonly auth: {
    readonly tokens: tokens.TokenTable;
    readonly authorizer: authorization.Authorizer;
    /** The authentication mode in effect (D-AUTH-1). */
    readonly mode: 'none' | 'enforced';
    addToken: tokens.TokenTable['add'];
    revokeToken: tokens.TokenTable['revoke'];
    setExpiry: tokens.TokenTable['setExpiry'];
    issueClientCert(opts: { username: string; groups?: string[]; notBefore?: Date; notAfter?: Date }): Promise<certs.KeyPairPem>;
    /**
     * A token of an existing ServiceAccount, as a TokenRequest returns it (D-AUTH-9): it
     * authenticates as `system:serviceaccount:<namespace>:<name>` (groups `system:serviceaccounts`,
     * `system:serviceaccounts:<namespace>`) for `expirationSeconds` (default 3600).
     */
    serviceAccountToken(opts: { namespace: string; name: string; expirationSeconds?: number }): string;
  };
  /** Out-of-band writes and reads as an internal actor (D-FAULT-10). */
  readonly store: OutOfBand;

  private readonly core: core.Core;
  private readonly hub: watching.WatchHub;
  private readonly loop: loop.ControllerLoop;
  private server: http.Server | https.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private ca: certs.CertificateAuthority | undefined;
  private serving: certs.KeyPairPem | undefined;
  private adminToken = '';
  private boundPort = 0;
  private pausedGate: { promise: Promise<void>; resolve: () => void } | undefined;
  private heldRequests = 0;
  private unavailableFlag = false;
  private cancelCompaction: (() => void) | undefined;
  private readonly adminUser: users.UserInfo;
  private readonly authMode: 'none' | 'enforced';
  private readonly folder: persistence.StateFolder | undefined;

  private constructor(private readonly options: DevClusterOptions) {
    if (options.openapiV3 !== undefined && options.openapiV3 !== 'full' && options.openapiV3 !== '404') {
      throw new Error(`devcluster: option openapiV3 must be "full" or "404", not ${JSON.stringify(options.openapiV3)}`);
    }
    this.clock = options.clock ?? clock.realClock;
    const mode = options.authorization ?? 'rules';
    if (mode !== 'rules' && mode !== 'rbac') throw new Error(`devcluster: option authorization must be "rules" or "rbac", not ${JSON.stringify(mode)}`);
    if (options.auth !== undefined && options.auth !== 'none' && options.auth !== 'enforced') {
      throw new Error(`devcluster: option auth must be "none" or "enforced", not ${JSON.stringify(options.auth)}`);
    }
    if (mode === 'rbac' && options.auth === 'none') {
      throw new Error('devcluster: authorization "rbac" needs auth "enforced" (with auth "none" every request is the admin, whom RBAC always allows)');
    }
    const warn = options.onWarning ?? ((m: string) => process.emitWarning(`devcluster: ${m}`));
    // The state folder is opened (locked and read) first: its revision seeds the identities, so a
    // seeded cluster restarted on its folder does not hand out the uids of the objects it kept.
    const folder = options.stateDir
      ? persistence.StateFolder.open(options.stateDir, { warn, ...(options.stateSnapshotEvery ? { snapshotEvery: options.stateSnapshotEvery } : {}) })
      : undefined;
    this.folder = folder;
    const restoring = folder?.restoring ?? false;
    const idSource = ids.createIds(options.seed === undefined || !restoring ? options.seed : (options.seed ^ folder!.loaded.revision) >>> 0);
    this.faults = new faultrules.Faults(idSource.random);
    const store = new revisions.Store({ startRevision: options.startRevision, historyLimit: options.historyLimit });
    if (restoring) store.restore(loading.entries(folder!.loaded), folder!.loaded.revision);
    const tokenTable = new tokens.TokenTable();
    this.authMode = options.auth ?? (mode === 'rbac' ? 'enforced' : 'none');
    const authorizer = new authorization.Authorizer(mode === 'rbac' ? { mode, rbac: new rbac.RbacAuthorizer(store) } : {});
    const registry = new resources.Registry();
    for (const t of catalog.builtinTypes()) registry.add(t);
    registry.add(crdkind.crdType());
    // --- Review APIs (D-AUTH-11..15): answered from the authorizer and token table above, never stored.
    // Registered after the catalog, so they replace any entry of the same resource it may have.
    // The review kinds are the catalog's, answered instead of stored (D-AUTH-11).
    for (const t of reviews.reviewTypes({ authorizer, tokens: tokenTable, now: () => new Date(this.clock.now()) })) {
      const served = registry.find(t.group, t.version, t.resource);
      registry.add(served ? { ...served, answer: t.answer, strategy: { ...t.strategy, normalize: served.strategy.normalize } } : t);
    }
    const waiters = new Set<{ rev: number; resolve: (ok: boolean) => void }>();
    store.subscribe((change) => {
      for (const w of waiters)
        if (change.rev >= w.rev) {
          waiters.delete(w);
          w.resolve(true);
        }
    });
    this.core = {
      store,
      registry,
      clock: this.clock,
      ids: idSource,
      admission: core.noAdmission,
      options: {
        cel: options.cel !== 'off',
        tooLargeRvWaitMs: options.tooLargeRvWaitMs ?? 3000,
        gcDeleteOrphansOnCreate: options.gc?.deleteOrphansOnCreate ?? true,
        webhooks: { resolver: options.webhookServiceResolver ?? calling.defaultServiceResolver, insecure: options.webhookInsecure ?? false },
        conversionTimeoutSeconds: options.conversionWebhookTimeoutSeconds,
        onConversionCall: options.onWebhookCall,
      },
      waitForRevision: (rev, timeoutMs) =>
        new Promise((resolve) => {
          if (store.revision >= rev) {
            resolve(true);
            return;
          }
          // The timer is cancelled when the revision comes, so it never lingers on a virtual clock.
          const w = {
            rev,
            resolve: (ok: boolean) => {
              cancel();
              resolve(ok);
            },
          };
          waiters.add(w);
          const cancel = this.clock.schedule(timeoutMs, () => {
            if (waiters.delete(w)) resolve(false);
          });
        }),
    };
    this.core.admission = new chain.WebhookAdmission(this.core, {
      resolver: options.webhookServiceResolver,
      insecure: options.webhookInsecure,
      onCall: options.onWebhookCall,
    });
    this.hub = new watching.WatchHub(store, this.clock, {
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
      queueLimit: options.watchQueueLimit ?? 10_000,
      onEvent: (e) => {
        if (this.watchEvents.length < 100_000) this.watchEvents.push(e);
      },
    });
    this.loop = new loop.ControllerLoop((key, err) => warn(`controller task ${key} failed: ${err instanceof Error ? err.stack : String(err)}`));
    controllers.startControllers(this.core, this.hub, this.loop, {
      switches: { ...controllers.DEFAULT_SWITCHES, ...options.controllers },
      podTerminationDelayMs: options.podTerminationDelayMs ?? 0,
      warn,
    });
    this.adminUser = users.adminUser(folder?.credentials?.adminUid ?? idSource.uid());
    this.auth = {
      tokens: tokenTable,
      authorizer,
      mode: this.authMode,
      addToken: (e) => tokenTable.add(e),
      revokeToken: (t) => tokenTable.revoke(t),
      setExpiry: (t, d) => tokenTable.setExpiry(t, d),
      issueClientCert: async (o) => {
        if (!this.ca) throw new Error('client certificates need a TLS devcluster (tls: true)');
        return certs.issueClientCertificate(this.ca, { ...o, now: new Date(this.clock.now()) });
      },
      serviceAccountToken: (o) => {
        const account = this.store.get({ apiVersion: 'v1', kind: 'ServiceAccount' }, o.name, o.namespace);
        if (!account) throw new Error(`serviceaccount ${o.namespace}/${o.name} does not exist: create it before asking for its token`);
        const uid = (account['metadata'] as JsonObject)['uid'];
        const entry = tokens.serviceAccountTokenEntry({
          namespace: o.namespace,
          name: o.name,
          uid: typeof uid === 'string' ? uid : undefined,
          now: new Date(this.clock.now()),
          expirationSeconds: o.expirationSeconds,
        });
        tokenTable.add(entry);
        return entry.token;
      },
    };
    this.store = new OutOfBand(this.core, this.loop, (ref) => this.resolveType(ref));
    if (folder) {
      // The controllers (CRDs first, so their types are served before anything looks them up) and
      // the RBAC index learn of the kept objects as of an initial list; then later writes are kept.
      if (restoring) store.announce([crdkind.crdType().storage, 'namespaces']);
      folder.attach(store);
    }
  }

  /** Starts a devcluster and waits until it listens and its initial objects exist. */
  static async start(options: DevClusterOptions = {}): Promise<DevCluster> {
    const cluster = new DevCluster(options);
    try {
      await cluster.init();
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  /**
   * Deletes the state kept in `dir` (D-PERSIST-307): the next cluster started on it starts empty.
   * Files in the folder that a devcluster did not write are left alone.
   *
   * @throws StateLockedError (code `StateLocked`) while a running devcluster uses the folder.
   */
  static resetState(dir: string): void {
    persistence.reset(dir);
  }

  private async init(): Promise<void> {
    const useTls = this.options.tls ?? true;
    const kept = this.folder?.credentials;
    this.adminToken = kept?.adminToken ?? tokens.generateToken();
    this.auth.addToken({ token: this.adminToken, username: users.ADMIN_USER, uid: this.adminUser.uid, groups: [users.MASTERS_GROUP] });
    if (useTls) {
      this.ca = kept?.ca
        ? await certs.loadCertificateAuthority(kept.ca.certPem, kept.ca.keyPem)
        : await certs.createCertificateAuthority({ now: new Date(this.clock.now()) });
      this.serving = await certs.issueServingCertificate(this.ca, {
        hosts: ['localhost', '127.0.0.1', '::1', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'],
        now: new Date(this.clock.now()),
      });
    }
    if (this.folder) {
      const ca = this.ca ? { certPem: this.ca.certPem, keyPem: this.ca.keyPem } : kept?.ca;
      this.folder.saveCredentials({ adminToken: this.adminToken, adminUid: this.adminUser.uid, ...(ca ? { ca } : {}) });
    }
    const restored = this.folder?.restoring ?? false;
    // Over kept state, the initial objects are created only where missing (D-PERSIST-301).
    for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      await this.createUnlessKept({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, restored);
    }
    if (this.auth.authorizer.mode === 'rbac') for (const object of bootstrap.bootstrapPolicy()) await this.createUnlessKept(object, restored);
    // Kept CRDs are served again before the first request is answered.
    if (restored) await this.settle();
    await this.listen(this.options.port ?? 0);
    if (this.options.compactionIntervalMs) this.scheduleCompaction(this.options.compactionIntervalMs);
    if (this.options.crds?.length) {
      if (restored) await this.applyCrds(this.options.crds);
      else await this.load(this.options.crds);
    }
    await this.settle();
  }

  /** Creates an object; over kept state, one that exists already is left as it is. */
  private async createUnlessKept(object: JsonObject, restored: boolean): Promise<void> {
    try {
      await this.store.create(object);
    } catch (err) {
      if (restored && err instanceof statuses.ApiError && err.code === 409) return;
      throw err;
    }
  }

  /**
   * The `crds` option over kept state (D-PERSIST-308): a CRD kept under the same name is replaced
   * by the given one, as `kubectl apply` would update it (its objects stay); new ones are created.
   */
  private async applyCrds(input: (JsonObject | string)[]): Promise<void> {
    const docs = parseDocuments(input);
    for (const doc of docs.filter((d) => d['kind'] === 'Namespace')) await this.createUnlessKept(doc, true);
    for (const doc of docs.filter((d) => d['kind'] === 'CustomResourceDefinition')) {
      const name = objects.nameOf(doc);
      const current = this.store.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' }, name);
      if (!current) await this.store.create(doc);
      else {
        const next = appliedOver(current, doc);
        if (!json.deepEqual(next, current)) await this.store.update(next);
      }
    }
    await this.settle();
    for (const doc of docs.filter((d) => d['kind'] !== 'Namespace' && d['kind'] !== 'CustomResourceDefinition')) await this.createUnlessKept(doc, true);
    await this.settle();
  }

  private scheduleCompaction(intervalMs: number): void {
    const marks: { at: number; rev: number }[] = [];
    const tick = (): void => {
      const now = this.clock.now();
      marks.push({ at: now, rev: this.core.store.revision });
      while (marks.length > 1 && marks[1]!.at <= now - intervalMs) marks.shift();
      if (marks[0] && marks[0].at <= now - intervalMs) this.compact(marks[0].rev);
      this.cancelCompaction = this.clock.schedule(Math.max(100, intervalMs / 4), tick);
    };
    tick();
  }

  private serverContext(): handling.ServerContext {
    const self = this;
    return {
      core: this.core,
      hub: this.hub,
      faults: this.faults,
      log: this.requests,
      version: this.options.version ?? 'v1.32.0',
      aggregatedDiscovery: this.options.aggregatedDiscovery ?? true,
      openapiV3: this.options.openapiV3 ?? 'full',
      latencyMs: this.options.latencyMs ?? 0,
      watchDefaultTimeoutMs: () => this.options.watchDefaultTimeoutMs ?? (1800 + Math.floor(this.core.ids.random() * 1800)) * 1000,
      serverAddress: () => `127.0.0.1:${this.boundPort}`,
      gate: () => {
        const gate = this.pausedGate;
        if (!gate) return Promise.resolve();
        this.heldRequests++;
        return gate.promise.finally(() => {
          this.heldRequests--;
        });
      },
      unavailable: () => this.unavailableFlag,
      tokens: this.auth.tokens,
      admit: this.hostCheck(),
      authenticate(req) {
        // Without enforcement every request runs as the admin user (a fresh copy, as authentication
        // returns): skip the TLS peer lookup and the clock on this per-request path.
        if (self.authMode === 'none') {
          const admin = self.adminUser;
          return { username: admin.username, uid: admin.uid, groups: [...admin.groups], ...(admin.extra ? { extra: json.deepCopy(admin.extra) } : {}) };
        }
        const socket = req.socket as tls.TLSSocket;
        const peer = typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate() : undefined;
        const result = authentication.authenticate(
          {
            authorization: req.headers.authorization,
            peerCertificate: peer as authentication.PeerCertificateInfo | undefined,
            peerAuthorized: socket.authorized,
          },
          {
            mode: self.authMode,
            anonymous: self.options.anonymous ?? false,
            tokens: self.auth.tokens,
            now: new Date(self.clock.now()),
            adminUser: self.adminUser,
          },
        );
        return result.ok ? result.user : undefined;
      },
      authorize(attrs, user) {
        const a: authorization.RequestAttributes =
          attrs.kind === 'resource'
            ? {
                kind: 'resource',
                verb: attrs.verb,
                apiGroup: attrs.apiGroup,
                resource: attrs.resource,
                subresource: attrs.subresource,
                namespace: attrs.namespace,
                name: attrs.name,
              }
            : { kind: 'nonResource', verb: attrs.verb, path: attrs.path };
        const decision = self.auth.authorizer.authorize(a, user);
        return decision.allowed ? undefined : authorization.forbiddenError(a, user, decision.reason);
      },
    };
  }

  /** The Host/Origin check of a plain-HTTP server (D-SEC-1); none with TLS. */
  private hostCheck(): handling.ServerContext['admit'] {
    if (this.options.tls ?? true) return undefined;
    const allowedHosts = [...(this.options.allowedHosts ?? [])];
    if (this.options.host) allowedHosts.push(this.options.host);
    return (req) => hostcheck.check({ host: req.headers.host, origin: req.headers.origin }, { allowedHosts });
  }

  private listen(port: number): Promise<void> {
    const ctx = this.serverContext();
    const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
      void handling.handle(ctx, req, res);
    };
    const server =
      this.ca && this.serving
        ? https.createServer(
            { key: this.serving.keyPem, cert: this.serving.certPem, ca: this.ca.certPem, requestCert: true, rejectUnauthorized: false, keepAlive: true },
            handler,
          )
        : http.createServer({ keepAlive: true }, handler);
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 70_000;
    server.requestTimeout = 0;
    server.on('connection', (socket: net.Socket) => {
      socket.setNoDelay(true);
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    if (this.ca)
      server.on('secureConnection', (socket: net.Socket) => {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
      });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, this.options.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        this.boundPort = (server.address() as net.AddressInfo).port;
        resolve();
      });
    });
  }

  /** `https://127.0.0.1:PORT` (or http). */
  get url(): string {
    return `${this.ca ? 'https' : 'http'}://127.0.0.1:${this.boundPort}`;
  }
  get port(): number {
    return this.boundPort;
  }
  /** The CA certificate (PEM), or undefined without TLS. */
  get caPem(): string | undefined {
    return this.ca?.certPem;
  }
  /** The bearer token of the `devcluster-admin` user in the generated kubeconfig. */
  get token(): string {
    return this.adminToken;
  }
  /** The current global revision. */
  get revision(): number {
    return this.core.store.revision;
  }

  /**
   * The kubeconfig of the admin, or of whoever `token` authenticates (e.g. a service account's,
   * `auth.serviceAccountToken(…)`).
   */
  kubeconfigObject(opts: KubeconfigOptions = {}): kubeconfig.KubeconfigObject {
    return kubeconfig.buildKubeconfig({ server: this.url, caPem: this.ca?.certPem, token: opts.token ?? this.adminToken, namespace: opts.namespace });
  }

  /** The kubeconfig as YAML text. */
  kubeconfig(opts: KubeconfigOptions = {}): string {
    return kubeconfig.kubeconfigYaml(this.kubeconfigObject(opts));
  }

  /** Writes the kubeconfig (mode 0600), creating parent folders; returns the path. */
  writeKubeconfig(file: string, opts: KubeconfigOptions = {}): string {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, this.kubeconfig(opts), { mode: 0o600 });
    return file;
  }

  /** Resolves when every controller is idle (D-FAULT-14). */
  settle(opts: { timeoutMs?: number } = {}): Promise<void> {
    return this.loop.settle(opts.timeoutMs);
  }

  /**
   * Creates objects in dependency order: namespaces and CRDs first (waiting for establishment),
   * then everything else (D-FAULT-11). Accepts objects, YAML texts and YAML file paths.
   */
  async load(input: (JsonObject | string)[] | JsonObject | string): Promise<JsonObject[]> {
    const docs = parseDocuments(Array.isArray(input) ? input : [input]);
    const rank = (o: JsonObject): number => (o['kind'] === 'Namespace' ? 0 : o['kind'] === 'CustomResourceDefinition' ? 1 : 2);
    const created: JsonObject[] = [];
    for (const phase of [0, 1, 2]) {
      for (const doc of docs.filter((d) => rank(d) === phase)) created.push(await this.store.create(doc));
      await this.settle();
    }
    return created;
  }

  /** Moves the compaction point (D-FAULT-7). */
  compact(revision?: number): void {
    this.core.store.compact(revision);
  }

  /** Acts on open watch streams (D-FAULT-6); `userAgent` matches the stream's `User-Agent` header. */
  dropWatches(match: { group?: string; resource?: string; namespace?: string; user?: string; userAgent?: RegExp }, mode: watching.DropMode): number {
    return this.hub.drop(match, mode);
  }

  /** Holds new requests and watch events until `resume()` (D-FAULT-9). */
  pause(): void {
    if (this.pausedGate) return;
    let resolve!: () => void;
    const promise = new Promise<void>((r) => {
      resolve = r;
    });
    this.pausedGate = { promise, resolve };
    this.hub.pause();
  }

  resume(): void {
    const gate = this.pausedGate;
    this.pausedGate = undefined;
    this.hub.resume();
    gate?.resolve();
  }

  /**
   * What a pause holds right now (D-FAULT-9): requests waiting to be served and watch events queued
   * for delivery. A test reads it to know that the pause took effect, instead of waiting a while.
   */
  held(): { requests: number; events: number } {
    return { requests: this.heldRequests, events: this.hub.queued };
  }

  /** Simulates an API server restart (D-FAULT-8). */
  async restart(opts: RestartOptions = {}): Promise<void> {
    const { downtimeMs = 0, refuse = true, resetHistory = true } = opts;
    // The downtime runs on the cluster's clock from the moment of the restart, so a test on virtual
    // time ends it by advancing the clock.
    const downtime = downtimeMs
      ? new Promise<void>((resolve) => {
          this.clock.schedule(downtimeMs, resolve);
        })
      : undefined;
    this.hub.closeAll('abort');
    if (resetHistory) this.core.store.compact();
    if (refuse) {
      await this.closeListener();
      await downtime;
      await this.listen(this.boundPort);
    } else {
      for (const s of this.sockets) s.destroy();
      this.unavailableFlag = true;
      await downtime;
      this.unavailableFlag = false;
    }
  }

  private closeListener(): Promise<void> {
    const server = this.server;
    if (!server) return Promise.resolve();
    this.server = undefined;
    return new Promise((resolve) => {
      server.close(() => resolve());
      for (const s of this.sockets) s.destroy();
      server.closeAllConnections?.();
    });
  }

  /** Stops the server, ends every watch and releases all timers. */
  async stop(): Promise<void> {
    this.cancelCompaction?.();
    this.loop.stop();
    this.hub.closeAll('end');
    this.resume();
    await this.closeListener();
    // Every write made so far is on disk, and the folder is free for the next run (D-PERSIST-302).
    await this.folder?.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  /** Finds the served type for a reference (apiVersion+kind or group/version/resource). */
  resolveType(ref: TypeRef): resources.ResourceType {
    if ('resource' in ref) {
      const t = this.core.registry.find(ref.group, ref.version, ref.resource);
      if (!t) throw statuses.pathNotFound();
      return t;
    }
    const [group, version] = ref.apiVersion.includes('/') ? (ref.apiVersion.split('/') as [string, string]) : ['', ref.apiVersion];
    const t = this.core.registry.all().find((x) => x.group === group && x.version === version && x.kind === ref.kind);
    if (!t) throw new statuses.ApiError(404, 'NotFound', `no resource served for ${ref.apiVersion} ${ref.kind}`);
    return t;
  }
}

/** The out-of-band API (D-FAULT-10): writes as an internal actor, through the full pipeline. */
export class OutOfBand {
  constructor(
    private readonly c: core.Core,
    private readonly loop: loop.ControllerLoop,
    private readonly resolve: (ref: TypeRef) => resources.ResourceType,
  ) {}

  private request(type: resources.ResourceType, namespace: string | undefined, name: string | undefined, opts: WriteOptions): core.WriteRequest {
    return {
      type,
      namespace: type.namespaced ? (namespace ?? 'default') : undefined,
      name,
      subresource: opts.subresource,
      dryRun: false,
      fieldManager: opts.fieldManager ?? 'devcluster-test',
      fieldValidation: 'Warn',
      warnings: [],
      user: { username: 'system:devcluster:test', uid: '', groups: ['system:masters', 'system:authenticated'] },
    };
  }

  private core(opts: WriteOptions): core.Core {
    return opts.admission === false ? (Object.create(this.c, { admission: { value: core.noAdmission } }) as core.Core) : this.c;
  }

  /**
   * Reads an object in its served form, or undefined. Synchronous: an object of a CRD with a
   * conversion webhook stored in another version cannot be read here (a 500 that names `read`).
   */
  get(ref: TypeRef, name: string, namespace?: string): JsonObject | undefined {
    const type = this.resolve(ref);
    const stored = this.stored(type, name, namespace);
    if (!stored) return undefined;
    refuseUnconverted(type, [stored], 'get', 'read');
    return objects.toExternal(type, stored);
  }

  /** Lists objects in their served form (all namespaces unless given); synchronous, as `get`. */
  list(ref: TypeRef, namespace?: string): JsonObject[] {
    const type = this.resolve(ref);
    const items = this.storedList(type, namespace);
    refuseUnconverted(type, items, 'list', 'readAll');
    return items.map((o) => objects.toExternal(type, o));
  }

  /**
   * Reads an object in its served form, or undefined, as a GET does: an object stored in another
   * version of a CRD with a conversion webhook is converted through the webhook (D-CONV-413).
   */
  async read(ref: TypeRef, name: string, namespace?: string): Promise<JsonObject | undefined> {
    const type = this.resolve(ref);
    const stored = this.stored(type, name, namespace);
    return stored ? objects.toExternal(type, await converting.oneInVersion(type, stored)) : undefined;
  }

  /** Lists objects in their served form as a LIST does (one conversion webhook call for the items that need it, D-CONV-413). */
  async readAll(ref: TypeRef, namespace?: string): Promise<JsonObject[]> {
    const type = this.resolve(ref);
    const items = await converting.inVersion(type, this.storedList(type, namespace));
    return items.map((o) => objects.toExternal(type, o));
  }

  private stored(type: resources.ResourceType, name: string, namespace: string | undefined): JsonObject | undefined {
    return this.c.store.get(type.storage, revisions.objectKey(type.namespaced ? (namespace ?? 'default') : undefined, name));
  }

  private storedList(type: resources.ResourceType, namespace: string | undefined): JsonObject[] {
    const prefix = type.namespaced && namespace ? revisions.objectKey(namespace, '') : '';
    return this.c.store.list(type.storage, prefix);
  }

  async create(obj: JsonObject, opts: WriteOptions = {}): Promise<JsonObject> {
    const type = this.resolve({ apiVersion: String(obj['apiVersion']), kind: String(obj['kind']) });
    const result = await creating.create(this.core(opts), this.request(type, objects.namespaceOf(obj), undefined, opts), obj);
    return objects.toExternal(type, await converting.oneInVersion(type, result.object));
  }

  async update(obj: JsonObject, opts: WriteOptions = {}): Promise<JsonObject> {
    const type = this.resolve({ apiVersion: String(obj['apiVersion']), kind: String(obj['kind']) });
    const result = await updating.update(this.core(opts), this.request(type, objects.namespaceOf(obj), objects.nameOf(obj), opts), {
      kind: 'replace',
      body: obj,
    });
    return objects.toExternal(type, await converting.oneInVersion(type, result.object));
  }

  async patch(
    ref: TypeRef,
    name: string,
    patch: unknown,
    opts: WriteOptions & { namespace?: string; type?: 'merge-patch' | 'json-patch' | 'strategic-merge-patch' } = {},
  ): Promise<JsonObject> {
    const type = this.resolve(ref);
    const result = await updating.update(this.core(opts), this.request(type, opts.namespace, name, opts), {
      kind: 'patch',
      type: opts.type ?? 'merge-patch',
      patch,
    });
    return objects.toExternal(type, await converting.oneInVersion(type, result.object));
  }

  async delete(
    ref: TypeRef,
    name: string,
    opts: WriteOptions & { namespace?: string; propagationPolicy?: 'Foreground' | 'Background' | 'Orphan'; gracePeriodSeconds?: number } = {},
  ): Promise<void> {
    const type = this.resolve(ref);
    await deleting.remove(this.core(opts), this.request(type, opts.namespace, name, opts), {
      dryRun: false,
      propagationPolicy: opts.propagationPolicy,
      gracePeriodSeconds: opts.gracePeriodSeconds,
      preconditions: {},
    });
    void this.loop;
  }
}

/**
 * The error of a synchronous read (`get`, `list`) of objects that only a conversion webhook call
 * can show in the requested version: a 500 that says which asynchronous read to use instead.
 */
function refuseUnconverted(type: resources.ResourceType, stored: readonly JsonObject[], method: 'get' | 'list', instead: 'read' | 'readAll'): void {
  if (!converting.callsOut(type)) return;
  const apiVersion = resources.apiVersionOf(type);
  const other = stored.find((o) => o['apiVersion'] !== apiVersion);
  if (!other) return;
  const message =
    `cluster.store.${method}() cannot show ${type.kind} "${objects.nameOf(other)}" in ${apiVersion}: it is stored in ${String(other['apiVersion'])} ` +
    `and its CRD converts through a conversion webhook, which only an asynchronous read calls; use \`await cluster.store.${instead}(…)\` instead`;
  throw statuses.internal(message, [{ message }]);
}

export interface WriteOptions {
  /** Call admission webhooks (default true). */
  admission?: boolean;
  fieldManager?: string;
  subresource?: string;
}

/**
 * What `kubectl apply` of `given` makes of `current` when the fields it set before are the same
 * ones: the given spec, the given labels and annotations merged into the kept ones, and everything
 * the server or other writers set (uid, finalizers, status) kept.
 */
function appliedOver(current: JsonObject, given: JsonObject): JsonObject {
  const next = json.deepCopy(current);
  const meta = json.deepCopy(objects.metaOf(current));
  const givenMeta = objects.metaOf(given);
  for (const field of ['labels', 'annotations']) {
    const add = givenMeta[field];
    if (!json.isObject(add)) continue;
    const merged = json.isObject(meta[field]) ? (meta[field] as JsonObject) : {};
    for (const [k, v] of Object.entries(add)) json.setMember(merged, k, json.deepCopy(v));
    json.setMember(meta, field, merged);
  }
  json.setMember(next, 'metadata', meta);
  json.setMember(next, 'spec', json.deepCopy(given['spec']));
  return next;
}

function parseDocuments(inputs: (JsonObject | string)[]): JsonObject[] {
  const out: JsonObject[] = [];
  for (const input of inputs) {
    if (typeof input !== 'string') {
      out.push(input);
      continue;
    }
    const text = !input.includes('\n') && fs.existsSync(input) ? fs.readFileSync(input, 'utf8') : input;
    for (const doc of YAML.parseAllDocuments(text)) {
      const value = doc.toJS() as unknown;
      if (json.isObject(value)) out.push(value);
    }
  }
  return out;
}
