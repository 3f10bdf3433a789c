import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as schemarules from '../../../devcluster/builtins/schemarules.js';
import * as fielderrors from '../../../devcluster/meta/fielderrors.js';
import * as enums from '../../../devcluster/upstream/enums.js';
import { startHarness, type Harness, type Json } from '../conformance/harness.js';

const V1 = 'io.k8s.api.core.v1.';
const job = (spec: Json): Json => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'j' },
  spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] } }, ...spec },
});
const rendered = (definition: string, obj: Json): string[] => schemarules.schemaErrors(definition, obj).map(fielderrors.renderError);

describe('enums of the built-in kinds (D-BI-21)', () => {
  it.each([
    [`${V1}PodSpec`, 'restartPolicy', ['Always', 'OnFailure', 'Never']],
    [`${V1}PodSpec`, 'dnsPolicy', ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None']],
    [`${V1}Container`, 'imagePullPolicy', ['Always', 'IfNotPresent', 'Never']],
    [`${V1}ContainerPort`, 'protocol', ['SCTP', 'TCP', 'UDP']],
    [`${V1}ServiceSpec`, 'type', ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort']],
    [`${V1}ServiceSpec`, 'ipFamilies', ['IPv4', 'IPv6']],
    [`${V1}HostPathVolumeSource`, 'type', ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket']],
    [`${V1}PersistentVolumeClaimSpec`, 'accessModes', ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod']],
    ['io.k8s.api.batch.v1.JobSpec', 'completionMode', ['NonIndexed', 'Indexed']],
    ['io.k8s.api.batch.v1.CronJobSpec', 'concurrencyPolicy', ['Allow', 'Forbid', 'Replace']],
    ['io.k8s.api.apps.v1.DeploymentStrategy', 'type', ['Recreate', 'RollingUpdate']],
    ['io.k8s.api.apps.v1.StatefulSetSpec', 'podManagementPolicy', ['OrderedReady', 'Parallel']],
    ['io.k8s.api.networking.v1.HTTPIngressPath', 'pathType', ['Exact', 'ImplementationSpecific', 'Prefix']],
    ['io.k8s.api.discovery.v1.EndpointSlice', 'addressType', ['FQDN', 'IPv4', 'IPv6']],
    ['io.k8s.api.admissionregistration.v1.RuleWithOperations', 'scope', ['*', 'Cluster', 'Namespaced']],
  ])('D-BI-21 %s.%s is an enum of the values upstream accepts, as its message lists them', (definition, property, values) => {
    expect(schemarules.enumValues(definition, property)).toEqual(values);
  });

  it('D-BI-21 a Job with an unknown completionMode names the field and the supported values', () => {
    expect(rendered('io.k8s.api.batch.v1.Job', job({ completionMode: 'Bad' }))).toEqual([
      'spec.completionMode: Unsupported value: "Bad": supported values: "NonIndexed", "Indexed"',
    ]);
    expect(rendered('io.k8s.api.batch.v1.Job', job({ completionMode: 'Indexed' }))).toEqual([]);
  });

  it('D-BI-21 a pod template with an unknown restartPolicy, and enums in lists, are refused with their paths', () => {
    const obj = job({});
    obj['spec'].template.spec.restartPolicy = 'Sometimes';
    obj['spec'].template.spec.containers[0].imagePullPolicy = 'Sometimes';
    expect(rendered('io.k8s.api.batch.v1.Job', obj)).toEqual([
      'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
      'spec.template.spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
    ]);
    const claim = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c' }, spec: { accessModes: ['ReadWriteOnce', 'WriteSometimes'] } };
    expect(rendered(`${V1}PersistentVolumeClaim`, claim)).toEqual([
      'spec.accessModes[1]: Unsupported value: "WriteSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
    ]);
  });

  it('D-BI-21 the empty string is an unset enum, and status is not checked', () => {
    const obj = job({ completionMode: '' });
    obj['status'] = { conditions: [{ type: 'Complete', status: 'Maybe' }] };
    expect(rendered('io.k8s.api.batch.v1.Job', obj)).toEqual([]);
  });

  it('D-BI-21 a field whose type upstream accepts beyond its constants is an exception, with its reason', () => {
    expect(enums.exceptionOf(`${V1}PodSecurityContext`, 'supplementalGroupsPolicy')).toMatch(/feature gate/);
    expect(schemarules.enumValues(`${V1}PodSecurityContext`, 'supplementalGroupsPolicy')).toBeUndefined();
    const obj = job({});
    obj['spec'].template.spec.securityContext = { supplementalGroupsPolicy: 'Anything' };
    expect(rendered('io.k8s.api.batch.v1.Job', obj)).toEqual([]);
  });
});

describe('enums over HTTP (D-BI-21)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ widgets: false });
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('D-BI-21 a Job with completionMode Bad is refused with 422 naming spec.completionMode and the supported values', async () => {
    const r = await h.post('/apis/batch/v1/namespaces/default/jobs', job({ completionMode: 'Bad' }));
    expect(r.status, r.text).toBe(422);
    expect(r.json['message']).toBe('Job.batch "j" is invalid: spec.completionMode: Unsupported value: "Bad": supported values: "NonIndexed", "Indexed"');
    expect(r.json['details'].causes).toEqual([
      { reason: 'FieldValueNotSupported', message: 'Unsupported value: "Bad": supported values: "NonIndexed", "Indexed"', field: 'spec.completionMode' },
    ]);
  });

  it('D-BI-21 a pod template with restartPolicy Sometimes is refused; CronJob and StatefulSet enums too', async () => {
    const template = {
      apiVersion: 'v1',
      kind: 'PodTemplate',
      metadata: { name: 't' },
      template: { spec: { restartPolicy: 'Sometimes', containers: [{ name: 'c', image: 'x' }] } },
    };
    const r = await h.post('/api/v1/namespaces/default/podtemplates', template);
    expect(r.status, r.text).toBe(422);
    expect(r.json['message']).toContain('template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"');
    const cron = await h.post('/apis/batch/v1/namespaces/default/cronjobs', {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'c' },
      spec: { schedule: '* * * * *', concurrencyPolicy: 'Sometimes', jobTemplate: { spec: job({})['spec'] } },
    });
    expect(cron.status, cron.text).toBe(422);
    expect(cron.json['message']).toContain('spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"');
    const valid = await h.post('/apis/batch/v1/namespaces/default/jobs', job({ completionMode: 'NonIndexed' }));
    expect(valid.status, valid.text).toBe(201);
  });
});
