#!/usr/bin/env node
// The dependency contracts that keep the layers of the codebase readable from the bottom up and
// its packages separable (a user's operator never loads the generator or the emulator), checked on
// every `npm test`:
//   - devcluster/ never imports runtime/; runtime/ never imports devcluster/ or generator/;
//   - the packages stay apart: generator/ (the @kopf-gen/generator package) imports nothing of
//     runtime/, devcluster/ or cli/, and nothing of kopf-gen imports generator/ by path (the
//     command line loads it by package name, only for init/generate/add); runtime/ and
//     devcluster/ never import cli/ (the command line sits on top of both), nor testing/ (the kit
//     that combines them for users' tests);
//   - runtime layers: index/on/cli → kits → core → cogs (lower layers never import higher ones);
//     inside core: reactor → engines → intents → actions; inside cogs: client → configs → structs → aio;
//   - independence: cogs/configs/progress ↔ cogs/configs/diffbase, and kits/* ↔ each other.
// Prints every violation as `file: imports target (rule)` and exits 1 if there is any.
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..'));

const RANKS = [
  // [prefix, rank]: a file may import only files of a rank <= its own (within the runtime).
  ['runtime/cogs/aio/', 0],
  ['runtime/cogs/structs/', 1],
  ['runtime/cogs/configs/', 2],
  ['runtime/cogs/client/', 3],
  ['runtime/core/actions/', 10],
  ['runtime/core/intents/', 11],
  ['runtime/core/engines/', 12],
  ['runtime/core/reactor/', 13],
  ['runtime/kits/', 20],
  ['runtime/', 30],
];

function rankOf(rel) {
  for (const [prefix, rank] of RANKS) if (rel.startsWith(prefix)) return rank;
  return undefined;
}

function* sources(dir) {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') yield* sources(full);
    } else if (/\.(ts|mts|js|mjs)$/.test(entry.name)) yield full;
  }
}

const IMPORT = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|import\s*['"]([^'"]+)['"]/g;

export function check(rootDir) {
  const violations = [];
  for (const top of ['devcluster', 'runtime', 'testing', 'generator', 'cli']) {
    for (const file of sources(path.join(rootDir, top))) {
      const rel = path.relative(rootDir, file).split(path.sep).join('/');
      const text = fs.readFileSync(file, 'utf8');
      for (const m of text.matchAll(IMPORT)) {
        const spec = m[1] ?? m[2] ?? m[3];
        let target;
        if (spec.startsWith('.'))
          target = path
            .relative(rootDir, path.resolve(path.dirname(file), spec))
            .split(path.sep)
            .join('/');
        else if (spec === 'kopf-gen' || spec.startsWith('kopf-gen/')) {
          const sub = spec === 'kopf-gen' ? 'runtime' : spec.slice('kopf-gen/'.length);
          target = sub === 'testing' ? 'testing/index.ts' : sub === 'generator' ? 'cli/generator.ts' : `${sub}/index.ts`;
        } else continue;
        const say = (rule) => violations.push(`${rel}: imports ${target} (${rule})`);
        if (rel.startsWith('devcluster/') && target.startsWith('runtime/')) say('the devcluster never imports the runtime');
        if (rel.startsWith('generator/') && /^(runtime|devcluster|cli)\//.test(target)) say("the generator package never imports kopf-gen's folders");
        if (!rel.startsWith('generator/') && target.startsWith('generator/')) say('kopf-gen loads the generator by package name, never by path');
        if (/^(runtime|devcluster)\//.test(rel) && target.startsWith('cli/')) say('the runtime and the devcluster never import the command line');
        if (/^(runtime|devcluster)\//.test(rel) && target.startsWith('testing/'))
          say('the runtime and the devcluster never import the testing kit that combines them');
        if (rel.startsWith('runtime/') && target.startsWith('devcluster/')) say('the runtime never imports the devcluster');
        if (rel.startsWith('runtime/') && target.startsWith('generator/')) say('the runtime never imports the generator');
        if (rel.startsWith('runtime/') && target.startsWith('runtime/')) {
          const from = rankOf(rel);
          const to = rankOf(target);
          if (from !== undefined && to !== undefined && to > from) say('a lower runtime layer never imports a higher one');
          const pair = [rel, target].map((p) => p.replace(/\.(ts|js)$/, ''));
          if (pair.includes('runtime/cogs/configs/progress') && pair.includes('runtime/cogs/configs/diffbase'))
            say('progress and diffbase storages are independent');
          const kit = (p) => (p.startsWith('runtime/kits/') ? p.split('/')[2].replace(/\.(ts|js)$/, '') : undefined);
          if (kit(rel) && kit(target) && kit(rel) !== kit(target)) say('kits are independent of each other');
        }
      }
    }
  }
  return violations;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const violations = check(root);
  if (violations.length) {
    console.error(`Layer check failed (${violations.length}):\n${violations.map((v) => `  ${v}`).join('\n')}`);
    process.exit(1);
  }
  console.log('Layer check passed.');
}
