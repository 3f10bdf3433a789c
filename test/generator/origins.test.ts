/**
 * Where a generated project's kopf-gen packages come from: the generator writes `file:` links to a
 * checkout, `file:` links to the tarballs npm installed it from, or registry version ranges.
 * The installs are laid out in temporary folders as npm lays them out (node_modules, the hidden
 * lock file) so that the detection reads real files.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as origins from '../../generator/origins.js';
import * as support from './support.js';

let work: string;
beforeEach(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-origins-'));
});
afterEach(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

/** Writes `node_modules/<name>/package.json` of an install and returns the package's folder. */
function installed(project: string, name: string, version: string): string {
  const root = path.join(project, 'node_modules', ...name.split('/'));
  fs.mkdirSync(root, { recursive: true });
  fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name, version }));
  return root;
}

function lock(project: string, packages: Record<string, { resolved: string }>): void {
  fs.writeFileSync(path.join(project, 'node_modules', '.package-lock.json'), JSON.stringify({ lockfileVersion: 3, packages }));
}

describe('dependency specs of a generated project', () => {
  it('links a checkout: the repository for kopf-gen and its generator folder for the generator', () => {
    expect(origins.dependencySpecs()).toEqual({
      kopfGen: `file:${fs.realpathSync(support.REPO_ROOT)}`,
      generator: `file:${fs.realpathSync(path.join(support.REPO_ROOT, 'generator'))}`,
    });
  });

  it('links the tarballs npm installed both packages from, as absolute paths', () => {
    const generator = installed(work, '@kopf-gen/generator', '1.2.3');
    installed(work, 'kopf-gen', '1.2.3');
    lock(work, {
      'node_modules/kopf-gen': { resolved: 'file:../tarballs/kopf-gen-1.2.3.tgz' },
      'node_modules/@kopf-gen/generator': { resolved: 'file:../tarballs/kopf-gen-generator-1.2.3.tgz' },
    });
    const tarballs = path.join(path.dirname(fs.realpathSync(work)), 'tarballs');
    expect(origins.dependencySpecs({ root: generator, version: '1.2.3' })).toEqual({
      kopfGen: `file:${path.join(tarballs, 'kopf-gen-1.2.3.tgz')}`,
      generator: `file:${path.join(tarballs, 'kopf-gen-generator-1.2.3.tgz')}`,
    });
  });

  it('uses version ranges for packages from the registry, with the runtime at its own installed version', () => {
    const generator = installed(work, '@kopf-gen/generator', '1.2.3');
    installed(work, 'kopf-gen', '1.2.4');
    lock(work, {
      'node_modules/kopf-gen': { resolved: 'https://registry.example/kopf-gen/-/kopf-gen-1.2.4.tgz' },
      'node_modules/@kopf-gen/generator': { resolved: 'https://registry.example/@kopf-gen/generator/-/generator-1.2.3.tgz' },
    });
    expect(origins.dependencySpecs({ root: generator, version: '1.2.3' })).toEqual({ kopfGen: '^1.2.4', generator: '^1.2.3' });
  });

  it("falls back to the generator's version when kopf-gen is not installed beside it and no lock file exists", () => {
    const generator = installed(work, '@kopf-gen/generator', '2.0.0');
    expect(origins.dependencySpecs({ root: generator, version: '2.0.0' })).toEqual({ kopfGen: '^2.0.0', generator: '^2.0.0' });
  });
});
