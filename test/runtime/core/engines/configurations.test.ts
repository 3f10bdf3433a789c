/**
 * The entries of managed webhook configurations (R-ADMISSION-7, A-21's expected entries): names,
 * URL-quoted ids, rules per served resource and subresource, object selectors from label filters,
 * side effects and failure policies. Pure: handlers registered through `on.validate`/`on.mutate`,
 * resources built by hand.
 */
import { describe, expect, it } from 'vitest';
import * as references from '../../../../runtime/cogs/structs/references.js';
import * as configurations from '../../../../runtime/core/engines/configurations.js';
import * as configuring from '../../../../runtime/core/engines/configuring.js';
import { ABSENT, PRESENT } from '../../../../runtime/core/intents/filters.js';
import type * as handlers from '../../../../runtime/core/intents/handlers.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import { on } from '../../../../runtime/on.js';

const KEX = references.makeResource({ group: 'kopf.dev', version: 'v1', plural: 'kopfexamples', kind: 'KopfExample', subresources: ['status'] });
const KEX_V2 = references.makeResource({ group: 'kopf.dev', version: 'v2', plural: 'kopfexamples', kind: 'KopfExample', preferred: false });
const PODS = references.makeResource({ group: '', version: 'v1', plural: 'pods', kind: 'Pod' });

function webhooksOf(registry: OperatorRegistry, type: 'validating' | 'mutating'): handlers.WebhookHandler[] {
  return registry.handlers.filter((h): h is handlers.WebhookHandler => h.kind === 'webhook' && h.type === type);
}

/** Kopf's 17-admission handlers (the bodies do not matter here). */
function exampleRegistry(): OperatorRegistry {
  const registry = new OperatorRegistry();
  on.validate('kopfexamples', { registry }, function authhook() {});
  on.validate('kopfexamples', { registry }, function validate1() {});
  on.validate('kopfexamples', { registry, field: 'spec.field', value: 'not-allowed' }, function validate2() {});
  on.validate('kopfexamples', { registry, subresource: '*' }, function validate_subresources() {});
  on.mutate('kopfexamples', { registry, labels: { somelabel: 'somevalue' } }, function mutate1() {});
  return registry;
}

const COMMON = {
  sideEffects: 'None',
  failurePolicy: 'Fail',
  matchPolicy: 'Equivalent',
  timeoutSeconds: 30,
  admissionReviewVersions: ['v1', 'v1beta1'],
} as const;

describe('R-ADMISSION-7 webhook entries', () => {
  it('R-ADMISSION-7 A-21 the validating entries of the example: names, URLs, rules, policies', () => {
    const registry = exampleRegistry();
    const entries = configurations.buildWebhooks(webhooksOf(registry, 'validating'), {
      resources: [KEX],
      name: 'auto.kopf.dev',
      clientConfig: { url: 'https://127.0.0.1:9443/', caBundle: 'Q0E=' },
    });
    const rule = (resource: string) => [{ apiGroups: ['kopf.dev'], apiVersions: ['v1'], resources: [resource], operations: ['*'], scope: '*' }];
    expect(entries).toEqual([
      {
        name: 'authhook.auto.kopf.dev',
        ...COMMON,
        rules: rule('kopfexamples'),
        objectSelector: null,
        clientConfig: { url: 'https://127.0.0.1:9443/authhook', caBundle: 'Q0E=' },
      },
      {
        name: 'validate1.auto.kopf.dev',
        ...COMMON,
        rules: rule('kopfexamples'),
        objectSelector: null,
        clientConfig: { url: 'https://127.0.0.1:9443/validate1', caBundle: 'Q0E=' },
      },
      {
        name: 'validate2.spec.field.auto.kopf.dev',
        ...COMMON,
        rules: rule('kopfexamples'),
        objectSelector: null,
        clientConfig: { url: 'https://127.0.0.1:9443/validate2/spec.field', caBundle: 'Q0E=' },
      },
      {
        name: 'validate-subresources.auto.kopf.dev',
        ...COMMON,
        rules: rule('kopfexamples/*'),
        objectSelector: null,
        clientConfig: { url: 'https://127.0.0.1:9443/validate_subresources', caBundle: 'Q0E=' },
      },
    ]);
    // The exact key order of an entry, as Kopf writes it.
    expect(Object.keys(entries[0]!)).toEqual([
      'name',
      'sideEffects',
      'failurePolicy',
      'matchPolicy',
      'rules',
      'objectSelector',
      'clientConfig',
      'timeoutSeconds',
      'admissionReviewVersions',
    ]);
  });

  it('R-ADMISSION-7 A-21 the mutating entry of the example has an object selector from its label filter', () => {
    const [entry] = configurations.buildWebhooks(webhooksOf(exampleRegistry(), 'mutating'), {
      resources: [KEX],
      name: 'auto.kopf.dev',
      clientConfig: { url: 'https://host.k3d.internal:9443' },
    });
    expect(entry).toMatchObject({
      name: 'mutate1.auto.kopf.dev',
      objectSelector: { matchExpressions: [{ key: 'somelabel', operator: 'In', values: ['somevalue'] }] },
      clientConfig: { url: 'https://host.k3d.internal:9443/mutate1' },
    });
  });

  it('R-ADMISSION-7 sideEffects NoneOnDryRun iff sideEffects: true; failurePolicy Ignore iff ignoreFailures: true; operations as given', () => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry, sideEffects: true, operations: ['CREATE', 'UPDATE'] }, function effects() {});
    on.validate('kopfexamples', { registry, ignoreFailures: true, operation: 'DELETE' }, function lenient() {});
    const entries = configurations.buildWebhooks(webhooksOf(registry, 'validating'), {
      resources: [KEX],
      name: 'x.kopf.dev',
      clientConfig: { url: 'https://h' },
    });
    expect(entries.map(({ sideEffects, failurePolicy, rules }) => ({ sideEffects, failurePolicy, operations: rules[0]!.operations }))).toEqual([
      { sideEffects: 'NoneOnDryRun', failurePolicy: 'Fail', operations: ['CREATE', 'UPDATE'] },
      { sideEffects: 'None', failurePolicy: 'Ignore', operations: ['DELETE'] },
    ]);
  });

  it('R-ADMISSION-7 one rule per served resource that the handler selects, with its subresource', () => {
    const registry = new OperatorRegistry();
    on.validate(
      (resource: references.Resource) => resource.plural === 'kopfexamples',
      { registry, subresource: 'status' },
      function statuses() {},
    );
    on.validate('pods', { registry }, function pods() {});
    const entries = configurations.buildWebhooks(webhooksOf(registry, 'validating'), {
      resources: [KEX, KEX_V2, PODS],
      name: 'x.kopf.dev',
      clientConfig: { url: 'https://h' },
    });
    expect(entries.map((entry) => entry.rules)).toEqual([
      [
        { apiGroups: ['kopf.dev'], apiVersions: ['v1'], resources: ['kopfexamples/status'], operations: ['*'], scope: '*' },
        { apiGroups: ['kopf.dev'], apiVersions: ['v2'], resources: ['kopfexamples/status'], operations: ['*'], scope: '*' },
      ],
      [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['*'], scope: '*' }],
    ]);
  });

  it('R-ADMISSION-7 object selectors: literal → In, PRESENT → Exists, ABSENT → DoesNotExist, callbacks skipped', () => {
    const registry = new OperatorRegistry();
    on.mutate('kopfexamples', { registry, labels: { a: 'x', b: PRESENT, c: ABSENT, d: (value) => value === 'y' } }, function picky() {});
    on.mutate('kopfexamples', { registry, labels: { d: (value) => value === 'y' } }, function callbacks() {});
    const entries = configurations.buildWebhooks(webhooksOf(registry, 'mutating'), {
      resources: [KEX],
      name: 'x.kopf.dev',
      clientConfig: { url: 'https://h' },
    });
    expect(entries.map((entry) => entry.objectSelector)).toEqual([
      {
        matchExpressions: [
          { key: 'a', operator: 'In', values: ['x'] },
          { key: 'b', operator: 'Exists' },
          { key: 'c', operator: 'DoesNotExist' },
        ],
      },
      null,
    ]);
  });

  it('R-ADMISSION-7 service references get the quoted id appended to their path; the CA bundle is kept', () => {
    const config = { service: { namespace: 'operators', name: 'hooks', port: 443 }, caBundle: 'Q0E=' };
    expect(configurations.injectHandlerId(config, 'check it/x')).toEqual({
      service: { namespace: 'operators', name: 'hooks', port: 443, path: '/check%20it/x' },
      caBundle: 'Q0E=',
    });
    expect(configurations.injectHandlerId({ service: { namespace: 'n', name: 's', path: '/hooks' } }, 'v')).toEqual({
      service: { namespace: 'n', name: 's', path: '/hooks/v' },
    });
    expect(config.service).toEqual({ namespace: 'operators', name: 'hooks', port: 443 }); // not modified
  });

  it("R-ADMISSION-7 ids are URL-quoted as Python's quote() does: / kept, everything but letters, digits and _.-~ encoded", () => {
    expect(configurations.quoteId('validate2/spec.field')).toBe('validate2/spec.field');
    expect(configurations.quoteId("a b!'()*~_-.ü")).toBe('a%20b%21%27%28%29%2A~_-.%C3%BC');
  });

  it('R-ADMISSION-7 names are lowercase DNS names: lowered, / → ., _ → -, any other character but a-z, 0-9, . and - → the hex of its UTF-8 bytes', () => {
    expect(configurations.normalizeName('validate_subresources', 'auto.kopf.dev')).toBe('validate-subresources.auto.kopf.dev');
    expect(configurations.normalizeName('validate2/spec.field', 'auto.kopf.dev')).toBe('validate2.spec.field.auto.kopf.dev');
    expect(configurations.normalizeName('validateWidgets', 'auto.kopf.dev')).toBe('validatewidgets.auto.kopf.dev');
    expect(configurations.normalizeName('Check/Spec.Image', 'auto.kopf.dev')).toBe('check.spec.image.auto.kopf.dev');
    expect(configurations.normalizeName('a b:c€', 'x')).toBe('a20b3ace282ac.x');
    expect(configurations.normalizeName('Grüße', '')).toBe('grc3bcc39fe');
    for (const id of ['validateWidgets', 'Check/Spec.Image', 'a b:c€', 'Grüße', 'UPPER_case/Field.Path', 'x~y']) {
      const name = configurations.normalizeName(id, 'auto.kopf.dev');
      expect(name).toMatch(/^[a-z0-9.-]+$/);
      expect(configurations.nameProblem(name)).toBeUndefined();
    }
  });

  it('R-ADMISSION-8 only persistent handlers stay for the cleanup', () => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function temporary() {});
    on.validate('kopfexamples', { registry, persistent: true }, function kept() {});
    const entries = configurations.buildWebhooks(webhooksOf(registry, 'validating'), {
      resources: [KEX],
      name: 'x.kopf.dev',
      clientConfig: { url: 'https://h' },
      persistentOnly: true,
    });
    expect(entries.map((entry) => entry.name)).toEqual(['kept.x.kopf.dev']);
  });

  it('R-ADMISSION-7 names that Kubernetes refuses are recognised (what normalisation cannot repair)', () => {
    expect(configurations.nameProblem('validate1.auto.kopf.dev')).toBeUndefined();
    expect(configurations.nameProblem('Validate.auto.kopf.dev')).toBe('it has uppercase letters');
    expect(configurations.nameProblem(configurations.normalizeName('_check', 'auto.kopf.dev'))).toMatch(/not a DNS subdomain/);
    expect(configurations.nameProblem(configurations.normalizeName('a//b', 'auto.kopf.dev'))).toMatch(/not a DNS subdomain/);
    expect(configurations.nameProblem('check.dev')).toBe('it has fewer than three dot-separated segments');
    expect(configurations.nameProblem(`${'a'.repeat(250)}.b.c`)).toBe('it is longer than 253 characters');
  });

  it('R-ADMISSION-7 checkNames accepts camelCase ids, refuses names normalisation cannot repair and names two handlers share', () => {
    const fine = new OperatorRegistry();
    on.validate('kopfexamples', { registry: fine }, function validateWidgets() {});
    on.mutate('kopfexamples', { registry: fine }, function validate_widgets() {}); // same name, other configuration
    expect(() => configuring.checkNames(fine, 'auto.kopf.dev')).not.toThrow();

    const leading = new OperatorRegistry();
    on.validate('kopfexamples', { registry: leading }, function _check() {});
    expect(() => configuring.checkNames(leading, 'auto.kopf.dev')).toThrow(
      expect.objectContaining({
        code: 'AdmissionSetupError',
        problem: 'invalid-name',
        message: expect.stringMatching(
          /^The webhook name '-check.auto.kopf.dev' of the admission handler '_check' would be refused by Kubernetes: it is not a DNS subdomain/,
        ),
      }),
    );

    const twins = new OperatorRegistry();
    on.validate('kopfexamples', { registry: twins, id: 'Check' }, () => undefined);
    on.validate('kopfexamples', { registry: twins, id: 'check' }, () => undefined);
    expect(() => configuring.checkNames(twins, 'auto.kopf.dev')).toThrow(
      "The validating admission handlers 'Check' and 'check' have the same webhook name " +
        "'check.auto.kopf.dev', which Kubernetes refuses: give one of them another id.",
    );

    expect(() => configuring.checkNames(fine, 'Auto.kopf.dev')).toThrow(/it has uppercase letters/);
  });
});
