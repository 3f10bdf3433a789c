/**
 * The code blocks of the user's guide, checked by the TypeScript compiler: a guide whose examples
 * do not compile teaches the wrong API. `codeblocks.test.ts` runs this over the pages it lists.
 *
 * Every ```ts block of a page is a module of its own, written into a scratch folder inside the
 * checkout (`.tmp/`, ignored by git), where `kopf-gen/runtime` and `kopf-gen/testing` resolve to
 * the sources through the package's `kopf-gen-source` condition, and `vitest` and `@types/node` to
 * the checkout's. Each block is type-checked in a program of its own, with the repository's
 * compiler options (strict), so that a block's `declare module` augmentations affect no other
 * block. The folder also has `kopfexamples.ts` (examples/kopfexamples.ts: the typed `KopfExamples`
 * descriptor the pages import).
 *
 * Two HTML comments, invisible on rendered pages, may precede a block:
 * - `<!-- file: src/operator.ts -->` names the block's module (default `block-<n>.ts`), so that
 *   later blocks of the page can import it;
 * - `<!-- preamble ... -->` lines of code prepended to the block, for what the reader need not see.
 *
 * A page that shows handlers of a generated project names the project's CRD once, anywhere in the
 * page: `<!-- generated: fixtures/crds/widgets.yaml -->`. Its blocks are then checked beside the
 * generator's real output for that CRD (`src/generated/`), so that a block at `src/handlers/x.ts`
 * imports `../generated/<group>.<version>.js` exactly as in a generated project.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import * as generator from '../../generator/index.js';
import * as threads from '../support/threads.js';
import type * as blockcheck from './blockcheck.js';
import type { BlockError } from './blockcheck.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** One ```ts block of a page. */
export interface CodeBlock {
  readonly page: string;
  /** 1-based line of the block's first code line in the page. */
  readonly line: number;
  /** The module's path in the scratch folder. */
  readonly file: string;
  readonly code: string;
  /** Lines of hidden code before `code`. */
  readonly preamble: string;
}

const FENCE = /^```(\w*)\s*$/;

/** The ```ts (and ```typescript) blocks of a Markdown text, with their file names and preambles. */
export function extractBlocks(page: string, text: string): CodeBlock[] {
  const lines = text.split('\n');
  const blocks: CodeBlock[] = [];
  let file: string | undefined;
  let preamble = '';
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!;
    const named = /^<!--\s*file:\s*(\S+)\s*-->\s*$/.exec(line);
    if (named) {
      file = named[1];
      continue;
    }
    if (/^<!--\s*preamble\s*$/.test(line)) {
      const end = lines.indexOf('-->', i + 1);
      if (end < 0) throw new Error(`${page}:${i + 1}: an unclosed preamble comment`);
      preamble = lines.slice(i + 1, end).join('\n');
      i = end;
      continue;
    }
    const fence = FENCE.exec(line);
    if (!fence) {
      if (line.trim() !== '') {
        file = undefined;
        preamble = '';
      }
      continue;
    }
    const close = lines.findIndex((candidate, j) => j > i && /^```\s*$/.test(candidate));
    if (close < 0) throw new Error(`${page}:${i + 1}: an unclosed code block`);
    if (fence[1] === 'ts' || fence[1] === 'typescript') {
      blocks.push({
        page,
        line: i + 2,
        file: file ?? `block-${blocks.length + 1}.ts`,
        code: lines.slice(i + 1, close).join('\n'),
        preamble,
      });
    }
    file = undefined;
    preamble = '';
    i = close;
  }
  return blocks;
}

/** The CRD files a page's blocks are generated from (`<!-- generated: <path> -->`, relative to the checkout). */
export function generatedCrds(text: string): string[] {
  return [...text.matchAll(/^<!--\s*generated:\s*(\S+)\s*-->\s*$/gm)].map((match) => match[1]!);
}

/**
 * Runs the generator over `crds` into a scratch project and returns the folder of its generated
 * modules (`src/generated/`); the caller removes `scratch` when done.
 */
export async function generateModules(crds: readonly string[], scratch: string): Promise<string> {
  const out = path.join(scratch, 'project');
  await generator.init({ crds: crds.map((crd) => path.join(ROOT, crd)), out, name: 'docs-project' });
  return path.join(out, 'src/generated');
}

export type { BlockError } from './blockcheck.js';

/** The thread that type-checks blocks (blockcheck.ts), started on first use. */
let checker: threads.Thread<blockcheck.Request, BlockError[]> | undefined;

/**
 * Writes the blocks of one page into a fresh scratch folder (with the generated modules, if given)
 * and type-checks each one on its own, in a worker thread (blockcheck.ts): the compiler is
 * synchronous, and a page of many blocks would otherwise hold the test worker's event loop for a
 * minute on a busy machine. Returns the errors, located as `docs/page.md:<line>` (the page line of
 * the offending code).
 */
export async function checkBlocks(page: string, blocks: readonly CodeBlock[], generated?: string): Promise<BlockError[]> {
  const scratch = path.join(ROOT, '.tmp');
  fs.mkdirSync(scratch, { recursive: true });
  const dir = fs.mkdtempSync(path.join(scratch, `docs-${path.basename(page, '.md')}-`));
  try {
    fs.copyFileSync(path.join(ROOT, 'examples/kopfexamples.ts'), path.join(dir, 'kopfexamples.ts'));
    if (generated) fs.cpSync(generated, path.join(dir, 'src/generated'), { recursive: true });
    for (const block of blocks) {
      const target = path.join(dir, block.file);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, block.preamble ? `${block.preamble}\n${block.code}\n` : `${block.code}\n`);
    }
    checker ??= threads.start(new URL('./blockcheck.ts', import.meta.url));
    return await checker.call({ page, dir, blocks });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
