/**
 * The strategy of the built-in kinds without a module of their own (D-BI-20..23), and the schema
 * layer every built-in kind gets: bodies decoded against the kind's upstream OpenAPI schema
 * (`decoding.ts`: types, unknown fields, nulls, times, quantities), the schema's rules checked
 * (`schemarules.ts`: required fields, enums), and strategic merge and apply semantics read from it
 * (`schemapatch.ts`).
 *
 * What differs between generic kinds is only what upstream's strategies decide per kind and the
 * schema cannot say: which kinds keep `metadata.generation`, which reset `status` on create, and
 * which name rule they follow. Nothing of the schema is read before the first request that needs it.
 */
import type * as resources from '../api/resources.js';
import type * as fielderrors from '../meta/fielderrors.js';
import type * as upstream from '../upstream/catalog.js';
import * as decoding from './decoding.js';
import * as schemapatch from './schemapatch.js';
import * as schemarules from './schemarules.js';
import * as strategies from './strategies.js';
import type { JsonObject } from '../json.js';

/**
 * Kinds whose upstream strategy sets `metadata.generation` to 1 on create and bumps it when the spec
 * changes, by `group/Kind`.
 */
const GENERATION_KINDS = new Set([
  '/ReplicationController',
  'apps/DaemonSet',
  'apps/ReplicaSet',
  'apps/StatefulSet',
  'batch/Job',
  'batch/CronJob',
  'policy/PodDisruptionBudget',
  'autoscaling/HorizontalPodAutoscaler',
  'networking.k8s.io/Ingress',
  'networking.k8s.io/IngressClass',
  'networking.k8s.io/NetworkPolicy',
  'flowcontrol.apiserver.k8s.io/FlowSchema',
  'flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding',
]);

/** Groups whose object names are path segments rather than DNS subdomains (`system:node`). */
const PATH_NAMED_GROUPS = new Set(['rbac.authorization.k8s.io']);

/** Whether `obj`'s spec differs from `old`'s (the generation rule of the kinds above). */
const specChanged = (old: JsonObject, next: JsonObject): boolean => strategies.changed(old['spec'], next['spec']);

/** The generic strategy of a catalog entry. */
export function genericStrategy(e: upstream.ResourceEntry): resources.Strategy {
  const hasStatus = e.subresources.some((s) => s.name === 'status');
  const overrides: Partial<resources.Strategy> = {
    nameRule: PATH_NAMED_GROUPS.has(e.group) ? 'path' : 'subdomain',
    smpSchema: schemapatch.smpSchemaOf(e.definition),
    listSemantics: schemapatch.listSemanticsOf(e.definition),
  };
  if (GENERATION_KINDS.has(`${e.group}/${e.kind}`)) overrides.generation = specChanged;
  if (hasStatus) {
    // Upstream resets status on create and keeps it on main-endpoint updates (D-SUB-3).
    overrides.prepareForCreate = (obj) => {
      const { status: _status, ...rest } = obj;
      return rest;
    };
    overrides.prepareForUpdate = (obj, old) => strategies.keepStatus(obj, old);
    overrides.prepareForSubresource = strategies.statusSubresource.prepareForSubresource;
  }
  return strategies.plainStrategy(e.kind, overrides);
}

/**
 * The schema layer over any built-in kind's strategy: decoding (unless the strategy normalises
 * bodies itself) and the schema's rules after the kind's own validation, without repeating an error
 * the kind already reported for the same field.
 */
export function withSchema(strategy: resources.Strategy, e: upstream.ResourceEntry): resources.Strategy {
  const own = strategy.validate;
  return {
    ...strategy,
    // Kinds with a module of their own get the schema's list semantics too (D-BI-22), so that
    // managedFields track list items by key as upstream does, and apply does not conflict on them.
    listSemantics: strategy.listSemantics ?? schemapatch.listSemanticsOf(e.definition),
    normalize: strategy.normalize ?? ((obj) => new decoding.SchemaDecoder(e.kind, e.version).decode(e.definition, obj)),
    validate(obj, old, ctx, subresource) {
      const errors: fielderrors.FieldError[] = own ? own(obj, old, ctx, subresource) : [];
      const seen = new Set(errors.map((x) => x.field));
      for (const err of schemarules.schemaErrors(e.definition, obj)) if (!seen.has(err.field)) errors.push(err);
      return errors;
    },
  };
}
