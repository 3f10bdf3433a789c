/**
 * Stale samples: objects in `samples/` whose `apiVersion` names a version of one of the project's
 * CRDs that is no longer served — after a version rename (`v1` becomes `v2`), `kubectl apply -f
 * samples/` fails on them with `no matches for kind "Widget" in version "example.com/v1"`.
 *
 * Samples are the user's: the generator never rewrites them (the user may have changed every
 * value). It reports each stale object instead — the file, the version that is gone, the version
 * that replaces it — and writes a fresh sample of the new version beside the old file
 * (`samples/widget.v2.yaml`), unless one is there already, so that the fields the new version
 * requires are spelled out; the warning says to move the changes over and delete the old file.
 * Pure: the caller reads the files and writes the new samples.
 */
import * as yaml from 'yaml';
import type * as modeling from './modeling.js';
import * as schemas from './schemas.js';

/** A file of `samples/`, with its project-relative path. */
export interface SampleFile {
  readonly path: string;
  readonly text: string;
}

/** An object of a sample file whose version is gone. */
export interface StaleSample {
  /** The sample file (project-relative). */
  readonly path: string;
  /** 0-based index of the YAML document in the file. */
  readonly documentIndex: number;
  /** How many documents the file holds. */
  readonly documents: number;
  readonly crdName: string;
  readonly kind: string;
  readonly group: string;
  /** The version the object names, which the CRD no longer serves. */
  readonly gone: string;
  /** The version that replaces it: the CRD's preferred one (its storage version). */
  readonly replacement: string;
}

/** File names of `samples/` that are read (what kubectl applies from a folder). */
const SAMPLE_FILE = /\.(ya?ml|json)$/i;

/**
 * The objects of the sample files that name a group and kind of one of the project's CRDs in a
 * version it does not serve. Files that do not parse, and objects of other kinds, are not the
 * generator's business here and are passed over.
 */
export function findStale(files: readonly SampleFile[], model: modeling.GeneratorModel): StaleSample[] {
  const found: StaleSample[] = [];
  for (const file of files) {
    if (!SAMPLE_FILE.test(file.path)) continue;
    const documents = documentsOf(file.text);
    for (const [documentIndex, data] of documents.entries()) {
      const stale = staleObject(data, model);
      if (stale !== undefined) found.push({ path: file.path, documentIndex, documents: documents.length, ...stale });
    }
  }
  return found;
}

/** The documents of a text as JSON data; none when it does not parse. */
function documentsOf(text: string): unknown[] {
  try {
    const documents = yaml.parseAllDocuments(text, { version: '1.1' });
    if (!Array.isArray(documents) || documents.some((document) => document.errors.length > 0)) return [];
    return documents.map((document) => document.toJS({ maxAliasCount: 100 }) as unknown);
  } catch {
    return [];
  }
}

function staleObject(data: unknown, model: modeling.GeneratorModel): Omit<StaleSample, 'path' | 'documentIndex' | 'documents'> | undefined {
  if (!schemas.isRecord(data)) return undefined;
  const apiVersion = data['apiVersion'];
  const kind = data['kind'];
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || !apiVersion.includes('/')) return undefined;
  const [group, version] = apiVersion.split('/', 2) as [string, string];
  const crd = model.crds.find((each) => each.group === group && each.kind === kind);
  if (crd === undefined || crd.versions.length === 0 || crd.versions.some((each) => each.version === version)) return undefined;
  const replacement = (crd.versions.find((each) => each.storage) ?? crd.versions[0])!.version;
  return { crdName: crd.crdName, kind, group, gone: version, replacement };
}

/**
 * Where the fresh sample of a stale object goes: beside its file, named after the new version
 * (`samples/widget.v2.yaml`), and after the kind too when the file holds stale objects of several
 * kinds (`samples/all.gadget.v2.yaml`).
 */
export function replacementPath(stale: StaleSample, severalKinds: boolean): string {
  const extension = /\.(ya?ml|json)$/i.exec(stale.path)?.[0] ?? '.yaml';
  const stem = stale.path.slice(0, stale.path.length - extension.length);
  return `${stem}.${severalKinds ? `${stale.kind.toLowerCase()}.` : ''}${stale.replacement}.yaml`;
}

/**
 * The warning for a stale sample: the file (and document, when the file has several), the version
 * that is gone and what replaces it, what kubectl says, and what to do — with the fresh sample's
 * path when there is one (`written`: just written; otherwise it exists from an earlier run).
 */
export function describeStale(stale: StaleSample, fresh: { readonly path: string; readonly written: boolean } | undefined): string {
  const where = stale.documents > 1 ? `${stale.path}, document ${stale.documentIndex}` : stale.path;
  const head =
    `${where}: ${stale.kind} ${stale.group}/${stale.gone} — ${stale.crdName} no longer serves ${stale.gone}, ${stale.replacement} replaces it ` +
    `(kubectl apply -f samples/ fails: no matches for kind "${stale.kind}" in version "${stale.group}/${stale.gone}")`;
  if (fresh === undefined) return `${head}; set apiVersion: ${stale.group}/${stale.replacement} and fit the fields to it (see the field changes)`;
  const what = fresh.written ? `${fresh.path} is a new sample of ${stale.replacement}` : `${fresh.path} (a sample of ${stale.replacement}) is there`;
  return `${head}; ${what}: move your changes over to it and delete ${stale.path} (kopf-gen never edits or deletes a sample)`;
}
