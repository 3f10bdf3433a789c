/**
 * The operator runner for tests (R-TEST-1; Kopf: `kopf.testing.KopfRunner`): runs the `run` command
 * (`launching.ts`) inside the test process, against the cluster given explicitly (`kubeconfig`,
 * `connection`, or `env: { KUBECONFIG }`) or else whatever is configured, captures the log output,
 * and stops the operator through its stop flag. No OS signal handlers are installed (R-LIFE-6).
 *
 * It works in a project's own tests with no configuration (R-TEST-101…103): TypeScript files load
 * whatever the test runner, every runner gets a fresh registry with every handler its files reach,
 * and `start()` resolves only with a running operator — a failure before that rejects it.
 *
 * Users get it, with the emulator (`DevCluster`) and the virtual clock, from `kopf-gen/testing`
 * (also from `kopf-gen/runtime`):
 *
 * ```ts
 * await using runner = await new KopfRunner(['run', '-A', '--standalone', 'src/operator.ts']).start();
 * // … create objects, wait for effects …
 * await runner.stop();
 * expect(runner.output).toContain("Handler 'create_fn' succeeded.");
 * ```
 *
 * Caveats: log output is captured through the process-wide log sink, so run one runner at a time;
 * the command line's logging options reconfigure the process-wide logging. Text written directly to
 * stdout/stderr (e.g. `console.log`) is not captured — use the handlers' `logger`.
 */

import * as clocks from '../../cogs/aio/clocks.js';
import type * as connections from '../../cogs/client/connections.js';
import * as credentials from '../../cogs/client/credentials.js';
import type * as settings from '../../cogs/configs/settings.js';
import * as errors from '../../core/actions/errors.js';
import * as logging from '../../core/actions/logging.js';
import * as registries from '../../core/intents/registry.js';
import * as launching from './launching.js';
import type * as outputs from './output.js';
import { RunnerTimeoutError } from './errors.js';
import * as launchErrors from './errors.js';

/**
 * Options of the runner (R-TEST-1). The connection options say which cluster the operator logs in
 * to: `kubeconfig` (e.g. a devcluster's `writeKubeconfig()` file), `kubeconfigContext`,
 * `connection`, or `env` — its `KUBECONFIG` and `HOME` are what the built-in logins read.
 */
export interface KopfRunnerOptions extends Pick<connections.ConnectionOptions, 'kubeconfig' | 'kubeconfigContext' | 'connection'> {
  /** The operator's settings (e.g. short backoffs for tests). */
  readonly settings?: settings.OperatorSettings;
  /** The registry to load the files into and run; default: a new one for this runner (R-TEST-102). */
  readonly registry?: registries.OperatorRegistry;
  /** Seconds to wait for the start (readiness) and for the stop; `null`/absent: no limit. */
  readonly timeout?: number | null;
  /** Re-throw the operator's failure from `stop()`. Default `true`. */
  readonly reraise?: boolean;
  /**
   * Environment of the command line (`KOPF_RUN_NAMESPACE`…) and of the operator's built-in login
   * (`KUBECONFIG`, `HOME`); default `process.env`.
   */
  readonly env?: NodeJS.ProcessEnv;
  /** Where relative paths are resolved from; default `process.cwd()`. */
  readonly cwd?: string;
  /**
   * The operator's clock; default: the real one. With a `VirtualClock`, timers, daemons, retries
   * and delays run on virtual time that the test moves (`await clock.advance(600_000)`), while the
   * operator still talks to the cluster over HTTP. `stop()` moves a virtual clock by itself: the
   * stop's own waits (daemons' `cancellationBackoff`/`cancellationTimeout`, the 5-second limits of
   * hung tasks) are on the operator's clock, too.
   */
  readonly clock?: clocks.Clock;
}

type Outcome = { readonly exitCode: number; readonly exception: unknown };

/**
 * Runs an operator in the test process, as `kopf run …` would, until `stop()`.
 *
 * @example
 * const runner = new KopfRunner(['run', '-A', '--standalone', 'operator.ts'], { settings });
 * await runner.start();
 * await runner.stop();
 * runner.exitCode // 0
 */
export class KopfRunner {
  /** Everything the operator logged (formatted lines, one per line), also after a failure. */
  output = '';
  /**
   * 0 after a graceful stop, 1 after a failure, 2 after a usage error; `null` while running. Set
   * as soon as the operator has ended, also by itself (e.g. a failed login) before `stop()`.
   */
  exitCode: number | null = null;
  /** The operator's failure, if any (set as soon as it has ended). */
  exception: unknown = null;
  /**
   * The registry the operator's files registered their handlers into and the operator runs: the
   * `registry` option, or else a new one of this runner's own (R-TEST-102).
   */
  readonly registry: registries.OperatorRegistry;

  private readonly args: readonly string[];
  private readonly options: KopfRunnerOptions;
  private readonly stopper = new AbortController();
  private done: Promise<Outcome> | undefined;
  private stopped = false;
  private restoreSink: (() => void) | undefined;

  /** @param args the command line, e.g. `['run', '-A', 'operator.ts']` (the leading `run` is optional). */
  constructor(args: readonly string[], options: KopfRunnerOptions = {}) {
    this.args = args[0] === 'run' ? args.slice(1) : [...args];
    this.options = options;
    this.registry = options.registry ?? new registries.OperatorRegistry();
  }

  /**
   * Starts the operator; resolves once its startup activity has succeeded and it has logged in
   * (R-TEST-103). If the operator ends before that — a usage error, a file that is missing or fails
   * to load, a failed startup handler or login — it rejects with that failure, whatever `reraise`
   * says (which is about failures after the start, re-thrown by `stop()`); `exitCode`, `exception`
   * and `output` are then final, and the runner needs no `stop()`.
   *
   * @throws UsageError, ModuleLoadError, LoginError, ActivityError, … as the operator failed;
   *   RunnerTimeoutError if it neither started nor ended within `timeout`.
   */
  async start(): Promise<this> {
    if (this.done !== undefined) throw new TypeError('The runner is already started.');
    this.restoreSink = logging.setLogSink((line) => {
      this.output += `${line}\n`;
    });
    const output: outputs.CommandOutput = {
      out: (text) => {
        this.output += text;
      },
      err: (text) => {
        this.output += text;
      },
    };
    let markReady = (): void => undefined;
    const ready = new Promise<void>((resolve) => {
      markReady = resolve;
    });
    // The runner's own vault: ready means started *and* logged in, so that a login that finds no
    // credentials ends the start with the operator's failure, not a later test step.
    const vault = new credentials.Vault({ clock: this.options.clock });
    this.done = this.launch(output, markReady, vault).then((outcome) => {
      this.exitCode = outcome.exitCode;
      this.exception = outcome.exception;
      return outcome;
    });
    const ended = new AbortController();
    void this.done.finally(() => ended.abort());
    const loggedIn = ready.then(() => vault.readiness.waitFor(true, ended.signal)).catch(() => undefined);
    await this.within(Promise.race([loggedIn, this.done]), 'start');
    if (this.exitCode !== null && this.exception !== null) {
      this.stopped = true;
      this.restoreSink?.();
      this.restoreSink = undefined;
      throw this.exception;
    }
    return this;
  }

  private async launch(output: outputs.CommandOutput, ready: () => void, vault: credentials.Vault): Promise<Outcome> {
    try {
      const args = launching.parseRunArgs(this.args, { env: this.options.env, output, name: 'kopf run' });
      if (args !== null) {
        const { kubeconfig, kubeconfigContext, connection, env } = this.options;
        await launching.launch(args, {
          registry: this.registry,
          settings: this.options.settings,
          cwd: this.options.cwd,
          stopFlag: this.stopper.signal,
          readyFlag: ready,
          handleSignals: false,
          vault,
          kubeconfig,
          kubeconfigContext,
          connection,
          env,
          ...(this.options.clock ? { clock: this.options.clock } : {}),
        });
      }
      return { exitCode: 0, exception: null };
    } catch (error) {
      this.output += `${errors.describeError(error)}\n`;
      return { exitCode: error instanceof launchErrors.UsageError ? 2 : 1, exception: error };
    }
  }

  /**
   * Raises the stop flag and waits for the operator to stop; then `exitCode`, `exception` and
   * `output` are final. After a `start()` that rejected, it only re-throws that failure (with
   * `reraise`).
   *
   * @throws the operator's failure if `reraise` (default); RunnerTimeoutError if it did not stop in time
   *   (it goes on stopping; call `stop()` again to wait more).
   */
  async stop(): Promise<void> {
    if (this.done === undefined) throw new TypeError('The runner is not started.');
    this.stopper.abort();
    const moving = new AbortController();
    const clock = this.options.clock;
    const mover = clock instanceof clocks.VirtualClock ? keepMoving(clock, moving.signal) : Promise.resolve();
    let outcome: Outcome;
    try {
      outcome = await this.within(this.done, 'stop'); // on timeout, output is still captured
    } finally {
      moving.abort();
      await mover;
    }
    this.stopped = true;
    this.restoreSink?.();
    this.restoreSink = undefined;
    if (outcome.exception !== null && (this.options.reraise ?? true)) throw outcome.exception;
  }

  /** `await using runner = …`: stops the operator at the end of the block. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.done !== undefined && !this.stopped) await this.stop();
  }

  private async within<T>(promise: Promise<T>, what: 'start' | 'stop'): Promise<T> {
    const timeout = this.options.timeout;
    if (timeout === null || timeout === undefined) return await promise;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new RunnerTimeoutError(`The operator did not ${what} within ${timeout} seconds.`)), timeout * 1000);
    });
    try {
      return await Promise.race([promise, expired]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Moves a virtual clock from one pending sleep to the next until `signal` aborts, with a short real
 * pause between the steps for the operator's real I/O: while the operator stops, nothing else would
 * move the time its stop stages wait for.
 */
async function keepMoving(clock: clocks.VirtualClock, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    await new Promise<void>((resolve) => {
      setTimeout(resolve, 5);
    });
    const next = clock.nextDue();
    if (!signal.aborted && next !== undefined) await clock.advanceTo(next);
  }
}
