/**
 * Client certificates checked before they are used (R-SEC-24).
 *
 * Handed to TLS as they are, a key of another certificate fails every connection with OpenSSL's
 * `key values mismatch` and a stack trace, and an expired certificate with a bare 401 that names
 * neither the certificate nor the date. Both are plain to see in the certificate itself: this
 * module looks, and says what is wrong in words that callers put after "the client certificate"
 * (`expired on 2030-01-01T00:00:00.000Z`). Nothing of the material itself goes into the text.
 *
 * `transport` checks static material once per set of credentials, `execplugins` what a plugin
 * printed.
 */

import * as crypto from 'node:crypto';

/** Decodes PEM given as PEM text or as Base64 of PEM. */
export function pemOf(data: string | Uint8Array): string {
  const text = typeof data === 'string' ? data : Buffer.from(data).toString('utf8');
  return text.includes('-----BEGIN') ? text : Buffer.from(text, 'base64').toString('utf8');
}

/**
 * What is wrong with a client certificate and its key (PEM), as a predicate of "the client
 * certificate …", or `undefined` when nothing is.
 *
 * @param now ms since the epoch, for the validity period.
 */
export function certificateProblem(certificatePem: string, keyPem: string, now: number): string | undefined {
  let certificate: crypto.X509Certificate;
  try {
    certificate = new crypto.X509Certificate(certificatePem);
  } catch {
    return 'is not a PEM certificate';
  }
  let key: crypto.KeyObject;
  try {
    key = crypto.createPrivateKey(keyPem);
  } catch {
    return 'comes with a key that is not a PEM private key';
  }
  if (!certificate.checkPrivateKey(key)) return 'does not match its private key (the key belongs to another certificate)';
  const notAfter = Date.parse(certificate.validTo);
  if (Number.isFinite(notAfter) && notAfter < now) return `expired on ${new Date(notAfter).toISOString()}`;
  const notBefore = Date.parse(certificate.validFrom);
  if (Number.isFinite(notBefore) && notBefore > now) return `is not valid before ${new Date(notBefore).toISOString()}`;
  return undefined;
}
