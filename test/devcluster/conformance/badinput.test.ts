/**
 * Bad input over HTTP: malformed bodies, unknown media types and resources, invalid names and
 * metadata, oversized bodies, invalid CRD schemas, patches of missing objects and stale
 * resourceVersions. Every case checks the exact status code and reason, that nothing was written
 * (same objects, same cluster revision) and that the server still answers afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIGMAPS, WIDGETS, startHarness, type Harness, type HttpResult, type Json } from './harness.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
const LIMIT = 3 * 1024 * 1024;

interface Case {
  title: string;
  code: number;
  reason: string;
  /** Exact message, or a pattern it must match. */
  message?: string | RegExp;
  /** A cause (field, reason) the Status must list. */
  cause?: { field: string; reason?: string };
  /** Further checks on the Status body. */
  check?(status: Json): void;
  send(h: Harness, ctx: Context): Promise<HttpResult>;
}

interface Context {
  /** The Widget `base` as first created (its RV is stale after setup). */
  staleWidget: Json;
  /** The ConfigMap `base` as first created (stale as well). */
  staleConfigMap: Json;
}

const widgetBody = (name: string, extra: Json = {}): Json => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name, ...(extra['metadata'] ?? {}) },
  spec: extra['spec'] ?? { size: 1 },
});
const cmBody = (name: string, metadata: Json = {}, data: Json = { a: '1' }): Json => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...metadata },
  data,
});
const raw = (h: Harness, method: string, path: string, text: string, contentType: string): Promise<HttpResult> =>
  h.request(method, path, text, { contentType });

function crd(name: string, spec: Json): Json {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'things', singular: 'thing', kind: 'Thing' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object' } } } } }],
      ...spec,
    },
  };
}
const version = (name: string, storage: boolean, schema: Json | undefined): Json => ({
  name,
  served: true,
  storage,
  ...(schema ? { schema: { openAPIV3Schema: schema } } : {}),
});

const CASES: Case[] = [
  // Malformed bodies.
  {
    title: 'D-WIRE-16 a malformed JSON create body is 400 BadRequest',
    code: 400,
    reason: 'BadRequest',
    message: /json parse error/,
    send: (h) => raw(h, 'POST', WIDGETS, '{"apiVersion": "example.com/v1", "kind": ', 'application/json'),
  },
  {
    title: 'D-WIRE-16 a malformed JSON update body is 400 BadRequest',
    code: 400,
    reason: 'BadRequest',
    send: (h) => raw(h, 'PUT', `${CONFIGMAPS}/base`, '{"metadata": {"name": "base"}', 'application/json'),
  },
  {
    title: 'D-WIRE-16 a malformed YAML create body is 400 BadRequest',
    code: 400,
    reason: 'BadRequest',
    send: (h) => raw(h, 'POST', CONFIGMAPS, 'apiVersion: v1\nkind: ConfigMap\nmetadata: [name: x\n', 'application/yaml'),
  },
  {
    title: 'D-WIRE-16 an empty create body is 400 BadRequest',
    code: 400,
    reason: 'BadRequest',
    send: (h) => raw(h, 'POST', CONFIGMAPS, '', 'application/json'),
  },
  {
    title: 'D-WIRE-16 a create body that is a JSON array is 400 BadRequest',
    code: 400,
    reason: 'BadRequest',
    send: (h) => raw(h, 'POST', CONFIGMAPS, '[{"metadata":{"name":"x"}}]', 'application/json'),
  },
  {
    title: 'D-VERB-20 a malformed merge patch is 400 BadRequest',
    code: 400,
    reason: 'BadRequest',
    send: (h) => raw(h, 'PATCH', `${WIDGETS}/base`, '{"spec": {"size": 2}', 'application/merge-patch+json'),
  },
  {
    title: 'D-VERB-20 a merge patch that is not a JSON object is 400 BadRequest',
    code: 400,
    reason: 'BadRequest',
    send: (h) => raw(h, 'PATCH', `${WIDGETS}/base`, '[1, 2]', 'application/merge-patch+json'),
  },
  {
    title: 'D-VERB-19 a JSON patch with an unknown op is 400 BadRequest',
    code: 400,
    reason: 'BadRequest',
    send: (h) => h.patch(`${WIDGETS}/base`, [{ op: 'frobnicate', path: '/spec/size', value: 2 }], 'json'),
  },
  {
    title: 'D-VERB-22 a malformed apply configuration is 400 BadRequest',
    code: 400,
    reason: 'BadRequest',
    send: (h) => raw(h, 'PATCH', `${WIDGETS}/base?fieldManager=m`, 'apiVersion: example.com/v1\nkind: [Widget\n', 'application/apply-patch+yaml'),
  },
  {
    title: 'D-VERB-23 a malformed DeleteOptions body is 400 BadRequest',
    code: 400,
    reason: 'BadRequest',
    send: (h) => raw(h, 'DELETE', `${WIDGETS}/base`, '{"propagationPolicy": ', 'application/json'),
  },
  {
    title: 'D-VERB-12 a body apiVersion that differs from the URL is 400 BadRequest',
    code: 400,
    reason: 'BadRequest',
    message: 'the API version in the data (example.com/v2) does not match the expected API version (example.com/v1)',
    send: (h) => h.post(WIDGETS, { ...widgetBody('bad-version'), apiVersion: 'example.com/v2' }),
  },
  {
    title: 'D-CRD-9 an unknown field with fieldValidation=Strict is 400 BadRequest',
    code: 400,
    reason: 'BadRequest',
    message: 'strict decoding error: unknown field "spec.bogus"',
    send: (h) => h.post(`${WIDGETS}?fieldValidation=Strict`, widgetBody('strict', { spec: { size: 1, bogus: true } })),
  },
  {
    title: 'D-CRD-9 a duplicate JSON key with fieldValidation=Strict is 400 BadRequest',
    code: 400,
    reason: 'BadRequest',
    message: 'strict decoding error: duplicate field "spec.size"',
    send: (h) =>
      raw(
        h,
        'POST',
        `${WIDGETS}?fieldValidation=Strict`,
        '{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"dup"},"spec":{"size":1,"size":2}}',
        'application/json',
      ),
  },
  {
    title: 'D-CRD-9 a duplicate key in a strict merge patch is 400 BadRequest',
    code: 400,
    reason: 'BadRequest',
    message: 'strict decoding error: duplicate field "metadata.labels.a"',
    send: (h) => raw(h, 'PATCH', `${CONFIGMAPS}/base?fieldValidation=Strict`, '{"metadata":{"labels":{"a":"1","a":"2"}}}', 'application/merge-patch+json'),
  },

  // Media types.
  {
    title: 'D-WIRE-16 an unknown create Content-Type of a built-in kind is 415 UnsupportedMediaType listing protobuf',
    code: 415,
    reason: 'UnsupportedMediaType',
    message:
      'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
    send: (h) => raw(h, 'POST', CONFIGMAPS, JSON.stringify(cmBody('xml')), 'application/xml'),
  },
  {
    title: 'D-WIRE-16 an unknown create Content-Type of a custom resource is 415 UnsupportedMediaType without protobuf',
    code: 415,
    reason: 'UnsupportedMediaType',
    message: 'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml',
    send: (h) => raw(h, 'POST', WIDGETS, JSON.stringify(widgetBody('xml')), 'application/xml'),
  },
  {
    title: 'D-WIRE-25 a protobuf create body of a custom resource is 415 UnsupportedMediaType',
    code: 415,
    reason: 'UnsupportedMediaType',
    message: 'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml',
    send: (h) => raw(h, 'POST', WIDGETS, 'k8s\u0000\n\u0000', 'application/vnd.kubernetes.protobuf'),
  },
  {
    title: 'D-WIRE-27 a protobuf create body of only the magic prefix is 400 BadRequest',
    code: 400,
    reason: 'BadRequest',
    message: 'the object provided is unrecognized (must be of type ConfigMap): empty body (6b387300)',
    send: (h) => raw(h, 'POST', CONFIGMAPS, 'k8s\u0000', 'application/vnd.kubernetes.protobuf'),
  },
  {
    title: 'D-WIRE-27 a protobuf update body without the magic prefix is 400 BadRequest',
    code: 400,
    reason: 'BadRequest',
    message:
      /^the object provided is unrecognized \(must be of type ConfigMap\): provided data does not appear to be a protobuf message, expected prefix \[107 56 115 0\] \(7b22/,
    send: (h) => raw(h, 'PUT', `${CONFIGMAPS}/base`, JSON.stringify(cmBody('base')), 'application/vnd.kubernetes.protobuf'),
  },
  {
    title: 'D-WIRE-25 a protobuf patch body is 415 UnsupportedMediaType',
    code: 415,
    reason: 'UnsupportedMediaType',
    send: (h) => raw(h, 'PATCH', `${CONFIGMAPS}/base`, 'k8s\u0000', 'application/vnd.kubernetes.protobuf'),
  },
  {
    title: 'D-VERB-18 an unknown patch Content-Type is 415 UnsupportedMediaType',
    code: 415,
    reason: 'UnsupportedMediaType',
    send: (h) => raw(h, 'PATCH', `${CONFIGMAPS}/base`, '{"data":{"a":"2"}}', 'application/x-www-form-urlencoded'),
  },
  {
    title: 'D-VERB-18 a strategic merge patch of a CR is 415 UnsupportedMediaType',
    code: 415,
    reason: 'UnsupportedMediaType',
    message:
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    send: (h) => h.patch(`${WIDGETS}/base`, { spec: { size: 2 } }, 'strategic'),
  },

  // Unknown resources.
  {
    title: 'D-WIRE-3 GET of an unknown resource is 404 NotFound',
    code: 404,
    reason: 'NotFound',
    message: 'the server could not find the requested resource',
    send: (h) => h.get('/api/v1/namespaces/default/gizmos'),
  },
  {
    title: 'D-WIRE-3 POST to an unknown group is 404 NotFound',
    code: 404,
    reason: 'NotFound',
    message: 'the server could not find the requested resource',
    send: (h) => h.post('/apis/nope.example.com/v1/namespaces/default/things', { apiVersion: 'nope.example.com/v1', kind: 'Thing', metadata: { name: 'x' } }),
  },
  {
    title: 'D-WIRE-3 an unserved version of a served group is 404 NotFound',
    code: 404,
    reason: 'NotFound',
    send: (h) => h.post('/apis/example.com/v9/namespaces/default/widgets', { ...widgetBody('v9'), apiVersion: 'example.com/v9' }),
  },
  { title: 'D-WIRE-3 an unknown subresource is 404 NotFound', code: 404, reason: 'NotFound', send: (h) => h.put(`${WIDGETS}/base/bogus`, widgetBody('base')) },
  {
    title: 'D-WIRE-3 DELETE of an unknown resource is 404 NotFound',
    code: 404,
    reason: 'NotFound',
    send: (h) => h.del('/api/v1/namespaces/default/gizmos/base'),
  },

  // Names and metadata.
  {
    title: 'D-META-8 an invalid Widget name is 422 Invalid',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'metadata.name', reason: 'FieldValueInvalid' },
    send: (h) => h.post(WIDGETS, widgetBody('Bad_Name')),
  },
  {
    title: 'D-META-8 a ConfigMap name over 253 characters is 422 Invalid',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'metadata.name' },
    send: (h) => h.post(CONFIGMAPS, cmBody('a'.repeat(254))),
  },
  {
    title: 'D-META-8 a metadata.name that is not a string is 422 Invalid and the Status still names a string',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'metadata.name', reason: 'FieldValueTypeInvalid' },
    check: (s) => {
      expect(s['details']['name'] ?? '').toBe('');
      expect(s['message']).toMatch(/^Widget\.example\.com "" is invalid: /);
    },
    send: (h) => h.post(WIDGETS, { ...widgetBody('x'), metadata: { name: { nested: 'object' } } }),
  },
  {
    title: 'D-META-8 an update whose body name is not a string is 400 BadRequest',
    code: 400,
    reason: 'BadRequest',
    send: (h) => h.put(`${CONFIGMAPS}/base`, { ...cmBody('base'), metadata: { name: 42 } }),
  },
  {
    title: 'D-META-11 a label value that is not a string is 422 Invalid on a custom resource',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'metadata.labels[a]', reason: 'FieldValueTypeInvalid' },
    send: (h) => h.post(WIDGETS, { ...widgetBody('label-number'), metadata: { name: 'label-number', labels: { a: 1 } } }),
  },
  {
    title: 'D-BI-20 a label value that is not a string is 400 on a built-in kind, with the decoder message',
    code: 400,
    reason: 'BadRequest',
    message:
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string',
    send: (h) => h.post(CONFIGMAPS, cmBody('label-number', { labels: { a: 1 } })),
  },
  {
    title: 'D-META-13 finalizers that are not a list are 422 Invalid',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'metadata.finalizers', reason: 'FieldValueTypeInvalid' },
    send: (h) => h.patch(`${WIDGETS}/base`, { metadata: { finalizers: 'example.com/f' } }),
  },
  {
    title: 'D-META-9 an invalid generateName is 422 Invalid',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'metadata.generateName' },
    send: (h) => h.post(CONFIGMAPS, { ...cmBody(''), metadata: { generateName: 'Bad_' } }),
  },
  {
    title: 'D-META-10 a namespace name that is not a DNS label is 422 Invalid',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'metadata.name' },
    send: (h) => h.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'Bad.NS' } }),
  },
  {
    title: 'D-META-11 an invalid label key is 422 Invalid on metadata.labels',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'metadata.labels', reason: 'FieldValueInvalid' },
    send: (h) => h.post(CONFIGMAPS, cmBody('bad-label', { labels: { 'bad key': 'v' } })),
  },
  {
    title: 'D-META-11 an invalid label key prefix is 422 Invalid on metadata.labels',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'metadata.labels' },
    send: (h) => h.post(CONFIGMAPS, cmBody('bad-prefix', { labels: { 'Bad_Prefix/x': 'v' } })),
  },
  {
    title: 'D-META-11 an invalid label value is 422 Invalid on metadata.labels',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'metadata.labels' },
    send: (h) => h.post(CONFIGMAPS, cmBody('bad-value', { labels: { ok: '-starts-with-dash' } })),
  },
  {
    title: 'D-META-11 an update that adds an invalid label is 422 Invalid',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'metadata.labels' },
    send: (h) => h.patch(`${WIDGETS}/base`, { metadata: { labels: { 'a/b/c': 'v' } } }),
  },
  {
    title: 'D-META-12 an invalid annotation key is 422 Invalid on metadata.annotations',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'metadata.annotations' },
    send: (h) => h.post(CONFIGMAPS, cmBody('bad-annotation', { annotations: { 'no spaces please': 'v' } })),
  },
  {
    title: 'D-META-13 an invalid finalizer is 422 Invalid on metadata.finalizers',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'metadata.finalizers' },
    send: (h) => h.post(WIDGETS, widgetBody('bad-finalizer', { metadata: { finalizers: ['not a/valid/finalizer'] } })),
  },
  {
    title: 'D-CRD-11 a Widget that fails its schema is 422 Invalid',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'spec.size' },
    send: (h) => h.post(WIDGETS, widgetBody('bad-size', { spec: { size: 'big' } })),
  },

  // Oversized bodies.
  {
    title: 'a create body over 3 MiB is 413 RequestEntityTooLarge',
    code: 413,
    reason: 'RequestEntityTooLarge',
    message: `Request entity too large: limit is ${LIMIT}`,
    send: (h) => h.post(CONFIGMAPS, cmBody('huge', {}, { a: 'x'.repeat(LIMIT) })),
  },
  {
    title: 'an update body over 3 MiB is 413 RequestEntityTooLarge',
    code: 413,
    reason: 'RequestEntityTooLarge',
    send: (h) => h.put(`${CONFIGMAPS}/base`, cmBody('base', {}, { a: 'x'.repeat(LIMIT + 1) })),
  },
  {
    title: 'a patch body over 3 MiB is 413 RequestEntityTooLarge',
    code: 413,
    reason: 'RequestEntityTooLarge',
    send: (h) => h.patch(`${WIDGETS}/base`, { spec: { extra: { blob: 'x'.repeat(LIMIT) } } }),
  },
  {
    title: 'D-VERB-19 a JSON patch of more than 10000 operations is 413 RequestEntityTooLarge',
    code: 413,
    reason: 'RequestEntityTooLarge',
    send: (h) =>
      h.patch(
        `${WIDGETS}/base`,
        Array.from({ length: 10001 }, () => ({ op: 'test', path: '/spec/size', value: 1 })),
        'json',
      ),
  },

  // Invalid CRDs.
  {
    title: 'D-CRD-2 a CRD schema with an untyped property is 422 Invalid',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'spec.versions[0].schema.openAPIV3Schema.properties[spec].type' },
    send: (h) =>
      h.post(
        CRDS,
        crd('things.example.com', { versions: [version('v1', true, { type: 'object', properties: { spec: { properties: { a: { type: 'string' } } } } })] }),
      ),
  },
  {
    title: 'D-CRD-2 a CRD version without a schema is 422 Invalid',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'spec.versions[0].schema.openAPIV3Schema', reason: 'FieldValueRequired' },
    send: (h) => h.post(CRDS, crd('things.example.com', { versions: [version('v1', true, undefined)] })),
  },
  {
    title: 'D-CRD-2 a CRD without a storage version is 422 Invalid',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'spec.versions' },
    send: (h) => h.post(CRDS, crd('things.example.com', { versions: [version('v1', false, { type: 'object' })] })),
  },
  {
    title: 'D-CRD-2 a CRD schema whose root is not an object is 422 Invalid',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'spec.versions[0].schema.openAPIV3Schema.type' },
    send: (h) => h.post(CRDS, crd('things.example.com', { versions: [version('v1', true, { type: 'string' })] })),
  },
  {
    title: 'D-CRD-1 a CRD whose name does not match its names is 422 Invalid',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'metadata.name' },
    send: (h) => h.post(CRDS, crd('gizmos.example.com', {})),
  },
  {
    title: 'D-CRD-2 a CRD with a group without a dot is 422 Invalid',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'spec.group' },
    send: (h) => h.post(CRDS, { ...crd('things.example', {}), spec: { ...crd('x', {})['spec'], group: 'example' }, metadata: { name: 'things.example' } }),
  },

  // Missing objects.
  {
    title: 'D-VERB-18 a merge patch of a missing Widget is 404 NotFound',
    code: 404,
    reason: 'NotFound',
    message: 'widgets.example.com "missing" not found',
    send: (h) => h.patch(`${WIDGETS}/missing`, { spec: { size: 2 } }),
  },
  {
    title: 'D-VERB-18 a JSON patch of a missing ConfigMap is 404 NotFound',
    code: 404,
    reason: 'NotFound',
    message: 'configmaps "missing" not found',
    send: (h) => h.patch(`${CONFIGMAPS}/missing`, [{ op: 'add', path: '/data', value: { a: '1' } }], 'json'),
  },
  {
    title: 'D-VERB-18 a strategic merge patch of a missing Deployment is 404 NotFound',
    code: 404,
    reason: 'NotFound',
    message: 'deployments.apps "missing" not found',
    send: (h) => h.patch(`${DEPLOYMENTS}/missing`, { spec: { replicas: 2 } }, 'strategic'),
  },
  {
    title: 'D-SUB-1 a status patch of a missing Widget is 404 NotFound',
    code: 404,
    reason: 'NotFound',
    send: (h) => h.patch(`${WIDGETS}/missing/status`, { status: { phase: 'x' } }),
  },
  {
    title: 'D-VERB-2 DELETE of a missing Widget is 404 NotFound',
    code: 404,
    reason: 'NotFound',
    message: 'widgets.example.com "missing" not found',
    send: (h) => h.del(`${WIDGETS}/missing`),
  },

  // Stale resourceVersions.
  {
    title: 'D-VERB-13 a PUT with a stale resourceVersion is 409 Conflict',
    code: 409,
    reason: 'Conflict',
    message:
      'Operation cannot be fulfilled on widgets.example.com "base": the object has been modified; please apply your changes to the latest version and try again',
    send: (h, ctx) => h.put(`${WIDGETS}/base`, { ...ctx.staleWidget, spec: { size: 9 } }),
  },
  {
    title: 'D-VERB-13 a ConfigMap PUT with a stale resourceVersion is 409 Conflict',
    code: 409,
    reason: 'Conflict',
    message: 'Operation cannot be fulfilled on configmaps "base": the object has been modified; please apply your changes to the latest version and try again',
    send: (h, ctx) => h.put(`${CONFIGMAPS}/base`, { ...ctx.staleConfigMap, data: { a: 'stale' } }),
  },
  {
    title: 'D-VERB-18 a merge patch with a stale resourceVersion is 409 Conflict',
    code: 409,
    reason: 'Conflict',
    send: (h, ctx) => h.patch(`${WIDGETS}/base`, { metadata: { resourceVersion: ctx.staleWidget['metadata']['resourceVersion'] }, spec: { size: 9 } }),
  },
  {
    title: 'D-VERB-19 a JSON patch testing a stale resourceVersion is 422 Invalid',
    code: 422,
    reason: 'Invalid',
    message: 'the server rejected our request due to an error in our request',
    send: (h, ctx) =>
      h.patch(
        `${WIDGETS}/base`,
        [
          { op: 'test', path: '/metadata/resourceVersion', value: ctx.staleWidget['metadata']['resourceVersion'] },
          { op: 'replace', path: '/spec/size', value: 9 },
        ],
        'json',
      ),
  },
  {
    title: 'D-VERB-24 a DELETE with a stale resourceVersion precondition is 409 Conflict',
    code: 409,
    reason: 'Conflict',
    send: (h, ctx) => h.del(`${WIDGETS}/base`, { preconditions: { resourceVersion: ctx.staleWidget['metadata']['resourceVersion'] } }),
  },
  {
    title: 'D-SUB-1 a status update with a stale resourceVersion is 409 Conflict',
    code: 409,
    reason: 'Conflict',
    send: (h, ctx) => h.put(`${WIDGETS}/base/status`, { ...ctx.staleWidget, status: { phase: 'stale' } }),
  },

  // Query options.
  {
    title: 'D-WIRE-4 an unparseable boolean query parameter is 400 BadRequest',
    code: 400,
    reason: 'BadRequest',
    send: (h) =>
      h.patch(
        `${WIDGETS}/base?fieldManager=m&force=maybe`,
        { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'base' }, spec: { size: 5 } },
        'apply',
      ),
  },
  {
    title: 'D-WIRE-4 an unparseable integer query parameter is 400 BadRequest',
    code: 400,
    reason: 'BadRequest',
    send: (h) => h.del(`${WIDGETS}/base?gracePeriodSeconds=soon`),
  },
  {
    title: 'D-WIRE-4 an unparseable limit on deletecollection is 400 BadRequest',
    code: 400,
    reason: 'BadRequest',
    send: (h) => h.del(`${CONFIGMAPS}?limit=abc`),
  },
  {
    title: 'D-VERB-30 an unsupported dryRun value is 422 Invalid',
    code: 422,
    reason: 'Invalid',
    message: 'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Foo"]: supported values: "All"',
    send: (h) => h.post(`${CONFIGMAPS}?dryRun=Foo`, cmBody('bad-dry-run')),
  },
  {
    title: 'D-VERB-1 an unsupported fieldValidation value is 422 Invalid',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'fieldValidation' },
    send: (h) => h.patch(`${WIDGETS}/base?fieldValidation=Loose`, { spec: { size: 3 } }),
  },
  {
    title: 'D-VERB-3 deletecollection with a malformed label selector is 400 BadRequest and deletes nothing',
    code: 400,
    reason: 'BadRequest',
    send: (h) => h.del(`${CONFIGMAPS}?labelSelector=${encodeURIComponent('a in b')}`),
  },
  {
    title: 'D-VERB-23 an unsupported propagationPolicy is 422 Invalid',
    code: 422,
    reason: 'Invalid',
    cause: { field: 'propagationPolicy' },
    send: (h) => h.del(`${WIDGETS}/base`, { propagationPolicy: 'Sideways' }),
  },
];

interface Snapshot {
  revision: number;
  lists: Record<string, unknown>;
}

describe('bad input is refused without side effects', () => {
  let h: Harness;
  let ctx: Context;

  beforeAll(async () => {
    h = await startHarness();
    const staleWidget = await h.widget('base', { size: 1 });
    const staleConfigMap = (await h.post(CONFIGMAPS, cmBody('base'))).json;
    expect((await h.patch(`${WIDGETS}/base`, { spec: { size: 2 } })).status).toBe(200);
    expect((await h.patch(`${CONFIGMAPS}/base`, { data: { a: '2' } })).status).toBe(200);
    expect(
      (
        await h.post(DEPLOYMENTS, {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'base' },
          spec: {
            selector: { matchLabels: { app: 'base' } },
            template: { metadata: { labels: { app: 'base' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
          },
        })
      ).status,
    ).toBe(201);
    await h.cluster.settle();
    ctx = { staleWidget, staleConfigMap };
  });
  afterAll(async () => {
    await h.stop();
  });

  async function snapshot(): Promise<Snapshot> {
    const lists: Record<string, unknown> = {};
    for (const path of ['/apis/example.com/v1/widgets', '/api/v1/configmaps', '/api/v1/namespaces', CRDS, '/apis/apps/v1/deployments']) {
      const r = await h.get(path);
      expect(r.status).toBe(200);
      lists[path] = r.json['items'];
    }
    return { revision: h.cluster.revision, lists };
  }

  it.each(CASES)('$title', async (c) => {
    const before = await snapshot();
    const r = await c.send(h, ctx);
    expect(r.status, r.text.slice(0, 500)).toBe(c.code);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.json).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: c.code, reason: c.reason });
    expect(typeof r.json['message']).toBe('string');
    if (typeof c.message === 'string') expect(r.json['message']).toBe(c.message);
    else if (c.message) expect(r.json['message']).toMatch(c.message);
    c.check?.(r.json);
    if (c.cause) {
      const causes = (r.json['details']?.['causes'] ?? []) as Json[];
      expect(causes, JSON.stringify(r.json)).toContainEqual(expect.objectContaining(c.cause));
    }
    await h.cluster.settle();
    const after = await snapshot();
    expect(after.revision).toBe(before.revision);
    expect(after.lists).toEqual(before.lists);
    const health = await h.get('/healthz');
    expect(health.status).toBe(200);
    expect(health.text).toBe('ok');
  });

  it('D-META-5 a null metadata.resourceVersion on create counts as absent', async () => {
    const r = await h.post(CONFIGMAPS, cmBody('null-rv', { resourceVersion: null, labels: null }));
    expect(r.status, r.text).toBe(201);
    expect(r.json['metadata']['resourceVersion']).toBe(String(h.cluster.revision));
    expect(r.json['metadata']).not.toHaveProperty('labels');
  });

  it('D-CRD-9 duplicate JSON keys are a Warning by default and the last value wins', async () => {
    const r = await raw(
      h,
      'POST',
      WIDGETS,
      '{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"dup-warn"},"spec":{"size":1,"size":2}}',
      'application/json',
    );
    expect(r.status, r.text).toBe(201);
    expect(r.headers.get('warning')).toBe('299 - "duplicate field \\"spec.size\\""');
    expect(r.json['spec']['size']).toBe(2);
    const ignored = await raw(
      h,
      'PUT',
      `${CONFIGMAPS}/base?fieldValidation=Ignore`,
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"base"},"data":{"a":"3","a":"4"}}',
      'application/json',
    );
    expect(ignored.status, ignored.text).toBe(200);
    expect(ignored.headers.get('warning')).toBeNull();
    expect(ignored.json['data']).toEqual({ a: '4' });
  });

  it('the server still serves normal writes after all the bad input', async () => {
    const before = h.cluster.revision;
    const r = await h.patch(`${WIDGETS}/base`, { spec: { size: 3 } });
    expect(r.status).toBe(200);
    expect(r.json['metadata']['resourceVersion']).toBe(String(before + 1));
  });
});
