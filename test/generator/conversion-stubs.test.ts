/**
 * Converter stubs in a generated project (R-CONVERT-301…306). For a CRD that serves several
 * versions, `init`/`generate` write a user-owned stub per non-hub version that registers
 * `on.convert` between it and the storage version, with a roundTrip test; a project whose code
 * registers converters gets the webhook server (src/generated/admission.ts), deploy/webhooks.yaml
 * and deploy/conversion.yaml (the CRD patches), and no rights on CRDs; a CRD serving differing
 * versions without conversion is a warning. The stubs' code is also run here (transpiled, with
 * `on.convert` standing in) to prove that it converts equal fields and refuses the others.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import * as detecting from '../../generator/detecting.js';
import * as generator from '../../generator/index.js';
import * as servers from '../../generator/servers.js';
import * as support from './support.js';
import * as ps from './projects-support.js';

const root = ps.tempDir();
afterAll(() => ps.cleanup(root));

const RELEASES = path.join(support.FIXTURES, 'releases.yaml');

/** A Gadget CRD: v2 (storage) and v1 share spec.size and spec.owner.name, and differ elsewhere. */
function gadgets(conversion?: object): string {
  const version = (name: string, storage: boolean, spec: object) => ({
    name,
    served: true,
    storage,
    schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', ...spec } } } },
  });
  return yaml.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gadgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { kind: 'Gadget', plural: 'gadgets', singular: 'gadget', listKind: 'GadgetList' },
      ...(conversion ? { conversion } : {}),
      versions: [
        version('v2', true, {
          required: ['size'],
          properties: {
            size: { type: 'integer' },
            owner: { type: 'object', properties: { name: { type: 'string' }, team: { type: 'string' } } },
            mode: { type: 'string', default: 'fast' },
          },
        }),
        version('v1', false, {
          required: ['size'],
          properties: {
            size: { type: 'integer' },
            owner: { type: 'object', properties: { name: { type: 'string' }, email: { type: 'string' } } },
            legacy: { type: 'boolean' },
          },
        }),
      ],
    },
  });
}

function read(project: string, file: string): string {
  return fs.readFileSync(path.join(project, file), 'utf8');
}

interface Converter {
  forward(object: unknown): Record<string, unknown>;
  backward(object: unknown): Record<string, unknown>;
}

/**
 * Runs a generated converter stub: transpiled to CommonJS, with `on.convert` returning the
 * converters and the index's namespaces as empty descriptors (the stub only passes them on).
 */
function loadStub(text: string): Converter {
  const { outputText } = ts.transpileModule(text, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } });
  let converter: Converter | undefined;
  const fake = (specifier: string): unknown =>
    specifier === 'kopf-gen/runtime'
      ? { on: { convert: (_from: unknown, _to: unknown, fns: Converter) => (converter = fns) } }
      : new Proxy({}, { get: () => ({}) });
  const exports = {};
  new Function('require', 'exports', outputText)(fake, exports);
  return converter!;
}

describe('R-CONVERT-301: a converter stub per non-hub served version, written once', () => {
  const project = path.join(root, 'releases');
  let report: generator.GenerationReport;
  beforeAll(async () => {
    report = await generator.init({ crds: [RELEASES], out: project });
  });

  it('writes src/conversions/<kind>.<version>.ts and its test for v1 and v2beta1, none for the hub v2 nor a single-version CRD', () => {
    expect(report.convertersAdded).toEqual(['src/conversions/release.v2beta1.ts', 'src/conversions/release.v1.ts']);
    expect(fs.readdirSync(path.join(project, 'src/conversions')).sort()).toEqual(['release.v1.ts', 'release.v2beta1.ts']);
    expect(fs.readdirSync(path.join(project, 'test/conversions')).sort()).toEqual(['release.v1.test.ts', 'release.v2beta1.test.ts']);
    expect(read(project, 'src/conversions/release.v1.ts')).toContain('export const releaseV1 = on.convert(ReleaseV1.Releases, ReleaseV2.Releases, {');
    expect(read(project, 'src/conversions/release.v2beta1.ts')).toContain('on.convert(ReleaseV2beta1.Releases, ReleaseV2.Releases, {');
  });

  it('never overwrites a stub or its test, and adds none for a version another module converts', async () => {
    const stub = path.join(project, 'src/conversions/release.v1.ts');
    fs.writeFileSync(stub, `${read(project, 'src/conversions/release.v1.ts')}// mine\n`);
    fs.rmSync(path.join(project, 'src/conversions/release.v2beta1.ts'));
    fs.rmSync(path.join(project, 'test/conversions/release.v2beta1.test.ts'));
    ps.write(
      path.join(project, 'src/lib/beta.ts'),
      "import { on } from 'kopf-gen/runtime';\nimport { ReleaseV2beta1, ReleaseV2 } from '../generated/index.js';\non.convert(ReleaseV2beta1.Releases, ReleaseV2.Releases, { forward: (o) => ({ ...o, apiVersion: 'deploy.example.net/v2' as const }), backward: (o) => ({ ...o, apiVersion: 'deploy.example.net/v2beta1' as const }) });\n",
    );
    const again = await generator.generate({ project });
    expect(read(project, 'src/conversions/release.v1.ts')).toMatch(/\/\/ mine\n$/);
    expect(again.convertersAdded).toEqual([]);
    expect(again.kept).toContain('src/conversions/release.v1.ts');
    expect(again.notes).toContain('releases.deploy.example.net v2beta1: no converter stub added, src/lib/beta.ts converts it already');
    expect(fs.existsSync(path.join(project, 'src/conversions/release.v2beta1.ts'))).toBe(false);
    expect(again.conversions).toHaveLength(2);
    expect(again.conversions[1]).toBe('src/lib/beta.ts:3 on.convert');
  });
});

describe('R-CONVERT-302: what a stub converts, and what it refuses', () => {
  const project = path.join(root, 'gadgets');
  let stub: string;
  let converter: Converter;
  beforeAll(async () => {
    const crd = ps.write(path.join(root, 'inputs/gadgets.yaml'), gadgets());
    await generator.init({ crds: [crd], out: project });
    stub = read(project, 'src/conversions/gadget.v1.ts');
    converter = loadStub(stub);
  });

  it('spreads the fields equal in both versions and destructures the others at their level, each with a TODO', () => {
    expect(stub).toContain('function convertSpecToV2(value: GadgetV1.GadgetSpec)');
    expect(stub).toContain('function convertSpecOwnerToV2(value: GadgetV1.GadgetSpecOwner)');
    expect(stub).toContain('const { email, ...same } = value;');
    expect(stub).toContain('// TODO: spec.owner.email exists in v1 only: map it to v2\'s fields.\n  unconverted("spec.owner.email", email);');
    expect(stub).toContain('const { owner, legacy, ...same } = value;');
    expect(stub).toContain(
      '// TODO: spec.mode is required in v2, and v1 has no such field: its default, unless v1\'s fields say otherwise.\n    mode: "fast",',
    );
    expect(stub).toContain('const { owner, mode, ...same } = value;');
    expect(stub).toContain("// TODO: spec.owner.team exists in v2 only: map it to v1's fields.");
  });

  it('converts an object that carries only equal fields, both ways, setting apiVersion and defaults', () => {
    const v1 = { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g', namespace: 'ns' }, spec: { size: 3, owner: { name: 'ann' } } };
    const v2 = converter.forward(v1);
    expect(v2).toEqual({ ...v1, apiVersion: 'example.com/v2', spec: { size: 3, owner: { name: 'ann' }, mode: 'fast' } });
    expect(() => converter.backward(v2)).toThrow('spec.mode is not converted yet: write its conversion in src/conversions/gadget.v1.ts');
    const { mode: _, ...spec } = v2['spec'] as Record<string, unknown>;
    expect(converter.backward({ ...v2, spec })).toEqual(v1);
  });

  it('throws, naming the field and the file, for an object that carries a field it does not convert', () => {
    const object = { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g' }, spec: { size: 1, owner: { email: 'a@b' } } };
    expect(() => converter.forward(object)).toThrow('spec.owner.email is not converted yet: write its conversion in src/conversions/gadget.v1.ts');
    expect(() => converter.forward({ ...object, spec: { size: 1, legacy: false } })).toThrow('spec.legacy is not converted yet');
  });
});

describe('R-CONVERT-302: a CRD whose versions are all identical', () => {
  it('gets converters that change the apiVersion only', async () => {
    const project = path.join(root, 'same');
    const crd = ps.write(path.join(root, 'inputs/same.yaml'), yaml.stringify(sameVersions(yaml.parse(gadgets()))));
    await generator.init({ crds: [crd], out: project });
    const stub = read(project, 'src/conversions/gadget.v1.ts');
    expect(stub).not.toContain('unconverted(');
    const converter = loadStub(stub);
    const object = { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g' }, spec: { size: 2, anything: 1 } };
    expect(converter.forward(object)).toEqual({ ...object, apiVersion: 'example.com/v2' });
    expect(converter.backward({ ...object, apiVersion: 'example.com/v2' })).toEqual(object);
  });
});

/** The CRD with v1's schema made v2's. */
function sameVersions(crd: { spec: { versions: { schema: unknown }[] } }): object {
  crd.spec.versions[1]!.schema = crd.spec.versions[0]!.schema;
  return crd;
}

describe("R-CONVERT-303: the stub test runs roundTrip on each version's sample", () => {
  it('round-trips both samples, or expects the refusal naming the field until the user maps it', () => {
    const test = read(path.join(root, 'gadgets'), 'test/conversions/gadget.v1.test.ts');
    expect(test).toContain("import { DevCluster, KopfRunner, roundTrip, VirtualClock } from 'kopf-gen/testing';");
    // Imported on first use, after the operator of the end-to-end tests has loaded src/ (R-CONVERT-308).
    expect(test).toContain("  return (await import('../../src/conversions/gadget.v1.js')).gadgetV1;");
    expect(test).toContain('const spokeSample: GadgetV1.Gadget = {');
    expect(test).toContain('const hubSample: GadgetV2.Gadget = {');
    // The v1 sample (spec.size only) converts; the v2 sample carries the defaulted spec.mode.
    expect(test).toContain('it("v1 → v2 → v1 keeps the v1 sample", async () => {\n  roundTrip(await converter(), spokeSample);\n});');
    expect(test).toContain("expect(() => roundTrip(conversion, hubSample, { from: 'to' })).toThrow(/spec\\.mode is/);");
  });

  // Needs on.convert (runtime), its settings and roundTrip (kopf-gen/testing): passes once they are merged.
  it('type-checks, stubs and tests, as generated', () => {
    expect(ps.typecheckProject(path.join(root, 'gadgets'), { tests: true })).toEqual([]);
  });
});

describe('R-CONVERT-304: converters are registered and served', () => {
  const project = path.join(root, 'gadgets');

  it('finds on.convert as it finds on.validate', () => {
    const text =
      "import * as kopf from 'kopf-gen/runtime';\nimport { on } from 'kopf-gen';\nkopf.on.convert(A, B, f);\non.convert(A, C, g);\nother.convert(A, B, f);";
    expect(detecting.conversionRegistrations([{ path: 'src/a.ts', text }])).toEqual([
      { path: 'src/a.ts', line: 3, registration: 'convert' },
      { path: 'src/a.ts', line: 4, registration: 'convert' },
    ]);
    expect(detecting.admissionRegistrations([{ path: 'src/a.ts', text }])).toEqual([]);
  });

  it('imports src/conversions/ from src/generated/handlers.ts, before the webhook server', () => {
    const handlers = read(project, 'src/generated/handlers.ts');
    expect(handlers).toContain('import "../conversions/gadget.v1.js";\n// After the handlers and converters');
    expect(handlers).toContain('import "./admission.js";');
  });

  it('writes the webhook server: managed conversion in development only, no webhook configurations without admission handlers', () => {
    const admission = read(project, 'src/generated/admission.ts');
    expect(admission).toContain('src/conversions/gadget.v1.ts:');
    expect(admission).not.toContain('MANAGED_NAME');
    const development = admission.slice(admission.indexOf('} else {'));
    expect(development).toContain('settings.conversion.managed = true;');
    expect(admission.slice(admission.indexOf('on.startup('), admission.indexOf('} else {'))).not.toContain('settings.conversion');
  });

  it('writes deploy/webhooks.yaml and a Deployment that serves the webhook port with the certificate', () => {
    const documents = yaml.parseAllDocuments(read(project, 'deploy/webhooks.yaml')).map((document) => document.toJS() as { kind: string });
    expect(documents.map((document) => document.kind)).toEqual(['Service', 'Issuer', 'Certificate', 'Issuer', 'Certificate']);
    expect(servers.checkDeployment(read(project, 'deploy/deployment.yaml'), servers.webhookNames('gadgets'))).toEqual([]);
  });
});

describe('R-CONVERT-305: deploy/conversion.yaml and the RBAC', () => {
  const project = path.join(root, 'gadgets');
  const names = servers.webhookNames('gadgets');

  it('patches each converted CRD: strategy Webhook, v1 reviews, the Service at /convert/<plural>.<group>, the CA from cert-manager', () => {
    const text = read(project, 'deploy/conversion.yaml');
    expect(text).toContain('kubectl patch crd gadgets.example.com --type merge --patch-file deploy/conversion.yaml');
    expect(text).toContain("cert-manager's CA injector");
    expect(yaml.parseAllDocuments(text).map((document) => document.toJS())).toEqual([
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'gadgets.example.com', annotations: { 'cert-manager.io/inject-ca-from': `gadgets/${names.servingCertificate}` } },
        spec: {
          conversion: {
            strategy: 'Webhook',
            webhook: {
              conversionReviewVersions: ['v1'],
              clientConfig: { service: { namespace: 'gadgets', name: names.service, path: '/convert/gadgets.example.com', port: 443 } },
            },
          },
        },
      },
    ]);
  });

  it('grants no get or patch on CRDs, and shows the rule managed mode would need', () => {
    const text = read(project, 'deploy/rbac.yaml');
    const rules = yaml
      .parseAllDocuments(text)
      .map((document) => document.toJS() as { rules?: { resources?: string[]; verbs: string[] }[] })
      .flatMap((document) => document.rules ?? []);
    for (const rule of rules.filter((each) => each.resources?.includes('customresourcedefinitions'))) expect(rule.verbs).toEqual(['list', 'watch']);
    expect(text).toContain('#     resourceNames: ["gadgets.example.com"]\n#     verbs: ["get", "patch"]');
  });

  it('gives one kubectl command per CRD when several are converted', async () => {
    const project = path.join(root, 'both');
    await generator.init({ crds: [path.join(root, 'inputs/gadgets.yaml'), RELEASES], out: project });
    const text = read(project, 'deploy/conversion.yaml');
    expect(yaml.parseAllDocuments(text).map((document) => (document.toJS() as { metadata: { name: string } }).metadata.name)).toEqual([
      'gadgets.example.com',
      'releases.deploy.example.net',
    ]);
    expect(text).toContain('#   kubectl patch crd gadgets.example.com --type merge --patch \'{"metadata":{"name":"gadgets.example.com"');
  });
});

describe('R-CONVERT-307: the development-only RBAC of managed conversion, for the tests', () => {
  const project = path.join(root, 'gadgets');

  it('writes test/rbac-development.yaml: get and patch on the converted CRDs only, bound to the service account; nothing in deploy/', () => {
    const documents = yaml.parseAllDocuments(read(project, 'test/rbac-development.yaml')).map((document) => document.toJS());
    expect(documents).toEqual([
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'gadgets-development' },
        rules: [
          { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], resourceNames: ['gadgets.example.com'], verbs: ['get', 'patch'] },
        ],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'gadgets-development' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'gadgets-development' },
        subjects: [{ kind: 'ServiceAccount', name: 'gadgets', namespace: 'gadgets' }],
      },
    ]);
    expect(fs.readdirSync(path.join(project, 'deploy')).filter((file) => file.includes('development'))).toEqual([]);
  });

  it("is loaded by the generated tests beside deploy/rbac.yaml (the kind's and the converters')", () => {
    const rbac = "const RBAC = ['deploy/rbac.yaml', 'deploy/rbac-handlers.yaml', 'test/rbac-development.yaml'];";
    expect(read(project, 'test/gadget.test.ts')).toContain(rbac);
    expect(read(project, 'test/conversions/gadget.v1.test.ts')).toContain(rbac);
  });

  it('is rewritten by generate, and deleted with deploy/conversion.yaml when no converter is left', async () => {
    const project = path.join(root, 'dropped');
    await generator.init({ crds: [path.join(root, 'inputs/gadgets.yaml')], out: project });
    fs.writeFileSync(path.join(project, 'test/rbac-development.yaml'), '# edited\n');
    await generator.generate({ project });
    expect(read(project, 'test/rbac-development.yaml')).toContain('resourceNames: ["gadgets.example.com"]');
    // The CRD serves its storage version only: no converter is written, and the stubs go.
    const crd = yaml.parse(gadgets()) as { spec: { versions: { name: string }[] } };
    crd.spec.versions = crd.spec.versions.filter((version) => version.name === 'v2');
    fs.writeFileSync(path.join(project, 'crds/gadgets.yaml'), yaml.stringify(crd));
    fs.rmSync(path.join(project, 'src/conversions'), { recursive: true });
    fs.rmSync(path.join(project, 'test/conversions'), { recursive: true });
    const again = await generator.generate({ project });
    expect(again.removed).toEqual(expect.arrayContaining(['deploy/conversion.yaml', 'test/rbac-development.yaml']));
    expect(fs.existsSync(path.join(project, 'deploy/conversion.yaml'))).toBe(false);
    expect(fs.existsSync(path.join(project, 'test/rbac-development.yaml'))).toBe(false);
  });
});

describe('R-CONVERT-308: the stub test converts end to end on the devcluster', () => {
  const project = path.join(root, 'gadgets');

  it('runs the operator as its service account, waits for its managed conversion, and reads each sample in the other version', () => {
    const test = read(project, 'test/conversions/gadget.v1.test.ts');
    expect(test).toContain("describe('end to end: the API server converts through the operator', () => {");
    expect(test).toContain("runner = await new KopfRunner(['run', ...SCOPE, 'src/main.ts'], { kubeconfig: operatorKubeconfig, clock, timeout: 10 }).start();");
    expect(test).toContain('const CONVERSION_PATH = "/convert/gadgets.example.com";');
    expect(test).toContain('client.watch(builtins.CustomResourceDefinitions, { signal: deadline })');
    expect(test).toContain('settings.networking.errorBackoffs = [];');
    // The v1 sample converts: created in v1, read in v2, equal to what forward makes of it.
    expect(test).toContain(
      [
        '  it("the v1 sample, created in v1, reads in v2 as the converter makes it", async () => {',
        '    const sample = { ...spokeSample, metadata: { ...spokeSample.metadata, name: "example-v1", namespace: NAMESPACE } };',
        '    const created = await client.create(GadgetV1.Gadgets, sample);',
        '    const read = await client.get(GadgetV2.Gadgets, sample.metadata.name, { namespace: NAMESPACE });',
        '    expect(read.metadata?.uid).toBe(created.metadata?.uid);',
        '    expect(content(read)).toEqual(content((await converter()).forward(sample)));',
      ].join('\n'),
    );
    // The v2 sample carries spec.mode, which backward refuses: the read in v1 fails with it, until mapped.
    expect(test).toContain(
      'client.create(GadgetV2.Gadgets, sample).then(() => client.get(GadgetV1.Gadgets, sample.metadata.name, { namespace: NAMESPACE })),\n    ).rejects.toThrow(/spec\\.mode is/);',
    );
    expect(test).toContain('    // expect(content(read)).toEqual(content((await converter()).backward(sample)));');
    // The end-to-end tests come first: the converter is imported after the operator loaded src/.
    expect(test.indexOf("describe('end to end")).toBeLessThan(test.indexOf('it("v1 → v2 → v1'));
  });
});

describe('R-CONVERT-306: versions served without conversion', () => {
  it('warns about a CRD whose versions differ while its strategy is None, naming the versions', async () => {
    const report = await generator.init({ crds: [path.join(root, 'inputs/gadgets.yaml')], out: path.join(root, 'warned') });
    expect(report.warnings).toContainEqual(
      expect.stringMatching(
        /^gadgets\.example\.com serves v1 with schemas that differ from v2's, but its conversion strategy is None: .*deploy\/conversion\.yaml/,
      ),
    );
  });

  it('does not warn when the CRD names a conversion webhook, nor for a single version', async () => {
    const crd = ps.write(
      path.join(root, 'inputs/webhook.yaml'),
      gadgets({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://x.example/convert' } } }),
    );
    const report = await generator.init({ crds: [crd], out: path.join(root, 'unwarned') });
    expect(report.warnings.filter((warning) => warning.includes('conversion strategy'))).toEqual([]);
  });

  it('writes nothing when the generation fails', async () => {
    const bad = ps.write(
      path.join(root, 'inputs/bad.yaml'),
      'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x}\nspec: {}\n',
    );
    const out = path.join(root, 'failed');
    await expect(generator.init({ crds: [path.join(root, 'inputs/gadgets.yaml'), bad], out })).rejects.toThrow();
    expect(fs.existsSync(out)).toBe(false);
  });
});
