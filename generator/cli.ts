/**
 * The generator's part of the `kopf-gen` command line — `init`, `generate` and `add` — which the
 * `kopf-gen` binary hands over to when one of them runs: a thin layer that parses flags and calls
 * the library functions, so that everything the commands do can also be done, and tested, by
 * calling the library. Exit codes: 0 success, 1 failure, 2 usage error.
 */
import * as fs from 'node:fs';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import * as origins from './origins.js';
import * as projects from './projects.js';
// Commands are imported when they run, so `--help` and usage errors stay fast.
import type * as addCommand from './commands/add.js';
import type * as generateCommand from './commands/generate.js';
import type * as initCommand from './commands/init.js';
import * as outputs from './commands/output.js';

/** Where the commands print; the `kopf-gen` binary hands its own to `main()` (tests), by type only. */
export type { Output } from './commands/output.js';

/**
 * Runs the command line; resolves to the exit code. `output` replaces the process's streams (tests).
 */
export async function main(argv: readonly string[], output: outputs.Output = outputs.processOutput): Promise<number> {
  const program = new Command();
  program
    .name('kopf-gen')
    .description('Typed Kubernetes operators in TypeScript: generate a project from CRDs, run it with Kopf semantics, develop against an embedded API server.')
    .version(origins.GENERATOR.version, '-V, --version')
    .exitOverride()
    .configureOutput({ writeOut: output.out, writeErr: output.err })
    .showHelpAfterError();

  const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
  const maxInput = ['--max-input-mib <n>', 'refuse CRD files larger than this many MiB (default: 16)', mebibytes] as const;
  program
    .command('init')
    .description('Create an operator project from CRDs: typed code, handler stubs, tests, RBAC and deployment manifests.')
    .version(origins.GENERATOR.version, '-V, --version')
    .requiredOption(
      '--crd <file>',
      'a CRD manifest (YAML or JSON, several documents or a List allowed, as kubectl prints them), a folder of them, or "-" for stdin; repeatable',
      collect,
    )
    .option('--out <dir>', 'the project directory to create (default: <crd file name>-operator)')
    .option('--name <name>', 'the npm package name (default: the directory name)')
    .option('-n, --namespace <name>', 'serve only this namespace (an exact name); repeatable; default: all namespaces', collect)
    .option('--force', 'write into a non-empty directory, overwriting the generated files')
    .option('--webhooks', 'add a validating admission handler to each stub, with the webhook manifests that serve it')
    .option(
      '--handlers <kind>',
      'the handler stubs: "cause" (create/update/delete/resume handlers, the default) or "reconcile" (one on.reconcile handler per kind, owning a Deployment); recorded in kopf-gen.json for kinds added later',
      handlerStyle,
    )
    .option(...maxInput)
    .option(
      '--lease <name>',
      "leader election on this Lease for hot-standby replicas: --lease in the Deployment, and the RBAC for that Lease in the operator's namespace",
    )
    .action(async (opts: initCommand.InitCommandOptions) => {
      await (await import('./commands/init.js')).run(opts, output);
    });

  program
    .command('generate')
    .description('Regenerate src/generated/ from kopf-gen.json and crds/, add stubs for new kinds, and summarise what changed. Never modifies your code.')
    .version(origins.GENERATOR.version, '-V, --version')
    .option('--project <dir>', 'the project directory', '.')
    .option(...maxInput)
    .action(async (opts: generateCommand.GenerateCommandOptions) => {
      await (await import('./commands/generate.js')).run(opts, output);
    });

  program
    .command('add')
    .description('Add CRDs to a project (copied into crds/), then regenerate.')
    .version(origins.GENERATOR.version, '-V, --version')
    .requiredOption('--crd <file>', 'a CRD manifest (a List allowed), a folder of them, or "-" for stdin; repeatable', collect)
    .option('--project <dir>', 'the project directory', '.')
    .option(...maxInput)
    .action(async (opts: addCommand.AddCommandOptions) => {
      await (await import('./commands/add.js')).run(opts, output);
    });

  try {
    await program.parseAsync(['node', 'kopf-gen', ...argv]);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 ? 0 : 2;
    }
    output.err(`kopf-gen: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

/** `--max-input-mib`: a positive number of MiB, as bytes. */
function mebibytes(value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new InvalidArgumentError('expected a positive number of MiB');
  return Math.floor(parsed * 1024 * 1024);
}

/** `--handlers`: one of the kinds of handler stubs (the message names the choices). */
function handlerStyle(value: string): string {
  try {
    return projects.checkHandlerStyle(value);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
}

/** Whether a path names an existing file (used by commands to report missing inputs clearly). */
export function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}
