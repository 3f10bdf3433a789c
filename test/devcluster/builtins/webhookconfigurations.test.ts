import { describe, expect, it } from 'vitest';
import * as fielderrors from '../../../devcluster/meta/fielderrors.js';
import * as webhookconfigurations from '../../../devcluster/builtins/webhookconfigurations.js';
import * as statuses from '../../../devcluster/server/statuses.js';
import { loose, testContext } from './contexts.js';

type Json = { [key: string]: any };
const rendered = (errors: fielderrors.FieldError[]): string[] => errors.map(fielderrors.renderError);

const hook = (extra: Json = {}): Json => ({
  name: 'check.example.com',
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  clientConfig: { service: { namespace: 'default', name: 'hooks' } },
  rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  ...extra,
});
const config = (kind: string, hooks: Json[]): Json => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name: 'c' }, webhooks: hooks });

describe('webhook configurations', () => {
  const validating = loose(webhookconfigurations.webhookConfigurationStrategy('ValidatingWebhookConfiguration'));
  const mutating = loose(webhookconfigurations.webhookConfigurationStrategy('MutatingWebhookConfiguration'));
  const ctx = testContext();
  const errorsOf = (hooks: Json[], s = validating): string[] => {
    const obj = s.prepareForCreate!(config('ValidatingWebhookConfiguration', hooks), ctx);
    return rendered(s.validate!(obj, undefined, ctx));
  };

  it('D-BI-12 defaults every webhook; mutating ones get reinvocationPolicy Never', () => {
    const v = validating.prepareForCreate!(config('ValidatingWebhookConfiguration', [hook()]), ctx);
    expect(v['webhooks'][0]).toEqual({
      ...hook(),
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
      timeoutSeconds: 10,
      clientConfig: { service: { namespace: 'default', name: 'hooks', port: 443 } },
      rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*' }],
    });
    const m = mutating.prepareForCreate!(
      config('MutatingWebhookConfiguration', [hook({ failurePolicy: 'Ignore', clientConfig: { url: 'https://h/x' } })]),
      ctx,
    );
    expect(m['webhooks'][0]).toMatchObject({ reinvocationPolicy: 'Never', failurePolicy: 'Ignore', clientConfig: { url: 'https://h/x' } });
    expect(errorsOf([hook()])).toEqual([]);
  });

  it('D-BI-12 names are required, unique and fully qualified', () => {
    expect(errorsOf([hook({ name: '' })])).toEqual(['webhooks[0].name: Required value']);
    expect(errorsOf([hook({ name: 'a.b' })])).toEqual([
      'webhooks[0].name: Invalid value: "a.b": should be a domain with at least three segments separated by dots',
    ]);
    expect(errorsOf([hook({ name: 'A.b.c' })])).toEqual([
      expect.stringMatching(/^webhooks\[0\]\.name: Invalid value: "A\.b\.c": a lowercase RFC 1123 subdomain/),
    ]);
    expect(errorsOf([hook(), hook()])).toEqual(['webhooks[1].name: Duplicate value: "check.example.com"']);
  });

  it('D-BI-12 clientConfig needs exactly one of url and service, an https URL and a valid service', () => {
    expect(errorsOf([hook({ clientConfig: {} })])).toEqual(['webhooks[0].clientConfig: Required value: exactly one of url or service is required']);
    expect(errorsOf([hook({ clientConfig: { url: 'https://h', service: { namespace: 'a', name: 'b' } } })])).toEqual([
      'webhooks[0].clientConfig: Required value: exactly one of url or service is required',
    ]);
    expect(errorsOf([hook({ clientConfig: { url: 'http://h/x' } })])).toEqual([
      'webhooks[0].clientConfig.url: Invalid value: "http": \'https\' is the only allowed URL scheme; desired format: https://host[/path]',
    ]);
    expect(errorsOf([hook({ clientConfig: { url: 'https://u:p@h/x?q=1#f' } })])).toEqual([
      'webhooks[0].clientConfig.url: Invalid value: "u:p": user information is not permitted in the URL',
      'webhooks[0].clientConfig.url: Invalid value: "f": fragments are not permitted in the URL',
      'webhooks[0].clientConfig.url: Invalid value: "q=1": query parameters are not permitted in the URL',
    ]);
    expect(errorsOf([hook({ clientConfig: { service: { port: 70000, path: 'x' } } })])).toEqual([
      'webhooks[0].clientConfig.service.name: Required value: service name is required',
      'webhooks[0].clientConfig.service.namespace: Required value: service namespace is required',
      'webhooks[0].clientConfig.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive',
      'webhooks[0].clientConfig.service.path: Invalid value: "x": must start with a \'/\'',
    ]);
    expect(errorsOf([hook({ clientConfig: { service: { namespace: 'a', name: 'b', path: '/a//b' } } })])).toEqual([
      'webhooks[0].clientConfig.service.path: Invalid value: "/a//b": segment[1] may not be empty',
    ]);
  });

  it('D-BI-12 rules need operations, groups, versions and resources from the allowed sets', () => {
    expect(errorsOf([hook({ rules: [{}] })])).toEqual([
      'webhooks[0].rules[0].operations: Required value',
      'webhooks[0].rules[0].apiGroups: Required value',
      'webhooks[0].rules[0].apiVersions: Required value',
      'webhooks[0].rules[0].resources: Required value',
    ]);
    expect(
      errorsOf([hook({ rules: [{ operations: ['PATCH', '*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*', 'pods'], scope: 'Global' }] })]),
    ).toEqual([
      'webhooks[0].rules[0].operations: Invalid value: ["PATCH","*"]: if \'*\' is present, must not specify other operations',
      'webhooks[0].rules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
      'webhooks[0].rules[0].resources: Invalid value: ["*/*","pods"]: if \'*/*\' is present, must not specify other resources',
      'webhooks[0].rules[0].scope: Unsupported value: "Global": supported values: "*", "Cluster", "Namespaced"',
    ]);
  });

  it('D-BI-12 policies, side effects, timeout and review versions are checked', () => {
    expect(errorsOf([hook({ failurePolicy: 'Maybe', matchPolicy: 'Fuzzy', sideEffects: 'Some', timeoutSeconds: 31 })])).toEqual([
      'webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"',
      'webhooks[0].matchPolicy: Unsupported value: "Fuzzy": supported values: "Equivalent", "Exact"',
      'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
      'webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds',
    ]);
    expect(errorsOf([hook({ sideEffects: undefined })])).toEqual(['webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun']);
    expect(errorsOf([hook({ admissionReviewVersions: [] })])).toEqual(['webhooks[0].admissionReviewVersions: Required value: must specify one of v1']);
    expect(errorsOf([hook({ admissionReviewVersions: ['v1beta1'] })])).toEqual([
      'webhooks[0].admissionReviewVersions: Invalid value: ["v1beta1"]: must include at least one of v1',
    ]);
    expect(errorsOf([hook({ admissionReviewVersions: ['v1beta1', 'v1'] })])).toEqual([]);
  });

  it('D-BI-12 selectors must be valid label selectors', () => {
    expect(errorsOf([hook({ namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'Near' }] } })])).toEqual([
      expect.stringMatching(/^webhooks\[0\]\.namespaceSelector: Invalid value: /),
    ]);
  });

  it('D-BI-12 only mutating configurations check reinvocationPolicy', () => {
    const bad = hook({ reinvocationPolicy: 'Always' });
    expect(errorsOf([bad], mutating)).toEqual(['webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"']);
  });

  it('D-BI-12 a caBundle that is not base64 is 400', () => {
    expect(() =>
      validating.prepareForCreate!(config('ValidatingWebhookConfiguration', [hook({ clientConfig: { url: 'https://h', caBundle: '***' } })]), ctx),
    ).toThrow(statuses.ApiError);
  });

  it('D-META-7 generation follows webhooks; PUT needs an RV', () => {
    const a = config('ValidatingWebhookConfiguration', [hook()]);
    expect(validating.generation!(a, { ...a, metadata: { name: 'c', labels: { x: 'y' } } })).toBe(false);
    expect(validating.generation!(a, config('ValidatingWebhookConfiguration', [hook({ timeoutSeconds: 5 })]))).toBe(true);
    expect(validating.requireResourceVersion).toBe(true);
  });
});
