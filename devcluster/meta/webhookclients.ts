/**
 * Validation of a webhook's client configuration — how the API server reaches a webhook server —
 * shared by the two kinds that carry one: admission webhook configurations (D-BI-12) and CRDs with
 * conversion webhooks (D-CRD-21). Upstream validates both with the same helpers, so the rules and
 * messages are one: exactly one of `url` and `service`; a URL must be `https` with a host and
 * without user information, fragment or query; a service needs a name and a namespace, a port in
 * 1–65535 and a path made of DNS subdomains; a CA bundle must hold at least one PEM certificate.
 *
 * Input is decoded JSON: accessors narrow at runtime, so a malformed value yields field errors.
 */
import * as crypto from 'node:crypto';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
import * as fielderrors from './fielderrors.js';
import * as names from './names.js';

type FieldError = fielderrors.FieldError;

const URL_FORM = '; desired format: https://host[/path]';

const present = (v: unknown): boolean => v !== undefined && v !== null;

/** `url` of a client configuration (upstream's `ValidateWebhookURL` with https forced). */
export function validateWebhookUrl(field: string, text: string): FieldError[] {
  let u: URL;
  try {
    u = new URL(text);
  } catch (err) {
    return [fielderrors.required(field, `url must be a valid URL: ${err instanceof Error ? err.message : String(err)}${URL_FORM}`)];
  }
  const errors: FieldError[] = [];
  const scheme = u.protocol.replace(/:$/, '');
  if (scheme !== 'https') errors.push(fielderrors.invalid(field, scheme, `'https' is the only allowed URL scheme${URL_FORM}`));
  if (!u.host) errors.push(fielderrors.invalid(field, u.host, `host must be specified${URL_FORM}`));
  if (u.username || u.password)
    errors.push(fielderrors.invalid(field, u.password ? `${u.username}:${u.password}` : u.username, 'user information is not permitted in the URL'));
  if (u.hash.length > 1) errors.push(fielderrors.invalid(field, u.hash.slice(1), 'fragments are not permitted in the URL'));
  if (u.search.length > 1) errors.push(fielderrors.invalid(field, u.search.slice(1), 'query parameters are not permitted in the URL'));
  return errors;
}

/** `service` of a client configuration, port already defaulted (upstream's `ValidateWebhookService`). */
export function validateWebhookService(field: string, service: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  if (typeof service['name'] !== 'string' || !service['name']) errors.push(fielderrors.required(`${field}.name`, 'service name is required'));
  if (typeof service['namespace'] !== 'string' || !service['namespace'])
    errors.push(fielderrors.required(`${field}.namespace`, 'service namespace is required'));
  const port = service['port'];
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)
    errors.push(fielderrors.invalid(`${field}.port`, port, 'port is not valid: must be between 1 and 65535, inclusive'));
  const path = service['path'];
  if (typeof path !== 'string' || path === '' || path === '/') return errors;
  const at = `${field}.path`;
  if (path === '//') return [...errors, fielderrors.invalid(at, path, 'segment[0] may not be empty')];
  if (!path.startsWith('/')) return [...errors, fielderrors.invalid(at, path, "must start with a '/'")];
  path
    .slice(1)
    .split('/')
    .forEach((step, i) => {
      if (step === '') {
        errors.push(fielderrors.invalid(at, path, `segment[${i}] may not be empty`));
        return;
      }
      for (const msg of names.dns1123SubdomainErrors(step)) errors.push(fielderrors.invalid(at, path, `segment[${i}]: ${msg}`));
    });
  return errors;
}

/** A client configuration at `field`: exactly one of `url` and `service`, each validated. */
export function validateClientConfig(field: string, config: JsonObject): FieldError[] {
  const url = config['url'];
  const service = config['service'];
  if (present(url) === present(service)) return [fielderrors.required(field, 'exactly one of url or service is required')];
  return typeof url === 'string' ? validateWebhookUrl(`${field}.url`, url) : validateWebhookService(`${field}.service`, json.isObject(service) ? service : {});
}

/**
 * Why a CA bundle (PEM text, decoded from the field's base64) cannot serve as the trust roots of
 * a webhook call, worded as upstream's TLS configuration reports it; undefined when at least one
 * certificate in it parses.
 */
export function caBundleError(pem: string): string | undefined {
  const blocks = [...pem.matchAll(/-----BEGIN ([^\r\n-]+)-----\r?\n([\s\S]*?)-----END \1-----/g)];
  const certificates = blocks.filter((b) => b[1] === 'CERTIFICATE' && !/^[\w-]+:/m.test(b[2]!));
  let parseError: string | undefined;
  for (const block of certificates) {
    try {
      new crypto.X509Certificate(Buffer.from(block[2]!.replace(/\s+/g, ''), 'base64'));
      return undefined;
    } catch (err) {
      parseError ??= err instanceof Error ? err.message : String(err);
    }
  }
  const why =
    blocks.length === 0
      ? 'unable to parse bytes as PEM block'
      : parseError
        ? `failed to parse certificate: ${parseError}`
        : 'no valid certificate authority data seen';
  return `unable to load root certificates: ${why}`;
}
