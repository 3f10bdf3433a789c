/**
 * The generated RBAC grants every verb the runtime itself uses, and no more (R-SEC-3, R-SEC-4):
 * `get` on every served resource (the re-reads after a lost write and after the consistency
 * timeout); Lease rules only for a project with a Lease (`init --lease`, `"lease"` in
 * kopf-gen.json), then only in a Role of the operator's own namespace — restricted to the Lease's
 * name except `create` — with `--lease` in the Deployment's args, for cluster-wide and
 * `--namespace` projects alike; invalid Lease names refused.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
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
  spec?: { template: { spec: { containers: { args: string[] }[] } } };
}

/** The operator container's args in deploy/deployment.yaml. */
function argsOf(project: string): string[] {
  const deployment = documentsOf(project, 'deploy/deployment.yaml')[0];
  return deployment?.spec?.template.spec.containers[0]?.args ?? [];
}

function documentsOf(project: string, file: string): Document[] {
  return yaml.parseAllDocuments(fs.readFileSync(path.join(project, file), 'utf8')).map((document) => document.toJS() as Document);
}

const leaseRulesIn = (rules: readonly permissions.Rule[] | undefined): permissions.Rule[] =>
  (rules ?? []).filter((rule) => rule.apiGroups?.includes('coordination.k8s.io'));

describe('R-SEC-3 the verbs of the served resources', () => {
  const { model } = support.generate([support.source([support.crd({ type: 'object' })])]);

  it('R-SEC-3 every served resource is granted get, list, watch and patch: the runtime re-reads single objects', () => {
    const rules = permissions.permissionsOf(model);
    const served = rules.namespaced.find((rule) => rule.resources.includes('widgets'));
    expect(served?.verbs).toEqual(['get', 'list', 'watch', 'patch']);
    expect(served?.why).toContain('observing and patching the served resources');
  });

  it('R-SEC-4 no Lease rules at all without a Lease', () => {
    const rules = permissions.permissionsOf(model);
    expect(leaseRulesIn(rules.namespaced)).toEqual([]);
    expect(leaseRulesIn(rules.cluster)).toEqual([]);
    expect(rules.own).toEqual([]);
  });

  it("R-SEC-4 with a Lease: create, and get and update on that Lease's name, in the operator's own rules only", () => {
    const rules = permissions.permissionsOf(model, [], undefined, 'widgets-leader');
    expect(leaseRulesIn(rules.namespaced)).toEqual([]);
    expect(leaseRulesIn(rules.cluster)).toEqual([]);
    expect(rules.own.map(({ why: _why, ...rule }) => rule)).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'update'], resourceNames: ['widgets-leader'] },
    ]);
    for (const rule of rules.own) expect(rule.why).toContain('--lease widgets-leader');
  });
});

describe('R-SEC-4 projects with a Lease', () => {
  const crdFile = ps.write(path.join(root, 'inputs/widgets.yaml'), ps.widgetCrd({ size: { type: 'integer' } }));

  it.each([
    ['cluster-wide', undefined],
    ['for one namespace', ['apps']],
  ])(
    'R-SEC-4 init --lease (%s): a Role and RoleBinding in the operator namespace, --lease in the Deployment, "lease" in kopf-gen.json',
    async (_scope, namespaces) => {
      const out = path.join(root, namespaces ? 'leased-apps' : 'leased-all');
      await generator.init({ crds: [crdFile], out, lease: 'op-leader', ...(namespaces ? { namespaces } : {}) });
      const kube = path.basename(out);
      const documents = documentsOf(out, 'deploy/rbac.yaml');
      const role = documents.find((document) => document.kind === 'Role');
      expect(role?.metadata).toEqual({ name: `${kube}-lease`, namespace: kube });
      expect(role?.rules?.map(({ why: _why, ...rule }) => rule)).toEqual([
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['op-leader'], verbs: ['get', 'update'] },
      ]);
      const binding = documents.find((document) => document.kind === 'RoleBinding' && document.metadata.name === `${kube}-lease`);
      expect(binding?.metadata.namespace).toBe(kube);
      expect(binding?.roleRef).toMatchObject({ kind: 'Role', name: `${kube}-lease` });
      expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name: kube, namespace: kube }]);
      for (const document of documents.filter((each) => each.kind === 'ClusterRole')) expect(leaseRulesIn(document.rules)).toEqual([]);
      expect(argsOf(out)).toContain('--lease=op-leader');
      expect(JSON.parse(fs.readFileSync(path.join(out, 'kopf-gen.json'), 'utf8')).lease).toBe('op-leader');
      // A regeneration keeps it.
      await generator.generate({ project: out });
      expect(documentsOf(out, 'deploy/rbac.yaml').filter((document) => document.kind === 'Role')).toHaveLength(1);
    },
  );

  it('R-SEC-4 without a Lease: no Lease rules anywhere, no --lease, and the Deployment says how to add one', async () => {
    const out = path.join(root, 'unleased');
    await generator.init({ crds: [crdFile], out, namespaces: ['apps'] });
    const documents = documentsOf(out, 'deploy/rbac.yaml');
    expect(documents.map((document) => document.kind)).not.toContain('Role');
    for (const document of documents) expect(leaseRulesIn(document.rules)).toEqual([]);
    expect(argsOf(out).join(' ')).not.toContain('--lease');
    expect(fs.readFileSync(path.join(out, 'deploy/deployment.yaml'), 'utf8')).toContain(`set "lease": "unleased" in\n  # kopf-gen.json`);
    expect(JSON.parse(fs.readFileSync(path.join(out, 'kopf-gen.json'), 'utf8'))).not.toHaveProperty('lease');
    // Setting it in kopf-gen.json later: the next generation grants it.
    const config = JSON.parse(fs.readFileSync(path.join(out, 'kopf-gen.json'), 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(path.join(out, 'kopf-gen.json'), JSON.stringify({ ...config, lease: 'unleased' }));
    const report = await generator.generate({ project: out });
    const role = documentsOf(out, 'deploy/rbac.yaml').find((document) => document.kind === 'Role');
    expect(role?.metadata.namespace).toBe('unleased');
    expect(leaseRulesIn(role?.rules).flatMap((rule) => rule.resourceNames ?? [])).toEqual(['unleased']);
    // The user-owned Deployment is not rewritten: generate says what it lacks.
    expect(report.warnings).toEqual([
      'kopf-gen.json names the Lease "unleased", but deploy/deployment.yaml does not pass --lease=unleased: add it to the operator\'s args for leader election.',
    ]);
  });

  it('R-SEC-4 generate warns when the Deployment passes a --lease that the RBAC does not grant', async () => {
    const out = path.join(root, 'mismatch');
    await generator.init({ crds: [crdFile], out });
    const deployment = path.join(out, 'deploy/deployment.yaml');
    fs.writeFileSync(deployment, fs.readFileSync(deployment, 'utf8').replace('"-A"]', '"-A","--lease","other"]'));
    expect(argsOf(out)).toContain('other');
    expect((await generator.generate({ project: out })).warnings).toEqual([
      'deploy/deployment.yaml passes --lease=other, but deploy/rbac.yaml grants no Lease: set "lease": "other" in kopf-gen.json and run `npm run generate`, or the operator\'s Lease requests are refused (HTTP 403).',
    ]);
  });

  it('R-SEC-4 an invalid Lease name is refused, in init and in kopf-gen.json', async () => {
    await expect(generator.init({ crds: [crdFile], out: path.join(root, 'bad-lease'), lease: 'Not_A_Name' })).rejects.toMatchObject({
      code: 'invalid-lease',
      message: expect.stringContaining('"Not_A_Name"'),
    });
    expect(fs.existsSync(path.join(root, 'bad-lease'))).toBe(false);
    const out = path.join(root, 'bad-config');
    await generator.init({ crds: [crdFile], out });
    const config = JSON.parse(fs.readFileSync(path.join(out, 'kopf-gen.json'), 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(path.join(out, 'kopf-gen.json'), JSON.stringify({ ...config, lease: 'UPPER' }));
    await expect(generator.generate({ project: out })).rejects.toMatchObject({
      code: 'invalid-project',
      message: expect.stringContaining('invalid Lease name'),
    });
  });
});

describe('R-SEC-403 a project whose code creates and deletes Jobs', () => {
  const crdFile = ps.write(path.join(root, 'inputs/cronjobs.yaml'), ps.widgetCrd({ schedule: { type: 'string' } }));
  const handler = [
    "import { builtins, on } from 'kopf-gen/runtime';",
    "import { Widgets } from '../generated/index.js';",
    '',
    'on.reconcile(Widgets, { owns: [builtins.Jobs] }, async function reconcileWidget({ owned: [jobs], client, name, namespace }) {',
    '  for (const job of jobs) {',
    '    if (job.status?.succeeded) await client.delete(builtins.Jobs, job.metadata.name, { namespace });',
    '  }',
    "  if (jobs.length === 0) await client.create(builtins.Jobs, { metadata: { name: `${name}-run` }, spec: { template: { spec: { containers: [], restartPolicy: 'Never' } } } });",
    "  await client.patch(Widgets, name, { status: { phase: 'Scheduled' } }, { namespace, subresource: 'status' });",
    '});',
    '',
  ].join('\n');

  it('R-SEC-403 gets exactly create, delete, get, list, watch on jobs, and on its own kind no patch but of its status', async () => {
    const out = path.join(root, 'jobs');
    await generator.init({ crds: [crdFile], out });
    fs.writeFileSync(path.join(out, 'src/handlers/widget.ts'), handler);
    const report = await generator.generate({ project: out });
    const role = documentsOf(out, 'deploy/rbac.yaml').find((document) => document.kind === 'ClusterRole' && document.metadata.name.endsWith('-namespaced'));
    const rulesOn = (resource: string): permissions.Rule[] => (role?.rules ?? []).filter((rule) => rule.resources.includes(resource));
    expect(rulesOn('jobs').map(({ why: _why, ...rule }) => rule)).toEqual([
      { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list', 'watch', 'create', 'delete'] },
    ]);
    expect(rulesOn('widgets').map((rule) => rule.verbs)).toEqual([['get', 'list', 'watch']]);
    expect(rulesOn('widgets/status').map((rule) => rule.verbs)).toEqual([['patch']]);
    expect(report.builtins).toEqual(['jobs.batch']);
    expect(report.warnings).toEqual([]);
    // Each rule says which file and line need it, in the manifest too.
    const text = fs.readFileSync(path.join(out, 'deploy/rbac.yaml'), 'utf8');
    expect(text).toContain(
      '# get, list, watch: on.reconcile owns at src/handlers/widget.ts:4; delete: client.delete at src/handlers/widget.ts:6; create: client.create at src/handlers/widget.ts:8',
    );
  });
});
