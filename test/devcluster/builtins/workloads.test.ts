/**
 * StatefulSets, DaemonSets, ReplicaSets and ReplicationControllers over HTTP (D-BI-15): the
 * defaults a client reads back, selectors (required, not empty, selecting the template, immutable
 * where upstream's are), the update rules, status validation, and the scale subresource of the
 * three that have one (D-BI-17).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness, type Json } from '../conformance/harness.js';

const APPS = '/apis/apps/v1/namespaces/default';
const RCS = '/api/v1/namespaces/default/replicationcontrollers';
const TEMPLATE = { metadata: { labels: { app: 'w' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } };
const SELECTOR = { matchLabels: { app: 'w' } };

const workload = (kind: string, name: string, spec: Json = {}): Json => ({
  apiVersion: 'apps/v1',
  kind,
  metadata: { name },
  spec: { selector: SELECTOR, template: TEMPLATE, ...(kind === 'StatefulSet' ? { serviceName: 'web' } : {}), ...spec },
});

describe('workload controllers (D-BI-15)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ widgets: false });
  });
  afterAll(async () => {
    await h.stop();
  });

  const created = async (path: string, body: Json): Promise<Json> => {
    const r = await h.post(path, body);
    expect(r.status, r.text).toBe(201);
    return r.json;
  };
  const invalid = async (path: string, body: Json): Promise<string> => {
    const r = await h.post(path, body);
    expect(r.status, r.text).toBe(422);
    return r.json['message'];
  };
  const podDefaults = {
    restartPolicy: 'Always',
    dnsPolicy: 'ClusterFirst',
    schedulerName: 'default-scheduler',
    terminationGracePeriodSeconds: 30,
    securityContext: {},
  };

  it('D-BI-15 a StatefulSet gets its defaults, pod template defaults and the claim defaults of its volume claim templates', async () => {
    const claim = { metadata: { name: 'www' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
    const sts = await created(`${APPS}/statefulsets`, workload('StatefulSet', 'web', { volumeClaimTemplates: [claim] }));
    expect(sts['spec']).toMatchObject({
      replicas: 1,
      podManagementPolicy: 'OrderedReady',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
      revisionHistoryLimit: 10,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
    });
    expect(sts['spec']['template']['spec']).toMatchObject(podDefaults);
    expect(sts['spec']['volumeClaimTemplates']).toEqual([
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', ...claim, spec: { ...claim.spec, volumeMode: 'Filesystem' }, status: { phase: 'Pending' } },
    ]);
    const onDelete = await created(`${APPS}/statefulsets`, workload('StatefulSet', 'on-delete', { updateStrategy: { type: 'OnDelete' } }));
    expect(onDelete['spec']['updateStrategy']).toEqual({ type: 'OnDelete' });
  });

  it('D-BI-15 a StatefulSet may change only what upstream lets change, and its name is a DNS label', async () => {
    await created(`${APPS}/statefulsets`, workload('StatefulSet', 'web-update'));
    const replicas = await h.patch(`${APPS}/statefulsets/web-update`, { spec: { replicas: 3 } });
    expect(replicas.status, replicas.text).toBe(200);
    expect(replicas.json['metadata']['generation']).toBe(2);
    const serviceName = await h.patch(`${APPS}/statefulsets/web-update`, { spec: { serviceName: 'other' } });
    expect(serviceName.status).toBe(422);
    expect(serviceName.json['message']).toBe(
      "StatefulSet.apps \"web-update\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    );
    expect(await invalid(`${APPS}/statefulsets`, workload('StatefulSet', 'web.dotted'))).toContain('metadata.name: Invalid value: "web.dotted"');
    expect(await invalid(`${APPS}/statefulsets`, workload('StatefulSet', 'web-empty', { selector: {} }))).toBe(
      'StatefulSet.apps "web-empty" is invalid: spec.selector: Invalid value: {}: empty selector is invalid for statefulset',
    );
    expect(await invalid(`${APPS}/statefulsets`, workload('StatefulSet', 'web-policy', { podManagementPolicy: 'Sometimes' }))).toBe(
      'StatefulSet.apps "web-policy" is invalid: spec.podManagementPolicy: Invalid value: "Sometimes": must be \'OrderedReady\' or \'Parallel\'',
    );
  });

  it('D-BI-15 a DaemonSet gets a rolling update of one unavailable and no surge, and its selector never changes', async () => {
    const ds = await created(`${APPS}/daemonsets`, workload('DaemonSet', 'agent'));
    expect(ds['spec']).toMatchObject({
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      revisionHistoryLimit: 10,
    });
    expect(ds['spec']['template']['spec']).toMatchObject(podDefaults);
    const selector = await h.patch(`${APPS}/daemonsets/agent`, {
      spec: { selector: { matchLabels: { app: 'w', tier: 't' } }, template: { metadata: { labels: { tier: 't' } } } },
    });
    expect(selector.status).toBe(422);
    expect(selector.json['message']).toBe(
      'DaemonSet.apps "agent" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"w","tier":"t"}}: field is immutable',
    );
    expect(await invalid(`${APPS}/daemonsets`, workload('DaemonSet', 'agent-surge', { updateStrategy: { rollingUpdate: { maxSurge: 1 } } }))).toBe(
      'DaemonSet.apps "agent-surge" is invalid: spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero',
    );
    const never = workload('DaemonSet', 'agent-never');
    never['spec']['template'] = { ...TEMPLATE, spec: { ...TEMPLATE.spec, restartPolicy: 'Never' } };
    expect(await invalid(`${APPS}/daemonsets`, never)).toBe(
      'DaemonSet.apps "agent-never" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
    );
  });

  it('D-BI-15 a ReplicaSet gets one replica, a required non-empty selector that matches, and keeps the selector', async () => {
    const rs = await created(`${APPS}/replicasets`, workload('ReplicaSet', 'rs'));
    expect(rs['spec']['replicas']).toBe(1);
    expect(rs['spec']['template']['spec']).toMatchObject(podDefaults);
    expect(await invalid(`${APPS}/replicasets`, workload('ReplicaSet', 'rs-none', { selector: undefined }))).toBe(
      'ReplicaSet.apps "rs-none" is invalid: spec.selector: Required value',
    );
    expect(await invalid(`${APPS}/replicasets`, workload('ReplicaSet', 'rs-other', { selector: { matchLabels: { app: 'x' } } }))).toBe(
      'ReplicaSet.apps "rs-other" is invalid: spec.template.metadata.labels: Invalid value: {"app":"w"}: `selector` does not match template `labels`',
    );
    const selector = await h.patch(`${APPS}/replicasets/rs`, { spec: { selector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] } } });
    expect(selector.status).toBe(422);
    expect(selector.json['message']).toContain('spec.selector: Invalid value:');
    const status = await h.patch(`${APPS}/replicasets/rs/status`, { status: { replicas: 1, readyReplicas: 2 } });
    expect(status.status).toBe(422);
    expect(status.json['message']).toBe('ReplicaSet.apps "rs" is invalid: status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas');
  });

  it('D-BI-15 a ReplicationController takes its selector and labels from its template, and may change its selector', async () => {
    const rc = { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'rc' }, spec: { template: TEMPLATE } };
    const out = await created(RCS, rc);
    expect(out['spec']).toMatchObject({ replicas: 1, selector: { app: 'w' } });
    expect(out['metadata']['labels']).toEqual({ app: 'w' });
    expect(out['spec']['template']['spec']).toMatchObject(podDefaults);
    const selector = await h.patch(`${RCS}/rc`, { spec: { selector: { app: 'w', tier: 't' }, template: { metadata: { labels: { tier: 't' } } } } });
    expect(selector.status, selector.text).toBe(200);
    const mismatch = await h.post(RCS, { ...rc, metadata: { name: 'rc-bad' }, spec: { selector: { app: 'x' }, template: TEMPLATE } });
    expect(mismatch.status).toBe(422);
    expect(mismatch.json['message']).toBe(
      'ReplicationController "rc-bad" is invalid: spec.template.metadata.labels: Invalid value: {"app":"w"}: `selector` does not match template `labels`',
    );
  });

  it('D-BI-15 a PodTemplate gets the pod template defaults and its validation', async () => {
    const path = '/api/v1/namespaces/default/podtemplates';
    const out = await created(path, { apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'pt' }, template: TEMPLATE });
    expect(out['template']['spec']).toMatchObject(podDefaults);
    expect(await invalid(path, { apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'pt-empty' }, template: { spec: { containers: [] } } })).toBe(
      'PodTemplate "pt-empty" is invalid: template.spec.containers: Required value',
    );
  });

  it('D-BI-17 ReplicaSets, StatefulSets and ReplicationControllers serve the generic scale subresource', async () => {
    await created(`${APPS}/replicasets`, workload('ReplicaSet', 'rs-scale'));
    await created(`${APPS}/statefulsets`, workload('StatefulSet', 'sts-scale'));
    await created(RCS, { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'rc-scale' }, spec: { template: TEMPLATE } });
    for (const path of [`${APPS}/replicasets/rs-scale`, `${APPS}/statefulsets/sts-scale`, `${RCS}/rc-scale`]) {
      const scale = await h.get(`${path}/scale`);
      expect(scale.status, scale.text).toBe(200);
      expect(scale.json).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 1 }, status: { replicas: 0, selector: 'app=w' } });
      const scaled = await h.patch(`${path}/scale`, { spec: { replicas: 4 } });
      expect(scaled.status, scaled.text).toBe(200);
      expect(scaled.json['spec']).toEqual({ replicas: 4 });
      expect((await h.get(path)).json['spec']['replicas']).toBe(4);
    }
  });
});
