import { beforeAll, describe, expect, it } from 'vitest';
import * as certs from '../../../devcluster/auth/certs.js';
import * as definitions from '../../../devcluster/crds/definitions.js';
import type * as schemas from '../../../devcluster/crds/schemas.js';
import * as fielderrors from '../../../devcluster/meta/fielderrors.js';
import * as widgets from './widgets.js';

const rendered = (errors: readonly fielderrors.FieldError[]): string[] => errors.map(fielderrors.renderError);

function modified(change: (crd: schemas.CustomResourceDefinition) => void): schemas.CustomResourceDefinition {
  const crd = widgets.widgetCrd();
  change(crd);
  return crd;
}

function established(crd: schemas.CustomResourceDefinition): schemas.CustomResourceDefinition {
  return { ...crd, status: { conditions: [{ type: 'Established', status: 'True' }], storedVersions: ['v1'] } };
}

describe('defaultCrd', () => {
  it('D-CRD-2 defaults singular, listKind, conversion and preserveUnknownFields', () => {
    const crd = modified((c) => {
      c.spec.names = { plural: 'widgets', kind: 'Widget' };
      delete c.spec.conversion;
      delete c.spec.preserveUnknownFields;
    });
    const defaulted = definitions.defaultCrd(crd);
    expect(defaulted.spec.names.singular).toBe('widget');
    expect(defaulted.spec.names.listKind).toBe('WidgetList');
    expect(defaulted.spec.conversion).toEqual({ strategy: 'None' });
    expect(defaulted.spec.preserveUnknownFields).toBe(false);
    expect(crd.spec.names.singular).toBeUndefined();
    expect(crd.spec.conversion).toBeUndefined();
  });

  it('D-CRD-2 keeps names that are already set', () => {
    const crd = modified((c) => {
      c.spec.names = { plural: 'widgets', kind: 'Widget', singular: 'wdg', listKind: 'Widgets' };
    });
    const defaulted = definitions.defaultCrd(crd);
    expect(defaulted.spec.names.singular).toBe('wdg');
    expect(defaulted.spec.names.listKind).toBe('Widgets');
  });
});

describe('validateCrd', () => {
  it('D-CRD-2 accepts the Setup W CRD', () => {
    expect(definitions.validateCrd(definitions.defaultCrd(widgets.widgetCrd()))).toEqual([]);
  });

  it('C-90 D-CRD-1 a name other than plural.group is rejected on metadata.name', () => {
    const crd = modified((c) => {
      c.metadata = { name: 'foo.example.com' };
    });
    expect(rendered(definitions.validateCrd(crd))).toEqual(['metadata.name: Invalid value: "foo.example.com": must be spec.names.plural+"."+spec.group']);
  });

  it('C-90 D-CRD-2 two storage versions are rejected', () => {
    const crd = modified((c) => {
      c.spec.versions.push({ ...c.spec.versions[0]!, name: 'v2' });
    });
    const errors = definitions.validateCrd(crd);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ type: 'FieldValueInvalid', field: 'spec.versions', detail: 'must have exactly one version marked as storage version' });
  });

  it('C-90 D-CRD-6 a property without type is rejected under the version schema path', () => {
    const crd = modified((c) => {
      delete c.spec.versions[0]!.schema!.openAPIV3Schema!.properties!.spec!.properties!.size!.type;
    });
    expect(rendered(definitions.validateCrd(crd))).toEqual([
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[size].type: Required value: must not be empty for specified object fields',
    ]);
  });

  it('C-96 D-CRD-13 accepts a CRD with x-kubernetes-validations', () => {
    const crd = modified((c) => {
      c.spec.versions[0]!.schema!.openAPIV3Schema!.properties!.spec!['x-kubernetes-validations'] = [{ rule: 'self.size <= 5', message: 'too big' }];
    });
    expect(definitions.validateCrd(crd)).toEqual([]);
  });

  it('D-CRD-13 reports a validation rule without rule text', () => {
    const crd = modified((c) => {
      c.spec.versions[0]!.schema!.openAPIV3Schema!.properties!.spec!['x-kubernetes-validations'] = [{ rule: '' }];
    });
    expect(definitions.validateCrd(crd).map((e) => e.field)).toEqual([
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule',
    ]);
  });

  const cases: { title: string; change: (c: schemas.CustomResourceDefinition) => void; expected: Partial<fielderrors.FieldError>[] }[] = [
    {
      title: 'D-CRD-2 a group without a dot',
      change: (c) => {
        c.spec.group = 'example';
        c.metadata = { name: 'widgets.example' };
      },
      expected: [{ type: 'FieldValueInvalid', field: 'spec.group', detail: 'should be a domain with at least one dot' }],
    },
    {
      title: 'D-CRD-2 a group that is not a DNS subdomain',
      change: (c) => {
        c.spec.group = 'Example.com';
        c.metadata = { name: 'widgets.Example.com' };
      },
      expected: [{ type: 'FieldValueInvalid', field: 'spec.group' }],
    },
    {
      title: 'D-CRD-2 an unknown scope',
      change: (c) => {
        (c.spec as { scope: string }).scope = 'Global';
      },
      expected: [{ type: 'FieldValueNotSupported', field: 'spec.scope', detail: 'supported values: "Cluster", "Namespaced"' }],
    },
    {
      title: 'D-CRD-2 a plural that is not a DNS-1035 label',
      change: (c) => {
        c.spec.names.plural = 'Widgets';
        c.metadata = { name: 'Widgets.example.com' };
      },
      expected: [{ type: 'FieldValueInvalid', field: 'spec.names.plural' }],
    },
    {
      title: 'D-CRD-2 kind equal to listKind',
      change: (c) => {
        c.spec.names.listKind = 'Widget';
      },
      expected: [{ type: 'FieldValueInvalid', field: 'spec.names.listKind', detail: 'kind and listKind may not be the same' }],
    },
    {
      title: 'D-CRD-2 an invalid kind',
      change: (c) => {
        c.spec.names.kind = 'Wid_get';
        c.spec.names.listKind = 'WidgetList';
      },
      expected: [{ type: 'FieldValueInvalid', field: 'spec.names.kind' }],
    },
    {
      title: 'D-CRD-2 invalid short names and categories',
      change: (c) => {
        c.spec.names.shortNames = ['ok', 'Not_OK'];
        c.spec.names.categories = ['9lives'];
      },
      expected: [
        { type: 'FieldValueInvalid', field: 'spec.names.shortNames[1]', value: 'Not_OK' },
        { type: 'FieldValueInvalid', field: 'spec.names.categories[0]', value: '9lives' },
      ],
    },
    {
      title: 'D-CRD-2 no versions',
      change: (c) => {
        c.spec.versions = [];
      },
      expected: [{ type: 'FieldValueInvalid', field: 'spec.versions', detail: 'must have exactly one version marked as storage version' }],
    },
    {
      title: 'D-CRD-2 no storage version',
      change: (c) => {
        c.spec.versions[0]!.storage = false;
      },
      expected: [{ type: 'FieldValueInvalid', field: 'spec.versions', detail: 'must have exactly one version marked as storage version' }],
    },
    {
      title: 'D-CRD-2 duplicate version names',
      change: (c) => {
        c.spec.versions.push({ ...c.spec.versions[0]!, storage: false });
      },
      expected: [{ type: 'FieldValueInvalid', field: 'spec.versions', detail: 'must contain unique version names' }],
    },
    {
      title: 'D-CRD-2 a version name that is not a DNS-1035 label',
      change: (c) => {
        c.spec.versions[0]!.name = 'V1';
      },
      expected: [{ type: 'FieldValueInvalid', field: 'spec.versions[0].name', value: 'V1' }],
    },
    {
      title: 'D-CRD-2 a version without schema',
      change: (c) => {
        delete c.spec.versions[0]!.schema;
      },
      expected: [{ type: 'FieldValueRequired', field: 'spec.versions[0].schema.openAPIV3Schema', detail: 'schemas are required' }],
    },
    {
      title: 'D-CRD-2 scale paths outside .spec / .status',
      change: (c) => {
        c.spec.versions[0]!.subresources!.scale = { specReplicasPath: '.status.replicas', statusReplicasPath: 'status.replicas' };
      },
      expected: [
        { type: 'FieldValueInvalid', field: 'spec.versions[0].subresources.scale.specReplicasPath', detail: 'should be a json path under .spec' },
        { type: 'FieldValueInvalid', field: 'spec.versions[0].subresources.scale.statusReplicasPath', detail: 'must be a simple json path starting with .' },
      ],
    },
    {
      title: 'D-CRD-2 printer columns need a name, a known type and a path',
      change: (c) => {
        c.spec.versions[0]!.additionalPrinterColumns = [
          { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
          { name: '', type: 'float', jsonPath: 'spec.size' },
        ];
      },
      expected: [
        { type: 'FieldValueRequired', field: 'spec.versions[0].additionalPrinterColumns[1].name' },
        { type: 'FieldValueNotSupported', field: 'spec.versions[0].additionalPrinterColumns[1].type', value: 'float' },
        { type: 'FieldValueInvalid', field: 'spec.versions[0].additionalPrinterColumns[1].jsonPath' },
      ],
    },
    {
      title: 'D-CRD-2 an unknown conversion strategy',
      change: (c) => {
        (c.spec.conversion as { strategy: string }).strategy = 'Magic';
      },
      expected: [{ type: 'FieldValueNotSupported', field: 'spec.conversion.strategy', value: 'Magic', detail: 'supported values: "None", "Webhook"' }],
    },
    {
      title: 'D-CRD-2 preserveUnknownFields true on create',
      change: (c) => {
        c.spec.preserveUnknownFields = true;
      },
      expected: [{ type: 'FieldValueInvalid', field: 'spec.preserveUnknownFields' }],
    },
    {
      title: 'D-CRD-2 deprecationWarning on a version that is not deprecated',
      change: (c) => {
        c.spec.versions[0]!.deprecationWarning = 'old';
      },
      expected: [{ type: 'FieldValueInvalid', field: 'spec.versions[0].deprecationWarning' }],
    },
  ];

  it.each(cases)('$title is rejected', ({ change, expected }) => {
    const errors = definitions.validateCrd(modified(change));
    expect(errors).toHaveLength(expected.length);
    expected.forEach((want, i) => expect(errors[i]).toMatchObject(want));
  });

  it('D-CRD-2 removing a stored version is rejected on status.storedVersions[i]', () => {
    const old = established(modified((c) => c.spec.versions.push({ ...c.spec.versions[0]!, name: 'v1beta1', storage: false })));
    old.status!.storedVersions = ['v1beta1', 'v1'];
    const next = { ...widgets.widgetCrd(), status: old.status };
    expect(rendered(definitions.validateCrd(next, old))).toEqual(['status.storedVersions[0]: Invalid value: "v1beta1": must appear in spec.versions']);
  });

  it('D-CRD-2 removing a version that was never stored is allowed', () => {
    const old = established(modified((c) => c.spec.versions.push({ ...c.spec.versions[0]!, name: 'v1beta1', storage: false })));
    expect(definitions.validateCrd(widgets.widgetCrd(), old)).toEqual([]);
  });

  it('D-CRD-2 spec.group is immutable', () => {
    const old = widgets.widgetCrd();
    const next = modified((c) => {
      c.spec.group = 'example.org';
      c.metadata = { name: 'widgets.example.org' };
    });
    expect(rendered(definitions.validateCrd(next, old))).toContain('spec.group: Invalid value: "example.org": field is immutable');
  });

  it('D-CRD-2 spec.scope is immutable once established, but not before', () => {
    const next = modified((c) => {
      c.spec.scope = 'Cluster';
    });
    expect(rendered(definitions.validateCrd(next, established(widgets.widgetCrd())))).toEqual(['spec.scope: Invalid value: "Cluster": field is immutable']);
    expect(definitions.validateCrd(next, widgets.widgetCrd())).toEqual([]);
  });

  it('D-CRD-2 survives malformed input without throwing', () => {
    const junk = { metadata: { name: 5 }, spec: { versions: 'v1', names: null } } as unknown as schemas.CustomResourceDefinition;
    const errors = definitions.validateCrd(junk);
    expect(errors.map((e) => e.field)).toEqual(
      expect.arrayContaining(['metadata.name', 'spec.group', 'spec.scope', 'spec.names.plural', 'spec.names.kind', 'spec.versions']),
    );
  });

  it('D-CRD-2 does not mutate its inputs', () => {
    const crd = widgets.widgetCrd();
    const before = JSON.stringify(crd);
    definitions.validateCrd(crd, crd);
    definitions.defaultCrd(crd);
    expect(JSON.stringify(crd)).toBe(before);
  });
});

describe('conversion webhooks (D-CRD-21)', () => {
  let caBundle = '';

  beforeAll(async () => {
    caBundle = Buffer.from((await certs.createCertificateAuthority()).certPem).toString('base64');
  });

  const withConversion = (conversion: unknown, change?: (c: schemas.CustomResourceDefinition) => void): schemas.CustomResourceDefinition =>
    definitions.defaultCrd(
      modified((c) => {
        c.spec.conversion = conversion as schemas.CustomResourceConversion;
        change?.(c);
      }),
    );
  const service = { namespace: 'tekton-pipelines', name: 'tekton-pipelines-webhook' };

  it('D-CRD-21 accepts strategy Webhook with a service or a URL, and review versions v1 or v1beta1', () => {
    const byService = withConversion({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1beta1', 'v1'], clientConfig: { service } } });
    expect(definitions.validateCrd(byService)).toEqual([]);
    const byUrl = withConversion({
      strategy: 'Webhook',
      webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://hooks.example.com:8443/convert', caBundle } },
    });
    expect(definitions.validateCrd(byUrl)).toEqual([]);
  });

  it('D-CRD-21 defaults the port of a conversion service to 443 and keeps a given one', () => {
    const defaulted = withConversion({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service } } });
    expect(defaulted.spec.conversion?.webhook?.clientConfig?.service).toEqual({ ...service, port: 443 });
    const kept = withConversion({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { ...service, port: 9443 } } } });
    expect(kept.spec.conversion?.webhook?.clientConfig?.service?.port).toBe(9443);
  });

  it('D-CRD-21 strategy Webhook needs a client configuration and review versions, named by the internal field paths', () => {
    expect(rendered(definitions.validateCrd(withConversion({ strategy: 'Webhook' })))).toEqual([
      'spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook',
      'spec.conversion.conversionReviewVersions: Required value',
    ]);
  });

  it('D-CRD-21 the client configuration has exactly one of url and service', () => {
    const both = withConversion({
      strategy: 'Webhook',
      webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://hooks.example.com/', service } },
    });
    expect(rendered(definitions.validateCrd(both))).toEqual(['spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required']);
    const neither = withConversion({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: {} } });
    expect(rendered(definitions.validateCrd(neither))).toEqual([
      'spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required',
    ]);
  });

  it('D-CRD-21 a URL must be https, without user information, fragment or query', () => {
    const crd = withConversion({
      strategy: 'Webhook',
      webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'http://user:pw@hooks.example.com/convert?x=1#here' } },
    });
    expect(definitions.validateCrd(crd).map((e) => [e.field, e.detail])).toEqual([
      ['spec.conversion.webhookClientConfig.url', "'https' is the only allowed URL scheme; desired format: https://host[/path]"],
      ['spec.conversion.webhookClientConfig.url', 'user information is not permitted in the URL'],
      ['spec.conversion.webhookClientConfig.url', 'fragments are not permitted in the URL'],
      ['spec.conversion.webhookClientConfig.url', 'query parameters are not permitted in the URL'],
    ]);
  });

  it('D-CRD-21 a service needs a name, a namespace and a port between 1 and 65535', () => {
    const crd = withConversion({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { port: 0 } } } });
    expect(rendered(definitions.validateCrd(crd))).toEqual([
      'spec.conversion.webhookClientConfig.service.name: Required value: service name is required',
      'spec.conversion.webhookClientConfig.service.namespace: Required value: service namespace is required',
      'spec.conversion.webhookClientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive',
    ]);
  });

  it('D-CRD-21 the review versions must include v1 or v1beta1, without duplicates', () => {
    const crd = withConversion({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v2', 'v2'], clientConfig: { service } } });
    expect(rendered(definitions.validateCrd(crd))).toEqual([
      'spec.conversion.conversionReviewVersions[1]: Invalid value: "v2": duplicate version',
      'spec.conversion.conversionReviewVersions: Invalid value: ["v2","v2"]: must include at least one of v1, v1beta1',
    ]);
  });

  it('D-CRD-21 an established CRD whose review versions were already unrecognised may keep them', () => {
    const old = established(withConversion({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v2'], clientConfig: { service } } }));
    const next = withConversion({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v3'], clientConfig: { service } } });
    expect(definitions.validateCrd(next, old)).toEqual([]);
  });

  it('D-CRD-21 a CA bundle without a certificate is rejected, unless the CRD is not established yet', () => {
    const bad = Buffer.from('not a certificate').toString('base64');
    const crd = withConversion({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service, caBundle: bad } } });
    expect(definitions.validateCrd(crd).map((e) => [e.field, e.detail])).toEqual([
      ['spec.conversion.webhookClientConfig.caBundle', 'unable to load root certificates: unable to parse bytes as PEM block'],
    ]);
    expect(definitions.validateCrd(crd, widgets.widgetCrd())).toEqual([]);
    expect(definitions.validateCrd(crd, established(widgets.widgetCrd())).map((e) => e.field)).toEqual(['spec.conversion.webhookClientConfig.caBundle']);
  });

  it('D-CRD-21 strategy None forbids a client configuration and review versions', () => {
    const crd = withConversion({ strategy: 'None', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service } } });
    expect(rendered(definitions.validateCrd(crd))).toEqual([
      'spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook',
      'spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook',
    ]);
  });

  it('D-CRD-21 strategy Webhook needs preserveUnknownFields false', () => {
    const crd = withConversion({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service } } }, (c) => {
      c.spec.preserveUnknownFields = true;
    });
    const old = { ...crd, status: {} };
    expect(rendered(definitions.validateCrd(crd, old))).toEqual([
      'spec.conversion.strategy: Invalid value: "Webhook": must be None if spec.preserveUnknownFields is true',
    ]);
  });
});
