import { describe, expect, it } from 'vitest';
import * as fielderrors from '../../../devcluster/meta/fielderrors.js';
import * as pods from '../../../devcluster/builtins/pods.js';
import { loose, testContext } from './contexts.js';

type Json = { [key: string]: any };
const pod = (spec: Json = {}, status?: Json): Json => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'default' },
  spec: { containers: [{ name: 'main', image: 'nginx' }], ...spec },
  ...(status ? { status } : {}),
});

describe('pods', () => {
  const s = loose(pods.podStrategy);
  const ctx = testContext();

  it.each<[string, Json, number | undefined, number]>([
    ['unscheduled', pod(), undefined, 0],
    ['unscheduled with a requested grace', pod(), 10, 0],
    ['scheduled without a grace period', pod({ nodeName: 'n' }), undefined, 30],
    ['scheduled with terminationGracePeriodSeconds', pod({ nodeName: 'n', terminationGracePeriodSeconds: 7 }), undefined, 7],
    ['scheduled with a requested grace', pod({ nodeName: 'n', terminationGracePeriodSeconds: 7 }), 3, 3],
    ['scheduled with a requested grace of 0', pod({ nodeName: 'n' }), 0, 0],
    ['scheduled with a negative grace', pod({ nodeName: 'n' }), -5, 1],
    ['Succeeded', pod({ nodeName: 'n' }, { phase: 'Succeeded' }), undefined, 0],
    ['Failed', pod({ nodeName: 'n' }, { phase: 'Failed' }), 20, 0],
    ['Running', pod({ nodeName: 'n' }, { phase: 'Running' }), undefined, 30],
  ])('D-VERB-28 a pod %s gets grace %s → %s', (_title, obj, requested, expected) => {
    expect(s.gracePeriod!(obj, requested)).toBe(expected);
  });

  it('D-BI-7 create replaces the client status with Pending and the QoS class', () => {
    const out = s.prepareForCreate!(pod({}, { phase: 'Running', podIP: '1.2.3.4' }), ctx);
    expect(out['status']).toEqual({ phase: 'Pending', qosClass: 'BestEffort' });
    expect(out['spec']['restartPolicy']).toBe('Always');
  });

  it('D-SUB-3 update keeps the stored status and re-applies defaults', () => {
    const stored = s.prepareForCreate!(pod(), ctx);
    const out = s.prepareForUpdate!(pod({}, { phase: 'Running' }), stored, ctx);
    expect(out['status']).toEqual(stored['status']);
    expect(out['spec']).toEqual(stored['spec']);
    expect(s.validate!(out, stored, ctx)).toEqual([]);
  });

  it('D-BI-7 update validation refuses spec changes beyond the allowed fields', () => {
    const stored = s.prepareForCreate!(pod(), ctx);
    const next = s.prepareForUpdate!(pod({ hostname: 'h' }), stored, ctx);
    expect(s.validate!(next, stored, ctx).map(fielderrors.renderError)).toEqual([
      expect.stringMatching(/^spec: Forbidden: pod updates may not change fields other than/),
    ]);
  });

  it('D-META-7 pod generation follows spec changes only', () => {
    const a = pod();
    expect(s.generation!(a, { ...a, metadata: { ...a['metadata'], labels: { x: 'y' } } })).toBe(false);
    expect(s.generation!(a, pod({ activeDeadlineSeconds: 3 }))).toBe(true);
  });

  it('D-BI-1 pod field selectors read spec and status fields, empty when absent', () => {
    const sel = s.fieldSelectors!;
    const p = pod({ nodeName: 'n1', restartPolicy: 'Never', schedulerName: 's', serviceAccountName: 'sa' }, { phase: 'Running', podIP: '10.0.0.1' });
    expect(Object.fromEntries(Object.entries(sel).map(([k, f]) => [k, f(p)]))).toEqual({
      'spec.nodeName': 'n1',
      'spec.restartPolicy': 'Never',
      'spec.schedulerName': 's',
      'spec.serviceAccountName': 'sa',
      'status.phase': 'Running',
      'status.podIP': '10.0.0.1',
    });
    expect(sel['spec.nodeName']!(pod())).toBe('');
  });

  it('D-VERB-27 deleting a pod returns the object', () => {
    expect(s.deleteReturnsObject).toBe(true);
  });
});
