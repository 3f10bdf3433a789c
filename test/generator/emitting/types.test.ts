/**
 * The schema → TypeScript mapping rules, one focused schema each, then type-level checks that
 * compile small programs against emitted modules (`@ts-expect-error` lines prove what must fail).
 */
import { describe, expect, it } from 'vitest';
import * as support from '../support.js';

function specOf(properties: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  const module = support.emitSpec({ type: 'object', properties, ...extra });
  return support.declarationOf(module.text, 'WidgetSpec');
}

describe('mapping rules', () => {
  it('x-kubernetes-int-or-string becomes number | string', () => {
    const spec = specOf({ port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } });
    expect(spec).toContain('  port?: number | string;');
  });

  it('int-or-string works as array items and map values, and with nullable', () => {
    const spec = specOf({
      ports: { type: 'array', items: { 'x-kubernetes-int-or-string': true } },
      limits: { type: 'object', additionalProperties: { 'x-kubernetes-int-or-string': true } },
      maybe: { 'x-kubernetes-int-or-string': true, nullable: true },
    });
    expect(spec).toContain('  ports?: (number | string)[];');
    expect(spec).toMatch(/ {2}limits\?: \{\n {4}\[key: string\]: number \| string;\n {2}\};/);
    expect(spec).toContain('  maybe?: number | string | null;');
  });

  it('x-kubernetes-preserve-unknown-fields on an object without properties becomes an open record', () => {
    const spec = specOf({ values: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } });
    expect(spec).toMatch(/ {2}values\?: \{\n {4}\[key: string\]: unknown;\n {2}\};/);
  });

  it('x-kubernetes-preserve-unknown-fields with properties keeps them and adds an index signature', () => {
    const module = support.emitSpec({
      type: 'object',
      properties: { config: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { mode: { type: 'string' } } } },
    });
    expect(support.declarationOf(module.text, 'WidgetSpecConfig')).toBe(
      '/** `spec.config` */\nexport interface WidgetSpecConfig {\n  mode?: string;\n  [key: string]: unknown;\n}',
    );
  });

  it('x-kubernetes-preserve-unknown-fields without a type becomes unknown', () => {
    expect(specOf({ anything: { 'x-kubernetes-preserve-unknown-fields': true } })).toContain('  anything?: unknown;');
  });

  it('x-kubernetes-embedded-resource becomes a Kubernetes object type', () => {
    const module = support.emitSpec({
      type: 'object',
      properties: {
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        typed: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object', properties: { image: { type: 'string' } } } } },
      },
    });
    expect(module.text).toContain('import type { KubernetesObject, ObjectMeta } from "kopf-gen/runtime";');
    expect(support.declarationOf(module.text, 'WidgetSpec')).toMatch(/ {2}template\?: KubernetesObject & \{\n {4}\[key: string\]: unknown;\n {2}\};/);
    expect(support.declarationOf(module.text, 'WidgetSpecTyped')).toMatch(
      /^export type WidgetSpecTyped = KubernetesObject & \{\n {2}spec\?: WidgetSpecTypedSpec;\n\};/m,
    );
  });

  it('imports KubernetesObject only when a module uses it', () => {
    const module = support.emitSpec({ type: 'object', properties: { size: { type: 'integer' } } });
    expect(module.text).toContain('import type { ObjectMeta } from "kopf-gen/runtime";');
    expect(module.text).not.toContain('KubernetesObject');
  });

  it('nullable adds | null to scalars, enums, arrays, maps and named object types', () => {
    const spec = specOf({
      note: { type: 'string', nullable: true },
      mode: { type: 'string', enum: ['a', 'b'], nullable: true },
      tags: { type: 'array', items: { type: 'string', nullable: true }, nullable: true },
      labels: { type: 'object', additionalProperties: { type: 'string' }, nullable: true },
      owner: { type: 'object', nullable: true, properties: { name: { type: 'string' } } },
    });
    expect(spec).toContain('  note?: string | null;');
    expect(spec).toContain('  mode?: "a" | "b" | null;');
    expect(spec).toContain('  tags?: (string | null)[] | null;');
    expect(spec).toMatch(/ {2}labels\?: \{\n {4}\[key: string\]: string;\n {2}\} \| null;/);
    expect(spec).toContain('  owner?: WidgetSpecOwner | null;');
  });

  it('additionalProperties becomes a record of the value type', () => {
    const spec = specOf({
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      servers: { type: 'object', additionalProperties: { type: 'object', properties: { url: { type: 'string' } } } },
      nested: { type: 'object', additionalProperties: { type: 'array', items: { type: 'integer' } } },
    });
    expect(spec).toMatch(/ {2}labels\?: \{\n {4}\[key: string\]: string;\n {2}\};/);
    expect(spec).toMatch(/ {2}servers\?: \{\n {4}\[key: string\]: WidgetSpecServers;\n {2}\};/);
    expect(spec).toMatch(/ {2}nested\?: \{\n {4}\[key: string\]: number\[\];\n {2}\};/);
  });

  it('objects without additionalProperties stay closed; an object with no properties is Record<string, never>', () => {
    const module = support.emitSpec({
      type: 'object',
      properties: { closed: { type: 'object', properties: { flag: { type: 'boolean' } } }, empty: { type: 'object' } },
    });
    expect(support.declarationOf(module.text, 'WidgetSpecClosed')).toBe('/** `spec.closed` */\nexport interface WidgetSpecClosed {\n  flag?: boolean;\n}');
    expect(support.declarationOf(module.text, 'WidgetSpec')).toContain('  empty?: Record<string, never>;');
  });

  it('enum becomes a union of literals', () => {
    const spec = specOf({ color: { type: 'string', enum: ['red', 'green'] }, level: { type: 'integer', enum: [1, 2, 3] } });
    expect(spec).toContain('  color?: "red" | "green";');
    expect(spec).toContain('  level?: 1 | 2 | 3;');
  });

  it('required makes a property non-optional', () => {
    const spec = specOf({ size: { type: 'integer' }, name: { type: 'string' } }, { required: ['size'] });
    expect(spec).toContain('  size: number;');
    expect(spec).toContain('  name?: string;');
  });

  it('a default is documented with @default and makes the property non-optional', () => {
    const spec = specOf({ replicas: { type: 'integer', default: 1 }, options: { type: 'object', default: {}, properties: { a: { type: 'string' } } } });
    expect(spec).toContain('  /** @default 1 */\n  replicas: number;');
    expect(spec).toContain('  /** @default {} */\n  options: WidgetSpecOptions;');
  });

  it('descriptions become TSDoc on the property and on the named type', () => {
    const module = support.emitSpec({
      type: 'object',
      description: 'What the widget should be.',
      properties: { size: { type: 'integer', description: 'How big.\nIn centimetres.' } },
    });
    const spec = support.declarationOf(module.text, 'WidgetSpec');
    expect(spec).toMatch(/^\/\*\* What the widget should be\. \*\/\nexport interface WidgetSpec \{/);
    expect(spec).toContain('  /**\n   * How big.\n   * In centimetres.\n   */\n  size?: number;');
  });

  it('formats and constraints are documented', () => {
    const spec = specOf({ at: { type: 'string', format: 'date-time' }, name: { type: 'string', maxLength: 63, pattern: '^[a-z]+$' } });
    expect(spec).toContain('  /** Format: `date-time`. */\n  at?: string;');
    expect(spec).toContain('  /** Constraints: maxLength 63, pattern `^[a-z]+$`. */\n  name?: string;');
  });

  it('x-kubernetes-validations rules are shown in TSDoc', () => {
    const spec = specOf({
      schedule: { type: 'string', 'x-kubernetes-validations': [{ rule: "self != ''", message: 'must not be empty' }, { rule: 'self.size() < 10' }] },
    });
    expect(spec).toContain("   * Validation rules (CEL):\n   * - `self != ''` — must not be empty\n   * - `self.size() < 10`\n");
  });

  it('comment terminators and tags in descriptions cannot break the TSDoc', () => {
    const spec = specOf({ glob: { type: 'string', description: 'Matches a/*/b. Use @every 5m.', default: '*/5' } });
    expect(spec).toContain('Matches a/*\\/b. Use \\@every 5m.');
    expect(spec).toContain('@default "*\\/5"');
  });

  it('allOf/anyOf/oneOf/not only validate: they add nothing to the type', () => {
    const spec = specOf({
      exclusive: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, oneOf: [{ required: ['a'] }, { required: ['b'] }] },
    });
    expect(spec).toContain('  exclusive?: WidgetSpecExclusive;');
  });
});

describe('names', () => {
  const [oddity] = support.generate([support.fixture('oddities.yaml')]).modules;
  const spec = support.declarationOf(oddity!.text, 'OdditySpec');

  it('quotes property names that are not identifiers; nothing is lost', () => {
    for (const line of ['"-Xms"?: string;', '"-XX"?: {', '"rbd-mirror"?: OdditySpecRbdMirror;', '$propertyBag?: {', '"a.b"?: boolean;', '"3d"?: number;']) {
      expect(spec).toContain(`  ${line}`);
    }
  });

  it('keeps JavaScript specials and reserved words as property names', () => {
    for (const line of [
      '__proto__?: string;',
      'constructor?: string;',
      'toString?: number;',
      'default?: string;',
      'class?: string;',
      'delete?: boolean;',
      'import?: string;',
      'properties?: OdditySpecProperties;',
    ]) {
      expect(spec).toContain(`  ${line}`);
    }
  });

  it('resolves name collisions and never reuses reserved names', () => {
    expect(support.declarationOf(oddity!.text, 'Oddity')).toContain('  patch?: OddityPatch2;\n  list?: OddityList2;');
    expect(support.declarationOf(oddity!.text, 'OdditySpecFoo')).toContain('  bar?: OdditySpecFooBar2;');
    expect(support.declarationOf(oddity!.text, 'OddityPatch')).toContain('export type OddityPatch = MergePatch<Oddity>;');
  });

  it('names deep nesting after the whole path', () => {
    expect(oddity!.text).toContain('export interface OdditySpecLevel1Level2Level3Level4Level5Level6Level7Level8 {\n  leaf?: string;\n}');
  });
});

describe('the mappings fixture, one property per mapping row', () => {
  const [module] = support.generate([support.fixture('mappings.yaml')]).modules;
  const text = module!.text;
  const spec = support.declarationOf(text, 'MappingSpec');

  it.each([
    ['a required string', '  name: string;'],
    ['a required integer', '  replicas: number;'],
    ['a number', '  ratio?: number;'],
    ['a string enum, with odd literals', '  colour?: "red" | "green" | "blue-ish" | "with space";'],
    ['an integer enum', '  level?: 1 | 2 | 3;'],
    ['a nullable enum', '  nullableEnum?: "on" | "off" | null;'],
    ['a nullable string', '  nickname?: string | null;'],
    ['int-or-string', '  port?: number | string;'],
    ['nullable int-or-string', '  maxUnavailable?: number | string | null;'],
    ['a map of int-or-string quantities', '  quantities?: {\n    [key: string]: number | string;\n  };'],
    ['an untyped node preserving unknown fields', '  values?: unknown;'],
    ['an open object with known fields', '  config?: MappingSpecConfig;'],
    ['an open object without fields', '  opaque?: {\n    [key: string]: unknown;\n  };'],
    ['a closed object without fields', '  empty?: Record<string, never>;'],
    ['an open embedded resource', '  template?: KubernetesObject & {\n    [key: string]: unknown;\n  };'],
    ['a nullable embedded resource with a schema', '  service?: MappingSpecService | null;'],
    ['a map of objects', '  endpoints?: {\n    [key: string]: MappingSpecEndpoints;\n  };'],
    ['a map of lists of lists', '  matrix?: {\n    [key: string]: number[][];\n  };'],
    ['a defaulted enum, never optional', '  mode: "Auto" | "Manual";'],
    ['a defaulted object, never optional', '  selector: MappingSpecSelector;'],
    ['a set', '  tags?: string[];'],
    ['a list keyed by name', '  containers?: MappingSpecContainers[];'],
    ['a list of lists of objects', '  grid?: MappingSpecGrid[][];'],
    ['a string whose allOf only validates', '  schedule?: string;'],
  ])('%s', (_, line) => {
    expect(spec).toContain(line);
  });

  it('keeps descriptions from closing the comment or starting a tag', () => {
    expect(text).toContain('contain *\\/ which must not end');
    expect(text).toContain('and \\@deprecated or \\@internal which');
    expect(text).toContain('a closing *\\/ in the middle, a /* opening, an \\@param and an e-mail such as ops@example.org');
    expect(text.match(/\*\//g)).toHaveLength(text.match(/\/\*\*/g)!.length);
  });

  it('declares an embedded resource with a schema as its members on top of the object envelope', () => {
    expect(support.declarationOf(text, 'MappingSpecService')).toContain(
      'export type MappingSpecService = KubernetesObject & {\n  spec?: MappingSpecServiceSpec;\n};',
    );
  });

  it('makes a defaulted field of a map value required, and keeps CEL rules as documentation', () => {
    expect(support.declarationOf(text, 'MappingSpecEndpoints')).toContain('  host: string;\n  /** @default 1 */\n  weight: number;');
    expect(support.declarationOf(text, 'MappingSpecBackend')).toContain('  service?: string;');
    expect(support.declarationOf(text, 'MappingSpecBackend')).toContain('- `has(self.service) != has(self.url)` — set exactly one of service and url');
  });
});

describe('modules', () => {
  it('emits a separate module per served version and skips versions that are not served', () => {
    const { modules, notes } = support.generate([support.fixture('gadgets.yaml')]);
    expect(modules.map((module) => module.fileName)).toEqual(['gadgets.example.com.v1.ts', 'gadgets.example.com.v1beta1.ts']);
    expect(support.declarationOf(modules[0]!.text, 'GadgetSpec')).toContain('  size: number;');
    expect(support.declarationOf(modules[1]!.text, 'GadgetSpec')).toContain('  size?: string;');
    expect(modules[1]!.text).toContain('apiVersion: "example.com/v1beta1";');
    expect(modules[1]!.text).toContain(' * @deprecated example.com/v1beta1 Gadget is deprecated; use example.com/v1\n */\nexport const Gadgets');
    expect(notes).toContain('fixtures/gadgets.yaml, document 0: skipped version v1alpha1 of Gadget (not served)');
  });

  it('skips the versions no longer served of a long-lived CRD, and keeps the served ones in order', () => {
    const { modules, notes } = support.generate([support.fixture('releases.yaml')]);
    expect(modules.filter((module) => module.kind === 'Release').map((module) => module.version)).toEqual(['v2', 'v2beta1', 'v1']);
    expect(notes.filter((note) => note.includes('not served'))).toEqual([
      'fixtures/releases.yaml, document 0: skipped version v1beta1 of Release (not served)',
      'fixtures/releases.yaml, document 0: skipped version v1alpha1 of Release (not served)',
    ]);
  });

  it('describes cluster-scoped kinds as not namespaced', () => {
    const module = support.emitSpec({ type: 'object' }, { scope: 'Cluster' });
    expect(support.declarationOf(module.text, 'Widgets')).toContain('  namespaced: false,');
  });

  it('makes spec required only when the schema requires it', () => {
    const required = support.emitSpec({ type: 'object' }, { root: { type: 'object', required: ['spec'], properties: { spec: { type: 'object' } } } });
    expect(support.declarationOf(required.text, 'Widget')).toContain('  spec: WidgetSpec;\n  status?: WidgetStatus;');
    const optional = support.emitSpec({ type: 'object' });
    expect(support.declarationOf(optional.text, 'Widget')).toContain('  spec?: WidgetSpec;');
  });

  it('handles kinds whose schema has no spec or no status', () => {
    const closed = support.emitSpec(
      { type: 'object' },
      { root: { type: 'object', properties: { status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
    );
    expect(support.declarationOf(closed.text, 'WidgetSpec')).toContain('export type WidgetSpec = Record<string, never>;');
    const open = support.emitSpec({ type: 'object' }, { root: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } });
    expect(support.declarationOf(open.text, 'WidgetStatus')).toMatch(/export type WidgetStatus = \{\n {2}\[key: string\]: unknown;\n\};/);
    expect(support.declarationOf(open.text, 'Widget')).toContain('  [key: string]: unknown;');
  });
});

describe('emitted types, type-checked', () => {
  it('accept what the schema allows and reject what it does not', { timeout: 60_000 }, () => {
    const module = support.emitSpec({
      type: 'object',
      required: ['size'],
      properties: {
        size: { type: 'integer' },
        port: { 'x-kubernetes-int-or-string': true },
        mode: { type: 'string', enum: ['fast', 'slow'], default: 'fast' },
        note: { type: 'string', nullable: true },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        values: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        parts: { type: 'array', items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } },
      },
    });
    const usage = `
import type { Widget, WidgetPatch, WidgetSpec } from './${module.fileName.replace(/\.ts$/, '.js')}';
import { Widgets } from './${module.fileName.replace(/\.ts$/, '.js')}';

const spec: WidgetSpec = { size: 1, port: 'http', mode: 'slow', note: null, labels: { a: 'b' }, values: { any: [1] },
  template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {} }, parts: [{ name: 'x' }] };
const widget: Widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec };
export const both = [widget, Widgets.plural, Widgets.namespaced] as const;

// @ts-expect-error size is required
export const noSize: WidgetSpec = { mode: 'fast' };
// @ts-expect-error mode is non-optional: the server always defaults it
export const noMode: WidgetSpec = { size: 1 };
// @ts-expect-error enums are literal unions
export const badMode: WidgetSpec = { size: 1, mode: 'medium' };
// @ts-expect-error int-or-string is not boolean
export const badPort: WidgetSpec = { size: 1, mode: 'fast', port: true };
// @ts-expect-error closed objects reject unknown fields
export const extra: WidgetSpec = { size: 1, mode: 'fast', colour: 'red' };
// @ts-expect-error labels are a record of strings
export const badLabels: WidgetSpec = { size: 1, mode: 'fast', labels: { a: 1 } };
// @ts-expect-error the apiVersion is a literal
export const otherVersion: Widget = { apiVersion: 'example.com/v2', kind: 'Widget' };
// @ts-expect-error parts need a name
export const namelessPart: WidgetSpec = { size: 1, mode: 'fast', parts: [{}] };

export const patch: WidgetPatch = { metadata: { labels: { gone: null } }, spec: { note: null, labels: { a: null }, parts: [{ name: 'y' }] } };
// @ts-expect-error lists are replaced whole in a merge patch: their items are not partial
export const partialItems: WidgetPatch = { spec: { parts: [{}] } };
// @ts-expect-error a merge patch keeps the value types
export const badPatch: WidgetPatch = { spec: { size: 'big' } };
`;
    expect(support.typecheck([module, { fileName: 'usage.ts', text: usage }])).toEqual([]);
  });
});
