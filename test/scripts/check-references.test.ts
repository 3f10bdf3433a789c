import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script without type declarations.
import { check, citations, defined } from '../../scripts/check-references.mjs';

function tree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'references-'));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

// Citations that the repository-wide check must not see in this file are assembled at run time.
const STYLE_NINE = ['STYLE', '9'].join(' ');
const STYLE_ITEM = ['STYLE', 'item', '24'].join(' ');
const DESIGN_MD = ['DESIGN', 'md'].join('.');
const UNDEFINED = (n: number) => ['R', 'QUEUE', String(n)].join('-');

const REFERENCE = {
  'docs/reference/runtime.md': '**R-QUEUE-1 — Identity.** Text.\n\n**R-QUEUE-2 — Workers.** See R-QUEUE-9.\n\n### A-1 — Minimal\n',
  'docs/reference/devcluster.md': '**D-CRD-13 CEL.** Text.\n\nC-1. `GET /version` → 200. (D-WIRE-5)\n',
};

describe('the cited-identifier check', () => {
  it('passes on the repository itself', () => {
    expect(check(path.resolve(import.meta.dirname, '../..'))).toEqual([]);
  });

  it('takes definitions from requirement paragraphs, scenario headings and checklist entries, not from mentions', () => {
    expect([...defined(tree(REFERENCE))].sort()).toEqual(['A-1', 'C-1', 'D-CRD-13', 'R-QUEUE-1', 'R-QUEUE-2']);
  });

  it('reports an identifier defined twice, so that a citation is never ambiguous', () => {
    const dir = tree({ ...REFERENCE, 'docs/reference/devcluster.md': `${REFERENCE['docs/reference/devcluster.md']}\nC-1. Again.\n` });
    expect(check(dir)).toEqual(['docs/reference/devcluster.md:5: defines C-1 again (first at docs/reference/devcluster.md:3)']);
  });

  it('reports a cited identifier that the reference does not define, with its file and line', () => {
    const dir = tree({
      ...REFERENCE,
      'runtime/a.ts': '/**\n * Queues (R-QUEUE-1, R-QUEUE-7).\n */\n',
      'test/b.test.ts': "it('C-2 lists', () => {});\nit('A-1 creates', () => {});\n",
      'docs/c.md': 'See D-CRD-14.\n',
    });
    expect(check(dir).sort()).toEqual([
      'docs/c.md:1: cites D-CRD-14, which docs/reference does not define',
      'runtime/a.ts:2: cites R-QUEUE-7, which docs/reference does not define',
      'test/b.test.ts:1: cites C-2, which docs/reference does not define',
    ]);
  });

  it('matches identifiers as whole words only', () => {
    expect(citations('KEY-A-1 SHA-256 XC-1 A-1x R-QUEUE-1_ D-GEN-1').map((c: { id: string }) => c.id)).toEqual(['D-GEN-1']);
  });

  it('expands ranges and lists to every number they name', () => {
    expect(citations('(R-RES-1..3, D-META-1/2/7)').map((c: { id: string }) => c.id)).toEqual([
      'R-RES-1',
      'R-RES-2',
      'R-RES-3',
      'D-META-1',
      'D-META-2',
      'D-META-7',
    ]);
    const dir = tree({ ...REFERENCE, 'runtime/a.ts': '// R-QUEUE-1..3\n' });
    expect(check(dir)).toEqual(['runtime/a.ts:1: cites R-QUEUE-3, which docs/reference does not define']);
  });

  it('reports citations of design and style documents that the repository does not hold', () => {
    const dir = tree({
      ...REFERENCE,
      'runtime/a.ts': `/** Outcomes as values (${STYLE_NINE}). */\n`,
      'cli/b.ts': `// A thin layer (${STYLE_ITEM}); see ${DESIGN_MD}.\n`,
    });
    expect(check(dir).sort()).toEqual([
      `cli/b.ts:1: cites "${DESIGN_MD}", a design document outside the repository; say the idea in words`,
      `cli/b.ts:1: cites "${STYLE_ITEM}", a design document outside the repository; say the idea in words`,
      `runtime/a.ts:1: cites "${STYLE_NINE}", a design document outside the repository; say the idea in words`,
    ]);
  });

  it('leaves out dependencies and build output, and fails when there is no reference at all', () => {
    const dir = tree({ ...REFERENCE, 'node_modules/x/a.js': `// ${UNDEFINED(99)}\n`, 'dist/runtime/a.js': `// ${UNDEFINED(98)}\n` });
    expect(check(dir)).toEqual([]);
    expect(check(tree({ 'runtime/a.ts': '' }))).toEqual(['docs/reference: defines no identifiers']);
  });
});
