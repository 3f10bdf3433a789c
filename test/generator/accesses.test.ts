/**
 * The RBAC derived from the code (R-SEC-401…404): what each registration, reconcile relation and
 * typed-client call needs, read syntactically from the user's modules, granted per kind with the
 * place that needs it; what the scan cannot follow is a warning naming file and line, with no rule.
 */
import { describe, expect, it } from 'vitest';
import * as accesses from '../../generator/accesses.js';
import * as permissions from '../../generator/permissions.js';
import * as support from './support.js';

const { model } = support.generate([support.source([support.crd({ type: 'object' })])]);

/** The generated descriptor of the test CRD, as the index exports it. */
const GENERATED: accesses.GeneratedDescriptor[] = [
  { fileName: 'widgets.example.com.v1.ts', descriptor: 'Widgets', flat: true, namespace: 'WidgetV1', crdName: 'widgets.example.com' },
];

const HEADER = "import { builtins, on, connect } from 'kopf-gen/runtime';\nimport { Widgets } from '../generated/index.js';\n";

/** The verbs granted per resource (`widgets`, `jobs`, `widgets/status`, …) for one module's code. */
function grantsOf(text: string, withHeader = true): Record<string, string[]> {
  const { accesses: used } = accesses.scan([{ path: 'src/handlers/widget.ts', text: (withHeader ? HEADER : '') + text }], GENERATED);
  const rules = permissions.permissionsOf(model, used);
  const grants: Record<string, string[]> = {};
  for (const rule of [...rules.cluster, ...rules.namespaced]) {
    const group = rule.apiGroups[0];
    if (group === 'kopf.dev' || group === 'apiextensions.k8s.io' || group?.endsWith('authorization.k8s.io') || group === 'authentication.k8s.io') continue;
    if (rule.resources[0] === 'events' || rule.resources[0] === 'namespaces') continue;
    for (const resource of rule.resources) grants[resource] = [...(grants[resource] ?? []), ...rule.verbs];
  }
  return grants;
}

function unfollowedOf(text: string): string[] {
  return accesses.scan([{ path: 'src/handlers/widget.ts', text: HEADER + text }], GENERATED).unfollowed.map(accesses.describeUnfollowed);
}

describe('R-SEC-401 kinds with cause handlers', () => {
  it.each(['create', 'update', 'delete', 'resume', 'daemon', 'timer'])(
    'R-SEC-401 on.%s: get, list, watch, patch, and patch of the status subresource',
    (registrar) => {
      expect(grantsOf(`on.${registrar}(Widgets, async function h({ name }) {});`)).toEqual({
        widgets: ['get', 'list', 'watch', 'patch'],
        'widgets/status': ['patch'],
      });
    },
  );

  it('R-SEC-401 on.field, the daemon and timer aliases, through a namespace import; no status rule for a kind without the subresource', () => {
    const text = [
      "import * as kopf from 'kopf-gen/runtime';",
      "import { timer as t } from 'kopf-gen/runtime';",
      "kopf.on.field(kopf.builtins.Deployments, 'spec.replicas', function f() {});",
      "t('configmaps', { interval: 60 }, function tick() {});",
    ].join('\n');
    expect(grantsOf(text, false)).toEqual({
      widgets: ['get', 'list', 'watch', 'patch'], // no use of Widgets in the code: served as by cause handlers
      'widgets/status': ['patch'],
      configmaps: ['get', 'list', 'watch', 'patch'],
      deployments: ['get', 'list', 'watch', 'patch'],
      'deployments/status': ['patch'],
    });
  });

  it('R-SEC-401 every rule says which file and line need it', () => {
    const { accesses: used } = accesses.scan(
      [{ path: 'src/handlers/widget.ts', text: `${HEADER}on.create(Widgets, function c() {});\non.update(Widgets, function u() {});\n` }],
      GENERATED,
    );
    const rule = permissions.permissionsOf(model, used).namespaced.find((each) => each.resources.includes('widgets'));
    expect(rule?.why).toBe('get, list, watch, patch: on.create at src/handlers/widget.ts:3, on.update at src/handlers/widget.ts:4');
  });
});

describe('R-SEC-402 kinds only observed', () => {
  it('R-SEC-402 on.event and on.index: get, list, watch — no patch', () => {
    expect(
      grantsOf('on.event(builtins.Pods, function seen({ name }) {}); on.index(builtins.Secrets, function byName({ name }) { return name; });'),
    ).toMatchObject({
      pods: ['get', 'list', 'watch'],
      secrets: ['get', 'list', 'watch'],
    });
  });

  it('R-SEC-402 an event handler that writes patch or returns a value (stored in status) patches', () => {
    expect(grantsOf('on.event(builtins.Pods, function seen({ patch }) { patch.metadata.labels.seen = "yes"; });')).toMatchObject({
      pods: ['get', 'list', 'watch', 'patch'],
      'pods/status': ['patch'],
    });
    expect(grantsOf('on.event(builtins.ConfigMaps, (event) => event.type);')).toMatchObject({ configmaps: ['get', 'list', 'watch', 'patch'] });
  });

  it('R-SEC-402 a reconcile-only kind without patch: get, list, watch; its owns and watches kinds too', () => {
    const text = `on.reconcile(Widgets, { owns: [builtins.Jobs, builtins.Pods], watches: [{ resource: builtins.Secrets, map: (s) => null }] }, async function reconcileWidget({ owned, spec, logger }) {
  logger.info(String(owned.length));
});`;
    expect(grantsOf(text)).toEqual({
      widgets: ['get', 'list', 'watch'],
      pods: ['get', 'list', 'watch'],
      secrets: ['get', 'list', 'watch'],
      jobs: ['get', 'list', 'watch'],
    });
  });

  it.each([
    ['destructures patch', 'async function r({ patch }) { patch.status.phase = "ok"; }'],
    ['reads args.patch', 'async function r(args) { args.patch.status.phase = "ok"; }'],
    ['destructures the rest', 'async function r({ name, ...rest }) { use(rest); }'],
    ['is defined elsewhere', 'imported'],
  ])('R-SEC-402 a reconcile handler that %s: patch, and patch of the status subresource', (_, handler) => {
    expect(grantsOf(`on.reconcile(Widgets, ${handler});`)).toEqual({
      widgets: ['get', 'list', 'watch', 'patch'],
      'widgets/status': ['patch'],
    });
  });

  it('R-SEC-402 reconcile with finalize: patch for the finalizer, no status patch', () => {
    expect(grantsOf('on.reconcile(Widgets, { finalize: async ({ name }) => {} }, async function r({ name }) {});')).toEqual({
      widgets: ['get', 'list', 'watch', 'patch'],
    });
    expect(grantsOf('on.reconcile(Widgets, { async finalize({ patch }) { patch.status.phase = "gone"; } }, async function r({ name }) {});')).toEqual({
      widgets: ['get', 'list', 'watch', 'patch'],
      'widgets/status': ['patch'],
    });
  });
});

describe('R-SEC-403 the typed client calls', () => {
  it('R-SEC-403 a kind the code creates and deletes, and never patches: exactly create, delete, get, list, watch', () => {
    const text = `on.reconcile(Widgets, { owns: [builtins.Jobs] }, async function reconcileWidget({ owned: [jobs], client, name, namespace }) {
  for (const job of jobs) if (job.status?.succeeded) await client.delete(builtins.Jobs, job.metadata.name, { namespace });
  if (jobs.length === 0) await client.create(builtins.Jobs, { metadata: { name } });
});`;
    expect(grantsOf(text)).toEqual({ widgets: ['get', 'list', 'watch'], jobs: ['get', 'list', 'watch', 'create', 'delete'] });
  });

  it('R-SEC-403 each method its verb: apply and patch → patch, replace → update, iterate and pages → list', () => {
    const text = `on.create(Widgets, async function c(args) {
  const { client: c } = args;
  await c.apply(builtins.ConfigMaps, {}, { fieldManager: 'me' });
  await args.client.replace(builtins.Secrets, {});
  for await (const s of c.iterate(builtins.Services)) {}
  for await (const p of args.client.pages(builtins.Pods)) {}
  await c.get(builtins.Nodes, 'n');
  await c.list(builtins.Endpoints);
  await c.patch(builtins.Deployments, 'd', {});
  await c.close();
});`;
    expect(grantsOf(text)).toEqual({
      widgets: ['get', 'list', 'watch', 'patch'],
      'widgets/status': ['patch'],
      configmaps: ['patch'],
      secrets: ['update'],
      services: ['list'],
      pods: ['list'],
      nodes: ['get'],
      endpoints: ['list'],
      deployments: ['patch'],
    });
  });

  it("R-SEC-403 status writes through { subresource: 'status' }: patch on <plural>/status only", () => {
    const text = `on.reconcile(Widgets, async function r({ client, name, namespace }) {
  await client.patch(Widgets, name, { status: { phase: 'Ready' } }, { namespace, subresource: 'status' });
  await client.replace(builtins.Deployments, {}, { subresource: 'scale' });
});`;
    expect(grantsOf(text)).toEqual({
      widgets: ['get', 'list', 'watch'],
      'widgets/status': ['patch'],
      'deployments/scale': ['update'],
    });
  });

  it('R-SEC-403 a connect() client, generated descriptors through every import form, descriptors kept in constants', () => {
    const text = [
      "import { connect as open } from 'kopf-gen/runtime';",
      "import * as kopf from 'kopf-gen/runtime';",
      "import * as g from '../generated/index.js';",
      "import { WidgetV1 } from '../generated/index.js';",
      "import { Widgets as W } from '../generated/widgets.example.com.v1.js';",
      'const JOBS = kopf.builtins.Jobs;',
      'const client = await open();',
      "await client.create(g.Widgets, {});\nawait client.delete(g.WidgetV1.Widgets, 'a');\nawait client.get(WidgetV1.Widgets, 'b');",
      "await (await kopf.connect()).list(W);\nawait client.create(JOBS, {});\nconst { Pods } = kopf.builtins;\nawait client['delete'](Pods, 'p');",
    ].join('\n');
    expect(grantsOf(text, false)).toEqual({ widgets: ['get', 'list', 'create', 'delete'], jobs: ['create'], pods: ['delete'] });
  });

  it("R-SEC-403 a generated descriptor re-exported by a module of the user's", () => {
    const modules = [
      { path: 'src/lib/kinds.ts', text: "export { Widgets as Things } from '../generated/index.js';\n" },
      {
        path: 'src/handlers/widget.ts',
        text: "import { on } from 'kopf-gen/runtime';\nimport { Things } from '../lib/kinds.js';\non.reconcile(Things, async function r({ client }) { await client.delete(Things, 'x'); });\n",
      },
    ];
    const scanned = accesses.scan(modules, GENERATED);
    expect(scanned.unfollowed).toEqual([]);
    expect(scanned.accesses.map((access) => [access.by, access.kind, access.verbs])).toEqual([
      ['on.reconcile', { crd: 'widgets.example.com' }, ['get', 'list', 'watch']],
      ['client.delete', { crd: 'widgets.example.com' }, ['delete']],
    ]);
  });

  it('R-SEC-403 calls on what is not a typed client, and methods that are no verb, grant nothing', () => {
    expect(
      grantsOf(
        'const store = new Map(); store.delete(builtins.Pods); const { client } = cache(); client.get("key"); on.event(Widgets, function e({ client }) { client.close(); });',
      ),
    ).toEqual({
      widgets: ['get', 'list', 'watch'],
    });
  });
});

describe('R-SEC-404 what the scan cannot follow', () => {
  it('R-SEC-404 a descriptor in a variable, a computed verb or subresource, options not inline: warnings with file and line, no rule', () => {
    const text = `on.reconcile(Widgets, async function r({ client, name }) {
  let kind = builtins.Jobs;
  await client.create(kind, {});
  const verb = 'delete';
  await client[verb](builtins.Pods, name);
  await client.patch(Widgets, name, {}, { subresource: which() });
});
on.create(resourceOf(), function c() {});
const options = { owns: [builtins.Jobs] };
on.reconcile(Widgets, options, function r2() {});
on.event('widgets', function e() {});`;
    expect(unfollowedOf(text)).toEqual([
      'src/handlers/widget.ts:5: client.create(kind, …): the resource is not a descriptor kopf-gen can follow (builtins.X or a generated descriptor); deploy/rbac.yaml has no rule for it: grant what it needs in deploy/rbac-handlers.yaml.',
      'src/handlers/widget.ts:7: client[verb](…): a computed client method; deploy/rbac.yaml has no rule for it: grant what it needs in deploy/rbac-handlers.yaml.',
      'src/handlers/widget.ts:8: client.patch(…, { subresource: which() }): a computed subresource; deploy/rbac.yaml has no rule for it: grant what it needs in deploy/rbac-handlers.yaml.',
      'src/handlers/widget.ts:10: on.create(resourceOf()): the resource is not a descriptor kopf-gen can follow (builtins.X, a generated descriptor, or a literal reference); deploy/rbac.yaml has no rule for it: grant what it needs in deploy/rbac-handlers.yaml.',
      'src/handlers/widget.ts:12: on.reconcile: its options are not written inline, so their owns/watches kinds are not followed; deploy/rbac.yaml has no rule for it: grant what it needs in deploy/rbac-handlers.yaml.',
      "src/handlers/widget.ts:13: on.event('widgets'): names no built-in kind (register the project's own kinds with their generated descriptor); deploy/rbac.yaml has no rule for it: grant what it needs in deploy/rbac-handlers.yaml.",
    ]);
    expect(grantsOf(text)).toEqual({ widgets: ['get', 'list', 'watch'] });
  });
});
