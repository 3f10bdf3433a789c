/**
 * CRD names as the API server checks them: each CRD on its own, and the CRDs of one group together.
 *
 * A CRD's names become URL paths, `kind` values and TypeScript identifiers, so a name the API
 * server would refuse must stop the generator instead of being bent into something that compiles
 * (`Wid-gét` silently became `Widgt`). The server wants the CRD's object name to be
 * `<plural>.<group>`, the group to be a DNS subdomain with at least one dot, and the plural,
 * singular, short names and categories to be DNS-1035 labels (lower-case letters, digits and
 * hyphens, starting with a letter, at most 63 characters); `kind` and `listKind` may mix cases but
 * must otherwise be such labels, and may not be equal.
 *
 * Names must also be unique inside a group: the server accepts a second CRD whose kind, list kind,
 * plural, singular or short names are already taken by another CRD of the same group, but never
 * serves it (its `NamesAccepted` condition stays false). `checkNameConflicts` finds those
 * collisions among the CRDs of one run, and between them and the CRDs a project already has.
 */
import * as errors from './errors.js';
import * as loading from './loading.js';
import * as schemas from './schemas.js';

/** The names a CRD claims in its group, with the server's defaults for singular and listKind applied. */
export interface ClaimedNames {
  readonly name: string;
  readonly group: string;
  readonly kind: string;
  readonly listKind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
}

type Fail = (code: errors.GeneratorErrorCode, jsonPath: string, detail: string) => never;

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_LIMIT = 63;
const SUBDOMAIN_LIMIT = 253;
const LABEL_RULE = 'lower-case letters, digits and "-", starting with a letter and ending with a letter or digit, at most 63 characters';

/** Whether a text is a DNS-1035 label, as the API server requires of CRD names. */
export function isLabel(text: string): boolean {
  return text.length <= LABEL_LIMIT && DNS1035_LABEL.test(text);
}

/**
 * Checks the names of one CRD document whose `spec.group`, `spec.names.kind` and
 * `spec.names.plural` are known to be non-empty strings.
 *
 * @throws GeneratorError `invalid-crd` naming the field and the rule it breaks.
 */
export function checkNames(document: schemas.Schema, fail: Fail): void {
  const spec = document['spec'] as schemas.Schema;
  const names = spec['names'] as schemas.Schema;
  const group = spec['group'] as string;
  const plural = names['plural'] as string;
  const kind = names['kind'] as string;
  if (group.length > SUBDOMAIN_LIMIT || !DNS1123_SUBDOMAIN.test(group)) {
    fail(
      'invalid-crd',
      'spec.group',
      `group ${JSON.stringify(group)} is not a DNS subdomain (lower-case letters, digits, "-" and "."; at most 253 characters), which the API server requires`,
    );
  }
  if (!group.includes('.')) {
    fail('invalid-crd', 'spec.group', `group ${JSON.stringify(group)} must be a domain with at least one dot (e.g. "${group}.example.com")`);
  }
  if (!isLabel(plural)) fail('invalid-crd', 'spec.names.plural', `plural ${JSON.stringify(plural)} must be ${LABEL_RULE}`);
  if (!isLabel(kind.toLowerCase())) {
    fail('invalid-crd', 'spec.names.kind', `kind ${JSON.stringify(kind)} may mix cases but must otherwise be ${LABEL_RULE} (e.g. "Widget")`);
  }
  const singular = schemas.own(names, 'singular');
  if (singular !== undefined && singular !== '') {
    if (typeof singular !== 'string' || !isLabel(singular)) {
      fail(
        'invalid-crd',
        'spec.names.singular',
        `singular ${JSON.stringify(singular)} must be ${LABEL_RULE} (or left out: it defaults to the kind in lower case)`,
      );
    }
  }
  const listKind = schemas.own(names, 'listKind');
  if (listKind !== undefined && listKind !== '') {
    if (typeof listKind !== 'string' || !isLabel(listKind.toLowerCase())) {
      fail(
        'invalid-crd',
        'spec.names.listKind',
        `listKind ${JSON.stringify(listKind)} may mix cases but must otherwise be ${LABEL_RULE} (or left out: it defaults to "${kind}List")`,
      );
    }
    if (listKind === kind)
      fail('invalid-crd', 'spec.names.listKind', `listKind must differ from kind ${JSON.stringify(kind)} (leave it out to get "${kind}List")`);
  }
  for (const key of ['shortNames', 'categories']) {
    const list = schemas.own(names, key);
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) fail('invalid-crd', `spec.names.${key}`, `${key} must be a list of names`);
    (list as unknown[]).forEach((entry, index) => {
      if (typeof entry !== 'string' || !isLabel(entry)) fail('invalid-crd', `spec.names.${key}[${index}]`, `${JSON.stringify(entry)} must be ${LABEL_RULE}`);
    });
  }
  const metadata = schemas.own(document, 'metadata');
  const name = schemas.isRecord(metadata) ? schemas.own(metadata, 'name') : undefined;
  const expected = `${plural}.${group}`;
  if (name !== expected) {
    fail(
      'invalid-crd',
      'metadata.name',
      `the CRD must be named ${JSON.stringify(expected)} (<plural>.<group>), not ${JSON.stringify(name ?? null)}; the API server refuses any other name`,
    );
  }
}

/** The names a checked CRD document claims in its group. */
export function claimedNames(crd: loading.LoadedCrd): ClaimedNames {
  const spec = crd.document['spec'] as schemas.Schema;
  const names = spec['names'] as schemas.Schema;
  const kind = names['kind'] as string;
  const text = (key: string, fallback: string): string => {
    const value = schemas.own(names, key);
    return typeof value === 'string' && value !== '' ? value : fallback;
  };
  const shortNames = schemas.own(names, 'shortNames');
  return {
    name: `${names['plural'] as string}.${spec['group'] as string}`,
    group: spec['group'] as string,
    kind,
    listKind: text('listKind', `${kind}List`),
    plural: names['plural'] as string,
    singular: text('singular', kind.toLowerCase()),
    shortNames: Array.isArray(shortNames) ? shortNames.filter((entry): entry is string => typeof entry === 'string') : [],
  };
}

/**
 * Throws when two CRDs of one group claim the same name, the way the API server's naming check
 * decides it: a CRD's plural, singular and short names must not be the plural, singular or a short
 * name of another CRD of its group, and its kind and list kind must not be the kind or list kind
 * of another. `existing` are CRDs a project already has; `given` are the new ones (checked in
 * order, each against the existing ones and the given ones before it). Two documents with the same
 * CRD name are not compared here: that is a duplicate, refused elsewhere.
 *
 * @throws GeneratorError `names-conflict` at the later of the two documents, naming the other.
 */
export function checkNameConflicts(given: readonly loading.LoadedCrd[], existing: readonly loading.LoadedCrd[] = []): void {
  const earlier: { crd: loading.LoadedCrd; names: ClaimedNames }[] = existing.map((crd) => ({ crd, names: claimedNames(crd) }));
  for (const crd of given) {
    const names = claimedNames(crd);
    for (const other of earlier) {
      if (other.names.group !== names.group || other.names.name === names.name) continue;
      const clash = firstClash(names, other.names);
      if (!clash) continue;
      const where = loading.placeOf(other.crd);
      throw new errors.GeneratorError(
        'names-conflict',
        loading.locate(crd, clash.path),
        `${clash.what} ${JSON.stringify(clash.value)} is already taken by ${other.names.name} (${where}) in group ${names.group}; the API server would accept this CRD but never serve it (NamesAccepted false), so give it another ${clash.what} or drop one of the two CRDs`,
      );
    }
    earlier.push({ crd, names });
  }
}

interface Clash {
  readonly path: string;
  readonly what: string;
  readonly value: string;
}

function firstClash(names: ClaimedNames, other: ClaimedNames): Clash | undefined {
  const resources = new Set([other.plural, other.singular, ...other.shortNames]);
  const kinds = new Set([other.kind, other.listKind]);
  if (kinds.has(names.kind)) return { path: 'spec.names.kind', what: 'kind', value: names.kind };
  if (kinds.has(names.listKind)) return { path: 'spec.names.listKind', what: 'list kind', value: names.listKind };
  if (resources.has(names.plural)) return { path: 'spec.names.plural', what: 'plural', value: names.plural };
  if (resources.has(names.singular)) return { path: 'spec.names.singular', what: 'singular', value: names.singular };
  const index = names.shortNames.findIndex((shortName) => resources.has(shortName));
  if (index >= 0) return { path: `spec.names.shortNames[${index}]`, what: 'short name', value: names.shortNames[index]! };
  return undefined;
}
