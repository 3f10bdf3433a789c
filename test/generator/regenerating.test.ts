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
import * as detecting from '../../generator/detecting.js';
import * as generator from '../../generator/index.js';
import * as projects from '../../generator/projects.js';
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
    expect(io.stdout()).toContain('added sample object samples/gadget.yaml');
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
    expect(verbsOf(project, 'namespaced', '', 'configmaps')).toEqual(['get', 'list', 'patch', 'watch']);
    // An on-event handler that neither patches nor returns a value only observes (R-SEC-402).
    expect(verbsOf(project, 'cluster', '', 'nodes')).toEqual(['get', 'list', 'watch']);
    expect(verbsOf(project, 'cluster', '', 'nodes/status')).toEqual([]);
    expect(verbsOf(project, 'namespaced', 'example.com', 'widgets')).toEqual(['get', 'list', 'patch', 'watch']);
    expect(io.stdout()).toContain('deploy/rbac.yaml covers the built-in resources the code uses: configmaps, nodes');
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

/** The modules of a project's src/ (outside src/generated/) that refer to each generated module's descriptor. */
function registrations(project: string): Record<string, string[]> {
  const files = ps.snapshot(path.join(project, 'src'));
  const modules = Object.entries(files)
    .filter(([file]) => !file.startsWith('generated/') && file.endsWith('.ts'))
    .map(([file, text]) => ({ path: `src/${file}`, text }));
  const manifest = JSON.parse(files['generated/manifest.json']!) as { index: Record<string, { descriptor: string; namespace: string; flat: boolean }> };
  const exports = Object.entries(manifest.index).map(([fileName, record]) => ({ fileName, ...record }));
  const found = detecting.scanReferences(modules, exports).referenced;
  return Object.fromEntries(exports.map((entry) => [entry.fileName, [...new Set((found.get(entry.fileName) ?? []).map((place) => place.path))]]));
}

/** The project's files outside what the generator owns. */
function userFiles(project: string): Record<string, string> {
  return Object.fromEntries(Object.entries(ps.snapshot(project)).filter(([file]) => !projects.isGeneratedFile(file)));
}

/** The line (from 1) of the first line of a file's text that contains `needle`. */
function lineOf(text: string, needle: string): number {
  return text.split('\n').findIndex((line) => line.includes(needle)) + 1;
}

describe('regeneration never hides or destroys user code', () => {
  const v1 = ps.widgetCrd({ size: { type: 'integer' } });

  it('a version rename adds no stub, keeps the index names user code imports, and names each import to edit', async () => {
    const project = path.join(root, 'renamed');
    await generator.init({ crds: [ps.write(path.join(root, 'inputs/renamed/widgets.yaml'), v1)], out: project });
    ps.write(
      path.join(project, 'src/lib/listing.ts'),
      [
        "import { Widgets, type Widget } from '../generated/index.js';",
        "import { WidgetV1 } from '../generated/index.js';",
        '',
        'export const descriptors = [Widgets, WidgetV1.Widgets];',
        'export function sizeOf(widget: Widget): number | undefined {',
        '  return widget.spec?.size;',
        '}',
        '',
      ].join('\n'),
    );
    fs.writeFileSync(path.join(project, 'crds/widgets.yaml'), v1.replace(/name: v1\b/, 'name: v2'));
    const before = userFiles(project);
    const io = ps.capture();
    expect(await cli.main(['generate', '--project', project], io)).toBe(0);
    // Nothing of the user's changes; a sample of v2 is added beside the sample of v1 (which is gone).
    expect(userFiles(project)).toEqual({ ...before, 'samples/widget.v2.yaml': expect.any(String) });
    expect(fs.readdirSync(path.join(project, 'src/handlers'))).toEqual(['widget.ts']);
    expect(io.stdout()).not.toContain('added handler stub');
    expect(io.stdout()).toContain('- widgets.example.com/v1: version removed');
    const warnings = io
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('warning: '));
    // Every import of the old module (the stub's, and the generated test's if it has one) is named.
    const importers = Object.entries(before).filter(([file, text]) => /^(src|test)\//.test(file) && text.includes('widgets.example.com.v1.js'));
    expect(importers.map(([file]) => file)).toContain('src/handlers/widget.ts');
    expect(importers.map(([file]) => file)).toContain('test/widget.test.ts');
    for (const [file, text] of importers) {
      const specifier = /["']([^"']*widgets\.example\.com\.v1\.js)["']/.exec(text)![1];
      expect(warnings).toContainEqual(
        expect.stringContaining(`${file}:${lineOf(text, 'widgets.example.com.v1.js')}: imports "${specifier}", which is no longer generated`),
      );
    }
    expect(warnings).toContainEqual(
      expect.stringContaining('src/lib/listing.ts:2: imports WidgetV1 from "../generated/index.js", which src/generated/index.ts no longer exports'),
    );
    expect(warnings.join('\n')).toContain('widgets.example.com is now generated as src/generated/widgets.example.com.v2.ts (index: Widgets or WidgetV2)');
    expect(warnings.some((line) => line.includes('listing.ts:1'))).toBe(false);
    const diagnostics = ps.typecheckProject(project);
    expect(diagnostics.length).toBeGreaterThan(0);
    const warned = warnings.map((line) => /^warning: ([^:]+:\d+):/.exec(line)?.[1]);
    for (const diagnostic of diagnostics) expect(warned, diagnostic).toContain(/^([^:]+:\d+):/.exec(diagnostic)?.[1]);
  }, 300_000);

  it('a handler moved out of src/handlers/ (imported by main.ts, or re-exported) gets no second stub', async () => {
    const project = path.join(root, 'relocated');
    await generator.init({ crds: [ps.write(path.join(root, 'inputs/relocated/widgets.yaml'), v1)], out: project });
    const handler = fs.readFileSync(path.join(project, 'src/handlers/widget.ts'), 'utf8');
    fs.rmSync(path.join(project, 'src/handlers'), { recursive: true });
    ps.write(path.join(project, 'src/operator/widget.ts'), handler);
    fs.appendFileSync(path.join(project, 'src/main.ts'), "import './operator/widget.js';\n");
    const before = userFiles(project);
    const report = await generator.generate({ project });
    expect(report.stubsAdded).toEqual([]);
    expect(userFiles(project)).toEqual(before);
    expect(registrations(project)).toEqual({ 'widgets.example.com.v1.ts': ['src/operator/widget.ts'] });
    expect(ps.typecheckProject(project)).toEqual([]);

    // Through a module of the user's that re-exports the descriptor.
    ps.write(path.join(project, 'src/kinds.ts'), "export { Widgets } from './generated/index.js';\n");
    fs.writeFileSync(
      path.join(project, 'src/operator/widget.ts'),
      handler.replace(/from "\.\.\/generated\/widgets\.example\.com\.v1\.js"/, 'from "../kinds.js"'),
    );
    expect(fs.readFileSync(path.join(project, 'src/operator/widget.ts'), 'utf8')).toContain('"../kinds.js"');
    expect((await generator.generate({ project })).stubsAdded).toEqual([]);
    expect(fs.existsSync(path.join(project, 'src/handlers'))).toBe(false);
    expect(ps.typecheckProject(project)).toEqual([]);
  }, 300_000);

  describe('init --force over an edited project', () => {
    const project = path.join(root, 'forced');
    const crdFile = path.join(root, 'inputs/forced/widgets.yaml');

    it('regenerates the generated files and leaves every file of the user byte-identical, listing them', async () => {
      await generator.init({ crds: [ps.write(crdFile, v1)], out: project, namespaces: ['team-a'] });
      fs.appendFileSync(path.join(project, 'src/handlers/widget.ts'), '// my handler\n');
      fs.appendFileSync(path.join(project, 'test/widget.test.ts'), '// my test\n');
      fs.appendFileSync(path.join(project, 'README.md'), '\nMy notes.\n');
      fs.appendFileSync(path.join(project, 'src/main.ts'), '// my main\n');
      const pkg = JSON.parse(fs.readFileSync(path.join(project, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
        dependencies: Record<string, string>;
      };
      pkg.scripts['lint'] = 'biome check .';
      pkg.dependencies['left-pad'] = '^1.3.0';
      fs.writeFileSync(path.join(project, 'package.json'), `${JSON.stringify(pkg, null, 4)}\n`);
      ps.write(path.join(project, 'src/lib/util.ts'), 'export const answer = 42;\n');
      ps.write(path.join(project, 'docs/notes.md'), '# notes\n');
      const rbac = fs.readFileSync(path.join(project, 'deploy/rbac.yaml'), 'utf8');
      fs.writeFileSync(path.join(project, 'deploy/rbac.yaml'), '# stale\n');
      ps.write(path.join(project, 'src/generated/leftover.ts'), 'export const leftover = 1;\n');
      const before = userFiles(project);

      const io = ps.capture();
      expect(await cli.main(['init', '--force', '--crd', crdFile, '--out', project], io)).toBe(0);
      expect(userFiles(project)).toEqual(before);
      expect(fs.readFileSync(path.join(project, 'deploy/rbac.yaml'), 'utf8')).toBe(rbac);
      expect(fs.existsSync(path.join(project, 'src/generated/leftover.ts'))).toBe(false);
      expect(fs.existsSync(path.join(project, 'src/generated/widgets.example.com.v1.ts'))).toBe(true);
      expect((JSON.parse(fs.readFileSync(path.join(project, 'kopf-gen.json'), 'utf8')) as { namespaces: string[] }).namespaces).toEqual(['team-a']);
      const printed = io.stdout();
      expect(printed).not.toContain('added handler stub');
      const kept = /left alone \(yours, not generated\): (.*)/.exec(printed)?.[1]?.split(', ') ?? [];
      for (const file of [
        'src/handlers/widget.ts',
        'test/widget.test.ts',
        'src/main.ts',
        'README.md',
        'package.json',
        'Dockerfile',
        'deploy/deployment.yaml',
        'crds/widgets.yaml',
      ]) {
        expect(kept, file).toContain(file);
      }
      expect(registrations(project)).toEqual({ 'widgets.example.com.v1.ts': ['src/handlers/widget.ts'] });
      expect(ps.typecheckProject(project)).toEqual([]);
    }, 300_000);

    it("adds to package.json only the scripts and dependencies it lacks, keeping the user's", async () => {
      const pkg = JSON.parse(fs.readFileSync(path.join(project, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
        devDependencies: Record<string, string>;
      };
      delete pkg.scripts['generate'];
      pkg.scripts['test'] = 'vitest run --reporter=dot';
      delete pkg.devDependencies['tsx'];
      fs.writeFileSync(path.join(project, 'package.json'), `${JSON.stringify(pkg, null, 4)}\n`);
      const report = await generator.init({ crds: [crdFile], out: project, force: true });
      const merged = JSON.parse(fs.readFileSync(path.join(project, 'package.json'), 'utf8')) as typeof pkg & { dependencies: Record<string, string> };
      expect(merged.scripts['generate']).toBe('kopf-gen generate');
      expect(merged.scripts['test']).toBe('vitest run --reporter=dot');
      expect(merged.scripts['lint']).toBe('biome check .');
      expect(merged.dependencies['left-pad']).toBe('^1.3.0');
      expect(merged.devDependencies['tsx']).toBeDefined();
      expect(fs.readFileSync(path.join(project, 'package.json'), 'utf8')).toMatch(/^ {4}"name"/m);
      expect(report.written).toContain('package.json');
      expect(report.notes).toContainEqual(
        expect.stringContaining('package.json: added what the project needs and it lacked (scripts.generate, devDependencies.tsx)'),
      );
    });

    it('refuses a CRD whose copy in crds/ the user changed, writing nothing', async () => {
      fs.appendFileSync(path.join(project, 'crds/widgets.yaml'), '# edited\n');
      const snapshot = ps.snapshot(project);
      await expect(generator.init({ crds: [crdFile], out: project, force: true })).rejects.toMatchObject({
        code: 'would-overwrite',
        message: expect.stringContaining('crds/widgets.yaml exists with another content'),
      });
      expect(ps.snapshot(project)).toEqual(snapshot);
    });

    it('refuses a directory that is not a kopf-gen project but has files the generator would rewrite, writing nothing', async () => {
      const foreign = path.join(root, 'foreign');
      ps.write(path.join(foreign, 'deploy/rbac.yaml'), '# theirs\n');
      ps.write(path.join(foreign, 'package.json'), '{ "name": "theirs" }\n');
      const snapshot = ps.snapshot(foreign);
      await expect(generator.init({ crds: [crdFile], out: foreign, force: true })).rejects.toMatchObject({
        code: 'would-overwrite',
        message: expect.stringContaining('deploy/rbac.yaml'),
      });
      expect(ps.snapshot(foreign)).toEqual(snapshot);
      fs.rmSync(path.join(foreign, 'deploy/rbac.yaml'));
      const report = await generator.init({ crds: [crdFile], out: foreign, force: true });
      expect(report.written).toContain('deploy/rbac.yaml');
      expect(report.written).toContain('package.json');
      const merged = JSON.parse(fs.readFileSync(path.join(foreign, 'package.json'), 'utf8')) as { name: string; scripts: Record<string, string> };
      expect(merged.name).toBe('theirs');
      expect(merged.scripts['generate']).toBe('kopf-gen generate');
    });
  });

  it('add of a kind with the same name in another group renames no existing export, names the new one deterministically, and reports it', async () => {
    const project = path.join(root, 'namesakes');
    await generator.init({ crds: [ps.write(path.join(root, 'inputs/namesakes/widgets.yaml'), v1)], out: project });
    ps.write(
      path.join(project, 'src/lib/listing.ts'),
      [
        "import { Widgets, WidgetV1, type Widget, type WidgetSpec } from '../generated/index.js';",
        '',
        'export const descriptors = [Widgets, WidgetV1.Widgets];',
        "export const apiVersion: Widget['apiVersion'] = 'example.com/v1';",
        'export const spec: WidgetSpec = { size: 1 };',
        '',
      ].join('\n'),
    );
    const indexBefore = fs.readFileSync(path.join(project, 'src/generated/index.ts'), 'utf8');
    const before = userFiles(project);
    // A file name that sorts first, so that the new CRD comes first in the model too.
    const acme = ps.write(path.join(root, 'inputs/namesakes/a-widgets.yaml'), v1.replace(/example\.com/g, 'acme.io'));
    const io = ps.capture();
    expect(await cli.main(['add', '--crd', acme, '--project', project], io)).toBe(0);
    const after = userFiles(project);
    for (const [file, text] of Object.entries(before)) expect(after[file], file).toBe(text);
    const index = fs.readFileSync(path.join(project, 'src/generated/index.ts'), 'utf8');
    for (const line of indexBefore.split('\n').filter((each) => each.startsWith('export'))) expect(index).toContain(line);
    expect(index).toContain('export * as WidgetV1AcmeIo from "./widgets.acme.io.v1.js";');
    expect(index).not.toContain('export * from "./widgets.acme.io.v1.js";');
    expect(io.stdout()).toMatch(
      /~ index: widgets\.acme\.io v1 is exported as WidgetV1AcmeIo \(WidgetV1 stays widgets\.example\.com's\), not at the top level \(Widget, [^)]+ stay widgets\.example\.com's\)/,
    );
    expect(io.stdout()).toContain('added handler stub src/handlers/widget.acme.io.ts');
    expect(registrations(project)).toEqual({
      'widgets.acme.io.v1.ts': ['src/handlers/widget.acme.io.ts'],
      'widgets.example.com.v1.ts': ['src/handlers/widget.ts', 'src/lib/listing.ts'],
    });
    expect(ps.typecheckProject(project, { tests: true })).toEqual([]);

    // The same names on the next generation: nothing to report.
    const again = await generator.generate({ project });
    expect(again.summary.exports).toEqual([]);
    expect(fs.readFileSync(path.join(project, 'src/generated/index.ts'), 'utf8')).toBe(index);
  }, 300_000);

  it('keeps the exports of a project whose manifest predates the record of the index, reading its index.ts', async () => {
    const project = path.join(root, 'older-namesakes');
    await generator.init({ crds: [ps.write(path.join(root, 'inputs/older-namesakes/widgets.yaml'), v1)], out: project });
    const manifestFile = path.join(project, 'src/generated/manifest.json');
    const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as Record<string, unknown>;
    delete manifest['index'];
    delete manifest['format'];
    fs.writeFileSync(manifestFile, JSON.stringify(manifest));
    const indexBefore = fs.readFileSync(path.join(project, 'src/generated/index.ts'), 'utf8');
    const acme = ps.write(path.join(root, 'inputs/older-namesakes/a-widgets.yaml'), v1.replace(/example\.com/g, 'acme.io'));
    await generator.add({ project, crds: [acme] });
    const index = fs.readFileSync(path.join(project, 'src/generated/index.ts'), 'utf8');
    for (const line of indexBefore.split('\n').filter((each) => each.startsWith('export'))) expect(index).toContain(line);
    expect(index).toContain('export * as WidgetV1AcmeIo from "./widgets.acme.io.v1.js";');
  });
});
