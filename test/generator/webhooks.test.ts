/**
 * Admission webhooks in a generated project. `generate` finds `on.validate` / `on.mutate` in the
 * user's modules and then writes deploy/webhooks.yaml (the Service, and cert-manager's issuers and
 * certificates), src/generated/admission.ts (the startup handler that picks the webhook server)
 * and the RBAC to manage the webhook configurations — and removes them again when no admission
 * handler is left; a project without any gets none of it. It warns while the user-owned
 * Deployment lacks the certificate's mount; `init --webhooks` starts a project with all of it. The
 * generated module serves with the mounted files when the Deployment's variable is set, refuses to
 * start without them, and uses the auto-detecting development server only without the variable.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import * as yaml from 'yaml';
import * as cli from '../../generator/cli.js';
import * as detecting from '../../generator/detecting.js';
import * as generator from '../../generator/index.js';
import * as servers from '../../generator/servers.js';
import * as runtime from '../../runtime/index.js';
import * as support from './support.js';
import * as ps from './projects-support.js';

const root = ps.tempDir();
afterAll(() => ps.cleanup(root));

/** A Widget CRD whose status keeps handler results (so that the generator warns about nothing else). */
const crdFile = ps.write(
  path.join(root, 'inputs/widgets.yaml'),
  ps.widgetCrd({ size: { type: 'integer' } }, { status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }),
);

/** A handler module that rejects Widgets of size 9 (line 3 registers it). */
const VALIDATOR = [
  "import { AdmissionError, on } from 'kopf-gen/runtime';",
  "import { Widgets } from '../generated/index.js';",
  'on.validate(Widgets, async function rejectNine({ spec }) {',
  "  if (spec.size === 9) throw new AdmissionError('size 9 is not allowed', 422);",
  '});',
  '',
].join('\n');

interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  rules?: { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] }[];
}

function manifests(project: string, file: string): Manifest[] {
  return yaml.parseAllDocuments(fs.readFileSync(path.join(project, file), 'utf8')).map((document) => document.toJS() as Manifest);
}

function clusterRules(project: string): NonNullable<Manifest['rules']> {
  return manifests(project, 'deploy/rbac.yaml').find((document) => document.kind === 'ClusterRole' && document.metadata.name.endsWith('-cluster'))!.rules!;
}

function exists(project: string, file: string): boolean {
  return fs.existsSync(path.join(project, file));
}

describe("admission handlers in the user's code", () => {
  const found = (text: string): string[] =>
    detecting
      .admissionRegistrations([{ path: 'src/handlers/a.ts', text }])
      .map((registration) => `${registration.path}:${registration.line} ${registration.registration}`);

  it.each<[string, string, string[]]>([
    ['on.validate through the named import', "import { on } from 'kopf-gen/runtime';\non.validate(Widgets, f);", ['src/handlers/a.ts:2 validate']],
    [
      'on.mutate through an alias, from the package root',
      "import { on as kopfOn } from 'kopf-gen';\n\nkopfOn.mutate('pods', { operations: ['CREATE'] }, f);",
      ['src/handlers/a.ts:3 mutate'],
    ],
    [
      'both through a namespace import',
      "import * as kopf from 'kopf-gen/runtime';\nkopf.on.mutate(W, f);\nkopf.on.validate(W, f);",
      ['src/handlers/a.ts:2 mutate', 'src/handlers/a.ts:3 validate'],
    ],
    ['no other registrations', "import { on } from 'kopf-gen/runtime'; on.create(W, f); on.startup(f); on.probe(f);", []],
    ['no `on` of another module', "import { on } from './mine.js'; on.validate(W, f);", []],
    ['no `validate` of another object', "import { on } from 'kopf-gen/runtime'; schema.validate(W); other.on.validate(W, f);", []],
    ['nothing in comments', "import { on } from 'kopf-gen/runtime';\n// on.validate(W, f);", []],
  ])('%s', (_, text, expected) => {
    expect(found(text)).toEqual(expected);
  });

  it('lists the registrations of every module by path', () => {
    const modules = [
      { path: 'src/lib/z.ts', text: "import { on } from 'kopf-gen/runtime'; on.mutate(W, f);" },
      { path: 'src/handlers/a.ts', text: "import { on } from 'kopf-gen/runtime'; on.validate(W, f);" },
    ];
    expect(detecting.admissionRegistrations(modules)).toEqual([
      { path: 'src/handlers/a.ts', line: 1, registration: 'validate' },
      { path: 'src/lib/z.ts', line: 1, registration: 'mutate' },
    ]);
  });
});

describe('a project without admission handlers', () => {
  it('gets no deploy/webhooks.yaml, no admission module, no rules on webhook configurations, and no certificate in its Deployment', async () => {
    const project = path.join(root, 'plain');
    const report = await generator.init({ crds: [crdFile], out: project });
    expect(report.admission).toEqual([]);
    expect(exists(project, 'deploy/webhooks.yaml')).toBe(false);
    expect(exists(project, 'src/generated/admission.ts')).toBe(false);
    expect(fs.readFileSync(path.join(project, 'src/generated/handlers.ts'), 'utf8')).not.toContain('admission');
    expect(fs.readFileSync(path.join(project, 'deploy/rbac.yaml'), 'utf8')).not.toContain('admissionregistration.k8s.io');
    const deployment = fs.readFileSync(path.join(project, 'deploy/deployment.yaml'), 'utf8');
    expect(deployment).not.toContain(`containerPort: ${servers.WEBHOOKS.port}`);
    expect(deployment).not.toContain('secretName');
    const regenerated = await generator.generate({ project });
    expect(regenerated.warnings).toEqual([]);
    expect(regenerated.removed).toEqual([]);
    expect(exists(project, 'deploy/webhooks.yaml')).toBe(false);
  });
});

describe('a validating handler added to a project', () => {
  const project = path.join(root, 'validated');
  const names = servers.webhookNames('validated');
  const io = ps.capture();

  beforeAll(async () => {
    await generator.init({ crds: [crdFile], out: project });
    ps.write(path.join(project, 'src/handlers/policy.ts'), VALIDATOR);
    expect(await cli.main(['generate', '--project', project], io)).toBe(0);
  });

  it('is reported, and its module is imported before the admission module', () => {
    expect(io.stdout()).toContain('deploy/webhooks.yaml and src/generated/admission.ts serve the admission handlers: src/handlers/policy.ts:3 on.validate');
    const imports = fs
      .readFileSync(path.join(project, 'src/generated/handlers.ts'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('import '));
    expect(imports).toEqual(['import "../handlers/policy.js";', 'import "../handlers/widget.js";', 'import "./admission.js";']);
  });

  it("gets deploy/webhooks.yaml: a Service from port 443 to the webhook port of the operator's pods", () => {
    const documents = manifests(project, 'deploy/webhooks.yaml');
    expect(documents.map((document) => document.kind)).toEqual(['Service', 'Issuer', 'Certificate', 'Issuer', 'Certificate']);
    for (const document of documents) expect(document.metadata.namespace, document.metadata.name).toBe('validated');
    const service = documents[0]!;
    expect(service.metadata.name).toBe(names.service);
    expect(service.metadata.labels?.['app.kubernetes.io/component']).toBe('webhooks');
    const pod = manifests(project, 'deploy/deployment.yaml')[0]!.spec as { template: { metadata: { labels: Record<string, string> } } };
    expect(service.spec?.['selector']).toEqual(pod.template.metadata.labels);
    expect(service.spec?.['ports']).toEqual([{ name: 'webhooks', port: 443, targetPort: 'webhooks', protocol: 'TCP' }]);
  });

  it("gets a self-signed issuer, a CA from it, and a serving certificate from the CA for the Service's DNS names, in the Secret the Deployment mounts", () => {
    const documents = manifests(project, 'deploy/webhooks.yaml');
    const byName = (kind: string, name: unknown): Manifest => documents.find((document) => document.kind === kind && document.metadata.name === name)!;
    const serving = byName('Certificate', names.servingCertificate);
    expect(serving.spec?.['secretName']).toBe(names.servingSecret);
    expect(serving.spec?.['dnsNames']).toEqual([`${names.service}.validated.svc`, `${names.service}.validated.svc.cluster.local`]);
    expect(serving.spec?.['usages']).toContain('server auth');
    const caIssuer = byName('Issuer', (serving.spec?.['issuerRef'] as { name: string }).name);
    const ca = documents.find(
      (document) => document.kind === 'Certificate' && document.spec?.['secretName'] === (caIssuer.spec?.['ca'] as { secretName: string }).secretName,
    )!;
    expect(ca.spec?.['isCA']).toBe(true);
    const root = byName('Issuer', (ca.spec?.['issuerRef'] as { name: string }).name);
    expect(root.spec).toEqual({ selfSigned: {} });
    for (const document of documents.slice(1)) expect(document.metadata.labels?.['app.kubernetes.io/component']).toBe('webhook-certificates');
  });

  it('gets RBAC to create the webhook configurations, and to read and patch only its own', () => {
    const rules = clusterRules(project).filter((rule) => rule.apiGroups.includes('admissionregistration.k8s.io'));
    const configurations = ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations'];
    expect(rules).toEqual([
      { apiGroups: ['admissionregistration.k8s.io'], resources: configurations, verbs: ['create'] },
      { apiGroups: ['admissionregistration.k8s.io'], resources: configurations, resourceNames: [names.managed], verbs: ['get', 'patch'] },
    ]);
  });

  it('gets src/generated/admission.ts with the Service, port, directory and managed name of the manifests, which type-checks', () => {
    const module = fs.readFileSync(path.join(project, 'src/generated/admission.ts'), 'utf8');
    expect(module).toContain(`export const MANAGED_NAME = "${names.managed}";`);
    expect(module).toContain(`export const SERVICE = { namespace: "validated", name: "${names.service}", port: 443 } as const;`);
    expect(module).toContain(`export const PORT = ${servers.WEBHOOKS.port};`);
    expect(module).toContain(`export const TLS_DIR_VARIABLE = "${servers.WEBHOOKS.tlsDirVariable}";`);
    expect(module).toContain(' *   src/handlers/policy.ts:3 on.validate');
    expect(ps.typecheckProject(project)).toEqual([]);
  }, 300_000);

  it('is warned about what the Deployment written by init lacks for serving webhooks, and the warning goes once it has it', async () => {
    const lacks = `lacks a volume of the Secret ${names.servingSecret}; its mount at ${servers.WEBHOOKS.tlsDir} in the operator's container; the container port ${servers.WEBHOOKS.port}`;
    expect(io.stderr()).toContain(`warning: deploy/deployment.yaml cannot serve the admission webhooks in the cluster: it ${lacks} (named webhooks).`);
    const file = path.join(project, 'deploy/deployment.yaml');
    const deployment = yaml.parse(fs.readFileSync(file, 'utf8')) as {
      spec: { template: { spec: { containers: Record<string, unknown[]>[]; volumes: unknown[] } } };
    };
    const pod = deployment.spec.template.spec;
    pod.volumes.push({ name: 'certs', secret: { secretName: names.servingSecret } });
    pod.containers[0]!['volumeMounts']!.push({ name: 'certs', mountPath: servers.WEBHOOKS.tlsDir, readOnly: true });
    pod.containers[0]!['ports']!.push({ name: 'webhooks', containerPort: servers.WEBHOOKS.port });
    fs.writeFileSync(file, yaml.stringify(deployment));
    const report = await generator.generate({ project });
    expect(report.warnings).toEqual([]);
    expect(report.admission).toEqual(['src/handlers/policy.ts:3 on.validate']);
  });

  it('regenerates the same files again', async () => {
    const before = ps.snapshot(project);
    await generator.generate({ project });
    expect(ps.snapshot(project)).toEqual(before);
  });

  it('loses deploy/webhooks.yaml, the admission module and the webhook rules when the handler is gone', async () => {
    fs.rmSync(path.join(project, 'src/handlers/policy.ts'));
    const out = ps.capture();
    expect(await cli.main(['generate', '--project', project], out)).toBe(0);
    expect(out.stdout()).toContain('removed deploy/webhooks.yaml: no admission handler is left');
    expect(exists(project, 'deploy/webhooks.yaml')).toBe(false);
    expect(exists(project, 'src/generated/admission.ts')).toBe(false);
    expect(fs.readFileSync(path.join(project, 'src/generated/handlers.ts'), 'utf8')).not.toContain('admission');
    expect(clusterRules(project).filter((rule) => rule.apiGroups.includes('admissionregistration.k8s.io'))).toEqual([]);
    expect(exists(project, 'deploy/deployment.yaml')).toBe(true);
    const again = await generator.generate({ project });
    expect(again.removed).toEqual([]);
  });
});

describe('init --webhooks', () => {
  const project = path.join(root, 'hooked');

  it('writes stubs with a validating handler, the webhook manifests, and a Deployment that serves them where the generated code looks', async () => {
    const io = ps.capture();
    expect(await cli.main(['init', '--crd', crdFile, '--out', project, '--webhooks'], io)).toBe(0);
    expect(io.stderr()).toBe('');
    const stub = fs.readFileSync(path.join(project, 'src/handlers/widget.ts'), 'utf8');
    expect(stub).toContain("on.validate(Widgets, { id: \"validate-widget\", operations: ['CREATE', 'UPDATE'] }, async function validateWidget(");
    expect(io.stdout()).toMatch(/serve the admission handlers: src\/handlers\/widget\.ts:\d+ on\.validate/);
    expect(exists(project, 'deploy/webhooks.yaml')).toBe(true);
    expect(exists(project, 'src/generated/admission.ts')).toBe(true);
    const names = servers.webhookNames('hooked');
    expect(servers.checkDeployment(fs.readFileSync(path.join(project, 'deploy/deployment.yaml'), 'utf8'), names)).toEqual([]);
    const before = ps.snapshot(project);
    const report = await generator.generate({ project });
    expect(report.warnings).toEqual([]);
    expect(ps.snapshot(project)).toEqual(before);
    expect(ps.typecheckProject(project)).toEqual([]);
  }, 300_000);
});

describe('what the generated admission module configures', () => {
  /** What the module registered, and the servers it made (the runtime's modules replaced by recorders). */
  interface Loaded {
    readonly configure: (args: { settings: runtime.OperatorSettings; logger: { info: (message: string) => void } }) => void;
    readonly made: { server: 'WebhookServer' | 'WebhookAutoServer'; options: unknown }[];
  }

  const project = path.join(root, 'loaded');
  const certs = path.join(root, 'certs');
  let module: string;

  beforeAll(async () => {
    await generator.init({ crds: [crdFile], out: project, webhooks: true });
    module = path.join(project, 'src/generated/admission.ts');
    // So that the module's `kopf-gen/runtime` is this checkout's runtime, which the test replaces.
    fs.mkdirSync(path.join(project, 'node_modules'));
    fs.symlinkSync(support.REPO_ROOT, path.join(project, 'node_modules/kopf-gen'));
  });

  afterEach(() => {
    vi.unstubAllEnvs();
    vi.doUnmock('../../runtime/index.js');
    vi.resetModules();
  });

  async function load(): Promise<Loaded> {
    const startups: Loaded['configure'][] = [];
    const made: Loaded['made'] = [];
    const recorder = (server: 'WebhookServer' | 'WebhookAutoServer') =>
      class {
        constructor(options?: unknown) {
          made.push({ server, options });
        }
      };
    vi.doMock('../../runtime/index.js', () => ({
      ...runtime,
      on: {
        startup: (fn: Loaded['configure']) => {
          startups.push(fn);
          return fn;
        },
      },
      WebhookServer: recorder('WebhookServer'),
      WebhookAutoServer: recorder('WebhookAutoServer'),
    }));
    await import(module);
    expect(startups).toHaveLength(1);
    return { configure: startups[0]!, made };
  }

  const logger = { info: () => {} };

  it('in the cluster, serves with the mounted certificate, its CA, and the Service, and manages the configurations', async () => {
    for (const file of ['tls.crt', 'tls.key', 'ca.crt']) ps.write(path.join(certs, file), 'PEM');
    vi.stubEnv(servers.WEBHOOKS.tlsDirVariable, certs);
    const { configure, made } = await load();
    const settings = new runtime.OperatorSettings();
    configure({ settings, logger });
    const names = servers.webhookNames('loaded');
    expect(made).toEqual([
      {
        server: 'WebhookServer',
        options: {
          port: 9443,
          certfile: path.join(certs, 'tls.crt'),
          pkeyfile: path.join(certs, 'tls.key'),
          cafile: path.join(certs, 'ca.crt'),
          service: { namespace: 'loaded', name: names.service, port: 443 },
        },
      },
    ]);
    expect(settings.admission.server).not.toBeNull();
    expect(settings.admission.managed).toBe(names.managed);
  });

  it('in the cluster without the certificate files, stops the operator with a permanent error instead of self-signing', async () => {
    vi.stubEnv(servers.WEBHOOKS.tlsDirVariable, path.join(root, 'nowhere'));
    const { configure, made } = await load();
    const settings = new runtime.OperatorSettings();
    expect(() => configure({ settings, logger })).toThrow(runtime.PermanentError);
    expect(() => configure({ settings, logger })).toThrow(/WEBHOOK_TLS_DIR is .*nowhere, but .*tls\.crt.* is missing/);
    expect(made).toEqual([]);
    expect(settings.admission.server).toBeNull();
  });

  it('in development (no variable), serves with the auto-detecting server', async () => {
    vi.stubEnv(servers.WEBHOOKS.tlsDirVariable, undefined);
    const { configure, made } = await load();
    const settings = new runtime.OperatorSettings();
    configure({ settings, logger });
    expect(made).toEqual([{ server: 'WebhookAutoServer', options: undefined }]);
    expect(settings.admission.managed).toBe(servers.webhookNames('loaded').managed);
  });

  it("changes nothing when a startup handler of the user's already set a server", async () => {
    vi.stubEnv(servers.WEBHOOKS.tlsDirVariable, undefined);
    const { configure, made } = await load();
    const settings = new runtime.OperatorSettings();
    const own = (): AsyncIterable<never> => ({ [Symbol.asyncIterator]: () => ({ next: async () => ({ done: true, value: undefined as never }) }) });
    settings.admission.server = own;
    configure({ settings, logger });
    expect(made).toEqual([]);
    expect(settings.admission.server).toBe(own);
    expect(settings.admission.managed).toBeNull();
  });
});
