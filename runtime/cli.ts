/**
 * The `run` command of the command line (R-CLI-1..3): `kopf-gen run [FILES…] [-m MODULE…] [options]`.
 *
 * It parses the options, loads the operator's files and modules and runs the operator as the
 * owner of the process: SIGINT/SIGTERM stop it gracefully, and it is terminated forcibly if still
 * alive `settings.process.ultimateExitingTimeout` seconds after a signal (R-LIFE-3/4). The actual
 * work is shared with the test runner (`core/reactor/launching`); the package's `kopf-gen` binary
 * (the generator's CLI) dispatches `run` here, after providing a development cluster when no
 * cluster is configured.
 *
 * Exit codes: 0 after a graceful stop, 1 on a startup failure or a fatal error, 2 on usage errors.
 */

import * as errors from './core/actions/errors.js';
import * as launching from './core/reactor/launching.js';
import type * as running from './core/reactor/running.js';

export type { CommandOutput, RunArgs } from './core/reactor/launching.js';
export { UsageError, parseRunArgs } from './core/reactor/launching.js';

/** Options of `runCommand()` beyond the command line. */
export interface RunCommandOptions {
  /** Where help, usage errors and the final error line go; default: the process's streams. */
  readonly output?: launching.CommandOutput;
  /** The environment (`KOPF_RUN_NAMESPACE`, `KOPF_RUN_PEERING`); default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Where relative paths and modules are resolved from; default `process.cwd()`. */
  readonly cwd?: string;
  /** The name in help texts; default `kopf-gen run`. */
  readonly name?: string;
  /** Extra operator options for embedders and tests (e.g. `settings`, `stopFlag`). */
  readonly operator?: running.OperatorOptions;
}

/**
 * Runs `run` with the given arguments (without the word `run`) and resolves to the exit code.
 * Signal handlers are installed unless `operator.handleSignals` is `false`.
 *
 * @example
 * process.exitCode = await runCommand(['--standalone', '-A', 'operator.ts']);
 */
export async function runCommand(argv: readonly string[], options: RunCommandOptions = {}): Promise<number> {
  const output = options.output ?? launching.processOutput;
  const name = options.name ?? 'kopf-gen run';
  let args: launching.RunArgs | null;
  try {
    args = launching.parseRunArgs(argv, { env: options.env, output, name });
  } catch (error) {
    if (error instanceof launching.UsageError) return 2;
    throw error;
  }
  if (args === null) return 0;
  try {
    await launching.launch(args, { handleSignals: true, ...options.operator, cwd: options.cwd });
    return 0;
  } catch (error) {
    output.err(`${name}: ${errors.describeError(error)}\n`);
    return error instanceof launching.UsageError ? 2 : 1;
  }
}
