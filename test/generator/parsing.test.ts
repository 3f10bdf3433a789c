import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import * as parsing from '../../generator/parsing.js';
import * as support from './support.js';

/** What the `yaml` package makes of a text, the way loading.ts calls it. */
function reference(text: string): unknown[] {
  const documents = yaml.parseAllDocuments(text, { uniqueKeys: true, prettyErrors: false }) as yaml.Document[];
  for (const document of documents) expect(document.errors).toEqual([]);
  return documents.map((document) => document.toJS({ maxAliasCount: 1000 }));
}

const SUBSET: readonly [string, string][] = [
  ['nested block mappings', 'a:\n  b:\n    c: 1\n  d: x\ne: y\n'],
  ['sequences at the key indentation and indented', 'a:\n- 1\n- two\nb:\n  - c: 3\n    d: 4\n  -   e: 5\n      f: 6\n'],
  ['nested sequences and empty items', '- - a\n  - b\n-\n- - - c\n'],
  ['empty values', 'a:\nb: ~\nc: null\nd: NULL\ne:\n  # only a comment\nf: x\n'],
  [
    'core schema scalars',
    'a: true\nb: False\nc: 12\nd: -7\ne: 0o17\nf: 0x1F\ng: 1.5\nh: .5\ni: 1e3\nj: -.inf\nk: .NaN\nl: yes\nm: 1.2.3\nn: +12\no: 012\np: 1.\n',
  ],
  ['strings that look like other things', 'a: 2024-01-01\nb: 1:2\nc: http://x.y/z?q=1#f\nd: a#b\ne: -x\nf: :x\ng: ?x\nh: a, b [c] {d}\n'],
  ['comments', '# head\na: 1 # trailing\n  # indented comment\nb: "x" # after quotes\nc: [1] # after flow\n'],
  ['multi-line plain scalars', 'a: one\n  two\n\n  three\n\n\n  four\nb:\n  text on\n  its own lines\nc: text\n  - continued\n'],
  ['single-quoted scalars', "a: 'it''s'\nb: 'folded\n  over\n\n  lines   '\nc: '# not a comment'\n'quoted key': 1\n"],
  [
    'double-quoted scalars and escapes',
    'a: "tab\\tnew\\nquote\\" slash\\\\ \\u00e9 \\x41 \\U0001F600 \\/"\nb: "folded\n  line \\\n  joined"\nc: "kept\\ \n  space"\n"key": v\n',
  ],
  [
    'literal block scalars',
    'a: |\n  one\n    two\n\n  three\nb: |-\n  stripped\n\nc: |+\n  kept\n\n\nd: |\n\n  leading empty\ne: |2-\n    indented by two\n   more\n',
  ],
  ['folded block scalars', 'a: >\n  one\n  two\n\n  three\nb: >-\n  x\n  y\nc: >+\n  z\n\n'],
  ['block scalars in sequences', '- |\n  a\n  b\n- >-\n  c\n  d\n'],
  ['one-line flow collections', 'a: []\nb: {}\nc: [1, "two", \'three\', x y]\nd: { e: { }, f: [g, {h: i}] }\ne: {"k": v}\n'],
  ['documents', '---\na: 1\n---\n# nothing\n---\n- b\n--- # comment\nc: 2\n'],
  ['a leading comment before the first document', '# header\n---\na: 1\n---\n\n'],
  ['special property names', 'spec:\n  "-Xms": 1\n  rbd-mirror: 2\n  $propertyBag: 3\n  a b: 4\n  "": 5\n'],
];

const OUTSIDE: readonly [string, string][] = [
  ['anchors and aliases', 'a: &x 1\nb: *x\n'],
  ['tags', 'a: !!str 1\n'],
  ['directives', '%YAML 1.2\n---\na: 1\n'],
  ['document end markers', 'a: 1\n...\n'],
  ['tabs', 'a:\tb\n'],
  ['carriage returns', 'a: 1\r\nb: 2\r\n'],
  ['duplicate keys', 'a: 1\na: 2\n'],
  ['__proto__ keys', '__proto__: 1\n'],
  ['non-string keys', '1: a\n'],
  ['explicit keys', '? a\n: b\n'],
  ['multi-line flow collections', 'a: [1,\n  2]\n'],
  ['nested mappings on one line', 'a: b: c\n'],
  ['a scalar document', 'just text\n'],
  ['bad indentation', 'a:\n    b: 1\n  c: 2\n'],
  ['an unterminated quote', 'a: "open\n'],
  ['more-indented lines in folded scalars', 'a: >\n  x\n    y\n'],
];

describe('parseDocuments', () => {
  it.each(SUBSET)('reads %s as the yaml package does', (_, text) => {
    const parsed = parsing.parseDocuments(text);
    expect(parsed).toBeDefined();
    expect(parsed).toEqual(reference(text));
  });

  it('resolves plain scalars with the YAML 1.2 core schema', () => {
    expect(parsing.parseDocuments('a: true\nb: 0x10\nc: 1e2\nd: yes\ne: ~\nf: "1"\n')).toEqual([{ a: true, b: 16, c: 100, d: 'yes', e: null, f: '1' }]);
  });

  it('folds quoted and block scalars the way YAML does', () => {
    expect(parsing.parseDocuments("a: 'x\n  y\n\n  z'\nb: |-\n  p\n  q\nc: >\n  r\n  s\n")).toEqual([{ a: 'x y\nz', b: 'p\nq', c: 'r s\n' }]);
  });

  it('counts empty documents as null, but not a comment-only prelude', () => {
    expect(parsing.parseDocuments('# prelude\n---\na: 1\n---\n---\n')).toEqual([{ a: 1 }, null, null]);
    expect(parsing.parseDocuments('# nothing at all\n')).toEqual([]);
  });

  it.each(OUTSIDE)('leaves %s to the full parser', (_, text) => {
    expect(parsing.parseDocuments(text)).toBeUndefined();
  });

  it('reads the fixtures written like generated CRDs on the fast path, with the same data as the yaml package', () => {
    // oddities.yaml is left out on purpose: its property names (`-Xms`, `$propertyBag`) take the full parser.
    const files = support.fixtureFiles().filter((name) => name !== 'oddities.yaml');
    expect(files).toEqual(expect.arrayContaining(['gadgets.yaml', 'mappings.yaml', 'platforms.yaml', 'releases.yaml']));
    fastPathReadsAll(support.FIXTURES, files);
  });
});

/** Every file is read on the fast path, to the data the `yaml` package reads. */
function fastPathReadsAll(directory: string, files: readonly string[]): void {
  expect(files.length).toBeGreaterThan(0);
  for (const name of files) {
    const text = fs.readFileSync(path.join(directory, name), 'utf8');
    const parsed = parsing.parseDocuments(text);
    expect(parsed, name).toBeDefined();
    expect(parsed, name).toEqual(reference(text));
  }
}

support.describeCorpus((directory) => {
  it('reads every file of the corpus on the fast path, with the same data as the yaml package', () => {
    fastPathReadsAll(directory, support.yamlFiles(directory));
  });
});
