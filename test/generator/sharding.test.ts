/**
 * The generated project of a sharded operator (docs/sharding.md, R-SHARD-401…403): with a ring in
 * kopf-gen.json (`"shards"`), deploy/rbac.yaml has a Role of the operator's own namespace on the
 * replicas' Leases (get, list, create, update, delete: their names are the pods', so no
 * `resourceNames`) and `patch` on every kind whose objects are sharded, for the owner label — the
 * kinds of event, index and reconcile handlers too, but not a reconcile handler's owned and
 * watched kinds, which are watched whole; without a ring, nothing of it. `generate` warns while the
 * user-owned Deployment's `--shards` and kopf-gen.json disagree, and when a Lease and a ring are
 * both configured. The Deployment gives the container its pod's name and namespace (the replica's
 * identity and the Leases' namespace) whether or not the project is sharded.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import * as accesses from '../../generator/accesses.js';
import * as generator from '../../generator/index.js';
import * as permissions from '../../generator/permissions.js';
import * as support from './support.js';
import * as ps from './projects-support.js';

const root = ps.tempDir();
afterAll(() => ps.cleanup(root));

interface Document {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: permissions.Rule[];
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace: string }[];
  spec?: {
    replicas?: number;
    template: { spec: { containers: { args: string[]; env?: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[] }[] } };
  };
}

function documentsOf(project: string, file: string): Document[] {
  return yaml.parseAllDocuments(fs.readFileSync(path.join(project, file), 'utf8')).map((document) => document.toJS() as Document);
}

const leaseRulesIn = (rules: readonly permissions.Rule[] | undefined): permissions.Rule[] =>
  (rules ?? []).filter((rule) => rule.apiGroups?.includes('coordination.k8s.io'));

const { model } = support.generate([support.source([support.crd({ type: 'object' })])]);
const GENERATED: accesses.GeneratedDescriptor[] = [
  { fileName: 'widgets.example.com.v1.ts', descriptor: 'Widgets', flat: true, namespace: 'WidgetV1', crdName: 'widgets.example.com' },
];
const HEADER = "import { builtins, on } from 'kopf-gen/runtime';\nimport { Widgets } from '../generated/index.js';\n";

/** The verbs granted per namespaced resource for one module's code, with or without a ring. */
function grantsOf(text: string, ring?: string): Record<string, string[]> {
  const { accesses: used } = accesses.scan([{ path: 'src/handlers/widget.ts', text: HEADER + text }], GENERATED);
  const rules = permissions.permissionsOf(model, used, undefined, undefined, ring);
  const grants: Record<string, string[]> = {};
  for (const rule of rules.namespaced) {
    if (rule.apiGroups[0] === 'kopf.dev' || rule.resources[0] === 'events') continue;
    for (const resource of rule.resources) grants[resource] = [...(grants[resource] ?? []), ...rule.verbs];
  }
  return grants;
}

const RECONCILE = [
  'on.reconcile(Widgets, { owns: [builtins.Jobs], watches: [{ resource: builtins.ConfigMaps }] }, async function r({ name }) {});',
  'on.index(builtins.Secrets, function byName({ name }) { return name; });',
  'on.event(builtins.Pods, function seen({ name }) {});',
].join('\n');

describe('R-SHARD-401 the RBAC of a sharded operator', () => {
  it("R-SHARD-401 a ring adds the replicas' Leases in the own namespace, and patch on the sharded kinds only", () => {
    expect(grantsOf(RECONCILE)).toMatchObject({
      widgets: ['get', 'list', 'watch'],
      jobs: ['get', 'list', 'watch'],
      configmaps: ['get', 'list', 'watch'],
      secrets: ['get', 'list', 'watch'],
      pods: ['get', 'list', 'watch'],
    });
    expect(grantsOf(RECONCILE, 'widgets')).toMatchObject({
      widgets: ['get', 'list', 'watch', 'patch'], // reconcile's own kind: sharded
      jobs: ['get', 'list', 'watch'], // owned: watched whole
      configmaps: ['get', 'list', 'watch'], // watched: watched whole
      secrets: ['get', 'list', 'watch', 'patch'], // an index is per replica: sharded
      pods: ['get', 'list', 'watch', 'patch'],
    });
    const { accesses: used } = accesses.scan([{ path: 'src/handlers/widget.ts', text: HEADER + RECONCILE }], GENERATED);
    const rules = permissions.permissionsOf(model, used, undefined, undefined, 'widgets');
    expect(rules.shards.map(({ why: _why, ...rule }) => rule)).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'create', 'update', 'delete'] },
    ]);
    expect(rules.namespaced.find((rule) => rule.resources.includes('widgets'))?.why).toBe(
      "get, list, watch: on.reconcile at src/handlers/widget.ts:3; patch: sharding (--shards widgets): the owner label of on.reconcile's objects at src/handlers/widget.ts:3",
    );
    for (const set of [rules.cluster, rules.namespaced, rules.own]) expect(leaseRulesIn(set)).toEqual([]);
    expect(permissions.permissionsOf(model, used).shards).toEqual([]);
  });

  it('R-SHARD-401 cause handlers already patch: a ring changes nothing of their rules', () => {
    const text = 'on.create(Widgets, async function c() {}); on.daemon(builtins.Pods, async function d() {});';
    expect(grantsOf(text, 'widgets')).toEqual(grantsOf(text));
  });

  it.each([
    ['cluster-wide', undefined],
    ['for one namespace', ['apps']],
  ])(
    'R-SHARD-401 "shards" in kopf-gen.json (%s): a Role and RoleBinding of the Leases in the operator namespace, kept on regeneration',
    async (_scope, namespaces) => {
      const crdFile = ps.write(path.join(root, 'inputs/widgets.yaml'), ps.widgetCrd({ size: { type: 'integer' } }));
      const out = path.join(root, namespaces ? 'sharded-apps' : 'sharded-all');
      await generator.init({ crds: [crdFile], out, ...(namespaces ? { namespaces } : {}) });
      expect(documentsOf(out, 'deploy/rbac.yaml').map((document) => document.kind)).not.toContain('Role');
      const configFile = path.join(out, 'kopf-gen.json');
      const config = JSON.parse(fs.readFileSync(configFile, 'utf8')) as Record<string, unknown>;
      fs.writeFileSync(configFile, JSON.stringify({ ...config, shards: 'widgets' }));
      await generator.generate({ project: out });
      const kube = path.basename(out);
      const documents = documentsOf(out, 'deploy/rbac.yaml');
      const role = documents.find((document) => document.kind === 'Role');
      expect(role?.metadata).toEqual({ name: `${kube}-shards`, namespace: kube });
      expect(role?.rules?.map(({ why: _why, ...rule }) => rule)).toEqual([
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'create', 'update', 'delete'] },
      ]);
      const binding = documents.find((document) => document.kind === 'RoleBinding' && document.metadata.name === `${kube}-shards`);
      expect(binding?.metadata.namespace).toBe(kube);
      expect(binding?.roleRef).toMatchObject({ kind: 'Role', name: `${kube}-shards` });
      expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name: kube, namespace: kube }]);
      for (const document of documents.filter((each) => each.kind === 'ClusterRole')) expect(leaseRulesIn(document.rules)).toEqual([]);
      expect(JSON.parse(fs.readFileSync(configFile, 'utf8')).shards).toBe('widgets'); // rewritten, and kept
      await generator.generate({ project: out });
      expect(documentsOf(out, 'deploy/rbac.yaml').filter((document) => document.kind === 'Role')).toHaveLength(1);
    },
  );

  it('R-SHARD-401 an invalid ring name in kopf-gen.json is refused', async () => {
    const crdFile = ps.write(path.join(root, 'inputs/widgets.yaml'), ps.widgetCrd({ size: { type: 'integer' } }));
    const out = path.join(root, 'bad-ring');
    await generator.init({ crds: [crdFile], out });
    const configFile = path.join(out, 'kopf-gen.json');
    const config = JSON.parse(fs.readFileSync(configFile, 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(configFile, JSON.stringify({ ...config, shards: 'Not_A_Ring' }));
    await expect(generator.generate({ project: out })).rejects.toMatchObject({
      code: 'invalid-project',
      message: expect.stringContaining('invalid ring name "Not_A_Ring"'),
    });
  });
});

describe('R-SHARD-402 generate checks the Deployment against "shards"', () => {
  const crdFile = ps.write(path.join(root, 'inputs/widgets.yaml'), ps.widgetCrd({ size: { type: 'integer' } }));

  async function project(name: string, config: Record<string, unknown>, args?: string): Promise<string> {
    const out = path.join(root, name);
    await generator.init({ crds: [crdFile], out });
    const configFile = path.join(out, 'kopf-gen.json');
    fs.writeFileSync(configFile, JSON.stringify({ ...(JSON.parse(fs.readFileSync(configFile, 'utf8')) as object), ...config }));
    if (args !== undefined) {
      const deployment = path.join(out, 'deploy/deployment.yaml');
      fs.writeFileSync(deployment, fs.readFileSync(deployment, 'utf8').replace('"-A"]', `"-A",${args}]`).replace('replicas: 1', 'replicas: 3'));
    }
    return out;
  }

  it('R-SHARD-402 a ring without --shards in the Deployment: a warning saying what to add', async () => {
    const out = await project('ring-only', { shards: 'widgets' });
    expect((await generator.generate({ project: out })).warnings).toEqual([
      'kopf-gen.json names the ring "widgets", but deploy/deployment.yaml does not pass --shards=widgets: add it to the operator\'s args (and raise replicas) to shard the objects across the replicas.',
    ]);
  });

  it('R-SHARD-402 --shards in the Deployment without a ring: a warning about the refused requests', async () => {
    const out = await project('flag-only', {}, '"--shards","widgets"');
    expect((await generator.generate({ project: out })).warnings).toEqual([
      'deploy/deployment.yaml passes --shards=widgets, but deploy/rbac.yaml grants nothing for sharding: set "shards": "widgets" in kopf-gen.json and run `npm run generate`, or the replicas\' Lease requests are refused (HTTP 403).',
    ]);
  });

  it('R-SHARD-402 both, as documented: no warning, and the Deployment has 3 replicas with --shards', async () => {
    const out = await project('both', { shards: 'widgets' }, '"--shards=widgets"');
    expect((await generator.generate({ project: out })).warnings).toEqual([]);
    const deployment = documentsOf(out, 'deploy/deployment.yaml')[0];
    expect(deployment?.spec?.replicas).toBe(3);
    expect(deployment?.spec?.template.spec.containers[0]?.args).toContain('--shards=widgets');
  });

  it('R-SHARD-402 a Lease and a ring together: a warning (the operator refuses --lease with --shards)', async () => {
    const out = await project('lease-and-ring', { shards: 'widgets', lease: 'widgets' }, '"--shards=widgets","--lease=widgets"');
    expect((await generator.generate({ project: out })).warnings).toEqual([
      'kopf-gen.json names both the Lease "widgets" and the ring "widgets": an operator runs with --lease or with --shards, never both (sharding replaces leader election); remove one of them.',
    ]);
  });
});

describe('R-SHARD-403 the Deployment names the replica', () => {
  it("R-SHARD-403 POD_NAME and POD_NAMESPACE from the downward API, and the Deployment's comment says how to shard", async () => {
    const crdFile = ps.write(path.join(root, 'inputs/widgets.yaml'), ps.widgetCrd({ size: { type: 'integer' } }));
    const out = path.join(root, 'named');
    await generator.init({ crds: [crdFile], out });
    const env = documentsOf(out, 'deploy/deployment.yaml')[0]?.spec?.template.spec.containers[0]?.env ?? [];
    expect(env.filter((each) => each.name.startsWith('POD_'))).toEqual([
      { name: 'POD_ID', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    ]);
    const text = fs.readFileSync(path.join(out, 'deploy/deployment.yaml'), 'utf8');
    expect(text).toContain('"shards": "named" in kopf-gen.json');
    expect(text).toContain('`--shards=named`');
  });
});
