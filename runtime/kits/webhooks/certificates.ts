/**
 * The self-signed certificates of webhook servers that are given none.
 *
 * The API server calls webhooks over HTTPS only and verifies them against the `caBundle` of the
 * webhook configuration, by the host name of the URL (IP SANs for IP literals, DNS SANs for
 * names). A server started without `certfile`/`pkeyfile` therefore mints its own: a throw-away CA
 * and a serving certificate signed by it whose SANs are the names the server can be reached by.
 * The CA's PEM becomes the `caBundle`; its key is dropped once the serving certificate is signed,
 * and nothing is written to disk (except the CA certificate itself with `cadump`).
 *
 * Keys are ECDSA P-256 (a millisecond to generate; Go's TLS stack accepts them). The X.509 library
 * is loaded on first use only, so operators that bring their own certificates, or serve no
 * webhooks, never load it. Validity follows the wall clock, not the operator's clock: TLS peers
 * check it against real time.
 */
import * as nodecrypto from 'node:crypto';
import * as net from 'node:net';

import * as errors from './errors.js';

/** A generated CA and the serving certificate it signed (all PEM). */
export interface GeneratedCertificate {
  /** The CA certificate: the `caBundle` of client configurations. */
  readonly caPem: string;
  /** The serving certificate. */
  readonly certPem: string;
  /** The serving certificate's private key (PKCS#8). */
  readonly keyPem: string;
}

/** The names a certificate is issued for, sorted into its subject and SANs. */
export interface CertificateNames {
  /** The first DNS name, else the first IP address. */
  readonly commonName: string;
  readonly dnsNames: readonly string[];
  /** Canonical IP literals (IPv6 compressed, lowercase). */
  readonly ipAddresses: readonly string[];
}

/** Generated certificates are minted at every start; ten years keep long-running operators safe. */
const VALIDITY_MS = 10 * 365 * 86_400_000;
/** Validity starts a little earlier so that peers with a slightly late clock accept it. */
const BACKDATE_MS = 5 * 60_000;
const KEY_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING_ALGORITHM = { name: 'ECDSA', hash: 'SHA-256' } as const;

/**
 * Sorts host names and IP literals (`[::1]` accepted for `::1`) into DNS and IP SANs, dropping
 * duplicates and the unspecified addresses (`0.0.0.0`, `::`), which nobody can connect to.
 *
 * @example
 * sortNames(['host.k3d.internal', '0.0.0.0', '127.0.0.1'])
 * // { commonName: 'host.k3d.internal', dnsNames: ['host.k3d.internal'], ipAddresses: ['127.0.0.1'] }
 */
export function sortNames(names: readonly string[]): CertificateNames {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  for (const name of names) {
    const ip = canonicalIp(name);
    if (ip === undefined) {
      if (name && !dnsNames.includes(name)) dnsNames.push(name);
    } else if (ip !== '0.0.0.0' && ip !== '::' && !ipAddresses.includes(ip)) {
      ipAddresses.push(ip);
    }
  }
  const commonName = dnsNames[0] ?? ipAddresses[0];
  if (commonName === undefined) {
    throw new errors.WebhookOptionsError(`no usable host name or address for the server's certificate among: ${names.join(', ') || '(none)'}`);
  }
  return { commonName, dnsNames, ipAddresses };
}

/** The canonical form of an IP literal, or `undefined` for a host name. */
export function canonicalIp(host: string): string | undefined {
  const literal = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  switch (net.isIP(literal)) {
    case 4:
      return literal;
    case 6:
      return new URL(`http://[${literal}]/`).hostname.slice(1, -1);
    default:
      return undefined;
  }
}

/**
 * Mints a CA and a serving certificate (server and client authentication, as Kopf's) for `names`.
 *
 * @example
 * const generated = await generateCertificate(['localhost', '127.0.0.1']);
 * https.createServer({ cert: generated.certPem, key: generated.keyPem });
 */
export async function generateCertificate(names: readonly string[]): Promise<GeneratedCertificate> {
  const sorted = sortNames(names);
  const x509 = await loadX509();
  const subtle = nodecrypto.webcrypto.subtle;
  const notBefore = new Date(Date.now() - BACKDATE_MS);
  const notAfter = new Date(notBefore.getTime() + VALIDITY_MS);

  const caKeys = await subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify']);
  const caKeyId = await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: [{ CN: [`kopf-gen webhook CA for ${sorted.commonName}`] }],
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      caKeyId,
    ],
  });

  const keys = await subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify']);
  const sans = [...sorted.dnsNames.map((value) => ({ type: 'dns' as const, value })), ...sorted.ipAddresses.map((value) => ({ type: 'ip' as const, value }))];
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: [{ CN: [sorted.commonName] }],
    issuer: ca.subjectName,
    notBefore,
    notAfter,
    publicKey: keys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth], false),
      new x509.SubjectAlternativeNameExtension(sans, false),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      new x509.AuthorityKeyIdentifierExtension(caKeyId.keyId),
    ],
  });

  const pkcs8 = Buffer.from(await subtle.exportKey('pkcs8', keys.privateKey));
  return { caPem: `${ca.toString('pem')}\n`, certPem: `${certificate.toString('pem')}\n`, keyPem: pem('PRIVATE KEY', pkcs8) };
}

type X509 = typeof import('@peculiar/x509');
let x509Module: Promise<X509> | undefined;

function loadX509(): Promise<X509> {
  x509Module ??= (async () => {
    await import('./metadata.js');
    const x509 = await import('@peculiar/x509');
    x509.cryptoProvider.set(nodecrypto.webcrypto);
    return x509;
  })();
  return x509Module;
}

/** 16 random bytes, positive in DER and never zero. */
function serialNumber(): string {
  const bytes = nodecrypto.randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
