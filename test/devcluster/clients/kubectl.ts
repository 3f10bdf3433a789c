/**
 * kubectl as a test client of the devcluster (section 12 of the devcluster reference, C-120).
 *
 * Finds the two kubectl builds the suites compare — the legacy 1.20 unpacked by
 * scripts/install-kubectl.sh under `.tools/`, and the newest build next to the `kubectl` on PATH —
 * and runs them the way the devcluster reference's traffic table was recorded: a generated
 * kubeconfig, a fresh `--cache-dir` per invocation (D-WIRE-10) and an isolated HOME, each run
 * under its own timeout. A missing binary is never a reason to skip: `requireBinary` throws an
 * error that says how to install it.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { kubectlMissing } from '../../support/kubectl.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/** One kubectl build: its label for test titles and its path, or why it could not be found. */
export interface KubectlBinary {
  /** `kubectl 1.20.2`, `kubectl 1.33.1`, or `kubectl <which> (missing)`. */
  label: string;
  /** Absolute path of the executable, undefined when missing. */
  path: string | undefined;
  /** `major.minor.patch` reported by `kubectl version --client`, undefined when missing. */
  version: string | undefined;
  /** Why the binary is missing (undefined when found). */
  problem: string | undefined;
}

/** The result of one finished kubectl run. */
export interface KubectlResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** True when the run was killed because it exceeded its timeout. */
  timedOut: boolean;
}

/** Where to run kubectl: the kubeconfig file and a folder for fresh per-run cache folders. */
export interface KubectlTarget {
  kubeconfig: string;
  workDir: string;
  /**
   * One discovery cache shared by every run (one per test file, D-WIRE-10), for suites that run
   * kubectl many times; by default each run gets a fresh one.
   */
  cacheDir?: string;
}

export interface RunOptions {
  /** Kill the process after this long (default 20 s). */
  timeoutMs?: number;
  /** Text written to stdin (for `-f -`). */
  input?: string;
}

/** Returns the legacy (1.20) and the newest kubectl builds, in that order. */
export function findKubectls(): KubectlBinary[] {
  return [describeBinary('1.20', legacyPath()), describeBinary('newest', newestPath())];
}

/**
 * The kubectl builds from 1.`minMinor` on, beside the (symlink-resolved) `kubectl` on PATH as
 * `kubectl.1.NN`, oldest first; when there are none, the newest build alone, whose version the
 * caller then checks (so an older kubectl fails the suite rather than skipping it).
 */
export function findKubectlsFrom(minMinor: number): KubectlBinary[] {
  const real = kubectlOnPath();
  const dir = real ? path.dirname(real) : undefined;
  const found = dir ? versionedIn(dir).filter((e) => Number(e.minor) >= minMinor) : [];
  if (!dir || !found.length) return [describeBinary('newest', newestPath())];
  return found.reverse().map((e) => describeBinary(`1.${e.minor}`, path.join(dir, e.name)));
}

/** Throws an error whose first line names the install script when the binary is missing; returns its path otherwise. */
export function requireBinary(binary: KubectlBinary): string {
  if (!binary.path) throw kubectlMissing(`${binary.label}: ${binary.problem ?? 'not found'}`);
  return binary.path;
}

function legacyPath(): string | { problem: string } {
  const file = path.join(ROOT, '.tools/kubectl-1.20/usr/bin/kubectl');
  return isExecutable(file) ? file : { problem: `no executable at .tools/kubectl-1.20/usr/bin/kubectl` };
}

/** The highest `kubectl.1.NN` next to the (symlink-resolved) `kubectl` on PATH, else that `kubectl`. */
function newestPath(): string | { problem: string } {
  const real = kubectlOnPath();
  if (!real) return { problem: 'no kubectl on PATH' };
  const versioned = versionedIn(path.dirname(real));
  return versioned[0] ? path.join(path.dirname(real), versioned[0].name) : real;
}

/** The `kubectl` on PATH, symlinks resolved, or undefined without one. */
function kubectlOnPath(): string | undefined {
  const onPath = (process.env['PATH'] ?? '')
    .split(path.delimiter)
    .filter(Boolean)
    .map((dir) => path.join(dir, 'kubectl'))
    .find(isExecutable);
  return onPath ? fs.realpathSync(onPath) : undefined;
}

/** The `kubectl.1.NN` executables of a folder, newest first. */
function versionedIn(dir: string): { name: string; minor: string }[] {
  return fs
    .readdirSync(dir)
    .map((name) => ({ name, minor: /^kubectl\.1\.(\d+)$/.exec(name)?.[1] }))
    .filter((e): e is { name: string; minor: string } => e.minor !== undefined && isExecutable(path.join(dir, e.name)))
    .sort((a, b) => Number(b.minor) - Number(a.minor));
}

function describeBinary(which: string, found: string | { problem: string }): KubectlBinary {
  if (typeof found !== 'string') return { label: `kubectl ${which} (missing)`, path: undefined, version: undefined, problem: found.problem };
  try {
    const out = execFileSync(found, ['version', '--client'], { encoding: 'utf8', timeout: 15_000, stdio: ['ignore', 'pipe', 'pipe'] });
    const version = /GitVersion:"v(\d+\.\d+\.\d+)|Client Version: v(\d+\.\d+\.\d+)/.exec(out);
    const v = version?.[1] ?? version?.[2];
    if (!v) return { label: `kubectl ${which} (unknown version)`, path: undefined, version: undefined, problem: `cannot read the version of ${found}: ${out}` };
    return { label: `kubectl ${v}`, path: found, version: v, problem: undefined };
  } catch (err) {
    return {
      label: `kubectl ${which} (broken)`,
      path: undefined,
      version: undefined,
      problem: `${found} does not run: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Creates a temporary work folder for one suite. */
export function makeWorkDir(prefix = 'kubectl-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

function prepare(target: KubectlTarget, args: string[]): { argv: string[]; env: NodeJS.ProcessEnv } {
  const cacheDir = target.cacheDir ?? fs.mkdtempSync(path.join(target.workDir, 'cache-'));
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: target.workDir };
  delete env['KUBECONFIG'];
  return { argv: ['--kubeconfig', target.kubeconfig, '--cache-dir', cacheDir, ...args], env };
}

/** Runs kubectl to completion (or its timeout) with a fresh discovery cache. */
export function run(binaryPath: string, target: KubectlTarget, args: string[], opts: RunOptions = {}): Promise<KubectlResult> {
  const running = start(binaryPath, target, args);
  if (opts.input !== undefined) running.process.stdin?.end(opts.input);
  else running.process.stdin?.end();
  return running.finished(opts.timeoutMs ?? 20_000);
}

/** A kubectl process still running (for `get -w`, `wait`, `delete` that block). */
export interface Running {
  process: ChildProcess;
  /** Everything printed on stdout so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout contains a line matching `pattern`; rejects after `timeoutMs` or if the process exits first. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves when the process exits, killing it after `timeoutMs`. */
  finished(timeoutMs?: number): Promise<KubectlResult>;
  /** Kills the process and resolves when it has exited. */
  kill(): Promise<KubectlResult>;
}

/** Starts kubectl without waiting for it (stdin closed). */
export function start(binaryPath: string, target: KubectlTarget, args: string[]): Running {
  const { argv, env } = prepare(target, args);
  const child = spawn(binaryPath, argv, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let timedOut = false;
  const listeners = new Set<() => void>();
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    for (const l of listeners) l();
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    err += d;
  });
  const exited = new Promise<KubectlResult>((resolve) => {
    child.on('close', (code) => {
      for (const l of listeners) l();
      resolve({ code, stdout: out, stderr: err, timedOut });
    });
  });
  const finished = async (timeoutMs = 20_000): Promise<KubectlResult> => {
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    process: child,
    stdout: () => out,
    stderr: () => err,
    finished,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return finished(5_000);
    },
    waitForLine: (pattern, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          const line = out.split('\n').find((l) => pattern.test(l));
          if (line !== undefined) {
            done();
            resolve(line);
            return;
          }
          if (child.exitCode !== null || child.signalCode !== null) {
            done();
            reject(new Error(`kubectl exited (${child.exitCode ?? child.signalCode}) before printing ${pattern}; stdout: ${out} stderr: ${err}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms; stdout: ${out} stderr: ${err}`));
        }, timeoutMs);
        const done = (): void => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      }),
  };
}

/** Fails with kubectl's own output unless the run exited 0. */
export function expectSuccess(result: KubectlResult, what: string): KubectlResult {
  if (result.code !== 0) {
    throw new Error(`${what} exited ${result.timedOut ? 'by timeout' : result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  }
  return result;
}
