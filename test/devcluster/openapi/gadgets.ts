/**
 * A CRD whose schema exercises every rule of publishing a CRD schema to OpenAPI (D-WIRE-31):
 * nullable fields (one required), int-or-string, an embedded resource, a field that preserves
 * unknown fields, a list of those, junctors, defaults, and a cluster-scoped kind without
 * subresources; plus a second served version whose root preserves unknown fields.
 */
export const GADGETS_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gadgets.tools.example.org' },
  spec: {
    group: 'tools.example.org',
    scope: 'Cluster',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            description: 'A gadget.',
            properties: {
              spec: {
                type: 'object',
                required: ['label', 'port'],
                properties: {
                  label: { type: 'string', nullable: true, description: 'May be null.' },
                  port: { 'x-kubernetes-int-or-string': true, description: 'A port.' },
                  tier: { type: 'string', default: 'gold', anyOf: [{ pattern: '^g' }, { pattern: '^s' }] },
                  template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object' } } },
                  loose: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
                  extras: { type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
                  sizes: { type: 'array', nullable: true, items: { type: 'integer' } },
                },
              },
            },
          },
        },
      },
      {
        name: 'v2',
        served: true,
        storage: false,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};
