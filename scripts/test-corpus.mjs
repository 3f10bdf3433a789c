#!/usr/bin/env node
// `npm run test:corpus`: the generator's suites over the external real-world CRD corpus. Those
// suites are skipped by `npm test` unless KOPF_GEN_CRD_CORPUS names a directory of CRD YAML files;
// here the variable is required, so a run that was meant to cover the corpus cannot pass by
// skipping it. Extra arguments go to vitest.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const VARIABLE = 'KOPF_GEN_CRD_CORPUS';
const named = process.env[VARIABLE];
const fail = (message) => {
  console.error(`test:corpus: ${message}`);
  process.exit(2);
};
if (!named) fail(`${VARIABLE} is not set; point it at a directory of CRD YAML files, e.g. ${VARIABLE}=../shared/crds npm run test:corpus`);
const directory = path.resolve(named);
if (!fs.existsSync(directory) || !fs.statSync(directory).isDirectory()) fail(`${VARIABLE}=${named}: ${directory} is not a directory`);
const files = fs.readdirSync(directory).filter((name) => name.endsWith('.yaml'));
if (files.length === 0) fail(`${VARIABLE}=${named}: ${directory} has no .yaml file`);
console.log(`test:corpus: ${files.length} CRD files in ${directory}`);

// Every external-corpus suite is titled "external CRD corpus (…)"; the filter runs those alone.
const root = path.resolve(import.meta.dirname, '..');
const vitest = path.join(root, 'node_modules/.bin/vitest');
const result = spawnSync(vitest, ['run', 'test/generator', '--testNamePattern', '^external CRD corpus', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, [VARIABLE]: directory },
});
if (result.error) fail(`cannot run vitest: ${result.error.message}`);
process.exit(result.status ?? 1);
