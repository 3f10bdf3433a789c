/**
 * X.509 material for the devcluster: a certificate authority generated at start-up, the serving
 * certificate of the API server (D-GEN-2), client certificates that authenticate users (D-AUTH-3)
 * and serving certificates for webhook servers that tests run locally (D-ADM-10/11).
 *
 * Everything is pure JavaScript (`@peculiar/x509` over Node's WebCrypto), with ECDSA P-256 keys:
 * generating one takes about a millisecond, and Go clients such as kubectl accept them. Keys are
 * written as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), which Node's TLS stack and Go's
 * `tls.X509KeyPair` both read. `authentication.ts` consumes what Node's TLS layer reports about the
 * certificates issued here; the server module hands `certPem`/`keyPem` to `https.createServer`.
 */
import './reflectmetadata.js';
import * as nodecrypto from 'node:crypto';
import * as net from 'node:net';
import * as x509 from '@peculiar/x509';

type CryptoKey = nodecrypto.webcrypto.CryptoKey;
type CryptoKeyPair = nodecrypto.webcrypto.CryptoKeyPair;

const webcrypto = nodecrypto.webcrypto;
x509.cryptoProvider.set(webcrypto);

const KEY_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING_ALGORITHM = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;
/** Certificates start this long before "now" so that small clock differences do not reject them. */
const BACKDATE_MS = 5 * 60_000;

/** A CA able to sign certificates; `certPem` is what kubeconfigs and webhook `caBundle`s embed. */
export interface CertificateAuthority {
  readonly certPem: string;
  readonly keyPem: string;
  /**
   * The CA certificate's subject name, DER-encoded: the issuer of every certificate it signs, byte
   * for byte. (Kept as bytes rather than a parsed certificate so that this module's declarations do
   * not reference the X.509 library, whose typings need the DOM library.)
   */
  readonly subjectDer: ArrayBuffer;
  /** The end of the CA certificate's validity; issued certificates never outlive it. */
  readonly notAfter: Date;
  readonly privateKey: nodecrypto.webcrypto.CryptoKey;
  /** Hex subject key identifier, repeated as authority key identifier in issued certificates. */
  readonly subjectKeyId: string;
}

/** A PEM certificate and its PEM (PKCS#8) private key. */
export interface KeyPairPem {
  readonly certPem: string;
  readonly keyPem: string;
}

export interface CertificateAuthorityOptions {
  /** Subject common name. Default `devcluster-ca`. */
  commonName?: string;
  /** The moment the CA is created; validity starts 5 minutes earlier. Default: wall time. */
  now?: Date;
  /** Validity in days. Default 3650. */
  validDays?: number;
}

export type CertificateUsage = 'server' | 'client' | 'both';

export interface CertificateOptions {
  commonName: string;
  /** Subject `O` attributes, one per entry (Kubernetes reads them as groups). */
  organizations?: readonly string[];
  dnsNames?: readonly string[];
  /** IPv4 or IPv6 literals. */
  ipAddresses?: readonly string[];
  usage: CertificateUsage;
  /** Start of validity. Default: `now` minus 5 minutes. */
  notBefore?: Date;
  /** End of validity. Default: one year after `notBefore`, but never after the CA expires. */
  notAfter?: Date;
  /** The moment of issue, used for the defaults above. Default: wall time. */
  now?: Date;
}

/** Errors from certificate generation (bad options); `code` is stable. */
export class CertificateOptionsError extends Error {
  readonly code = 'CertificateOptions' as const;
  constructor(message: string) {
    super(message);
    this.name = 'CertificateOptionsError';
  }
}

/**
 * Creates a self-signed CA: BasicConstraints `CA:true` (critical), KeyUsage keyCertSign + cRLSign
 * (critical), SubjectKeyIdentifier.
 *
 * @example
 * const ca = await certs.createCertificateAuthority();
 * const server = await certs.issueServingCertificate(ca, { hosts: ['localhost', '127.0.0.1'] });
 */
export async function createCertificateAuthority(opts: CertificateAuthorityOptions = {}): Promise<CertificateAuthority> {
  const now = opts.now ?? new Date();
  const validDays = opts.validDays ?? 3650;
  if (!(validDays > 0)) throw new CertificateOptionsError(`validDays must be positive, got ${validDays}`);
  const keys = await generateKeys();
  const ski = await x509.SubjectKeyIdentifierExtension.create(keys.publicKey);
  const notBefore = new Date(now.getTime() - BACKDATE_MS);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerialNumber(),
    name: [{ CN: [opts.commonName ?? 'devcluster-ca'] }],
    notBefore,
    notAfter: new Date(now.getTime() + validDays * DAY_MS),
    keys,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      ski,
    ],
  });
  return {
    certPem: `${certificate.toString('pem')}\n`,
    keyPem: await privateKeyPem(keys.privateKey),
    subjectDer: certificate.subjectName.toArrayBuffer(),
    notAfter: certificate.notAfter,
    privateKey: keys.privateKey,
    subjectKeyId: ski.keyId,
  };
}

/**
 * Rebuilds a CA from PEM texts produced earlier by `createCertificateAuthority` (for example to
 * keep one CA across emulator restarts).
 */
export async function loadCertificateAuthority(certPem: string, keyPem: string): Promise<CertificateAuthority> {
  const certificate = new x509.X509Certificate(certPem);
  const der = x509.PemConverter.decodeFirst(keyPem);
  const privateKey = await webcrypto.subtle.importKey('pkcs8', der, KEY_ALGORITHM, true, ['sign']);
  const ski = certificate.getExtension(x509.SubjectKeyIdentifierExtension);
  const subjectKeyId = ski ? ski.keyId : (await x509.SubjectKeyIdentifierExtension.create(certificate.publicKey)).keyId;
  return {
    certPem,
    keyPem,
    subjectDer: certificate.subjectName.toArrayBuffer(),
    notAfter: certificate.notAfter,
    privateKey,
    subjectKeyId,
  };
}

/**
 * Issues a leaf certificate signed by `ca`: KeyUsage digitalSignature (critical), ExtendedKeyUsage
 * serverAuth and/or clientAuth, BasicConstraints `CA:false`, SANs, subject and authority key
 * identifiers, and a random positive 128-bit serial number.
 */
export async function issueCertificate(ca: CertificateAuthority, opts: CertificateOptions): Promise<KeyPairPem> {
  const now = opts.now ?? new Date();
  const notBefore = opts.notBefore ?? new Date(now.getTime() - BACKDATE_MS);
  const caEnd = ca.notAfter;
  const defaultEnd = new Date(Math.min(notBefore.getTime() + 365 * DAY_MS, caEnd.getTime()));
  const notAfter = opts.notAfter ?? defaultEnd;
  if (notAfter.getTime() <= notBefore.getTime()) {
    throw new CertificateOptionsError(`notAfter (${notAfter.toISOString()}) must be after notBefore (${notBefore.toISOString()})`);
  }
  if (!opts.commonName && !(opts.dnsNames?.length || opts.ipAddresses?.length)) {
    throw new CertificateOptionsError('a certificate needs a common name or at least one SAN');
  }
  const names: x509.JsonGeneralName[] = [];
  for (const dns of opts.dnsNames ?? []) names.push({ type: 'dns', value: dns });
  for (const ip of opts.ipAddresses ?? []) {
    const literal = stripBrackets(ip);
    if (net.isIP(literal) === 0) throw new CertificateOptionsError(`not an IP address: ${ip}`);
    names.push({ type: 'ip', value: literal });
  }
  const keys = await generateKeys();
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension(extendedUsages(opts.usage), false),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    new x509.AuthorityKeyIdentifierExtension(ca.subjectKeyId),
  ];
  if (names.length) extensions.push(new x509.SubjectAlternativeNameExtension(names, false));
  const subject: x509.JsonName = [];
  if (opts.commonName) subject.push({ CN: [opts.commonName] });
  for (const org of opts.organizations ?? []) subject.push({ O: [org] });
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerialNumber(),
    subject,
    issuer: new x509.Name(ca.subjectDer),
    notBefore,
    notAfter,
    publicKey: keys.publicKey,
    signingKey: ca.privateKey,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions,
  });
  return { certPem: `${certificate.toString('pem')}\n`, keyPem: await privateKeyPem(keys.privateKey) };
}

/**
 * Issues a server certificate for the given host names and IP literals (sorted into DNS and IP
 * SANs). The common name is the first host unless given.
 *
 * @example
 * // a webhook served locally and reached through a service reference (D-ADM-11)
 * await certs.issueServingCertificate(ca, { hosts: ['hook.default.svc', 'localhost', '127.0.0.1'] });
 */
export async function issueServingCertificate(
  ca: CertificateAuthority,
  opts: { hosts: readonly string[]; commonName?: string; notBefore?: Date; notAfter?: Date; now?: Date },
): Promise<KeyPairPem> {
  if (!opts.hosts.length) throw new CertificateOptionsError('a serving certificate needs at least one host');
  const { dnsNames, ipAddresses } = splitHosts(opts.hosts);
  return issueCertificate(ca, {
    commonName: opts.commonName ?? stripBrackets(opts.hosts[0]!),
    dnsNames,
    ipAddresses,
    usage: 'server',
    notBefore: opts.notBefore,
    notAfter: opts.notAfter,
    now: opts.now,
  });
}

/**
 * Issues a client certificate that authenticates as `username` (CN) in `groups` (one O each),
 * as `cluster.auth.issueClientCert` does (D-AUTH-3).
 */
export async function issueClientCertificate(
  ca: CertificateAuthority,
  opts: { username: string; groups?: readonly string[]; notBefore?: Date; notAfter?: Date; now?: Date },
): Promise<KeyPairPem> {
  if (!opts.username) throw new CertificateOptionsError('a client certificate needs a username');
  return issueCertificate(ca, {
    commonName: opts.username,
    organizations: opts.groups,
    usage: 'client',
    notBefore: opts.notBefore,
    notAfter: opts.notAfter,
    now: opts.now,
  });
}

/** Sorts host strings into DNS names and IP literals (`[::1]` is accepted for `::1`). */
export function splitHosts(hosts: readonly string[]): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  for (const host of hosts) {
    const literal = stripBrackets(host);
    if (net.isIP(literal) !== 0) ipAddresses.push(literal);
    else dnsNames.push(host);
  }
  return { dnsNames, ipAddresses };
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function extendedUsages(usage: CertificateUsage): string[] {
  switch (usage) {
    case 'server':
      return [x509.ExtendedKeyUsage.serverAuth];
    case 'client':
      return [x509.ExtendedKeyUsage.clientAuth];
    case 'both':
      return [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth];
  }
}

async function generateKeys(): Promise<CryptoKeyPair> {
  return webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify']);
}

/** 16 random bytes with the top bit cleared (positive in DER) and never all zero. */
function randomSerialNumber(): string {
  const bytes = nodecrypto.randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN PRIVATE KEY-----\n${lines.join('\n')}\n-----END PRIVATE KEY-----\n`;
}
