/**
 * The operator's commands as functions that own the process (R-CLI-1..3): `runCommand()` (`run
 * [FILES…] [-m MODULE…] [options]`), `touchCommand()` (`freeze`/`resume`) and `main(import.meta)`,
 * with which a compiled operator (`node dist/main.js -A`) runs without the `kopf-gen` binary.
 *
 * `run` parses the options, loads the operator's files and modules and runs the operator as the
 * owner of the process: SIGINT/SIGTERM stop it gracefully, and it is terminated forcibly if still
 * alive `settings.process.ultimateExitingTimeout` seconds after a signal (R-LIFE-3/4). The actual
 * work is shared with the test runner (`launching.ts`); the `kopf-gen` binary (`cli/`) dispatches
 * `run`, `freeze` and `resume` here, after providing a development cluster and a TypeScript loader
 * for `run` when asked.
 *
 * Exit codes: 0 after a graceful stop, 1 on a startup failure or a fatal error, 2 on usage errors.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as url from 'node:url';
import * as errors from '../../core/actions/errors.js';
import * as logging from '../../core/actions/logging.js';
import * as identities from '../../core/engines/identities.js';
import * as freezing from './freezing.js';
import * as importing from './importing.js';
import * as launching from './launching.js';
import * as outputs from './output.js';
import type * as running from '../../core/reactor/running.js';
import * as launchErrors from './errors.js';

export type { CommandOutput } from './output.js';
export type { RunArgs } from './launching.js';
export { parseRunArgs } from './launching.js';

/** Options of `runCommand()` beyond the command line. */
export interface RunCommandOptions {
  /** Where help, usage errors and the final error line go; default: the process's streams. */
  readonly output?: outputs.CommandOutput;
  /** The environment (`KOPF_RUN_<OPTION>`, `KOPF_RUN_NAMESPACE`, and the login's `KUBECONFIG`, `HOME`); default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Where relative paths and modules are resolved from; default `process.cwd()`. */
  readonly cwd?: string;
  /** The name in help texts; default `kopf-gen run`. */
  readonly name?: string;
  /** Extra operator options for embedders and tests (e.g. `settings`, `stopFlag`). */
  readonly operator?: running.OperatorOptions;
  /**
   * Sets V8's heap growing factor for an operator process (`footprint.tuneHeap`); default `true`.
   * Give `--heap-growing-percent` to `node` to choose another one.
   */
  readonly tuneHeap?: boolean;
}

/**
 * Runs `run` with the given arguments (without the word `run`) and resolves to the exit code.
 * Signal handlers are installed unless `operator.handleSignals` is `false`.
 *
 * @example
 * process.exitCode = await runCommand(['--standalone', '-A', 'operator.ts']);
 */
export async function runCommand(argv: readonly string[], options: RunCommandOptions = {}): Promise<number> {
  const output = options.output ?? outputs.processOutput;
  const name = options.name ?? 'kopf-gen run';
  let args: launching.RunArgs | null;
  try {
    args = launching.parseRunArgs(argv, { env: options.env, output, name });
  } catch (error) {
    if (error instanceof launchErrors.UsageError) return 2;
    throw error;
  }
  if (args === null) return 0;
  try {
    // The process is the operator's: signal handlers, and a heap policy for its footprint.
    await launching.launch(args, {
      handleSignals: true,
      ...(options.env !== undefined ? { env: options.env } : {}),
      ...options.operator,
      cwd: options.cwd,
      tuneHeap: options.tuneHeap ?? true,
    });
    return 0;
  } catch (error) {
    output.err(`${name}: ${errors.describeError(error)}\n`);
    return error instanceof launchErrors.UsageError ? 2 : 1;
  }
}

/** Options of `touchCommand()` beyond the command line. */
export interface TouchCommandOptions {
  /** Where help, usage errors, the results and the final error line go; default: the process's streams. */
  readonly output?: outputs.CommandOutput;
  /** The environment (`KOPF_FREEZE_<OPTION>`, `KOPF_RESUME_<OPTION>`, `POD_ID`, the login's); default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** The name in help texts; default `kopf-gen freeze` / `kopf-gen resume`. */
  readonly name?: string;
  /** Credentials to use instead of the built-in logins (tests, embedders). */
  readonly vault?: freezing.TouchOptions['vault'];
}

/**
 * Runs `freeze` or `resume` (R-PEER-9, R-CLI-2, R-CLI-602) with the given arguments (without the
 * command's word) and resolves to the exit code, as Kopf's: 0 when done — also when a peering
 * object does not exist or no namespace matches (a line on stderr says so) —, 1 when the cluster
 * has no peering CRD or on an API failure, 2 on usage errors. A line per peering object written goes
 * to stdout (not with `-q`); `-v` shows Kopf's `Keep-alive in …` lines.
 *
 * @example
 * process.exitCode = await touchCommand('freeze', ['--peering', 'default', '--lifetime', '600', '-A']);
 */
export async function touchCommand(which: 'freeze' | 'resume', argv: readonly string[], options: TouchCommandOptions = {}): Promise<number> {
  const output = options.output ?? outputs.processOutput;
  const name = options.name ?? `kopf-gen ${which}`;
  let args: freezing.TouchArgs | null;
  try {
    args = freezing.parseTouchArgs(which, argv, { env: options.env, output, name });
  } catch (error) {
    if (error instanceof launchErrors.UsageError) return 2;
    throw error;
  }
  if (args === null) return 0;
  if (args.logging !== undefined) logging.configure(args.logging);
  const identity = args.identity ?? identities.detectOwnId({ manual: true, env: options.env });
  try {
    const outcomes = await freezing.touchPeerings({ ...args, identity, vault: options.vault });
    if (outcomes.length === 0) output.err(`${name}: No existing namespace matches ${args.namespaces.join(', ')}: nothing to ${which}.\n`);
    for (const outcome of outcomes) {
      const line = freezing.describeOutcome(which, args, identity, outcome);
      if (outcome.result !== 'ok') output.err(`${name}: ${line}\n`);
      else if (!args.logging?.quiet) output.out(`${line}\n`);
    }
    return 0;
  } catch (error) {
    output.err(`${name}: ${errors.describeError(error)}\n`);
    return 1;
  }
}

/**
 * Whether a module (by its `import.meta.url`) is the process's entry point: the file given to
 * `node` (`node dist/main.js`, also without its extension, or a package folder with `node .`,
 * whose package.json `main` names the file) or to a loader such as `tsx`.
 */
export function isEntryPoint(moduleUrl: string, argv: readonly string[] = process.argv): boolean {
  const script = argv[1];
  if (!script || !moduleUrl.startsWith('file:')) return false;
  const modulePath = realpath(url.fileURLToPath(moduleUrl));
  if (modulePath === undefined) return false;
  let scriptPath = path.resolve(script);
  if (isDirectory(scriptPath)) scriptPath = path.resolve(scriptPath, packageMain(scriptPath) ?? 'index');
  return ['', '.js', '.mjs', '.cjs', '.ts', '.mts', '.cts'].some((ext) => realpath(scriptPath + ext) === modulePath);
}

function isDirectory(file: string): boolean {
  try {
    return fs.statSync(file).isDirectory();
  } catch {
    return false;
  }
}

function packageMain(folder: string): string | undefined {
  try {
    const main = (JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8')) as { main?: unknown }).main;
    return typeof main === 'string' ? main : undefined;
  } catch {
    return undefined;
  }
}

function realpath(file: string): string | undefined {
  try {
    return fs.realpathSync(file);
  } catch {
    return undefined;
  }
}

/**
 * Runs the operator from a project's entry module, as `node dist/main.js [options]` does in a
 * container: the handlers are registered by the module's imports, the options are `run`'s
 * (`-A`, `-n NS`, `--standalone`, … see `kopf-gen run --help`), SIGINT/SIGTERM stop it
 * gracefully, and the process's exit code is set from the outcome.
 *
 * When the module is not the entry point but is being loaded as an operator module —
 * `kopf-gen run src/main.ts`, or `KopfRunner` in a test — this resolves at once without running
 * anything: whoever loads it runs the operator. That is the equivalent of Python's
 * `if __name__ == '__main__'`.
 *
 * @throws EntryPointError when the module is neither: something else imported it (a process
 *   manager's wrapper script, another module), and nothing would run the operator.
 * @example
 * // src/main.ts
 * import { main } from 'kopf-gen/runtime';
 * import './generated/handlers.js';
 * await main(import.meta);
 */
export async function main(meta: { readonly url: string }, options: RunCommandOptions & { readonly argv?: readonly string[] } = {}): Promise<void> {
  const argv = options.argv ?? process.argv;
  if (!isEntryPoint(meta.url, argv)) {
    if (importing.isLoadingOperatorModules()) return;
    const file = meta.url.startsWith('file:') ? path.relative(options.cwd ?? process.cwd(), url.fileURLToPath(meta.url)) : meta.url;
    throw new launchErrors.EntryPointError(
      `main(import.meta) in ${file} runs the operator only when that file is the process's entry point ` +
        `(node ${file}), or does nothing when kopf-gen run or KopfRunner loads it; here the entry point is ${argv[1] ?? 'unknown'}, ` +
        'so nothing would run the operator. Start it with node, or load it with kopf-gen run, or call operator()/run() yourself.',
    );
  }
  const script = path.relative(options.cwd ?? process.cwd(), argv[1]!) || argv[1]!;
  process.exitCode = await runCommand(argv.slice(2), { name: `node ${script}`, ...options });
}
