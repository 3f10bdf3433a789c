/**
 * `componentstatuses` (D-BI-18): the deprecated health view of the control plane (`kubectl get
 * cs`). A real server probes its controller manager, scheduler and etcd on every read; the
 * devcluster computes the same three entries from what it is:
 *
 * - `controller-manager` is Healthy: the devcluster's own controllers (garbage collection,
 *   namespaces, service accounts, …) run inside it;
 * - `scheduler` is Unhealthy with the error a real server reports for a scheduler that does not
 *   answer — there is none;
 * - `etcd-0` is Healthy: the in-memory store.
 *
 * Get and list only (no watch), with label and field selectors, Table output, and upstream's
 * deprecation warning (sent for the resource by the catalog). An unknown name is upstream's 500
 * `Component not found: <name>`.
 */
import * as statuses from '../server/statuses.js';
import type * as actions from './actions.js';
import * as filters from './filters.js';
import type * as resources from './resources.js';
import * as tables from './tables.js';
import type { JsonObject } from '../json.js';

const SCHEDULER_UNREACHABLE = 'Get "https://127.0.0.1:10259/healthz": dial tcp 127.0.0.1:10259: connect: connection refused';

/** The components, in name order (upstream answers in no particular order). */
function components(): JsonObject[] {
  const entry = (name: string, healthy: boolean, message: string): JsonObject => ({
    metadata: { name },
    conditions: [{ type: 'Healthy', status: healthy ? 'True' : 'False', message }],
  });
  return [entry('controller-manager', true, 'ok'), entry('etcd-0', true, 'ok'), entry('scheduler', false, SCHEDULER_UNREACHABLE)];
}

const COLUMNS: resources.TableColumns = {
  definitions: () => [
    {
      name: 'Name',
      type: 'string',
      format: 'name',
      description:
        'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
      priority: 0,
    },
    { name: 'Status', type: 'string', format: '', description: 'Status of the component conditions', priority: 0 },
    { name: 'Message', type: 'string', format: '', description: 'Message of the component conditions', priority: 0 },
    { name: 'Error', type: 'string', format: '', description: 'Error of the component conditions', priority: 0 },
  ],
  cells(obj) {
    const condition = ((obj['conditions'] as JsonObject[] | undefined) ?? []).find((c) => c['type'] === 'Healthy');
    const status = condition ? (condition['status'] === 'True' ? 'Healthy' : 'Unhealthy') : 'Unknown';
    return [(obj['metadata'] as JsonObject)['name'], status, condition?.['message'] ?? '', condition?.['error'] ?? ''];
  },
};

/** `GET componentstatuses[/{name}]`. */
export async function read(r: actions.SubresourceRequest): Promise<actions.SubresourceReply> {
  const typed = (c: JsonObject): JsonObject => ({ kind: 'ComponentStatus', apiVersion: 'v1', ...c });
  let items = components();
  if (r.name !== undefined) {
    const found = items.find((c) => (c['metadata'] as JsonObject)['name'] === r.name);
    if (!found) throw new statuses.ApiError(500, '', `Component not found: ${r.name}`);
    items = [found];
  } else {
    const filter = filters.buildFilter(r.type, undefined, r.query.get('labelSelector') ?? undefined, r.query.get('fieldSelector') ?? undefined);
    items = items.filter((c) => filter.matches(c));
  }
  if (r.table) {
    const includeObject =
      r.query.get('includeObject') === 'None' || r.query.get('includeObject') === 'Object' ? (r.query.get('includeObject') as 'None' | 'Object') : 'Metadata';
    return { code: 200, body: tables.tableOf({ ...r.type, table: COLUMNS }, items.map(typed), new Date(r.core.clock.now()), {}, includeObject) };
  }
  if (r.name !== undefined) return { code: 200, body: typed(items[0]!) };
  return { code: 200, body: { kind: 'ComponentStatusList', apiVersion: 'v1', metadata: {}, items } };
}
