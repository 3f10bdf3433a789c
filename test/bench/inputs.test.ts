/**
 * The input-types benchmark's pure helpers: which kinds a CRD corpus serves, how sample objects are
 * found in YAML files and in Markdown's YAML blocks (projects, List items, unreadable documents,
 * identical copies), where in an object a type error points, and the tally per project. The
 * benchmark itself asserts nothing.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import * as inputs from '../../bench/inputs.js';

const crd = (kind: string, scope: string, versions: { name: string; served: boolean }[]): Record<string, unknown> => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${kind.toLowerCase()}s.example.com` },
  spec: { group: 'example.com', scope, names: { kind, plural: `${kind.toLowerCase()}s` }, versions },
});

const CRDS = [
  crd('Widget', 'Namespaced', [
    { name: 'v1', served: true },
    { name: 'v1alpha1', served: false },
  ]),
  crd('Gadget', 'Cluster', [{ name: 'v1', served: true }]),
];

describe('the served kinds of a CRD corpus', () => {
  it('are the served versions of the CRD documents, with plural and scope; other documents are ignored', () => {
    const text = [{ apiVersion: 'v1', kind: 'ConfigMap' }, ...CRDS].map((document) => yaml.stringify(document)).join('---\n');
    const served = inputs.servedKinds(inputs.crdDocuments([text, 'kind: [unclosed\n']));
    expect([...served.keys()].sort()).toEqual(['example.com/v1 Gadget', 'example.com/v1 Widget']);
    expect(served.get(inputs.kindKey('example.com/v1', 'Widget'))).toEqual({
      group: 'example.com',
      version: 'v1',
      kind: 'Widget',
      plural: 'widgets',
      namespaced: true,
    });
    expect(served.get(inputs.kindKey('example.com/v1', 'Gadget'))?.namespaced).toBe(false);
  });
});

describe('YAML blocks of Markdown', () => {
  it('are the fenced yaml and yml blocks, indented ones without their indentation; other blocks are not', () => {
    const markdown = [
      '# Title',
      '```yaml',
      'a: 1',
      '```',
      '```sh',
      'kubectl apply -f x.yaml',
      '```',
      '1. A step:',
      '   ~~~yml',
      '   b:',
      '     c: 2',
      '   ~~~',
      '````YAML',
      'd: 3',
      '```',
      'e: 4',
      '````',
    ].join('\n');
    expect(inputs.yamlBlocks(markdown)).toEqual(['a: 1', 'b:\n  c: 2', 'd: 3\n```\ne: 4']);
  });

  it('give their documents; a document that does not parse or has an unknown alias is counted, not returned', () => {
    const markdown = '```yaml\na: 1\n---\nb: [\n```\n\n```yaml\nc: *missing\n```\n';
    expect(inputs.documentsOf('docs/x.md', markdown)).toEqual({ documents: [{ a: 1 }], unreadable: 2 });
    expect(inputs.documentsOf('x.yaml', 'a: 1\n---\n---\nb: 2\n')).toEqual({ documents: [{ a: 1 }, { b: 2 }], unreadable: 1 });
  });
});

describe('finding sample objects', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-inputs-'));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
  const write = (file: string, text: string): void => {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  };
  const widget = (name: string): Record<string, unknown> => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name } });

  it('reads every project folder, keeps objects of served kinds (List items too) and counts identical copies once per project (the first file in name order)', () => {
    write(
      'alpha/examples/widgets.yaml',
      [widget('one'), { apiVersion: 'example.com/v1alpha1', kind: 'Widget' }, widget('two')].map((o) => yaml.stringify(o)).join('---\n'),
    );
    write('alpha/docs/guide.md', `Some text.\n\n\`\`\`yaml\n${yaml.stringify(widget('one'))}\`\`\`\n`);
    write('alpha/docs/list.yml', yaml.stringify({ apiVersion: 'v1', kind: 'List', items: [widget('three'), { apiVersion: 'v1', kind: 'Secret' }] }));
    write('beta/gadget.yaml', yaml.stringify({ apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g' } }));
    write('beta/copy.yaml', yaml.stringify(widget('one')));
    write('beta/notes.txt', yaml.stringify(widget('ignored')));
    write('gamma/other.yaml', yaml.stringify({ apiVersion: 'v1', kind: 'ConfigMap' }));
    const found = inputs.discover(root, inputs.servedKinds(CRDS));
    expect(found.projects).toEqual(['alpha', 'beta', 'gamma']);
    expect(found.objects.map((o) => `${o.project} ${o.file}#${o.document} ${String((o.object['metadata'] as { name: string }).name)}`)).toEqual([
      'alpha alpha/docs/guide.md#0 one',
      'alpha alpha/docs/list.yml#0 three',
      'alpha alpha/examples/widgets.yaml#2 two',
      'beta beta/copy.yaml#0 one',
      'beta beta/gadget.yaml#0 g',
    ]);
    expect(found.duplicates).toBe(1);
    expect(found.files).toBe(6);
  });

  it('tallies every project, those without objects too', () => {
    const found = inputs.discover(root, inputs.servedKinds(CRDS));
    const server = found.objects.map((_, index) => ({ accepted: index !== 2 }));
    const types = new Map([
      [0, { accepted: true }],
      [1, { accepted: false, reason: 'x' }],
      [3, { accepted: true }],
      [4, { accepted: true }],
    ]);
    expect(Object.fromEntries(inputs.tallyByProject(found.projects, found.objects, server, types))).toEqual({
      alpha: { found: 3, server: 2, type: 1 },
      beta: { found: 2, server: 2, type: 2 },
      gamma: { found: 0, server: 0, type: 0 },
    });
  });
});

describe('where a type error points', () => {
  const text = 'export const object: T = {\n  "spec": {\n    "listeners": [\n      { "name": "a" },\n      { "name": "b", "-x": 1 }\n    ]\n  }\n};\n';
  const source = ts.createSourceFile('check.ts', text, ts.ScriptTarget.ES2022, true);
  const literal = (source.statements[0] as ts.VariableStatement).declarationList.declarations[0]!.initializer!;

  it('is the property path of the innermost element at the position, quoted where the name is no identifier', () => {
    expect(inputs.pathAt(literal, text.indexOf('"b"'), source)).toBe('spec.listeners[1].name');
    expect(inputs.pathAt(literal, text.indexOf('"-x"'), source)).toBe('spec.listeners[1]["-x"]');
    expect(inputs.pathAt(literal, text.indexOf('{ "name": "a"'), source)).toBe('spec.listeners[0]');
    expect(inputs.pathAt(literal, text.indexOf('{\n  "spec"'), source)).toBe('(the object)');
  });

  it('is told in one line: the first line of a message chain and its innermost reason, long types elided', () => {
    const chain: ts.DiagnosticMessageChain = {
      messageText: "Type '{ a: string; }' is not assignable to type 'T'.",
      category: ts.DiagnosticCategory.Error,
      code: 2322,
      next: [{ messageText: "Property 'b' is missing.", category: ts.DiagnosticCategory.Error, code: 2741 }],
    };
    const diagnostic = { messageText: chain, category: ts.DiagnosticCategory.Error, code: 2322, file: undefined, start: 0, length: 1 };
    expect(inputs.shortMessage(diagnostic)).toBe("Type '{ a: string; }' is not assignable to type 'T'. … Property 'b' is missing.");
    expect(inputs.shortMessage({ ...diagnostic, messageText: 'One line.' })).toBe('One line.');
    const long = `Type '{ ${'field: string; '.repeat(8)}}' is missing the following properties from type 'Spec': a, b`;
    expect(inputs.shortMessage({ ...diagnostic, messageText: long })).toBe("Type '…' is missing the following properties from type 'Spec': a, b");
  });
});
