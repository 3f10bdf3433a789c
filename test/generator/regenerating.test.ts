/**
 * `generate` and `add` on an existing project: user code and the other written-once files are
 * never modified, src/generated/ is rewritten completely, the change summary names what changed,
 * stubs appear only for kinds without handlers, a CRD change surfaces as a type error in the
 * user's handler, deploy/rbac.yaml follows the built-in kinds the handlers start watching, and the
 * namespaces chosen at init stay bound.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import * as cli from '../../generator/cli.js';
import * as generator from '../../generator/index.js';
import * as ps from './projects-support.js';

const root = ps.tempDir();
afterAll(() => ps.cleanup(root));

const before = ps.widgetCrd({ size: { type: 'integer' }, color: { type: 'string' }, name: { type: 'string' } }, { required: ['size'] });
const after = ps.widgetCrd({ size: { type: 'string' }, shape: { type: 'string' }, name: { type: 'string' } }, { required: ['size', 'name'] });
const USER_CODE = `
// my own code: keep me
on.field(Widgets, 'spec.size', async function doubleSize({ new: size, logger }) {
  const doubled: number = (size ?? 0) * 2;
  logger.info(\`doubled: \${doubled}\`);
});
`;

describe('regeneration after a CRD change', () => {
  const project = path.join(root, 'widgets');
  const handlerFile = path.join(project, 'src/handlers/widget.ts');
  let edited = '';

  it('starts from a project whose edited handler type-checks', async () => {
    await generator.init({ crds: [ps.write(path.join(root, 'inputs/widgets.yaml'), before)], out: project });
    edited = `${fs.readFileSync(handlerFile, 'utf8')}${USER_CODE}`;
    fs.writeFileSync(handlerFile, edited);
    expect(ps.typecheckProject(project)).toEqual([]);
  }, 300_000);

  it('keeps user code, rewrites src/generated/, summarises the changes, and the handler no longer type-checks', async () => {
    fs.writeFileSync(path.join(project, 'crds/widgets.yaml'), after);
    const stale = ps.write(path.join(project, 'src/generated/leftover.ts'), 'export const leftover = 1;\n');
    const userFiles = [
      'src/main.ts',
      'test/widget.test.ts',
      'deploy/deployment.yaml',
      'README.md',
      'package.json',
      'tsconfig.json',
      'tsconfig.build.json',
      'Dockerfile',
      '.dockerignore',
      '.gitignore',
    ];
    const kept = Object.fromEntries(userFiles.map((file) => [file, fs.readFileSync(path.join(project, file), 'utf8')]));
    const io = ps.capture();
    expect(await cli.main(['generate', '--project', project], io)).toBe(0);
    expect(fs.readFileSync(handlerFile, 'utf8')).toBe(edited);
    for (const file of userFiles) expect(fs.readFileSync(path.join(project, file), 'utf8'), file).toBe(kept[file]);
    expect(fs.existsSync(stale)).toBe(false);
    const module = fs.readFileSync(path.join(project, 'src/generated/widgets.example.com.v1.ts'), 'utf8');
    expect(module).toContain('shape?: string;');
    expect(module).not.toContain('color');
    const printed = io.stdout();
    expect(printed).toContain('+ Widget v1: spec.shape (string, optional)');
    expect(printed).toContain('- Widget v1: spec.color (was string, optional)');
    expect(printed).toContain('~ Widget v1: spec.size: type integer, required → string, required');
    expect(printed).toContain('~ Widget v1: spec.name: optional → required');
    expect(printed).toContain('npm run typecheck');
    expect(printed).not.toContain('added handler stub');
    const diagnostics = ps.typecheckProject(project);
    expect(diagnostics.length).toBeGreaterThan(0);
    expect(diagnostics.every((line) => line.startsWith('src/handlers/widget.ts:'))).toBe(true);
    expect(diagnostics.join('\n')).toMatch(/arithmetic operation|not assignable to type 'number'/);
  }, 300_000);

  it('reports no changes when nothing changed', async () => {
    const report = await generator.generate({ project });
    expect(generator.renderSummary(report.summary)).toEqual([]);
    expect(report.stubsAdded).toEqual([]);
    expect(fs.readFileSync(handlerFile, 'utf8')).toBe(edited);
  });
});

describe('stubs only for kinds without handlers', () => {
  it('adds no stub when another module registers handlers for the kind, even through the index', async () => {
    const project = path.join(root, 'moved');
    await generator.init({ crds: [ps.write(path.join(root, 'inputs/widgets.yaml'), before)], out: project });
    fs.rmSync(path.join(project, 'src/handlers/widget.ts'));
    ps.write(
      path.join(project, 'src/handlers/all.ts'),
      [
        "import { on } from 'kopf-gen/runtime';",
        "import { Widgets as W } from '../generated/index.js';",
        'on.create(W, async function created({ logger }) { logger.info("hi"); });',
        '',
      ].join('\n'),
    );
    const report = await generator.generate({ project });
    expect(report.stubsAdded).toEqual([]);
    expect(fs.existsSync(path.join(project, 'src/handlers/widget.ts'))).toBe(false);
    expect(fs.readFileSync(path.join(project, 'src/generated/handlers.ts'), 'utf8')).toContain('import "../handlers/all.js";');
  });

  it('adds a stub when no module refers to the kind', async () => {
    const project = path.join(root, 'deleted');
    await generator.init({ crds: [ps.write(path.join(root, 'inputs/widgets.yaml'), before)], out: project });
    fs.rmSync(path.join(project, 'src/handlers/widget.ts'));
    const report = await generator.generate({ project });
    expect(report.stubsAdded).toEqual(['src/handlers/widget.ts']);
  });
});

describe('add', () => {
  it('copies a CRD into crds/, generates its types and stub, and leaves existing handlers alone', async () => {
    const project = path.join(root, 'growing');
    await generator.init({ crds: [ps.write(path.join(root, 'inputs/widgets.yaml'), before)], out: project });
    const handler = path.join(project, 'src/handlers/widget.ts');
    fs.appendFileSync(handler, '// edited\n');
    const edited = fs.readFileSync(handler, 'utf8');
    const gadgets = ps.write(path.join(root, 'inputs/gadgets.yaml'), ps.widgetCrd({ color: { type: 'string' } }, { kind: 'Gadget' }));
    const io = ps.capture();
    expect(await cli.main(['add', '--crd', gadgets, '--project', project], io)).toBe(0);
    expect(io.stdout()).toContain('+ gadgets.example.com: new CRD');
    expect(io.stdout()).toContain('added handler stub src/handlers/gadget.ts');
    expect(fs.readFileSync(handler, 'utf8')).toBe(edited);
    expect(fs.readdirSync(path.join(project, 'crds')).sort()).toEqual(['gadgets.yaml', 'widgets.yaml']);
    expect(fs.existsSync(path.join(project, 'src/generated/gadgets.example.com.v1.ts'))).toBe(true);
    expect(fs.existsSync(path.join(project, 'test/gadget.test.ts'))).toBe(true);
    const config = JSON.parse(fs.readFileSync(path.join(project, 'kopf-gen.json'), 'utf8')) as { crds: string[] };
    expect(config.crds).toEqual(['crds/gadgets.yaml', 'crds/widgets.yaml']);
    expect(fs.readFileSync(path.join(project, 'deploy/rbac.yaml'), 'utf8')).toContain('"gadgets"');
    expect(ps.typecheckProject(project)).toEqual([]);
  }, 300_000);

  it('refuses a CRD the project already has, writing nothing', async () => {
    const project = path.join(root, 'twice');
    const widgets = ps.write(path.join(root, 'inputs/widgets.yaml'), before);
    await generator.init({ crds: [widgets], out: project });
    const snapshot = ps.snapshot(project);
    await expect(generator.add({ project, crds: [widgets] })).rejects.toMatchObject({ code: 'duplicate-crd' });
    expect(ps.snapshot(project)).toEqual(snapshot);
  });
});

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}
interface RbacDocument {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Rule[];
}

function rbacOf(project: string): RbacDocument[] {
  return yaml.parseAllDocuments(fs.readFileSync(path.join(project, 'deploy/rbac.yaml'), 'utf8')).map((document) => document.toJS() as RbacDocument);
}

/** The verbs a ClusterRole of the project (`-cluster` or `-namespaced`) grants on a resource. */
function verbsOf(project: string, role: 'cluster' | 'namespaced', group: string, resource: string): string[] {
  const rules = rbacOf(project).find((document) => document.kind === 'ClusterRole' && document.metadata.name.endsWith(`-${role}`))?.rules ?? [];
  return rules
    .filter((rule) => rule.apiGroups.includes(group) && rule.resources.includes(resource))
    .flatMap((rule) => rule.verbs)
    .sort();
}

describe('RBAC for the built-in kinds the handlers watch', () => {
  const project = path.join(root, 'builtins');
  const configMaps = [
    "import { builtins, on } from 'kopf-gen/runtime';",
    '',
    'on.create(builtins.ConfigMaps, async function configMapCreated({ name, logger }) {',
    '  logger.info(`config map ${name}`);',
    '});',
    '',
  ].join('\n');

  it('has no rules for built-in kinds while no handler watches one', async () => {
    await generator.init({ crds: [ps.write(path.join(root, 'inputs/widgets.yaml'), before)], out: project });
    expect(verbsOf(project, 'namespaced', '', 'configmaps')).toEqual([]);
    expect(verbsOf(project, 'cluster', '', 'nodes')).toEqual([]);
  });

  it('gains rules after a handler starts watching builtins.ConfigMaps and `generate` runs, leaving user files alone', async () => {
    ps.write(path.join(project, 'src/handlers/config-maps.ts'), configMaps);
    ps.write(path.join(project, 'src/lib/nodes.ts'), "import * as kopf from 'kopf-gen/runtime';\nkopf.on.event('nodes', function nodeSeen() {});\n");
    const userFiles = Object.entries(ps.snapshot(project)).filter(
      ([file]) => !file.startsWith('src/generated/') && file !== 'deploy/rbac.yaml' && file !== 'kopf-gen.json',
    );
    const io = ps.capture();
    expect(await cli.main(['generate', '--project', project], io)).toBe(0);
    expect(verbsOf(project, 'namespaced', '', 'configmaps')).toEqual(['list', 'patch', 'watch']);
    expect(verbsOf(project, 'cluster', '', 'nodes')).toEqual(['list', 'patch', 'watch']);
    expect(verbsOf(project, 'cluster', '', 'nodes/status')).toEqual(['patch']);
    expect(verbsOf(project, 'namespaced', 'example.com', 'widgets')).toEqual(['list', 'patch', 'watch']);
    expect(io.stdout()).toContain('deploy/rbac.yaml covers the built-in resources the handlers watch: configmaps, nodes');
    const after = ps.snapshot(project);
    for (const [file, text] of userFiles) expect(after[file], file).toBe(text);
    expect(after['src/generated/handlers.ts']).toContain('import "../handlers/config-maps.js";');
    expect(ps.typecheckProject(project)).toEqual([]);
  }, 300_000);

  it('loses the rules when the handler goes', async () => {
    fs.rmSync(path.join(project, 'src/handlers/config-maps.ts'));
    const report = await generator.generate({ project });
    expect(report.builtins).toEqual(['nodes']);
    expect(verbsOf(project, 'namespaced', '', 'configmaps')).toEqual([]);
  });
});

describe('a project for chosen namespaces, regenerated', () => {
  it('keeps binding the RBAC in the namespaces of kopf-gen.json', async () => {
    const project = path.join(root, 'scoped');
    await generator.init({ crds: [ps.write(path.join(root, 'inputs/widgets.yaml'), before)], out: project, namespaces: ['team-a'] });
    const initial = fs.readFileSync(path.join(project, 'deploy/rbac.yaml'), 'utf8');
    fs.writeFileSync(path.join(project, 'deploy/rbac.yaml'), '# stale\n');
    await generator.generate({ project });
    expect(fs.readFileSync(path.join(project, 'deploy/rbac.yaml'), 'utf8')).toBe(initial);
    const config = JSON.parse(fs.readFileSync(path.join(project, 'kopf-gen.json'), 'utf8')) as { namespaces: string[] };
    expect(config.namespaces).toEqual(['team-a']);

    config.namespaces = ['team-a', 'team-b'];
    fs.writeFileSync(path.join(project, 'kopf-gen.json'), JSON.stringify(config));
    await generator.generate({ project });
    const bindings = rbacOf(project).filter((document) => document.kind === 'RoleBinding');
    expect(bindings.map((binding) => binding.metadata.namespace)).toEqual(['team-a', 'team-b']);
  });

  it('refuses a kopf-gen.json with a bad namespace, writing nothing', async () => {
    const project = path.join(root, 'bad-config');
    await generator.init({ crds: [ps.write(path.join(root, 'inputs/widgets.yaml'), before)], out: project });
    const config = JSON.parse(fs.readFileSync(path.join(project, 'kopf-gen.json'), 'utf8')) as { namespaces: string[] };
    config.namespaces = ['Team A'];
    fs.writeFileSync(path.join(project, 'kopf-gen.json'), JSON.stringify(config));
    const snapshot = ps.snapshot(project);
    await expect(generator.generate({ project })).rejects.toMatchObject({ code: 'invalid-project', message: expect.stringContaining('"Team A"') });
    expect(ps.snapshot(project)).toEqual(snapshot);
  });

  it('treats a kopf-gen.json without "namespaces" (an older project) as serving all namespaces', async () => {
    const project = path.join(root, 'older');
    await generator.init({ crds: [ps.write(path.join(root, 'inputs/widgets.yaml'), before)], out: project });
    const config = JSON.parse(fs.readFileSync(path.join(project, 'kopf-gen.json'), 'utf8')) as { namespaces?: string[] };
    delete config.namespaces;
    fs.writeFileSync(path.join(project, 'kopf-gen.json'), JSON.stringify(config));
    await generator.generate({ project });
    expect(
      rbacOf(project)
        .filter((document) => document.kind === 'ClusterRoleBinding')
        .map((binding) => binding.metadata.name),
    ).toEqual(['older-cluster', 'older-namespaced']);
    expect((JSON.parse(fs.readFileSync(path.join(project, 'kopf-gen.json'), 'utf8')) as { namespaces: string[] }).namespaces).toEqual([]);
  });
});
