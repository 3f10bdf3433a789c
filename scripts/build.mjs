#!/usr/bin/env node
// Builds the two packages' compiled distributions: `kopf-gen` (runtime/, devcluster/, cli/ →
// dist/) and `@kopf-gen/generator` (generator/ → generator/dist/, with a copy of templates/ beside
// it, where the generator looks for its templates once installed, and the licence). Old output is removed first so
// that a deleted source never survives as a stale compiled file.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');

for (const folder of ['dist', 'generator/dist', 'generator/templates', 'generator/LICENSE'])
  fs.rmSync(path.join(root, folder), { recursive: true, force: true });
// The generator first: kopf-gen's `kopf-gen/generator` subpath re-exports its declarations.
for (const project of ['generator/tsconfig.build.json', 'tsconfig.build.json']) {
  try {
    execFileSync(process.execPath, [tsc, '-p', path.join(root, project)], { stdio: 'inherit' });
  } catch {
    console.error(`build: tsc -p ${project} failed`);
    process.exit(1);
  }
}
fs.cpSync(path.join(root, 'templates'), path.join(root, 'generator', 'templates'), { recursive: true });
// The generator's tarball carries the licence too (npm packs only files inside the package's folder).
fs.copyFileSync(path.join(root, 'LICENSE'), path.join(root, 'generator', 'LICENSE'));
