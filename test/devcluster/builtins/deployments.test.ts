import { describe, expect, it } from 'vitest';
import * as fielderrors from '../../../devcluster/meta/fielderrors.js';
import * as deployments from '../../../devcluster/builtins/deployments.js';
import { loose, testContext } from './contexts.js';

type Json = { [key: string]: any };
const rendered = (errors: fielderrors.FieldError[]): string[] => errors.map(fielderrors.renderError);
function deployment(spec: Json = {}, labels: Json = { app: 'd' }): Json {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', namespace: 'default' },
    spec: { selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }, ...spec },
  };
}

describe('deployments', () => {
  const s = loose(deployments.deploymentStrategy);
  const ctx = testContext();
  const created = (obj: Json): Json => s.prepareForCreate!(obj, ctx);

  it('D-BI-9 create applies the defaults, template defaults included, and drops status', () => {
    const out = created({ ...deployment(), status: { replicas: 3 } });
    expect(out['spec']).toMatchObject({
      replicas: 1,
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
    });
    expect(out['spec']['template']['spec']).toMatchObject({ restartPolicy: 'Always', terminationGracePeriodSeconds: 30 });
    expect(out['spec']['template']['spec']).not.toHaveProperty('serviceAccountName');
    expect(out).not.toHaveProperty('status');
    expect(s.validate!(out, undefined, ctx)).toEqual([]);
  });

  it('D-BI-9 a Recreate strategy gets no rolling-update parameters', () => {
    expect(created(deployment({ strategy: { type: 'Recreate' } }))['spec']['strategy']).toEqual({ type: 'Recreate' });
  });

  it('D-BI-9 the selector is required, non-empty and must match the template labels', () => {
    const check = (obj: Json): string[] => rendered(s.validate!(created(obj), undefined, ctx));
    expect(check(deployment({ selector: undefined }))).toEqual(['spec.selector: Required value']);
    expect(check(deployment({ selector: {} }))).toEqual(['spec.selector: Invalid value: {}: empty selector is invalid for deployment']);
    expect(check(deployment({}, { app: 'other' }))).toEqual([
      'spec.template.metadata.labels: Invalid value: {"app":"other"}: `selector` does not match template `labels`',
    ]);
    expect(check(deployment({ selector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] } }))).toEqual([]);
  });

  it('D-BI-9 replicas must not be negative and the template must run with restartPolicy Always', () => {
    expect(rendered(s.validate!(created(deployment({ replicas: -1 })), undefined, ctx))).toEqual([
      'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    ]);
    const never = deployment();
    never['spec']['template']['spec']['restartPolicy'] = 'Never';
    expect(rendered(s.validate!(created(never), undefined, ctx))).toEqual([
      'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
    ]);
    const empty = deployment();
    empty['spec']['template']['spec']['containers'] = [];
    expect(rendered(s.validate!(created(empty), undefined, ctx))).toEqual(['spec.template.spec.containers: Required value']);
  });

  it('D-BI-9 the selector is immutable after create', () => {
    const stored = created(deployment());
    const next = s.prepareForUpdate!(deployment({ selector: { matchLabels: { app: 'd', tier: 'x' } } }, { app: 'd', tier: 'x' }), stored, ctx);
    expect(rendered(s.validate!(next, stored, ctx))).toEqual(['spec.selector: Invalid value: {"matchLabels":{"app":"d","tier":"x"}}: field is immutable']);
  });

  it('D-SUB-3 update keeps the stored status', () => {
    const stored = { ...created(deployment()), status: { replicas: 2 } };
    expect(s.prepareForUpdate!({ ...deployment(), status: { replicas: 9 } }, stored, ctx)['status']).toEqual({ replicas: 2 });
  });

  it('D-META-7 generation follows spec and annotation changes, not labels', () => {
    const a = created(deployment());
    const withMeta = (m: Json): Json => ({ ...a, metadata: { ...a['metadata'], ...m } });
    expect(s.generation!(a, withMeta({ labels: { x: 'y' } }))).toBe(false);
    expect(s.generation!(a, withMeta({ annotations: { x: 'y' } }))).toBe(true);
    expect(s.generation!(a, { ...a, spec: { ...a['spec'], replicas: 3 } })).toBe(true);
  });

  it('D-WIRE-19 a string replica count is 400', () => {
    expect(() => created(deployment({ replicas: '3' }))).toThrow('cannot unmarshal string');
  });
});
