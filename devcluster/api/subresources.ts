/**
 * The requests the generic verbs cannot answer (D-BI-17, D-BI-18): subresources that are actions
 * rather than views of the object (`pods/eviction`, `pods/binding` and the `bindings` resource,
 * `serviceaccounts/token`), the connect subresources that need a kubelet or a network
 * (`pods/log`, `exec`, `attach`, `portforward`, `proxy`, `services/proxy`, `nodes/proxy`), and
 * `componentstatuses`, which a real server computes instead of storing.
 *
 * The HTTP layer asks `handlerFor` first; a handler gets what it needs of the request as one
 * `SubresourceRequest` (actions.ts) and answers with a reply the HTTP layer writes as it writes
 * any other. A method the subresource does not serve is 405, as upstream.
 */
import * as statuses from '../server/statuses.js';
import type { SubresourceHandler } from './actions.js';
import * as binding from './binding.js';
import * as componentstatuses from './componentstatuses.js';
import * as connect from './connect.js';
import * as eviction from './eviction.js';
import type * as resources from './resources.js';
import * as tokenrequest from './tokenrequest.js';

type Methods = Readonly<Partial<Record<'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', SubresourceHandler>>>;

const ALL_METHODS = (h: SubresourceHandler): Methods => ({ GET: h, POST: h, PUT: h, PATCH: h, DELETE: h });

/** Handlers by `<storage>/<subresource>` (`<storage>` alone for a whole resource). */
const ROUTES: Readonly<Record<string, Methods>> = {
  'pods/eviction': { POST: eviction.evict },
  'pods/binding': { POST: binding.bindPod },
  bindings: { POST: binding.bindLegacy },
  'serviceaccounts/token': { POST: tokenrequest.requestToken },
  'pods/log': { GET: connect.podLog },
  'pods/exec': { GET: connect.podExec, POST: connect.podExec },
  'pods/attach': { GET: connect.podAttach, POST: connect.podAttach },
  'pods/portforward': { GET: connect.podPortForward, POST: connect.podPortForward },
  'pods/proxy': ALL_METHODS(connect.podProxy),
  'services/proxy': ALL_METHODS(connect.serviceProxy),
  'nodes/proxy': ALL_METHODS(connect.nodeProxy),
  componentstatuses: { GET: componentstatuses.read },
};

/** The handler of a request, undefined when the generic verbs serve it; throws 405 for a method the route does not serve. */
export function handlerFor(type: resources.ResourceType, subresource: string | undefined, method: string): SubresourceHandler | undefined {
  if (!type.builtin) return undefined;
  const methods = ROUTES[subresource === undefined ? type.storage : `${type.storage}/${subresource}`];
  if (!methods) return undefined;
  const handler = methods[(method === 'HEAD' ? 'GET' : method) as keyof Methods];
  if (!handler) throw statuses.methodNotAllowed();
  return handler;
}
