/**
 * The built-in webhook server (R-ADMISSION-9; Kopf: `kopf.WebhookServer` and its k3d, minikube and
 * Docker Desktop variants).
 *
 * A server listens locally, serves the operator's `WebhookFn` (see `serving`) and yields the client
 * configuration under which the API server reaches it: a `url` (or, for in-cluster deployments, a
 * `service` reference) and the `caBundle`. HTTPS is the default, with a certificate generated at
 * start for the names the server is reached by, or the user's own certificate files; those files
 * are re-read every `fileCheckInterval` seconds on the injected clock, and when they change the
 * server takes the new certificate and yields a new configuration (certificate rotation).
 *
 * Serving ends when the operator's signal (`environment.signal`) aborts or the server is disposed:
 * the socket is closed and the iteration ends. The variants only change the default host: the
 * name under which a local cluster of that kind reaches the developer's machine.
 */
import * as fs from 'node:fs/promises';

import * as aborts from '../../cogs/aio/aborts.js';
import * as clocks from '../../cogs/aio/clocks.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import type * as webhooks from '../../cogs/structs/webhooks.js';
import * as logging from '../../core/actions/logging.js';
import type * as hardening from '../../core/engines/hardening.js';
import * as addresses from './addresses.js';
import * as errors from './errors.js';
import * as listening from './listening.js';
import * as materials from './materials.js';
import * as serving from './serving.js';

/** Options of `WebhookServer` and its variants (Kopf's keyword arguments, in camelCase). */
export interface WebhookServerOptions {
  /** The address to listen on. Default: all interfaces. */
  readonly addr?: string;
  /** The port to listen on. Default (also `0`): a random free port. */
  readonly port?: number;
  /** The root path of the webhooks, e.g. `/hooks`. Default: none. */
  readonly path?: string;
  /**
   * The host name in the URL and the certificate. Default: the variant's host (k3d, minikube,
   * Docker Desktop), else the listening address made reachable (`0.0.0.0` → `127.0.0.1`, `::` →
   * `::1`, none → `localhost`).
   */
  readonly host?: string;
  /** The CA bundle (PEM) announced to the API server for a certificate given as files. */
  readonly cadata?: string | Uint8Array;
  /** A file with the CA bundle (PEM) announced to the API server; watched for changes. */
  readonly cafile?: string;
  /** A file to write the announced CA bundle to (e.g. for `curl --cacert`), at start and on rotation. */
  readonly cadump?: string;
  /** Serve plain HTTP (for a tunnel that terminates TLS; the API server itself calls only HTTPS). */
  readonly insecure?: boolean;
  /** The server's certificate (PEM; a chain may follow); watched for changes. Requires `pkeyfile`. */
  readonly certfile?: string;
  /** The server's private key (PEM); watched for changes. Requires `certfile`. */
  readonly pkeyfile?: string;
  /** The password of an encrypted `pkeyfile`. */
  readonly password?: string;
  /** More names (DNS or IP) for the generated certificate. */
  readonly extraSans?: readonly string[];
  /**
   * Client certificates: `none` (not asked for), `optional` (verified if sent), `required`.
   * Default: `optional` when a verification CA is given, else `none`. A verified certificate is
   * passed to handlers as `sslPeer`.
   */
  readonly verifyMode?: materials.VerifyMode;
  /** A file with the CA certificates (PEM) that client certificates are verified against; watched. */
  readonly verifyCafile?: string;
  /** A folder of such CA files (every file holding a PEM certificate is read). */
  readonly verifyCapath?: string;
  /** Such CA certificates (PEM). */
  readonly verifyCadata?: string | Uint8Array;
  /**
   * kopf-gen's addition: the Service in front of an in-cluster server. The yielded configuration
   * is then `{service: {namespace, name, port, path}, caBundle}` instead of a `url`, and a
   * generated certificate carries the Service's DNS names (`<name>.<namespace>.svc`, …).
   */
  readonly service?: addresses.ServiceOptions;
  /** Seconds between checks of the certificate files. Default 60. */
  readonly fileCheckInterval?: number;
  /** The largest accepted request body, in bytes. Default 8 MiB (see `serving.DEFAULT_BODY_LIMIT`). */
  readonly bodyLimit?: number;
  /** The deepest accepted nesting of a body's objects and arrays. Default 1,000 (`serving.DEFAULT_DEPTH_LIMIT`). */
  readonly depthLimit?: number;
  /** The most objects, arrays, members and items a body may have. Default 1,000,000 (`serving.DEFAULT_ITEM_LIMIT`). */
  readonly itemLimit?: number;
  /** Connections at once; more are dropped at once. Default 1,024 (see `listening.DEFAULT_LIMITS`). */
  readonly maxConnections?: number;
  /** Seconds for a client's TLS handshake. Default 10. */
  readonly handshakeTimeout?: number;
  /** Seconds from a connection's start (or the previous response) to the end of the request headers. Default 10. */
  readonly headersTimeout?: number;
  /** Seconds from the start of a request to the end of its body. Default 30. */
  readonly requestTimeout?: number;
  /** Seconds an idle keep-alive connection stays open. Default 5. */
  readonly keepAliveTimeout?: number;
  /** The clock of the file checks. Default: the real clock. */
  readonly clock?: clocks.Clock;
  /** Where the server logs. Default: the `kopf.webhooks` logger. */
  readonly logger?: loggers.Logger;
}

const VERIFY_MODES: readonly materials.VerifyMode[] = ['none', 'optional', 'required'];

interface Run {
  readonly stop: AbortController;
  listener?: listening.Listener;
}

/**
 * A local HTTPS endpoint for admission webhooks.
 *
 * @example
 * settings.admission.server = new WebhookServer({ port: 9443, host: 'host.example.local' });
 *
 * @example
 * // in a cluster, behind a Service `my-operator` in `ops` whose port 443 targets 9443
 * settings.admission.server = new WebhookServer({ port: 9443, certfile: '/tls/tls.crt', pkeyfile: '/tls/tls.key',
 *   service: { namespace: 'ops', name: 'my-operator', port: 443 } });
 */
export class WebhookServer implements webhooks.WebhookServerObject {
  /** The host used when `host` is not given (Kopf: `DEFAULT_HOST`); the variants set it. */
  static readonly DEFAULT_HOST: string | undefined = undefined;

  readonly options: WebhookServerOptions;
  private readonly runs = new Set<Run>();

  /** @throws errors.WebhookOptionsError for options that cannot work together. */
  constructor(options: WebhookServerOptions = {}) {
    checkOptions(options, new.target.name);
    this.options = { ...options };
  }

  /** The host in URLs and generated certificates. */
  get host(): string | undefined {
    return this.options.host ?? (this.constructor as typeof WebhookServer).DEFAULT_HOST;
  }

  serve(fn: webhooks.WebhookFn, environment?: webhooks.WebhookServerEnvironment): AsyncIterable<webhooks.WebhookClientConfig> {
    return this.serving(fn, environment);
  }

  /** Stops every running `serve()`: closes the sockets and ends the iterations. */
  async [Symbol.asyncDispose](): Promise<void> {
    const runs = [...this.runs];
    this.runs.clear();
    for (const run of runs) run.stop.abort();
    await Promise.all(runs.map((run) => run.listener?.close()));
  }

  private async *serving(
    fn: webhooks.WebhookFn,
    environment?: webhooks.WebhookServerEnvironment,
  ): AsyncGenerator<webhooks.WebhookClientConfig, void, undefined> {
    const options = this.options;
    const logger = options.logger ?? logging.getLogger('kopf.webhooks');
    const clock = options.clock ?? clocks.realClock;
    const run: Run = { stop: new AbortController() };
    const stopping = aborts.follow([environment?.signal, run.stop.signal]);
    const signal = stopping.signal;
    this.runs.add(run);
    let unhook: (() => void) | undefined;
    try {
      if (signal.aborted) return;
      const materialOptions = this.materialOptions();
      const files = materials.watchedFiles(materialOptions);
      let digest = files.length > 0 ? await digestOrThrow(files) : undefined;
      let material = await materials.loadMaterial(materialOptions);
      await this.dump(material);

      const root = addresses.rootPath(options.path);
      const handler = serving.handleRequests(fn, {
        root,
        bodyLimit: options.bodyLimit ?? serving.DEFAULT_BODY_LIMIT,
        depthLimit: options.depthLimit ?? serving.DEFAULT_DEPTH_LIMIT,
        itemLimit: options.itemLimit ?? serving.DEFAULT_ITEM_LIMIT,
        logger,
      });
      const limits = this.limits();
      const listener = await listening.listen({ addr: options.addr || undefined, port: options.port ?? 0, material, handler, logger, limits });
      run.listener = listener;
      // Stopping closes the socket at once, even while the consumer holds the iteration at a yield.
      unhook = aborts.onAbort(signal, () => {
        void listener.close();
      });
      if (signal.aborted) return;
      logger.debug(`Listening for webhooks at ${addresses.buildUrl(listener.scheme, options.addr || '*', listener.port, root)}`);

      yield this.announce(listener, material, logger);

      if (digest === undefined) {
        await untilAborted(signal);
        return;
      }
      const interval = (options.fileCheckInterval ?? 60) * 1000;
      while (await aborts.sleepOrAbort(clock, interval, signal)) {
        let current: string;
        let next: materials.Material;
        try {
          current = await busy(clock, materials.digestFiles(files));
          if (current === digest) continue;
          next = await busy(clock, materials.loadMaterial(materialOptions));
        } catch (error) {
          logger.warning(`Cannot reload the webhook server's certificate files; serving the previous ones: ${errors.oneLine(error)}`);
          continue;
        }
        if (signal.aborted) return;
        listener.update(next);
        material = next;
        digest = current;
        logger.info(`The webhook server's certificate files changed; serving the renewed certificate.`);
        await this.dump(material).catch((error: unknown) => logger.warning(errors.oneLine(error)));
        yield this.announce(listener, material, logger);
      }
    } finally {
      unhook?.();
      stopping.release();
      this.runs.delete(run);
      await run.listener?.close();
    }
  }

  /** The connection limits: the defaults, with the options' seconds as milliseconds. */
  private limits(): hardening.ServerLimits {
    const o = this.options;
    const d = listening.DEFAULT_LIMITS;
    const ms = (seconds: number | undefined, fallback: number): number => (seconds === undefined ? fallback : Math.round(seconds * 1000));
    return {
      maxConnections: o.maxConnections ?? d.maxConnections,
      handshakeTimeout: ms(o.handshakeTimeout, d.handshakeTimeout),
      headersTimeout: ms(o.headersTimeout, d.headersTimeout),
      requestTimeout: ms(o.requestTimeout, d.requestTimeout),
      keepAliveTimeout: ms(o.keepAliveTimeout, d.keepAliveTimeout),
    };
  }

  private materialOptions(): materials.MaterialOptions {
    const o = this.options;
    return {
      insecure: o.insecure ?? false,
      cadata: o.cadata,
      cafile: o.cafile,
      certfile: o.certfile,
      pkeyfile: o.pkeyfile,
      password: o.password,
      verifyMode: o.verifyMode,
      verifyCafile: o.verifyCafile,
      verifyCapath: o.verifyCapath,
      verifyCadata: o.verifyCadata,
      names: addresses.certificateNames({ host: this.host, addr: o.addr || undefined, service: o.service, extraSans: o.extraSans ?? [] }),
    };
  }

  /** Writes the CA bundle to `cadump`, if asked to. */
  private async dump(material: materials.Material): Promise<void> {
    const file = this.options.cadump;
    if (file === undefined || material.caPem === undefined) return;
    try {
      await fs.writeFile(file, material.caPem);
    } catch (error) {
      throw new errors.WebhookCertificateError(`cannot write the CA bundle to cadump=${file}: ${errors.oneLine(error)}`, { cause: error });
    }
  }

  /** The client configuration for the bound port and the current material. */
  private announce(listener: listening.Listener, material: materials.Material, logger: loggers.Logger): webhooks.WebhookClientConfig {
    const caBundle = material.caPem !== undefined ? { caBundle: Buffer.from(material.caPem, 'utf8').toString('base64') } : {};
    const service = this.options.service;
    const root = addresses.rootPath(this.options.path);
    if (service !== undefined) {
      const port = service.port ?? listener.port;
      logger.debug(`Accessing the webhooks through the service ${service.namespace}/${service.name}:${port}${root}`);
      return { service: { namespace: service.namespace, name: service.name, port, ...(root ? { path: root } : {}) }, ...caBundle };
    }
    const url = addresses.buildUrl(listener.scheme, this.host ?? addresses.accessibleHost(this.options.addr || undefined), listener.port, root);
    logger.debug(`Accessing the webhooks at ${url}`);
    return { url, ...caBundle };
  }
}

/** A server reached from a k3d/k3s cluster on the developer's machine: host `host.k3d.internal`. */
export class WebhookK3dServer extends WebhookServer {
  static override readonly DEFAULT_HOST: string | undefined = 'host.k3d.internal';
}

/** A server reached from a minikube cluster on the developer's machine: host `host.minikube.internal`. */
export class WebhookMinikubeServer extends WebhookServer {
  static override readonly DEFAULT_HOST: string | undefined = 'host.minikube.internal';
}

/** A server reached from Docker Desktop's cluster on the developer's machine: host `host.docker.internal`. */
export class WebhookDockerDesktopServer extends WebhookServer {
  static override readonly DEFAULT_HOST: string | undefined = 'host.docker.internal';
}

async function digestOrThrow(files: readonly string[]): Promise<string> {
  try {
    return await materials.digestFiles(files);
  } catch (error) {
    throw new errors.WebhookCertificateError(`cannot read the webhook server's certificate files: ${errors.oneLine(error)}`, { cause: error });
  }
}

function busy<T>(clock: clocks.Clock, work: Promise<T>): Promise<T> {
  return clock.busy ? clock.busy(work) : work;
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    aborts.onAbort(signal, resolve);
  });
}

/** Rejects options that cannot work, or that would silently do nothing. */
export function checkOptions(options: WebhookServerOptions, owner = 'WebhookServer'): void {
  const fail = (message: string): never => {
    throw new errors.WebhookOptionsError(`${owner}: ${message}`);
  };
  const o = options;
  if (o.port !== undefined && !(Number.isInteger(o.port) && o.port >= 0 && o.port <= 65535))
    fail(`port must be an integer from 0 to 65535, got ${String(o.port)}`);
  for (const key of ['addr', 'host', 'path', 'cafile', 'cadump', 'certfile', 'pkeyfile', 'password', 'verifyCafile', 'verifyCapath'] as const) {
    if (o[key] !== undefined && typeof o[key] !== 'string') fail(`${key} must be a string, got ${typeof o[key]}`);
  }
  if ((o.certfile === undefined) !== (o.pkeyfile === undefined)) fail('certfile and pkeyfile go together: give both or neither');
  if (o.password !== undefined && o.pkeyfile === undefined)
    fail('password decrypts pkeyfile; without pkeyfile there is nothing to decrypt (a generated key never leaves memory)');
  const verifying = o.verifyMode !== undefined || o.verifyCafile !== undefined || o.verifyCapath !== undefined || o.verifyCadata !== undefined;
  if (o.insecure) {
    if (o.certfile !== undefined) fail('insecure serves plain HTTP: certfile/pkeyfile cannot be used with it');
    if (verifying) fail('insecure serves plain HTTP: client certificates (verify*) cannot be verified');
    if (o.extraSans !== undefined && o.extraSans.length > 0) fail('insecure serves plain HTTP: there is no certificate for extraSans');
    if (o.service !== undefined) fail('the API server calls services over HTTPS only: service cannot be used with insecure');
  } else if (o.certfile === undefined) {
    if (o.cadata !== undefined || o.cafile !== undefined)
      fail('cadata/cafile announce the CA of your own certificate (certfile/pkeyfile); a generated certificate announces its own CA');
  } else if (o.extraSans !== undefined && o.extraSans.length > 0) {
    fail('extraSans go into a generated certificate; your own certificate (certfile) carries its own names');
  }
  if (o.verifyMode !== undefined && !VERIFY_MODES.includes(o.verifyMode))
    fail(`verifyMode must be one of ${VERIFY_MODES.join(', ')}, got ${String(o.verifyMode)}`);
  if (o.extraSans !== undefined && (!Array.isArray(o.extraSans) || o.extraSans.some((san) => typeof san !== 'string' || !san)))
    fail('extraSans must be a list of non-empty strings');
  if (o.service !== undefined) {
    const s = o.service;
    if (typeof s.namespace !== 'string' || !s.namespace || typeof s.name !== 'string' || !s.name) fail('service needs a namespace and a name');
    if (s.port !== undefined && !(Number.isInteger(s.port) && s.port >= 1 && s.port <= 65535))
      fail(`service.port must be an integer from 1 to 65535, got ${String(s.port)}`);
  }
  if (o.fileCheckInterval !== undefined && !(Number.isFinite(o.fileCheckInterval) && o.fileCheckInterval > 0))
    fail(`fileCheckInterval must be a positive number of seconds, got ${String(o.fileCheckInterval)}`);
  if (o.bodyLimit !== undefined && !(Number.isInteger(o.bodyLimit) && o.bodyLimit > 0))
    fail(`bodyLimit must be a positive integer of bytes, got ${String(o.bodyLimit)}`);
  for (const key of ['depthLimit', 'itemLimit', 'maxConnections'] as const) {
    const value = o[key];
    if (value !== undefined && !(Number.isInteger(value) && value > 0)) fail(`${key} must be a positive integer, got ${String(value)}`);
  }
  for (const key of ['handshakeTimeout', 'headersTimeout', 'requestTimeout', 'keepAliveTimeout'] as const) {
    const value = o[key];
    if (value !== undefined && !(Number.isFinite(value) && value > 0)) fail(`${key} must be a positive number of seconds, got ${String(value)}`);
  }
}
