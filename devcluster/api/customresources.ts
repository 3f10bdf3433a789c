/**
 * Custom resources: how the objects a CRD defines are served. An established CRD yields one served
 * `ResourceType` per served version, all sharing one storage (conversion `None` only rewrites
 * apiVersion, D-CRD-5; `Webhook` calls the CRD's conversion webhook, D-CONV-401). Their
 * strategy applies the version's structural schema, which is where most of what an operator author
 * observes about custom objects comes from: pruning and defaulting on writes and on reads
 * (D-CRD-8/10), validation and CEL rules (D-CRD-11/13), the status subresource rules (D-SUB-1/2)
 * and the generation rule (D-META-7).
 */
import * as cel from '../crds/cel.js';
import * as conversion from '../crds/conversion.js';
import * as defaulting from '../crds/defaulting.js';
import * as listsemantics from '../crds/listsemantics.js';
import * as printercolumns from '../crds/printercolumns.js';
import * as pruning from '../crds/pruning.js';
import type * as schemas from '../crds/schemas.js';
import * as validation from '../crds/validation.js';
import * as statuses from '../server/statuses.js';
import * as objects from './objects.js';
import * as resources from './resources.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

export interface CustomTypeOptions {
  /** Evaluate CEL rules. */
  cel: boolean;
  /** Whether the CRD is terminating (creation refused, D-CRD-16). */
  terminating: () => boolean;
  /** Reports rules that cannot be compiled (once per CRD, D-CRD-13). */
  onCelWarnings?: (warnings: readonly string[]) => void;
  /** How conversion webhooks are called (CRDs whose strategy is `Webhook`, D-CONV-401). */
  conversion?: conversion.WebhookConversionOptions;
}

function withoutMetaAndStatus(o: JsonObject, dropStatus: boolean): JsonObject {
  const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = o;
  if (dropStatus) delete rest['status'];
  return rest;
}

/** Builds the served types of a CRD (only served versions). */
export function customTypes(crd: schemas.CustomResourceDefinition, opts: CustomTypeOptions): resources.ResourceType[] {
  const spec = crd.spec;
  const names = spec.names;
  const storage = resources.storageOf(spec.group, names.plural);
  const storageVersion = spec.versions.find((v) => v.storage)?.name ?? spec.versions[0]!.name;
  const storageApiVersion = `${spec.group}/${storageVersion}`;
  const ident: statuses.ResourceIdent = { group: spec.group, resource: names.plural, kind: names.kind };
  const convert = conversion.converterFor(crd);
  const callOut = opts.conversion ? conversion.webhookConverterFor(crd, opts.conversion) : undefined;
  const storageSchema = spec.versions.find((v) => v.name === storageVersion)?.schema?.openAPIV3Schema;
  const toStorageAsync = callOut
    ? async (obj: JsonObject): Promise<JsonObject> => {
        const [converted] = await callOut([obj], storageApiVersion);
        if (converted === obj) return obj;
        // Upstream prunes what the webhook answered by the target version's schema, and defaults it.
        return defaulting.applyDefaults(pruning.pruneObject(converted!, storageSchema).value, storageSchema) as JsonObject;
      }
    : undefined;
  return spec.versions
    .filter((v) => v.served)
    .map((version) => {
      const schema = version.schema?.openAPIV3Schema;
      const hasStatus = version.subresources?.status !== undefined;
      const scale = version.subresources?.scale;
      const compiled = opts.cel && schema ? cel.compileRules(schema as unknown as cel.CelSchemaNode) : undefined;
      if (compiled?.warnings.length) opts.onCelWarnings?.(compiled.warnings);
      const apiVersion = `${spec.group}/${version.name}`;
      const normalize = (obj: JsonObject): { value: JsonObject; unknownFields: string[] } => {
        const pruned = pruning.pruneObject(obj, schema);
        const value = defaulting.applyDefaults(pruned.value, schema) as JsonObject;
        return { value, unknownFields: pruned.unknownFields };
      };
      const strategy: resources.Strategy = {
        nameRule: 'subdomain',
        putCreates: false,
        requireResourceVersion: true,
        deleteReturnsObject: false,
        listSemantics: listsemantics.listSemanticsOf(schema),
        generation: (old, next) => !json.deepEqual(withoutMetaAndStatus(old, hasStatus), withoutMetaAndStatus(next, hasStatus)),
        normalize,
        prepareForCreate(obj) {
          if (!hasStatus) return obj;
          const { status: _s, ...rest } = obj;
          return rest;
        },
        prepareForUpdate(obj, old) {
          if (!hasStatus) return obj;
          const out = { ...obj };
          if (old['status'] === undefined) delete out['status'];
          else out['status'] = old['status'];
          return out;
        },
        prepareForSubresource(sub, obj, old) {
          if (sub !== 'status') return old;
          const out: JsonObject = { ...old };
          if (obj['status'] === undefined) delete out['status'];
          else out['status'] = obj['status'];
          return out;
        },
        validate(obj, old) {
          const errors = validation.validateCustomObject(obj, schema);
          if (compiled) errors.push(...cel.evaluateRules(compiled, obj, old));
          return errors;
        },
        toExternal(stored) {
          // Reads apply the current schema's pruning and defaulting (D-CRD-8/10 c).
          const converted = stored['apiVersion'] === apiVersion ? stored : convert(stored, apiVersion);
          return { ...normalize(converted).value, apiVersion };
        },
        toStorage: callOut ? undefined : (external) => convert(external, storageApiVersion),
        convertTo: convert,
        convertObjects: callOut,
        toStorageAsync,
        admitCreate(obj) {
          if (opts.terminating()) {
            const name = objects.nameOf(obj);
            throw statuses.forbidden(
              `${statuses.qualifiedResource(ident)} "${name}" is forbidden: create not allowed while custom resource definition is terminating`,
              { name, group: spec.group, kind: names.plural },
            );
          }
        },
      };
      const deprecationWarning = version.deprecated ? (version.deprecationWarning ?? `${spec.group}/${version.name} ${names.kind} is deprecated`) : undefined;
      const subresources: string[] = [];
      if (hasStatus) subresources.push('status');
      if (scale) subresources.push('scale');
      const type: resources.ResourceType = {
        group: spec.group,
        version: version.name,
        resource: names.plural,
        singular: names.singular ?? names.kind.toLowerCase(),
        kind: names.kind,
        listKind: names.listKind ?? `${names.kind}List`,
        namespaced: spec.scope === 'Namespaced',
        shortNames: names.shortNames ?? [],
        categories: names.categories ?? [],
        verbs: resources.ALL_VERBS,
        storage,
        subresources,
        scale: scale
          ? { specReplicasPath: scale.specReplicasPath, statusReplicasPath: scale.statusReplicasPath, labelSelectorPath: scale.labelSelectorPath }
          : undefined,
        builtin: false,
        customSchema: schema,
        deprecationWarning,
        strategy,
        table: {
          definitions: () => printercolumns.columnDefinitions(version) as resources.ColumnDefinition[],
          cells: (obj, now) => printercolumns.rowCells(version, obj, now),
        },
      };
      return type;
    });
}
