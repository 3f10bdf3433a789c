/**
 * Reconcile stubs (`kopf-gen init --handlers reconcile`, `"handlers"` in kopf-gen.json): the flag
 * and the config key, the refusal of a bad value with nothing written, the stub (an `on.reconcile`
 * that owns Deployments, creates its child with `adopt()` and the client, reports its readiness
 * through `patch`) and its test (R-TEST-501), where the stub writes for each shape of status
 * schema, `generate` and `add` writing the same kind of stub for kinds added later, and user files
 * left alone. Every generated reconcile project type-checks against this checkout's runtime.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import * as cli from '../../generator/cli.js';
import * as generator from '../../generator/index.js';
import * as ps from './projects-support.js';
import * as support from './support.js';

const root = ps.tempDir('kopf-gen-reconcile-');
afterAll(() => ps.cleanup(root));

/** A CRD file (example.com/v1) of `kind` with the given status schema (none: no status). */
function crdFile(kind: string, status?: Record<string, unknown>, scope: 'Namespaced' | 'Cluster' = 'Namespaced'): string {
  const spec = { type: 'object', properties: { size: { type: 'integer' } } };
  const rootSchema = { type: 'object', properties: { spec, ...(status ? { status } : {}) } };
  return ps.write(path.join(root, 'inputs', `${kind.toLowerCase()}s.yaml`), yaml.stringify(support.crd(undefined, { kind, root: rootSchema, scope })));
}

const widgets = crdFile('Widget', { type: 'object', properties: { phase: { type: 'string', enum: ['Pending', 'Ready'] }, message: { type: 'string' } } });
const gizmos = crdFile('Gizmo', { type: 'object', properties: { count: { type: 'integer' } } }, 'Cluster');
const flags = crdFile('Flag', { type: 'object', properties: { ok: { type: 'boolean' } } });
const opens = crdFile('Open', { type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
const plains = crdFile('Plain');

const read = (project: string, file: string): string => fs.readFileSync(path.join(project, file), 'utf8');
const config = (project: string): Record<string, unknown> => JSON.parse(read(project, 'kopf-gen.json')) as Record<string, unknown>;

/** Whether deploy/rbac.yaml grants `verbs` on `resource` of `group` in some rule. */
function grants(project: string, group: string, resource: string, verbs: readonly string[]): boolean {
  const rules = yaml
    .parseAllDocuments(read(project, 'deploy/rbac.yaml'))
    .map((document) => document.toJS() as { rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[] })
    .flatMap((document) => document.rules ?? []);
  return verbs.every((verb) => rules.some((rule) => rule.apiGroups.includes(group) && rule.resources.includes(resource) && rule.verbs.includes(verb)));
}

describe('init --handlers reconcile', () => {
  const project = path.join(root, 'widgets');

  it('writes an on.reconcile stub that owns Deployments, creates its child with adopt() and the client, and reports readiness through patch', async () => {
    const io = ps.capture();
    expect(await cli.main(['init', '--crd', widgets, '--out', project, '--handlers', 'reconcile'], io), io.stderr()).toBe(0);
    const stub = read(project, 'src/handlers/widget.ts');
    expect(stub).toContain("import { adopt, builtins, on, type Deployment } from 'kopf-gen/runtime';");
    expect(stub).toContain(
      'on.reconcile(Widgets, { owns: [builtins.Deployments] }, async function reconcileWidget({ body, name, uid, owned: [deployments], client, patch, logger }) {',
    );
    expect(stub).toContain('adopt(child, body);');
    expect(stub).toContain('deployment = await client.create(builtins.Deployments, child);');
    // The first status field that takes any string (`phase` has an enum): the stub writes "1/1 ready" there.
    expect(stub).toContain('patch.status.message = `${ready}/${wanted} ready`;');
    expect(stub).toMatch(/\/\/ +return \{ requeueAfter: 60 \};/);
    expect(stub).not.toMatch(/on\.(create|update|delete|resume)\(/);
    expect(config(project)['handlers']).toBe('reconcile');
    // The stub names builtins.Deployments: the first RBAC already watches them.
    expect(grants(project, 'apps', 'deployments', ['get', 'list', 'watch'])).toBe(true);
  });

  it('R-TEST-501: writes a test that waits for the Deployment, plays its controller, and waits for the report — in-process, no sleeps', () => {
    const test = read(project, 'test/widget.test.ts');
    expect(test).toContain("import { DevCluster, KopfRunner, VirtualClock } from 'kopf-gen/testing';");
    expect(test).toContain("new KopfRunner(['run', ...SCOPE, 'src/main.ts'], { kubeconfig: operatorKubeconfig, clock, timeout: 10 })");
    expect(test).toContain('client.watch(builtins.Deployments, { namespace: CHILD_NAMESPACE, resourceVersion: from, signal: creating })');
    expect(test).toContain('reference.controller === true && reference.uid === created.metadata?.uid');
    expect(test).toContain("{ namespace: CHILD_NAMESPACE, subresource: 'status' }");
    expect(test).toContain('const readiness = (object: Widget): unknown => object.status?.message;');
    expect(test).toContain('toBe("1/1 ready")');
    expect(test).toContain('const sample: WidgetInput = {');
    expect(test).not.toMatch(/spawn|setTimeout|setInterval|eventually/);
  });

  it('says in the README when to use reconcile and when cause handlers', () => {
    const readme = read(project, 'README.md');
    expect(readme).toContain('### Reconcile or cause handlers');
    expect(readme).toContain('This project was created with `--handlers reconcile`');
    expect(readme).toContain('docs/reconcile.md');
  });

  it('keeps the default: cause-handler stubs, and no "handlers" in kopf-gen.json', async () => {
    const plain = path.join(root, 'default');
    await generator.init({ crds: [widgets], out: plain });
    expect(read(plain, 'src/handlers/widget.ts')).toContain('on.create(Widgets, async function createWidget(');
    expect(read(plain, 'src/handlers/widget.ts')).not.toContain('on.reconcile(');
    expect(config(plain)).not.toHaveProperty('handlers');
    expect(read(plain, 'README.md')).toContain("The stubs are Kopf's cause handlers");
    const explicit = path.join(root, 'explicit-cause');
    await generator.init({ crds: [widgets], out: explicit, handlers: 'cause' });
    expect(read(explicit, 'src/handlers/widget.ts')).toBe(read(plain, 'src/handlers/widget.ts').replaceAll('"default"', '"explicit-cause"'));
    expect(config(explicit)).not.toHaveProperty('handlers');
  });

  it('refuses another value, naming the choices, with nothing written', async () => {
    const out = path.join(root, 'refused');
    const io = ps.capture();
    expect(await cli.main(['init', '--crd', widgets, '--out', out, '--handlers', 'reconciler'], io)).toBe(2);
    expect(io.stderr()).toContain('invalid kind of handler stubs "reconciler": the choices are "cause"');
    expect(io.stderr()).toContain('"reconcile"');
    expect(fs.existsSync(out)).toBe(false);
    await expect(generator.init({ crds: [widgets], out, handlers: 'Reconcile' })).rejects.toMatchObject({ code: 'invalid-handlers' });
    expect(fs.existsSync(out)).toBe(false);
  });
});

describe('where the reconcile stub reports readiness, by status schema', () => {
  const cases = [
    { crd: gizmos, stem: 'gizmo', write: 'patch.status.count = ready;', read: 'object.status?.count', expected: 'toBe(1)' },
    { crd: flags, stem: 'flag', write: 'patch.status.ok = ready >= wanted;', read: 'object.status?.ok', expected: 'toBe(true)' },
    { crd: opens, stem: 'open', write: 'patch.status["readyReplicas"] = ready;', read: 'object.status?.["readyReplicas"]', expected: 'toBe(1)' },
    {
      crd: plains,
      stem: 'plain',
      write: 'patch.metadata.annotations["example.com/ready-replicas"] = `${ready}/${wanted}`;',
      read: 'object.metadata?.annotations?.["example.com/ready-replicas"]',
      expected: 'toBe("1/1")',
    },
  ];
  const projects: string[] = [];

  it.each(cases)('$stem: $write', async ({ crd, stem, write, read: reading, expected }) => {
    const out = path.join(root, `shape-${stem}`);
    await generator.init({ crds: [crd], out, handlers: 'reconcile', namespaces: stem === 'gizmo' ? ['ops'] : [] });
    projects.push(out);
    expect(read(out, `src/handlers/${stem}.ts`)).toContain(write);
    expect(read(out, `test/${stem}.test.ts`)).toContain(`: unknown => ${reading};`);
    expect(read(out, `test/${stem}.test.ts`)).toContain(expected);
  });

  it("puts a cluster-scoped kind's Deployment into the first namespace the project serves", () => {
    expect(read(path.join(root, 'shape-gizmo'), 'src/handlers/gizmo.ts')).toContain('const CHILD_NAMESPACE = "ops";');
    expect(read(path.join(root, 'shape-gizmo'), 'src/handlers/gizmo.ts')).toContain('metadata: { name, namespace: CHILD_NAMESPACE },');
    expect(read(path.join(root, 'shape-gizmo'), 'test/gizmo.test.ts')).toContain('const CHILD_NAMESPACE = "ops";');
  });

  it('every generated reconcile project (stubs and tests) type-checks against the runtime', { timeout: 300_000 }, () => {
    expect(ps.typecheckProjects([path.join(root, 'widgets'), ...projects], { tests: true })).toEqual([]);
  });
});

describe("kinds added later get the project's kind of stub", () => {
  it("generate writes a reconcile stub for a new CRD in crds/, and leaves the user's stub and test alone", async () => {
    const project = path.join(root, 'later');
    await generator.init({ crds: [widgets], out: project, handlers: 'reconcile' });
    const mine = `${read(project, 'src/handlers/widget.ts')}\n// mine\n`;
    ps.write(path.join(project, 'src/handlers/widget.ts'), mine);
    ps.write(path.join(project, 'test/widget.test.ts'), '// my test\n');
    fs.copyFileSync(flags, path.join(project, 'crds/flags.yaml'));
    const report = await generator.generate({ project });
    expect(report.stubsAdded).toEqual(['src/handlers/flag.ts']);
    expect(read(project, 'src/handlers/flag.ts')).toContain('on.reconcile(Flags, { owns: [builtins.Deployments] }');
    expect(read(project, 'test/flag.test.ts')).toContain('markReady(client, deployment!)');
    expect(read(project, 'src/handlers/widget.ts')).toBe(mine);
    expect(read(project, 'test/widget.test.ts')).toBe('// my test\n');
    expect(config(project)['handlers']).toBe('reconcile');
  });

  it('add does the same; init --force keeps the project\'s "handlers" unless --handlers is given', async () => {
    const project = path.join(root, 'added');
    await generator.init({ crds: [widgets], out: project, handlers: 'reconcile' });
    await generator.add({ project, crds: [plains] });
    expect(read(project, 'src/handlers/plain.ts')).toContain('on.reconcile(Plains, ');
    await generator.init({ crds: [gizmos], out: project, force: true });
    expect(read(project, 'src/handlers/gizmo.ts')).toContain('on.reconcile(Gizmos, ');
    expect(config(project)['handlers']).toBe('reconcile');
  });

  it('a project without "handlers" gets cause stubs; a bad "handlers" is invalid-project, naming the choices', async () => {
    const project = path.join(root, 'configured');
    await generator.init({ crds: [widgets], out: project });
    fs.copyFileSync(flags, path.join(project, 'crds/flags.yaml'));
    await generator.generate({ project });
    expect(read(project, 'src/handlers/flag.ts')).toContain('on.create(Flags, ');
    const text = read(project, 'kopf-gen.json');
    ps.write(path.join(project, 'kopf-gen.json'), text.replace(/\n}\s*$/, ',\n  "handlers": "level"\n}\n'));
    const before = ps.snapshot(project);
    await expect(generator.generate({ project })).rejects.toMatchObject({ code: 'invalid-project', message: expect.stringContaining('"cause"') });
    ps.write(path.join(project, 'kopf-gen.json'), text.replace(/\n}\s*$/, ',\n  "handlers": 3\n}\n'));
    await expect(generator.generate({ project })).rejects.toMatchObject({ code: 'invalid-project', message: expect.stringContaining('"reconcile"') });
    ps.write(path.join(project, 'kopf-gen.json'), text.replace(/\n}\s*$/, ',\n  "handlers": "level"\n}\n'));
    expect(ps.snapshot(project)).toEqual(before);
  });
});
