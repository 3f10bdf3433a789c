/**
 * "Setup W" of the devcluster checklist: the `widgets.example.com` CRD and its schema, shared by the
 * CRD module tests. Builders return fresh copies so tests can modify them freely.
 */

import type * as schemas from '../../../devcluster/crds/schemas.js';

/** The Widget v1 schema: `spec` requires `size` (integer 1–10), etc. */
export function widgetSchema(): schemas.JSONSchemaProps {
  return {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        required: ['size'],
        properties: {
          size: { type: 'integer', minimum: 1, maximum: 10 },
          replicas: { type: 'integer' },
          mode: { type: 'string', enum: ['a', 'b'] },
          name: { type: 'string', pattern: '^[a-z]+$', maxLength: 5 },
          tags: { type: 'array', items: { type: 'string' }, maxItems: 2 },
          color: { type: 'string', default: 'blue' },
          extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        },
      },
      status: {
        type: 'object',
        properties: {
          phase: { type: 'string' },
          replicas: { type: 'integer' },
        },
      },
    },
  };
}

/** The Widget CRD (namespaced, v1 served+storage, status and scale subresources). */
export function widgetCrd(): schemas.CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList', shortNames: ['wd'], categories: ['all'] },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: widgetSchema() },
          subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
        },
      ],
      conversion: { strategy: 'None' },
      preserveUnknownFields: false,
    },
  };
}

/** A Widget object with the given spec. */
export function widget(spec: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'default' }, spec, ...extra };
}
