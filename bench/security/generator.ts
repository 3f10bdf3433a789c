/**
 * Security probe of the generator (issue 33, item 11): hostile inputs and hostile project layouts.
 *
 * - `files_written_outside`: a project whose `deploy/` and `src/handlers/` are symbolic links to
 *   folders outside it gets `generate`, then `add` of a new kind; the figure is the number of
 *   files created, changed or removed outside the project (target 0). `symlink_runs_refused`
 *   counts the two runs that refused (2 once fixed).
 * - `large_crd_refuse_s`, `large_crd_peak_rss_mb`: `kopf-gen init --crd <59 MB CRD>` in a child
 *   process (a real file of that size: a CRD with a very long list of properties); the time from
 *   the call to its end, and the child's peak RSS (node and the generator's modules included;
 *   `baseline_*` are the same child refusing a missing file; the generator's modules are loaded
 *   before the clock starts). Target: refused in < 1 s
 *   with the RSS of a child that read nothing (within 64 MB of the baseline).
 * - `depth_error_correct`: a schema 600 levels deep is refused with an error that says depth — the
 *   code `too-deep`, a JSON path, the CRD and version, the limit — and no stack overflow (1/0).
 * - `dangling_out_clear`: an `--out` that is a symbolic link to nothing is refused in one line
 *   naming the link (not a raw `ENOTDIR`) (1/0).
 * - `project_modes_ok`: a new project's directory has mode 0777 less the umask (not 0700) (1/0).
 *
 * Options: `--size-mb N` (default 59, the issue's file), `--keep` (keep the temporary folder).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as util from 'node:util';
import * as cli from '../../generator/cli.js';
import * as loading from '../../generator/loading.js';
import type * as report from '../report.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = path.join(ROOT, 'generator/cli.ts');
const INIT_COMMAND = path.join(ROOT, 'generator/commands/init.ts');

const CRD_HEAD = [
  'apiVersion: apiextensions.k8s.io/v1',
  'kind: CustomResourceDefinition',
  'metadata: {name: widgets.example.com}',
  'spec:',
  '  group: example.com',
  '  scope: Namespaced',
  '  names: {kind: Widget, plural: widgets, singular: widget}',
  '  versions:',
  '  - name: v1',
  '    served: true',
  '    storage: true',
  '    schema:',
  '      openAPIV3Schema:',
  '        type: object',
  '        properties:',
  '          spec:',
];

/** A small valid CRD of the given kind. */
function smallCrd(kind: string): string {
  return `${CRD_HEAD.join('\n')
    .replaceAll('widgets', `${kind.toLowerCase()}s`)
    .replaceAll('Widget', kind)
    .replaceAll('widget', kind.toLowerCase())}\n            type: object\n            properties:\n              size: {type: integer}\n`;
}

/** A CRD of about `bytes` bytes: a spec with as many string properties as fit. */
function writeLargeCrd(file: string, bytes: number): void {
  const fd = fs.openSync(file, 'w');
  try {
    fs.writeSync(fd, `${CRD_HEAD.join('\n')}\n            type: object\n            properties:\n`);
    const line = (index: number): string => `              p${String(index).padStart(8, '0')}: {type: string, description: generated}\n`;
    const perChunk = 10_000;
    const chunkBytes = line(0).length * perChunk;
    for (let written = 0, index = 0; written < bytes; written += chunkBytes) {
      const chunk: string[] = [];
      for (let each = 0; each < perChunk; each += 1, index += 1) chunk.push(line(index));
      fs.writeSync(fd, chunk.join(''));
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** Every file below a directory with its content (links as `-> target`). */
function tree(dir: string): Map<string, string> {
  const result = new Map<string, string>();
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[]) {
    const full = path.join(entry.parentPath, entry.name);
    if (entry.isSymbolicLink()) result.set(full, `-> ${fs.readlinkSync(full)}`);
    else if (entry.isFile()) result.set(full, fs.readFileSync(full, 'utf8'));
  }
  return result;
}

function differences(before: Map<string, string>, after: Map<string, string>): number {
  let count = 0;
  for (const [file, text] of after) if (before.get(file) !== text) count += 1;
  for (const file of before.keys()) if (!after.has(file)) count += 1;
  return count;
}

/** A CLI output that keeps stderr. */
function quiet(): cli.Output & { stderr: () => string } {
  let err = '';
  return {
    out: () => undefined,
    err: (text) => {
      err += text;
    },
    stdin: async () => '',
    stderr: () => err,
  };
}

async function symlinkEscapes(work: string): Promise<{ outside: number; refused: number }> {
  const project = path.join(work, 'project');
  const outside = path.join(work, 'outside');
  const widgets = path.join(work, 'widgets.yaml');
  const gadgets = path.join(work, 'gadgets.yaml');
  fs.writeFileSync(widgets, smallCrd('Widget'));
  fs.writeFileSync(gadgets, smallCrd('Gadget'));
  if ((await cli.main(['init', '--crd', widgets, '--out', project], quiet())) !== 0) throw new Error('init of the probe project failed');
  fs.mkdirSync(outside);
  for (const dir of ['deploy', 'src/handlers']) {
    const target = path.join(outside, path.basename(dir));
    fs.renameSync(path.join(project, dir), target);
    fs.symlinkSync(target, path.join(project, dir));
  }
  // A stale generated file outside, as a shared folder would hold.
  fs.writeFileSync(path.join(outside, 'deploy/rbac.yaml'), '# shared\n');
  const before = tree(outside);
  let refused = 0;
  if ((await cli.main(['generate', '--project', project], quiet())) !== 0) refused += 1;
  if ((await cli.main(['add', '--crd', gadgets, '--project', project], quiet())) !== 0) refused += 1;
  return { outside: differences(before, tree(outside)), refused };
}

/** Runs `init --crd <file>` in a child; the call's seconds and the child's peak RSS. */
function refuseInChild(crd: string, out: string): { seconds: number; rssMb: number; stderr: string } {
  const script = [
    'const { main } = await import(process.argv[1]);',
    '// The command modules load when a command runs: loaded first, so the time is the refusal only.',
    'await import(process.argv[4]);',
    'const started = performance.now();',
    'const code = await main(["init", "--crd", process.argv[2], "--out", process.argv[3]]);',
    'const seconds = (performance.now() - started) / 1000;',
    'process.stdout.write(JSON.stringify({ code, seconds, rssMb: process.resourceUsage().maxRSS / 1024 }));',
  ].join('\n');
  const child = spawnSync(
    process.execPath,
    ['--conditions=kopf-gen-source', '--import', 'tsx', '--input-type=module', '-e', script, CLI, crd, out, INIT_COMMAND],
    {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 600_000,
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  if (child.error) throw child.error;
  const result = JSON.parse(child.stdout) as { seconds: number; rssMb: number };
  return { ...result, stderr: child.stderr.trim().split('\n')[0] ?? '' };
}

function depthError(): { correct: number; message: string } {
  const lines = [...CRD_HEAD];
  let indent = 12;
  for (let level = 0; level < 600; level += 1) {
    lines.push(`${' '.repeat(indent)}type: object`, `${' '.repeat(indent)}properties:`, `${' '.repeat(indent + 2)}a:`);
    indent += 4;
  }
  lines.push(`${' '.repeat(indent)}type: string`);
  try {
    loading.loadCrdSources([{ path: 'deep.yaml', text: `${lines.join('\n')}\n` }]);
    return { correct: 0, message: 'accepted' };
  } catch (error) {
    const { code, message, jsonPath } = error as { code?: string; message: string; jsonPath?: string };
    const correct =
      code === 'too-deep' &&
      typeof jsonPath === 'string' &&
      jsonPath.startsWith('spec.versions[0].schema.openAPIV3Schema.properties.spec.') &&
      /levels deep/.test(message) &&
      /widgets\.example\.com/.test(message) &&
      /version v1/.test(message) &&
      !/call stack/i.test(message);
    return { correct: correct ? 1 : 0, message: `${code}: ${message.replace(/(\.properties\.a){3,}/, '…')}`.slice(0, 300) };
  }
}

async function danglingOut(work: string): Promise<number> {
  const crd = path.join(work, 'widgets.yaml');
  const out = path.join(work, 'dangling');
  fs.symlinkSync(path.join(work, 'nowhere/at-all'), out);
  const io = quiet();
  const code = await cli.main(['init', '--crd', crd, '--out', out], io);
  const lines = io.stderr().trimEnd().split('\n');
  return code === 1 && lines.length === 1 && lines[0]!.includes('is a symbolic link to') && !/ENOTDIR|ENOENT/.test(lines[0]!) ? 1 : 0;
}

async function projectModes(work: string): Promise<number> {
  const out = path.join(work, 'modes');
  await cli.main(['init', '--crd', path.join(work, 'widgets.yaml'), '--out', out], quiet());
  // The umask, as a directory made here gets it.
  const probe = path.join(work, 'umask-probe');
  fs.mkdirSync(probe);
  return (fs.statSync(out).mode & 0o777) === (fs.statSync(probe).mode & 0o777) ? 1 : 0;
}

export async function run(args: readonly string[]): Promise<report.Result> {
  const { values } = util.parseArgs({ args: [...args], strict: false, options: { 'size-mb': { type: 'string' }, keep: { type: 'boolean' } } });
  const sizeMb = Number(values['size-mb'] ?? 59);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-security-generator-'));
  try {
    const escapes = await symlinkEscapes(work);
    const large = path.join(work, 'large.yaml');
    writeLargeCrd(large, sizeMb * 1000 * 1000);
    const largeSize = fs.statSync(large).size;
    const refusal = refuseInChild(large, path.join(work, 'from-large'));
    const baseline = refuseInChild(path.join(work, 'missing.yaml'), path.join(work, 'from-missing'));
    const depth = depthError();
    const figures = {
      files_written_outside: escapes.outside,
      symlink_runs_refused: escapes.refused,
      large_crd_mb: largeSize / 1e6,
      large_crd_refuse_s: refusal.seconds,
      large_crd_peak_rss_mb: refusal.rssMb,
      baseline_refuse_s: baseline.seconds,
      baseline_peak_rss_mb: baseline.rssMb,
      depth_error_correct: depth.correct,
      dangling_out_clear: await danglingOut(work),
      project_modes_ok: await projectModes(work),
    };
    return {
      name: 'security-generator',
      figures,
      targets: {
        files_written_outside: { max: 0 },
        symlink_runs_refused: { min: 2 },
        large_crd_refuse_s: { max: 1 },
        large_crd_peak_rss_mb: { max: baseline.rssMb + 64 },
        depth_error_correct: { min: 1 },
        dangling_out_clear: { min: 1 },
        project_modes_ok: { min: 1 },
      },
      notes: {
        symlinks: 'generate, then add of a new kind, in a project whose deploy/ and src/handlers/ link outside it; files created, changed or removed outside',
        large_crd: `kopf-gen init --crd <${(largeSize / 1e6).toFixed(1)} MB CRD> in a child process: ${refusal.stderr}`,
        rss: 'peak RSS of the child process (node, tsx and the generator included); baseline: the same child refusing a missing --crd',
        depth: depth.message,
      },
    };
  } finally {
    if (values['keep'] === true) process.stderr.write(`security-generator: kept ${work}\n`);
    else fs.rmSync(work, { recursive: true, force: true });
  }
}
