/**
 * `init` end to end: every CRD of the corpus becomes a project whose code type-checks against this
 * checkout's runtime; the project's files (package.json, tsconfig, RBAC, stubs, tests) say what the
 * issue asks; a non-empty output directory is refused without --force; the status-pruning warning.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import * as generator from '../../generator/index.js';
import * as support from './support.js';
import * as ps from './projects-support.js';

const corpus = support.corpusDirectory();
const corpusFiles = fs.readdirSync(corpus).filter((name) => name.endsWith('.yaml')).sort();
const root = ps.tempDir();
afterAll(() => ps.cleanup(root));

interface Rule { apiGroups: string[]; resources: string[]; verbs: string[] }

function rulesOf(project: string): { cluster: Rule[]; namespaced: Rule[]; kinds: string[] } {
  const documents = yaml.parseAllDocuments(fs.readFileSync(path.join(project, 'deploy/rbac.yaml'), 'utf8')).map((document) => document.toJS() as { kind: string; metadata: { name: string }; rules?: Rule[] });
  const roles = documents.filter((document) => document.kind === 'ClusterRole');
  return {
    cluster: roles.find((role) => role.metadata.name.endsWith('-cluster'))?.rules ?? [],
    namespaced: roles.find((role) => role.metadata.name.endsWith('-namespaced'))?.rules ?? [],
    kinds: documents.map((document) => document.kind),
  };
}

function allows(rules: readonly Rule[], group: string, resource: string, verbs: readonly string[]): boolean {
  return verbs.every((verb) => rules.some((rule) => rule.apiGroups.includes(group) && rule.resources.includes(resource) && rule.verbs.includes(verb)));
}

describe('init over the CRD corpus', () => {
  const projects = new Map<string, string>();

  it.each(corpusFiles)('%s becomes a project with a stub and a test per CRD', async (name) => {
    const out = path.join(root, name.replace(/\.yaml$/, ''));
    const report = await generator.init({ crds: [path.join(corpus, name)], out });
    projects.set(name, out);
    const files = ps.snapshot(out);
    const { model } = support.generate([{ path: name, text: fs.readFileSync(path.join(corpus, name), 'utf8') }]);
    const served = model.crds.filter((crd) => crd.versions.length > 0);
    expect(report.stubsAdded).toHaveLength(served.length);
    expect(Object.keys(files).filter((file) => /^test\/.*\.test\.ts$/.test(file))).toHaveLength(served.length);
    const modules = Object.keys(files).filter((file) => file.startsWith('src/generated/') && /\.v[^/]*\.ts$/.test(file));
    expect(modules).toHaveLength(served.reduce((count, crd) => count + crd.versions.length, 0));
    for (const file of ['package.json', 'tsconfig.json', 'kopf-gen.json', '.gitignore', 'Dockerfile', 'README.md', 'src/main.ts',
      'src/generated/index.ts', 'src/generated/handlers.ts', 'deploy/rbac.yaml', 'deploy/deployment.yaml', `crds/${name}`]) {
      expect(files, file).toHaveProperty([file]);
    }
    for (const module of modules) expect(files['src/generated/index.ts']).toContain(`from "./${path.posix.basename(module).replace(/\.ts$/, '.js')}"`);
    const rules = rulesOf(out);
    for (const crd of served) {
      const scoped = crd.versions[0]!.namespaced ? rules.namespaced : rules.cluster;
      expect(allows(scoped, crd.group, crd.plural, ['list', 'watch', 'patch']), crd.crdName).toBe(true);
    }
  });

  it('type-checks every generated project (generated code and handler stubs) against the runtime', { timeout: 600_000 }, () => {
    expect(projects.size).toBe(corpusFiles.length);
    expect(ps.typecheckProjects([...projects.values()])).toEqual([]);
  });
});

describe('a new project', () => {
  const crdFile = ps.write(path.join(root, 'inputs/widgets.yaml'), ps.widgetCrd({ size: { type: 'integer', minimum: 3 }, color: { type: 'string', enum: ['red', 'blue'] } }, { required: ['size', 'color'] }));

  it('has the scripts, dependencies and strict settings the issue asks for', async () => {
    const out = path.join(root, 'scripts');
    await generator.init({ crds: [crdFile], out, name: 'My Operator' });
    const pkg = JSON.parse(fs.readFileSync(path.join(out, 'package.json'), 'utf8')) as { name: string; type: string; scripts: Record<string, string>; dependencies: Record<string, string>; devDependencies: Record<string, string> };
    expect(pkg.name).toBe('my-operator');
    expect(pkg.type).toBe('module');
    expect(pkg.scripts).toMatchObject({ operator: 'exec kopf-gen run src/main.ts', test: 'vitest run', generate: 'kopf-gen generate' });
    expect(pkg.scripts['typecheck']).toContain('tsc --noEmit');
    expect(pkg.dependencies['kopf-gen']).toBe(`file:${path.resolve(support.REPO_ROOT)}`);
    expect(pkg.devDependencies['typescript']).toMatch(/^~5\.9/);
    expect(pkg.devDependencies['vitest']).toMatch(/^\^3\./);
    expect(pkg.devDependencies).toHaveProperty('tsx');
    const tsconfig = JSON.parse(fs.readFileSync(path.join(out, 'tsconfig.json'), 'utf8')) as { compilerOptions: { strict: boolean } };
    expect(tsconfig.compilerOptions.strict).toBe(true);
    const config = JSON.parse(fs.readFileSync(path.join(out, 'kopf-gen.json'), 'utf8')) as { generatorVersion: string; crds: string[] };
    expect(config).toMatchObject({ generatorVersion: generator.GENERATOR_VERSION, crds: ['crds/widgets.yaml'] });
    expect(fs.readFileSync(path.join(out, 'src/main.ts'), 'utf8')).toContain("import './generated/handlers.js';");
    expect(fs.readFileSync(path.join(out, 'src/generated/handlers.ts'), 'utf8')).toContain('import "../handlers/widget.js";');
    const module = fs.readFileSync(path.join(out, 'src/generated/widgets.example.com.v1.ts'), 'utf8');
    expect(module).toContain('DO NOT EDIT');
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
    expect(test).toContain("from 'kopf-gen/testing'");
    expect(test).toContain('"spec": {"size":3,"color":"red"}');
    expect(ps.typecheckProject(out, { tests: true })).toEqual([]);
  }, 300_000);

  it('derives least-privilege RBAC from the CRDs plus what the runtime needs', async () => {
    const out = path.join(root, 'rbac');
    const cluster = ps.write(path.join(root, 'inputs/gizmos.yaml'), yaml.stringify(support.crd(undefined, { kind: 'Gizmo', scope: 'Cluster' })));
    await generator.init({ crds: [crdFile, cluster], out });
    const rules = rulesOf(out);
    expect(rules.kinds).toEqual(['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'ClusterRole', 'ClusterRoleBinding']);
    expect(allows(rules.namespaced, 'example.com', 'widgets', ['list', 'watch', 'patch'])).toBe(true);
    expect(allows(rules.namespaced, 'example.com', 'widgets/status', ['patch'])).toBe(true);
    expect(allows(rules.cluster, 'example.com', 'gizmos', ['list', 'watch', 'patch'])).toBe(true);
    expect(allows(rules.namespaced, 'example.com', 'widgets', ['delete'])).toBe(false);
    expect(allows(rules.namespaced, '', 'events', ['create'])).toBe(true);
    expect(allows(rules.cluster, '', 'namespaces', ['list', 'watch'])).toBe(true);
    expect(allows(rules.cluster, 'apiextensions.k8s.io', 'customresourcedefinitions', ['list', 'watch'])).toBe(true);
    expect(allows(rules.cluster, 'kopf.dev', 'clusterkopfpeerings', ['get', 'list', 'watch', 'patch'])).toBe(true);
    expect(allows(rules.namespaced, 'kopf.dev', 'kopfpeerings', ['get', 'list', 'watch', 'patch'])).toBe(true);
    const deployment = yaml.parse(fs.readFileSync(path.join(out, 'deploy/deployment.yaml'), 'utf8')) as { spec: { strategy: { type: string }; template: { spec: { serviceAccountName: string; containers: { livenessProbe?: unknown }[] } } } };
    expect(deployment.spec.strategy.type).toBe('Recreate');
    expect(deployment.spec.template.spec.serviceAccountName).toBe('rbac');
    expect(deployment.spec.template.spec.containers[0]!.livenessProbe).toBeDefined();
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

  it('P-1 warns when the status schema would prune handler results, naming the CRD and the fix', async () => {
    const pruning = await generator.init({ crds: [crdFile], out: path.join(root, 'pruning') });
    expect(pruning.warnings).toHaveLength(1);
    expect(pruning.warnings[0]).toContain('widgets.example.com');
    expect(pruning.warnings[0]).toContain('x-kubernetes-preserve-unknown-fields: true');
    const open = ps.write(path.join(root, 'inputs/open.yaml'), ps.widgetCrd({ size: { type: 'integer' } }, { status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }));
    const kept = await generator.init({ crds: [open], out: path.join(root, 'kept') });
    expect(kept.warnings).toEqual([]);
    const handler = fs.readFileSync(path.join(root, 'pruning/src/handlers/widget.ts'), 'utf8');
    expect(handler).toContain('prunes unknown fields');
    expect(fs.readFileSync(path.join(root, 'kept/src/handlers/widget.ts'), 'utf8')).not.toContain('prunes unknown fields');
  });
});
