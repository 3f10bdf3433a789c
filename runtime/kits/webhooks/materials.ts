/**
 * The TLS material of a webhook server: what it presents, whom it trusts, and which CA bundle it
 * tells the API server to trust.
 *
 * Three cases, as in Kopf: a certificate generated at start (its CA is the bundle, whatever else is
 * given); the user's `certfile`/`pkeyfile` (+ `password`), whose bundle is `cadata`, else `cafile`,
 * else the certificate file itself (right for self-signed certificates); or plain HTTP (`insecure`),
 * whose bundle is `cadata`/`cafile` if given (for whatever terminates TLS in front of it). Client
 * certificates are requested when a verification mode or CA is given; the CA of a verified peer is
 * `verifyCadata`, `verifyCafile` and the certificates found in `verifyCapath`.
 *
 * Files are read in full on every load and hashed for change detection: mounted Secrets change
 * their contents without reliable file events, so re-reading is the one dependable way to notice
 * a renewed certificate. Only a digest is kept between checks.
 */
import * as nodecrypto from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as nodepath from 'node:path';
import * as tls from 'node:tls';

import * as certificates from './certificates.js';
import * as errors from './errors.js';

/** How client certificates are asked for: not at all, accepted if valid, or required. */
export type VerifyMode = 'none' | 'optional' | 'required';

/** The TLS-related options of a server, already validated. */
export interface MaterialOptions {
  readonly insecure: boolean;
  readonly cadata?: string | Uint8Array;
  readonly cafile?: string;
  readonly certfile?: string;
  readonly pkeyfile?: string;
  readonly password?: string;
  readonly verifyMode?: VerifyMode;
  readonly verifyCafile?: string;
  readonly verifyCapath?: string;
  readonly verifyCadata?: string | Uint8Array;
  /** The names a generated certificate is issued for. */
  readonly names: readonly string[];
}

/** What the server presents and accepts (absent for plain HTTP), and the CA bundle to announce. */
export interface Material {
  readonly secure?: {
    /** The secure context's options (certificate, key, passphrase, trusted client CAs). */
    readonly context: tls.SecureContextOptions;
    readonly requestCert: boolean;
    readonly rejectUnauthorized: boolean;
  };
  /** The CA bundle (PEM) for client configurations, if known. */
  readonly caPem?: string;
}

/** The files whose change means new material (Kopf re-reads `certfile`, `pkeyfile`, `cafile`). */
export function watchedFiles(options: MaterialOptions): string[] {
  const files = [options.certfile, options.pkeyfile, options.cafile, options.verifyCafile];
  return files.filter((file): file is string => file !== undefined);
}

/** A digest of the files' contents, for noticing a change without keeping secrets in memory. */
export async function digestFiles(files: readonly string[]): Promise<string> {
  const hash = nodecrypto.createHash('sha256');
  for (const file of files) {
    const content = await fs.readFile(file);
    hash.update(`${file}\0${content.length}\0`).update(content);
  }
  return hash.digest('hex');
}

/**
 * Reads or generates the material.
 *
 * @throws errors.WebhookCertificateError when a file cannot be read or the certificate, key and
 *   password do not fit together.
 */
export async function loadMaterial(options: MaterialOptions): Promise<Material> {
  let caPem = options.cadata !== undefined ? text(options.cadata) : options.cafile !== undefined ? await readText(options.cafile, 'cafile') : undefined;
  if (options.insecure) return { caPem };

  let context: tls.SecureContextOptions;
  if (options.certfile !== undefined && options.pkeyfile !== undefined) {
    const cert = await readText(options.certfile, 'certfile');
    const key = await readText(options.pkeyfile, 'pkeyfile');
    context = { cert, key, ...(options.password !== undefined ? { passphrase: options.password } : {}) };
    caPem ??= cert;
  } else {
    const generated = await certificates.generateCertificate(options.names);
    context = { cert: generated.certPem, key: generated.keyPem };
    caPem = generated.caPem;
  }

  const verifyCa = await verificationCa(options);
  if (verifyCa !== undefined) context = { ...context, ca: verifyCa };
  checkContext(context, options);
  const mode = options.verifyMode ?? (verifyCa !== undefined ? 'optional' : 'none');
  return { secure: { context, requestCert: mode !== 'none', rejectUnauthorized: mode === 'required' }, caPem };
}

/** The CA certificates that client certificates are verified against, if any are given. */
async function verificationCa(options: MaterialOptions): Promise<string[] | undefined> {
  const pems: string[] = [];
  if (options.verifyCadata !== undefined) pems.push(text(options.verifyCadata));
  if (options.verifyCafile !== undefined) pems.push(await readText(options.verifyCafile, 'verifyCafile'));
  if (options.verifyCapath !== undefined) {
    let entries: string[];
    try {
      entries = (await fs.readdir(options.verifyCapath)).sort();
    } catch (error) {
      throw new errors.WebhookCertificateError(`cannot read the folder verifyCapath=${options.verifyCapath}: ${errors.oneLine(error)}`, { cause: error });
    }
    for (const entry of entries) {
      const file = nodepath.join(options.verifyCapath, entry);
      const stat = await fs.stat(file).catch(() => undefined);
      if (!stat?.isFile()) continue;
      const content = await readText(file, 'verifyCapath');
      if (content.includes('-----BEGIN CERTIFICATE-----')) pems.push(content);
    }
  }
  return pems.length > 0 ? pems : undefined;
}

/** Builds the secure context once, so that a bad key or password fails here with a clear message. */
function checkContext(context: tls.SecureContextOptions, options: MaterialOptions): void {
  try {
    tls.createSecureContext(context);
  } catch (error) {
    const what =
      options.certfile !== undefined
        ? `the certificate certfile=${options.certfile} with the key pkeyfile=${options.pkeyfile}${options.password !== undefined ? ' and the given password' : ''}`
        : 'the generated certificate';
    throw new errors.WebhookCertificateError(`cannot serve HTTPS with ${what}: ${errors.oneLine(error)}`, { cause: error });
  }
}

function text(data: string | Uint8Array): string {
  return typeof data === 'string' ? data : Buffer.from(data).toString('utf8');
}

async function readText(file: string, option: string): Promise<string> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (error) {
    throw new errors.WebhookCertificateError(`cannot read ${option}=${file}: ${errors.oneLine(error)}`, { cause: error });
  }
}
