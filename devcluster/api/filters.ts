/**
 * Which objects a list, watch or deletecollection request addresses: the namespace scope plus label
 * and field selectors (D-VERB-3/4, D-WATCH-6). The three verbs share it so that they agree on what
 * "matching" means; the filter is parsed once per request, and `matches` runs per object.
 */
import * as selectors from '../meta/selectors.js';
import * as statuses from '../server/statuses.js';
import * as revisions from '../store/revisions.js';
import * as objects from './objects.js';
import type * as resources from './resources.js';
import type { JsonObject } from '../json.js';

export interface ObjectFilter {
  readonly namespace: string | undefined;
  /** Storage-key prefix covering the namespace (empty for all). */
  readonly prefix: string;
  /** Whether selectors other than a name match are in use (remainingItemCount is then omitted). */
  readonly selective: boolean;
  matches(obj: JsonObject): boolean;
}

const GENERIC_FIELDS = ['metadata.name', 'metadata.namespace'];

export function buildFilter(
  type: resources.ResourceType,
  namespace: string | undefined,
  labelSelector: string | undefined,
  fieldSelector: string | undefined,
  singleName?: string,
): ObjectFilter {
  let labels: selectors.LabelSelector | undefined;
  let fields: selectors.FieldSelector | undefined;
  try {
    if (labelSelector) labels = selectors.parseLabelSelector(labelSelector);
    if (fieldSelector) fields = selectors.parseFieldSelector(fieldSelector);
  } catch (err) {
    if (err instanceof selectors.SelectorError) throw statuses.badRequest(err.message);
    throw err;
  }
  const extra = type.strategy.fieldSelectors ?? {};
  if (fields) {
    for (const f of selectors.selectorFields(fields)) {
      if (GENERIC_FIELDS.includes(f) || f in extra) continue;
      if (!type.builtin || Object.keys(extra).length) throw statuses.badRequest(`field label not supported: ${f}`);
      throw statuses.badRequest(`"${f}" is not a known field selector: only "metadata.name", "metadata.namespace"`);
    }
    if (singleName !== undefined) {
      const named = selectors.exactName(fields);
      if (named !== undefined && named !== singleName) throw statuses.badRequest("fieldSelector metadata.name doesn't match requested name");
    }
  }
  const getField =
    (obj: JsonObject) =>
    (f: string): string | undefined => {
      if (f === 'metadata.name') return objects.nameOf(obj);
      if (f === 'metadata.namespace') return objects.namespaceOf(obj) ?? '';
      return extra[f]?.(obj);
    };
  const prefix = type.namespaced && namespace ? revisions.objectKey(namespace, '') : '';
  const namedOnly = fields !== undefined && selectors.selectorFields(fields).every((f) => f === 'metadata.name');
  return {
    namespace,
    prefix,
    selective: labels !== undefined || (fields !== undefined && !namedOnly),
    matches(obj: JsonObject): boolean {
      if (singleName !== undefined && objects.nameOf(obj) !== singleName) return false;
      if (type.namespaced && namespace && objects.namespaceOf(obj) !== namespace) return false;
      if (labels && !selectors.matchesLabels(labels, objects.labelsOf(obj))) return false;
      if (fields && !selectors.matchesFields(fields, getField(obj))) return false;
      return true;
    },
  };
}
