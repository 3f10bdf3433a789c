/**
 * Query options: the parameters of list, watch and write requests (D-WIRE-4, D-VERB-7, D-WATCH-9),
 * decoded and validated in one place — 400 on unparseable values, 422 on values that the
 * `…Options.meta.k8s.io` kinds reject — so that everything downstream works with typed values
 * instead of raw query strings, and every verb rejects bad options the same way.
 */
import * as fielderrors from '../meta/fielderrors.js';
import * as statuses from '../server/statuses.js';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

export interface ListOptions {
  watch: boolean;
  resourceVersion: string | undefined;
  resourceVersionMatch: string | undefined;
  allowWatchBookmarks: boolean;
  sendInitialEvents: boolean | undefined;
  timeoutSeconds: number | undefined;
  limit: number;
  continueToken: string | undefined;
  labelSelector: string | undefined;
  fieldSelector: string | undefined;
  includeObject: 'None' | 'Metadata' | 'Object';
}

export interface WriteOptions {
  dryRun: boolean;
  fieldManager: string | undefined;
  fieldValidation: FieldValidation;
  force: boolean | undefined;
}

function parseBool(q: URLSearchParams, name: string): boolean | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  if (v === 'true' || v === '1' || v === 'True') return true;
  if (v === 'false' || v === '0' || v === 'False' || v === '') return false;
  throw statuses.badRequest(`invalid value for ${name}: ${JSON.stringify(v)}: strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
}

function parseInteger(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  if (!/^-?\d+$/.test(v))
    throw statuses.badRequest(`invalid value for ${name}: ${JSON.stringify(v)}: strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  return Number(v);
}

/** A resourceVersion must be a non-negative decimal integer (D-VERB-7). */
export function checkResourceVersion(rv: string | undefined): void {
  if (rv !== undefined && rv !== '' && !/^\d+$/.test(rv)) {
    throw statuses.badRequest(`Invalid value: ${JSON.stringify(rv)}: strconv.ParseUint: parsing ${JSON.stringify(rv)}: invalid syntax`);
  }
}

export function decodeListOptions(q: URLSearchParams, opts: { forceWatch?: boolean } = {}): ListOptions {
  const watch = opts.forceWatch || (parseBool(q, 'watch') ?? false);
  const resourceVersion = q.get('resourceVersion') ?? undefined;
  checkResourceVersion(resourceVersion);
  const includeObject = q.get('includeObject') ?? 'Metadata';
  const options: ListOptions = {
    watch,
    resourceVersion: resourceVersion === '' ? undefined : resourceVersion,
    resourceVersionMatch: q.get('resourceVersionMatch') || undefined,
    allowWatchBookmarks: parseBool(q, 'allowWatchBookmarks') ?? false,
    sendInitialEvents: parseBool(q, 'sendInitialEvents'),
    timeoutSeconds: parseInteger(q, 'timeoutSeconds'),
    limit: Math.max(0, parseInteger(q, 'limit') ?? 0),
    continueToken: q.get('continue') || undefined,
    labelSelector: q.get('labelSelector') ?? undefined,
    fieldSelector: q.get('fieldSelector') ?? undefined,
    includeObject: includeObject === 'None' || includeObject === 'Object' ? includeObject : 'Metadata',
  };
  parseBool(q, 'pretty');
  validateListOptions(options);
  return options;
}

function validateListOptions(o: ListOptions): void {
  const errors: fielderrors.FieldError[] = [];
  const match = o.resourceVersionMatch;
  if (o.watch) {
    if (o.sendInitialEvents !== undefined && match !== 'NotOlderThan') {
      errors.push(fielderrors.forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
    }
    if (match !== undefined) {
      if (o.sendInitialEvents === undefined) {
        errors.push(fielderrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
      } else if (match !== 'NotOlderThan') {
        errors.push(fielderrors.notSupported('resourceVersionMatch', match, ['NotOlderThan']));
      }
    }
    if (o.continueToken !== undefined) errors.push(fielderrors.forbidden('continue', 'continue is not supported for watch'));
  } else {
    if (o.sendInitialEvents !== undefined) {
      errors.push(fielderrors.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
    }
    if (match !== undefined) {
      if (o.resourceVersion === undefined) {
        errors.push(fielderrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
      }
      if (o.continueToken !== undefined) {
        errors.push(fielderrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
      }
      if (match !== 'Exact' && match !== 'NotOlderThan') {
        errors.push(fielderrors.notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan']));
      } else if (match === 'Exact' && o.resourceVersion === '0') {
        errors.push(fielderrors.forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
      }
    }
  }
  if (errors.length) throw statuses.invalidOptions('ListOptions', errors);
  if (!o.watch && o.continueToken !== undefined && o.resourceVersion !== undefined) {
    throw statuses.badRequest('specifying resource version is not allowed when using continue');
  }
}

export function decodeWriteOptions(q: URLSearchParams, kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions', isApply = false): WriteOptions {
  const errors: fielderrors.FieldError[] = [];
  const dryRunValues = q.getAll('dryRun');
  const badDryRun = dryRunValues.filter((v) => v !== 'All' && v !== '');
  if (badDryRun.length) errors.push(fielderrors.notSupported('dryRun', badDryRun, ['All']));
  const fieldValidation = q.get('fieldValidation') ?? 'Warn';
  if (!['Ignore', 'Warn', 'Strict'].includes(fieldValidation)) {
    errors.push(fielderrors.notSupported('fieldValidation', fieldValidation, ['Ignore', 'Warn', 'Strict']));
  }
  const fieldManager = q.get('fieldManager') ?? undefined;
  if (fieldManager !== undefined && (fieldManager.length > 128 || !/^[\x20-\x7e]*$/.test(fieldManager))) {
    errors.push(fielderrors.invalid('fieldManager', fieldManager, 'must be at most 128 printable characters'));
  }
  const force = parseBool(q, 'force');
  if (force !== undefined && !isApply) errors.push(fielderrors.forbidden('force', 'may not be specified for non-apply patch'));
  if (isApply && !fieldManager) errors.push(fielderrors.required('fieldManager', 'is required for apply patch'));
  if (errors.length) throw statuses.invalidOptions(kind, errors);
  return {
    dryRun: dryRunValues.includes('All'),
    fieldManager,
    fieldValidation: fieldValidation as FieldValidation,
    force,
  };
}

export type PropagationPolicy = 'Foreground' | 'Background' | 'Orphan';

export interface DeleteOptions {
  dryRun: boolean;
  propagationPolicy: PropagationPolicy | undefined;
  gracePeriodSeconds: number | undefined;
  preconditions: { uid?: string; resourceVersion?: string };
}

/** Delete options from a JSON body or, when the body is empty, from the query (D-VERB-23). */
export function decodeDeleteOptions(q: URLSearchParams, body: unknown): DeleteOptions {
  const src: Record<string, unknown> = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const hasBody = body !== undefined;
  if (hasBody && (typeof body !== 'object' || body === null || Array.isArray(body))) {
    throw statuses.badRequest('the body of the request is not a valid DeleteOptions object');
  }
  const errors: fielderrors.FieldError[] = [];
  const dryRunRaw = hasBody && src['dryRun'] !== undefined ? src['dryRun'] : q.getAll('dryRun');
  const dryRun = Array.isArray(dryRunRaw) ? dryRunRaw.map(String) : [];
  if (dryRun.some((v) => v !== 'All' && v !== '')) errors.push(fielderrors.notSupported('dryRun', dryRun, ['All']));
  const policy = (hasBody ? src['propagationPolicy'] : undefined) ?? q.get('propagationPolicy') ?? undefined;
  if (policy !== undefined && policy !== null && !['Foreground', 'Background', 'Orphan'].includes(String(policy))) {
    errors.push(fielderrors.notSupported('propagationPolicy', policy, ['Foreground', 'Background', 'Orphan']));
  }
  const orphanRaw = hasBody ? src['orphanDependents'] : (q.get('orphanDependents') ?? undefined);
  const orphan = orphanRaw === undefined || orphanRaw === null ? undefined : orphanRaw === true || orphanRaw === 'true';
  if (orphan !== undefined && policy)
    errors.push(fielderrors.invalid('propagationPolicy', policy, 'orphanDependents and propagationPolicy cannot both be set'));
  const graceRaw = hasBody && src['gracePeriodSeconds'] !== undefined ? src['gracePeriodSeconds'] : parseInteger(q, 'gracePeriodSeconds');
  let grace = graceRaw === undefined || graceRaw === null ? undefined : Number(graceRaw);
  if (grace !== undefined && grace < 0) grace = 1;
  if (errors.length) throw statuses.invalidOptions('DeleteOptions', errors);
  const pre = (src['preconditions'] ?? {}) as { uid?: string; resourceVersion?: string };
  const effectivePolicy = (policy as PropagationPolicy | undefined) ?? (orphan === true ? 'Orphan' : orphan === false ? 'Background' : undefined);
  return { dryRun: dryRun.includes('All'), propagationPolicy: effectivePolicy, gracePeriodSeconds: grace, preconditions: pre };
}
