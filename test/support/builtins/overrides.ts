/**
 * The members of sample objects that a schema cannot invent: values a kind's validation needs to
 * be meaningful (a pod template with a container, a Job's `restartPolicy: Never`, a CronJob
 * schedule, selectors that match the template's labels, an RBAC rule, a certificate signing
 * request that parses, names of the form a kind demands). Every kind not listed here gets only
 * what its schema requires (`samples.ts`). Keyed like the suites' titles: `apiVersion resource`.
 *
 * Each override receives the object's name and returns top-level members that replace the
 * generated ones (`metadata` is merged, so an override may rename the object).
 */
import type { JsonObject } from '../../../devcluster/json.js';

export type Override = (name: string) => JsonObject;

const CONTAINERS = [{ name: 'main', image: 'nginx:1.27' }];

/** A pod template whose labels match `app: <name>` (the selectors below). */
const template = (name: string, spec: JsonObject = {}): JsonObject => ({ metadata: { labels: { app: name } }, spec: { containers: CONTAINERS, ...spec } });

const selector = (name: string): JsonObject => ({ matchLabels: { app: name } });

/** A PEM certificate signing request (`CN=conformance`, P-256), base64 as the CSR API takes it; generated for these tests. */
const CSR_REQUEST =
  'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIUE1IZ0NBUUF3RmpFVU1CSUdBMVVFQXd3TFkyOXVabTl5YldGdVkyVXdXVEFUQmdjcWhrak9QUUlCQmdncQpoa2pPUFFNQkJ3TkNBQVRyMG1CTE1IUHVkVVBJVnpOb1JFVWpHbEhQZHkraTFOa2g1amJQVXlwbzNYbkUvRE5SCkVIbTgzbUVwdDhIa1l2MmU0dHNPL0ovLzV4a3F1OVAxSXREUW9BQXdDZ1lJS29aSXpqMEVBd0lEUndBd1JBSWcKSFF1RUp4SEZkb3NkaGdEbGVZOUwwRkxGdXdrZlBCZ3lsVWtoUkhwdUFjd0NJRzlndk52NEszNFo1dUMraDQxOApRUjZUS2MzT1c1WEt4T282MVdBSEtIYUEKLS0tLS1FTkQgQ0VSVElGSUNBVEUgUkVRVUVTVC0tLS0tCg==';

const webhooks = (name: string, path: string): JsonObject => ({
  webhooks: [
    {
      name: `${name}.conformance.example.com`,
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      clientConfig: { url: `https://hooks.example.com/${path}` },
      rules: [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'] }],
    },
  ],
});

const accessAttributes = { namespace: 'default', verb: 'create', group: 'batch', resource: 'jobs' };

const hpaTarget = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };

/** A name usable as a DNS label inside other names (CRD plurals, APIService groups). */
const label = (name: string): string => name.replace(/[^a-z0-9]/g, '');

export const OVERRIDES: Readonly<Record<string, Override>> = {
  'v1 bindings': () => ({ target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' } }),
  'v1 configmaps': () => ({ data: { key: 'value' } }),
  'v1 endpoints': () => ({ subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }] }),
  'v1 events': (name) => ({
    involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', name, namespace: 'default' },
    reason: 'Testing',
    message: 'conformance',
    type: 'Normal',
    action: 'Test',
    reportingComponent: 'conformance',
    reportingInstance: 'conformance-1',
    source: { component: 'conformance' },
    eventTime: '2024-05-01T10:00:00.000000Z',
    firstTimestamp: '2024-05-01T10:00:00Z',
    lastTimestamp: '2024-05-01T10:00:00Z',
  }),
  'v1 limitranges': () => ({ spec: { limits: [{ type: 'Container', default: { cpu: '500m' } }] } }),
  'v1 persistentvolumeclaims': () => ({ spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }),
  'v1 persistentvolumes': () => ({ spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/pv' } } }),
  'v1 pods': () => ({ spec: { containers: CONTAINERS } }),
  'v1 podtemplates': (name) => ({ template: template(name) }),
  'v1 replicationcontrollers': (name) => ({ spec: { replicas: 1, selector: { app: name }, template: template(name) } }),
  'v1 resourcequotas': () => ({ spec: { hard: { pods: '10' } } }),
  'v1 secrets': () => ({ type: 'Opaque', data: { key: 'dmFsdWU=' } }),
  'v1 services': (name) => ({ spec: { selector: { app: name }, ports: [{ port: 80 }] } }),
  'admissionregistration.k8s.io/v1 mutatingwebhookconfigurations': (name) => webhooks(name, 'mutate'),
  'admissionregistration.k8s.io/v1 validatingwebhookconfigurations': (name) => webhooks(name, 'validate'),
  'admissionregistration.k8s.io/v1 validatingadmissionpolicies': () => ({
    spec: {
      matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }] },
      validations: [{ expression: 'object.spec.replicas <= 5' }],
    },
  }),
  'admissionregistration.k8s.io/v1 validatingadmissionpolicybindings': () => ({ spec: { policyName: 'replicas-limit', validationActions: ['Deny'] } }),
  'apiextensions.k8s.io/v1 customresourcedefinitions': (name) => {
    const plural = `${label(name)}s`;
    return {
      metadata: { name: `${plural}.conformance.example.com` },
      spec: {
        group: 'conformance.example.com',
        scope: 'Namespaced',
        names: { plural, singular: label(name), kind: `K${label(name)}`, listKind: `K${label(name)}List` },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    };
  },
  'apiregistration.k8s.io/v1 apiservices': (name) => ({
    metadata: { name: `v1.${label(name)}.example.com` },
    spec: {
      group: `${label(name)}.example.com`,
      version: 'v1',
      groupPriorityMinimum: 1000,
      versionPriority: 15,
      service: { namespace: 'default', name: 'api', port: 443 },
      insecureSkipTLSVerify: true,
    },
  }),
  'apps/v1 controllerrevisions': () => ({ revision: 1, data: { spec: { template: { spec: { containers: CONTAINERS } } } } }),
  'apps/v1 daemonsets': (name) => ({ spec: { selector: selector(name), template: template(name) } }),
  'apps/v1 deployments': (name) => ({ spec: { replicas: 1, selector: selector(name), template: template(name) } }),
  'apps/v1 replicasets': (name) => ({ spec: { replicas: 1, selector: selector(name), template: template(name) } }),
  'apps/v1 statefulsets': (name) => ({ spec: { replicas: 1, serviceName: name, selector: selector(name), template: template(name) } }),
  'authentication.k8s.io/v1 tokenreviews': () => ({ spec: { token: 'not-a-token' } }),
  'authorization.k8s.io/v1 localsubjectaccessreviews': () => ({ spec: { user: 'alice', resourceAttributes: accessAttributes } }),
  'authorization.k8s.io/v1 selfsubjectaccessreviews': () => ({ spec: { resourceAttributes: accessAttributes } }),
  'authorization.k8s.io/v1 selfsubjectrulesreviews': () => ({ spec: { namespace: 'default' } }),
  'authorization.k8s.io/v1 subjectaccessreviews': () => ({ spec: { user: 'alice', groups: ['devs'], resourceAttributes: accessAttributes } }),
  'autoscaling/v1 horizontalpodautoscalers': () => ({
    spec: { scaleTargetRef: hpaTarget, minReplicas: 1, maxReplicas: 3, targetCPUUtilizationPercentage: 80 },
  }),
  'autoscaling/v2 horizontalpodautoscalers': () => ({
    spec: {
      scaleTargetRef: hpaTarget,
      minReplicas: 1,
      maxReplicas: 3,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }],
    },
  }),
  'batch/v1 cronjobs': () => ({
    spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: { containers: CONTAINERS, restartPolicy: 'Never' } } } } },
  }),
  'batch/v1 jobs': () => ({ spec: { template: { spec: { containers: CONTAINERS, restartPolicy: 'Never' } } } }),
  'certificates.k8s.io/v1 certificatesigningrequests': () => ({
    spec: { request: CSR_REQUEST, signerName: 'kubernetes.io/kube-apiserver-client', usages: ['digital signature', 'client auth'] },
  }),
  'coordination.k8s.io/v1 leases': () => ({ spec: { holderIdentity: 'conformance', leaseDurationSeconds: 15 } }),
  'discovery.k8s.io/v1 endpointslices': () => ({
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }],
    ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
  }),
  'events.k8s.io/v1 events': (name) => ({
    eventTime: '2024-05-01T10:00:00.000000Z',
    type: 'Normal',
    reason: 'Testing',
    action: 'Test',
    note: 'conformance',
    reportingController: 'example.com/conformance',
    reportingInstance: 'conformance-1',
    regarding: { apiVersion: 'v1', kind: 'ConfigMap', name, namespace: 'default' },
  }),
  'flowcontrol.apiserver.k8s.io/v1 flowschemas': () => ({
    spec: {
      priorityLevelConfiguration: { name: 'global-default' },
      matchingPrecedence: 1000,
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [{ kind: 'User', user: { name: 'alice' } }],
          resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], namespaces: ['default'] }],
        },
      ],
    },
  }),
  'flowcontrol.apiserver.k8s.io/v1 prioritylevelconfigurations': () => ({
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 5, limitResponse: { type: 'Reject' } } },
  }),
  'networking.k8s.io/v1 ingressclasses': () => ({ spec: { controller: 'example.com/ingress' } }),
  'networking.k8s.io/v1 ingresses': () => ({ spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } } }),
  'networking.k8s.io/v1 networkpolicies': (name) => ({ spec: { podSelector: selector(name), policyTypes: ['Ingress'] } }),
  'node.k8s.io/v1 runtimeclasses': () => ({ handler: 'runc' }),
  'policy/v1 poddisruptionbudgets': (name) => ({ spec: { minAvailable: 1, selector: selector(name) } }),
  'rbac.authorization.k8s.io/v1 clusterroles': () => ({ rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] }),
  'rbac.authorization.k8s.io/v1 roles': () => ({ rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] }),
  'rbac.authorization.k8s.io/v1 clusterrolebindings': () => ({
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }],
  }),
  'rbac.authorization.k8s.io/v1 rolebindings': () => ({
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
    subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }],
  }),
  'scheduling.k8s.io/v1 priorityclasses': () => ({ value: 1000, description: 'conformance' }),
  'storage.k8s.io/v1 csidrivers': () => ({ spec: { attachRequired: true, podInfoOnMount: false } }),
  'storage.k8s.io/v1 csinodes': () => ({ spec: { drivers: [{ name: 'csi.example.com', nodeID: 'node-1' }] } }),
  'storage.k8s.io/v1 csistoragecapacities': () => ({ storageClassName: 'standard', capacity: '1Gi' }),
  'storage.k8s.io/v1 storageclasses': () => ({ provisioner: 'example.com/csi', reclaimPolicy: 'Delete' }),
  'storage.k8s.io/v1 volumeattachments': () => ({ spec: { attacher: 'csi.example.com', nodeName: 'node-1', source: { persistentVolumeName: 'pv-1' } } }),
};

/** Statuses the schema alone would leave empty, keyed like `OVERRIDES`. */
export const STATUS_OVERRIDES: Readonly<Record<string, JsonObject>> = {
  'networking.k8s.io/v1 ingresses': { loadBalancer: { ingress: [{ ip: '10.0.0.1' }] } },
};
