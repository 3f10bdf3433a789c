#!/usr/bin/env node
// Code comments, test titles and docs cite behaviour by identifier ("(R-QUEUE-5)", a test named
// `C-94 …`), so that a reader can look the paragraph up. That only helps if the paragraph exists:
// this check, run by `npm test`, reads the identifiers that docs/reference/*.md define and reports
// every citation elsewhere in the checkout of an identifier that they do not define, and every
// citation of the design and style documents that are not part of the repository.
//
// Identifiers are whole words: runtime requirements `R-<AREA>-<n>` and scenarios `A-<n>`, devcluster
// requirements `D-<AREA>-<n>` and checklist entries `C-<n>`. The short forms `R-RES-1..6` (a range)
// and `R-LIFE-3/4` (a list) cite every number they name.
// Prints every finding as `file:line: message` and exits 1 if there is any.
import * as fs from 'node:fs';
import * as path from 'node:path';

const REFERENCE_DIR = 'docs/reference';

// Where the reference pages define an identifier: a bold requirement paragraph, a scenario heading,
// or a numbered checklist entry; mentions elsewhere on those pages are citations like any other.
const DEFINITIONS = [/^\*\*((?:R|D)-[A-Z]+-\d+)\b/, /^#{2,4} (A-\d+)\b/, /^(C-\d+)\./];

// A citation: an identifier not glued to a preceding word or hyphen (so `KEY-A-1` or `SHA-256` are
// not ids), optionally followed by `/n` or `..n` short forms, and not followed by a word character.
const CITATION = /(?<![\w-])((?:R|D)-[A-Z]+-|A-|C-)(\d+)((?:(?:\/|\.\.)\d+)*)(?![\w])/g;
const STYLE_RULE = /\bSTYLE (?:item |rule )?\d+\b|\b(?:STYLE|DESIGN)\.md\b|\bDESIGN "/g;

const SKIPPED_DIRS = new Set(['node_modules', '.git', 'dist', 'coverage', '.tmp', '.tools']);
const SKIPPED_PATHS = new Set([REFERENCE_DIR, 'bench/results', 'bench/.build', 'generator/dist', 'generator/templates']);
const SCANNED = /\.(ts|mts|cts|js|mjs|cjs|md|hbs|ya?ml|json|py|sh)$/;

function* files(rootDir, rel = '') {
  for (const entry of fs.readdirSync(path.join(rootDir, rel), { withFileTypes: true })) {
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name) && !SKIPPED_PATHS.has(child)) yield* files(rootDir, child);
    } else if (SCANNED.test(entry.name) && entry.name !== 'package-lock.json') yield child;
  }
}

/** Where the reference pages of `rootDir` define each identifier (`page:line`, once per definition). */
function definitions(rootDir) {
  const places = new Map();
  const dir = path.join(rootDir, REFERENCE_DIR);
  if (!fs.existsSync(dir)) return places;
  for (const name of fs.readdirSync(dir).sort()) {
    if (!name.endsWith('.md')) continue;
    fs.readFileSync(path.join(dir, name), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        for (const pattern of DEFINITIONS) {
          const m = pattern.exec(line);
          if (m) places.set(m[1], [...(places.get(m[1]) ?? []), `${REFERENCE_DIR}/${name}:${i + 1}`]);
        }
      });
  }
  return places;
}

/** The identifiers defined by the reference pages of `rootDir`. */
export function defined(rootDir) {
  return new Set(definitions(rootDir).keys());
}

/** Every identifier a piece of text cites, with the short forms expanded. */
export function citations(text) {
  const found = [];
  for (const m of text.matchAll(CITATION)) {
    const [, prefix, first, tail] = m;
    const numbers = [Number(first)];
    for (const part of tail.match(/(\/|\.\.)\d+/g) ?? []) {
      const n = Number(part.replace(/^\D+/, ''));
      if (part.startsWith('..')) for (let k = numbers[numbers.length - 1] + 1; k < n; k++) numbers.push(k);
      numbers.push(n);
    }
    for (const n of numbers) found.push({ id: `${prefix}${n}`, index: m.index });
  }
  return found;
}

export function check(rootDir) {
  const places = definitions(rootDir);
  if (places.size === 0) return [`${REFERENCE_DIR}: defines no identifiers`];
  const ids = new Set(places.keys());
  const findings = [];
  for (const [id, where] of places) {
    for (const again of where.slice(1)) findings.push(`${again}: defines ${id} again (first at ${where[0]})`);
  }
  for (const rel of files(rootDir)) {
    const text = fs.readFileSync(path.join(rootDir, rel), 'utf8');
    const lineOf = (index) => text.slice(0, index).split('\n').length;
    for (const { id, index } of citations(text)) {
      if (!ids.has(id)) findings.push(`${rel}:${lineOf(index)}: cites ${id}, which ${REFERENCE_DIR} does not define`);
    }
    for (const m of text.matchAll(STYLE_RULE)) {
      findings.push(`${rel}:${lineOf(m.index)}: cites "${m[0]}", a design document outside the repository; say the idea in words`);
    }
  }
  return findings;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..'));
  const findings = check(root);
  for (const finding of findings) console.error(finding);
  if (findings.length > 0) {
    console.error(`${findings.length} finding(s)`);
    process.exit(1);
  }
  console.log(`references: every cited identifier is defined in ${REFERENCE_DIR}`);
}
