/**
 * Samples: a small object that a CRD's schema accepts, for `samples/<kind>.yaml` and the
 * generated test of each kind.
 *
 * A new project should hold, per kind, one object that `kubectl apply -f samples/` gets past the
 * API server's validation, and the generated test creates that same object, so both are built
 * here from the schema: every required field (with its default, if it has one; optional fields
 * are left out, defaulted or not), with values that respect enums, bounds, `multipleOf`, lengths,
 * `format`s, simple patterns (patterns.ts), `minItems`, `minProperties`, list keys that must
 * differ, the required fields of `allOf` branches and of the first `anyOf`/`oneOf` branch, and the
 * `apiVersion` and `kind` that an embedded resource needs. What cannot be solved this way — CEL rules, patterns beyond the simple
 * subset — is reported as notes with the field's path; the notes go into the sample file and the
 * generation report, so that the user knows where to look if the server refuses the sample.
 */
import * as json from './json.js';
import * as patterns from './patterns.js';
import * as schemas from './schemas.js';

const MAX_DEPTH = 32;

/** A sample value and what it may not satisfy. */
export interface Sample<T = unknown> {
  readonly value: T;
  /** One line per field whose constraints the sample may not meet, e.g. `spec: the rule "…" is not checked`. */
  readonly notes: readonly string[];
}

/** Who a sample object is: its type, and the name (and namespace) it gets. */
export interface Identity {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  /** Absent for cluster-scoped kinds, and for namespaced ones that go where kubectl points. */
  readonly namespace?: string | undefined;
}

/** Values of the string formats the API server checks. */
const FORMATS: Readonly<Record<string, string>> = {
  'date-time': '2024-01-01T00:00:00Z',
  datetime: '2024-01-01T00:00:00Z',
  date: '2024-01-01',
  duration: '1m',
  byte: 'ZXhhbXBsZQ==',
  password: 'example',
  uri: 'https://example.com',
  email: 'user@example.com',
  hostname: 'example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  cidr: '192.0.2.0/24',
  mac: '00:00:5e:00:53:01',
  uuid: '123e4567-e89b-12d3-a456-426614174000',
  uuid3: 'a3bb189e-8bf9-3888-9912-ace4e6543002',
  uuid4: '9f8d7c6b-5a4e-4d3c-8b2a-1f0e9d8c7b6a',
  uuid5: '74738ff5-5367-5958-9aee-98fffdcd1876',
  isbn: '0306406152',
  isbn10: '0306406152',
  isbn13: '9780306406157',
  creditcard: '4111111111111111',
  ssn: '123-45-6789',
  hexcolor: '#ffffff',
  rgbcolor: 'rgb(255, 255, 255)',
  bsonobjectid: '507f1f77bcf86cd799439011',
};

/** The `apiVersion` and `kind` of an embedded resource whose schema does not constrain them. */
const EMBEDDED_TYPE = { apiVersion: 'v1', kind: 'ConfigMap' } as const;

/**
 * A sample of a kind: `apiVersion`, `kind`, `metadata` (name, and namespace when given), then the
 * sampled top-level fields of the schema; `spec` is always there when the schema declares it.
 */
export function sampleResource(schema: schemas.Schema, identity: Identity): Sample<Record<string, unknown>> {
  const sampler = new Sampler();
  const metadata: Record<string, unknown> = { name: identity.name };
  if (identity.namespace !== undefined) metadata['namespace'] = identity.namespace;
  const value: Record<string, unknown> = { apiVersion: identity.apiVersion, kind: identity.kind, metadata };
  const fields = sampler.object(schema, '', 0, { skip: new Set(['apiVersion', 'kind', 'metadata']) });
  Object.assign(value, fields);
  const spec = schemas.propertiesOf(schema).find(([name]) => name === 'spec')?.[1];
  if (spec !== undefined && !Object.hasOwn(value, 'spec')) value['spec'] = sampler.object(spec, 'spec', 1);
  return { value, notes: sampler.notes };
}

/** A sample value for a schema node, with notes. */
export function sample(node: schemas.Schema, path = ''): Sample {
  const sampler = new Sampler();
  return { value: sampler.value(node, path, 0, 0), notes: sampler.notes };
}

/** A sample value for a schema node. */
export function sampleValue(node: schemas.Schema): unknown {
  return sample(node).value;
}

/** A sample object for an object node: its required properties, sampled. */
export function sampleObject(node: schemas.Schema): Record<string, unknown> {
  return new Sampler().object(node, '', 0);
}

interface ObjectOptions {
  /** Property names not to sample (the root's apiVersion, kind and metadata). */
  readonly skip?: ReadonlySet<string>;
  /** Properties to include even when optional or defaulted (the keys of a list-map item). */
  readonly include?: ReadonlySet<string>;
  /** Makes the included keys differ between the items of a list. */
  readonly variant?: number;
}

/** Builds sample values and collects notes about what they may not satisfy. */
class Sampler {
  readonly notes: string[] = [];

  value(node: schemas.Schema, path: string, depth: number, variant: number): unknown {
    this.noteRules(node, path);
    const enumeration = schemas.own(node, 'enum');
    if (Array.isArray(enumeration) && enumeration.length > 0) {
      const values = enumeration.filter((value) => value !== null);
      return values.length > 0 ? values[variant % values.length] : enumeration[0];
    }
    if (schemas.flag(node, schemas.INT_OR_STRING)) return this.number(node, path, true, variant);
    switch (schemas.typeOf(node)) {
      case 'string':
        return this.string(node, path, variant);
      case 'integer':
        return this.number(node, path, true, variant);
      case 'number':
        return this.number(node, path, false, variant);
      case 'boolean':
        return variant % 2 === 1;
      case 'array':
        return this.array(node, path, depth);
      case 'object':
        return this.object(node, path, depth);
      default:
        return {};
    }
  }

  object(node: schemas.Schema, path: string, depth: number, options: ObjectOptions = {}): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    if (depth > MAX_DEPTH) return result;
    this.noteRules(node, path);
    const set = (name: string, value: unknown): void => {
      Object.defineProperty(result, name, { value, enumerable: true, writable: true, configurable: true });
    };
    const properties = new Map(schemas.propertiesOf(node));
    const required = requiredNames(node);
    const embedded = schemas.flag(node, schemas.EMBEDDED_RESOURCE);
    if (embedded) {
      for (const name of ['apiVersion', 'kind'] as const) {
        const child = properties.get(name);
        const enumeration = child === undefined ? undefined : schemas.own(child, 'enum');
        set(name, Array.isArray(enumeration) && typeof enumeration[0] === 'string' ? enumeration[0] : EMBEDDED_TYPE[name]);
      }
    }
    for (const [name, child] of properties) {
      if (Object.hasOwn(result, name) || options.skip?.has(name)) continue;
      const included = options.include?.has(name) === true;
      if (!included && !required.has(name)) continue;
      // A required field with a default may be left out (the server defaults before it validates),
      // but an input type may still require it: its default is the one value sure to fit.
      if (!included && schemas.hasDefault(child)) set(name, json.copyJson(child['default']));
      else set(name, this.value(child, schemas.childPath(path, name), depth + 1, included ? (options.variant ?? 0) : 0));
    }
    for (const name of required) {
      if (properties.has(name) || Object.hasOwn(result, name) || options.skip?.has(name)) continue;
      const additional = schemas.additionalSchemaOf(node);
      if (additional) set(name, this.value(additional, schemas.childPath(path, name), depth + 1, 0));
      else this.note(schemas.childPath(path, name), 'required, but the schema does not declare it; left out');
    }
    this.fillProperties(node, path, depth, result, set);
    return result;
  }

  /** Adds properties up to `minProperties`: declared optional ones first, then free keys of a map. */
  private fillProperties(
    node: schemas.Schema,
    path: string,
    depth: number,
    result: Record<string, unknown>,
    set: (name: string, value: unknown) => void,
  ): void {
    const minimum = numberOf(node, 'minProperties') ?? 0;
    const properties = schemas.propertiesOf(node);
    const count = (): number =>
      Object.keys(result).length + properties.filter(([name, child]) => !Object.hasOwn(result, name) && schemas.hasDefault(child)).length;
    for (const [name, child] of properties) {
      if (count() >= minimum) return;
      if (!Object.hasOwn(result, name) && !schemas.hasDefault(child)) set(name, this.value(child, schemas.childPath(path, name), depth + 1, 0));
    }
    const additional = schemas.additionalSchemaOf(node);
    const open = additional !== undefined || schemas.own(node, 'additionalProperties') === true || schemas.flag(node, schemas.PRESERVE_UNKNOWN_FIELDS);
    for (let index = 0; count() < minimum; index += 1) {
      if (!open) {
        this.note(path || '(the object)', `needs ${minimum} properties, but only ${count()} are declared`);
        return;
      }
      const key = `key${index}`;
      if (Object.hasOwn(result, key)) continue;
      set(key, additional ? this.value(additional, schemas.childPath(path, key), depth + 1, index) : 'value');
    }
  }

  private array(node: schemas.Schema, path: string, depth: number): unknown[] {
    const items = schemas.itemsOf(node);
    const minimum = numberOf(node, 'minItems') ?? 0;
    const count = Math.min(minimum, numberOf(node, 'maxItems') ?? minimum);
    if (!items || count === 0 || depth > MAX_DEPTH) return [];
    const listType = schemas.own(node, 'x-kubernetes-list-type');
    const keys = schemas.own(node, 'x-kubernetes-list-map-keys');
    const mapKeys = listType === 'map' && Array.isArray(keys) ? new Set(keys.filter((key): key is string => typeof key === 'string')) : undefined;
    const values = Array.from({ length: count }, (_, index) => {
      const itemPath = schemas.childPath(path, index);
      if (mapKeys !== undefined && schemas.typeOf(items) === 'object') {
        return this.object(items, itemPath, depth + 1, { include: mapKeys, variant: index });
      }
      return this.value(items, itemPath, depth + 1, index);
    });
    if (
      (listType === 'set' || mapKeys !== undefined) &&
      values.some((value, index) => values.slice(0, index).some((earlier) => json.sameJson(earlier, value)))
    ) {
      this.note(path, `needs ${count} distinct items; the sample repeats one`);
    }
    return values;
  }

  private string(node: schemas.Schema, path: string, variant: number): string {
    const format = schemas.own(node, 'format');
    const pattern = schemas.own(node, 'pattern');
    const minimum = numberOf(node, 'minLength') ?? 0;
    const maximum = numberOf(node, 'maxLength') ?? Number.POSITIVE_INFINITY;
    const fits = (text: string): boolean =>
      text.length >= minimum && text.length <= maximum && (typeof pattern !== 'string' || patterns.matches(pattern, text));
    const candidates: string[] = [];
    if (typeof format === 'string' && Object.hasOwn(FORMATS, format)) candidates.push(FORMATS[format]!);
    else {
      let text = variant === 0 ? 'example' : `example${variant}`;
      while (text.length < minimum) text += 'x';
      candidates.push(text.slice(0, Math.max(minimum, Math.min(text.length, maximum))));
      if (typeof pattern === 'string') {
        const derived = patterns.matchingString(pattern, minimum);
        if (derived !== undefined) candidates.push(variant === 0 ? derived : `${derived}${variant}`, derived);
      }
    }
    const found = candidates.find(fits);
    if (found !== undefined) return found;
    const wanted = [
      typeof format === 'string' && Object.hasOwn(FORMATS, format) ? `format ${format}` : undefined,
      typeof pattern === 'string' ? `pattern ${JSON.stringify(pattern)}` : undefined,
      minimum > 0 ? `minLength ${minimum}` : undefined,
      Number.isFinite(maximum) ? `maxLength ${maximum}` : undefined,
    ].filter((part) => part !== undefined);
    this.note(path, `no sample value found that meets ${wanted.join(', ')}`);
    return candidates[0]!;
  }

  private number(node: schemas.Schema, path: string, integer: boolean, variant: number): number {
    const lower = numberOf(node, 'minimum');
    const upper = numberOf(node, 'maximum');
    const exclusiveLower = schemas.own(node, 'exclusiveMinimum') === true;
    const exclusiveUpper = schemas.own(node, 'exclusiveMaximum') === true;
    const step = numberOf(node, 'multipleOf');
    const unit = step !== undefined && step > 0 ? step : integer ? 1 : undefined;
    const fits = (value: number): boolean =>
      (lower === undefined || (exclusiveLower ? value > lower : value >= lower)) &&
      (upper === undefined || (exclusiveUpper ? value < upper : value <= upper)) &&
      (!integer || Number.isInteger(value)) &&
      (step === undefined || step <= 0 || Number.isInteger(value / step));
    const candidates = [1 + variant];
    if (unit !== undefined) {
      // The first multiples of the unit inside the bounds, from either end.
      if (lower !== undefined) {
        const first = Math.ceil(lower / unit) * unit;
        candidates.push(first + variant * unit, first + (variant + 1) * unit);
      }
      if (upper !== undefined) {
        const last = Math.floor(upper / unit) * unit;
        candidates.push(last - variant * unit, last - (variant + 1) * unit);
      }
    } else if (lower !== undefined && upper !== undefined) {
      candidates.push(lower + ((upper - lower) * (variant + 1)) / (variant + 2));
    } else if (lower !== undefined) {
      candidates.push(lower + 1 + variant);
    } else if (upper !== undefined) {
      candidates.push(upper - 1 - variant);
    }
    const found = candidates.find(fits);
    if (found !== undefined) return found;
    this.note(path, 'no sample number found within the bounds');
    return candidates[0]!;
  }

  /** Notes the CEL rules of a node the sample includes: they are not evaluated here. */
  private noteRules(node: schemas.Schema, path: string): void {
    const rules = schemas.own(node, schemas.VALIDATIONS);
    if (!Array.isArray(rules)) return;
    for (const rule of rules) {
      const text = schemas.isRecord(rule) ? schemas.own(rule, 'rule') : undefined;
      if (typeof text === 'string') this.note(path || '(the object)', `the validation rule ${JSON.stringify(text)} is not checked by the sample`);
    }
  }

  private note(path: string, text: string): void {
    const line = `${path}: ${text}`;
    if (!this.notes.includes(line)) this.notes.push(line);
  }
}

/**
 * The required properties of an object node: its own, those of every `allOf` branch, and those of
 * the first `anyOf`/`oneOf` branch when every branch requires something (a branch that requires
 * nothing is met already, and for `oneOf` meeting a second one would be an error).
 */
function requiredNames(node: schemas.Schema): Set<string> {
  const names = new Set(schemas.requiredOf(node));
  const allOf = schemas.own(node, 'allOf');
  if (Array.isArray(allOf)) for (const branch of allOf) if (schemas.isRecord(branch)) for (const name of schemas.requiredOf(branch)) names.add(name);
  for (const junctor of ['anyOf', 'oneOf']) {
    const branches = schemas.own(node, junctor);
    if (!Array.isArray(branches) || branches.length === 0) continue;
    if (!branches.every((branch) => schemas.isRecord(branch) && schemas.requiredOf(branch).length > 0)) continue;
    for (const name of schemas.requiredOf(branches[0] as schemas.Schema)) names.add(name);
  }
  return names;
}

function numberOf(node: schemas.Schema, key: string): number | undefined {
  const value = schemas.own(node, key);
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
