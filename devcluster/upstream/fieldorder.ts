/**
 * The member order of built-in objects as a real API server writes them (`fieldorder.json`, derived
 * from the round-trip fixtures of kubernetes/api by `scripts/upstream/derive-field-order.mjs`): per
 * OpenAPI definition, its members in Go struct order, each with its shape, so that objects can be
 * ordered without the OpenAPI document. Read on first use (about 100 KB).
 */
import * as files from './files.js';

/** One member of a definition: where it sits, how many map levels it is, and the struct inside. */
export interface Member {
  readonly index: number;
  /** Map levels (`data{}` → 1): their keys are sorted. */
  readonly maps: number;
  /** The definition of the objects inside (after the map levels; lists are transparent). */
  readonly definition: string | undefined;
}

/** A definition's members by name. */
export type Members = ReadonlyMap<string, Member>;

interface FieldOrderFile {
  readonly definitions: Readonly<Record<string, readonly string[]>>;
}

let cached: FieldOrderFile | undefined;
const compiled = new Map<string, Members | null>();

function load(): FieldOrderFile {
  cached ??= JSON.parse(files.readDataFile('fieldorder.json')) as FieldOrderFile;
  return cached;
}

/** `name{}{}>Def` → the member's name and shape. */
function parseMember(text: string, index: number): [string, Member] {
  const arrow = text.indexOf('>');
  const head = arrow < 0 ? text : text.slice(0, arrow);
  let name = head;
  let maps = 0;
  while (name.endsWith('{}')) {
    name = name.slice(0, -2);
    maps++;
  }
  return [name, { index, maps, definition: arrow < 0 ? undefined : text.slice(arrow + 1) }];
}

/** The members of a definition in struct order, or undefined for a definition without members. */
export function membersOf(definition: string): Members | undefined {
  let members = compiled.get(definition);
  if (members === undefined) {
    const list = Object.hasOwn(load().definitions, definition) ? load().definitions[definition] : undefined;
    members = list ? new Map(list.map((m, i) => parseMember(m, i))) : null;
    compiled.set(definition, members);
  }
  return members ?? undefined;
}

/** The member names of a definition in order (for tests and tools). */
export function orderOf(definition: string): string[] | undefined {
  const members = membersOf(definition);
  return members && [...members.keys()];
}
