import { describe, expect, it } from 'vitest';
import * as fielderrors from '../../../devcluster/meta/fielderrors.js';
import * as podspecs from '../../../devcluster/builtins/podspecs.js';
import * as statuses from '../../../devcluster/server/statuses.js';

type Json = { [key: string]: any };
const rendered = (errors: fielderrors.FieldError[]): string[] => errors.map(fielderrors.renderError);
const container = (extra: Json = {}): Json => ({ name: 'main', image: 'nginx:1.27', ...extra });

describe('podspecs', () => {
  it.each([
    ['nginx', 'Always'],
    ['nginx:latest', 'Always'],
    ['nginx:1.27', 'IfNotPresent'],
    ['registry:5000/team/app', 'Always'],
    ['registry:5000/team/app:v2', 'IfNotPresent'],
    ['nginx@sha256:abcd', 'IfNotPresent'],
  ])('D-BI-7 image %s pulls %s by default', (image, policy) => {
    expect(podspecs.defaultPullPolicy(image)).toBe(policy);
  });

  it('D-BI-7 a pod spec gets the pod defaults; a template spec only the shared ones', () => {
    const spec = { containers: [container({ ports: [{ containerPort: 80 }], resources: { limits: { cpu: '1' } } })] };
    const pod = podspecs.defaultPodSpec(spec, { pod: true });
    expect(pod).toMatchObject({
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      schedulerName: 'default-scheduler',
      terminationGracePeriodSeconds: 30,
      securityContext: {},
      serviceAccountName: 'default',
      serviceAccount: 'default',
      enableServiceLinks: true,
    });
    expect(pod['containers']).toEqual([
      {
        name: 'main',
        image: 'nginx:1.27',
        ports: [{ containerPort: 80, protocol: 'TCP' }],
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        imagePullPolicy: 'IfNotPresent',
        resources: { limits: { cpu: '1' }, requests: { cpu: '1' } },
      },
    ]);
    const template = podspecs.defaultPodSpec(spec, { pod: false });
    expect(template).not.toHaveProperty('serviceAccountName');
    expect(template).not.toHaveProperty('enableServiceLinks');
    expect((template['containers'] as Json[])[0]['resources']).toEqual({ limits: { cpu: '1' } });
    expect(spec.containers[0]).not.toHaveProperty('imagePullPolicy');
  });

  it('D-BI-7 client values win over defaults, and the deprecated serviceAccount fills serviceAccountName', () => {
    const out = podspecs.defaultPodSpec(
      { containers: [container({ imagePullPolicy: 'Never' })], restartPolicy: 'Never', serviceAccount: 'robot' },
      { pod: true },
    );
    expect(out['restartPolicy']).toBe('Never');
    expect(out['serviceAccountName']).toBe('robot');
    expect(out['serviceAccount']).toBe('robot');
    expect((out['containers'] as Json[])[0]['imagePullPolicy']).toBe('Never');
  });

  it('D-BI-7 validation requires containers, images, valid unique names and port numbers', () => {
    expect(rendered(podspecs.validatePodSpec({ containers: [] }, 'spec'))).toEqual(['spec.containers: Required value']);
    const errors = rendered(
      podspecs.validatePodSpec(
        {
          containers: [
            { name: 'Bad_Name', image: 'x' },
            { name: 'a', image: '' },
            {
              name: 'a',
              image: 'x',
              ports: [
                { containerPort: 0, protocol: 'TCP' },
                { containerPort: 70000, protocol: 'ICMP' },
              ],
            },
          ],
          initContainers: [{ image: 'x' }],
        },
        'spec',
      ),
    );
    expect(errors).toEqual([
      expect.stringMatching(/^spec\.containers\[0\]\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 label/),
      'spec.containers[1].image: Required value',
      'spec.containers[2].name: Duplicate value: "a"',
      'spec.containers[2].ports[0].containerPort: Required value',
      'spec.containers[2].ports[1].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
      'spec.containers[2].ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
      'spec.initContainers[0].name: Required value',
    ]);
  });

  it('D-BI-7 a valid defaulted spec has no errors, at a template path too', () => {
    const spec = podspecs.defaultPodSpec({ containers: [container({ ports: [{ containerPort: 8080, name: 'http' }] })] }, { pod: true });
    expect(podspecs.validatePodSpec(spec, 'spec')).toEqual([]);
    expect(rendered(podspecs.validatePodSpec({ containers: [{ name: 'a' }] }, 'spec.template.spec'))).toEqual([
      'spec.template.spec.containers[0].image: Required value',
    ]);
  });

  it('D-BI-7 updates may change images, the deadline, the grace period and add tolerations only', () => {
    const old = podspecs.defaultPodSpec({ containers: [container()], tolerations: [{ key: 'a', operator: 'Exists' }] }, { pod: true });
    const ok = {
      ...old,
      containers: [{ ...(old['containers'] as Json[])[0], image: 'nginx:2' }],
      activeDeadlineSeconds: 5,
      terminationGracePeriodSeconds: 1,
      tolerations: [
        { key: 'a', operator: 'Exists' },
        { key: 'b', operator: 'Exists' },
      ],
    };
    expect(podspecs.specUpdateErrors(ok, old)).toEqual([]);
    for (const bad of [
      { ...old, restartPolicy: 'Never' },
      { ...old, tolerations: [] },
      { ...old, containers: [...(old['containers'] as Json[]), container({ name: 'side' })] },
      { ...old, containers: [{ ...(old['containers'] as Json[])[0], name: 'renamed' }] },
    ]) {
      expect(rendered(podspecs.specUpdateErrors(bad, old))).toEqual([`spec: Forbidden: ${podspecs.IMMUTABLE_SPEC_MESSAGE}`]);
    }
  });

  it.each([
    ['500m', 0.5],
    ['1Gi', 2 ** 30],
    ['2', 2],
    ['1e3', 1000],
    ['1.5k', 1500],
    [3, 3],
    ['abc', NaN],
  ])('parses quantity %s', (q, value) => {
    expect(podspecs.parseQuantity(q)).toBe(value);
  });

  it.each<[string, Json[], string]>([
    ['no resources', [{}], 'BestEffort'],
    ['requests only', [{ requests: { cpu: '100m' } }], 'Burstable'],
    ['equal limits and requests', [{ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1000m', memory: '1Gi' } }], 'Guaranteed'],
    ['requests below limits', [{ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m', memory: '1Gi' } }], 'Burstable'],
    ['one container without limits', [{ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1', memory: '1Gi' } }, {}], 'Burstable'],
    ['only non-compute resources', [{ limits: { 'example.com/gpu': '1' } }], 'BestEffort'],
  ])('D-BI-7 QoS class with %s is %s', (_title, resources, expected) => {
    const spec = podspecs.defaultPodSpec({ containers: resources.map((r, i) => container({ name: `c${i}`, resources: r })) }, { pod: true });
    expect(podspecs.qosClass(spec)).toBe(expected);
  });

  it('D-WIRE-19 malformed quantities and string ports are 400', () => {
    const bad = (spec: Json): unknown => {
      try {
        podspecs.checkDecodable(spec, 'Pod', 'v1', 'spec');
        return undefined;
      } catch (err) {
        return err;
      }
    };
    expect(bad({ containers: [container({ resources: { limits: { cpu: 'lots' } } })] })).toBeInstanceOf(statuses.ApiError);
    expect((bad({ containers: [container({ ports: [{ containerPort: '80' }] })] }) as statuses.ApiError).message).toContain(
      'Go struct field Pod.spec.containers.ports.containerPort',
    );
    expect(bad({ containers: [container({ resources: { limits: { cpu: '1', memory: '2Gi' } } })] })).toBeUndefined();
  });
});
