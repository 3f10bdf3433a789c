/**
 * Recognising the kind of local cluster the operator talks to, to pick the host name under which
 * that cluster reaches the developer's machine (Kopf: `ClusterDetector`).
 *
 * Like Kopf, it needs no permissions: it opens a TLS connection to the API server, reads its
 * certificate (without trusting or verifying it: nothing is sent, only the names are read) and
 * looks at its names: k3s signs with an issuer `k3s-…` and names its server `k3s`; minikube's CA is
 * `minikubeCA` and its server `minikube`; Docker Desktop lists `docker-for-desktop` among the SANs.
 * When the certificate says nothing, the public `/version` endpoint may: k3s reports a
 * `…+k3s…` version. Anything else, or any failure, means "not recognised" and a plain server.
 */
import * as https from 'node:https';
import * as tls from 'node:tls';

import * as aborts from '../../cogs/aio/aborts.js';
import * as clocks from '../../cogs/aio/clocks.js';
import * as certificates from './certificates.js';
import * as errors from './errors.js';

/** The local clusters that reach the host under a well-known name. */
export type ClusterFlavour = 'k3d' | 'minikube' | 'docker-desktop';

/** The names of a certificate, as Node reports them (`getPeerCertificate()`). */
export interface CertificateIdentity {
  readonly subject?: Readonly<Record<string, string | readonly string[] | undefined>>;
  readonly issuer?: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** `DNS:a, DNS:b, IP Address:1.2.3.4`. */
  readonly subjectaltname?: string;
}

/** How long one probe of the API server may take, by default. */
const DEFAULT_TIMEOUT_MS = 5000;

/** Kopf's rules on the API server's certificate. */
export function recogniseCertificate(cert: CertificateIdentity): ClusterFlavour | null {
  const subjectCn = values(cert.subject?.['CN']);
  const subjectOrg = values(cert.subject?.['O']);
  const issuerCn = values(cert.issuer?.['CN']);
  const sans = (cert.subjectaltname ?? '').split(',').map((entry) => entry.trim().replace(/^[^:]*:/, ''));
  if (subjectCn.includes('k3s') || subjectOrg.includes('k3s') || issuerCn.some((cn) => cn.startsWith('k3s-'))) return 'k3d';
  if (subjectCn.includes('minikube') || issuerCn.includes('minikubeCA')) return 'minikube';
  if (sans.includes('docker-for-desktop')) return 'docker-desktop';
  return null;
}

/** k3s marks its version as `v1.30.4+k3s1`. */
export function recogniseVersion(gitVersion: string): ClusterFlavour | null {
  return gitVersion.includes('+k3s') ? 'k3d' : null;
}

/** Options of a detection. */
export interface DetectOptions {
  readonly signal?: AbortSignal;
  /** The clock of the time limit. Default: the real clock. */
  readonly clock?: clocks.Clock;
  /** Milliseconds per probe. Default 5000. */
  readonly timeoutMs?: number;
}

/**
 * Recognises the cluster behind an `https://` API server URL: by its certificate, else by its
 * version. Resolves to `null` when neither tells.
 *
 * @throws when the API server cannot be reached at all (the caller decides what that means).
 */
export async function detectCluster(apiServer: string, options: DetectOptions = {}): Promise<ClusterFlavour | null> {
  const url = new URL(apiServer);
  if (url.protocol !== 'https:') return null;
  const identity = await withTimeout(options, (signal) => readCertificate(url, signal));
  const byCertificate = recogniseCertificate(identity);
  if (byCertificate !== null) return byCertificate;
  const version = await withTimeout(options, (signal) => readVersion(url, signal)).catch(() => undefined);
  return version === undefined ? null : recogniseVersion(version);
}

async function withTimeout<T>(options: DetectOptions, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const clock = options.clock ?? clocks.realClock;
  const done = new AbortController();
  const timeout = aborts.timeoutSignal(clock, options.timeoutMs ?? DEFAULT_TIMEOUT_MS, { cancel: done.signal });
  const joined = aborts.follow([options.signal, timeout]);
  try {
    const promise = work(joined.signal);
    return await (clock.busy ? clock.busy(promise) : promise);
  } finally {
    done.abort();
    joined.release();
  }
}

/** The API server's certificate, read during a TLS handshake that trusts nothing. */
function readCertificate(url: URL, signal: AbortSignal): Promise<CertificateIdentity> {
  return new Promise<CertificateIdentity>((resolve, reject) => {
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const socket = tls.connect({
      host,
      port: Number(url.port || 443),
      servername: certificates.canonicalIp(host) === undefined ? host : undefined,
      rejectUnauthorized: false,
    });
    const stop = aborts.onAbort(signal, () => socket.destroy(new Error(`no TLS handshake with ${url.host} in time`)));
    socket.once('secureConnect', () => {
      const cert = socket.getPeerCertificate();
      stop();
      socket.end();
      resolve({ subject: cert.subject, issuer: cert.issuer, subjectaltname: cert.subjectaltname });
    });
    socket.once('error', (error) => {
      stop();
      reject(new Error(`cannot read the certificate of ${url.host}: ${errors.oneLine(error)}`, { cause: error }));
    });
  });
}

/** `gitVersion` of the unauthenticated `/version` endpoint. */
function readVersion(url: URL, signal: AbortSignal): Promise<string | undefined> {
  return new Promise<string | undefined>((resolve, reject) => {
    const request = https.get(new URL('/version', url), { rejectUnauthorized: false, signal, headers: { accept: 'application/json' } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        if (response.statusCode !== 200) return resolve(undefined);
        try {
          const info = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { gitVersion?: unknown };
          resolve(typeof info.gitVersion === 'string' ? info.gitVersion : undefined);
        } catch {
          resolve(undefined);
        }
      });
    });
    request.on('error', reject);
  });
}

function values(value: string | readonly string[] | undefined): readonly string[] {
  return value === undefined ? [] : typeof value === 'string' ? [value] : value;
}
