/**
 * The catalog of built-in resources a vanilla Kubernetes 1.32 cluster serves (`catalog.json`,
 * derived from the OpenAPI document and a few discovery facts by
 * `scripts/upstream/derive-catalog.mjs`): per resource its group, version, kind, scope, verbs,
 * short names, categories, schema and subresources. `builtins/catalog.ts` turns it into served
 * resource types. It is small and read at start-up.
 */
import * as files from './files.js';

/** One subresource as discovery lists it. */
export interface SubresourceEntry {
  readonly name: string;
  readonly verbs: readonly string[];
  readonly kind: string;
  /** Set when the subresource's kind is of another group/version (`scale` → autoscaling/v1 Scale). */
  readonly group?: string;
  readonly version?: string;
  /** Connect-style subresources (`log`, `exec`, `proxy`, …): streams, not objects. */
  readonly connect?: boolean;
  /** The schema of the subresource's body when it differs from the resource's own. */
  readonly definition?: string;
}

/** One served resource (one group/version/resource). */
export interface ResourceEntry {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly kind: string;
  readonly singular: string;
  readonly namespaced: boolean;
  readonly verbs: readonly string[];
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  /** The OpenAPI definition of the kind (`io.k8s.api.batch.v1.Job`). */
  readonly definition: string;
  readonly subresources: readonly SubresourceEntry[];
}

interface CatalogFile {
  readonly kubernetes: string;
  readonly resources: readonly ResourceEntry[];
}

let cached: CatalogFile | undefined;

function load(): CatalogFile {
  cached ??= JSON.parse(files.readDataFile('catalog.json')) as CatalogFile;
  return cached;
}

/** Every built-in resource of the catalog. */
export const entries = (): readonly ResourceEntry[] => load().resources;
