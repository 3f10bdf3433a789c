/**
 * A version renamed in a CRD (`v1` becomes `v2`, with a new required `spec.ownerTeam`): the change
 * summary lists the new version's field changes against the version it replaced, not only "new
 * version"; and `samples/` that still names the gone version is reported — file, gone version,
 * the version that replaces it — with a fresh sample of the new version written beside it, the
 * old file left byte for byte as it was. The real kubectl confirms what the warning says: the old
 * sample is refused, the new one applied.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import * as cli from '../../generator/cli.js';
import * as fields from '../../generator/fields.js';
import * as generator from '../../generator/index.js';
import { startTestCluster, type TestCluster } from '../support/cluster.js';
import { requireKubectl } from '../support/kubectl.js';
import { run } from '../support/processes.js';
import * as ps from './projects-support.js';
import * as support from './support.js';

const root = ps.tempDir('kopf-gen-renames-');
afterAll(() => ps.cleanup(root));

/** The Widget CRD with one version of the given name and spec. */
function widgets(version: string, spec: Record<string, unknown>): string {
  const schema = { type: 'object', properties: { spec, status: { type: 'object', properties: { phase: { type: 'string' } } } } };
  return yaml.stringify(
    support.crd(undefined, { versions: [{ name: version, served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: schema } }] }),
  );
}

const V1 = widgets('v1', { type: 'object', required: ['size'], properties: { size: { type: 'integer' }, color: { type: 'string' } } });
const V2 = widgets('v2', {
  type: 'object',
  required: ['size', 'ownerTeam'],
  properties: { size: { type: 'integer' }, ownerTeam: { type: 'string', minLength: 3 } },
});

/** A project made from V1 whose sample the user edited, then its CRD renamed to v2 and regenerated. */
async function renamedProject(name: string): Promise<{ project: string; io: ReturnType<typeof ps.capture>; edited: string }> {
  const project = path.join(root, name);
  await generator.init({ crds: [ps.write(path.join(root, `inputs/${name}/widgets.yaml`), V1)], out: project });
  const sample = path.join(project, 'samples/widget.yaml');
  const edited = `${fs.readFileSync(sample, 'utf8').replace('size: 1', 'size: 5')}# my note\n`;
  fs.writeFileSync(sample, edited);
  fs.writeFileSync(path.join(project, 'crds/widgets.yaml'), V2);
  const io = ps.capture();
  expect(await cli.main(['generate', '--project', project], io), io.stderr()).toBe(0);
  return { project, io, edited };
}

describe('a renamed version', () => {
  it('the change summary lists the field changes against the version it replaced', async () => {
    const { io } = await renamedProject('summary');
    const out = io.stdout();
    expect(out).toContain('+ widgets.example.com/v2: new version, replacing v1 (field changes against v1 below)');
    expect(out).toContain('- widgets.example.com/v1: version removed, replaced by v2');
    expect(out).toContain('+ Widget v1 → v2: spec.ownerTeam (string, required)');
    expect(out).toContain('- Widget v1 → v2: spec.color (was string, optional)');
    expect(out).not.toMatch(/spec\.size/);
  });

  it('pairs each added version with the removed one of its CRD that shares the most fields; a version added beside kept ones replaces nothing', () => {
    const entry = (crdName: string, version: string, map: Record<string, string>): fields.VersionFields => ({ crdName, kind: 'W', version, fields: map });
    const previous: fields.Manifest = {
      generatorVersion: '1',
      versions: {
        'ws.x/v1alpha1': entry('ws.x', 'v1alpha1', { 'spec.old': 'string' }),
        'ws.x/v1': entry('ws.x', 'v1', { 'spec.a': 'string', 'spec.b': 'integer' }),
        'gs.x/v1': entry('gs.x', 'v1', { 'spec.a': 'string' }),
      },
    };
    const next: fields.Manifest = {
      generatorVersion: '1',
      versions: {
        'ws.x/v2': entry('ws.x', 'v2', { 'spec.a': 'string', 'spec.b': 'string' }),
        'gs.x/v1': entry('gs.x', 'v1', { 'spec.a': 'string' }),
        'gs.x/v2': entry('gs.x', 'v2', { 'spec.a': 'string', 'spec.c': 'boolean' }),
      },
    };
    const summary = fields.compare(previous, next);
    expect(summary.versionsReplaced).toEqual([{ crdName: 'ws.x', kind: 'W', from: 'v1', to: 'v2' }]);
    expect(fields.renderSummary(summary)).toEqual([
      '+ ws.x/v2: new version, replacing v1 (field changes against v1 below)',
      '+ gs.x/v2: new version',
      '- ws.x/v1alpha1: version removed',
      '- ws.x/v1: version removed, replaced by v2',
      '~ W v1 → v2: spec.b: type integer, required → string, required',
    ]);
  });

  it('a sample naming the gone version is reported and left alone, and a sample of the new version is written beside it, once', async () => {
    const { project, io, edited } = await renamedProject('samples');
    expect(fs.readFileSync(path.join(project, 'samples/widget.yaml'), 'utf8')).toBe(edited);
    const fresh = fs.readFileSync(path.join(project, 'samples/widget.v2.yaml'), 'utf8');
    expect(yaml.parse(fresh)).toEqual({ apiVersion: 'example.com/v2', kind: 'Widget', metadata: { name: 'example' }, spec: { size: 1, ownerTeam: 'example' } });
    expect(fresh).toContain('# It replaces samples/widget.yaml, which names a version of Widget that is no longer served');
    expect(io.stdout()).toContain('added sample object samples/widget.v2.yaml');
    const warning =
      'warning: samples/widget.yaml: Widget example.com/v1 — widgets.example.com no longer serves v1, v2 replaces it ' +
      '(kubectl apply -f samples/ fails: no matches for kind "Widget" in version "example.com/v1")';
    expect(io.stderr()).toContain(`${warning}; samples/widget.v2.yaml is a new sample of v2: move your changes over to it and delete samples/widget.yaml`);
    // Again: the fresh sample is the user's now, and is named, not rewritten.
    fs.appendFileSync(path.join(project, 'samples/widget.v2.yaml'), '# mine\n');
    const again = ps.capture();
    expect(await cli.main(['generate', '--project', project], again)).toBe(0);
    expect(again.stderr()).toContain(`${warning}; samples/widget.v2.yaml (a sample of v2) is there: move your changes over to it`);
    expect(fs.readFileSync(path.join(project, 'samples/widget.v2.yaml'), 'utf8')).toBe(`${fresh}# mine\n`);
    // Once the old file is gone (or names v2), nothing is said.
    fs.rmSync(path.join(project, 'samples/widget.yaml'));
    const done = ps.capture();
    expect(await cli.main(['generate', '--project', project], done)).toBe(0);
    expect(done.stderr()).not.toMatch(/samples\//);
  });

  it('names the document and the kind in a file of several objects, and passes over what it does not know', async () => {
    const project = path.join(root, 'several');
    await generator.init({ crds: [ps.write(path.join(root, 'inputs/several/widgets.yaml'), V1)], out: project });
    const sample = yaml.parse(fs.readFileSync(path.join(project, 'samples/widget.yaml'), 'utf8')) as Record<string, unknown>;
    const others = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } };
    ps.write(path.join(project, 'samples/all.yaml'), [others, sample].map((each) => yaml.stringify(each)).join('---\n'));
    ps.write(path.join(project, 'samples/broken.yaml'), 'kind: [unclosed\n');
    fs.writeFileSync(path.join(project, 'crds/widgets.yaml'), V2);
    const report = await generator.generate({ project });
    expect(report.warnings.filter((warning) => warning.startsWith('samples/'))).toEqual([
      expect.stringMatching(/^samples\/all\.yaml, document 1: Widget example\.com\/v1 — .*samples\/all\.v2\.yaml is a new sample of v2/),
      expect.stringMatching(/^samples\/widget\.yaml: Widget example\.com\/v1 — .*samples\/widget\.v2\.yaml is a new sample of v2/),
    ]);
  });
});

describe('what kubectl says about the samples of a renamed version', () => {
  let test: TestCluster;
  const kubectl = (...args: string[]) =>
    run('kubectl', ['--kubeconfig', test.kubeconfig, '--cache-dir', path.join(test.dir, 'kubectl-cache'), ...args], { cwd: root, timeoutMs: 30_000 });

  beforeAll(async () => {
    requireKubectl();
    test = await startTestCluster({ prefix: 'kopf-gen-renames-cluster-' });
  }, 60_000);

  afterAll(async () => {
    await test?.stop();
    if (test) ps.cleanup(test.dir);
  });

  it('the old sample is refused as the warning quotes, the new one is applied', async () => {
    const { project } = await renamedProject('kubectl');
    const crds = await kubectl('apply', '--server-side', '-f', path.join(project, 'crds'));
    expect(crds.code, crds.output).toBe(0);
    const old = await kubectl('apply', '-f', path.join(project, 'samples/widget.yaml'));
    expect(old.code).not.toBe(0);
    expect(old.output).toContain('no matches for kind "Widget" in version "example.com/v1"');
    const fresh = await kubectl('apply', '-f', path.join(project, 'samples/widget.v2.yaml'));
    expect(fresh.code, fresh.output).toBe(0);
  }, 60_000);
});
