/**
 * `npm run demo`: the main job on a fresh machine, as a user would do it. Generates an operator
 * project from the Kopf example CRD into a temporary folder (`kopf-gen init`), installs it without
 * network, runs it with `npm run operator` against the embedded devcluster, creates the reference
 * object with kubectl and shows the create handler's effect on it, then stops everything.
 *
 * "Installing without network" means linking: the project's node_modules becomes a folder of
 * symbolic links to this checkout's node_modules, plus `kopf-gen` → this checkout — what npm would
 * lay out for the project's `file:` dependency, minus the downloads. The end-to-end tests of the
 * generated project reuse `linkNodeModules`, `useTypeScript` and `scriptProcesses` from here, so
 * the demo and the tests install and stop a project the same way.
 */
import { execFile, execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** This checkout: the `kopf-gen` package the generated projects depend on. */
export const CHECKOUT = path.resolve(import.meta.dirname, '..');

/** The TypeScript builds installed in this checkout: 5.9 (with the compiler API) and 7 (native). */
export type TypeScriptBuild = 'typescript' | 'typescript-7';

/** Tool caches some packages write into node_modules: never shared with a project. */
const CACHES = /^\.(vite|vite-temp|cache|package-lock\.json)$/;

/**
 * Installs a generated project without network: `<project>/node_modules` becomes a real folder
 * holding a symbolic link to every entry of this checkout's node_modules (scoped folders whole),
 * `kopf-gen` → this checkout, and a real `.bin` folder whose links are those of the checkout plus
 * `kopf-gen`; `tsc` follows the project's `typescript` link (TypeScript 5.9 unless `typescript`
 * says otherwise, see `useTypeScript`). An existing node_modules is replaced.
 */
export function linkNodeModules(project: string, typescript: TypeScriptBuild = 'typescript'): void {
  const source = path.join(CHECKOUT, 'node_modules');
  const target = path.join(project, 'node_modules');
  fs.rmSync(target, { recursive: true, force: true });
  fs.mkdirSync(path.join(target, '.bin'), { recursive: true });
  for (const entry of fs.readdirSync(source)) {
    if (entry === '.bin' || CACHES.test(entry)) continue;
    fs.symlinkSync(path.join(source, entry), path.join(target, entry));
  }
  fs.symlinkSync(CHECKOUT, path.join(target, 'kopf-gen'));
  for (const entry of fs.readdirSync(path.join(source, '.bin'))) {
    fs.symlinkSync(path.join(source, '.bin', entry), path.join(target, '.bin', entry));
  }
  fs.symlinkSync(path.join('..', 'kopf-gen', 'bin', 'kopf-gen.js'), path.join(target, '.bin', 'kopf-gen'));
  useTypeScript(project, typescript);
}

/**
 * Points a linked project's `node_modules/typescript` at one of the checkout's TypeScript builds,
 * and its `.bin/tsc` (and `tsserver`, when the build has one) at that package's binaries — what
 * `npm install typescript@<version>` would leave behind.
 */
export function useTypeScript(project: string, build: TypeScriptBuild): void {
  const modules = path.join(project, 'node_modules');
  const link = path.join(modules, 'typescript');
  fs.rmSync(link, { force: true });
  fs.symlinkSync(path.join(CHECKOUT, 'node_modules', build), link);
  const manifest = JSON.parse(fs.readFileSync(path.join(link, 'package.json'), 'utf8')) as { bin?: Record<string, string> };
  for (const name of ['tsc', 'tsserver']) {
    const bin = path.join(modules, '.bin', name);
    fs.rmSync(bin, { force: true });
    const file = manifest.bin?.[name];
    if (file !== undefined) fs.symlinkSync(path.join('..', 'typescript', file), bin);
  }
}

/** Shells npm may run a script with: their children are the script's own processes. */
const SHELLS = new Set(['sh', 'dash', 'bash', 'zsh', 'ash', 'ksh']);

/** One row of the process table. */
interface ProcessRow {
  readonly pid: number;
  readonly ppid: number;
  /** The executable's name (`sh`, `node`, …). */
  readonly comm: string;
}

/** The process table: from /proc where there is one (Linux, even without procps), else from `ps`. */
function processTable(): ProcessRow[] {
  if (fs.existsSync('/proc/self/stat')) {
    return fs
      .readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .flatMap((entry) => {
        let stat: string;
        try {
          stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
        } catch {
          return []; // ended meanwhile
        }
        // "<pid> (<comm>) <state> <ppid> …"; the name may itself contain spaces and parentheses.
        const close = stat.lastIndexOf(')');
        const ppid = Number(stat.slice(close + 2).split(' ')[1]);
        return [{ pid: Number(entry), ppid, comm: stat.slice(stat.indexOf('(') + 1, close) }];
      });
  }
  return execFileSync('ps', ['-A', '-o', 'pid=,ppid=,comm='], { encoding: 'utf8' })
    .split('\n')
    .flatMap((line) => {
      const match = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
      return match ? [{ pid: Number(match[1]), ppid: Number(match[2]), comm: path.basename(match[3]!.trim()) }] : [];
    });
}

/**
 * The processes running an npm script's command, given npm's process id: npm's children, or, when
 * a child is the script shell, the shell's children. Signal these to stop a script gracefully:
 * npm forwards SIGTERM only to the shell, which dies without passing it on (dash), leaving the
 * program running; signalled directly, the program stops and npm exits with its exit code.
 * Empty when the script has ended.
 */
export function scriptProcesses(npmPid: number): number[] {
  const rows = processTable();
  const childrenOf = (pid: number): ProcessRow[] => rows.filter((row) => row.ppid === pid);
  return childrenOf(npmPid).flatMap((child) => (SHELLS.has(child.comm) ? childrenOf(child.pid) : [child]).map((row) => row.pid));
}

/** Whether kubectl runs; prints how to get it when it does not. */
function haveKubectl(): boolean {
  const probe = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
  if (probe.error === undefined && probe.status === 0) return true;
  const problem = probe.error ? 'none was found' : `\`kubectl version --client\` failed (exit ${probe.status}): ${probe.stderr.trim()}`;
  process.stderr.write(
    `\nThe demo creates an object with kubectl, which must be on PATH; ${problem}.\n` +
      'Install one with:  bash scripts/install-kubectl.sh   (or see https://kubernetes.io/docs/tasks/tools/)\n',
  );
  return false;
}

/** Prints a step heading. */
function say(text: string): void {
  process.stdout.write(`\n== ${text}\n`);
}

/** Resolves with the first match of `pattern` in a stream's lines, or rejects after `timeoutMs`. */
function waitForLine(lines: string[], pattern: RegExp, child: ChildProcess, timeoutMs: number): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const timer = setInterval(() => {
      for (const line of lines) {
        const match = pattern.exec(line);
        if (match) {
          clearInterval(timer);
          resolve(match);
          return;
        }
      }
      if (child.exitCode !== null || child.signalCode !== null || Date.now() - started > timeoutMs) {
        clearInterval(timer);
        reject(
          new Error(`the operator did not log ${pattern} (${child.exitCode !== null ? `it exited with ${child.exitCode}` : `within ${timeoutMs / 1000}s`})`),
        );
      }
    }, 50);
  });
}

/** Runs the demo; resolves to the process's exit code. */
async function demo(): Promise<number> {
  if (!haveKubectl()) return 1;
  const started = Date.now();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-demo-'));
  const project = path.join(work, 'kopf-example-operator');
  const crd = path.join(CHECKOUT, 'fixtures/crds/kopfexamples.yaml');
  const sample = path.join(CHECKOUT, 'fixtures/objects/kopf-example-1.yaml');
  let operator: ChildProcess | undefined;
  try {
    say(`kopf-gen init --crd fixtures/crds/kopfexamples.yaml --out ${project}`);
    const { main } = await import('../generator/cli.js');
    const initCode = await main(['init', '--crd', crd, '--out', project]);
    if (initCode !== 0) throw new Error(`kopf-gen init exited with ${initCode}`);

    say('npm install, offline: node_modules linked to this checkout (kopf-gen → this checkout)');
    linkNodeModules(project);

    say('npm run operator -- --dev-cluster   (the embedded devcluster, whatever cluster this machine has)');
    const lines: string[] = [];
    operator = spawn('npm', ['run', '--silent', 'operator', '--', '--dev-cluster'], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [operator.stdout!, operator.stderr!]) {
      let partial = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const parts = (partial + chunk).split('\n');
        partial = parts.pop()!;
        for (const line of parts) {
          lines.push(line);
          process.stdout.write(`  operator │ ${line}\n`);
        }
      });
    }
    const exited = new Promise<number | null>((resolve) => operator!.on('exit', (code) => resolve(code)));
    const [, kubeconfig] = await waitForLine(lines, /kubeconfig: (\S+);/, operator, 60_000);
    // Kopf's last start-up line; objects created earlier are handled too, this only keeps the story in order.
    await waitForLine(lines, /Initial authentication has finished/, operator, 20_000).catch(() => undefined);
    const kubectl = async (...args: string[]): Promise<string> =>
      (await promisify(execFile)('kubectl', ['--kubeconfig', kubeconfig!, '--cache-dir', path.join(work, 'kubectl-cache'), ...args], { encoding: 'utf8' }))
        .stdout;

    say('kubectl apply -f fixtures/objects/kopf-example-1.yaml');
    process.stdout.write(await kubectl('apply', '-f', sample));
    const annotation = 'kopf.dev/created-by';
    const deadline = Date.now() + 30_000;
    let object: { metadata?: { annotations?: Record<string, string> } } = {};
    while (object.metadata?.annotations?.[annotation] === undefined) {
      if (Date.now() > deadline) throw new Error(`the create handler did not set ${annotation} within 30s`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      object = JSON.parse(await kubectl('get', 'kopfexample', 'kopf-example-1', '-n', 'default', '-o', 'json')) as typeof object;
    }

    say('kubectl get kopfexamples');
    process.stdout.write(await kubectl('get', 'kopfexamples'));
    say(`kubectl get kopfexample kopf-example-1 -o yaml   (the create handler wrote ${annotation})`);
    process.stdout.write(await kubectl('get', 'kopfexample', 'kopf-example-1', '-o', 'yaml'));
    say(`the create handler's effect: metadata.annotations["${annotation}"] = ${JSON.stringify(object.metadata?.annotations?.[annotation])}`);

    say('stopping the operator (SIGTERM)');
    for (const pid of scriptProcesses(operator.pid!)) process.kill(pid, 'SIGTERM');
    const code = await exited;
    operator = undefined;
    if (code !== 0) throw new Error(`the operator exited with ${code}`);
    say(
      `done in ${((Date.now() - started) / 1000).toFixed(1)}s: the operator stopped cleanly (exit 0). ` +
        'Your own project: node bin/kopf-gen.js init --crd YOUR-CRD.yaml --out DIR (see README.md).',
    );
    return 0;
  } catch (error) {
    process.stderr.write(`\ndemo failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    if (operator?.pid !== undefined && operator.exitCode === null) {
      for (const pid of scriptProcesses(operator.pid)) process.kill(pid, 'SIGKILL');
      operator.kill('SIGKILL');
    }
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await demo();
}
