/**
 * The self-signed serving certificate of the operator's HTTPS metrics endpoint (R-SEC-9).
 *
 * Secure metrics need TLS so that a scraper's bearer token never crosses the network in clear.
 * Scrapers of operators' metrics authenticate themselves with that token and, as with
 * controller-runtime's default (a certificate generated in memory at start when no certificate
 * directory is given), skip the verification of the server's certificate or pin it otherwise; so
 * an operator given no certificate makes its own at every start: an ECDSA P-256 key and a
 * self-signed certificate for the names it is reached by, kept in memory only, never written.
 *
 * The certificate is a small DER structure (RFC 5280) built here from Node's own crypto, so the
 * metrics need no X.509 library: version 3, a random serial, the subject as issuer, ten years of
 * validity from a little before now (TLS peers check it against real time, not the operator's
 * clock), and the extensions a serving certificate has — not a CA, digital signature, server
 * authentication, and the names as subject alternative names (DNS names and IP addresses).
 */

import * as nodecrypto from 'node:crypto';
import * as net from 'node:net';

/** A serving certificate and its key, both PEM. */
export interface SelfSignedCertificate {
  readonly certPem: string;
  /** PKCS#8. */
  readonly keyPem: string;
}

const VALIDITY_MS = 10 * 365 * 86_400_000;
/** Validity starts a little earlier, so that peers with a slightly late clock accept it. */
const BACKDATE_MS = 5 * 60_000;

const OID = {
  commonName: '2.5.4.3',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extendedKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  serverAuth: '1.3.6.1.5.5.7.3.1',
} as const;

/** One DER element: tag, length, contents. */
function der(tag: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  const length = body.length;
  if (length < 0x80) return Buffer.concat([Buffer.from([tag, length]), body]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Buffer.concat([Buffer.from([tag, 0x80 | bytes.length, ...bytes]), body]);
}

const sequence = (...items: Buffer[]): Buffer => der(0x30, ...items);

function oid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number);
  const bytes = [first! * 40 + second!];
  for (const arc of rest) {
    const groups: number[] = [arc & 0x7f];
    for (let value = Math.floor(arc / 128); value > 0; value = Math.floor(value / 128)) groups.unshift((value & 0x7f) | 0x80);
    bytes.push(...groups);
  }
  return der(0x06, Buffer.from(bytes));
}

/** UTCTime before 2050, GeneralizedTime from then on (RFC 5280 §4.1.2.5). */
function time(date: Date): Buffer {
  const iso = date
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/[-:T]/g, '');
  return date.getUTCFullYear() < 2050 ? der(0x17, Buffer.from(iso.slice(2), 'ascii')) : der(0x18, Buffer.from(iso, 'ascii'));
}

function name(commonName: string): Buffer {
  return sequence(der(0x31, sequence(oid(OID.commonName), der(0x0c, Buffer.from(commonName, 'utf8')))));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [der(0x01, Buffer.from([0xff]))] : []), der(0x04, value));
}

/** The IP address's bytes (4 or 16), or undefined for a DNS name. */
function ipBytes(host: string): Buffer | undefined {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  const family = net.isIP(bare);
  if (family === 4) return Buffer.from(bare.split('.').map(Number));
  if (family !== 6) return undefined;
  const [head, tail] = bare.includes('::') ? bare.split('::') : [bare, undefined];
  const words = (part: string | undefined): string[] => (part ? part.split(':') : []);
  let left = words(head);
  let right = words(tail);
  // An IPv4 tail (`::ffff:1.2.3.4`) is two words.
  const expand = (list: string[]): string[] =>
    list.flatMap((word) => {
      if (!word.includes('.')) return [word];
      const [a, b, c, d] = word.split('.').map(Number);
      return [((a! << 8) | b!).toString(16), ((c! << 8) | d!).toString(16)];
    });
  left = expand(left);
  right = expand(right);
  const all = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  const bytes = Buffer.alloc(16);
  all.forEach((word, index) => bytes.writeUInt16BE(Number.parseInt(word, 16), index * 2));
  return bytes;
}

/**
 * A self-signed serving certificate for `names` (DNS names and IP literals; the unspecified
 * addresses `0.0.0.0` and `::` are left out, as nobody connects to them).
 *
 * @example
 * const { certPem, keyPem } = selfSignedCertificate(['localhost', '127.0.0.1']);
 * https.createServer({ cert: certPem, key: keyPem });
 */
export function selfSignedCertificate(names: readonly string[], now: Date = new Date()): SelfSignedCertificate {
  const usable = [...new Set(names.filter((host) => host !== '' && host !== '0.0.0.0' && host !== '::' && host !== '[::]'))];
  const commonName = usable.find((host) => ipBytes(host) === undefined) ?? usable[0] ?? 'localhost';
  const { publicKey, privateKey } = nodecrypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const serial = nodecrypto.randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01; // positive, and no leading zero byte
  const notBefore = new Date(now.getTime() - BACKDATE_MS);
  const notAfter = new Date(notBefore.getTime() + VALIDITY_MS);
  const alternatives = usable.map((host) => {
    const ip = ipBytes(host);
    return ip === undefined ? der(0x82, Buffer.from(host, 'ascii')) : der(0x87, ip);
  });
  const extensions = [
    extension(OID.basicConstraints, true, sequence()),
    extension(OID.keyUsage, true, der(0x03, Buffer.from([0x07, 0x80]))), // digitalSignature
    extension(OID.extendedKeyUsage, false, sequence(oid(OID.serverAuth))),
    ...(alternatives.length > 0 ? [extension(OID.subjectAltName, false, sequence(...alternatives))] : []),
  ];
  const algorithm = sequence(oid(OID.ecdsaWithSha256));
  const tbs = sequence(
    der(0xa0, der(0x02, Buffer.from([0x02]))), // version 3
    der(0x02, serial),
    algorithm,
    name(commonName),
    sequence(time(notBefore), time(notAfter)),
    name(commonName),
    publicKey.export({ type: 'spki', format: 'der' }),
    der(0xa3, sequence(...extensions)),
  );
  const signature = nodecrypto.sign('sha256', tbs, privateKey);
  const certificate = sequence(tbs, algorithm, der(0x03, Buffer.from([0x00]), signature));
  return { certPem: pem('CERTIFICATE', certificate), keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

function pem(label: string, bytes: Buffer): string {
  const lines = bytes.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
