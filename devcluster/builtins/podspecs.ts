import * as fielderrors from '../meta/fielderrors.js';
import * as names from '../meta/names.js';
import * as strategies from './strategies.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
type FieldError = fielderrors.FieldError;

export const CONTAINER_LISTS = ['containers', 'initContainers'] as const;
export const PORT_PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
// In the order of upstream's validation, which its message keeps.
const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'];

/** The "pod updates may not change fields other than …" detail of upstream (without its diff). */
export const IMMUTABLE_SPEC_MESSAGE =
  'pod updates may not change fields other than `spec.containers[*].image`,' +
  '`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),' +
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/**
 * `Always` for an image with tag `latest` or without a tag, else `IfNotPresent` (digests count as pinned).
 * @example defaultPullPolicy('nginx:1.27') // → 'IfNotPresent'
 */
export function defaultPullPolicy(image: string): string {
  if (image.includes('@')) return 'IfNotPresent';
  const colon = image.lastIndexOf(':');
  const tag = colon > image.lastIndexOf('/') ? image.slice(colon + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

/** The defaults of one container (init and ephemeral containers alike); `pod` adds requests from limits. */
export function defaultContainer(container: unknown, pod: boolean): unknown {
  if (!json.isObject(container)) return container;
  const out: JsonObject = { ...container };
  out['terminationMessagePath'] ??= '/dev/termination-log';
  out['terminationMessagePolicy'] ??= 'File';
  if (out['imagePullPolicy'] === undefined && typeof out['image'] === 'string') out['imagePullPolicy'] = defaultPullPolicy(out['image']);
  const resources: JsonObject = { ...strategies.mapOf(out, 'resources') };
  if (pod && json.isObject(resources['limits'])) {
    // Pods (not templates) get missing requests from their limits, as upstream's SetDefaults_Pod does.
    const requests: JsonObject = { ...strategies.mapOf(resources, 'requests') };
    for (const [name, q] of Object.entries(resources['limits'])) requests[name] ??= q;
    resources['requests'] = requests;
  }
  out['resources'] = resources;
  if (Array.isArray(out['ports'])) {
    out['ports'] = out['ports'].map((p) => (json.isObject(p) ? { ...p, protocol: p['protocol'] ?? 'TCP' } : p));
  }
  return out;
}

/**
 * The defaults of a pod spec. `pod` adds what only Pods get (not templates): `serviceAccountName`
 * `default` (the service-account admission), `enableServiceLinks: true`, requests from limits.
 * Returns a copy; the input is not changed.
 */
export function defaultPodSpec(spec: JsonObject, opts: { pod: boolean }): JsonObject {
  const out: JsonObject = { ...spec };
  for (const list of CONTAINER_LISTS) {
    if (Array.isArray(out[list])) out[list] = out[list].map((c) => defaultContainer(c, opts.pod));
  }
  out['restartPolicy'] ??= 'Always';
  out['terminationGracePeriodSeconds'] ??= 30;
  out['dnsPolicy'] ??= 'ClusterFirst';
  out['securityContext'] ??= {};
  out['schedulerName'] ??= 'default-scheduler';
  if (!out['serviceAccountName'] && typeof out['serviceAccount'] === 'string' && out['serviceAccount']) out['serviceAccountName'] = out['serviceAccount'];
  if (opts.pod) {
    if (!out['serviceAccountName']) out['serviceAccountName'] = 'default';
    out['enableServiceLinks'] ??= true;
  }
  if (typeof out['serviceAccountName'] === 'string' && out['serviceAccountName']) out['serviceAccount'] = out['serviceAccountName'];
  return out;
}

const portRangeError = (field: string, value: unknown): FieldError => fielderrors.invalid(field, value, 'must be between 1 and 65535, inclusive');
const validPort = (v: unknown): boolean => strategies.isInteger(v) && v >= 1 && v <= 65535;

/** IANA service names (container port names, Service port names are DNS labels instead). */
export function portNameErrors(name: string): string[] {
  const errors: string[] = [];
  if (name.length > 15) errors.push(names.maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(name)) errors.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (name.includes('--')) errors.push('must not contain consecutive hyphens');
  if (!/[a-z]/.test(name)) errors.push('must contain at least one letter (a-z)');
  if (name.startsWith('-') || name.endsWith('-')) errors.push('must not begin or end with a hyphen');
  return errors;
}

function validatePorts(ports: unknown[], path: string): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  ports.forEach((port, i) => {
    const at = fielderrors.child(path, i);
    const p = json.isObject(port) ? port : {};
    const name = p['name'];
    if (typeof name === 'string' && name !== '') {
      for (const msg of portNameErrors(name)) errors.push(fielderrors.invalid(`${at}.name`, name, msg));
      if (seen.has(name)) errors.push(fielderrors.duplicate(`${at}.name`, name));
      seen.add(name);
    }
    const cp = p['containerPort'];
    if (cp === undefined || cp === 0) errors.push(fielderrors.required(`${at}.containerPort`));
    else if (!validPort(cp)) errors.push(portRangeError(`${at}.containerPort`, cp));
    const hp = p['hostPort'];
    if (hp !== undefined && hp !== 0 && !validPort(hp)) errors.push(portRangeError(`${at}.hostPort`, hp));
    const protocol = p['protocol'];
    if (protocol === undefined || protocol === '') errors.push(fielderrors.required(`${at}.protocol`));
    else if (!PORT_PROTOCOLS.includes(protocol as string)) errors.push(fielderrors.notSupported(`${at}.protocol`, protocol, PORT_PROTOCOLS));
  });
  return errors;
}

/**
 * Validates a pod spec at `path` (`spec` or `spec.template.spec`): at least one container,
 * container names DNS-1123 labels unique across containers and init containers, `image` required,
 * ports 1–65535 with a known protocol, known restart and DNS policies.
 */
export function validatePodSpec(spec: unknown, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (!json.isObject(spec)) return [fielderrors.required(path)];
  if (strategies.listOf(spec, 'containers').length === 0) errors.push(fielderrors.required(`${path}.containers`));
  const seen = new Set<string>();
  for (const list of CONTAINER_LISTS) {
    strategies.listOf(spec, list).forEach((container, i) => {
      const at = fielderrors.child(`${path}.${list}`, i);
      const c = json.isObject(container) ? container : {};
      const name = c['name'];
      if (typeof name !== 'string' || name === '') {
        errors.push(fielderrors.required(`${at}.name`));
      } else {
        for (const msg of names.dns1123LabelErrors(name)) errors.push(fielderrors.invalid(`${at}.name`, name, msg));
        if (seen.has(name)) errors.push(fielderrors.duplicate(`${at}.name`, name));
        seen.add(name);
      }
      if (typeof c['image'] !== 'string' || c['image'].trim() === '') errors.push(fielderrors.required(`${at}.image`));
      errors.push(...validatePorts(strategies.listOf(c, 'ports'), `${at}.ports`));
    });
  }
  const restart = spec['restartPolicy'];
  if (restart !== undefined && !RESTART_POLICIES.includes(restart as string))
    errors.push(fielderrors.notSupported(`${path}.restartPolicy`, restart, RESTART_POLICIES));
  const dns = spec['dnsPolicy'];
  if (dns !== undefined && !DNS_POLICIES.includes(dns as string)) errors.push(fielderrors.notSupported(`${path}.dnsPolicy`, dns, DNS_POLICIES));
  return errors;
}

/**
 * The update rule of a Pod's spec (D-BI-7): only container/init-container images,
 * `activeDeadlineSeconds`, added tolerations and `terminationGracePeriodSeconds` may change;
 * anything else → one `spec: Forbidden` error.
 */
export function specUpdateErrors(next: JsonObject, old: JsonObject): FieldError[] {
  const patched: JsonObject = { ...old };
  for (const key of ['activeDeadlineSeconds', 'tolerations', 'terminationGracePeriodSeconds']) {
    if (next[key] === undefined) delete patched[key];
    else patched[key] = next[key];
  }
  for (const list of CONTAINER_LISTS) {
    const oldList = strategies.listOf(old, list);
    const newList = strategies.listOf(next, list);
    if (!Array.isArray(old[list]) || oldList.length !== newList.length) continue; // the comparison below reports it
    patched[list] = oldList.map((c, i) => {
      const n = newList[i];
      return json.isObject(c) ? { ...c, image: json.isObject(n) ? n['image'] : undefined } : c;
    });
  }
  const oldTolerations = strategies.listOf(old, 'tolerations');
  const newTolerations = strategies.listOf(next, 'tolerations');
  const tolerationsKept = oldTolerations.every((t) => newTolerations.some((n) => json.deepEqual(t, n)));
  if (!tolerationsKept || !json.deepEqual(patched, next)) return [fielderrors.forbidden('spec', IMMUTABLE_SPEC_MESSAGE)];
  return [];
}

const QUANTITY = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;
const SUFFIXES: Record<string, number> = {
  '': 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** Whether `value` has the syntax of a resource quantity (`500m`, `1Gi`, `2`, `1e3`). */
export const isQuantity = (value: unknown): boolean =>
  (typeof value === 'string' && QUANTITY.test(value)) || (typeof value === 'number' && Number.isFinite(value));

/** The numeric value of a resource quantity (`500m` → 0.5, `1Ki` → 1024); NaN when malformed. */
export function parseQuantity(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string') return NaN;
  const m = QUANTITY.exec(value);
  if (!m) return NaN;
  const base = Number(m[1]);
  const suffix = m[2]!;
  if (suffix in SUFFIXES) return base * SUFFIXES[suffix]!;
  const exp = /^[eE]([-+]?[0-9]+)$/.exec(suffix);
  return exp ? base * 10 ** Number(exp[1]) : NaN;
}

/**
 * Rejects with 400 what upstream could not decode into a pod spec: malformed resource quantities
 * and non-integer port numbers or grace periods (D-WIRE-19).
 */
export function checkDecodable(spec: JsonObject, kind: string, version: string, path: string): void {
  for (const list of CONTAINER_LISTS) {
    for (const c of strategies.listOf(spec, list)) {
      const resources = strategies.mapOf(c, 'resources');
      for (const part of ['requests', 'limits']) {
        for (const q of Object.values(strategies.mapOf(resources, part))) {
          if (!isQuantity(q)) throw strategies.undecodable(kind, version, `quantities must match the regular expression '${QUANTITY.source}'`);
        }
      }
    }
  }
  strategies.requireIntegers(
    spec,
    [
      'containers.*.ports.*.containerPort',
      'containers.*.ports.*.hostPort',
      'initContainers.*.ports.*.containerPort',
      'terminationGracePeriodSeconds',
      'activeDeadlineSeconds',
    ],
    kind,
    version,
    path,
  );
}

/**
 * The QoS class of a pod (upstream `GetPodQOS`): `BestEffort` without any cpu/memory requests or
 * limits, `Guaranteed` when every container limits cpu and memory and requests equal limits,
 * `Burstable` otherwise. Expects a defaulted spec (requests filled from limits).
 */
export function qosClass(spec: JsonObject): 'BestEffort' | 'Burstable' | 'Guaranteed' {
  const requests = new Map<string, number>();
  const limits = new Map<string, number>();
  let guaranteed = true;
  const add = (into: Map<string, number>, name: string, q: unknown): boolean => {
    if (name !== 'cpu' && name !== 'memory') return false;
    const v = parseQuantity(q);
    if (!(v > 0)) return false;
    into.set(name, (into.get(name) ?? 0) + v);
    return true;
  };
  for (const list of CONTAINER_LISTS) {
    for (const c of strategies.listOf(spec, list)) {
      const resources = strategies.mapOf(c, 'resources');
      for (const [name, q] of Object.entries(strategies.mapOf(resources, 'requests'))) add(requests, name, q);
      const found = new Set<string>();
      for (const [name, q] of Object.entries(strategies.mapOf(resources, 'limits'))) if (add(limits, name, q)) found.add(name);
      if (!found.has('cpu') || !found.has('memory')) guaranteed = false;
    }
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, req] of requests) {
      const lim = limits.get(name);
      if (lim === undefined || Math.abs(lim - req) > 1e-12 * Math.max(1, lim)) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}
