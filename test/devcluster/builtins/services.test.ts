import { describe, expect, it } from 'vitest';
import * as fielderrors from '../../../devcluster/meta/fielderrors.js';
import * as services from '../../../devcluster/builtins/services.js';
import { loose, testContext } from './contexts.js';

type Json = { [key: string]: any };
const service = (name: string, spec: Json): Json => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec });
const rendered = (errors: fielderrors.FieldError[]): string[] => errors.map(fielderrors.renderError);

describe('services', () => {
  const s = loose(services.serviceStrategy);

  it('D-BI-8 create applies the defaults, allocates a cluster IP and sets an empty load-balancer status', () => {
    const out = s.prepareForCreate!(service('web', { ports: [{ port: 80 }], selector: { app: 'w' } }), testContext());
    expect(out['spec']).toEqual({
      ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }],
      selector: { app: 'w' },
      type: 'ClusterIP',
      sessionAffinity: 'None',
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      internalTrafficPolicy: 'Cluster',
      clusterIP: out['spec']['clusterIP'],
      clusterIPs: [out['spec']['clusterIP']],
    });
    expect(services.inServiceRange(out['spec']['clusterIP'])).toBe(true);
    expect(out['status']).toEqual({ loadBalancer: {} });
  });

  it('D-BI-8 allocation avoids addresses other Services hold', () => {
    // random 0 picks the lowest allocatable address, 10.96.0.2.
    expect(services.allocateIP(new Set(), () => 0)).toBe('10.96.0.2');
    const randoms = [0, 0.25];
    let i = 0;
    const second = services.allocateIP(new Set(['10.96.0.2']), () => randoms[i++ % 2]!);
    expect(second).not.toBe('10.96.0.2');
    expect(services.inServiceRange(second)).toBe(true);
    // When random picks keep hitting taken addresses, a scan finds the next free one.
    expect(services.allocateIP(new Set(['10.96.0.2']), () => 0)).toBe('10.96.0.3');
    expect(services.allocateNodePort(new Set([30000]), () => 0)).toBe(30001);
    const other = s.prepareForCreate!(service('a', { ports: [{ port: 80 }] }), testContext());
    const ctx = testContext({ services: [other] });
    const mine = s.prepareForCreate!(service('b', { ports: [{ port: 80 }] }), ctx);
    expect(mine['spec']['clusterIP']).not.toBe(other['spec']['clusterIP']);
  });

  it('D-BI-8 headless Services keep None and need no ports', () => {
    const ctx = testContext();
    const out = s.prepareForCreate!(service('h', { clusterIP: 'None' }), ctx);
    expect(out['spec']['clusterIP']).toBe('None');
    expect(out['spec']['clusterIPs']).toEqual(['None']);
    expect(s.validate!(out, undefined, ctx)).toEqual([]);
  });

  it('D-BI-8 validation of ports: required, range, names unique and required when several', () => {
    const ctx = testContext();
    const check = (spec: Json): string[] => rendered(s.validate!(s.prepareForCreate!(service('x', spec), ctx), undefined, ctx));
    expect(check({})).toEqual(['spec.ports: Required value']);
    // targetPort defaults to port, so it is reported too (as upstream does).
    expect(check({ ports: [{ port: 0 }] })).toEqual([
      'spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive',
      'spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive',
    ]);
    expect(check({ ports: [{ port: 80, targetPort: 'http-' }] })).toEqual([
      'spec.ports[0].targetPort: Invalid value: "http-": must not begin or end with a hyphen',
    ]);
    expect(check({ ports: [{ port: 80, targetPort: 'http' }] })).toEqual([]);
    expect(check({ ports: [{ port: 80 }, { port: 81, name: 'b' }] })).toEqual(['spec.ports[0].name: Required value']);
    expect(
      check({
        ports: [
          { port: 80, name: 'a' },
          { port: 81, name: 'a' },
        ],
      }),
    ).toEqual(['spec.ports[1].name: Duplicate value: "a"']);
    expect(check({ ports: [{ port: 80, nodePort: 30001 }] })).toEqual(["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"]);
    expect(check({ type: 'Magic', ports: [{ port: 80 }] })).toEqual([
      'spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
    ]);
  });

  it('D-BI-8 a given cluster IP must be valid, in range and free', () => {
    const holder = s.prepareForCreate!(service('holder', { clusterIP: '10.96.0.20', ports: [{ port: 80 }] }), testContext());
    const ctx = testContext({ services: [holder] });
    const check = (ip: string): string[] =>
      rendered(s.validate!(s.prepareForCreate!(service('x', { clusterIP: ip, ports: [{ port: 80 }] }), ctx), undefined, ctx));
    expect(check('10.96.0.20')).toEqual(['spec.clusterIPs: Invalid value: ["10.96.0.20"]: failed to allocate IP 10.96.0.20: provided IP is already allocated']);
    expect(check('192.168.0.1')).toEqual([expect.stringContaining('is not in the valid range. The range of valid IPs is 10.96.0.0/12')]);
    expect(check('10.96.0.300')).toEqual([expect.stringContaining('must be a valid IP address')]);
    expect(check('10.96.0.21')).toEqual([]);
    // The holder itself is not a conflict for its own update.
    expect(s.validate!(holder, holder, ctx)).toEqual([]);
  });

  it('D-BI-8 updates keep the allocated IP and node ports; clusterIP cannot change', () => {
    const ctx = testContext();
    const stored = s.prepareForCreate!(service('np', { type: 'NodePort', ports: [{ port: 80 }] }), ctx);
    const nodePort = stored['spec']['ports'][0]['nodePort'];
    expect(nodePort).toBeGreaterThanOrEqual(services.NODE_PORT_MIN);
    expect(nodePort).toBeLessThanOrEqual(services.NODE_PORT_MAX);
    const next = s.prepareForUpdate!(service('np', { type: 'NodePort', ports: [{ port: 80 }] }), stored, ctx);
    expect(next['spec']['clusterIP']).toBe(stored['spec']['clusterIP']);
    expect(next['spec']['ports'][0]['nodePort']).toBe(nodePort);
    expect(next['status']).toEqual({ loadBalancer: {} });
    expect(s.validate!(next, stored, ctx)).toEqual([]);
    const moved = s.prepareForUpdate!(service('np', { type: 'NodePort', clusterIP: '10.96.0.99', ports: [{ port: 80 }] }), stored, ctx);
    expect(rendered(s.validate!(moved, stored, ctx))).toEqual(['spec.clusterIP: Invalid value: "10.96.0.99": field is immutable']);
  });

  it('D-BI-8 node ports must be in range and free', () => {
    const holder = s.prepareForCreate!(service('holder', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }), testContext());
    const ctx = testContext({ services: [holder] });
    const check = (nodePort: number): string[] =>
      rendered(s.validate!(s.prepareForCreate!(service('x', { type: 'NodePort', ports: [{ port: 80, nodePort }] }), ctx), undefined, ctx));
    expect(check(30080)).toEqual(['spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated']);
    expect(check(80)).toEqual(['spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767']);
    expect(check(30081)).toEqual([]);
  });

  it('D-BI-8 ExternalName Services get no cluster IP and need an external name', () => {
    const ctx = testContext();
    const out = s.prepareForCreate!(service('ext', { type: 'ExternalName' }), ctx);
    expect(out['spec']).not.toHaveProperty('clusterIP');
    expect(out['spec']).not.toHaveProperty('ipFamilies');
    expect(rendered(s.validate!(out, undefined, ctx))).toEqual(['spec.externalName: Required value']);
  });

  it('D-VERB-4 services are selectable by spec.clusterIP and spec.type', () => {
    const obj = service('a', { type: 'NodePort', clusterIP: '10.96.0.5' });
    expect(s.fieldSelectors!['spec.type']!(obj)).toBe('NodePort');
    expect(s.fieldSelectors!['spec.clusterIP']!(obj)).toBe('10.96.0.5');
  });
});
