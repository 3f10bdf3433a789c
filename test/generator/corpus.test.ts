/**
 * The CRD corpus end to end: every file loads, validates and emits, fast, and what it emits
 * type-checks under strict settings against the real runtime.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as support from './support.js';

const directory = support.corpusDirectory();
const files = fs
  .readdirSync(directory)
  .filter((name) => name.endsWith('.yaml'))
  .sort();
const sources = files.map((name) => ({ path: `crds/${name}`, text: fs.readFileSync(path.join(directory, name), 'utf8') }));

describe('the CRD corpus', () => {
  it('holds the files the generator must handle', () => {
    expect(files.length).toBeGreaterThanOrEqual(16);
  });

  it.each(files)('%s loads, validates and emits one module per served version', (name) => {
    const source = sources.find((candidate) => candidate.path === `crds/${name}`)!;
    const { model, modules } = support.generate([source]);
    const served = model.crds.reduce((count, crd) => count + crd.versions.length, 0);
    expect(served).toBeGreaterThan(0);
    expect(modules).toHaveLength(served);
    for (const module of modules) {
      expect(module.text).toContain(`export interface ${module.names.body} {`);
      expect(module.text).toContain(`export const ${module.names.descriptor} = resource<${module.names.body}>(`);
    }
  });

  it('generates the whole corpus in one run, one module per served version', () => {
    // Generation time is measured by `npm run bench -- generator`, not asserted here.
    const { model, modules } = support.generate(sources);
    const served = model.crds.reduce((count, crd) => count + crd.versions.length, 0);
    expect(modules).toHaveLength(served);
    expect(modules.length).toBeGreaterThan(60);
  });

  it('emits modules that type-check with tsc --strict', { timeout: 120_000 }, () => {
    const { modules } = support.generate(sources);
    const names = new Set(modules.map((module) => module.fileName));
    expect(names.size).toBe(modules.length);
    expect(support.typecheck(modules)).toEqual([]);
  });
});
