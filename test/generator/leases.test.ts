/**
 * The generated RBAC lets an operator run Lease election (`--lease`): exactly the verbs the elector
 * uses on `coordination.k8s.io` Leases (get, create, and update for its optimistic PUTs), nothing
 * more, in the namespaced rules (bound where the operator runs).
 */
import { describe, expect, it } from 'vitest';
import * as permissions from '../../generator/permissions.js';
import * as support from './support.js';

describe('permissions for Lease election', () => {
  const { model } = support.generate([support.source([support.crd({ type: 'object' })])]);

  it('Lease election: the namespaced rules grant get, create and update on leases, and nothing cluster-wide', () => {
    const rules = permissions.permissionsOf(model);
    const leases = (list: readonly permissions.Rule[]): permissions.Rule[] => list.filter((rule) => rule.apiGroups.includes('coordination.k8s.io'));
    expect(leases(rules.namespaced).map((rule) => ({ resources: rule.resources, verbs: rule.verbs }))).toEqual([
      { resources: ['leases'], verbs: ['get', 'create', 'update'] },
    ]);
    expect(leases(rules.cluster)).toEqual([]);
  });
});
