/**
 * Which webhooks a request must call (D-ADM-1..5): rule matching by operation, group, version,
 * resource and subresource, scope, the Equivalent match policy across versions of one CRD, and the
 * object/namespace selectors. Pure over the stored configurations.
 */
import * as objects from '../api/objects.js';
import type * as core from '../api/core.js';
import type * as resources from '../api/resources.js';
import * as selectors from '../meta/selectors.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

export interface Webhook {
  /** `metadata.name` of the configuration (ordering key, D-ADM-5). */
  configName: string;
  /** Position inside `webhooks`. */
  index: number;
  kind: 'mutating' | 'validating';
  spec: JsonObject;
  /** The group/version the object must be sent in (the matched rule's version under Equivalent). */
  sendAs: { group: string; version: string; resource: string };
}

const asList = (v: unknown): string[] => (Array.isArray(v) ? (v as unknown[]).map(String) : []);

function resourceMatches(patterns: string[], resource: string, subresource: string | undefined): boolean {
  return patterns.some((p) => {
    if (p === '*/*') return true;
    const [res, sub] = p.split('/') as [string, string | undefined];
    if (sub === undefined) return subresource === undefined && (res === '*' || res === resource);
    if (res !== '*' && res !== resource) return false;
    return sub === '*' ? subresource !== undefined : sub === subresource;
  });
}

/** The version a rule matches for this request, or undefined (D-ADM-3). */
function ruleVersion(rule: JsonObject, attrs: core.AdmissionAttributes, equivalent: boolean, servedVersions: string[]): string | undefined {
  const ops = asList(rule['operations']);
  if (!ops.includes('*') && !ops.includes(attrs.operation)) return undefined;
  const groups = asList(rule['apiGroups']);
  if (!groups.includes('*') && !groups.includes(attrs.type.group)) return undefined;
  if (!resourceMatches(asList(rule['resources']), attrs.type.resource, attrs.subresource)) return undefined;
  const scope = (rule['scope'] as string | undefined) ?? '*';
  if (scope === 'Namespaced' && !attrs.type.namespaced) return undefined;
  if (scope === 'Cluster' && attrs.type.namespaced) return undefined;
  const versions = asList(rule['apiVersions']);
  if (versions.includes('*') || versions.includes(attrs.type.version)) return attrs.type.version;
  if (!equivalent) return undefined;
  return versions.find((v) => servedVersions.includes(v));
}

function selectorMatches(selector: unknown, labels: Record<string, string>): boolean {
  if (selector === undefined || selector === null) return true;
  if (json.isObject(selector) && Object.keys(selector).length === 0) return true;
  try {
    return selectors.matchesLabels(selectors.labelSelectorFromObject(selector), labels);
  } catch {
    return false;
  }
}

export function matchingWebhooks(
  kind: 'mutating' | 'validating',
  configs: JsonObject[],
  attrs: core.AdmissionAttributes,
  registry: resources.Registry,
  namespaceLabels: (ns: string) => Record<string, string>,
): Webhook[] {
  const served = registry
    .all()
    .filter((t) => t.storage === attrs.type.storage)
    .map((t) => t.version);
  const out: Webhook[] = [];
  const sorted = [...configs].sort((a, b) => (objects.nameOf(a) < objects.nameOf(b) ? -1 : 1));
  for (const config of sorted) {
    const hooks = Array.isArray(config['webhooks']) ? (config['webhooks'] as JsonObject[]) : [];
    hooks.forEach((spec, index) => {
      const equivalent = (spec['matchPolicy'] ?? 'Equivalent') === 'Equivalent';
      const rules = Array.isArray(spec['rules']) ? (spec['rules'] as JsonObject[]) : [];
      let version: string | undefined;
      for (const rule of rules) {
        version = ruleVersion(rule, attrs, equivalent, served);
        if (version) break;
      }
      if (!version) return;
      const objLabels = attrs.object ? objects.labelsOf(attrs.object) : {};
      const oldLabels = attrs.oldObject ? objects.labelsOf(attrs.oldObject) : {};
      const objectSelector = spec['objectSelector'];
      if (!selectorMatches(objectSelector, objLabels) && !selectorMatches(objectSelector, oldLabels)) return;
      let nsLabels: Record<string, string> | undefined;
      if (attrs.type.group === '' && attrs.type.resource === 'namespaces') nsLabels = attrs.operation === 'DELETE' ? oldLabels : objLabels;
      else if (attrs.type.namespaced && attrs.namespace) nsLabels = namespaceLabels(attrs.namespace);
      if (nsLabels && !selectorMatches(spec['namespaceSelector'], nsLabels)) return;
      out.push({ configName: objects.nameOf(config), index, kind, spec, sendAs: { group: attrs.type.group, version, resource: attrs.type.resource } });
    });
  }
  return out;
}
