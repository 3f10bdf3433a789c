/**
 * The connect subresources (D-BI-18): `pods/log`, `pods/exec`, `pods/attach`, `pods/portforward`,
 * `pods/proxy`, `services/proxy` and `nodes/proxy`. A real API server forwards them to a kubelet
 * or into the cluster network; the devcluster has neither, so each answers what a real server
 * answers when there is nothing to reach — never a silent success:
 *
 * - a Pod without a node: exec, attach and port-forward → 400 `pod <name> does not have a host
 *   assigned`; logs → 204 No Content (upstream streams nothing for such a Pod);
 * - a Pod bound to a node (`pods/binding`): the node must exist (404 otherwise) and have an address
 *   (500 `no preferred addresses found; …`), and then the kubelet is unreachable (500, `dial tcp
 *   <address>:10250: connect: connection refused`);
 * - proxies: a Pod without a routable IP → 400 `address not allowed`; a Service without Endpoints →
 *   404, with empty Endpoints → 503 `no endpoints available for service "<name>"`; an address that
 *   exists → 500, unreachable.
 *
 * The checks before that — the object exists, the container is named when the Pod has several,
 * log options are valid — are upstream's, with its messages.
 */
import * as fielderrors from '../meta/fielderrors.js';
import * as statuses from '../server/statuses.js';
import type * as actions from './actions.js';
import * as objects from './objects.js';
import * as reading from './reading.js';
import * as revisions from '../store/revisions.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

const KUBELET_PORT = 10250;
/** The API server's default `--kubelet-preferred-address-types`. */
const ADDRESS_TYPES = ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'];

const mapOf = (o: unknown, key: string): JsonObject => (json.isObject(o) && json.isObject(o[key]) ? (o[key] as JsonObject) : {});
const listOf = (o: unknown, key: string): unknown[] => (json.isObject(o) && Array.isArray(o[key]) ? (o[key] as unknown[]) : []);
const str = (o: unknown, key: string): string => (json.isObject(o) && typeof o[key] === 'string' ? (o[key] as string) : '');

/** An error upstream does not turn into a Status of its own: 500 with no reason. */
const unreached = (message: string): statuses.ApiError => new statuses.ApiError(500, '', message);
const unavailable = (message: string): statuses.ApiError => new statuses.ApiError(503, 'ServiceUnavailable', message);

/** `id` as `name`, `name:port` or `scheme:name:port` (upstream `SplitSchemeNamePort`). */
function splitSchemeNamePort(id: string): { scheme: string; name: string; port: string } | undefined {
  const parts = id.split(':');
  let scheme = '';
  let name: string;
  let port = '';
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) [name, port] = [parts[0]!, parts[1]!];
  else if (parts.length === 3) [scheme, name, port] = [parts[0]!, parts[1]!, parts[2]!];
  else return undefined;
  return name && ['', 'http', 'https'].includes(scheme) ? { scheme, name, port } : undefined;
}

async function podOf(r: actions.SubresourceRequest, name: string): Promise<JsonObject> {
  return reading.get(r.core, r.type, r.namespace, name, undefined);
}

/** The container a request addresses (upstream `validateContainer`). */
function containerOf(pod: JsonObject, requested: string): string {
  const spec = mapOf(pod, 'spec');
  const name = objects.nameOf(pod);
  const all = ['initContainers', 'containers', 'ephemeralContainers'].flatMap((list) => listOf(spec, list).map((c) => str(c, 'name')));
  if (requested) {
    if (!all.includes(requested)) throw statuses.badRequest(`container ${requested} is not valid for pod ${name}`);
    return requested;
  }
  const containers = listOf(spec, 'containers');
  if (containers.length === 1) return str(containers[0], 'name');
  if (containers.length === 0) throw statuses.badRequest(`a container name must be specified for pod ${name}`);
  throw statuses.badRequest(`a container name must be specified for pod ${name}, choose one of: [${all.join(' ')}]`);
}

/** The kubelet a node would be reached at: 404 for a missing node, 500 without an address. */
function kubeletOf(r: actions.SubresourceRequest, nodeName: string): { host: string; port: number } {
  const node = r.core.store.get('nodes', revisions.objectKey(undefined, nodeName));
  if (!node) throw statuses.notFound({ group: '', resource: 'nodes', kind: 'Node' }, nodeName);
  const status = mapOf(node, 'status');
  const addresses = listOf(status, 'addresses').filter(json.isObject);
  for (const type of ADDRESS_TYPES) {
    const found = addresses.find((a) => a['type'] === type && typeof a['address'] === 'string' && a['address']);
    if (found) {
      const port = mapOf(mapOf(status, 'daemonEndpoints'), 'kubeletEndpoint')['Port'];
      return { host: String(found['address']), port: typeof port === 'number' && port > 0 ? port : KUBELET_PORT };
    }
  }
  const known = addresses.map((a) => `{${str(a, 'type')} ${str(a, 'address')}}`).join(' ');
  throw unreached(`no preferred addresses found; known addresses: [${known}]`);
}

const refused = (host: string, port: number | string): string => `dial tcp ${joinHostPort(host, port)}: connect: connection refused`;
const joinHostPort = (host: string, port: number | string): string => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

/** exec, attach and port-forward: the Pod must have a node, whose kubelet is then out of reach. */
async function streamTo(r: actions.SubresourceRequest, checkContainer: boolean): Promise<never> {
  const pod = await podOf(r, r.name!);
  if (checkContainer) containerOf(pod, r.query.get('container') ?? '');
  const nodeName = str(mapOf(pod, 'spec'), 'nodeName');
  if (!nodeName) throw statuses.badRequest(`pod ${r.name} does not have a host assigned`);
  const kubelet = kubeletOf(r, nodeName);
  throw unreached(`error dialing backend: ${refused(kubelet.host, kubelet.port)}`);
}

/** `GET pods/{name}/exec`, `POST …`. */
export const podExec = (r: actions.SubresourceRequest): Promise<never> => streamTo(r, true);
/** `GET pods/{name}/attach`, `POST …`. */
export const podAttach = (r: actions.SubresourceRequest): Promise<never> => streamTo(r, true);
/** `GET pods/{name}/portforward`, `POST …`. */
export const podPortForward = (r: actions.SubresourceRequest): Promise<never> => streamTo(r, false);

/** upstream `ValidatePodLogOptions` over the query. */
function logOptionErrors(q: URLSearchParams): fielderrors.FieldError[] {
  const errors: fielderrors.FieldError[] = [];
  const int = (key: string): number | undefined => (q.has(key) ? Number(q.get(key)) : undefined);
  const tail = int('tailLines');
  if (tail !== undefined && tail < 0) errors.push(fielderrors.invalid('tailLines', tail, 'must be greater than or equal to 0'));
  const limit = int('limitBytes');
  if (limit !== undefined && limit < 1) errors.push(fielderrors.invalid('limitBytes', limit, 'must be greater than 0'));
  const since = int('sinceSeconds');
  if (since !== undefined && q.has('sinceTime')) errors.push(fielderrors.forbidden('', 'at most one of `sinceTime` or `sinceSeconds` may be specified'));
  else if (since !== undefined && since < 1) errors.push(fielderrors.invalid('sinceSeconds', since, 'must be greater than 0'));
  return errors;
}

/** `GET pods/{name}/log`: 204 for a Pod without a node (nothing to stream), else the kubelet is out of reach. */
export async function podLog(r: actions.SubresourceRequest): Promise<actions.SubresourceReply> {
  const errors = logOptionErrors(r.query);
  if (errors.length) throw statuses.invalid({ group: '', resource: 'pods', kind: 'PodLogOptions' }, r.name!, errors);
  const pod = await podOf(r, r.name!);
  const container = containerOf(pod, r.query.get('container') ?? '');
  const nodeName = str(mapOf(pod, 'spec'), 'nodeName');
  if (!nodeName) return { code: 204 };
  const { host, port } = kubeletOf(r, nodeName);
  throw unreached(`Get "https://${joinHostPort(host, port)}/containerLogs/${r.namespace}/${r.name}/${container}": ${refused(host, port)}`);
}

/** Whether an IP is one the proxy may dial (upstream: a global unicast address). */
function routable(ip: string): boolean {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    if (v4.slice(1).some((p) => Number(p) > 255)) return false;
    return !(a === 0 || a === 127 || (a === 169 && b === 254) || a >= 224);
  }
  if (!ip.includes(':') || !/^[0-9a-fA-F:.]+$/.test(ip)) return false;
  const lower = ip.toLowerCase();
  return !(lower === '::' || lower === '::1' || /^fe[89ab]/.test(lower) || lower.startsWith('ff'));
}

/** `pods/{name[:port]}/proxy/…`. */
export async function podProxy(r: actions.SubresourceRequest): Promise<never> {
  const id = splitSchemeNamePort(r.name!);
  if (!id) throw statuses.badRequest(`invalid pod request ${JSON.stringify(r.name)}`);
  const pod = await podOf(r, id.name);
  let port = id.port;
  if (!port) {
    const withPorts = listOf(mapOf(pod, 'spec'), 'containers').find((c) => listOf(c, 'ports').length > 0);
    const first = withPorts ? listOf(withPorts, 'ports')[0] : undefined;
    if (json.isObject(first) && first['containerPort'] !== undefined) port = String(first['containerPort']);
  }
  const ip = str(mapOf(pod, 'status'), 'podIP');
  if (!routable(ip)) throw statuses.badRequest('address not allowed');
  throw unreached(refused(ip, port || (id.scheme === 'https' ? 443 : 80)));
}

/** `services/{name[:port]}/proxy/…`: through the Service's Endpoints, which no controller produces here. */
export async function serviceProxy(r: actions.SubresourceRequest): Promise<never> {
  const raw = r.name!;
  const id = splitSchemeNamePort(raw);
  if (!id) throw statuses.badRequest(`invalid service request ${JSON.stringify(raw)}`);
  let portName = id.port;
  if (/^\d+$/.test(id.port)) {
    const service = await reading.get(r.core, r.type, r.namespace, id.name, undefined);
    const port = listOf(mapOf(service, 'spec'), 'ports').find((p) => json.isObject(p) && p['port'] === Number(id.port));
    if (!port) throw unavailable(`no service port ${id.port} found for service ${JSON.stringify(id.name)}`);
    portName = str(port, 'name');
  }
  const endpoints = r.core.store.get('endpoints', revisions.objectKey(r.namespace, id.name));
  if (!endpoints) throw statuses.notFound({ group: '', resource: 'endpoints', kind: 'Endpoints' }, id.name);
  const subsets = listOf(endpoints, 'subsets');
  if (subsets.length === 0) throw unavailable(`no endpoints available for service ${JSON.stringify(id.name)}`);
  for (const subset of subsets) {
    const port = listOf(subset, 'ports').find((p) => str(p, 'name') === portName);
    if (!port) continue;
    const address = listOf(subset, 'addresses').find((a) => validAddress(r, a));
    if (address) throw unreached(refused(str(address, 'ip'), json.isObject(port) ? String(port['port']) : ''));
  }
  throw unavailable(`no endpoints available for service ${JSON.stringify(raw)}`);
}

/** An endpoint address the proxy would use: it targets a Pod of the namespace that has its IP. */
function validAddress(r: actions.SubresourceRequest, address: unknown): boolean {
  const target = mapOf(address, 'targetRef');
  if (str(target, 'kind') !== 'Pod' || str(target, 'namespace') !== r.namespace) return false;
  const pod = r.core.store.get('pods', revisions.objectKey(r.namespace, str(target, 'name')));
  if (!pod) return false;
  return listOf(mapOf(pod, 'status'), 'podIPs').some((p) => str(p, 'ip') === str(address, 'ip'));
}

/** `nodes/{name[:port]}/proxy/…`: to the node's kubelet, which does not exist. */
export async function nodeProxy(r: actions.SubresourceRequest): Promise<never> {
  const id = splitSchemeNamePort(r.name!);
  if (!id) throw statuses.badRequest(`invalid node request ${JSON.stringify(r.name)}`);
  const kubelet = kubeletOf(r, id.name);
  throw unreached(refused(kubelet.host, id.port || kubelet.port));
}
