import { describe, expect, it } from 'vitest';

import * as strategic from '../../../devcluster/patching/strategic.js';
import { deepFreeze } from './freezing.js';

const deploymentSchema = strategic.builtinSmpSchema('Deployment');
const podSchema = strategic.builtinSmpSchema('Pod');

function smp(kind: string, original: unknown, patch: unknown): unknown {
  return strategic.applyStrategicMergePatch(original, patch, strategic.builtinSmpSchema(kind));
}

/** The error code thrown by `fn`, or `undefined` when it does not throw a StrategicMergeError. */
function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof strategic.StrategicMergeError) return err.code;
    throw err;
  }
  return undefined;
}

/** A Deployment whose pod template has the given containers (and optionally volumes). */
function deployment(containers: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd' },
    spec: { replicas: 1, template: { metadata: { labels: { app: 'd' } }, spec: { containers, ...extra } } },
  };
}

function templateSpec(result: unknown): Record<string, unknown> {
  return (result as { spec: { template: { spec: Record<string, unknown> } } }).spec.template.spec;
}

const containerA = { name: 'a', image: 'a:1', ports: [{ containerPort: 80 }] };
const containerB = { name: 'b', image: 'b:1', args: ['--x'] };

describe('applyStrategicMergePatch: lists merged by key (D-VERB-21)', () => {
  it('D-VERB-21 containers merge by name: a is kept, b gets the new image (C-41)', () => {
    const result = strategic.applyStrategicMergePatch(
      deployment([containerA, containerB]),
      { spec: { template: { spec: { containers: [{ name: 'b', image: 'x:2' }] } } } },
      deploymentSchema,
    );
    expect(templateSpec(result)['containers']).toEqual([containerA, { name: 'b', image: 'x:2', args: ['--x'] }]);
  });

  it('D-VERB-21 "$patch": "delete" removes the matching container (C-42)', () => {
    const result = strategic.applyStrategicMergePatch(
      deployment([containerA, containerB]),
      { spec: { template: { spec: { containers: [{ name: 'a', $patch: 'delete' }] } } } },
      deploymentSchema,
    );
    expect(templateSpec(result)['containers']).toEqual([containerB]);
  });

  it('D-VERB-21 unmatched items are appended after the current ones', () => {
    const result = strategic.applyStrategicMergePatch(
      deployment([containerA]),
      {
        spec: {
          template: {
            spec: {
              containers: [
                { name: 'c', image: 'c:1' },
                { name: 'a', image: 'a:2' },
              ],
            },
          },
        },
      },
      deploymentSchema,
    );
    expect(templateSpec(result)['containers']).toEqual([
      { ...containerA, image: 'a:2' },
      { name: 'c', image: 'c:1' },
    ]);
  });

  it('D-VERB-21 a deleted item can be re-added by a later item of the same patch', () => {
    const result = strategic.applyStrategicMergePatch(
      deployment([containerA, containerB]),
      {
        spec: {
          template: {
            spec: {
              containers: [
                { name: 'a', $patch: 'delete' },
                { name: 'a', image: 'new' },
              ],
            },
          },
        },
      },
      deploymentSchema,
    );
    expect(templateSpec(result)['containers']).toEqual([containerB, { name: 'a', image: 'new' }]);
  });

  it('D-VERB-21 container ports merge by containerPort and env by name, inside a matched container', () => {
    const original = deployment([
      {
        name: 'a',
        ports: [{ containerPort: 80, name: 'http' }],
        env: [
          { name: 'X', value: '1' },
          { name: 'Y', value: '2' },
        ],
      },
    ]);
    const result = strategic.applyStrategicMergePatch(
      original,
      {
        spec: {
          template: {
            spec: {
              containers: [
                {
                  name: 'a',
                  ports: [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 443 }],
                  env: [{ name: 'Y', value: null, valueFrom: { fieldRef: { fieldPath: 'x' } } }],
                },
              ],
            },
          },
        },
      },
      deploymentSchema,
    );
    expect(templateSpec(result)['containers']).toEqual([
      {
        name: 'a',
        ports: [{ containerPort: 80, name: 'http', protocol: 'TCP' }, { containerPort: 443 }],
        env: [
          { name: 'X', value: '1' },
          { name: 'Y', valueFrom: { fieldRef: { fieldPath: 'x' } } },
        ],
      },
    ]);
  });

  it('D-VERB-21 pod spec lists use the pod spec at "spec" for a Pod', () => {
    const pod = { kind: 'Pod', spec: { containers: [containerA], volumes: [{ name: 'v', emptyDir: {} }] } };
    const result = strategic.applyStrategicMergePatch(
      pod,
      {
        spec: { containers: [{ name: 'a', image: 'a:2' }], volumes: [{ name: 'w', emptyDir: {} }] },
      },
      podSchema,
    ) as { spec: Record<string, unknown> };
    expect(result.spec['containers']).toEqual([{ ...containerA, image: 'a:2' }]);
    expect(result.spec['volumes']).toEqual([
      { name: 'v', emptyDir: {} },
      { name: 'w', emptyDir: {} },
    ]);
  });

  it('D-VERB-21 status.conditions merge by type', () => {
    const original = {
      status: {
        conditions: [
          { type: 'Ready', status: 'False' },
          { type: 'Scheduled', status: 'True' },
        ],
      },
    };
    const result = smp('Pod', original, { status: { conditions: [{ type: 'Ready', status: 'True' }] } });
    expect(result).toEqual({
      status: {
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'Scheduled', status: 'True' },
        ],
      },
    });
  });

  it('D-VERB-21 ownerReferences merge by uid for any kind', () => {
    const original = { metadata: { ownerReferences: [{ uid: '1', name: 'a', controller: true }] } };
    const result = smp('ConfigMap', original, {
      metadata: {
        ownerReferences: [
          { uid: '1', controller: null },
          { uid: '2', name: 'b' },
        ],
      },
    });
    expect(result).toEqual({
      metadata: {
        ownerReferences: [
          { uid: '1', name: 'a' },
          { uid: '2', name: 'b' },
        ],
      },
    });
  });

  it('D-VERB-21 Service ports merge by port', () => {
    const original = { spec: { ports: [{ port: 80, targetPort: 8080 }, { port: 443 }] } };
    const result = smp('Service', original, { spec: { ports: [{ port: 80, targetPort: 9090 }] } });
    expect(result).toEqual({ spec: { ports: [{ port: 80, targetPort: 9090 }, { port: 443 }] } });
  });

  it("D-VERB-21 webhooks merge by name and each webhook's matchConditions by name", () => {
    const original = { webhooks: [{ name: 'w1', matchConditions: [{ name: 'm1', expression: 'true' }], timeoutSeconds: 5 }, { name: 'w2' }] };
    const patch = { webhooks: [{ name: 'w1', matchConditions: [{ name: 'm2', expression: 'false' }] }] };
    for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
      expect(smp(kind, original, patch)).toEqual({
        webhooks: [
          {
            name: 'w1',
            matchConditions: [
              { name: 'm1', expression: 'true' },
              { name: 'm2', expression: 'false' },
            ],
            timeoutSeconds: 5,
          },
          { name: 'w2' },
        ],
      });
    }
  });

  it('D-VERB-21 ServiceAccount secrets and imagePullSecrets merge by name', () => {
    const original = { secrets: [{ name: 's1' }], imagePullSecrets: [{ name: 'p1' }] };
    const result = smp('ServiceAccount', original, { secrets: [{ name: 's2' }], imagePullSecrets: [{ name: 'p1', $patch: 'delete' }] });
    expect(result).toEqual({ secrets: [{ name: 's1' }, { name: 's2' }], imagePullSecrets: [] });
  });
});

describe('applyStrategicMergePatch: maps, atomic lists and primitive lists (D-VERB-21)', () => {
  it('D-VERB-21 maps merge and null deletes, as in a merge patch', () => {
    const original = { metadata: { labels: { a: '1', b: '2' } }, spec: { replicas: 1 } };
    const result = smp('Deployment', original, { metadata: { labels: { a: null, c: '3' } }, spec: { paused: true } });
    expect(result).toEqual({ metadata: { labels: { b: '2', c: '3' } }, spec: { replicas: 1, paused: true } });
  });

  it('D-VERB-21 finalizers form a union: ["y"] patched with ["x"] is ["y","x"] (C-42)', () => {
    expect(smp('ConfigMap', { metadata: { finalizers: ['y'] } }, { metadata: { finalizers: ['x'] } })).toEqual({ metadata: { finalizers: ['y', 'x'] } });
    expect(smp('Widget', { metadata: { finalizers: ['y', 'x'] } }, { metadata: { finalizers: ['x', 'z'] } })).toEqual({
      metadata: { finalizers: ['y', 'x', 'z'] },
    });
  });

  const atomic: Array<[title: string, kind: string, original: unknown, patch: unknown, expected: unknown]> = [
    [
      'container args',
      'Pod',
      { spec: { containers: [{ name: 'a', args: ['1', '2'] }] } },
      { spec: { containers: [{ name: 'a', args: ['3'] }] } },
      { spec: { containers: [{ name: 'a', args: ['3'] }] } },
    ],
    [
      'tolerations',
      'Pod',
      { spec: { tolerations: [{ key: 'a' }, { key: 'b' }] } },
      { spec: { tolerations: [{ key: 'c' }] } },
      { spec: { tolerations: [{ key: 'c' }] } },
    ],
    [
      'CRD spec.versions',
      'CustomResourceDefinition',
      { spec: { versions: [{ name: 'v1' }, { name: 'v2' }] } },
      { spec: { versions: [{ name: 'v1', served: false }] } },
      { spec: { versions: [{ name: 'v1', served: false }] } },
    ],
    [
      'Namespace spec.finalizers',
      'Namespace',
      { spec: { finalizers: ['kubernetes'] } },
      { spec: { finalizers: ['other'] } },
      { spec: { finalizers: ['other'] } },
    ],
    ['lists of a kind the table does not know', 'Widget', { spec: { items: [1, 2] } }, { spec: { items: [3] } }, { spec: { items: [3] } }],
  ];
  it.each(atomic)('D-VERB-21 lists without a strategy are replaced: %s', (_title, kind, original, patch, expected) => {
    expect(smp(kind, original, patch)).toEqual(expected);
  });

  it('D-VERB-21 a list replaces a value of another type and vice versa', () => {
    expect(smp('Pod', { spec: { containers: 'oops' } }, { spec: { containers: [{ name: 'a' }] } })).toEqual({ spec: { containers: [{ name: 'a' }] } });
    expect(smp('Pod', { spec: { containers: [{ name: 'a' }] } }, { spec: { containers: { name: 'a' } } })).toEqual({ spec: { containers: { name: 'a' } } });
  });
});

describe('applyStrategicMergePatch: directives (D-VERB-21)', () => {
  it('D-VERB-21 "$setElementOrder/containers" reorders the containers as given (C-42)', () => {
    const original = deployment([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    const result = strategic.applyStrategicMergePatch(
      original,
      {
        spec: {
          template: {
            spec: {
              '$setElementOrder/containers': [{ name: 'c' }, { name: 'a' }, { name: 'b' }],
            },
          },
        },
      },
      deploymentSchema,
    );
    expect(templateSpec(result)['containers']).toEqual([{ name: 'c' }, { name: 'a' }, { name: 'b' }]);
  });

  it('D-VERB-21 "$setElementOrder" orders a merged list, placing new items where listed', () => {
    const original = deployment([
      { name: 'a', image: 'a:1' },
      { name: 'b', image: 'b:1' },
    ]);
    const result = strategic.applyStrategicMergePatch(
      original,
      {
        spec: {
          template: {
            spec: {
              '$setElementOrder/containers': [{ name: 'n' }, { name: 'b' }, { name: 'a' }],
              containers: [
                { name: 'n', image: 'n:1' },
                { name: 'a', image: 'a:2' },
              ],
            },
          },
        },
      },
      deploymentSchema,
    );
    expect(templateSpec(result)['containers']).toEqual([
      { name: 'n', image: 'n:1' },
      { name: 'b', image: 'b:1' },
      { name: 'a', image: 'a:2' },
    ]);
  });

  it('D-VERB-21 items "$setElementOrder" does not list keep their relative order after the listed ones', () => {
    const original = deployment([{ name: 'a' }, { name: 'x' }, { name: 'b' }, { name: 'y' }]);
    const result = strategic.applyStrategicMergePatch(
      original,
      {
        spec: {
          template: {
            spec: {
              '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }],
            },
          },
        },
      },
      deploymentSchema,
    );
    expect(templateSpec(result)['containers']).toEqual([{ name: 'b' }, { name: 'a' }, { name: 'x' }, { name: 'y' }]);
  });

  it('D-VERB-21 kubectl apply of a changed volume: "$retainKeys" drops the old volume source', () => {
    // What kubectl's three-way patch sends when a volume changes from emptyDir to a ConfigMap.
    const original = deployment([containerA], {
      volumes: [
        { name: 'data', emptyDir: {} },
        { name: 'other', secret: { secretName: 's' } },
      ],
    });
    const patch = {
      spec: {
        template: {
          spec: {
            '$setElementOrder/volumes': [{ name: 'data' }, { name: 'other' }],
            volumes: [{ $retainKeys: ['configMap', 'name'], configMap: { name: 'cm' }, name: 'data' }],
          },
        },
      },
    };
    const result = strategic.applyStrategicMergePatch(original, patch, deploymentSchema);
    expect(templateSpec(result)['volumes']).toEqual([
      { name: 'data', configMap: { name: 'cm' } },
      { name: 'other', secret: { secretName: 's' } },
    ]);
  });

  it('D-VERB-21 "$retainKeys" on Deployment spec.strategy drops rollingUpdate', () => {
    const original = { spec: { replicas: 2, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } };
    const patch = { spec: { strategy: { $retainKeys: ['type'], rollingUpdate: null, type: 'Recreate' } } };
    expect(smp('Deployment', original, patch)).toEqual({ spec: { replicas: 2, strategy: { type: 'Recreate' } } });
  });

  it('D-VERB-21 a "$retainKeys" list that does not cover the patch\'s members is invalid', () => {
    const original = { spec: { strategy: { type: 'RollingUpdate' } } };
    const patch = { spec: { strategy: { $retainKeys: ['type'], type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } };
    expect(codeOf(() => smp('Deployment', original, patch))).toBe('invalid');
  });

  it('D-VERB-21 "$retainKeys" is ignored where the schema does not say retainKeys', () => {
    const original = { metadata: { labels: { a: '1' }, annotations: { b: '2' } } };
    expect(smp('Pod', original, { metadata: { $retainKeys: ['labels'], labels: { c: '3' } } })).toEqual({
      metadata: { labels: { a: '1', c: '3' }, annotations: { b: '2' } },
    });
  });

  it('D-VERB-21 kubectl apply removing a finalizer: "$deleteFromPrimitiveList/finalizers"', () => {
    const original = { metadata: { name: 'n', finalizers: ['a', 'b', 'c'] } };
    expect(smp('ConfigMap', original, { metadata: { '$deleteFromPrimitiveList/finalizers': ['b', 'zz'] } })).toEqual({
      metadata: { name: 'n', finalizers: ['a', 'c'] },
    });
  });

  it('D-VERB-21 kubectl apply replacing a finalizer: deletion, addition and order together', () => {
    const original = { metadata: { finalizers: ['a', 'b'] } };
    const patch = {
      metadata: {
        '$deleteFromPrimitiveList/finalizers': ['a'],
        '$setElementOrder/finalizers': ['c', 'b'],
        finalizers: ['c'],
      },
    };
    expect(smp('Deployment', original, patch)).toEqual({ metadata: { finalizers: ['c', 'b'] } });
  });

  it('D-VERB-21 "$patch": "replace" in a map replaces the whole map', () => {
    const original = { spec: { selector: { matchLabels: { a: '1' }, matchExpressions: [] } } };
    expect(smp('Deployment', original, { spec: { selector: { $patch: 'replace', matchLabels: { b: '2' } } } })).toEqual({
      spec: { selector: { matchLabels: { b: '2' } } },
    });
  });

  it('D-VERB-21 "$patch": "replace" at the root replaces the whole object', () => {
    expect(smp('ConfigMap', { data: { a: '1' }, metadata: { name: 'c' } }, { $patch: 'replace', data: { b: '2' } })).toEqual({ data: { b: '2' } });
  });

  it('D-VERB-21 "$patch": "delete" in a map empties it', () => {
    expect(smp('ConfigMap', { data: { a: '1' }, metadata: { name: 'c' } }, { data: { $patch: 'delete' } })).toEqual({ data: {}, metadata: { name: 'c' } });
  });

  it('D-VERB-21 a {"$patch": "replace"} list item replaces the whole list', () => {
    const result = strategic.applyStrategicMergePatch(
      deployment([containerA, containerB]),
      { spec: { template: { spec: { containers: [{ name: 'c', image: 'c:1' }, { $patch: 'replace' }] } } } },
      deploymentSchema,
    );
    expect(templateSpec(result)['containers']).toEqual([{ name: 'c', image: 'c:1' }]);
    expect(smp('Pod', { metadata: { finalizers: ['a', 'b'] } }, { metadata: { finalizers: [{ $patch: 'replace' }, 'c'] } })).toEqual({
      metadata: { finalizers: ['c'] },
    });
  });

  it('D-VERB-21 directive keys never appear in the result, even in values new to the object', () => {
    const original = { kind: 'Deployment', spec: { template: { spec: {} } } };
    const patch = {
      spec: {
        strategy: { $retainKeys: ['type'], type: 'Recreate' },
        template: {
          spec: {
            '$setElementOrder/volumes': [{ name: 'v' }],
            volumes: [{ $retainKeys: ['emptyDir', 'name'], name: 'v', emptyDir: { medium: null } }],
            containers: [
              { name: 'gone', $patch: 'delete' },
              {
                name: 'a',
                env: [
                  { name: 'X', $patch: 'delete' },
                  { name: 'Y', value: 'y' },
                ],
              },
            ],
            tolerations: [{ $patch: 'replace' }, { key: 'k' }],
            affinity: { $patch: 'replace', nodeAffinity: {} },
          },
        },
      },
    };
    const result = smp('Deployment', original, patch);
    expect(result).toEqual({
      kind: 'Deployment',
      spec: {
        strategy: { type: 'Recreate' },
        template: {
          spec: {
            volumes: [{ name: 'v', emptyDir: {} }],
            containers: [{ name: 'a', env: [{ name: 'Y', value: 'y' }] }],
            tolerations: [{ key: 'k' }],
            affinity: { nodeAffinity: {} },
          },
        },
      },
    });
    expect(JSON.stringify(result)).not.toContain('$');
  });
});

describe('applyStrategicMergePatch: errors (D-VERB-21)', () => {
  const malformed: Array<[title: string, patch: unknown]> = [
    ['a body that is not an object', [{ a: 1 }]],
    ['an unknown "$patch" in a map', { spec: { $patch: 'frobnicate' } }],
    ['an unknown "$patch" in a list item', { spec: { template: { spec: { containers: [{ name: 'a', $patch: 'nope' }] } } } }],
    ['"$patch": "merge" in a list', { spec: { template: { spec: { containers: [{ $patch: 'merge' }] } } } }],
    ['a list item without its merge key', { spec: { template: { spec: { containers: [{ image: 'x' }] } } } }],
    ['a delete directive without the merge key', { spec: { template: { spec: { containers: [{ $patch: 'delete' }] } } } }],
    ['a scalar in a list merged by key', { spec: { template: { spec: { containers: ['a'] } } } }],
    ['an object in a primitive merge list', { metadata: { finalizers: [{ name: 'x' }] } }],
    ['"$setElementOrder" that is not a list', { spec: { template: { spec: { '$setElementOrder/containers': { name: 'a' } } } } }],
    ['"$setElementOrder" without a field', { spec: { template: { spec: { '$setElementOrder/': [] } } } }],
    ['"$setElementOrder" entries without the merge key', { spec: { template: { spec: { '$setElementOrder/containers': [{ image: 'a' }] } } } }],
    [
      '"$setElementOrder" that disagrees with the patch list',
      {
        spec: {
          template: {
            spec: {
              '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }],
              containers: [{ name: 'b' }, { name: 'a' }],
            },
          },
        },
      },
    ],
    [
      '"$setElementOrder" missing an item of the patch list',
      {
        spec: {
          template: {
            spec: {
              '$setElementOrder/containers': [{ name: 'a' }],
              containers: [{ name: 'c' }],
            },
          },
        },
      },
    ],
    ['"$deleteFromPrimitiveList" that is not a list', { metadata: { '$deleteFromPrimitiveList/finalizers': 'a' } }],
    ['"$retainKeys" that is not a list of strings', { spec: { strategy: { $retainKeys: 'type' } } }],
  ];
  it.each(malformed)('D-VERB-21 %s is malformed', (_title, patch) => {
    const original = deployment([{ name: 'a' }, { name: 'b' }]);
    expect(codeOf(() => strategic.applyStrategicMergePatch(original, patch, deploymentSchema))).toBe('malformed');
  });

  it('D-VERB-21 lists of lists in a merged list are invalid', () => {
    expect(codeOf(() => smp('Pod', {}, { metadata: { finalizers: [['a']] } }))).toBe('invalid');
  });

  it('D-VERB-21 errors are StrategicMergeError instances', () => {
    let caught: unknown;
    try {
      smp('Pod', {}, 'x');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(strategic.StrategicMergeError);
    expect((caught as strategic.StrategicMergeError).name).toBe('StrategicMergeError');
  });
});

describe('applyStrategicMergePatch: purity', () => {
  it('never mutates the original or the patch, and shares no structure with them', () => {
    const original = deepFreeze(
      deployment([containerA, containerB], {
        volumes: [{ name: 'data', emptyDir: {} }],
      }),
    );
    const patch = deepFreeze({
      metadata: { finalizers: ['x'], labels: { a: '1' } },
      spec: {
        strategy: { $retainKeys: ['type'], type: 'Recreate' },
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }],
            containers: [{ name: 'b', image: 'x:2', env: [{ name: 'E', value: 'e' }] }],
            volumes: [{ name: 'data', $retainKeys: ['name', 'configMap'], configMap: { name: 'cm' } }],
            tolerations: [{ key: 'k' }],
          },
        },
      },
    });
    const result = strategic.applyStrategicMergePatch(original, patch, deploymentSchema);
    const spec = templateSpec(result) as { containers: Array<Record<string, unknown>>; tolerations: unknown[] };
    expect(spec.containers.map((c) => c['name'])).toEqual(['b', 'a']);
    const originalContainers = templateSpec(original)['containers'] as unknown[];
    expect(spec.containers[1]).not.toBe(originalContainers[0]);
    expect(spec.containers[1]).toEqual(containerA);
    expect(spec.containers[1]?.['ports']).not.toBe(containerA.ports);
    expect(spec.tolerations[0]).not.toBe(patch.spec.template.spec.tolerations[0]);
    expect(spec.containers[0]?.['env']).not.toBe(patch.spec.template.spec.containers[0]?.env);
  });
});

describe('builtinSmpSchema', () => {
  const table: Array<[kind: string, path: string, expected: strategic.SmpStrategy | undefined]> = [
    ['Widget', 'metadata.finalizers', { primitiveMerge: true }],
    ['Lease', 'metadata.ownerReferences', { mergeKey: 'uid' }],
    ['Deployment', 'spec.template.metadata.finalizers', { primitiveMerge: true }],
    ['Pod', 'spec.containers', { mergeKey: 'name' }],
    ['Pod', 'spec.initContainers', { mergeKey: 'name' }],
    ['Pod', 'spec.ephemeralContainers', { mergeKey: 'name' }],
    ['Pod', 'spec.imagePullSecrets', { mergeKey: 'name' }],
    ['Pod', 'spec.schedulingGates', { mergeKey: 'name' }],
    ['Pod', 'spec.volumes', { mergeKey: 'name', retainKeys: true }],
    ['Pod', 'spec.hostAliases', { mergeKey: 'ip' }],
    ['Pod', 'spec.topologySpreadConstraints', { mergeKey: 'topologyKey' }],
    ['Pod', 'spec.containers.ports', { mergeKey: 'containerPort' }],
    ['Pod', 'spec.initContainers.env', { mergeKey: 'name' }],
    ['Pod', 'spec.containers.volumeMounts', { mergeKey: 'mountPath' }],
    ['Pod', 'spec.ephemeralContainers.volumeDevices', { mergeKey: 'devicePath' }],
    ['Pod', 'status.conditions', { mergeKey: 'type' }],
    ['Pod', 'spec.tolerations', undefined],
    ['Pod', 'spec.template.spec.containers', undefined],
    ['Deployment', 'spec.template.spec.containers', { mergeKey: 'name' }],
    ['Deployment', 'spec.template.spec.volumes', { mergeKey: 'name', retainKeys: true }],
    ['Deployment', 'spec.template.spec.containers.env', { mergeKey: 'name' }],
    ['Deployment', 'spec.strategy', { retainKeys: true }],
    ['Deployment', 'status.conditions', { mergeKey: 'type' }],
    ['Deployment', 'spec.containers', undefined],
    ['Namespace', 'status.conditions', { mergeKey: 'type' }],
    ['Service', 'spec.ports', { mergeKey: 'port' }],
    ['Service', 'status.conditions', undefined],
    ['ServiceAccount', 'secrets', { mergeKey: 'name' }],
    ['ServiceAccount', 'imagePullSecrets', { mergeKey: 'name' }],
    ['ValidatingWebhookConfiguration', 'webhooks', { mergeKey: 'name' }],
    ['MutatingWebhookConfiguration', 'webhooks.matchConditions', { mergeKey: 'name' }],
    ['CustomResourceDefinition', 'spec.versions', undefined],
    ['ConfigMap', 'metadata.labels', undefined],
  ];
  it.each(table)('D-VERB-21 %s %s → %j', (kind, path, expected) => {
    expect(strategic.builtinSmpSchema(kind)(path.split('.'))).toEqual(expected);
  });
});
