/**
 * `init` end to end: every CRD file of the repository's generator fixtures (and of the external
 * corpus, when `KOPF_GEN_CRD_CORPUS` names one) becomes a project whose code type-checks against this
 * checkout's runtime; the project's files (package.json, tsconfig, RBAC, stubs, tests, Dockerfile,
 * Deployment) say what the issue asks; a project for chosen namespaces uses `-n NS` everywhere and
 * binds its RBAC in those namespaces only; bad namespaces and non-empty output directories are
 * refused with nothing written; the status-pruning warning.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import * as cli from '../../generator/cli.js';
import * as generator from '../../generator/index.js';
import * as scaffolding from '../../generator/scaffolding.js';
import * as support from './support.js';
import * as ps from './projects-support.js';

const root = ps.tempDir();
afterAll(() => ps.cleanup(root));

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

interface RbacDocument {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Rule[];
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace: string }[];
}

function rulesOf(project: string): { cluster: Rule[]; namespaced: Rule[]; kinds: string[]; documents: RbacDocument[] } {
  const documents = yaml.parseAllDocuments(fs.readFileSync(path.join(project, 'deploy/rbac.yaml'), 'utf8')).map((document) => document.toJS() as RbacDocument);
  const roles = documents.filter((document) => document.kind === 'ClusterRole');
  return {
    cluster: roles.find((role) => role.metadata.name.endsWith('-cluster'))?.rules ?? [],
    namespaced: roles.find((role) => role.metadata.name.endsWith('-namespaced'))?.rules ?? [],
    kinds: documents.map((document) => document.kind),
    documents,
  };
}

interface PackageJson {
  name: string;
  type: string;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

function readJson<T>(project: string, file: string): T {
  return JSON.parse(fs.readFileSync(path.join(project, file), 'utf8')) as T;
}

interface Probe {
  httpGet: { path: string; port: string };
  periodSeconds: number;
  timeoutSeconds: number;
  failureThreshold: number;
}

interface Container {
  args: string[];
  image: string;
  ports: { name: string; containerPort: number; protocol: string }[];
  env: { name: string; value: string }[];
  livenessProbe: Probe;
  readinessProbe: Probe;
  startupProbe: Probe;
  securityContext: Record<string, unknown>;
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  volumeMounts: { name: string; mountPath: string }[];
  [key: string]: unknown;
}

interface Deployment {
  metadata: { namespace: string };
  spec: {
    replicas: number;
    strategy: { type: string };
    template: {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      spec: {
        serviceAccountName: string;
        securityContext: Record<string, unknown>;
        containers: Container[];
        volumes: { name: string; emptyDir?: Record<string, unknown> }[];
      };
    };
  };
}

function deploymentOf(project: string): Deployment {
  return yaml.parse(fs.readFileSync(path.join(project, 'deploy/deployment.yaml'), 'utf8')) as Deployment;
}

/** The Dockerfile's stages: the FROM line's arguments and the instructions after it (comments dropped). */
function stagesOf(project: string): { from: string; instructions: string[] }[] {
  const lines = fs
    .readFileSync(path.join(project, 'Dockerfile'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: { from: string; instructions: string[] }[] = [];
  for (const line of lines) {
    if (line.startsWith('FROM ')) stages.push({ from: line.slice('FROM '.length), instructions: [] });
    else stages.at(-1)?.instructions.push(line);
  }
  return stages;
}

/** The JSON array of a Dockerfile instruction in exec form (`CMD ["-A"]`). */
function execForm(stage: { instructions: string[] }, instruction: string): unknown {
  const line = stage.instructions.find((each) => each.startsWith(`${instruction} `));
  return line === undefined ? undefined : (JSON.parse(line.slice(instruction.length + 1)) as unknown);
}

function allows(rules: readonly Rule[], group: string, resource: string, verbs: readonly string[]): boolean {
  return verbs.every((verb) => rules.some((rule) => rule.apiGroups.includes(group) && rule.resources.includes(resource) && rule.verbs.includes(verb)));
}

/** Each CRD file of a directory becomes a project with a stub and a test per CRD; all of them type-check. */
function initEach(directory: string, label: string): void {
  const crdFiles = support.yamlFiles(directory);
  const projects = new Map<string, string>();

  it.each(crdFiles)('%s becomes a project with a stub, a test and a sample per CRD', async (name) => {
    const out = path.join(root, label, name.replace(/\.yaml$/, ''));
    const report = await generator.init({ crds: [path.join(directory, name)], out });
    projects.set(name, out);
    const files = ps.snapshot(out);
    const { model } = support.generate([{ path: name, text: fs.readFileSync(path.join(directory, name), 'utf8') }]);
    const served = model.crds.filter((crd) => crd.versions.length > 0);
    expect(report.stubsAdded).toHaveLength(served.length);
    expect(Object.keys(files).filter((file) => /^test\/[^/]*\.test\.ts$/.test(file))).toHaveLength(served.length);
    // A converter stub and its test per non-hub version of a CRD that serves several (R-CONVERT-301).
    const spokes = served
      .filter((crd) => crd.versions.length > 1 && crd.versions.some((version) => version.storage))
      .reduce((count, crd) => count + crd.versions.length - 1, 0);
    expect(Object.keys(files).filter((file) => /^src\/conversions\/.*\.ts$/.test(file))).toHaveLength(spokes);
    expect(Object.keys(files).filter((file) => /^test\/conversions\/.*\.test\.ts$/.test(file))).toHaveLength(spokes);
    expect(Object.keys(files).filter((file) => /^samples\/.*\.yaml$/.test(file))).toHaveLength(served.length);
    const modules = Object.keys(files).filter((file) => file.startsWith('src/generated/') && /\.v[^/]*\.ts$/.test(file));
    expect(modules).toHaveLength(served.reduce((count, crd) => count + crd.versions.length, 0));
    for (const file of [
      'package.json',
      'tsconfig.json',
      'kopf-gen.json',
      '.gitignore',
      'Dockerfile',
      'README.md',
      'src/main.ts',
      'src/generated/index.ts',
      'src/generated/handlers.ts',
      'deploy/rbac.yaml',
      'deploy/deployment.yaml',
      'deploy/networkpolicy.yaml',
      `crds/${name}`,
    ]) {
      expect(files, file).toHaveProperty([file]);
    }
    for (const module of modules) expect(files['src/generated/index.ts']).toContain(`from "./${path.posix.basename(module).replace(/\.ts$/, '.js')}"`);
    const rules = rulesOf(out);
    for (const crd of served) {
      const scoped = crd.versions[0]!.namespaced ? rules.namespaced : rules.cluster;
      expect(allows(scoped, crd.group, crd.plural, ['get', 'list', 'watch', 'patch']), crd.crdName).toBe(true);
    }
  });

  it('type-checks every generated project (generated code and handler stubs) against the runtime', { timeout: 600_000 }, () => {
    expect(projects.size).toBe(crdFiles.length);
    expect(ps.typecheckProjects([...projects.values()])).toEqual([]);
  });
}

describe('init over the generator fixtures', () => {
  initEach(support.FIXTURES, 'fixtures');
});

support.describeCorpus((directory) => initEach(directory, 'corpus'));

describe('a new project', () => {
  const crdFile = ps.write(
    path.join(root, 'inputs/widgets.yaml'),
    ps.widgetCrd({ size: { type: 'integer', minimum: 3 }, color: { type: 'string', enum: ['red', 'blue'] } }, { required: ['size', 'color'] }),
  );

  it('has the scripts, dependencies and strict settings the issue asks for, for all namespaces', async () => {
    const out = path.join(root, 'scripts');
    await generator.init({ crds: [crdFile], out, name: 'My Operator' });
    const pkg = readJson<PackageJson>(out, 'package.json');
    expect(pkg.name).toBe('my-operator');
    expect(pkg.type).toBe('module');
    expect(pkg.scripts).toEqual({
      build: 'tsc -p tsconfig.build.json',
      start: 'exec node dist/main.js -A',
      operator: 'exec kopf-gen run --dev-cluster=auto --watch -A src/main.ts',
      test: 'vitest run',
      typecheck: 'tsc --noEmit -p tsconfig.json',
      generate: 'kopf-gen generate',
    });
    expect(pkg.dependencies).toEqual({ 'kopf-gen': `file:${path.resolve(support.REPO_ROOT)}` });
    expect(Object.keys(pkg.devDependencies).sort()).toEqual(['@kopf-gen/generator', '@types/node', 'tsx', 'typescript', 'vitest']);
    expect(pkg.devDependencies['@kopf-gen/generator']).toBe(`file:${path.join(path.resolve(support.REPO_ROOT), 'generator')}`);
    expect(pkg.devDependencies['typescript']).toMatch(/^~5\.9/);
    expect(pkg.devDependencies['vitest']).toMatch(/^\^3\./);
    const tsconfig = readJson<{ compilerOptions: { strict: boolean; noEmit: boolean } }>(out, 'tsconfig.json');
    expect(tsconfig.compilerOptions).toMatchObject({ strict: true, noEmit: true });
    const config = readJson<{ generatorVersion: string; crds: string[]; namespaces: string[] }>(out, 'kopf-gen.json');
    expect(config).toMatchObject({ generatorVersion: generator.GENERATOR_VERSION, crds: ['crds/widgets.yaml'], namespaces: [] });
    expect(fs.readFileSync(path.join(out, 'src/generated/handlers.ts'), 'utf8')).toContain('import "../handlers/widget.js";');
    const module = fs.readFileSync(path.join(out, 'src/generated/widgets.example.com.v1.ts'), 'utf8');
    expect(module).toContain('DO NOT EDIT');
  });

  it("has a main.ts that imports the handlers and ends by handing the command line to the runtime's main()", async () => {
    const out = path.join(root, 'main');
    await generator.init({ crds: [crdFile], out });
    const main = fs.readFileSync(path.join(out, 'src/main.ts'), 'utf8');
    expect(main).toContain("import { main } from 'kopf-gen/runtime';");
    expect(main).toContain("import './generated/handlers.js';");
    expect(main.trimEnd().split('\n').at(-1)).toBe('await main(import.meta);');
  });

  it("compiles src/ to dist/ with tsconfig.build.json, and keeps dist/ out of git and of the image's build context", async () => {
    const out = path.join(root, 'build');
    await generator.init({ crds: [crdFile], out });
    const build = readJson<{ extends: string; compilerOptions: Record<string, unknown>; include: string[] }>(out, 'tsconfig.build.json');
    expect(build).toEqual({
      extends: './tsconfig.json',
      compilerOptions: { noEmit: false, outDir: 'dist', rootDir: 'src', sourceMap: true },
      include: ['src'],
    });
    expect(fs.readFileSync(path.join(out, '.gitignore'), 'utf8').split('\n')).toContain('dist/');
    const ignored = fs
      .readFileSync(path.join(out, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'));
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.kopf-gen', '*.log', '.git']));
  });

  it('writes the dependency specs of where the generator runs from into package.json (a checkout here; origins.test.ts covers the others)', async () => {
    const out = path.join(root, 'dependencies');
    await generator.init({ crds: [crdFile], out });
    const manifest = JSON.parse(fs.readFileSync(path.join(out, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(manifest.dependencies['kopf-gen']).toBe(generator.kopfGenDependency());
    expect(manifest.devDependencies['@kopf-gen/generator']).toBe(generator.generatorDependency());
    expect(generator.kopfGenDependency()).toBe(`file:${fs.realpathSync(support.REPO_ROOT)}`);
  });

  it('builds an image in two stages that runs the compiled operator with plain node as a non-root user', async () => {
    const out = path.join(root, 'docker');
    await generator.init({ crds: [crdFile], out });
    const [build, runtime, ...more] = stagesOf(out);
    expect(more).toEqual([]);
    expect(build!.from).toBe('${NODE_IMAGE} AS build');
    expect(build!.instructions).toEqual(expect.arrayContaining(['RUN npm ci --no-audit --no-fund', 'RUN npm run build']));
    expect(runtime!.from).toBe('${NODE_IMAGE}');
    expect(runtime!.instructions).toContain('ENV NODE_ENV=production');
    expect(runtime!.instructions.some((line) => /^RUN npm ci --omit=dev\b/.test(line))).toBe(true);
    expect(runtime!.instructions).toContain('COPY --from=build /operator/dist ./dist');
    expect(runtime!.instructions.filter((line) => line.startsWith('COPY ')).join('\n')).not.toMatch(/\b(src|crds|test)\b/);
    const users = runtime!.instructions.filter((line) => line.startsWith('USER '));
    expect(users).toEqual(['USER 1000:1000']);
    expect(execForm(runtime!, 'ENTRYPOINT')).toEqual(['node', 'dist/main.js']);
    expect(execForm(runtime!, 'CMD')).toEqual(['-A']);
    expect(fs.readFileSync(path.join(out, 'Dockerfile'), 'utf8')).toMatch(/"file:" dependency[\s\S]*does not resolve\s+(#\s*)?inside the image/);
  });

  it('pins the base image by the digest of its index, with the command to update it, and tags the image with the project version', async () => {
    const out = path.join(root, 'pinned');
    await generator.init({ crds: [crdFile], out, name: 'pinned-op' });
    const dockerfile = fs.readFileSync(path.join(out, 'Dockerfile'), 'utf8');
    const args = dockerfile.split('\n').filter((line) => line.startsWith('ARG '));
    expect(args).toEqual([expect.stringMatching(/^ARG NODE_IMAGE=node:24-slim@sha256:[0-9a-f]{64}$/)]);
    expect(
      dockerfile
        .split('\n')
        .filter((line) => line.startsWith('FROM '))
        .every((line) => line.startsWith('FROM ${NODE_IMAGE}')),
    ).toBe(true);
    expect(dockerfile).toContain('#   docker buildx imagetools inspect node:24-slim');
    const version = (JSON.parse(fs.readFileSync(path.join(out, 'package.json'), 'utf8')) as { version: string }).version;
    expect(version).toBe('0.1.0');
    expect(deploymentOf(out).spec.template.spec.containers[0]!.image).toBe(`pinned-op:${version}`);
    const readme = fs.readFileSync(path.join(out, 'README.md'), 'utf8');
    expect(readme).not.toMatch(/:latest\b/);
    const builds = readme.split('\n').filter((line) => line.startsWith('docker build '));
    expect(builds.length).toBe(2);
    for (const line of builds) expect(line).toMatch(/^docker build -t pinned-op:\$\(node -p "require\('\.\/package\.json'\)\.version"\) \./);
  });

  it('runs one hardened replica, replaced with Recreate, with the resources of OPERATOR_RESOURCES', async () => {
    const out = path.join(root, 'deployment');
    await generator.init({ crds: [crdFile], out });
    const deployment = deploymentOf(out);
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy.type).toBe('Recreate');
    const pod = deployment.spec.template.spec;
    expect(pod.serviceAccountName).toBe('deployment');
    expect(pod.securityContext).toEqual({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.containers).toHaveLength(1);
    const container = pod.containers[0]!;
    expect(container.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    const { memoryRequest, memoryLimit, cpuRequest } = scaffolding.OPERATOR_RESOURCES;
    expect(container.resources).toEqual({ requests: { cpu: cpuRequest, memory: memoryRequest }, limits: { memory: memoryLimit } });
    const tmp = container.volumeMounts.find((mount) => mount.mountPath === '/tmp');
    expect(pod.volumes.find((volume) => volume.name === tmp?.name)?.emptyDir).toBeDefined();
  });

  it("R-PEER-1 P-2 writes deploy/peering.yaml with Kopf's peering CRDs and the objects of its scope; the pod is its own identity", async () => {
    const out = path.join(root, 'peering');
    await generator.init({ crds: [crdFile], out });
    const docs = yaml
      .parseAllDocuments(fs.readFileSync(path.join(out, 'deploy/peering.yaml'), 'utf8'))
      .map((doc) => doc.toJSON() as { kind: string; metadata: { name: string; namespace?: string }; spec?: { scope: string; group: string } });
    expect(docs.map((doc) => [doc.kind, doc.metadata.name, doc.metadata.namespace])).toEqual([
      ['CustomResourceDefinition', 'clusterkopfpeerings.kopf.dev', undefined],
      ['CustomResourceDefinition', 'kopfpeerings.kopf.dev', undefined],
      ['ClusterKopfPeering', 'default', undefined],
    ]);
    expect(docs[0]!.spec).toMatchObject({ scope: 'Cluster', group: 'kopf.dev' });
    const namespaced = path.join(root, 'peering-ns');
    await generator.init({ crds: [crdFile], out: namespaced, namespaces: ['apps', 'jobs'] });
    const objects = yaml
      .parseAllDocuments(fs.readFileSync(path.join(namespaced, 'deploy/peering.yaml'), 'utf8'))
      .map((doc) => doc.toJSON() as { kind: string; metadata: { namespace?: string } })
      .filter((doc) => doc.kind !== 'CustomResourceDefinition');
    expect(objects.map((doc) => [doc.kind, doc.metadata.namespace])).toEqual([
      ['KopfPeering', 'apps'],
      ['KopfPeering', 'jobs'],
    ]);
    const deployment = deploymentOf(out);
    expect(deployment.spec.strategy.type).toBe('Recreate');
    expect(deployment.spec.template.spec.containers[0]!.args).not.toContain('--standalone');
  });

  it("R-SEC-15 serves liveness and readiness on a plain health port the probes use, and the metrics over HTTPS on a port of their own that Prometheus's annotations name", async () => {
    const out = path.join(root, 'probed');
    await generator.init({ crds: [crdFile], out });
    const deployment = deploymentOf(out);
    const container = deployment.spec.template.spec.containers[0]!;
    expect(container.args).toEqual(['--liveness=http://0.0.0.0:8080/healthz', '--metrics=https://0.0.0.0:8443/metrics', '-A']);
    expect(container.ports).toEqual([
      { name: 'health', containerPort: 8080, protocol: 'TCP' },
      { name: 'metrics', containerPort: 8443, protocol: 'TCP' },
    ]);
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'health' });
    expect(container.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
    // Liveness results are cached for 10 s: probing faster sees the same answer; a restart needs about a minute of failures.
    expect(container.livenessProbe.periodSeconds).toBeGreaterThanOrEqual(10);
    expect(container.livenessProbe.periodSeconds * container.livenessProbe.failureThreshold).toBeGreaterThanOrEqual(60);
    expect(container.startupProbe.periodSeconds * container.startupProbe.failureThreshold).toBeGreaterThanOrEqual(120);
    for (const probe of [container.livenessProbe, container.readinessProbe, container.startupProbe]) {
      expect(probe.timeoutSeconds).toBeLessThan(probe.periodSeconds + 1);
    }
    expect(deployment.spec.template.metadata.annotations).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/scheme': 'https',
      'prometheus.io/port': '8443',
      'prometheus.io/path': '/metrics',
    });
    expect(container.env).toEqual([
      { name: 'POD_ID', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'WEBHOOK_TLS_DIR', value: '/etc/webhooks/tls' },
    ]);
    const text = fs.readFileSync(path.join(out, 'deploy/deployment.yaml'), 'utf8');
    expect(text).not.toMatch(/no (liveness|probe)/i);
    const readme = fs.readFileSync(path.join(out, 'README.md'), 'utf8');
    expect(readme).not.toMatch(/no liveness or readiness probes/i);
    const blocks = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) =>
      yaml.parseAllDocuments(match[1]!).map((document) => document.toJS() as Record<string, unknown>),
    );
    const scrape = blocks.flat().find((document) => 'scrape_configs' in document) as {
      scrape_configs: Record<string, unknown>[];
    };
    expect(scrape.scrape_configs[0]).toMatchObject({
      job_name: 'probed',
      scheme: 'https',
      metrics_path: '/metrics',
      authorization: { credentials_file: '/var/run/secrets/kubernetes.io/serviceaccount/token' },
      tls_config: { insecure_skip_verify: true },
      relabel_configs: [{ regex: 'probed;metrics' }],
    });
    const monitor = blocks.flat().find((document) => document['kind'] === 'ServiceMonitor') as {
      spec: { endpoints: Record<string, unknown>[]; selector: { matchLabels: Record<string, string> } };
    };
    expect(monitor.spec.endpoints).toEqual([
      {
        port: 'metrics',
        scheme: 'https',
        path: '/metrics',
        interval: '30s',
        bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
        tlsConfig: { insecureSkipVerify: true },
      },
    ]);
    const metrics = blocks.flat().find((document) => document['kind'] === 'Service') as {
      metadata: { labels: Record<string, string> };
      spec: { selector: Record<string, string>; ports: { port: number; targetPort: string }[] };
    };
    expect(metrics.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
    expect(metrics.spec.selector).toEqual(deployment.spec.template.metadata.labels);
    expect(metrics.spec.ports[0]).toMatchObject({ port: 8443, targetPort: 'metrics' });
  });

  it('writes typed handler stubs for create, update, delete and resume, and a test that creates a valid object', async () => {
    const out = path.join(root, 'stubs');
    await generator.init({ crds: [crdFile], out });
    const handler = fs.readFileSync(path.join(out, 'src/handlers/widget.ts'), 'utf8');
    for (const registration of ['on.create(Widgets', 'on.update(Widgets', 'on.delete(Widgets', 'on.resume(Widgets']) expect(handler).toContain(registration);
    expect(handler).toMatch(/\/\/ +on\.field\(Widgets, "spec\.size"/);
    expect(handler).toMatch(/\/\/ +throw new TemporaryError\(/);
    expect(handler).toMatch(/\/\/ +throw new PermanentError\(/);
    const test = fs.readFileSync(path.join(out, 'test/widget.test.ts'), 'utf8');
    expect(test).toContain("import { DevCluster, KopfRunner, VirtualClock } from 'kopf-gen/testing';");
    // In-process (R-TEST-104): the runner on a virtual clock, the typed client, a watch — no child process, no sleeps.
    expect(test).toContain('import { Widgets, type WidgetInput } from');
    expect(test).toContain("new KopfRunner(['run', ...SCOPE, 'src/main.ts'], { kubeconfig: operatorKubeconfig, clock, timeout: 10 })");
    expect(test).toContain('client.watch(Widgets, ');
    expect(test).not.toMatch(/spawn|setTimeout|setInterval|eventually/);
    expect(test).toContain('const sample: WidgetInput = {');
    expect(test).toContain('  spec: {\n    size: 3,\n    color: "red",\n  },');
    expect(fs.readFileSync(path.join(out, 'samples/widget.yaml'), 'utf8')).toContain('spec:\n  size: 3\n  color: red\n');
    expect(ps.typecheckProject(out, { tests: true })).toEqual([]);
  }, 300_000);

  it('derives least-privilege RBAC from the CRDs plus what the runtime needs', async () => {
    const out = path.join(root, 'rbac');
    const cluster = ps.write(path.join(root, 'inputs/gizmos.yaml'), yaml.stringify(support.crd(undefined, { kind: 'Gizmo', scope: 'Cluster' })));
    await generator.init({ crds: [crdFile, cluster], out });
    const rules = rulesOf(out);
    // The last ClusterRole is the metrics reader (R-SEC-17), bound by the user to their Prometheus.
    expect(rules.kinds).toEqual(['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'ClusterRole', 'ClusterRoleBinding', 'ClusterRole']);
    expect(allows(rules.namespaced, 'example.com', 'widgets', ['get', 'list', 'watch', 'patch'])).toBe(true);
    expect(allows(rules.namespaced, 'example.com', 'widgets/status', ['patch'])).toBe(true);
    expect(allows(rules.cluster, 'example.com', 'gizmos', ['get', 'list', 'watch', 'patch'])).toBe(true);
    expect(allows(rules.namespaced, 'example.com', 'widgets', ['delete'])).toBe(false);
    expect(allows(rules.namespaced, '', 'events', ['create'])).toBe(true);
    expect(allows(rules.cluster, '', 'namespaces', ['list', 'watch'])).toBe(true);
    expect(allows(rules.cluster, 'apiextensions.k8s.io', 'customresourcedefinitions', ['list', 'watch'])).toBe(true);
    expect(allows(rules.cluster, 'kopf.dev', 'clusterkopfpeerings', ['get', 'list', 'watch', 'patch'])).toBe(true);
    expect(allows(rules.namespaced, 'kopf.dev', 'kopfpeerings', ['get', 'list', 'watch', 'patch'])).toBe(true);
    expect(allows(rules.namespaced, '', 'configmaps', ['list'])).toBe(false);
    const binding = rules.documents.find((document) => document.kind === 'ClusterRoleBinding' && document.roleRef?.name === 'rbac-namespaced');
    expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name: 'rbac', namespace: 'rbac' }]);
  });

  it('refuses a non-empty output directory without --force and leaves it unchanged', async () => {
    const out = path.join(root, 'occupied');
    ps.write(path.join(out, 'notes.txt'), 'mine\n');
    const before = ps.snapshot(out);
    await expect(generator.init({ crds: [crdFile], out })).rejects.toMatchObject({ code: 'output-not-empty' });
    expect(ps.snapshot(out)).toEqual(before);
    await generator.init({ crds: [crdFile], out, force: true });
    const after = ps.snapshot(out);
    expect(after['notes.txt']).toBe('mine\n');
    expect(after).toHaveProperty(['src/handlers/widget.ts']);
  });

  it('P-1 warns when a handler returns a value the status schema would prune, naming the CRD, the handler and the fix', async () => {
    const out = path.join(root, 'pruning');
    const created = await generator.init({ crds: [crdFile], out });
    expect(created.warnings).toEqual([]); // the stubs return nothing
    const handler = fs.readFileSync(path.join(out, 'src/handlers/widget.ts'), 'utf8');
    expect(handler).toContain('prunes unknown fields');
    expect((await generator.generate({ project: out })).warnings).toEqual([]);
    // Handlers that return nothing, in every form the scan knows: still no warning.
    const quiet = handler.replace(
      'logger.info(`Widget ${name} resumed`);',
      'logger.info(`Widget ${name} resumed`);\n  if (name === "x") return;\n  const inner = () => 1;\n  void inner;\n  return undefined;',
    );
    ps.write(path.join(out, 'src/handlers/widget.ts'), quiet);
    expect((await generator.generate({ project: out })).warnings).toEqual([]);
    // A handler that returns a value: warned about, naming its registration.
    const returning = quiet.replace('return undefined;', 'return { ready: true };');
    ps.write(path.join(out, 'src/handlers/widget.ts'), returning);
    const line = returning.split('\n').findIndex((text) => text.startsWith('on.resume(')) + 1;
    const warned = await generator.generate({ project: out });
    expect(warned.warnings).toHaveLength(1);
    expect(warned.warnings[0]).toContain('widgets.example.com');
    expect(warned.warnings[0]).toContain(`the handler registered at src/handlers/widget.ts:${line} returns a value`);
    expect(warned.warnings[0]).toContain('x-kubernetes-preserve-unknown-fields: true');
    // A status that keeps unknown fields: no warning, whatever the handlers return.
    const open = ps.write(
      path.join(root, 'inputs/open.yaml'),
      ps.widgetCrd({ size: { type: 'integer' } }, { status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }),
    );
    const kept = await generator.init({ crds: [open], out: path.join(root, 'kept') });
    expect(kept.warnings).toEqual([]);
    expect(fs.readFileSync(path.join(root, 'kept/src/handlers/widget.ts'), 'utf8')).not.toContain('prunes unknown fields');
    ps.write(path.join(root, 'kept/src/handlers/widget.ts'), returning);
    expect((await generator.generate({ project: path.join(root, 'kept') })).warnings).toEqual([]);
  });
});

describe('a project for chosen namespaces', () => {
  const crdFile = ps.write(path.join(root, 'inputs/scoped-widgets.yaml'), ps.widgetCrd({ size: { type: 'integer' } }));
  const cluster = ps.write(path.join(root, 'inputs/scoped-gizmos.yaml'), yaml.stringify(support.crd(undefined, { kind: 'Gizmo', scope: 'Cluster' })));
  const out = path.join(root, 'scoped');
  const scope = ['-n', 'team-a', '-n', 'team-b'];

  it('records the namespaces in kopf-gen.json and runs with -n NS for each, everywhere', async () => {
    await generator.init({ crds: [crdFile, cluster], out, namespaces: ['team-a', 'team-b', 'team-a'] });
    expect(readJson<{ namespaces: string[] }>(out, 'kopf-gen.json').namespaces).toEqual(['team-a', 'team-b']);
    const { scripts } = readJson<PackageJson>(out, 'package.json');
    expect(scripts['start']).toBe('exec node dist/main.js -n team-a -n team-b');
    expect(scripts['operator']).toBe('exec kopf-gen run --dev-cluster=auto --watch -n team-a -n team-b src/main.ts');
    expect(deploymentOf(out).spec.template.spec.containers[0]!.args.slice(2)).toEqual(scope);
    expect(execForm(stagesOf(out).at(-1)!, 'CMD')).toEqual(scope);
    const test = fs.readFileSync(path.join(out, 'test/widget.test.ts'), 'utf8');
    expect(test).toContain(`const SCOPE = ${JSON.stringify(scope)};`);
    expect(test).toContain('const NAMESPACE = "team-a";');
    // The served namespaces exist before deploy/rbac.yaml binds the operator's rules in them (R-SEC-3).
    expect(test).toContain('const SERVED_NAMESPACES: string[] = ["team-a","team-b"];');
    expect(test).toContain("new KopfRunner(['run', ...SCOPE, 'src/main.ts']");
    expect(fs.readFileSync(path.join(out, 'test/gizmo.test.ts'), 'utf8')).toContain('const SERVED_NAMESPACES: string[] = ["team-a","team-b"];');
  });

  it('binds the namespaced rules with a RoleBinding in each namespace, and keeps cluster-level needs cluster-wide', () => {
    const rules = rulesOf(out);
    expect(rules.kinds).toEqual([
      'Namespace',
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'ClusterRole',
      'RoleBinding',
      'RoleBinding',
      'ClusterRole',
    ]);
    const bindings = rules.documents.filter((document) => document.kind === 'RoleBinding');
    expect(bindings.map((binding) => binding.metadata.namespace)).toEqual(['team-a', 'team-b']);
    for (const binding of bindings) {
      expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'scoped-namespaced' });
      expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'scoped', namespace: 'scoped' }]);
    }
    const clusterBindings = rules.documents.filter((document) => document.kind === 'ClusterRoleBinding');
    expect(clusterBindings.map((binding) => binding.roleRef?.name)).toEqual(['scoped-cluster']);
    expect(allows(rules.namespaced, 'example.com', 'widgets', ['get', 'list', 'watch', 'patch'])).toBe(true);
    expect(allows(rules.cluster, 'example.com', 'gizmos', ['get', 'list', 'watch', 'patch'])).toBe(true);
    expect(allows(rules.cluster, 'apiextensions.k8s.io', 'customresourcedefinitions', ['list', 'watch'])).toBe(true);
  });

  it('rejects a bad --namespace value, naming it, with nothing written', async () => {
    const rejected = path.join(root, 'rejected');
    await expect(generator.init({ crds: [crdFile], out: rejected, namespaces: ['team-a', 'Team_B'] })).rejects.toMatchObject({
      code: 'invalid-namespace',
      message: expect.stringContaining('"Team_B"'),
    });
    expect(fs.existsSync(rejected)).toBe(false);
    const io = ps.capture();
    expect(await cli.main(['init', '--crd', crdFile, '--out', rejected, '--namespace', 'team-a', '--namespace', 'team-*'], io)).toBe(1);
    expect(io.stderr()).toContain('invalid namespace "team-*"');
    expect(io.stderr()).toContain('patterns are not supported');
    expect(fs.existsSync(rejected)).toBe(false);
    expect(fs.readdirSync(root).filter((name) => name.includes('rejected'))).toEqual([]);
  });

  it('takes the namespaces from the command line', async () => {
    const fromCli = path.join(root, 'from-cli');
    const io = ps.capture();
    expect(await cli.main(['init', '--crd', crdFile, '--out', fromCli, '-n', 'team-c', '--namespace', 'team-d'], io)).toBe(0);
    expect(readJson<{ namespaces: string[] }>(fromCli, 'kopf-gen.json').namespaces).toEqual(['team-c', 'team-d']);
  });
});
