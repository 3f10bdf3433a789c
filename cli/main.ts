/**
 * The `kopf-gen` command line: a thin dispatcher that parses the first word and hands the rest
 * to the command, so that each command stays a function that tests and embedders can call
 * directly. Exit codes: 0 success, 1 failure, 2 usage error.
 *
 * `run`, `freeze`, `resume` and `devcluster` live in this package (the runtime and the emulator). `init`, `generate`
 * and `add` live in the generator package, loaded only when one of them runs (`generating.ts`),
 * so `kopf-gen run` never pays for the generator, and operators need not install it.
 */
import * as path from 'node:path';
import type { Output } from '@kopf-gen/generator/cli';
import { Command, CommanderError } from 'commander';
import * as versions from '../runtime/cogs/configs/versions.js';
import * as commandOutputs from '../runtime/kits/launching/output.js';
import type * as devclusterCommand from './devcluster.js';
import * as generating from './generating.js';

/** The generator's commands, with their one-line descriptions for `kopf-gen --help`. */
const GENERATOR_COMMANDS = [
  ['init', 'Create an operator project from CRDs: typed code, handler stubs, tests, RBAC and deployment manifests.'],
  ['generate', 'Regenerate src/generated/ from kopf-gen.json and crds/, add stubs for new kinds. Never modifies your code.'],
  ['add', 'Add CRDs to a project (copied into crds/), then regenerate.'],
] as const;

/**
 * Runs the command line; resolves to the exit code. `output` replaces the process's streams (tests).
 * Its type is the generator's (`import type`: erased at run time, so nothing of the generator is
 * loaded); without one, the commands print to the process's streams, and the generator's commands
 * use the generator's own.
 */
export async function main(argv: readonly string[], given?: Output): Promise<number> {
  const output = given ?? commandOutputs.processOutput;
  const program = new Command();
  program
    .name('kopf-gen')
    .description('Typed Kubernetes operators in TypeScript: generate a project from CRDs, run it with Kopf semantics, develop against an embedded API server.')
    .version(versions.VERSION, '-V, --version')
    .exitOverride()
    .configureOutput({ writeOut: output.out, writeErr: output.err })
    .showHelpAfterError();

  let exitCode = 0;
  for (const [name, description] of GENERATOR_COMMANDS) {
    program
      .command(name)
      .description(`${description} (from ${generating.GENERATOR_PACKAGE}; see kopf-gen ${name} --help)`)
      .argument('[args...]')
      .helpOption(false)
      .allowUnknownOption()
      .allowExcessArguments()
      .action(async (_args: string[], _opts: unknown, command: Command) => {
        const generator = await generating.loadGenerator(name);
        exitCode = await generator.main([name, ...command.args], given);
      });
  }

  program
    .command('devcluster')
    .description('Run the embedded Kubernetes API server in the foreground until interrupted.')
    .option('-p, --port <port>', 'listening port (0 = any free port)', '0')
    .option('--tls', 'serve HTTPS with a generated CA (default)', true)
    .option('--no-tls', 'serve plain HTTP')
    .option('--kubeconfig <path>', 'where to write the kubeconfig', path.join('.kopf-gen', 'kubeconfig'))
    .option('--crd <file...>', 'CRD manifests to load at start (YAML, several documents allowed)')
    .option('--rbac', 'enforce authentication and RBAC: stored Roles, ClusterRoles and bindings decide (the kubeconfig is the admin)')
    .option('--allow-host <host...>', 'with --no-tls, also answer requests for these host names (default: loopback names only, against DNS rebinding)')
    .option('--state-dir <dir>', "keep the cluster's objects in this folder: a later run on it serves them again")
    .option('--reset', 'with --state-dir, empty that folder first (start with no kept objects)')
    .option(
      '--dev-cluster-in-pod',
      'start even inside a Kubernetes pod (refused by default: a development server that trusts loopback must not run beside a real cluster)',
    )
    .action(async (opts: devclusterCommand.DevclusterCommandOptions) => {
      await (await import('./devcluster.js')).run(opts);
    });

  program
    .command('run')
    .description(
      'Run an operator (kopf-gen run --help for its options). With --dev-cluster it runs against the embedded ' +
        'devcluster (--dev-cluster=auto: only when no cluster is configured) with the CRDs of --crd <file> or ./crds.',
    )
    .argument('[args...]', 'operator files and options of the run command')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (_args: string[], _opts: unknown, command: Command) => {
      exitCode = await (await import('./running.js')).run(command.args, output);
    });

  for (const [name, description] of [
    ['freeze', 'Pause the operators that use a peering object for a while (kopf-gen freeze --help for its options).'],
    ['resume', 'Resume the operators paused by freeze (kopf-gen resume --help for its options).'],
  ] as const) {
    program
      .command(name)
      .description(description)
      .argument('[args...]')
      .helpOption(false)
      .allowUnknownOption()
      .allowExcessArguments()
      .action(async (_args: string[], _opts: unknown, command: Command) => {
        exitCode = await (await import('../runtime/kits/launching/commands.js')).touchCommand(name, command.args, { output });
      });
  }

  try {
    await program.parseAsync(['node', 'kopf-gen', ...argv]);
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 ? 0 : 2;
    }
    output.err(`kopf-gen: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
