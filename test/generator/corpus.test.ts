/**
 * Whole CRD files end to end: every file loads, validates and emits one module per served
 * version, the files generate together in one run, and what they emit type-checks under strict
 * settings against the real runtime. It runs over the repository's own fixtures always, and over
 * the external real-world corpus when `KOPF_GEN_CRD_CORPUS` points at one.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as support from './support.js';

interface Corpus {
  readonly directory: string;
  /** The fewest files and served versions the directory is known to hold, so a lost file shows. */
  readonly minimumFiles: number;
  readonly minimumModules: number;
}

function wholeFiles({ directory, minimumFiles, minimumModules }: Corpus): void {
  const files = support.yamlFiles(directory);
  const sources = files.map((name) => ({ path: `crds/${name}`, text: fs.readFileSync(path.join(directory, name), 'utf8') }));

  it('holds the files the generator must handle', () => {
    expect(files.length).toBeGreaterThanOrEqual(minimumFiles);
  });

  it.each(files)('%s loads, validates and emits one module per served version', (name) => {
    const source = sources.find((candidate) => candidate.path === `crds/${name}`)!;
    const { model, modules } = support.generate([source]);
    const served = model.crds.reduce((count, crd) => count + crd.versions.length, 0);
    expect(served).toBeGreaterThan(0);
    expect(modules).toHaveLength(served);
    for (const module of modules) {
      expect(module.text).toContain(`export interface ${module.names.body} {`);
      expect(module.text).toContain(
        `export const ${module.names.descriptor} = $kopf.resource<${module.names.body}, ${module.names.input}, ${module.names.view}, ${module.text.includes('namespaced: true,')}>(`,
      );
      expect(module.text).toContain(`export interface ${module.names.view} {`);
    }
  });

  it('generates every file in one run, one module per served version', () => {
    // Generation time is measured by `npm run bench -- generator`, not asserted here.
    const { model, modules } = support.generate(sources);
    const served = model.crds.reduce((count, crd) => count + crd.versions.length, 0);
    expect(modules).toHaveLength(served);
    expect(modules.length).toBeGreaterThanOrEqual(minimumModules);
  });

  it('emits modules that type-check with tsc --strict', { timeout: 120_000 }, () => {
    const { modules } = support.generate(sources);
    const names = new Set(modules.map((module) => module.fileName));
    expect(names.size).toBe(modules.length);
    expect(support.typecheck(modules)).toEqual([]);
  });
}

describe('the generator fixtures of the repository', () => {
  wholeFiles({ directory: support.FIXTURES, minimumFiles: 5, minimumModules: 9 });
});

// The corpus beside the checkout holds sixteen projects' CRDs; another corpus may hold fewer.
support.describeCorpus((directory) => wholeFiles({ directory, minimumFiles: 1, minimumModules: 1 }));
