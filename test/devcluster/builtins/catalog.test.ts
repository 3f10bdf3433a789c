import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type * as resources from '../../../devcluster/api/resources.js';
import * as catalog from '../../../devcluster/builtins/catalog.js';
import * as configmaps from '../../../devcluster/builtins/configmaps.js';
import * as cronjobs from '../../../devcluster/builtins/cronjobs.js';
import * as daemonsets from '../../../devcluster/builtins/daemonsets.js';
import * as deployments from '../../../devcluster/builtins/deployments.js';
import * as events from '../../../devcluster/builtins/events.js';
import * as eventsv1 from '../../../devcluster/builtins/eventsv1.js';
import * as jobs from '../../../devcluster/builtins/jobs.js';
import * as leases from '../../../devcluster/builtins/leases.js';
import * as persistentvolumeclaims from '../../../devcluster/builtins/persistentvolumeclaims.js';
import * as pods from '../../../devcluster/builtins/pods.js';
import * as replicasets from '../../../devcluster/builtins/replicasets.js';
import * as replicationcontrollers from '../../../devcluster/builtins/replicationcontrollers.js';
import * as secrets from '../../../devcluster/builtins/secrets.js';
import * as services from '../../../devcluster/builtins/services.js';
import * as statefulsets from '../../../devcluster/builtins/statefulsets.js';
import * as upstream from '../../../devcluster/upstream/catalog.js';

const byResource = (group: string, resource: string) => catalog.builtinTypes().find((t) => t.group === group && t.resource === resource)!;

describe('catalog', () => {
  // Every strategy is wrapped in the schema layer (D-BI-20/21), which keeps the kind's own hooks.
  const ownHooksOf = (s: resources.Strategy) => ({ create: s.prepareForCreate, update: s.prepareForUpdate, smp: s.smpSchema, generation: s.generation });

  it('D-BI-1 every kind with a module is served with its own strategy', () => {
    expect(ownHooksOf(byResource('', 'pods').strategy)).toEqual(ownHooksOf(pods.podStrategy));
    expect(ownHooksOf(byResource('', 'services').strategy)).toEqual(ownHooksOf(services.serviceStrategy));
    expect(ownHooksOf(byResource('', 'configmaps').strategy)).toEqual(ownHooksOf(configmaps.configMapStrategy));
    expect(ownHooksOf(byResource('', 'secrets').strategy)).toEqual(ownHooksOf(secrets.secretStrategy));
    expect(ownHooksOf(byResource('', 'events').strategy)).toEqual(ownHooksOf(events.eventStrategy));
    expect(ownHooksOf(byResource('events.k8s.io', 'events').strategy)).toEqual(ownHooksOf(eventsv1.eventsV1Strategy));
    expect(ownHooksOf(byResource('apps', 'deployments').strategy)).toEqual(ownHooksOf(deployments.deploymentStrategy));
    expect(ownHooksOf(byResource('coordination.k8s.io', 'leases').strategy)).toEqual(ownHooksOf(leases.leaseStrategy));
    expect(byResource('admissionregistration.k8s.io', 'mutatingwebhookconfigurations').strategy.validate).toBeDefined();
  });

  it('D-BI-13 D-BI-14 D-BI-15 D-BI-16 the workload and claim kinds are served with their own strategies and their schema merge keys', () => {
    const own = (s: resources.Strategy) => ({ create: s.prepareForCreate, update: s.prepareForUpdate, generation: s.generation });
    expect(own(byResource('batch', 'jobs').strategy)).toEqual(own(jobs.jobStrategy));
    expect(own(byResource('batch', 'cronjobs').strategy)).toEqual(own(cronjobs.cronJobStrategy));
    expect(own(byResource('apps', 'statefulsets').strategy)).toEqual(own(statefulsets.statefulSetStrategy));
    expect(own(byResource('apps', 'daemonsets').strategy)).toEqual(own(daemonsets.daemonSetStrategy));
    expect(own(byResource('apps', 'replicasets').strategy)).toEqual(own(replicasets.replicaSetStrategy));
    expect(own(byResource('', 'replicationcontrollers').strategy)).toEqual(own(replicationcontrollers.replicationControllerStrategy));
    expect(own(byResource('', 'persistentvolumeclaims').strategy)).toEqual(own(persistentvolumeclaims.persistentVolumeClaimStrategy));
    // Merge keys come from the upstream schema: the containers of a Job's template merge by name.
    expect(byResource('batch', 'jobs').strategy.smpSchema!(['spec', 'template', 'spec', 'containers'])).toEqual({ mergeKey: 'name' });
    expect(byResource('', 'replicationcontrollers').scale).toMatchObject({ labelSelectorPath: '.spec.selector', selectorIsMap: true });
    expect(byResource('', 'componentstatuses').deprecationWarning).toBe('v1 ComponentStatus is deprecated in v1.19+');
  });

  it('D-BI-19 the user guide lists every served built-in resource, in its group', () => {
    const guide = fs.readFileSync(path.resolve(import.meta.dirname, '../../../docs/devcluster.md'), 'utf8');
    const start = guide.indexOf('### Served resources');
    const table = guide.slice(start, guide.indexOf('\n### ', start + 1));
    const rows = table.split('\n').filter((line) => line.startsWith('| `'));
    for (const e of upstream.entries()) {
      const groupVersion = e.group ? `${e.group}/${e.version}` : 'v1';
      const row = rows.find((r) => (r.split('|')[1] ?? '').includes(`\`${groupVersion}\``));
      expect(row, `a row for ${groupVersion}`).toBeDefined();
      expect(row, `${groupVersion} ${e.resource}`).toContain(`\`${e.resource}\``);
    }
    expect(upstream.entries()).toHaveLength(59);
  });

  it.each([
    ['', 'namespaces', { putCreates: false, requireResourceVersion: false, generation: false }],
    ['', 'configmaps', { putCreates: false, requireResourceVersion: false, generation: false }],
    ['', 'secrets', { putCreates: false, requireResourceVersion: false, generation: false }],
    ['', 'pods', { putCreates: false, requireResourceVersion: false, generation: true }],
    ['', 'services', { putCreates: false, requireResourceVersion: false, generation: false }],
    ['', 'serviceaccounts', { putCreates: false, requireResourceVersion: false, generation: false }],
    ['', 'events', { putCreates: true, requireResourceVersion: false, generation: false }],
    ['events.k8s.io', 'events', { putCreates: true, requireResourceVersion: false, generation: false }],
    ['apps', 'deployments', { putCreates: false, requireResourceVersion: false, generation: true }],
    ['coordination.k8s.io', 'leases', { putCreates: true, requireResourceVersion: true, generation: false }],
    ['admissionregistration.k8s.io', 'validatingwebhookconfigurations', { putCreates: false, requireResourceVersion: true, generation: true }],
    ['admissionregistration.k8s.io', 'mutatingwebhookconfigurations', { putCreates: false, requireResourceVersion: true, generation: true }],
  ])('D-BI-1 %s/%s has the flags of the table', (group, resource, flags) => {
    const s = byResource(group, resource).strategy;
    expect({ putCreates: s.putCreates, requireResourceVersion: s.requireResourceVersion, generation: s.generation !== undefined }).toEqual(flags);
  });

  it('D-BI-1 both event types share one storage; Service names follow DNS-1035', () => {
    expect(byResource('', 'events').storage).toBe(byResource('events.k8s.io', 'events').storage);
    expect(byResource('', 'services').strategy.nameRule).toBe('dns1035');
    expect(byResource('apps', 'deployments').scale).toEqual({
      specReplicasPath: '.spec.replicas',
      statusReplicasPath: '.status.replicas',
      labelSelectorPath: '.spec.selector',
    });
  });

  it('D-BI-22 kinds with a module of their own track list items by key for apply, as the generic kinds do', () => {
    expect(byResource('', 'pods').strategy.listSemantics?.(['spec', 'containers'])).toEqual({ type: 'map', keys: ['name'] });
    expect(byResource('apps', 'deployments').strategy.listSemantics?.(['spec', 'template', 'spec', 'containers'])).toEqual({ type: 'map', keys: ['name'] });
    expect(byResource('', 'services').strategy.listSemantics?.(['spec', 'ports'])).toEqual({ type: 'map', keys: ['port', 'protocol'] });
    expect(byResource('batch', 'jobs').strategy.listSemantics?.(['spec', 'template', 'spec', 'containers'])).toEqual({ type: 'map', keys: ['name'] });
  });

  it('a strategy registered in kindStrategies replaces the built-in one', () => {
    const custom = catalog.plainStrategy('ConfigMap', { putCreates: true });
    catalog.kindStrategies.set('ConfigMap', custom);
    try {
      expect(byResource('', 'configmaps').strategy.putCreates).toBe(true);
    } finally {
      catalog.kindStrategies.delete('ConfigMap');
    }
    expect(byResource('', 'configmaps').strategy.putCreates).toBe(false);
  });
});
