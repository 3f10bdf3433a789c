/**
 * Built-in kinds in the generated RBAC: the generator's table of built-in resources agrees with
 * the runtime's `builtins` descriptors; literal references select them as the runtime's selectors
 * do; the user's code is searched for them (descriptors and literal references, through every
 * import form); and the permissions grant them what CRD kinds get, in the right scope.
 */
import { describe, expect, it } from 'vitest';
import * as accesses from '../../generator/accesses.js';
import * as builtins from '../../generator/builtins.js';
import * as permissions from '../../generator/permissions.js';
import * as selectors from '../../runtime/core/intents/selectors.js';
import * as references from '../../runtime/cogs/structs/references.js';
import { builtins as runtimeBuiltins } from '../../runtime/index.js';
import * as support from './support.js';

describe('the table of built-in resources', () => {
  it("has exactly the runtime's descriptors, with the same group, version, plural, kind, scope, names and status subresource", () => {
    const runtime = Object.entries(runtimeBuiltins).map(([descriptor, info]) => ({
      descriptor,
      group: info.group,
      version: info.version,
      plural: info.plural,
      kind: info.kind,
      namespaced: info.namespaced,
      shortNames: info.shortNames ?? [],
      categories: info.categories ?? [],
      statusSubresource: info.statusSubresource ?? false,
    }));
    expect(builtins.BUILTIN_RESOURCES).toEqual(runtime);
  });
});

describe('literal references to built-in resources', () => {
  const plurals = (ref: builtins.LiteralReference): string[] => builtins.resolveReference(ref).map((resource) => resource.plural);

  it.each<[builtins.LiteralReference, string[]]>([
    ['configmaps', ['configmaps']],
    ['ConfigMap', ['configmaps']],
    ['configmap', ['configmaps']],
    ['cm', ['configmaps']],
    ['pods.v1', ['pods']],
    ['deployments.apps', ['deployments']],
    ['deployments.v1.apps', ['deployments']],
    ['deployments.v1beta1.apps', []],
    ['ingresses.networking.k8s.io', ['ingresses']],
    [['v1', 'secrets'], ['secrets']],
    [['apps/v1', 'sts'], ['statefulsets']],
    [['batch', 'v1', 'cronjobs'], ['cronjobs']],
    [['batch', 'jobs'], ['jobs']],
    [{ kind: 'Node' }, ['nodes']],
    [{ plural: 'leases', group: 'coordination.k8s.io' }, ['leases']],
    [{ category: 'all' }, ['pods', 'services', 'deployments', 'statefulsets', 'daemonsets', 'replicasets', 'jobs', 'cronjobs']],
    ['widgets', []],
    ['widgets.example.com', []],
    ['', []],
    [{ kind: 'Pod', plural: 'pods' }, []],
    [{ kind: 'Pod', namespace: 'x' }, []],
  ])('%j selects %j', (ref, expected) => {
    expect(plurals(ref)).toEqual(expected);
  });

  it("selects what the runtime's selectors select among the same resources", () => {
    const discovered = builtins.BUILTIN_RESOURCES.map((resource) =>
      references.makeResource({
        group: resource.group,
        version: resource.version,
        plural: resource.plural,
        kind: resource.kind,
        namespaced: resource.namespaced,
        shortcuts: resource.shortNames,
        categories: resource.categories,
      }),
    );
    const refs: builtins.LiteralReference[] = [
      'cm',
      'Pod',
      'events',
      'deployments.apps',
      'pods.v1',
      ['apps/v1', 'ds'],
      ['v1', 'nodes'],
      { category: 'all' },
      { shortcut: 'pvc' },
    ];
    for (const ref of refs) {
      const expected = selectors
        .parseSelector(ref as selectors.ResourceRef)
        .select(discovered)
        .map((resource) => resource.plural);
      expect(plurals(ref), JSON.stringify(ref)).toEqual(expected);
    }
  });
});

describe("built-in resources in the user's code", () => {
  const found = (text: string): string[] => accesses.builtinReferences([{ path: 'src/handlers/a.ts', text }]).map((resource) => resource.descriptor);

  it.each<[string, string, string[]]>([
    ['a descriptor through the named import', "import { builtins, on } from 'kopf-gen/runtime'; on.create(builtins.ConfigMaps, f);", ['ConfigMaps']],
    ['a descriptor through a constant', "import { builtins as b, on } from 'kopf-gen/runtime'; const target = b.Pods; on.create(target, f);", ['Pods']],
    ['a descriptor from the package root', "import { builtins, on } from 'kopf-gen'; on.event(builtins.Nodes, f);", ['Nodes']],
    ['a descriptor through a namespace import', "import * as kopf from 'kopf-gen/runtime'; kopf.on.create(kopf.builtins.Secrets, f);", ['Secrets']],
    ['an element access', "import { builtins, on } from 'kopf-gen/runtime'; on.create(builtins['Jobs'], f);", ['Jobs']],
    [
      'destructured descriptors, used',
      "import { builtins, on } from 'kopf-gen/runtime'; const { Deployments, Services: S, Pods } = builtins; on.create(Deployments, f); on.event(S, f);",
      ['Services', 'Deployments'],
    ],
    ['a string reference', "import { on } from 'kopf-gen/runtime'; on.create('configmaps', f);", ['ConfigMaps']],
    [
      'a tuple reference to a field handler',
      "import { on } from 'kopf-gen/runtime'; on.field(['apps/v1', 'deployments'], 'spec.replicas', f);",
      ['Deployments'],
    ],
    ['an object reference through an aliased `on`', "import { on as kopfOn } from 'kopf-gen/runtime'; kopfOn.update({ kind: 'Secret' }, f);", ['Secrets']],
    [
      'the daemon, timer and index aliases',
      "import { daemon, timer as t, index } from 'kopf-gen/runtime'; daemon('pods', f); t(`leases`, f); index('sa', f);",
      ['Pods', 'ServiceAccounts', 'Leases'],
    ],
    [
      'registrations through a namespace import',
      "import * as kopf from 'kopf-gen/runtime'; kopf.daemon('pvc', f); kopf.on.resume('cj', f);",
      ['PersistentVolumeClaims', 'CronJobs'],
    ],
    [
      'no CRD kinds',
      "import { on } from 'kopf-gen/runtime'; import { Widgets } from '../generated/index.js'; on.create(Widgets, f); on.create('widgets', f);",
      [],
    ],
    ['no unknown descriptors', "import { builtins } from 'kopf-gen/runtime'; on.create(builtins.Widgets, f);", []],
    ['no `builtins` of another module', "import { builtins } from './mine.js'; on.create(builtins.Pods, f);", []],
    ['no registrations of another module', "import { on } from './mine.js'; on.create('pods', f);", []],
    ['no references built at run time', "import { on } from 'kopf-gen/runtime'; const kind = 'pods'; on.create(kind, f); on.create(`${kind}`, f);", []],
    ['no admission handlers or activities', "import { on } from 'kopf-gen/runtime'; on.validate('pods', f); on.startup({ id: 'cm' }, f);", []],
    ['nothing in comments', "// import { builtins } from 'kopf-gen/runtime'; on.create(builtins.Pods, f);", []],
  ])('%s', (_, text, expected) => {
    expect(found(text)).toEqual([...expected].sort((a, b) => order(a) - order(b)));
  });

  it('collects the resources of every module, each once', () => {
    const modules = [
      { path: 'src/handlers/a.ts', text: "import { builtins, on } from 'kopf-gen/runtime'; on.create(builtins.Pods, f); on.update('pods', f);" },
      { path: 'src/lib/b.ts', text: "import { on } from 'kopf-gen/runtime'; on.delete('configmaps', f);" },
    ];
    expect(accesses.builtinReferences(modules).map((resource) => resource.plural)).toEqual(['pods', 'configmaps']);
  });
});

function order(descriptor: string): number {
  return builtins.BUILTIN_RESOURCES.findIndex((resource) => resource.descriptor === descriptor);
}

describe('permissions for built-in resources', () => {
  const { model } = support.generate([support.source([support.crd({ type: 'object' })])]);
  /** What cause handlers registered for these built-in kinds need (accesses.ts). */
  const pick = (...names: string[]): accesses.Access[] =>
    names.flatMap((name) => {
      const kind = { builtin: builtins.byDescriptor(name)! };
      const place = { path: 'src/handlers/a.ts', line: 1, by: 'on.create' };
      return [
        { ...place, kind, verbs: ['get', 'list', 'watch', 'patch'] as const },
        { ...place, kind, verbs: ['patch'] as const, subresource: 'status', ifPresent: true },
      ];
    });
  const grants = (rules: readonly permissions.Rule[], group: string, resource: string): string[] =>
    rules.filter((rule) => rule.apiGroups.includes(group) && rule.resources.includes(resource)).flatMap((rule) => rule.verbs);

  it('grants watched built-in resources the verbs of served CRDs, in their scope, with patch on their status subresource', () => {
    const rules = permissions.permissionsOf(model, pick('ConfigMaps', 'Deployments', 'Nodes'));
    expect(grants(rules.namespaced, '', 'configmaps')).toEqual([...permissions.SERVED_VERBS]);
    expect(grants(rules.namespaced, '', 'configmaps/status')).toEqual([]);
    expect(grants(rules.namespaced, 'apps', 'deployments')).toEqual(grants(rules.namespaced, 'example.com', 'widgets'));
    expect(grants(rules.namespaced, 'apps', 'deployments/status')).toEqual(['patch']);
    expect(grants(rules.cluster, '', 'nodes')).toEqual([...permissions.SERVED_VERBS]);
    expect(grants(rules.cluster, '', 'nodes/status')).toEqual(['patch']);
    expect(grants(rules.namespaced, '', 'nodes')).toEqual([]);
  });

  it('grants nothing for built-in resources that are not watched', () => {
    const rules = permissions.permissionsOf(model);
    expect(grants(rules.namespaced, '', 'configmaps')).toEqual([]);
    expect(grants(rules.namespaced, '', 'pods')).toEqual([]);
    expect(permissions.permissionsOf(model, [])).toEqual(rules);
  });
});
