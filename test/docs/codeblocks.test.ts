/**
 * Every TypeScript code block of the documentation compiles against the runtime's and the testing
 * kit's sources (see `codeblocks.ts` for how blocks become modules): the user's guide (`docs/`),
 * the README, and the examples' READMEs. The behaviour reference (`docs/reference/`) writes its
 * signatures in a TypeScript-like notation in `text` blocks, which are not compiled.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { describe, expect, it } from 'vitest';

import { checkBlocks, extractBlocks, generatedCrds, generateModules, ROOT } from './codeblocks.js';

/** Every Markdown page of the documentation whose blocks are compiled. */
function documentationPages(): string[] {
  const docs = fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  const examples = fs
    .readdirSync(path.join(ROOT, 'examples'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(ROOT, 'examples', entry.name, 'README.md')))
    .map((entry) => `examples/${entry.name}/README.md`);
  return ['README.md', 'examples/README.md', ...docs, ...examples].sort();
}

/** A fresh scratch folder in the checkout's ignored `.tmp/`. */
function scratchFolder(): string {
  fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
  return fs.mkdtempSync(path.join(ROOT, '.tmp', 'docs-generated-'));
}

const PAGES = documentationPages().filter((page) => extractBlocks(page, fs.readFileSync(path.join(ROOT, page), 'utf8')).length > 0);

describe('the code blocks of the user guide', () => {
  it('finds blocks, their file names and hidden preambles', () => {
    const text = [
      'Intro.',
      '',
      '```ts',
      'const a = 1;',
      '```',
      '',
      '<!-- file: src/operator.ts -->',
      '```ts',
      'export const b = 2;',
      '```',
      '<!-- preamble',
      "import { a } from './x.js';",
      '-->',
      '```typescript',
      'void a;',
      '```',
      '```sh',
      'npm test',
      '```',
    ].join('\n');
    expect(extractBlocks('page.md', text)).toEqual([
      { page: 'page.md', line: 4, file: 'block-1.ts', code: 'const a = 1;', preamble: '' },
      { page: 'page.md', line: 9, file: 'src/operator.ts', code: 'export const b = 2;', preamble: '' },
      { page: 'page.md', line: 15, file: 'block-3.ts', code: 'void a;', preamble: "import { a } from './x.js';" },
    ]);
  });

  it('reports a block that does not compile, at its line in the page', async () => {
    const text = ['# A page', '', '```ts', "import { on } from 'kopf-gen/runtime';", '', 'on.timer(42);', '```'].join('\n');
    const errors = await checkBlocks('docs/broken.md', extractBlocks('docs/broken.md', text));
    expect(errors.map((e) => e.where)).toEqual(['docs/broken.md:6']);
  }, 60_000);

  it('compiles the pages that have blocks: the user guide, the README, the examples', () => {
    expect(PAGES).toEqual(expect.arrayContaining(['README.md', 'docs/handlers.md', 'docs/daemons.md', 'docs/testing.md']));
  });

  it('compiles a page beside the generated modules of the CRD it names', async () => {
    const text = [
      '<!-- generated: fixtures/crds/widgets.yaml -->',
      '<!-- file: src/handlers/widget.ts -->',
      '```ts',
      "import { Widgets } from '../generated/widgets.example.com.v1.js';",
      'export const plural: number = Widgets.plural;',
      '```',
    ].join('\n');
    expect(generatedCrds(text)).toEqual(['fixtures/crds/widgets.yaml']);
    const scratch = scratchFolder();
    try {
      const generated = await generateModules(generatedCrds(text), scratch);
      const errors = await checkBlocks('page.md', extractBlocks('page.md', text), generated);
      expect(errors.map((e) => e.message)).toEqual([expect.stringContaining("Type 'string' is not assignable to type 'number'")]);
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  }, 120_000);

  for (const page of PAGES) {
    it(`${page}: every ts block type-checks`, async () => {
      const text = fs.readFileSync(path.join(ROOT, page), 'utf8');
      const blocks = extractBlocks(page, text);
      const crds = generatedCrds(text);
      const scratch = scratchFolder();
      try {
        const generated = crds.length > 0 ? await generateModules(crds, scratch) : undefined;
        const errors = await checkBlocks(page, blocks, generated);
        expect(errors.map((e) => `${e.where}: ${e.message}`)).toEqual([]);
      } finally {
        fs.rmSync(scratch, { recursive: true, force: true });
      }
    }, 120_000);
  }
});
