/**
 * Measured figures in the documentation say when they were measured. Most numbers with a unit in
 * the pages are defaults and limits, which the code and its tests keep true; a measurement is true
 * only of the code and the machine of its day. So a block of text (a paragraph, a list item, or a
 * table) that quotes a figure with a unit (MB, MiB, KiB, ms, s, %, objects/s) and says "measured"
 * or "printed:" (or follows a block that does, as a table follows its introduction) must carry an
 * ISO date, or a block next to it must: "measured on 2026-11-29 with `npm run bench -- startup`".
 * Figures re-measured later get the new date. This does not check that a figure is still what a
 * benchmark prints today, and a figure that names no measurement at all ("about 10 MB") escapes
 * it; it keeps the reader able to tell how old the measurements are.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const FIGURE = /\d[\d.,]*\s?(?:MB|MiB|KB|KiB|GB|GiB|ms|µs|s|seconds|minutes|%|objects\/s)(?![\w-])/;
const MEASURED = /\bmeasured\b|\bprinted:/i;
const DATE = /\b20\d\d-\d\d-\d\d\b/;

/** The blocks of a Markdown page, outside fenced code: paragraphs, list items and tables, with the line each starts on. */
function blocks(text: string): Array<{ line: number; text: string }> {
  const found: Array<{ line: number; text: string }> = [];
  let current: { line: number; lines: string[] } | undefined;
  let fenced = false;
  const close = (): void => {
    if (current) found.push({ line: current.line, text: current.lines.join('\n') });
    current = undefined;
  };
  text.split('\n').forEach((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) {
      close();
      fenced = !fenced;
      return;
    }
    if (fenced) return;
    const starts = line.trim() === '' || /^\s*([-*+]|\d+\.)\s/.test(line) || /^#/.test(line) || (line.startsWith('|') && !current?.lines[0]?.startsWith('|'));
    if (starts) close();
    if (line.trim() === '' || /^#/.test(line)) return;
    current ??= { line: index + 1, lines: [] };
    current.lines.push(line);
  });
  close();
  return found;
}

/** The blocks that quote a measured figure with no date in them or next to them, as `page:line`. */
function undated(page: string, text: string): string[] {
  const all = blocks(text);
  return all
    .filter((block, index) => FIGURE.test(block.text) && [all[index - 1], block].some((near) => near !== undefined && MEASURED.test(near.text)))
    .filter((block) => {
      const index = all.indexOf(block);
      return ![all[index - 1], block, all[index + 1]].some((near) => near !== undefined && DATE.test(near.text));
    })
    .map((block) => `${page}:${block.line}: ${block.text.split('\n')[0]!.slice(0, 100)}`);
}

describe('measured figures in the documentation', () => {
  it('finds a measured figure without a date, and accepts one with a date next to it', () => {
    const page = [
      'A default of 10 s, and a limit of 8 MiB.',
      '',
      'Measured on a 2-core machine:',
      '',
      '| figure | value |',
      '|---|---|',
      '| ready RSS | 66 MiB |',
      '',
      '## Next',
      '',
      '- one item',
      '- measured: 12 ms',
      '',
      '```text',
      'measured 12 ms',
      '```',
      '',
      'Some text.',
      '',
      'Measured on 2026-11-29 with `npm run bench -- startup`:',
      '',
      '| ready RSS | 66 MiB |',
      '',
      'That run measured 3 ms more, two blocks after its date.',
    ].join('\n');
    expect(undated('page.md', page)).toEqual([
      'page.md:5: | figure | value |',
      'page.md:12: - measured: 12 ms',
      'page.md:24: That run measured 3 ms more, two blocks after its date.',
    ]);
  });

  it('every measured figure in README.md and docs/*.md says when it was measured', () => {
    const pages = [
      'README.md',
      ...fs
        .readdirSync(path.join(ROOT, 'docs'))
        .filter((name) => name.endsWith('.md'))
        .map((name) => `docs/${name}`),
    ];
    const found = pages.flatMap((page) => undated(page, fs.readFileSync(path.join(ROOT, page), 'utf8')));
    expect(found, 'date these figures ("measured on YYYY-MM-DD with npm run bench -- …"), or re-measure them').toEqual([]);
  });
});
