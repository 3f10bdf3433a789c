import { describe, expect, it } from 'vitest';
import { makeResource } from '../../../../runtime/cogs/structs/references.js';
import { isDescriptor } from '../../../../runtime/cogs/structs/resources.js';
import { builtins } from '../../../../runtime/core/intents/builtins.js';
import { parseSelector } from '../../../../runtime/core/intents/selectors.js';

describe('builtins', () => {
  it('are descriptors with the right API versions and scopes', () => {
    for (const descriptor of Object.values(builtins)) expect(isDescriptor(descriptor)).toBe(true);
    expect(builtins.Pods).toMatchObject({ apiVersion: 'v1', plural: 'pods', kind: 'Pod', namespaced: true, statusSubresource: true });
    expect(builtins.Deployments.apiVersion).toBe('apps/v1');
    expect(builtins.Namespaces.namespaced).toBe(false);
    expect(builtins.CustomResourceDefinitions.apiVersion).toBe('apiextensions.k8s.io/v1');
  });

  it('A-29 select exactly their resource, not same-named ones of other groups', () => {
    const pods = makeResource({ group: '', version: 'v1', plural: 'pods', kind: 'Pod' });
    const metrics = makeResource({ group: 'metrics.k8s.io', version: 'v1beta1', plural: 'pods', kind: 'PodMetrics' });
    expect(parseSelector(builtins.Pods).select([metrics, pods])).toEqual([pods]);
  });
});
