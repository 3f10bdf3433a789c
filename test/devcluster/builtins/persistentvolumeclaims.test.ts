/**
 * PersistentVolumeClaims over HTTP (D-BI-16): the defaults of 1.32 (volume mode, phase, data
 * sources, the default StorageClass), validation and the immutable spec; and the Service defaults
 * a client reads back (D-BI-8), checked field by field against upstream's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness, type Json } from '../conformance/harness.js';

const PVCS = '/api/v1/namespaces/default/persistentvolumeclaims';
const SERVICES = '/api/v1/namespaces/default/services';

const claim = (name: string, spec: Json = {}): Json => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
});

describe('PersistentVolumeClaims (D-BI-16)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ widgets: false });
  });
  afterAll(async () => {
    await h.stop();
  });

  const invalid = async (body: Json): Promise<string> => {
    const r = await h.post(PVCS, body);
    expect(r.status, r.text).toBe(422);
    return r.json['message'];
  };

  it('D-BI-16 a claim reads back with volumeMode Filesystem and phase Pending, and stays Pending', async () => {
    const r = await h.post(PVCS, claim('data', { status: { phase: 'Bound' } }));
    expect(r.status, r.text).toBe(201);
    expect(r.json['spec']).toEqual({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeMode: 'Filesystem' });
    expect(r.json['status']).toEqual({ phase: 'Pending' });
    const bound = await h.patch(`${PVCS}/data/status`, { status: { phase: 'Bound', capacity: { storage: '1Gi' } } });
    expect(bound.status, bound.text).toBe(200);
    expect(bound.json['status']).toEqual({ phase: 'Bound', capacity: { storage: '1Gi' } });
  });

  it('D-BI-16 dataSource and dataSourceRef mirror each other', async () => {
    const source = { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap' };
    const fromSource = await h.post(PVCS, claim('from-source', { dataSource: source }));
    expect(fromSource.json['spec']['dataSourceRef']).toEqual(source);
    const fromRef = await h.post(PVCS, claim('from-ref', { dataSourceRef: { kind: 'PersistentVolumeClaim', name: 'data' } }));
    expect(fromRef.json['spec']['dataSource']).toEqual({ kind: 'PersistentVolumeClaim', name: 'data' });
  });

  it('D-BI-16 a claim without a class gets the default StorageClass, the newest when several are marked', async () => {
    const sc = (name: string, isDefault: boolean): Json => ({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name, annotations: { 'storageclass.kubernetes.io/is-default-class': String(isDefault) } },
      provisioner: 'example.com/disk',
    });
    expect((await h.post('/apis/storage.k8s.io/v1/storageclasses', sc('standard', true))).status).toBe(201);
    expect((await h.post('/apis/storage.k8s.io/v1/storageclasses', sc('slow', false))).status).toBe(201);
    const defaulted = await h.post(PVCS, claim('classless'));
    expect(defaulted.json['spec']['storageClassName']).toBe('standard');
    const none = await h.post(PVCS, claim('no-class', { storageClassName: '' }));
    expect(none.json['spec']['storageClassName']).toBe('');
    await h.del('/apis/storage.k8s.io/v1/storageclasses/standard');
  });

  it('D-BI-16 access modes and a positive storage request are required', async () => {
    expect(await invalid(claim('no-modes', { accessModes: [] }))).toBe(
      'PersistentVolumeClaim "no-modes" is invalid: spec.accessModes: Required value: at least 1 access mode is required',
    );
    expect(await invalid(claim('no-storage', { resources: {} }))).toBe(
      'PersistentVolumeClaim "no-storage" is invalid: spec.resources[storage]: Required value',
    );
    expect(await invalid(claim('zero', { resources: { requests: { storage: '0' } } }))).toBe(
      'PersistentVolumeClaim "zero" is invalid: spec.resources[storage]: Invalid value: "0": must be greater than zero',
    );
    expect(await invalid(claim('rwop', { accessModes: ['ReadWriteOncePod', 'ReadWriteOnce'] }))).toBe(
      'PersistentVolumeClaim "rwop" is invalid: spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes',
    );
  });

  it('D-BI-16 the spec is immutable after creation, but for a first volumeName and the requests of bound claims', async () => {
    await h.post(PVCS, claim('immutable'));
    const grow = await h.patch(`${PVCS}/immutable`, { spec: { resources: { requests: { storage: '2Gi' } } } });
    expect(grow.status).toBe(422);
    expect(grow.json['message']).toBe(
      'PersistentVolumeClaim "immutable" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests for bound claims',
    );
    const volume = await h.patch(`${PVCS}/immutable`, { spec: { volumeName: 'pv-1' } });
    expect(volume.status, volume.text).toBe(200);
    await h.patch(`${PVCS}/immutable/status`, { status: { phase: 'Bound', capacity: { storage: '1Gi' } } });
    const bound = await h.patch(`${PVCS}/immutable`, { spec: { resources: { requests: { storage: '2Gi' } } } });
    expect(bound.status, bound.text).toBe(200);
    expect(bound.json['spec']['resources']['requests']['storage']).toBe('2Gi');
  });
});

describe('Service defaults (D-BI-8)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ widgets: false });
  });
  afterAll(async () => {
    await h.stop();
  });

  const service = async (name: string, spec: Json): Promise<Json> => {
    const r = await h.post(SERVICES, { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec });
    expect(r.status, r.text).toBe(201);
    return r.json['spec'];
  };

  it('D-BI-8 a ClusterIP Service gets every field upstream fills in', async () => {
    const spec = await service('web', {
      selector: { app: 'w' },
      ports: [
        { name: 'a', port: 80, targetPort: 0 },
        { name: 'b', port: 81, targetPort: '' },
      ],
    });
    expect(spec).toMatchObject({
      type: 'ClusterIP',
      sessionAffinity: 'None',
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      internalTrafficPolicy: 'Cluster',
      ports: [
        { name: 'a', port: 80, protocol: 'TCP', targetPort: 80 },
        { name: 'b', port: 81, protocol: 'TCP', targetPort: 81 },
      ],
    });
    expect(spec['clusterIPs']).toEqual([spec['clusterIP']]);
    expect(spec).not.toHaveProperty('externalTrafficPolicy');
  });

  it('D-BI-8 ClientIP affinity gets a three-hour timeout; a headless Service without selector requires dual stack', async () => {
    const sticky = await service('sticky', { selector: { app: 'w' }, sessionAffinity: 'ClientIP', ports: [{ port: 80 }] });
    expect(sticky['sessionAffinityConfig']).toEqual({ clientIP: { timeoutSeconds: 10800 } });
    const headless = await service('headless', { clusterIP: 'None', ports: [{ port: 80 }] });
    expect(headless).toMatchObject({ clusterIP: 'None', clusterIPs: ['None'], ipFamilies: ['IPv4'], ipFamilyPolicy: 'RequireDualStack' });
    const selected = await service('headless-selected', { clusterIP: 'None', selector: { app: 'w' } });
    expect(selected['ipFamilyPolicy']).toBe('SingleStack');
    const nodePort = await service('np', { type: 'NodePort', selector: { app: 'w' }, ports: [{ port: 80 }] });
    expect(nodePort['externalTrafficPolicy']).toBe('Cluster');
    expect(nodePort['ports'][0]['nodePort']).toBeGreaterThanOrEqual(30000);
  });
});
