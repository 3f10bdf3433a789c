/**
 * Every TypeScript code block of the user's guide pages listed here compiles against the
 * runtime's and the testing kit's sources (see `codeblocks.ts` for how blocks become modules).
 * Pages join the list when their blocks are written to compile; the existing pages' blocks
 * (installation, running, deployment) are fragments of generated projects and are not listed yet.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { describe, expect, it } from 'vitest';

import { checkBlocks, extractBlocks, ROOT } from './codeblocks.js';

const PAGES = [
  'docs/daemons.md',
  'docs/subhandlers.md',
  'docs/hierarchies.md',
  'docs/timers.md',
  'docs/indices.md',
  'docs/testing.md',
  'docs/health.md',
  'docs/admission.md',
  'docs/admission-servers.md',
  'docs/metrics.md',
  'docs/client.md',
  'docs/leader-election.md',
  'docs/peering.md',
  'docs/concepts.md',
  'docs/handlers.md',
  'docs/errors.md',
  'docs/filters.md',
  'docs/memos.md',
  'docs/events-and-logging.md',
  'docs/settings.md',
  'docs/cli.md',
  'docs/embedding.md',
  'docs/generator.md',
  'docs/kopf-migration.md',
  'docs/devcluster.md',
];

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

  it('reports a block that does not compile, at its line in the page', () => {
    const text = ['# A page', '', '```ts', "import { on } from 'kopf-gen/runtime';", '', 'on.timer(42);', '```'].join('\n');
    const errors = checkBlocks('docs/broken.md', extractBlocks('docs/broken.md', text));
    expect(errors.map((e) => e.where)).toEqual(['docs/broken.md:6']);
  }, 60_000);

  for (const page of PAGES) {
    it(`${page}: every ts block type-checks`, () => {
      const blocks = extractBlocks(page, fs.readFileSync(path.join(ROOT, page), 'utf8'));
      expect(blocks.length).toBeGreaterThan(0);
      const errors = checkBlocks(page, blocks);
      expect(errors.map((e) => `${e.where}: ${e.message}`)).toEqual([]);
    }, 120_000);
  }
});
