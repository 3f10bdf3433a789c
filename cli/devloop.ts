/**
 * The dev loop of `kopf-gen run --watch` (the default when the devcluster is used, so what a
 * generated project's `npm run operator` does): the launcher keeps the devcluster in its own
 * process and runs the operator in a child process — `kopf-gen run` without the development
 * options, with `KUBECONFIG` pointing at the devcluster — and restarts that child when a source
 * file is saved. The devcluster, and every object in it, outlives the restarts.
 *
 * At start, the operator starts at once (as `kopf-gen run` would) while the checker warms up in its
 * own thread (`checkthread.ts`), printing what it finds. On a save: the sources are checked first
 * (`checking.ts`); a mistake is one line and the running operator is left alone until the next good
 * save. Then the old operator stops gracefully
 * (SIGTERM, and the launcher waits for it to exit: never two operators at once), and a child
 * started ahead in standby (`standby.ts`) is told to go, so that a restart costs little more than
 * loading the changed files. A changed CRD file under watch is loaded again into the devcluster.
 *
 * Children run in their own process group, so that a terminal's Ctrl-C reaches the launcher only;
 * it passes the signal on to the operator, waits for its graceful stop, and then stops itself.
 */
import * as child from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as outputs from '../runtime/kits/launching/output.js';
import * as checkthread from './checkthread.js';
import * as standby from './standby.js';
import * as watching from './watching.js';

/** The changes that restart the operator: code and JSON files. */
const RELEVANT = /\.(ts|mts|cts|tsx|js|mjs|cjs|jsx|json)$/;

/** What the dev loop does with the devcluster's CRDs; absent without a devcluster. */
export interface DevLoopCrds {
  /** The CRD files to watch (absolute), and the folder they came from, if any (new files there count too). */
  readonly files: readonly string[];
  readonly folder?: string;
  /** Loads a changed file into the devcluster again; resolves to a line saying what was done. */
  reload(file: string): Promise<string>;
}

/** Options of `runDevLoop()`. */
export interface DevLoopOptions {
  readonly cwd: string;
  /** The operator's arguments for `kopf-gen run` (without the development options). */
  readonly args: readonly string[];
  /** The operator files among them (what the checker starts from). */
  readonly entries: readonly string[];
  /** The operator's environment (with `KOPF_GEN_…` and `KUBECONFIG` as wanted). */
  readonly env: NodeJS.ProcessEnv;
  readonly output: outputs.CommandOutput;
  readonly crds?: DevLoopCrds;
  /** Stops the loop as SIGTERM does (embedders and tests). */
  readonly stopFlag?: AbortSignal;
  /** Whether SIGINT/SIGTERM stop the loop (default true). */
  readonly handleSignals?: boolean;
  /** How to start `kopf-gen` (default: this Node and kopf-gen's binary). */
  readonly command?: readonly string[];
}

/** kopf-gen's binary, from the sources (`cli/`) or from the compiled `dist/cli/`. */
function binary(): string {
  const candidates = [path.resolve(import.meta.dirname, '../bin/kopf-gen.js'), path.resolve(import.meta.dirname, '../../bin/kopf-gen.js')];
  return candidates.find((file) => fs.existsSync(file)) ?? candidates[0]!;
}

/** One `kopf-gen run` child: in standby, then running the operator. */
class OperatorChild {
  readonly ready: Promise<boolean>;
  readonly exited: Promise<number>;
  stopping = false;
  private readonly proc: child.ChildProcess;
  private done = false;

  constructor(command: readonly string[], args: readonly string[], cwd: string, env: NodeJS.ProcessEnv) {
    this.proc = child.spawn(command[0]!, [...command.slice(1), 'run', '--no-watch', ...args], {
      cwd,
      env: { ...env, [standby.STANDBY_ENV]: '1' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      detached: true,
    });
    this.exited = new Promise((resolve) => {
      this.proc.on('exit', (code) => {
        this.done = true;
        resolve(code ?? 1);
      });
      this.proc.on('error', () => {
        this.done = true;
        resolve(1);
      });
    });
    this.ready = Promise.race([
      new Promise<boolean>((resolve) => this.proc.on('message', (message: standby.StandbyMessage) => resolve(message.kind === 'ready'))),
      this.exited.then(() => false),
    ]);
  }

  go(): void {
    this.proc.send({ kind: 'go' } satisfies standby.StandbyMessage);
    // The operator's exit is awaited explicitly; the channel must not keep the launcher alive.
    this.proc.channel?.unref();
  }

  /** Stops it gracefully by the signal and resolves to its exit code. */
  stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number> {
    this.stopping = true;
    if (!this.done) this.proc.kill(signal);
    return this.exited;
  }

  /** Ends a child in standby (it has not started an operator). */
  discard(): void {
    this.stopping = true;
    if (!this.done) this.proc.kill('SIGKILL');
  }
}

/**
 * Runs the dev loop until SIGINT/SIGTERM (or the stop flag), and resolves to the exit code: that
 * of the operator stopped at the end (0 after a graceful stop), or, when none was running then, 1
 * if the last start failed and 0 otherwise.
 */
export async function runDevLoop(options: DevLoopOptions): Promise<number> {
  return await new DevLoop(options).run();
}

class DevLoop {
  private readonly command: readonly string[];
  private checker: checkthread.AsyncChecker;
  private readonly watcher: watching.SourceWatcher;
  private operator: OperatorChild | undefined;
  private standby: OperatorChild | undefined;
  private pending = new Set<string>();
  private working: Promise<void> | undefined;
  private closing = false;
  private failed = false;

  constructor(private readonly options: DevLoopOptions) {
    this.command = options.command ?? [process.execPath, binary()];
    this.checker = checkthread.startChecker(options.cwd, options.entries);
    if (this.checker.kind === 'syntax') {
      options.output.err(
        'kopf-gen run: the project has no typescript: saved files are checked for syntax only before a restart (npm install --save-dev typescript checks types too)\n',
      );
    }
    this.watcher = new watching.SourceWatcher((paths) => this.changed(paths));
  }

  async run(): Promise<number> {
    const signal = this.waitForStop();
    this.standby = this.spawn();
    this.watchTargets();
    // The first check warms the checker up; the operator starts meanwhile, as without the loop.
    this.working = Promise.all([this.start(), this.warmUp()])
      .then(() => undefined)
      .finally(() => {
        this.working = undefined;
        if (this.pending.size > 0) this.changed([]);
      });
    const received = await signal.promise;
    this.closing = true;
    this.watcher.close();
    this.standby?.discard();
    await this.working;
    this.standby?.discard();
    void this.checker.close();
    const operator = this.operator;
    signal.forward = (name) => void operator?.stop(name);
    const code = operator ? await operator.stop(received) : this.failed ? 1 : 0;
    signal.uninstall();
    return code;
  }

  /** Resolves with the signal that stops the loop; later signals go to `forward`. */
  private waitForStop(): { promise: Promise<NodeJS.Signals>; forward: (name: NodeJS.Signals) => void; uninstall: () => void } {
    let resolve!: (name: NodeJS.Signals) => void;
    let stopped = false;
    const state = {
      promise: new Promise<NodeJS.Signals>((r) => {
        resolve = r;
      }),
      forward: (_name: NodeJS.Signals): void => undefined,
      uninstall: (): void => undefined,
    };
    const onSignal = (name: NodeJS.Signals): void => {
      if (stopped) state.forward(name);
      stopped = true;
      resolve(name);
    };
    if (this.options.handleSignals ?? true) {
      const listeners = (['SIGINT', 'SIGTERM'] as const).map((name) => [name, () => onSignal(name)] as const);
      for (const [name, listener] of listeners) process.on(name, listener);
      state.uninstall = () => {
        for (const [name, listener] of listeners) process.off(name, listener);
      };
    }
    this.options.stopFlag?.addEventListener('abort', () => onSignal('SIGTERM'), { once: true });
    if (this.options.stopFlag?.aborted) onSignal('SIGTERM');
    return state;
  }

  private spawn(): OperatorChild {
    return new OperatorChild(this.command, this.options.args, this.options.cwd, this.options.env);
  }

  /** Checks everything once (the checker's warm-up) and says what is wrong, if anything. */
  private async warmUp(): Promise<void> {
    const result = await this.checker.check();
    if (this.closing) return;
    this.watchTargets();
    if (!result.ok) this.options.output.err(`${result.line}\n`);
    const checked = this.checker.kind === 'typescript' ? 'type-checked' : 'checked for syntax';
    this.options.output.err(`kopf-gen run: watching ${this.watcher.summary(this.options.cwd)}: a save is ${checked}, then the operator restarts\n`);
  }

  /** Starts the operator in the standby child (or a fresh one if that one died). */
  private async start(): Promise<void> {
    let next = this.standby ?? this.spawn();
    this.standby = undefined;
    if (!(await next.ready)) next = this.spawn();
    if (!(await next.ready) || this.closing) {
      if (!this.closing) {
        this.failed = true;
        this.options.output.err(`kopf-gen run: the operator could not start (exit code ${await next.exited}); waiting for a change to try again\n`);
      }
      next.discard();
      return;
    }
    this.operator = next;
    this.failed = false;
    next.go();
    void next.exited.then((code) => {
      if (next.stopping || this.operator !== next) return;
      this.operator = undefined;
      this.failed = code !== 0;
      this.options.output.err(`kopf-gen run: the operator exited with code ${code}; waiting for a change to restart it\n`);
    });
    this.standby = this.spawn();
  }

  private changed(paths: readonly string[]): void {
    for (const file of paths) this.pending.add(file);
    this.working ??= this.drain().finally(() => {
      this.working = undefined;
    });
  }

  private async drain(): Promise<void> {
    while (this.pending.size > 0 && !this.closing) {
      const paths = [...this.pending];
      this.pending.clear();
      await this.handle(paths);
    }
  }

  private async handle(paths: readonly string[]): Promise<void> {
    const { output, cwd } = this.options;
    const crds = paths.filter((file) => this.isCrd(file) && fs.existsSync(file));
    for (const file of crds) {
      try {
        output.err(`kopf-gen run: ${await this.options.crds!.reload(file)}\n`);
      } catch (error) {
        output.err(`kopf-gen run: ${path.relative(cwd, file) || file}: ${(error as Error).message}\n`);
      }
    }
    const code = paths.filter((file) => !this.isCrd(file) && RELEVANT.test(file));
    if (code.length === 0) return;
    if (code.some((file) => path.basename(file) === 'tsconfig.json')) {
      void this.checker.close();
      this.checker = checkthread.startChecker(cwd, this.options.entries);
    }
    const result = await this.checker.check();
    if (this.closing) return;
    this.watchTargets();
    if (!result.ok) {
      output.err(`${result.line}\n`);
      return;
    }
    const names = code.map((file) => path.relative(cwd, file) || file);
    output.err(`kopf-gen run: ${names[0]}${names.length > 1 ? ` and ${names.length - 1} more` : ''} changed; restarting the operator\n`);
    const old = this.operator;
    this.operator = undefined;
    if (old) await old.stop('SIGTERM');
    if (!this.closing) await this.start();
  }

  private isCrd(file: string): boolean {
    const crds = this.options.crds;
    if (!crds) return false;
    if (crds.files.includes(file)) return true;
    return crds.folder !== undefined && path.dirname(file) === crds.folder && /\.(ya?ml|json)$/.test(file);
  }

  private watchTargets(): void {
    const { cwd, entries, crds } = this.options;
    this.watcher.update({
      trees: [path.join(cwd, 'src'), ...(crds?.folder ? [crds.folder] : [])],
      files: [
        ...entries.map((entry) => path.resolve(cwd, entry)),
        ...this.checker.files(),
        ...(crds?.files ?? []),
        path.join(cwd, 'tsconfig.json'),
        path.join(cwd, 'package.json'),
      ],
    });
  }
}
