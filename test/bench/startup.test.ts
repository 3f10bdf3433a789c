/**
 * The startup benchmark's pure helpers: its options, the median/min/max of runs, which package a
 * type-checked file belongs to, how tsc's errors are sorted into kopf-gen's, other packages' and
 * the project's, and install sizes per package. The benchmark itself asserts nothing.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as installing from '../../bench/installing.js';
import * as report from '../../bench/report.js';
import * as startup from '../../bench/startup.js';
import * as typechecking from '../../bench/typechecking.js';

describe("the startup benchmark's options", () => {
  it('default to 5 runs, 3 tsc runs, no other command, nothing skipped', () => {
    expect(startup.parseOptions(['startup'])).toEqual({ runs: 5, tscRuns: 3, kopfCommand: undefined, skip: new Set(), keep: false });
  });

  it("read skipped parts repeated or comma-separated, and ignore other benchmarks' options", () => {
    const options = startup.parseOptions(['startup', '--skip', 'install,ready', '--skip=typecheck', '--sizes', '1000', '--runs', '2', '--keep']);
    expect([...options.skip].sort()).toEqual(['install', 'ready', 'typecheck']);
    expect(options.runs).toBe(2);
    expect(options.keep).toBe(true);
  });

  it('reject an unknown part and a run count that is not a positive whole number', () => {
    expect(() => startup.parseOptions(['--skip', 'tests'])).toThrow('--skip tests: the parts are ready, typecheck, install');
    expect(() => startup.parseOptions(['--runs', '0'])).toThrow('--runs must be a positive whole number, not 0');
    expect(() => startup.parseOptions(['--tsc-runs', '1.5'])).toThrow('--tsc-runs must be a positive whole number');
  });
});

describe('the spread of samples', () => {
  it('is the median (the mean of the middle two for an even count), the minimum and the maximum', () => {
    expect(report.spread([0.3, 0.1, 0.2])).toEqual({ median: 0.2, min: 0.1, max: 0.3 });
    expect(report.spread([4, 1, 3, 2])).toEqual({ median: 2.5, min: 1, max: 4 });
    expect(report.spread([])).toEqual({ median: NaN, min: NaN, max: NaN });
  });
});

describe('where a file belongs', () => {
  const checkout = '/src/kopf-gen';
  const project = '/tmp/p';

  it('is the innermost package of a node_modules folder, scoped or not', () => {
    expect(typechecking.packageOf('/a/node_modules/@types/node/fs.d.ts')).toBe('@types/node');
    expect(typechecking.packageOf('node_modules/x/node_modules/y/lib/index.d.ts')).toBe('y');
    expect(typechecking.packageOf('node_modules/.package-lock.json')).toBeUndefined();
    expect(typechecking.packageOf('node_modules/@scope/file.json')).toBeUndefined();
    expect(typechecking.packageOf('/a/src/index.ts')).toBeUndefined();
  });

  it("is kopf-gen for the checkout's files, reached directly or through the project's link", () => {
    expect(typechecking.ownerOf('/src/kopf-gen/dist/runtime/on.d.ts', project, checkout)).toBe('kopf-gen');
    expect(typechecking.ownerOf('node_modules/kopf-gen/dist/runtime/on.d.ts', project, checkout)).toBe('kopf-gen');
    expect(typechecking.ownerOf('../../src/kopf-gen/node_modules/yaml/dist/index.d.ts', project, checkout)).toBe('yaml');
    expect(typechecking.ownerOf('src/main.ts', project, checkout)).toBe('(project)');
    expect(typechecking.ownerOf('/elsewhere/a.d.ts', project, checkout)).toBe('(other)');
  });

  it("sorts tsc's error lines into kopf-gen, other packages and the project, skipping continuation lines", () => {
    const output = [
      "../../src/kopf-gen/dist/runtime/on.d.ts(3,4): error TS2322: Type 'x' is not assignable.",
      '  Continuation of the message.',
      "../../src/kopf-gen/node_modules/@peculiar/x509/build/index.d.ts(38,62): error TS2552: Cannot find name 'BufferSource'.",
      "src/handlers/kopf-example.ts(10,5): error TS4111: Property 'a' comes from an index signature.",
      "error TS5023: Unknown compiler option 'x'.",
      'src/main.ts(1,1): warning TS0000: not an error',
    ].join('\n');
    const groups = typechecking.groupErrors(output, project, checkout);
    expect(groups.kopfGen).toHaveLength(1);
    expect(groups.otherPackages).toEqual([expect.stringContaining('@peculiar/x509')]);
    expect(groups.project).toEqual([expect.stringContaining('kopf-example.ts'), expect.stringContaining('TS5023')]);
  });
});

describe('the size of an install', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-install-sizes-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('adds apparent file sizes per innermost package, not following links', () => {
    const modules = path.join(dir, 'node_modules');
    const write = (file: string, bytes: number): void => {
      fs.mkdirSync(path.dirname(path.join(modules, file)), { recursive: true });
      fs.writeFileSync(path.join(modules, file), 'x'.repeat(bytes));
    };
    write('a/index.js', 100);
    write('a/lib/more.js', 50);
    write('a/node_modules/b/index.js', 30);
    write('@s/c/index.js', 7);
    write('.package-lock.json', 5);
    fs.mkdirSync(path.join(modules, '.bin'));
    fs.symlinkSync('../a/index.js', path.join(modules, '.bin', 'a'));
    expect(Object.fromEntries(installing.sizesByPackage(modules))).toEqual({ a: 150, b: 30, '@s/c': 7, '(none)': 5 });
  });
});
