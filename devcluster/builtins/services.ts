/**
 * Services (D-BI-8): defaults, allocation of a unique cluster IP from 10.96.0.0/12 and of node
 * ports from 30000–32767, port validation, and the immutable `clusterIP`. No endpoints are produced.
 *
 * Allocation reads the other Services through the strategy context (`listAll('services')`), so an
 * IP or port is "taken" exactly when a stored Service holds it. Values a client gives are checked in
 * `validate` (a taken or out-of-range value → 422), values the server picks in `prepareFor*`.
 */
import * as objects from '../api/objects.js';
import type * as resources from '../api/resources.js';
import * as fielderrors from '../meta/fielderrors.js';
import * as names from '../meta/names.js';
import * as podspecs from './podspecs.js';
import * as strategies from './strategies.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
type FieldError = fielderrors.FieldError;

export const SERVICE_CIDR = '10.96.0.0/12';
const CIDR_BASE = ((10 << 24) | (96 << 16)) >>> 0;
const CIDR_SIZE = 1 << 20;
export const NODE_PORT_MIN = 30000;
export const NODE_PORT_MAX = 32767;
const TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const AFFINITIES = ['ClientIP', 'None'];
/** The default `sessionAffinityConfig.clientIP.timeoutSeconds` (3 hours). */
const CLIENT_IP_AFFINITY_SECONDS = 10800;

/** Parses a dotted IPv4 address to a number; undefined when malformed. */
export function parseIPv4(text: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return undefined;
  return parts.reduce((acc, p) => acc * 256 + p, 0);
}

const formatIPv4 = (n: number): string => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');

/** Whether a dotted IPv4 address lies in the service range 10.96.0.0/12. */
export const inServiceRange = (ip: string): boolean => {
  const n = parseIPv4(ip);
  return n !== undefined && n >= CIDR_BASE && n < CIDR_BASE + CIDR_SIZE;
};

const specOf = (o: JsonObject): JsonObject => strategies.mapOf(o, 'spec');
const typeOf = (spec: JsonObject): string => strategies.stringOf(spec, 'type') || 'ClusterIP';
const needsNodePorts = (spec: JsonObject): boolean => ['NodePort', 'LoadBalancer'].includes(typeOf(spec));
const sameObject = (a: JsonObject, b: JsonObject): boolean => objects.nameOf(a) === objects.nameOf(b) && objects.namespaceOf(a) === objects.namespaceOf(b);

function takenIPs(others: JsonObject[]): Set<string> {
  const out = new Set<string>();
  for (const s of others) {
    const spec = specOf(s);
    for (const ip of [strategies.stringOf(spec, 'clusterIP'), ...strategies.listOf(spec, 'clusterIPs')]) if (typeof ip === 'string' && ip) out.add(ip);
  }
  return out;
}

function takenNodePorts(others: JsonObject[]): Set<number> {
  const out = new Set<number>();
  for (const s of others)
    for (const p of strategies.listOf(specOf(s), 'ports')) if (json.isObject(p) && strategies.isInteger(p['nodePort'])) out.add(p['nodePort']);
  return out;
}

/** Picks a free address of the service range (random first, as upstream, then a scan). */
export function allocateIP(taken: ReadonlySet<string>, random: () => number): string {
  for (let i = 0; i < 64; i++) {
    const ip = formatIPv4(CIDR_BASE + 2 + Math.floor(random() * (CIDR_SIZE - 3)));
    if (!taken.has(ip)) return ip;
  }
  for (let n = CIDR_BASE + 2; n < CIDR_BASE + CIDR_SIZE - 1; n++) if (!taken.has(formatIPv4(n))) return formatIPv4(n);
  throw new RangeError('the service IP range is full');
}

/** Picks a free node port (random first, then a scan). */
export function allocateNodePort(taken: ReadonlySet<number>, random: () => number): number {
  const span = NODE_PORT_MAX - NODE_PORT_MIN + 1;
  for (let i = 0; i < 64; i++) {
    const port = NODE_PORT_MIN + Math.floor(random() * span);
    if (!taken.has(port)) return port;
  }
  for (let p = NODE_PORT_MIN; p <= NODE_PORT_MAX; p++) if (!taken.has(p)) return p;
  throw new RangeError('the node port range is full');
}

/** The defaults of D-BI-8 that need no allocation. Returns a copy. */
export function defaultServiceSpec(spec: JsonObject): JsonObject {
  const out: JsonObject = { ...spec };
  out['type'] ??= 'ClusterIP';
  out['sessionAffinity'] ??= 'None';
  if (out['sessionAffinity'] === 'None') delete out['sessionAffinityConfig'];
  if (
    out['sessionAffinity'] === 'ClientIP' &&
    !strategies.isInteger(strategies.mapOf(strategies.mapOf(out, 'sessionAffinityConfig'), 'clientIP')['timeoutSeconds'])
  ) {
    out['sessionAffinityConfig'] = { clientIP: { timeoutSeconds: CLIENT_IP_AFFINITY_SECONDS } };
  }
  const external = out['type'] === 'ExternalName';
  if (!external) {
    // A headless Service without a selector asks for every family of the cluster (here: IPv4 only).
    const headlessWithoutSelector = out['clusterIP'] === 'None' && Object.keys(strategies.mapOf(out, 'selector')).length === 0;
    out['ipFamilies'] ??= ['IPv4'];
    out['ipFamilyPolicy'] ??= headlessWithoutSelector ? 'RequireDualStack' : 'SingleStack';
    out['internalTrafficPolicy'] ??= 'Cluster';
  }
  if (needsNodePorts(out) || (out['type'] === 'ClusterIP' && strategies.listOf(out, 'externalIPs').length > 0)) out['externalTrafficPolicy'] ??= 'Cluster';
  if (out['type'] === 'LoadBalancer') out['allocateLoadBalancerNodePorts'] ??= true;
  if (Array.isArray(out['ports'])) {
    out['ports'] = out['ports'].map((p) => {
      if (!json.isObject(p)) return p;
      const unsetTarget = p['targetPort'] === undefined || p['targetPort'] === 0 || p['targetPort'] === '';
      return { ...p, protocol: p['protocol'] ?? 'TCP', targetPort: unsetTarget ? p['port'] : p['targetPort'] };
    });
  }
  return out;
}

/** Fills `clusterIP`/`clusterIPs` and missing node ports, allocating against the other Services. */
function allocate(spec: JsonObject, others: JsonObject[], random: () => number): JsonObject {
  const out: JsonObject = { ...spec };
  if (out['type'] !== 'ExternalName') {
    const first = strategies.listOf(out, 'clusterIPs')[0];
    const given = strategies.stringOf(out, 'clusterIP') || (typeof first === 'string' ? first : '');
    const ip = given || allocateIP(takenIPs(others), random);
    out['clusterIP'] = ip;
    if (strategies.listOf(out, 'clusterIPs').length === 0) out['clusterIPs'] = [ip];
  }
  if (needsNodePorts(out) && Array.isArray(out['ports'])) {
    const taken = takenNodePorts(others);
    for (const p of out['ports']) if (json.isObject(p) && strategies.isInteger(p['nodePort'])) taken.add(p['nodePort']);
    out['ports'] = out['ports'].map((p) => {
      if (!json.isObject(p) || p['nodePort'] !== undefined) return p;
      const port = allocateNodePort(taken, random);
      taken.add(port);
      return { ...p, nodePort: port };
    });
  }
  return out;
}

/** On update, what the client left out is taken from the stored Service (upstream `patchAllocatedValues`). */
function carryAllocated(spec: JsonObject, old: JsonObject): JsonObject {
  const out: JsonObject = { ...spec };
  if (out['type'] !== 'ExternalName' && old['type'] !== 'ExternalName') {
    if (!out['clusterIP'] && old['clusterIP']) out['clusterIP'] = old['clusterIP'];
    if (strategies.listOf(out, 'clusterIPs').length === 0 && old['clusterIPs']) out['clusterIPs'] = old['clusterIPs'];
  }
  if (needsNodePorts(out) && needsNodePorts(old) && Array.isArray(out['ports'])) {
    const oldPorts = strategies.listOf(old, 'ports').filter(json.isObject);
    out['ports'] = out['ports'].map((p) => {
      if (!json.isObject(p) || p['nodePort'] !== undefined) return p;
      const match = oldPorts.find((o) => o['port'] === p['port'] && (o['protocol'] ?? 'TCP') === (p['protocol'] ?? 'TCP'));
      return match && match['nodePort'] !== undefined ? { ...p, nodePort: match['nodePort'] } : p;
    });
  }
  return out;
}

function validatePorts(spec: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  const ports = strategies.listOf(spec, 'ports');
  const headless = spec['clusterIP'] === 'None';
  if (ports.length === 0 && !headless && typeOf(spec) !== 'ExternalName') errors.push(fielderrors.required('spec.ports'));
  const seen = new Set<string>();
  ports.forEach((port, i) => {
    const at = `spec.ports[${i}]`;
    const p = json.isObject(port) ? port : {};
    const name = p['name'];
    if (typeof name !== 'string' || name === '') {
      if (ports.length > 1) errors.push(fielderrors.required(`${at}.name`));
    } else {
      for (const msg of names.dns1123LabelErrors(name)) errors.push(fielderrors.invalid(`${at}.name`, name, msg));
      if (seen.has(name)) errors.push(fielderrors.duplicate(`${at}.name`, name));
      seen.add(name);
    }
    const num = p['port'];
    if (!strategies.isInteger(num) || num < 1 || num > 65535)
      errors.push(fielderrors.invalid(`${at}.port`, num ?? 0, 'must be between 1 and 65535, inclusive'));
    const protocol = p['protocol'];
    if (!podspecs.PORT_PROTOCOLS.includes(protocol as string)) errors.push(fielderrors.notSupported(`${at}.protocol`, protocol, podspecs.PORT_PROTOCOLS));
    const target = p['targetPort'];
    if (typeof target === 'string') {
      for (const msg of podspecs.portNameErrors(target)) errors.push(fielderrors.invalid(`${at}.targetPort`, target, msg));
    } else if (target !== undefined && (!strategies.isInteger(target) || target < 1 || target > 65535)) {
      errors.push(fielderrors.invalid(`${at}.targetPort`, target, 'must be between 1 and 65535, inclusive'));
    }
    const nodePort = p['nodePort'];
    if (nodePort !== undefined && nodePort !== 0 && !needsNodePorts(spec)) {
      errors.push(fielderrors.forbidden(`${at}.nodePort`, `may not be used when \`type\` is '${typeOf(spec)}'`));
    }
  });
  return errors;
}

/** Given cluster IPs and node ports must be valid, in range and free (checked against the other Services). */
function validateAllocations(spec: JsonObject, old: JsonObject | undefined, others: JsonObject[]): FieldError[] {
  const errors: FieldError[] = [];
  const ip = strategies.stringOf(spec, 'clusterIP');
  if (ip && ip !== 'None' && ip !== strategies.stringOf(old, 'clusterIP')) {
    if (parseIPv4(ip) === undefined) {
      errors.push(fielderrors.invalid('spec.clusterIPs[0]', ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'));
    } else if (!inServiceRange(ip)) {
      errors.push(
        fielderrors.invalid(
          'spec.clusterIPs',
          [ip],
          `failed to allocate IP ${ip}: provided IP (${ip}) is not in the valid range. The range of valid IPs is ${SERVICE_CIDR}`,
        ),
      );
    } else if (takenIPs(others).has(ip)) {
      errors.push(fielderrors.invalid('spec.clusterIPs', [ip], `failed to allocate IP ${ip}: provided IP is already allocated`));
    }
  }
  if (needsNodePorts(spec)) {
    const taken = takenNodePorts(others);
    const mine = new Set<number>();
    const oldPorts = new Set(strategies.listOf(old, 'ports').map((p) => (json.isObject(p) ? p['nodePort'] : undefined)));
    strategies.listOf(spec, 'ports').forEach((p, i) => {
      const nodePort = json.isObject(p) ? p['nodePort'] : undefined;
      if (nodePort === undefined) return;
      const at = `spec.ports[${i}].nodePort`;
      if (!strategies.isInteger(nodePort) || nodePort < NODE_PORT_MIN || nodePort > NODE_PORT_MAX) {
        errors.push(
          fielderrors.invalid(at, nodePort, `provided port is not in the valid range. The range of valid ports is ${NODE_PORT_MIN}-${NODE_PORT_MAX}`),
        );
      } else if (mine.has(nodePort)) {
        errors.push(fielderrors.duplicate(at, nodePort));
      } else if (!oldPorts.has(nodePort) && taken.has(nodePort)) {
        errors.push(fielderrors.invalid(at, nodePort, 'provided port is already allocated'));
      }
      if (strategies.isInteger(nodePort)) mine.add(nodePort);
    });
  }
  return errors;
}

/** Validates a Service spec (D-BI-8); `others` are the stored Services except this one. */
export function validateService(obj: JsonObject, old: JsonObject | undefined, others: JsonObject[]): FieldError[] {
  const spec = specOf(obj);
  const errors: FieldError[] = [];
  const type = spec['type'];
  if (!TYPES.includes(type as string)) errors.push(fielderrors.notSupported('spec.type', type, TYPES));
  if (type === 'ExternalName' && !strategies.stringOf(spec, 'externalName')) errors.push(fielderrors.required('spec.externalName'));
  const affinity = spec['sessionAffinity'];
  if (!AFFINITIES.includes(affinity as string)) errors.push(fielderrors.notSupported('spec.sessionAffinity', affinity, AFFINITIES));
  errors.push(...validatePorts(spec));
  if (old) {
    const before = strategies.stringOf(specOf(old), 'clusterIP');
    const after = strategies.stringOf(spec, 'clusterIP');
    if (before && type !== 'ExternalName' && after !== before) errors.push(fielderrors.invalid('spec.clusterIP', after, 'field is immutable'));
  }
  errors.push(...validateAllocations(spec, old ? specOf(old) : undefined, others));
  return errors;
}

const othersOf = (obj: JsonObject, ctx: resources.StrategyContext): JsonObject[] => ctx.listAll('services').filter((s) => !sameObject(s, obj));

/** The Service strategy; see the module comment. */
export const serviceStrategy: resources.Strategy = strategies.plainStrategy('Service', {
  nameRule: 'dns1035',
  fieldSelectors: {
    'spec.clusterIP': (o) => strategies.stringOf(specOf(o), 'clusterIP'),
    'spec.type': (o) => strategies.stringOf(specOf(o), 'type'),
  },
  prepareForCreate(obj, ctx) {
    strategies.requireIntegers(obj, ['spec.ports.*.port', 'spec.ports.*.nodePort'], 'Service');
    const spec = allocate(defaultServiceSpec(specOf(obj)), othersOf(obj, ctx), ctx.random);
    return { ...obj, spec, status: { loadBalancer: {} } };
  },
  prepareForUpdate(obj, old, ctx) {
    strategies.requireIntegers(obj, ['spec.ports.*.port', 'spec.ports.*.nodePort'], 'Service');
    const spec = allocate(carryAllocated(defaultServiceSpec(specOf(obj)), specOf(old)), othersOf(obj, ctx), ctx.random);
    return strategies.keepStatus({ ...obj, spec }, old);
  },
  prepareForSubresource: strategies.statusSubresource.prepareForSubresource,
  validate(obj, old, ctx) {
    return validateService(obj, old, othersOf(obj, ctx));
  },
});
