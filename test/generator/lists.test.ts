/**
 * CRD input as kubectl prints it: `kubectl get crd a b -o yaml` (one `kind: List` document whose
 * items are the CRDs, each with what the API server set), its JSON form, a List among other
 * documents, several `--crd` files and a folder. The CRDs of a List are found with their item in
 * every error and note, other items are skipped with a note as other documents are, and the copy
 * in `crds/` is plain CRDs that `generate` reads again to the same result. kubectl itself decides
 * what a List looks like: the test asks the real kubectl to print one from a devcluster.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import * as cli from '../../generator/cli.js';
import * as errors from '../../generator/errors.js';
import * as generator from '../../generator/index.js';
import * as loading from '../../generator/loading.js';
import { startTestCluster, type TestCluster } from '../support/cluster.js';
import { requireKubectl } from '../support/kubectl.js';
import { run } from '../support/processes.js';
import * as ps from './projects-support.js';
import * as support from './support.js';

const root = ps.tempDir('kopf-gen-lists-');
afterAll(() => ps.cleanup(root));

const widget = support.crd({ type: 'object', properties: { size: { type: 'integer' } } });
const gadget = support.crd({ type: 'object', properties: { color: { type: 'string', enum: ['yes', 'no'] } } }, { kind: 'Gadget' });
const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: 'b' } };

/** A List as `kubectl get -o yaml` prints one, of the given items. */
function list(items: readonly unknown[]): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'List', items, metadata: { resourceVersion: '' } };
}

/** What the API server adds to a CRD it stores (as kubectl prints it back). */
function asStored(crd: Record<string, unknown>): Record<string, unknown> {
  const metadata = crd['metadata'] as Record<string, unknown>;
  return {
    ...crd,
    metadata: {
      ...metadata,
      uid: '6f1c7c3e-0d7e-4a54-8f3a-2f4b6a1d9c11',
      resourceVersion: '4242',
      generation: 1,
      creationTimestamp: '2024-01-01T00:00:00Z',
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(crd), team: 'platform' },
      managedFields: [{ manager: 'kubectl', operation: 'Update', apiVersion: 'apiextensions.k8s.io/v1', fieldsType: 'FieldsV1', fieldsV1: {} }],
    },
    status: { acceptedNames: { kind: 'Widget', plural: 'widgets' }, conditions: [], storedVersions: ['v1'] },
  };
}

const loadError = (text: string, file = 'crds/list.yaml'): errors.GeneratorError => support.loadError(text, file);

describe('a List of CRDs', () => {
  it('loads the CRDs among its items, each with its item, and skips the other items with a note', () => {
    const text = yaml.stringify(list([widget, configMap, gadget]));
    const { crds, notes } = loading.loadCrdSources([{ path: 'crds/list.yaml', text }]);
    expect(crds.map((crd) => [crd.documentIndex, crd.itemPath, loading.placeOf(crd)])).toEqual([
      [0, 'items[0]', 'crds/list.yaml, document 0, items[0]'],
      [0, 'items[2]', 'crds/list.yaml, document 0, items[2]'],
    ]);
    expect(notes).toEqual(['crds/list.yaml, document 0, items[1]: skipped (ConfigMap v1, not a CustomResourceDefinition)']);
  });

  it('loads a CustomResourceDefinitionList and a List among other documents, and skips an empty List with a note', () => {
    const crdList = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinitionList', items: [gadget] };
    const text = [yaml.stringify(configMap), yaml.stringify(list([])), yaml.stringify(crdList), yaml.stringify(widget)].join('---\n');
    const { crds, notes } = loading.loadCrdSources([{ path: 'crds/mixed.yaml', text }]);
    expect(crds.map((crd) => loading.placeOf(crd))).toEqual(['crds/mixed.yaml, document 2, items[0]', 'crds/mixed.yaml, document 3']);
    expect(notes).toEqual([
      'crds/mixed.yaml, document 0: skipped (ConfigMap v1, not a CustomResourceDefinition)',
      'crds/mixed.yaml, document 1: skipped (an empty List)',
    ]);
  });

  it('names the item and the JSON path below it in every refusal', () => {
    const bad = support.crd({ type: 'object', properties: { size: { type: 'integr' } } }, { kind: 'Gizmo' });
    const error = loadThenValidate(yaml.stringify(list([widget, bad])));
    expect(error.code).toBe('unknown-type');
    expect(error.jsonPath).toBe('items[1].spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.type');
    expect(error.message).toMatch(/^crds\/list\.yaml, document 0, items\[1\]\.spec\.versions\[0\]/);
  });

  it('refuses items that are not Kubernetes objects, a List inside a List, and items that are not a list', () => {
    expect(loadError(yaml.stringify(list([widget, 'text'])))).toMatchObject({
      code: 'not-a-crd',
      jsonPath: 'items[1]',
      message: 'crds/list.yaml, document 0, items[1]: not a Kubernetes object: the item is a string, not a mapping',
    });
    expect(loadError(yaml.stringify(list([{ metadata: {} }])))).toMatchObject({ code: 'not-a-crd', jsonPath: 'items[0]' });
    expect(loadError(yaml.stringify(list([list([widget])])))).toMatchObject({ code: 'not-a-crd', jsonPath: 'items[0]' });
    expect(loadError(yaml.stringify({ ...list([]), items: { a: widget } }))).toMatchObject({ code: 'not-a-crd', jsonPath: 'items' });
  });

  it('refuses a List with no CRD among its items as a file without CRDs', () => {
    expect(loadError(yaml.stringify(list([configMap])))).toMatchObject({ code: 'not-a-crd', message: /the file contains no CustomResourceDefinition/ });
  });

  it('init copies the CRDs of a List to crds/ as plain documents without what the server set, and generate reads them to the same result', async () => {
    const input = ps.write(path.join(root, 'inputs/printed.json'), JSON.stringify(list([asStored(widget), configMap, asStored(gadget)]), null, 2));
    const out = path.join(root, 'from-list');
    const report = await generator.init({ crds: [input], out });
    expect(report.crdsAdded).toEqual(['crds/printed.yaml']);
    expect(report.notes).toContain(`${input}, document 0, items[1]: skipped (ConfigMap v1, not a CustomResourceDefinition)`);
    const copy = fs.readFileSync(path.join(out, 'crds/printed.yaml'), 'utf8');
    const documents = yaml.parseAllDocuments(copy).map((document) => document.toJS() as Record<string, unknown>);
    expect(documents.map((document) => (document['metadata'] as { name: string }).name)).toEqual(['widgets.example.com', 'gadgets.example.com']);
    expect(documents[0]).toEqual({ ...widget, metadata: { name: 'widgets.example.com', annotations: { team: 'platform' } } });
    expect(documents[1]).toEqual({ ...gadget, metadata: { name: 'gadgets.example.com', annotations: { team: 'platform' } } });
    // kubectl reads YAML 1.1, where a bare yes is a boolean: the enum's strings stay strings.
    expect(copy).toMatch(/- "yes"\n/);
    expect(fs.readdirSync(path.join(out, 'src/generated')).filter((name) => name.endsWith('.ts'))).toEqual(
      expect.arrayContaining(['widgets.example.com.v1.ts', 'gadgets.example.com.v1.ts']),
    );
    const before = ps.snapshot(path.join(out, 'src/generated'));
    const again = await generator.generate({ project: out });
    expect(generator.renderSummary(again.summary)).toEqual([]);
    expect(ps.snapshot(path.join(out, 'src/generated'))).toEqual(before);
  });

  it('init copies a CRD printed by kubectl (not in a List) without what the server set', async () => {
    const input = ps.write(path.join(root, 'inputs/one-printed.yaml'), yaml.stringify(asStored(widget)));
    const out = path.join(root, 'from-printed');
    await generator.init({ crds: [input], out });
    const copy = yaml.parse(fs.readFileSync(path.join(out, 'crds/one-printed.yaml'), 'utf8')) as Record<string, unknown>;
    expect(copy).toEqual({ ...widget, metadata: { name: 'widgets.example.com', annotations: { team: 'platform' } } });
  });
});

/** Loads and validates a text, expecting a refusal. */
function loadThenValidate(text: string): errors.GeneratorError {
  try {
    support.generate([{ path: 'crds/list.yaml', text }]);
  } catch (error) {
    if (error instanceof errors.GeneratorError) return error;
    throw error;
  }
  throw new Error('expected a GeneratorError');
}

describe('several CRD files and folders', () => {
  it('init takes several --crd files and a folder (its *.yaml, *.yml and *.json files, not its subfolders), one crds/ copy per file', async () => {
    const folder = path.join(root, 'inputs/folder');
    ps.write(path.join(folder, 'b-gadgets.yml'), yaml.stringify(gadget));
    ps.write(path.join(folder, 'README.md'), '# not a CRD file\n');
    ps.write(path.join(folder, 'nested/ignored.yaml'), 'not: [valid\n');
    const gizmo = ps.write(path.join(root, 'inputs/gizmos.yaml'), yaml.stringify(support.crd(undefined, { kind: 'Gizmo' })));
    ps.write(path.join(folder, 'a-widgets.yaml'), yaml.stringify(widget));
    const out = path.join(root, 'from-folder');
    const io = ps.capture();
    expect(await cli.main(['init', '--crd', gizmo, '--crd', folder, '--out', out], io)).toBe(0);
    expect(fs.readdirSync(path.join(out, 'crds')).sort()).toEqual(['a-widgets.yaml', 'b-gadgets.yml', 'gizmos.yaml']);
    expect(io.stdout()).toContain('+ widgets.example.com: new CRD');
  });

  it('an error in a file of a folder names that file', async () => {
    const folder = path.join(root, 'inputs/bad-folder');
    ps.write(path.join(folder, 'a.yaml'), yaml.stringify(widget));
    ps.write(path.join(folder, 'b.yaml'), 'kind: [unclosed\n');
    await expect(generator.init({ crds: [folder], out: path.join(root, 'from-bad-folder') })).rejects.toMatchObject({
      code: 'not-yaml',
      file: `${folder}/b.yaml`,
    });
  });

  it('refuses a folder without CRD files (no-input), naming it', async () => {
    const folder = path.join(root, 'inputs/empty-folder');
    fs.mkdirSync(folder, { recursive: true });
    await expect(generator.init({ crds: [folder], out: path.join(root, 'from-empty') })).rejects.toMatchObject({
      code: 'no-input',
      message: `--crd ${folder}: a folder with no *.yaml, *.yml or *.json file`,
    });
  });
});

describe('what kubectl prints', () => {
  let test: TestCluster;
  const kubectl = (...args: string[]) =>
    run('kubectl', ['--kubeconfig', test.kubeconfig, '--cache-dir', path.join(test.dir, 'kubectl-cache'), ...args], { cwd: root, timeoutMs: 30_000 });

  beforeAll(async () => {
    requireKubectl();
    test = await startTestCluster({ prefix: 'kopf-gen-lists-cluster-' });
  }, 60_000);

  afterAll(async () => {
    await test?.stop();
    if (test) ps.cleanup(test.dir);
  });

  it('init reads `kubectl get crd a b -o yaml` (a List), and kubectl applies the copy in crds/ again, server-side', async () => {
    const inputs = ps.write(path.join(root, 'kubectl/crds.yaml'), [widget, gadget].map((crd) => yaml.stringify(crd, { version: '1.1' })).join('---\n'));
    const applied = await kubectl('apply', '-f', inputs);
    expect(applied.code, applied.output).toBe(0);
    const printed = await kubectl('get', 'crd', 'widgets.example.com', 'gadgets.example.com', '-o', 'yaml');
    expect(printed.code, printed.output).toBe(0);
    expect(yaml.parse(printed.output)).toMatchObject({ apiVersion: 'v1', kind: 'List' });
    const listFile = ps.write(path.join(root, 'kubectl/printed.yaml'), printed.output);
    const out = path.join(root, 'from-kubectl');
    const io = ps.capture();
    expect(await cli.main(['init', '--crd', listFile, '--out', out], io), io.stderr()).toBe(0);
    expect(io.stdout()).toContain('+ widgets.example.com: new CRD');
    expect(io.stdout()).toContain('+ gadgets.example.com: new CRD');
    const copy = fs.readFileSync(path.join(out, 'crds/printed.yaml'), 'utf8');
    expect(copy).not.toMatch(/managedFields|resourceVersion|last-applied-configuration|^status:/m);
    expect((await kubectl('delete', 'crd', 'widgets.example.com', 'gadgets.example.com')).code).toBe(0);
    const again = await kubectl('apply', '--server-side', '-f', path.join(out, 'crds'));
    expect(again.code, again.output).toBe(0);
    expect(again.output).toMatch(/customresourcedefinition.apiextensions.k8s.io\/widgets.example.com serverside-applied/);
  }, 60_000);
});
