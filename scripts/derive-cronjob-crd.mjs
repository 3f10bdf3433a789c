#!/usr/bin/env node
// Writes fixtures/crds/cronjobs.yaml: the CronJob CRD of kubebuilder's tutorial (group
// batch.tutorial.kopf-gen.dev), the common case of a CRD that embeds a copy of a built-in spec
// (`spec.jobTemplate` is batch/v1 JobTemplateSpec). The embedded schema is derived from the
// Kubernetes OpenAPI document the devcluster carries (devcluster/upstream/swagger.json, Apache-2.0)
// the way controller-gen writes a Go type it embeds: every $ref inlined with the field's own
// description, ObjectMeta of an embedded template as a bare `type: object`, Time as a date-time
// string, IntOrString and Quantity as int-or-string (`anyOf` integer|string), the patch-strategy
// and union extensions dropped (a CRD schema does not allow them), list/map types kept, and the
// upstream `+default` values a structural schema needs for its list-map keys.
//   node scripts/derive-cronjob-crd.mjs          (writes the fixture)
//   node scripts/derive-cronjob-crd.mjs --check  (exits 1 when it is out of date)
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';

const root = path.resolve(import.meta.dirname, '..');
const swagger = JSON.parse(fs.readFileSync(path.join(root, 'devcluster', 'upstream', 'swagger.json'), 'utf8'));
const target = path.join(root, 'fixtures', 'crds', 'cronjobs.yaml');

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const QUANTITY_PATTERN = '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

/** Upstream `+default` markers on members that are list-map keys (a structural schema needs them). */
const DEFAULTS = {
  'io.k8s.api.core.v1.ContainerPort': { protocol: 'TCP' },
  'io.k8s.api.core.v1.LocalObjectReference': { name: '' },
};

/** The extensions a CRD schema accepts; the others (patch strategy, unions, GVK) are dropped. */
const KEPT = new Set(['x-kubernetes-list-type', 'x-kubernetes-list-map-keys', 'x-kubernetes-map-type']);

/** A definition by its $ref, in controller-gen's shape for the special types. */
function definition(ref, description) {
  const name = ref.replace('#/definitions/', '');
  const described = (schema) => (description === undefined ? schema : { description, ...schema });
  if (name === `${META}ObjectMeta`) return described({ type: 'object' });
  if (name === `${META}Time` || name === `${META}MicroTime`) return described({ type: 'string', format: 'date-time' });
  if (name === 'io.k8s.apimachinery.pkg.util.intstr.IntOrString') {
    return described({ anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true });
  }
  if (name === 'io.k8s.apimachinery.pkg.api.resource.Quantity') {
    return described({ anyOf: [{ type: 'integer' }, { type: 'string' }], pattern: QUANTITY_PATTERN, 'x-kubernetes-int-or-string': true });
  }
  const def = swagger.definitions[name];
  if (def === undefined) throw new Error(`no definition ${name}`);
  const inlined = inline(def, DEFAULTS[name]);
  return description === undefined ? inlined : sorted({ ...inlined, description });
}

/** One schema with its refs inlined, keys in controller-gen's (alphabetical) order. */
function inline(schema, defaults = {}) {
  if (schema.$ref !== undefined) return definition(schema.$ref, schema.description);
  const out = {};
  for (const key of Object.keys(schema).sort()) {
    const value = schema[key];
    if (key.startsWith('x-') && !KEPT.has(key)) continue;
    if (key === 'properties') {
      out.properties = {};
      for (const member of Object.keys(value).sort()) {
        const property = inline(value[member]);
        out.properties[member] = member in defaults ? { default: defaults[member], ...property } : property;
      }
    } else if (key === 'items' || (key === 'additionalProperties' && typeof value === 'object')) {
      out[key] = inline(value);
    } else {
      out[key] = value;
    }
  }
  return sorted(out);
}

const sorted = (object) => Object.fromEntries(Object.entries(object).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

const int = (format, description) => ({ description, format, minimum: 0, type: 'integer' });

const schema = {
  description: 'CronJob runs a Job on a schedule (the kubebuilder tutorial’s kind).',
  properties: {
    apiVersion: { description: 'The versioned schema of this representation of an object.', type: 'string' },
    kind: { description: 'The REST resource this object represents.', type: 'string' },
    metadata: { type: 'object' },
    spec: {
      description: 'What the CronJob should do and when.',
      properties: {
        concurrencyPolicy: {
          description: 'How to treat a run that is due while an earlier one is still active.',
          enum: ['Allow', 'Forbid', 'Replace'],
          type: 'string',
        },
        failedJobsHistoryLimit: int('int32', 'How many failed finished Jobs to keep.'),
        jobTemplate: definition('#/definitions/io.k8s.api.batch.v1.JobTemplateSpec', 'The Job to create when a run is due.'),
        schedule: { description: 'The schedule in Cron format.', minLength: 0, type: 'string' },
        startingDeadlineSeconds: int('int64', 'How late, in seconds, a missed run may still start.'),
        successfulJobsHistoryLimit: int('int32', 'How many successful finished Jobs to keep.'),
        suspend: { description: 'Suspends subsequent runs; runs already started are not touched.', type: 'boolean' },
      },
      required: ['jobTemplate', 'schedule'],
      type: 'object',
    },
    status: {
      description: 'What the CronJob observed.',
      properties: {
        active: {
          description: 'The Jobs currently running.',
          items: definition('#/definitions/io.k8s.api.core.v1.ObjectReference'),
          type: 'array',
          'x-kubernetes-list-type': 'atomic',
        },
        lastScheduleTime: { description: 'When a Job was last started.', format: 'date-time', type: 'string' },
      },
      type: 'object',
    },
  },
  type: 'object',
};

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'cronjobs.batch.tutorial.kopf-gen.dev' },
  spec: {
    group: 'batch.tutorial.kopf-gen.dev',
    names: { kind: 'CronJob', listKind: 'CronJobList', plural: 'cronjobs', singular: 'cronjob' },
    scope: 'Namespaced',
    versions: [{ name: 'v1', schema: { openAPIV3Schema: schema }, served: true, storage: true, subresources: { status: {} } }],
  },
};

const header = [
  '# Generated by scripts/derive-cronjob-crd.mjs; do not edit. The CronJob of kubebuilder’s tutorial, its',
  '# spec.jobTemplate inlined from batch/v1 JobTemplateSpec of the Kubernetes 1.32 OpenAPI document as',
  '# controller-gen writes it (schema text Apache-2.0, © The Kubernetes Authors).',
  '',
].join('\n');
const text = header + stringify(crd, { lineWidth: 0 });

if (process.argv.includes('--check')) {
  const current = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '';
  if (current !== text) {
    console.error(`${path.relative(root, target)} is out of date: run node scripts/derive-cronjob-crd.mjs`);
    process.exit(1);
  }
} else {
  fs.writeFileSync(target, text);
  console.log(`wrote ${path.relative(root, target)} (${text.split('\n').length} lines)`);
}
