/**
 * Pruning: the "my status vanished" check (runtime reference, pitfall P-1).
 *
 * The runtime writes handler results to `status.<handler id>` (R-STORAGE-14). A structural schema
 * prunes every field it does not declare, so unless `status` keeps unknown fields, those results
 * are silently dropped by the API server. This module finds the served versions whose schema would
 * prune them and words a warning that names the CRD, the handler that returns a value, and both
 * ways out. Only kinds with such a handler are warned about (detecting.ts finds them in src/): the
 * stubs return nothing, and a project whose handlers return nothing loses nothing. Pure: model and
 * handler places in, text out.
 */
import type * as detecting from './detecting.js';
import * as loading from './loading.js';
import type * as modeling from './modeling.js';
import * as schemas from './schemas.js';

/** Whether the schema of a version keeps arbitrary keys under `status`. */
export function keepsStatusResults(version: modeling.VersionModel): boolean {
  const status = version.statusSchema;
  if (!status) return schemas.flag(version.schema, schemas.PRESERVE_UNKNOWN_FIELDS);
  if (schemas.flag(status, schemas.PRESERVE_UNKNOWN_FIELDS)) return true;
  if (schemas.own(status, 'additionalProperties') === true) return true;
  const additional = schemas.additionalSchemaOf(status);
  return additional !== undefined && (schemas.flag(additional, schemas.PRESERVE_UNKNOWN_FIELDS) || schemas.typeOf(additional) === undefined);
}

/**
 * One warning per CRD with served versions whose status would prune handler results, when one of
 * its handlers returns a value: `returning` maps CRD names to the registrations that do.
 */
export function statusPruningWarnings(model: modeling.GeneratorModel, returning: ReadonlyMap<string, readonly detecting.Place[]>): string[] {
  const warnings: string[] = [];
  for (const crd of model.crds) {
    const handlers = returning.get(crd.crdName) ?? [];
    if (handlers.length === 0) continue;
    const pruning = crd.versions.filter((version) => !keepsStatusResults(version));
    if (pruning.length === 0) continue;
    const first = pruning[0]!;
    const where = loading.placeOf(first);
    const versions = pruning.map((version) => version.version).join(', ');
    const what = first.statusSchema ? 'its status schema declares fixed fields' : 'its schema declares no status';
    const handler = `${handlers[0]!.path}:${handlers[0]!.line}`;
    const more = handlers.length > 1 ? ` (and ${handlers.length - 1} more)` : '';
    warnings.push(
      `${where}: ${crd.crdName} (${versions}): the handler registered at ${handler}${more} returns a value, which the runtime writes to status.<handler id>; ` +
        `the API server will prune it, because ${what}. ` +
        'Fix: add `x-kubernetes-preserve-unknown-fields: true` to the status schema (spec.versions[*].schema.openAPIV3Schema.properties.status), ' +
        'or do not write results to status (handlers return nothing and write declared status fields through `patch.status`).',
    );
  }
  return warnings;
}
