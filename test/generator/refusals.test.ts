/**
 * Hostile places for the generator's inputs and output, each refused in one line that names the
 * path and the problem, with nothing written: a `--crd` that is a FIFO, a directory or a device
 * (a FIFO used to block the run forever), an empty `--out`, and an `--out` that cannot be created
 * (below a regular file, under /proc, in an unwritable or read-only place).
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as cli from '../../generator/cli.js';
import * as generator from '../../generator/index.js';
import * as projects from '../../generator/projects.js';
import * as ps from './projects-support.js';
import * as support from './support.js';

const root = ps.tempDir();
afterAll(() => ps.cleanup(root));

/** The command line's module, and a script that runs it with the process's arguments. */
const CLI = path.join(support.REPO_ROOT, 'generator/cli.ts');
const RUN_CLI = 'const { main } = await import(process.argv[1]); process.exitCode = await main(process.argv.slice(2));';

const crdFile = ps.write(path.join(root, 'inputs/widgets.yaml'), ps.widgetCrd({ size: { type: 'integer' } }));

/** Runs the command line; returns its exit code and its stderr, which must be one line. */
async function refused(argv: readonly string[]): Promise<{ code: number; line: string }> {
  const io = ps.capture();
  const code = await cli.main(argv, io);
  const lines = io.stderr().trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  return { code, line: lines[0]! };
}

describe('--crd that is not a regular file', () => {
  it('refuses a FIFO before reading it (reading would block forever), naming the path', async () => {
    const fifo = path.join(root, 'inputs/pipe.yaml');
    execFileSync('mkfifo', [fifo]);
    // A writer that feeds the FIFO a valid CRD, so that a generator that reads it anyway gets an
    // answer (and the test fails instead of blocking); a refusal leaves the writer waiting for a
    // reader, and it is ended below.
    const writer: ChildProcess = spawn('sh', ['-c', 'cat "$0" > "$1"', crdFile, fifo], { stdio: 'ignore' });
    const out = path.join(root, 'from-fifo');
    try {
      const { code, line } = await refused(['init', '--crd', fifo, '--out', out]);
      expect(code).toBe(1);
      expect(line).toBe(`kopf-gen: --crd ${fifo}: a FIFO (named pipe), not a regular file; give a CRD file, or --crd - to read standard input`);
      expect(fs.existsSync(out)).toBe(false);
    } finally {
      writer.kill();
      fs.rmSync(fifo);
    }
  });

  it.each([
    { what: 'a directory', input: () => path.join(root, 'inputs') },
    { what: 'a character device', input: () => '/dev/null' },
  ])('refuses $what, naming it', async ({ what, input }) => {
    const out = path.join(root, 'from-other');
    await expect(generator.init({ crds: [input()], out })).rejects.toMatchObject({
      code: 'not-a-file',
      message: `--crd ${input()}: ${what}, not a regular file; give a CRD file, or --crd - to read standard input`,
    });
    expect(fs.existsSync(out)).toBe(false);
  });

  it('still reads standard input with --crd -', async () => {
    const out = path.join(root, 'from-stdin');
    const io = ps.capture(fs.readFileSync(crdFile, 'utf8'));
    expect(await cli.main(['init', '--crd', '-', '--out', out], io)).toBe(0);
    expect(fs.existsSync(path.join(out, 'kopf-gen.json'))).toBe(true);
  });
});

describe('--out', () => {
  it("refuses an empty path in one line (it used to say ' is not empty')", async () => {
    // An empty path resolves to the working directory, which is where a write would land.
    const before = fs.readdirSync(process.cwd());
    const { code, line } = await refused(['init', '--crd', crdFile, '--out', '']);
    expect(code).toBe(1);
    expect(line).toBe('kopf-gen: the output path is empty: give the directory to create the project in (--out DIR)');
    await expect(generator.init({ crds: [crdFile], out: '' })).rejects.toMatchObject({ code: 'no-output' });
    expect(fs.readdirSync(process.cwd())).toEqual(before);
  });

  it('refuses a path below a regular file, naming the file', async () => {
    const file = ps.write(path.join(root, 'occupied/plain.txt'), 'mine\n');
    for (const out of [path.join(file, 'project'), path.join(file, 'deeper/project')]) {
      const { code, line } = await refused(['init', '--crd', crdFile, '--out', out]);
      expect(code).toBe(1);
      expect(line).toBe(`kopf-gen: cannot create the project at ${out}: ${file} is a regular file`);
    }
    expect(ps.snapshot(path.join(root, 'occupied'))).toEqual({ 'plain.txt': 'mine\n' });
  });

  it('refuses a place whose file system will not create directories (/proc), naming it', () => {
    // In a child process with a deadline: a recursive mkdir there loops forever without yielding.
    const out = '/proc/kopf-gen-test/operator';
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', RUN_CLI, CLI, 'init', '--crd', crdFile, '--out', out], {
      encoding: 'utf8',
      timeout: 45_000,
    });
    expect(child.error).toBeUndefined();
    expect(child.status).toBe(1);
    const lines = child.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^kopf-gen: cannot create the project at \/proc\/kopf-gen-test\/operator: .*\/proc.*\((ENOENT|EACCES|EROFS)\)$/);
    expect(fs.existsSync('/proc/kopf-gen-test')).toBe(false);
  }, 60_000);

  it('words every errno of a failed creation as the place and the problem', () => {
    const at = path.join(root, 'nowhere/project');
    const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: raw message, mkdtemp '${at}'`), { code });
    expect(projects.unwritableReason(at, errno('EACCES'))).toBe(`permission denied (EACCES) at ${root}`);
    expect(projects.unwritableReason(at, errno('EROFS'))).toBe(`${root} is on a read-only file system (EROFS)`);
    expect(projects.unwritableReason(at, errno('ENOENT'))).toBe(`the file system of ${root} does not allow creating directories there (ENOENT)`);
    const file = ps.write(path.join(root, 'blocking'), 'x');
    for (const code of ['ENOTDIR', 'EEXIST']) expect(projects.unwritableReason(path.join(file, 'a/b'), errno(code))).toBe(`${file} is a regular file`);
  });

  it('undoes the parent directories it created when the project itself cannot be created', async () => {
    // A read-only mount is not available everywhere; the staging failure is what matters: a name
    // the file system refuses (longer than NAME_MAX) below fresh parents.
    const parents = path.join(root, 'fresh');
    const out = path.join(parents, 'a', 'x'.repeat(300));
    const { code, line } = await refused(['init', '--crd', crdFile, '--out', out]);
    expect(code).toBe(1);
    expect(line).toMatch(new RegExp(`^kopf-gen: cannot create the project at ${out}: `));
    expect(fs.existsSync(parents)).toBe(false);
  });
});
