/**
 * The schema → TypeScript mapping rules, one focused schema each, then type-level checks that
 * compile small programs against emitted modules (`@ts-expect-error` lines prove what must fail).
 */
import ts from 'typescript';
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

  it('x-kubernetes-embedded-resource becomes an object with a required apiVersion and kind, and the runtime metadata', () => {
    const module = support.emitSpec({
      type: 'object',
      properties: {
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        typed: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object', properties: { image: { type: 'string' } } } } },
      },
    });
    expect(support.declarationOf(module.text, 'WidgetSpec')).toContain(
      '  template?: {\n    apiVersion: string;\n    kind: string;\n    metadata?: $kopf.ObjectMeta;\n  } & {\n    [key: string]: unknown;\n  };',
    );
    expect(support.declarationOf(module.text, 'WidgetSpecTyped')).toContain(
      'export interface WidgetSpecTyped {\n  apiVersion: string;\n  kind: string;\n  metadata?: $kopf.ObjectMeta;\n  spec?: WidgetSpecTypedSpec;\n}',
    );
    expect(support.declarationOf(module.text, 'WidgetSpecTypedInput')).toContain('  metadata?: $kopf.ObjectMetaInput;');
  });

  it('imports the runtime once, as a namespace no generated name can take', () => {
    const module = support.emitSpec({ type: 'object', properties: { size: { type: 'integer' } } });
    expect(module.text.match(/^import .*$/gm)).toEqual(['import * as $kopf from "kopf-gen/runtime";']);
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

  it('objects without additionalProperties stay closed; an object with no properties holds nothing', () => {
    const module = support.emitSpec({
      type: 'object',
      properties: { closed: { type: 'object', properties: { flag: { type: 'boolean' } } }, empty: { type: 'object' } },
    });
    expect(support.declarationOf(module.text, 'WidgetSpecClosed')).toBe('/** `spec.closed` */\nexport interface WidgetSpecClosed {\n  flag?: boolean;\n}');
    expect(support.declarationOf(module.text, 'WidgetSpec')).toContain('  empty?: {\n    [key: string]: never;\n  };');
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

  it('a default is documented with @default and makes the property non-optional in the body, optional in the input', () => {
    const module = support.emitSpec({
      type: 'object',
      properties: { replicas: { type: 'integer', default: 1 }, options: { type: 'object', default: {}, properties: { a: { type: 'string' } } } },
    });
    const spec = support.declarationOf(module.text, 'WidgetSpec');
    expect(spec).toContain('  /** @default 1 */\n  replicas: number;');
    expect(spec).toContain('  /** @default {} */\n  options: WidgetSpecOptions;');
    const input = support.declarationOf(module.text, 'WidgetSpecInput');
    expect(input).toContain('  /** @default 1 */\n  replicas?: number;');
    expect(input).toContain('  /** @default {} */\n  options?: WidgetSpecOptions;');
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
      'constructor?: string | {}["constructor"];',
      'toString?: number | {}["toString"];',
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
    expect(support.declarationOf(oddity!.text, 'OddityPatch')).toContain('export type OddityPatch = $kopf.MergePatch<OddityInput>;');
  });

  it('names deep nesting after the whole path', () => {
    expect(oddity!.text).toContain('export interface OdditySpecLevel1Level2Level3Level4Level5Level6Level7Level8 {\n  leaf?: string;\n}');
  });

  it('names input twins <Name>Input, through the registry, after every nested name', () => {
    const module = support.emitSpec({
      type: 'object',
      properties: {
        input: { type: 'object', properties: { a: { type: 'string' } } },
        defaulted: { type: 'object', properties: { b: { type: 'string', default: 'x' } } },
      },
    });
    // spec.input takes WidgetSpecInput first (breadth-first naming); the spec's twin then gets WidgetSpecInput2.
    expect(support.declarationOf(module.text, 'WidgetSpecInput')).toContain('export interface WidgetSpecInput {\n  a?: string;\n}');
    expect(support.declarationOf(module.text, 'WidgetSpecInput2')).toContain('  input?: WidgetSpecInput;\n  defaulted?: WidgetSpecDefaultedInput;');
    expect(support.declarationOf(module.text, 'WidgetInput')).toContain('  spec?: WidgetSpecInput2;');
  });

  it('refers to nothing but its own declarations and the runtime namespace, so no name can shadow what it uses', () => {
    const { modules } = support.generate(support.fixtureFiles().map((name) => support.fixture(name)));
    for (const module of modules) {
      const file = ts.createSourceFile(module.fileName, module.text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
      const declared = new Set<string>();
      const referenced: string[] = [];
      const visit = (node: ts.Node): void => {
        if ((ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) && node.parent === file) declared.add(node.name.text);
        if (ts.isTypeReferenceNode(node)) referenced.push(node.typeName.getText(file));
        if (ts.isExpressionWithTypeArguments(node) || ts.isCallExpression(node)) referenced.push(node.expression.getText(file));
        ts.forEachChild(node, visit);
      };
      visit(file);
      const foreign = referenced.filter((name) => !declared.has(name) && !/^\$kopf\.\w+$/.test(name));
      expect(foreign, module.fileName).toEqual([]);
    }
  });

  it('kinds named like runtime imports, global types or TypeScript words give modules that compile and can be used', { timeout: 120_000 }, () => {
    const { modules } = support.generate([support.fixture('shadows.yaml')]);
    expect(modules.map((module) => module.names.body)).toEqual([
      'ObjectMeta',
      'NameOrGenerateName',
      'MergePatch',
      'KubernetesObject',
      'Record',
      'Object',
      'Array',
      'Partial',
      'Function',
      'resource',
      'string_',
      'class_',
      'ObjectMetaInput',
    ]);
    const lines = modules.flatMap((module, index) => {
      const from = `./${module.fileName.replace(/\.ts$/, '.js')}`;
      const { names } = module;
      return [
        `import { ${names.descriptor} as D${index}, type ${names.input} as I${index}, type ${names.patch} as P${index} } from '${from}';`,
        `export const input${index}: I${index} = { apiVersion: 'shadows.example.com/v1', kind: ${JSON.stringify(module.kind)}, metadata: { name: 'x' }, spec: { empty: {}, template: { apiVersion: 'v1', kind: 'Pod' }, nested: { value: 'v' } } };`,
        `export const patch${index}: P${index} = { metadata: { labels: { a: null } }, spec: { empty: null, size: null, template: { spec: {} }, nested: { mode: null } } };`,
        `export const create${index} = (client: KubeClient) => client.create(D${index}, input${index});`,
      ];
    });
    const usage = `import type { KubeClient } from 'kopf-gen/runtime';\n${lines.join('\n')}\n`;
    expect(support.typecheck([...modules, { fileName: 'usage.ts', text: usage }])).toEqual([]);
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
    ['a closed object without fields', '  empty?: {\n    [key: string]: never;\n  };'],
    [
      'an open embedded resource',
      '  template?: {\n    apiVersion: string;\n    kind: string;\n    metadata?: $kopf.ObjectMeta;\n  } & {\n    [key: string]: unknown;\n  };',
    ],
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

  it('declares an embedded resource with a schema as the object envelope followed by its members', () => {
    expect(support.declarationOf(text, 'MappingSpecService')).toContain(
      'export interface MappingSpecService {\n  apiVersion: string;\n  kind: string;\n  metadata?: $kopf.ObjectMeta;\n  spec?: MappingSpecServiceSpec;\n}',
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
    expect(support.declarationOf(closed.text, 'WidgetSpec')).toContain('export type WidgetSpec = {\n  [key: string]: never;\n};');
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

/**
 * The write types, one rule per test, type-checked against the module of writables.yaml (and
 * oddities.yaml for `__proto__`) with the real checker. Every rule is one small program; all of
 * them are compiled in one program, the first time a test asks, and each test reads its own
 * program's diagnostics: none means every accepted line compiles and every `@ts-expect-error` line
 * fails.
 */
describe('write types, type-checked', () => {
  const [writable] = support.generate([support.fixture('writables.yaml')]).modules;
  const [oddity] = support.generate([support.fixture('oddities.yaml')]).modules;
  const from = (module: typeof writable): string => `./${module!.fileName.replace(/\.ts$/, '.js')}`;
  const imports = `import type { Writable, WritableInput, WritablePatch, WritableSpec, WritableSpecInput } from '${from(writable)}';\nimport { Writables } from '${from(writable)}';\nexport type { Writable, WritableInput, WritablePatch, WritableSpec, WritableSpecInput };\nexport { Writables };\n`;
  const programs: Record<string, string> = {
    'input-defaults': `
// A literal without any defaulted field (replicas, the required tier, listeners[].protocol, routes{}.weight, deep...leaf, valueOf).
export const input: WritableInput = { apiVersion: 'example.com/v1', kind: 'Writable', metadata: { name: 'w' }, spec: { size: 1, listeners: [{ name: 'http', port: 80, tls: { certificate: 'c' } }], routes: { a: { backend: 'b' } }, deep: { level1: { level2: { other: 'x' } } } } };
// @ts-expect-error the body, as read back, has every defaulted field
export const body: Writable = { apiVersion: 'example.com/v1', kind: 'Writable', metadata: { name: 'w' }, spec: { size: 1, listeners: [{ name: 'http', port: 80 }] } };
export const spec: WritableSpecInput = { size: 1, listeners: [] };
// @ts-expect-error a defaulted field is present in the body's spec
export const readSpec: WritableSpec = { size: 1, listeners: [] };
// A status written without its defaulted phase.
export const withStatus: WritableInput = { apiVersion: 'example.com/v1', kind: 'Writable', metadata: { name: 'w' }, spec, status: { message: 'm' } };
`,
    'input-metadata': `
const spec: WritableSpecInput = { size: 1, listeners: [] };
export const named: WritableInput = { apiVersion: 'example.com/v1', kind: 'Writable', metadata: { name: 'w', namespace: 'default', labels: { a: 'b' } }, spec };
export const generated: WritableInput = { apiVersion: 'example.com/v1', kind: 'Writable', metadata: { generateName: 'w-' }, spec };
// @ts-expect-error metadata needs a name or a generateName
export const anonymous: WritableInput = { apiVersion: 'example.com/v1', kind: 'Writable', metadata: { namespace: 'default' }, spec };
// @ts-expect-error metadata is required
export const bare: WritableInput = { apiVersion: 'example.com/v1', kind: 'Writable', spec };
// @ts-expect-error the uid is the server's to set
export const uid: WritableInput = { apiVersion: 'example.com/v1', kind: 'Writable', metadata: { name: 'w', uid: 'u' }, spec };
`,
    'input-literals': `
const spec: WritableSpecInput = { size: 1, listeners: [] };
// @ts-expect-error the kind is a literal
export const otherKind: WritableInput = { apiVersion: 'example.com/v1', kind: 'Other', metadata: { name: 'w' }, spec };
// @ts-expect-error the apiVersion is a literal
export const otherVersion: WritableInput = { apiVersion: 'example.com/v2', kind: 'Writable', metadata: { name: 'w' }, spec };
// @ts-expect-error apiVersion and kind are required in what users write
export const noKind: WritableInput = { metadata: { name: 'w' }, spec };
`,
    'embedded-resources': `
const base = { size: 1, listeners: [] };
export const spec: WritableSpecInput = { ...base, template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [] } }, service: { apiVersion: 'v1', kind: 'Service', spec: { clusterIP: 'None' } } };
// @ts-expect-error an embedded resource needs an apiVersion
export const noVersion: WritableSpecInput = { ...base, template: { kind: 'Pod' } };
// @ts-expect-error an embedded resource needs a kind
export const noKind: WritableSpecInput = { ...base, service: { apiVersion: 'v1' } };
// @ts-expect-error the API server fills in the uid, also of embedded resources
export const uid: WritableSpecInput = { ...base, service: { apiVersion: 'v1', kind: 'Service', metadata: { uid: 'u' } } };
export declare const body: Writable;
export const version: string | undefined = body.spec.template?.apiVersion;
export const kind: string | undefined = body.spec.service?.kind;
`,
    'list-items': `
export const input: WritableSpecInput = { size: 1, listeners: [{ name: 'a', port: 1 }] };
// @ts-expect-error a list item needs its required fields that have no default
export const nameless: WritableSpecInput = { size: 1, listeners: [{ port: 1 }] };
export const patch: WritablePatch = { spec: { listeners: [{ name: 'a', port: 1 }, { name: 'b', port: 2, protocol: 'UDP' }] } };
// @ts-expect-error lists are replaced whole: an item needs its required fields
export const partialItem: WritablePatch = { spec: { listeners: [{ name: 'a' }] } };
// @ts-expect-error lists are replaced whole: no index writes
export const indexWrite: WritablePatch = { spec: { listeners: { 0: { name: 'x' } } } };
`,
    'patch-null-removes': `
export const removals: WritablePatch = { spec: { affinity: null, owner: null, note: null, labels: null, routes: null, extra: null, template: null, service: null, replicas: null, deep: null, valueOf: null }, status: null };
export const entries: WritablePatch = { metadata: { labels: { gone: null } }, spec: { labels: { a: null, b: 'c' }, routes: { a: null } } };
// A required field with a default: removing it puts the default back.
export const tier: WritablePatch = { spec: { tier: null } };
`,
    'patch-null-only-where-removable': `
// @ts-expect-error size is required and not nullable: merge patch cannot remove it
export const size: WritablePatch = { spec: { size: null } };
// @ts-expect-error listeners are required and not nullable
export const listeners: WritablePatch = { spec: { listeners: null } };
// @ts-expect-error spec is required
export const spec: WritablePatch = { spec: null };
// @ts-expect-error the apiVersion cannot be removed
export const apiVersion: WritablePatch = { apiVersion: null };
// @ts-expect-error the kind cannot be removed
export const kind: WritablePatch = { kind: null };
// @ts-expect-error an embedded resource's apiVersion cannot be removed
export const embedded: WritablePatch = { spec: { template: { apiVersion: null } } };
// @ts-expect-error a required field of a map value cannot be removed
export const mapValue: WritablePatch = { spec: { routes: { a: { backend: null } } } };
`,
    'patch-partial-objects': `
export const affinity: WritablePatch = { spec: { affinity: { enablePodAntiAffinity: true } } };
export const deep: WritablePatch = { spec: { deep: { level1: { level2: { leaf: 'x' } } } } };
export const mapValue: WritablePatch = { spec: { routes: { a: { weight: 2 } } } };
export const embedded: WritablePatch = { spec: { service: { spec: { clusterIP: 'None' } }, template: { spec: { anything: [1] } } } };
export const open: WritablePatch = { spec: { extra: { any: { thing: true } } } };
export const metadata: WritablePatch = { metadata: { annotations: { a: 'b' } } };
// @ts-expect-error a merge patch keeps the value types
export const badValue: WritablePatch = { spec: { size: 'big' } };
// @ts-expect-error closed objects reject unknown fields in patches too
export const unknownField: WritablePatch = { spec: { colour: 'red' } };
`,
    'patch-exact-optional': `
// Values read from optional fields may be copied in (undefined means no change).
export declare const body: Writable;
export const copied: WritablePatch = { spec: { note: body.spec.note, owner: body.spec.owner, affinity: body.spec.affinity, labels: body.spec.labels } };
`,
    'client-create': `
import type { KubeClient } from 'kopf-gen/runtime';
export async function create(client: KubeClient): Promise<Writable> {
  await client.apply(Writables, { metadata: { name: 'w' }, spec: { replicas: 2 } }, { fieldManager: 'test', namespace: 'default' });
  await client.patch(Writables, 'w', { spec: { affinity: { enablePodAntiAffinity: true }, owner: null } } satisfies WritablePatch, { namespace: 'default' });
  // @ts-expect-error the size is required
  await client.create(Writables, { apiVersion: 'example.com/v1', kind: 'Writable', metadata: { name: 'w' }, spec: { listeners: [] } });
  return client.create(Writables, { apiVersion: 'example.com/v1', kind: 'Writable', metadata: { name: 'w', namespace: 'default' }, spec: { size: 1, listeners: [{ name: 'a', port: 1 }] } });
}
`,
    'prototype-members': `
export const without: WritableSpecInput = { size: 1, listeners: [] };
export const given: WritableSpecInput = { size: 1, listeners: [], constructor: 'c', toString: 1, hasOwnProperty: true, valueOf: 'v' };
// @ts-expect-error the property keeps its own type
export const wrong: WritableSpecInput = { size: 1, listeners: [], constructor: 1 };
export const patch: WritablePatch = { spec: { constructor: null, toString: 2 } };
export declare const body: Writable;
// A defaulted one is always there when read; an optional one may be the prototype's member.
export const valueOf: string = body.spec.valueOf;
export const read: string | undefined = typeof body.spec.constructor === 'string' ? body.spec.constructor : undefined;
`,
  };
  const oddityProgram = `
import type { OdditySpec, OddityPatch } from '${from(oddity)}';
export const empty: OdditySpec = {};
export const proto: OdditySpec = { ['__proto__']: 'p', constructor: 'c', toString: 1 };
export const patch: OddityPatch = { spec: { ['__proto__']: null, constructor: null } };
`;
  let diagnostics: string[] | undefined;
  const diagnosticsOf = (name: string): string[] => {
    diagnostics ??= support.typecheck([
      writable!,
      oddity!,
      ...Object.entries(programs).map(([file, text]) => ({ fileName: `${file}.ts`, text: imports + text })),
      { fileName: 'prototype-proto.ts', text: oddityProgram },
    ]);
    return diagnostics.filter(
      (line) => line.startsWith(`${name}.ts:`) || !/^[\w.-]+\.ts:/.test(line) || line.startsWith(writable!.fileName) || line.startsWith(oddity!.fileName),
    );
  };
  const timeout = { timeout: 120_000 };

  it('input types: defaulted fields may be left out (at every depth, in list items and map values), while the body requires them', timeout, () => {
    expect(diagnosticsOf('input-defaults')).toEqual([]);
  });
  it('input types: metadata is ObjectMetaInput with a name or a generateName', timeout, () => {
    expect(diagnosticsOf('input-metadata')).toEqual([]);
  });
  it('input types: apiVersion and kind are required literals', timeout, () => {
    expect(diagnosticsOf('input-literals')).toEqual([]);
  });
  it('embedded resources: apiVersion and kind are required strings, metadata is the runtime type', timeout, () => {
    expect(diagnosticsOf('embedded-resources')).toEqual([]);
  });
  it('list items are input types with their required fields, in inputs and in patches', timeout, () => {
    expect(diagnosticsOf('list-items')).toEqual([]);
  });
  it('patches: null removes optional and nullable fields, nested objects, maps, map entries, open objects and embedded resources', timeout, () => {
    expect(diagnosticsOf('patch-null-removes')).toEqual([]);
  });
  it('patches: null is refused where merge patch cannot remove (required non-nullable fields, apiVersion, kind)', timeout, () => {
    expect(diagnosticsOf('patch-null-only-where-removable')).toEqual([]);
  });
  it('patches: nested objects, map values, embedded resources and open objects are partial', timeout, () => {
    expect(diagnosticsOf('patch-partial-objects')).toEqual([]);
  });
  it('patches: undefined is accepted (no change), for exactOptionalPropertyTypes users', timeout, () => {
    expect(diagnosticsOf('patch-exact-optional')).toEqual([]);
  });
  it("the typed client's create takes the input type, apply a partial one, patch the merge-patch type", timeout, () => {
    expect(diagnosticsOf('client-create')).toEqual([]);
  });
  it('properties named like Object.prototype members work in literals, inputs and patches', timeout, () => {
    expect(diagnosticsOf('prototype-members')).toEqual([]);
  });
  it('a __proto__ property is an ordinary property of the types', timeout, () => {
    expect(diagnosticsOf('prototype-proto')).toEqual([]);
  });
});
