/**
 * Hostile places for the generator's inputs and output, each refused in one line that names the
 * path and the problem, with nothing written: a `--crd` that is a FIFO or a device, or a folder
 * holding one (a FIFO used to block the run forever), an empty `--out`, and an `--out` that cannot be created
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

  it('refuses a character device, naming it', async () => {
    const out = path.join(root, 'from-other');
    await expect(generator.init({ crds: ['/dev/null'], out })).rejects.toMatchObject({
      code: 'not-a-file',
      message: '--crd /dev/null: a character device, not a regular file; give a CRD file, or --crd - to read standard input',
    });
    expect(fs.existsSync(out)).toBe(false);
  });

  it('refuses a FIFO inside a folder given as --crd, unread, naming it', async () => {
    const folder = path.join(root, 'folder-with-fifo');
    ps.write(path.join(folder, 'a.yaml'), fs.readFileSync(crdFile, 'utf8'));
    execFileSync('mkfifo', [path.join(folder, 'b.yaml')]);
    const out = path.join(root, 'from-folder');
    await expect(generator.init({ crds: [folder], out })).rejects.toMatchObject({
      code: 'not-a-file',
      message: `--crd ${folder}/b.yaml: a FIFO (named pipe), not a regular file; give a CRD file, or --crd - to read standard input`,
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

describe('--out that is a symbolic link to nothing', () => {
  it('output-not-writable: a dangling link as --out, or on its way, is named with its target instead of a raw ENOTDIR', async () => {
    const links = path.join(root, 'links');
    fs.mkdirSync(links, { recursive: true });
    const missing = path.join(root, 'links-target/absent');
    const out = path.join(links, 'dangling');
    fs.symlinkSync(missing, out);
    let refusal = await refused(['init', '--crd', crdFile, '--out', out]);
    expect(refusal.code).toBe(1);
    expect(refusal.line).toBe(
      `kopf-gen: cannot create the project at ${out}: ${out} is a symbolic link to ${missing}, which does not exist; create that directory or give another --out`,
    );
    refusal = await refused(['init', '--crd', crdFile, '--out', path.join(out, 'below')]);
    expect(refusal.line).toMatch(
      new RegExp(`^kopf-gen: cannot create the project at ${out}/below: ${out} is a symbolic link to ${missing}, which does not exist`),
    );
    await expect(generator.init({ crds: [crdFile], out })).rejects.toMatchObject({ code: 'output-not-writable' });
    expect(fs.readlinkSync(out)).toBe(missing);
    expect(fs.existsSync(path.join(root, 'links-target'))).toBe(false);
    expect(fs.readdirSync(links)).toEqual(['dangling']);
  });

  it('a link to an existing empty directory is a place like any other: the project is created there', async () => {
    const target = path.join(root, 'linked-target');
    fs.mkdirSync(target);
    const out = path.join(root, 'linked-out');
    fs.symlinkSync(target, out);
    await generator.init({ crds: [crdFile], out });
    expect(fs.existsSync(path.join(target, 'kopf-gen.json'))).toBe(true);
  });
});

describe('symlink-escape: symbolic links inside a project never lead a write outside it', () => {
  const gadgetCrd = ps.write(path.join(root, 'inputs/gadgets.yaml'), ps.widgetCrd({ size: { type: 'integer' } }, { kind: 'Gadget' }));

  /** A fresh project, and a directory outside it for links to point at. */
  async function project(name: string): Promise<{ dir: string; outside: string }> {
    const dir = path.join(root, 'escapes', name);
    await generator.init({ crds: [crdFile], out: dir });
    const outside = path.join(root, 'escapes', `${name}-outside`);
    fs.mkdirSync(outside, { recursive: true });
    return { dir, outside };
  }

  /** Moves a directory of the project outside it, leaving a symbolic link in its place. */
  function linkOut(dir: string, relative: string, outside: string): string {
    const target = path.join(outside, path.basename(relative));
    fs.renameSync(path.join(dir, relative), target);
    fs.symlinkSync(target, path.join(dir, relative));
    return target;
  }

  /** Every entry of a tree, links included as links (`-> target`), files with their content. */
  function tree(dir: string): Record<string, string> {
    const result: Record<string, string> = {};
    for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[]) {
      const full = path.join(entry.parentPath, entry.name);
      const key = path.relative(dir, full);
      if (entry.isSymbolicLink()) result[key] = `-> ${fs.readlinkSync(full)}`;
      else if (entry.isFile()) result[key] = fs.readFileSync(full, 'utf8');
      else result[key] = '<dir>';
    }
    return result;
  }

  it('symlink-escape: generate refuses a deploy/ linked outside the project, in one line, writing nothing anywhere', async () => {
    const { dir, outside } = await project('deploy');
    const target = linkOut(dir, 'deploy', outside);
    fs.writeFileSync(path.join(target, 'rbac.yaml'), 'not yours\n');
    const before = { inside: tree(dir), outside: tree(outside) };
    const { code, line } = await refused(['generate', '--project', dir]);
    expect(code).toBe(1);
    expect(line).toBe(
      `kopf-gen: refusing to write deploy/rbac.yaml at ${target}/rbac.yaml, outside the project ${fs.realpathSync(dir)}: deploy is a symbolic link to ${target}; kopf-gen writes only inside the project (replace the link with a directory or file of the project)`,
    );
    await expect(generator.generate({ project: dir })).rejects.toMatchObject({ code: 'symlink-escape' });
    expect({ inside: tree(dir), outside: tree(outside) }).toEqual(before);
  });

  it('symlink-escape: add refuses a src/handlers/ linked outside (the new kind would get its stub there), writing nothing', async () => {
    const { dir, outside } = await project('handlers');
    linkOut(dir, 'src/handlers', outside);
    const before = { inside: tree(dir), outside: tree(outside) };
    const { code, line } = await refused(['add', '--crd', gadgetCrd, '--project', dir]);
    expect(code).toBe(1);
    expect(line).toMatch(/^kopf-gen: refusing to write src\/handlers\/gadget\.ts at .*, outside the project .*: src\/handlers is a symbolic link to /);
    expect({ inside: tree(dir), outside: tree(outside) }).toEqual(before);
  });

  it('symlink-escape: any component (src/, which holds src/generated/) and the file itself count', async () => {
    const { dir, outside } = await project('components');
    linkOut(dir, 'src', outside);
    let before = { inside: tree(dir), outside: tree(outside) };
    await expect(generator.generate({ project: dir })).rejects.toMatchObject({
      code: 'symlink-escape',
      message: expect.stringMatching(/: src is a symbolic link to /),
    });
    expect({ inside: tree(dir), outside: tree(outside) }).toEqual(before);

    const other = await project('file');
    const file = path.join(other.outside, 'rbac.yaml');
    fs.writeFileSync(file, 'shared\n');
    fs.rmSync(path.join(other.dir, 'deploy/rbac.yaml'));
    fs.symlinkSync(file, path.join(other.dir, 'deploy/rbac.yaml'));
    before = { inside: tree(other.dir), outside: tree(other.outside) };
    await expect(generator.generate({ project: other.dir })).rejects.toMatchObject({
      code: 'symlink-escape',
      message: expect.stringMatching(/^refusing to write deploy\/rbac\.yaml at .*: deploy\/rbac\.yaml is a symbolic link to /),
    });
    expect({ inside: tree(other.dir), outside: tree(other.outside) }).toEqual(before);
  });

  it('symlink-escape: init --force into a directory whose deploy/ leads outside writes nothing', async () => {
    const dir = path.join(root, 'escapes/force');
    const outside = path.join(root, 'escapes/force-outside');
    fs.mkdirSync(path.join(outside, 'deploy'), { recursive: true });
    fs.mkdirSync(dir, { recursive: true });
    ps.write(path.join(dir, 'notes.txt'), 'mine\n');
    fs.symlinkSync(path.join(outside, 'deploy'), path.join(dir, 'deploy'));
    const before = { inside: tree(dir), outside: tree(outside) };
    await expect(generator.init({ crds: [crdFile], out: dir, force: true })).rejects.toMatchObject({ code: 'symlink-escape' });
    expect({ inside: tree(dir), outside: tree(outside) }).toEqual(before);
  });

  it('symlink-escape: a loop of links is refused, not followed forever', async () => {
    const { dir } = await project('loop');
    fs.rmSync(path.join(dir, 'deploy'), { recursive: true });
    fs.symlinkSync('deploy', path.join(dir, 'deploy'));
    await expect(generator.generate({ project: dir })).rejects.toMatchObject({
      code: 'symlink-escape',
      message: 'cannot write deploy/rbac.yaml: deploy starts a chain of more than 40 symbolic links',
    });
  });

  it('a link that stays inside the project is followed: the file is written where it points, and the link stays', async () => {
    const { dir } = await project('inside');
    fs.mkdirSync(path.join(dir, 'ops'));
    fs.renameSync(path.join(dir, 'deploy'), path.join(dir, 'ops/deploy'));
    fs.symlinkSync('ops/deploy', path.join(dir, 'deploy'));
    fs.writeFileSync(path.join(dir, 'ops/deploy/rbac.yaml'), 'stale\n');
    await generator.generate({ project: dir });
    expect(fs.lstatSync(path.join(dir, 'deploy')).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'ops/deploy/rbac.yaml'), 'utf8')).toMatch(/kind: ClusterRole|kind: Role/);
  });
});

describe('input-too-large: CRD files over the size limit', () => {
  it('input-too-large: a file over 16 MiB is refused before it is read, naming it, its size and the limit', async () => {
    expect(generator.MAX_INPUT_BYTES).toBe(16 * 1024 * 1024);
    // Sparse: the size is there, the bytes are not (a generator that read it would see NULs, not YAML).
    const big = path.join(root, 'inputs/big.yaml');
    fs.writeFileSync(big, '');
    fs.truncateSync(big, generator.MAX_INPUT_BYTES + 1);
    const out = path.join(root, 'from-big');
    const { code, line } = await refused(['init', '--crd', big, '--out', out]);
    expect(code).toBe(1);
    expect(line).toBe(
      `kopf-gen: --crd ${big}: 16777217 bytes (16.0 MiB), more than the 16 MiB a CRD file may have (real CRD files are under 2 MiB); split the file, or raise the limit with --max-input-mib`,
    );
    expect(fs.existsSync(out)).toBe(false);
    fs.rmSync(big);
  });

  it('input-too-large: the limit is an option (--max-input-mib, maxInputBytes), for init, add and generate', async () => {
    const size = fs.statSync(crdFile).size;
    const out = path.join(root, 'small-limit');
    await expect(generator.init({ crds: [crdFile], out, maxInputBytes: size - 1 })).rejects.toMatchObject({
      code: 'input-too-large',
      message: `--crd ${crdFile}: ${size} bytes, more than the ${size - 1} bytes a CRD file may have (real CRD files are under 2 MiB); split the file, or raise the limit with --max-input-mib`,
    });
    expect(fs.existsSync(out)).toBe(false);
    await generator.init({ crds: [crdFile], out, maxInputBytes: size });
    const gadget = ps.write(path.join(root, 'inputs/gadgets-small.yaml'), ps.widgetCrd({}, { kind: 'Gadget' }));
    await expect(generator.add({ project: out, crds: [gadget], maxInputBytes: 10 })).rejects.toMatchObject({ code: 'input-too-large' });
    const before = ps.snapshot(out);
    await expect(generator.generate({ project: out, maxInputBytes: 10 })).rejects.toMatchObject({
      code: 'input-too-large',
      message: expect.stringMatching(/^crds\/widgets\.yaml: \d+ bytes/),
    });
    expect(ps.snapshot(out)).toEqual(before);
    const { code, line } = await refused(['generate', '--project', out, '--max-input-mib', '0.00001']);
    expect(code).toBe(1);
    expect(line).toMatch(/^kopf-gen: crds\/widgets\.yaml: \d+ bytes, more than the 10 bytes a CRD file may have/);
  });

  it('input-too-large: a file the project already has in crds/ is refused by generate, unread, and nothing changes', async () => {
    const out = path.join(root, 'big-in-crds');
    await generator.init({ crds: [crdFile], out });
    const big = path.join(out, 'crds/huge.yaml');
    fs.writeFileSync(big, '');
    fs.truncateSync(big, 59 * 1000 * 1000);
    const before = ps.snapshot(path.join(out, 'src'));
    await expect(generator.generate({ project: out })).rejects.toMatchObject({
      code: 'input-too-large',
      message:
        'crds/huge.yaml: 59000000 bytes (56.3 MiB), more than the 16 MiB a CRD file may have (real CRD files are under 2 MiB); split the file, or raise the limit with --max-input-mib',
    });
    expect(ps.snapshot(path.join(out, 'src'))).toEqual(before);
  });

  it('input-too-large: standard input over the limit', async () => {
    const io = ps.capture(`${fs.readFileSync(crdFile, 'utf8')}# ${'x'.repeat(2048)}\n`);
    const out = path.join(root, 'from-big-stdin');
    expect(await cli.main(['init', '--crd', '-', '--out', out, '--max-input-mib', '0.001'], io)).toBe(1);
    expect(io.stderr()).toBe(
      'kopf-gen: --crd - (standard input): larger, more than the 1048 bytes a CRD file may have (real CRD files are under 2 MiB); split the file, or raise the limit with --max-input-mib\n',
    );
    expect(fs.existsSync(out)).toBe(false);
  });
});

describe('modes of a new project', () => {
  it('creates directories 0777 and files 0666 less the umask (0750/0640 under umask 027), not 0700', () => {
    const out = path.join(root, 'modes/project');
    const script = `umask 027 && exec "$0" --import tsx --input-type=module -e "$1" "$2" init --crd "$3" --out "$4"`;
    const child = spawnSync('sh', ['-c', script, process.execPath, RUN_CLI, CLI, crdFile, out], { encoding: 'utf8', timeout: 45_000 });
    expect(child.error).toBeUndefined();
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    const modes = new Map<string, number>([['.', fs.statSync(out).mode & 0o777]]);
    for (const entry of fs.readdirSync(out, { recursive: true, withFileTypes: true }) as fs.Dirent[]) {
      const full = path.join(entry.parentPath, entry.name);
      modes.set(path.relative(out, full), fs.statSync(full).mode & 0o777);
    }
    const dirs = [...modes].filter(([name]) => name === '.' || fs.statSync(path.join(out, name)).isDirectory());
    const files = [...modes].filter(([name]) => name !== '.' && fs.statSync(path.join(out, name)).isFile());
    expect(dirs.map(([name]) => name)).toEqual(expect.arrayContaining(['.', 'src', 'src/generated', 'deploy']));
    expect(files.length).toBeGreaterThan(10);
    expect(Object.fromEntries(dirs.filter(([, mode]) => mode !== 0o750))).toEqual({});
    expect(Object.fromEntries(files.filter(([, mode]) => mode !== 0o640))).toEqual({});
    expect(fs.statSync(path.join(root, 'modes')).mode & 0o777).toBe(0o750); // a parent created on the way
  }, 60_000);
});
