/**
 * The operator under test as an opaque process: any shell command, started in its own process
 * group with its output going to a log file, measured from the outside through /proc (CPU time
 * and peak resident memory of the whole process tree, so wrappers such as `sh -c` or launchers
 * that fork are included), and stopped with SIGTERM (SIGKILL after a grace period). Nothing here
 * depends on the operator being written with kopf-gen.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';

/** CPU seconds (user + system, including reaped children) and memory of a process tree. */
export interface Usage {
  cpuSeconds: number;
  rssBytes: number;
  peakRssBytes: number;
  processes: number;
}

/** Raised when the operator process ends while the benchmark still needs it. */
export class OperatorExitedError extends Error {
  readonly code = 'OPERATOR_EXITED' as const;
  constructor(
    readonly exitCode: number | null,
    readonly logTail: string,
  ) {
    super(`the operator exited (code ${exitCode}); last output:\n${logTail}`);
  }
}

const TICKS = ((): number => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface Stat {
  pid: number;
  ppid: number;
  ticks: number;
}

function readStat(pid: number): Stat | undefined {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // After the command name: state, ppid, …, utime (11), stime (12), cutime (13), cstime (14).
    return { pid, ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) };
  } catch {
    return undefined;
  }
}

function statusKb(pid: number, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** The live processes of the tree rooted at `root` (the root first). */
function tree(root: number): Stat[] {
  const all: Stat[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = readStat(Number(entry));
    if (s) all.push(s);
  }
  const children = new Map<number, Stat[]>();
  for (const s of all) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s]);
  const rootStat = all.find((s) => s.pid === root);
  if (!rootStat) return [];
  const out: Stat[] = [rootStat];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i]!.pid) ?? []));
  return out;
}

/** CPU seconds, current RSS and each process's VmHWM (bytes) of the live tree rooted at `root`. */
export function measureTree(root: number): { cpuSeconds: number; rssBytes: number; processes: number; highWaterMarks: Map<number, number> } {
  const procs = tree(root);
  let ticks = 0;
  let rss = 0;
  const highWaterMarks = new Map<number, number>();
  for (const p of procs) {
    ticks += p.ticks;
    rss += statusKb(p.pid, 'VmRSS') * 1024;
    highWaterMarks.set(p.pid, statusKb(p.pid, 'VmHWM') * 1024);
  }
  return { cpuSeconds: ticks / TICKS, rssBytes: rss, processes: procs.length, highWaterMarks };
}

/** The processes of the live tree rooted at `root` whose executable is Node (`node`, `nodejs`, `node20`…). */
export function nodeProcesses(root: number): number[] {
  return tree(root)
    .map((p) => p.pid)
    .filter((pid) => {
      try {
        return /^node/.test(fs.readlinkSync(`/proc/${pid}/exe`).split('/').pop() ?? '');
      } catch {
        return false;
      }
    });
}

/** A running operator command. */
export class OperatorProcess {
  private readonly child: ChildProcess;
  /** The highest VmHWM seen per process of the tree (processes may exit before the end). */
  private readonly peaks = new Map<number, number>();
  private lastCpu = 0;
  private sampler: NodeJS.Timeout | undefined;

  /** Starts `command` with `sh -c`, extra environment `env`, and output appended to `logFile`. */
  constructor(
    readonly command: string,
    env: Record<string, string>,
    readonly logFile: string,
  ) {
    const fd = fs.openSync(logFile, 'a');
    this.child = spawn(command, { shell: true, detached: true, env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] });
    fs.closeSync(fd);
    this.sampler = setInterval(() => {
      this.usage();
    }, 1000);
    this.sampler.unref();
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Whether the process has ended; its exit code if so. */
  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** Throws `OperatorExitedError` if the operator is no longer running. */
  assertRunning(): void {
    if (this.exited) throw new OperatorExitedError(this.child.exitCode, this.logTail());
  }

  /** The last lines of the operator's output, each cut at 500 characters (a shutdown may log one line per object). */
  logTail(lines = 30): string {
    try {
      return fs
        .readFileSync(this.logFile, 'utf8')
        .split('\n')
        .slice(-lines - 1)
        .map((line) => (line.length > 500 ? `${line.slice(0, 500)} … (${line.length} characters)` : line))
        .join('\n');
    } catch {
      return '';
    }
  }

  /**
   * CPU seconds and memory of the process tree now. The peak is the sum over the tree's processes
   * of each one's VmHWM (its own high-water mark): exact for one process, an upper bound otherwise.
   */
  usage(): Usage {
    const now = measureTree(this.pid);
    for (const [pid, hwm] of now.highWaterMarks) if (hwm > (this.peaks.get(pid) ?? 0)) this.peaks.set(pid, hwm);
    // Once the tree is gone, keep the last figure rather than dropping to zero.
    if (now.processes) this.lastCpu = now.cpuSeconds;
    let peak = 0;
    for (const v of this.peaks.values()) peak += v;
    return { cpuSeconds: this.lastCpu, rssBytes: now.rssBytes, peakRssBytes: peak, processes: now.processes };
  }

  /**
   * Sends SIGKILL to the process group at once (no chance to store anything or release anything)
   * and resolves when the process has exited; the sampler stops. For crash tests.
   */
  async kill(): Promise<void> {
    clearInterval(this.sampler);
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    try {
      process.kill(-this.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
    await exited;
  }

  /** Sends SIGTERM to the process group, then SIGKILL after `graceMs`; resolves on exit. */
  async stop(graceMs = 10_000): Promise<void> {
    clearInterval(this.sampler);
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    const signal = (s: NodeJS.Signals): void => {
      try {
        process.kill(-this.pid, s);
      } catch {
        /* already gone */
      }
    };
    signal('SIGTERM');
    const timer = setTimeout(() => signal('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
}
