/**
 * Naming: TypeScript identifiers for things that come from a CRD.
 *
 * A nested object type is named after the kind and its path, `<Kind><Path in PascalCase>`
 * (`WidgetSpecTemplate`). Two rules keep the names readable and safe:
 * - words repeated across the parent/child boundary are said once (`podAffinity.podAffinityTerm`
 *   gives `…PodAffinityTerm`, not `…PodAffinityPodAffinityTerm`);
 * - every name is sanitised to `[A-Za-z0-9_]` and starts with a letter or `_`, so property names
 *   such as `-Xms`, `rbd-mirror`, `$propertyBag` or `__proto__` still give valid identifiers.
 *
 * Uniqueness is the caller's job with a `NameRegistry`: the first claimant of a name gets it, later
 * ones get `Name2`, `Name3`, … in claim order, and reserved names are never handed out.
 * modeling.ts claims names in a stable order (breadth-first, document order).
 *
 * A kind may be any DNS label in any case, so a kind's own name can be a word TypeScript does not
 * allow as a declaration's name (`string`, `class`, `any`, `arguments`): `declarable` appends `_`
 * to those. Names taken from TypeScript's global scope (`Object`, `Record`, `Array`) are fine as
 * they are: generated modules never refer to a global type by name, so shadowing one is harmless.
 */

/** Splits a property name into words: on separators, lower→upper steps and acronym ends. */
export function words(text: string): string[] {
  return text
    .split(/[^A-Za-z0-9]+/)
    .flatMap((part) => part.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+|[A-Z]/g) ?? [])
    .filter((word) => word.length > 0);
}

/** PascalCase of a property name, keeping acronyms (`tlsConfig` → `TlsConfig`, `-XX` → `XX`). */
export function pascal(text: string): string {
  return text
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part.length > 0)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');
}

const wordCache = new Map<string, string[]>();

/** `words(text)` in lower case, memoised: parents are asked about once per child. */
function lowerWords(text: string): string[] {
  let found = wordCache.get(text);
  if (!found) {
    if (wordCache.size > 50_000) wordCache.clear();
    found = words(text).map((word) => word.toLowerCase());
    wordCache.set(text, found);
  }
  return found;
}

/** Makes any text a valid identifier that starts with a letter or `_` (`''` → `_`). */
export function identifier(text: string): string {
  const cleaned = text.replace(/[^A-Za-z0-9_]/g, '');
  if (cleaned === '') return '_';
  return /^[0-9]/.test(cleaned) ? `_${cleaned}` : cleaned;
}

/**
 * Words that cannot name an exported interface, type alias or constant in an ES module: reserved
 * words (also in strict mode and modules), TypeScript's predefined type names, and the two names
 * strict mode forbids to bind.
 */
const UNDECLARABLE = new Set(
  [
    'break case catch class const continue debugger default delete do else enum export extends false finally for function if import in',
    'instanceof new null return super switch this throw true try typeof var void while with',
    'implements interface let package private protected public static yield await',
    'any unknown never number bigint boolean string symbol object undefined intrinsic',
    'arguments eval',
  ]
    .join(' ')
    .split(' '),
);

/** A name that can be declared: `name`, or `name_` when `name` is a word that cannot be (`string` → `string_`). */
export function declarable(name: string): string {
  return UNDECLARABLE.has(name) ? `${name}_` : name;
}

/**
 * The name of a child type: the parent name followed by the child's PascalCase segment, with the
 * words the two share at their boundary said once. A child that would vanish entirely is kept.
 */
export function childName(parent: string, property: string): string {
  const segment = pascal(property) || 'Field';
  const parentWords = lowerWords(parent);
  const childWords = words(segment);
  const lowerChild = childWords.map((word) => word.toLowerCase());
  let overlap = 0;
  for (let size = Math.min(parentWords.length - 1, lowerChild.length - 1); size > 0; size -= 1) {
    const tail = parentWords.slice(parentWords.length - size);
    if (tail.every((word, index) => word === lowerChild[index])) {
      overlap = size;
      break;
    }
  }
  if (overlap === 0) return parent + segment;
  return parent + childWords.slice(overlap).join('');
}

/** The descriptor constant: the plural in PascalCase, spelled like the kind where they agree. */
export function descriptorName(kind: string, plural: string): string {
  if (plural.toLowerCase().startsWith(kind.toLowerCase()) && plural.length > kind.length) {
    return identifier(kind + plural.slice(kind.length));
  }
  return identifier(pascal(plural));
}

/** Hands out unique identifiers: reserved names first, then `Name`, `Name2`, `Name3`, … */
export class NameRegistry {
  private readonly taken = new Set<string>();

  constructor(reserved: Iterable<string> = []) {
    for (const name of reserved) this.taken.add(name);
  }

  /** Whether a name is reserved or already handed out. */
  has(name: string): boolean {
    return this.taken.has(name);
  }

  /** Claims `base` or, if it is taken, the first free `base<n>` with n ≥ 2. */
  claim(base: string): string {
    let name = base;
    for (let counter = 2; this.taken.has(name); counter += 1) name = `${base}${counter}`;
    this.taken.add(name);
    return name;
  }
}
