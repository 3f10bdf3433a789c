/**
 * kopf-gen with both TypeScript majors. The generator uses the compiler API of a pinned 5.x, while
 * a user's `npm install typescript` now brings 7.x, the native compiler without that API. A project
 * generated from the Kopf example CRD and a large CRD (the synthetic `platforms.yaml` fixture) must
 * type-check without a diagnostic under both compilers, each called by explicit path; and with the
 * project's own `typescript` being 7.x, `kopf-gen generate` must still work (the generator resolves
 * its own 5.x) and `npm run typecheck` must run the 7.x `tsc`.
 *
 * The project is installed offline the way `npm run demo` does it: node_modules linked to this
 * checkout, `kopf-gen` → this checkout (what npm makes of the project's `file:` dependency).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as demo from '../../scripts/demo.js';
import * as support from './support.js';

const CRDS = [path.join(demo.CHECKOUT, 'fixtures/crds/kopfexamples.yaml'), path.join(support.FIXTURES, 'platforms.yaml')];

/** Runs a command to completion (killed after `timeoutMs`); resolves to its exit code and output. */
function run(command: string, args: readonly string[], cwd: string, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
    delete env['FORCE_COLOR'];
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    const timer = setTimeout(() => {
      output += `\n[killed after ${timeoutMs / 1000}s]`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** The version of the `typescript` package a project resolves. */
function projectTypeScriptVersion(project: string): string {
  const manifest = createRequire(path.join(project, 'package.json')).resolve('typescript/package.json');
  return (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/** Every file of a folder with its content. */
function snapshot(dir: string): Record<string, string> {
  return Object.fromEntries(
    fs
      .readdirSync(dir)
      .sort()
      .map((name) => [name, fs.readFileSync(path.join(dir, name), 'utf8')]),
  );
}

describe('a generated project with TypeScript 5.9 and TypeScript 7', () => {
  let work: string;
  let project: string;

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-ts7-'));
    project = path.join(work, 'two-kinds-operator');
    const init = await run(
      process.execPath,
      [path.join(demo.CHECKOUT, 'bin/kopf-gen.js'), 'init', ...CRDS.flatMap((crd) => ['--crd', crd]), '--out', project],
      work,
      40_000,
    );
    if (init.code !== 0) throw new Error(`kopf-gen init exited with ${init.code}:\n${init.output}`);
    demo.linkNodeModules(project);
  }, 50_000);

  afterAll(() => {
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('generates both kinds, the synthetic one large', () => {
    const generated = snapshot(path.join(project, 'src/generated'));
    expect(Object.keys(generated)).toEqual(expect.arrayContaining(['kopfexamples.kopf.dev.v1.ts', 'platforms.big.example.com.v1.ts']));
    expect(generated['platforms.big.example.com.v1.ts']!.length).toBeGreaterThan(50_000);
  });

  it.each([
    ['TypeScript 5.9', 'node_modules/typescript/bin/tsc', /^Version 5\.9\./],
    ['TypeScript 7', 'node_modules/typescript-7/bin/tsc', /^Version 7\./],
  ])(
    'type-checks src/ and test/ with zero diagnostics under %s',
    async (_name, compiler, version) => {
      expect((await run(process.execPath, [compiler, '--version'], project, 20_000)).output).toMatch(version);
      const check = await run(process.execPath, [compiler, '--noEmit', '-p', 'tsconfig.json'], project, 90_000);
      expect(check.output).toBe('');
      expect(check.code).toBe(0);
    },
    100_000,
  );

  it("kopf-gen generate works with the project's typescript being 7.x (rewriting exactly what init wrote), and npm run typecheck then runs tsc 7", async () => {
    demo.useTypeScript(project, 'typescript-7');
    expect(projectTypeScriptVersion(project)).toMatch(/^7\./);
    const before = snapshot(path.join(project, 'src/generated'));
    // Everything but the manifest (what the change summary compares against) must be written again.
    for (const name of Object.keys(before)) if (name !== 'manifest.json') fs.rmSync(path.join(project, 'src/generated', name));

    const generate = await run('npm', ['run', 'generate'], project, 60_000);
    expect(generate.code, generate.output).toBe(0);
    expect(generate.output).toContain('No changes to kinds, versions or fields since the last generation.');
    expect(snapshot(path.join(project, 'src/generated'))).toEqual(before);

    expect((await run(path.join(project, 'node_modules/.bin/tsc'), ['--version'], project, 20_000)).output).toMatch(/^Version 7\./);
    const typecheck = await run('npm', ['run', 'typecheck'], project, 60_000);
    expect(typecheck.code, typecheck.output).toBe(0);
    expect(typecheck.output).not.toMatch(/error TS\d+/);
  }, 130_000);
});
