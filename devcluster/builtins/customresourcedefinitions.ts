/**
 * The CustomResourceDefinition kind itself, as a resource like the others: how a CRD object is
 * defaulted and validated when written (D-CRD-1/2), its status subresource, and the cleanup finalizer
 * added on create (D-CRD-16), which is what lets the CRD controller delete the custom objects before
 * the definition goes away. Serving the custom resources a CRD defines is `api/customresources`.
 */
import * as definitions from '../crds/definitions.js';
import type * as schemas from '../crds/schemas.js';
import * as objects from '../api/objects.js';
import type * as resources from '../api/resources.js';
import * as strategic from '../patching/strategic.js';
import * as upstream from '../upstream/catalog.js';
import * as catalog from './catalog.js';
import * as datamaps from './datamaps.js';
import * as generic from './generic.js';
import * as strategies from './strategies.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

const asCrd = (o: JsonObject): schemas.CustomResourceDefinition => o as unknown as schemas.CustomResourceDefinition;
const fromCrd = (c: schemas.CustomResourceDefinition): JsonObject => c as unknown as JsonObject;

/** A conversion webhook's `caBundle` that is not base64 is refused with 400 while decoding, as upstream (`[]byte` field). */
function checkDecodable(obj: JsonObject): void {
  const clientConfig = strategies.mapOf(strategies.mapOf(strategies.mapOf(obj['spec'], 'conversion'), 'webhook'), 'clientConfig');
  const bundle = clientConfig['caBundle'];
  const why = typeof bundle === 'string' ? datamaps.base64Error(bundle) : undefined;
  if (why) throw strategies.undecodable('CustomResourceDefinition', 'v1', why);
}

export const crdStrategy: resources.Strategy = {
  nameRule: 'crd',
  putCreates: false,
  requireResourceVersion: true,
  deleteReturnsObject: false,
  smpSchema: strategic.builtinSmpSchema('CustomResourceDefinition'),
  generation: (old, next) => !json.deepEqual(old['spec'], next['spec']),
  prepareForCreate(obj) {
    checkDecodable(obj);
    const defaulted = fromCrd(definitions.defaultCrd(asCrd(obj)));
    const { status: _s, ...rest } = defaulted;
    return objects.withMeta({ ...rest, status: { conditions: [], acceptedNames: { plural: '', kind: '' }, storedVersions: [] } }, (m) => {
      const f = Array.isArray(m['finalizers']) ? (m['finalizers'] as string[]) : [];
      m['finalizers'] = f.includes(CLEANUP_FINALIZER) ? f : [...f, CLEANUP_FINALIZER];
    });
  },
  prepareForUpdate(obj, old) {
    checkDecodable(obj);
    return { ...fromCrd(definitions.defaultCrd(asCrd(obj))), status: old['status'] };
  },
  prepareForSubresource: catalog.statusSubresource.prepareForSubresource,
  validate(obj, old) {
    return definitions.validateCrd(asCrd(obj), old ? asCrd(old) : undefined);
  },
};

export function crdType(): resources.ResourceType {
  return {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    resource: 'customresourcedefinitions',
    singular: 'customresourcedefinition',
    kind: 'CustomResourceDefinition',
    listKind: 'CustomResourceDefinitionList',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    storage: 'apiextensions.k8s.io/customresourcedefinitions',
    subresources: ['status'],
    definition: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition',
    builtin: true,
    // Decoded and checked against the upstream schema like every built-in kind (D-BI-20/21).
    strategy: generic.withSchema(crdStrategy, crdEntry()),
  };
}

function crdEntry(): upstream.ResourceEntry {
  const entry = upstream.entries().find((e) => e.group === 'apiextensions.k8s.io' && e.resource === 'customresourcedefinitions');
  if (!entry) throw new Error('devcluster: the upstream catalog has no CustomResourceDefinition entry');
  return entry;
}
