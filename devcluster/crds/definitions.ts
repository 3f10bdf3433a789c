/**
 * Defaulting and validation of CustomResourceDefinition objects (D-CRD-1, D-CRD-2).
 *
 * The CRD registry calls `defaultCrd` and then `validateCrd` on every create and update of a CRD;
 * a non-empty error list becomes one 422 `Invalid` response. Validation covers the naming rules
 * (`metadata.name` = plural.group, DNS names, kind ≠ listKind), scope, versions (non-empty, unique
 * DNS-1035 names, exactly one storage version, a schema for each), subresources, printer columns,
 * conversion (`None`, or `Webhook` with its client configuration and review versions, D-CRD-21),
 * stored versions that may not disappear, the fields that are immutable on update, and the
 * structural-schema rules delegated to `structural`.
 *
 * Upstream validates its internal form of the CRD, where `spec.conversion.webhook.clientConfig` is
 * `spec.conversion.webhookClientConfig` and `spec.conversion.webhook.conversionReviewVersions` is
 * `spec.conversion.conversionReviewVersions`; error paths use those names, as a real server's do.
 *
 * Input is decoded JSON: every accessor narrows at runtime, so a malformed CRD yields field errors
 * instead of exceptions. Neither function mutates its argument.
 */

import * as fielderrors from '../meta/fielderrors.js';
import * as dnsnames from '../meta/names.js';
import * as webhookclients from '../meta/webhookclients.js';
import type * as schemas from './schemas.js';
import * as structural from './structural.js';
import * as json from '../json.js';

const SCOPES = ['Cluster', 'Namespaced'];
const PRINTER_COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const PRINTER_COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];

const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const obj = (value: unknown): json.JsonObject => (json.isObject(value) ? value : {});
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/**
 * Returns a copy of `crd` with the create-time defaults of D-CRD-2 applied: `names.singular` =
 * lowercase kind, `names.listKind` = kind + `List`, `conversion.strategy` = `None`, the port of a
 * conversion webhook's service = 443 (D-CRD-21), `preserveUnknownFields` = false. Values already
 * present are kept.
 */
export function defaultCrd(crd: schemas.CustomResourceDefinition): schemas.CustomResourceDefinition {
  const copy = json.deepCopy(crd);
  if (!json.isObject(copy.spec)) return copy;
  const spec = copy.spec;
  if (json.isObject(spec.names)) {
    const kind = str(spec.names.kind);
    if (kind && !spec.names.singular) spec.names.singular = kind.toLowerCase();
    if (kind && !spec.names.listKind) spec.names.listKind = `${kind}List`;
  }
  if (!json.isObject(spec.conversion)) spec.conversion = { strategy: 'None' };
  else if (!spec.conversion.strategy) spec.conversion.strategy = 'None';
  const service = spec.conversion.webhook?.clientConfig?.service;
  if (json.isObject(service) && (service.port === undefined || service.port === null)) service.port = 443;
  if (spec.preserveUnknownFields === undefined) spec.preserveUnknownFields = false;
  return copy;
}

/**
 * Validates a (defaulted) CRD. Pass `old` on update to enable the stored-version and
 * immutability checks. Returns every violation; empty means valid.
 *
 * @example
 * validateCrd(crdNamed('foo.example.com')).map(fielderrors.renderError)
 * // → ['metadata.name: Invalid value: "foo.example.com": must be spec.names.plural+"."+spec.group']
 */
export function validateCrd(crd: schemas.CustomResourceDefinition, old?: schemas.CustomResourceDefinition): fielderrors.FieldError[] {
  const errors: fielderrors.FieldError[] = [];
  const spec = obj(crd.spec);
  const names = obj(spec.names);
  const group = str(spec.group);
  const plural = str(names.plural);

  const name = str(obj(crd.metadata).name);
  if (name !== `${plural}.${group}`) errors.push(fielderrors.invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));

  if (!group) errors.push(fielderrors.required('spec.group'));
  else {
    const problems = dnsnames.dns1123SubdomainErrors(group);
    if (problems.length > 0) errors.push(fielderrors.invalid('spec.group', group, problems.join(',')));
    else if (!group.includes('.')) errors.push(fielderrors.invalid('spec.group', group, 'should be a domain with at least one dot'));
  }

  const scope = str(spec.scope);
  if (!scope) errors.push(fielderrors.required('spec.scope'));
  else if (!SCOPES.includes(scope)) errors.push(fielderrors.notSupported('spec.scope', scope, SCOPES));

  errors.push(...validateNames(names, 'spec.names'));
  errors.push(...validateVersions(spec.versions));
  if (json.isObject(spec.conversion) && str(spec.conversion.strategy) !== 'None' && spec.preserveUnknownFields === true) {
    errors.push(fielderrors.invalid('spec.conversion.strategy', spec.conversion.strategy, 'must be None if spec.preserveUnknownFields is true'));
  }
  errors.push(...validateConversion(spec.conversion, conversionOptions(old)));

  if (spec.preserveUnknownFields === true && obj(old?.spec).preserveUnknownFields !== true) {
    errors.push(
      fielderrors.invalid(
        'spec.preserveUnknownFields',
        true,
        'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
      ),
    );
  }
  if (old) errors.push(...validateUpdate(crd, old));
  return errors;
}

function validateNames(names: json.JsonObject, path: string): fielderrors.FieldError[] {
  const errors: fielderrors.FieldError[] = [];
  const label = (field: string, value: string, prefix = ''): void => {
    const problems = dnsnames.dns1035LabelErrors(prefix ? value.toLowerCase() : value);
    if (problems.length > 0) errors.push(fielderrors.invalid(`${path}.${field}`, value, prefix + problems.join(',')));
  };
  const plural = str(names.plural);
  const singular = str(names.singular);
  const kind = str(names.kind);
  const listKind = str(names.listKind);
  if (!plural) errors.push(fielderrors.required(`${path}.plural`));
  else label('plural', plural);
  if (singular) label('singular', singular);
  if (!kind) errors.push(fielderrors.required(`${path}.kind`));
  else label('kind', kind, 'may have mixed case, but should otherwise match: ');
  if (listKind) label('listKind', listKind, 'may have mixed case, but should otherwise match: ');
  list(names.shortNames).forEach((shortName, i) => label(`shortNames[${i}]`, str(shortName)));
  if (kind && kind === listKind) errors.push(fielderrors.invalid(`${path}.listKind`, listKind, 'kind and listKind may not be the same'));
  list(names.categories).forEach((category, i) => label(`categories[${i}]`, str(category)));
  return errors;
}

function validateVersions(versionsValue: unknown): fielderrors.FieldError[] {
  const errors: fielderrors.FieldError[] = [];
  const versions = list(versionsValue);
  if (versions.length === 0) {
    errors.push(fielderrors.invalid('spec.versions', versionsValue ?? [], 'must have exactly one version marked as storage version'));
    return errors;
  }
  const seen = new Set<string>();
  let unique = true;
  let storageCount = 0;
  versions.forEach((versionValue, i) => {
    const version = obj(versionValue);
    const path = `spec.versions[${i}]`;
    const name = str(version.name);
    if (version.storage === true) storageCount++;
    if (seen.has(name)) unique = false;
    seen.add(name);
    const problems = dnsnames.dns1035LabelErrors(name);
    if (problems.length > 0) errors.push(fielderrors.invalid(`${path}.name`, name, problems.join(',')));
    errors.push(...validateVersion(version, path));
  });
  if (storageCount !== 1) errors.push(fielderrors.invalid('spec.versions', versionsValue, 'must have exactly one version marked as storage version'));
  if (!unique) errors.push(fielderrors.invalid('spec.versions', versionsValue, 'must contain unique version names'));
  return errors;
}

function validateVersion(version: json.JsonObject, path: string): fielderrors.FieldError[] {
  const errors: fielderrors.FieldError[] = [];
  const warning = version.deprecationWarning;
  if (warning !== undefined && warning !== null) {
    if (version.deprecated !== true) errors.push(fielderrors.invalid(`${path}.deprecationWarning`, warning, 'can only be set for deprecated versions'));
    else if (str(warning).length > 256) errors.push(fielderrors.tooLong(`${path}.deprecationWarning`, 'may not be more than 256 bytes'));
  }
  const schemaPath = `${path}.schema.openAPIV3Schema`;
  const openAPIV3Schema = obj(version.schema).openAPIV3Schema;
  if (openAPIV3Schema === undefined || openAPIV3Schema === null) errors.push(fielderrors.required(schemaPath, 'schemas are required'));
  else errors.push(...structural.validateStructuralSchema(openAPIV3Schema, schemaPath));
  errors.push(...validateSubresources(version.subresources, `${path}.subresources`));
  list(version.additionalPrinterColumns).forEach((column, i) => {
    errors.push(...validatePrinterColumn(obj(column), `${path}.additionalPrinterColumns[${i}]`));
  });
  return errors;
}

/** Upstream's check for the "simple JSON paths" of scale subresources and printer columns. */
function simplePathErrors(value: string, path: string): fielderrors.FieldError[] {
  if (value.length === 0) return [fielderrors.invalid(path, value, 'must not be empty')];
  if (!value.startsWith('.')) return [fielderrors.invalid(path, value, 'must be a simple json path starting with .')];
  return [];
}

function validateSubresources(value: unknown, path: string): fielderrors.FieldError[] {
  const errors: fielderrors.FieldError[] = [];
  if (!json.isObject(value) || value.scale === undefined || value.scale === null) return errors;
  const scale = obj(value.scale);
  const replicaPath = (field: string, prefix: string, under: string): void => {
    const fieldPath = `${path}.scale.${field}`;
    const jsonPath = str(scale[field]);
    if (!jsonPath) {
      errors.push(fielderrors.required(fieldPath));
      return;
    }
    const problems = simplePathErrors(jsonPath, fieldPath);
    if (problems.length > 0) errors.push(...problems);
    else if (!jsonPath.startsWith(prefix)) errors.push(fielderrors.invalid(fieldPath, jsonPath, `should be a json path under ${under}`));
  };
  replicaPath('specReplicasPath', '.spec.', '.spec');
  replicaPath('statusReplicasPath', '.status.', '.status');
  const selector = str(scale.labelSelectorPath);
  if (selector) {
    const fieldPath = `${path}.scale.labelSelectorPath`;
    const problems = simplePathErrors(selector, fieldPath);
    if (problems.length > 0) errors.push(...problems);
    else if (!selector.startsWith('.spec.') && !selector.startsWith('.status.')) {
      errors.push(fielderrors.invalid(fieldPath, selector, 'should be a json path under either .spec or .status'));
    }
  }
  return errors;
}

function validatePrinterColumn(column: json.JsonObject, path: string): fielderrors.FieldError[] {
  const errors: fielderrors.FieldError[] = [];
  if (!str(column.name)) errors.push(fielderrors.required(`${path}.name`));
  const type = str(column.type);
  if (!type) errors.push(fielderrors.required(`${path}.type`, `must be one of ${PRINTER_COLUMN_TYPES.join(',')}`));
  else if (!PRINTER_COLUMN_TYPES.includes(type)) errors.push(fielderrors.notSupported(`${path}.type`, type, PRINTER_COLUMN_TYPES));
  const format = str(column.format);
  if (format && !PRINTER_COLUMN_FORMATS.includes(format)) errors.push(fielderrors.notSupported(`${path}.format`, format, PRINTER_COLUMN_FORMATS));
  const jsonPath = str(column.jsonPath);
  if (!jsonPath) errors.push(fielderrors.required(`${path}.jsonPath`));
  else errors.push(...simplePathErrors(jsonPath, `${path}.jsonPath`));
  return errors;
}

/** What an update may keep that a create may not (upstream's ratcheting of conversion settings). */
interface ConversionOptions {
  /** Creates, and updates of CRDs whose review versions were recognised (or empty). */
  requireRecognizedVersion: boolean;
  /** Updates of CRDs not yet established, or whose CA bundle was already invalid. */
  allowInvalidCABundle: boolean;
}

/** The ConversionReview versions upstream understands; one must be listed (sorted, as in messages). */
const CONVERSION_REVIEW_VERSIONS = ['v1', 'v1beta1'];

const webhookOf = (conversion: unknown): json.JsonObject => obj(obj(conversion).webhook);

function conversionOptions(old: schemas.CustomResourceDefinition | undefined): ConversionOptions {
  if (!old) return { requireRecognizedVersion: true, allowInvalidCABundle: false };
  const oldWebhook = webhookOf(old.spec?.conversion);
  const oldVersions = list(oldWebhook.conversionReviewVersions).map(str);
  const oldBundle = str(obj(oldWebhook.clientConfig).caBundle);
  return {
    requireRecognizedVersion: oldVersions.length === 0 || oldVersions.some((v) => CONVERSION_REVIEW_VERSIONS.includes(v)),
    allowInvalidCABundle: !isEstablished(old) || (oldBundle !== '' && caBundleErrorOf(oldBundle) !== undefined),
  };
}

/** The CA bundle problem of a base64 `caBundle` (undecodable text is refused earlier, with 400). */
function caBundleErrorOf(base64: string): string | undefined {
  return webhookclients.caBundleError(Buffer.from(base64, 'base64').toString('latin1'));
}

/**
 * `spec.conversion` (D-CRD-2, D-CRD-21): strategy `None` or `Webhook`; a webhook needs a client
 * configuration and review versions, and `None` forbids both.
 */
function validateConversion(value: unknown, opts: ConversionOptions): fielderrors.FieldError[] {
  if (value === undefined || value === null) return [];
  const conversion = obj(value);
  const strategy = str(conversion.strategy);
  const errors: fielderrors.FieldError[] = [];
  if (!strategy) errors.push(fielderrors.required('spec.conversion.strategy'));
  else if (strategy !== 'None' && strategy !== 'Webhook') errors.push(fielderrors.notSupported('spec.conversion.strategy', strategy, ['None', 'Webhook']));
  const webhook = webhookOf(conversion);
  const clientConfig = webhook.clientConfig;
  const versions = webhook.conversionReviewVersions;
  const configPath = 'spec.conversion.webhookClientConfig';
  const versionsPath = 'spec.conversion.conversionReviewVersions';
  if (strategy === 'Webhook') {
    if (!json.isObject(clientConfig)) errors.push(fielderrors.required(configPath, 'required when strategy is set to Webhook'));
    else {
      errors.push(...webhookclients.validateClientConfig(configPath, clientConfig));
      const bundle = str(clientConfig.caBundle);
      const why = bundle && !opts.allowInvalidCABundle ? caBundleErrorOf(bundle) : undefined;
      if (why) errors.push(fielderrors.invalid(`${configPath}.caBundle`, bundle, why));
    }
    errors.push(...validateReviewVersions(list(versions).map(str), opts.requireRecognizedVersion, versionsPath));
  } else {
    if (clientConfig !== undefined && clientConfig !== null) {
      errors.push(fielderrors.forbidden(configPath, 'should not be set when strategy is not set to Webhook'));
    }
    if (list(versions).length > 0) errors.push(fielderrors.forbidden(versionsPath, 'should not be set when strategy is not set to Webhook'));
  }
  return errors;
}

function validateReviewVersions(versions: string[], requireRecognized: boolean, path: string): fielderrors.FieldError[] {
  if (versions.length === 0) return [fielderrors.required(path)];
  const errors: fielderrors.FieldError[] = [];
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errors.push(fielderrors.invalid(`${path}[${i}]`, v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const msg of dnsnames.dns1035LabelErrors(v)) errors.push(fielderrors.invalid(`${path}[${i}]`, v, msg));
  });
  if (requireRecognized && !versions.some((v) => CONVERSION_REVIEW_VERSIONS.includes(v))) {
    errors.push(fielderrors.invalid(path, versions, `must include at least one of ${CONVERSION_REVIEW_VERSIONS.join(', ')}`));
  }
  return errors;
}

function isEstablished(crd: schemas.CustomResourceDefinition): boolean {
  return list(obj(crd.status).conditions).some((c) => obj(c).type === 'Established' && obj(c).status === 'True');
}

function validateUpdate(crd: schemas.CustomResourceDefinition, old: schemas.CustomResourceDefinition): fielderrors.FieldError[] {
  const errors: fielderrors.FieldError[] = [];
  const spec = obj(crd.spec);
  const oldSpec = obj(old.spec);
  const immutable = (path: string, now: unknown, before: unknown): void => {
    if (!json.deepEqual(now, before)) errors.push(fielderrors.invalid(path, now, 'field is immutable'));
  };
  immutable('spec.group', spec.group, oldSpec.group);
  immutable('spec.names.plural', obj(spec.names).plural, obj(oldSpec.names).plural);
  if (isEstablished(old)) {
    immutable('spec.scope', spec.scope, oldSpec.scope);
    immutable('spec.names.kind', obj(spec.names).kind, obj(oldSpec.names).kind);
  }
  const versionNames = new Set(list(spec.versions).map((v) => str(obj(v).name)));
  list(obj(old.status).storedVersions).forEach((stored, i) => {
    if (!versionNames.has(str(stored))) errors.push(fielderrors.invalid(`status.storedVersions[${i}]`, stored, 'must appear in spec.versions'));
  });
  return errors;
}
