/**
 * The `kopf-gen` command line: a thin layer that parses flags and calls the library functions
 * (STYLE item 24). Exit codes: 0 success, 1 failure, 2 usage error.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, CommanderError } from 'commander';
import pkg from '../package.json' with { type: 'json' };
// Commands are imported when they run: `kopf-gen run` must not pay for loading the generator.
import type * as addCommand from './commands/add.js';
import type * as devclusterCommand from './commands/devcluster.js';
import type * as generateCommand from './commands/generate.js';
import type * as initCommand from './commands/init.js';
import * as outputs from './commands/output.js';

/**
 * Runs the command line; resolves to the exit code. `output` replaces the process's streams (tests).
 */
export async function main(argv: readonly string[], output: outputs.Output = outputs.processOutput): Promise<number> {
  const program = new Command();
  program
    .name('kopf-gen')
    .description('Typed Kubernetes operators in TypeScript: generate a project from CRDs, run it with Kopf semantics, develop against an embedded API server.')
    .version(pkg.version, '-V, --version')
    .exitOverride()
    .configureOutput({ writeOut: output.out, writeErr: output.err })
    .showHelpAfterError();

  const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
  program
    .command('init')
    .description('Create an operator project from CRDs: typed code, handler stubs, tests, RBAC and deployment manifests.')
    .version(pkg.version, '-V, --version')
    .requiredOption('--crd <file>', 'a CRD manifest (YAML, several documents allowed; "-" reads stdin); repeatable', collect)
    .option('--out <dir>', 'the project directory to create (default: <crd file name>-operator)')
    .option('--name <name>', 'the npm package name (default: the directory name)')
    .option('-n, --namespace <name>', 'serve only this namespace (an exact name); repeatable; default: all namespaces', collect)
    .option('--force', 'write into a non-empty directory, overwriting the generated files')
    .action(async (opts: initCommand.InitCommandOptions) => {
      await (await import('./commands/init.js')).run(opts, output);
    });

  program
    .command('generate')
    .description('Regenerate src/generated/ from kopf-gen.json and crds/, add stubs for new kinds, and summarise what changed. Never modifies your code.')
    .version(pkg.version, '-V, --version')
    .option('--project <dir>', 'the project directory', '.')
    .action(async (opts: generateCommand.GenerateCommandOptions) => {
      await (await import('./commands/generate.js')).run(opts, output);
    });

  program
    .command('add')
    .description('Add CRDs to a project (copied into crds/), then regenerate.')
    .version(pkg.version, '-V, --version')
    .requiredOption('--crd <file>', 'a CRD manifest ("-" reads stdin); repeatable', collect)
    .option('--project <dir>', 'the project directory', '.')
    .action(async (opts: addCommand.AddCommandOptions) => {
      await (await import('./commands/add.js')).run(opts, output);
    });

  program
    .command('devcluster')
    .description('Run the embedded Kubernetes API server in the foreground until interrupted.')
    .version(pkg.version, '-V, --version')
    .option('-p, --port <port>', 'listening port (0 = any free port)', '0')
    .option('--tls', 'serve HTTPS with a generated CA (default)', true)
    .option('--no-tls', 'serve plain HTTP')
    .option('--kubeconfig <path>', 'where to write the kubeconfig', path.join('.kopf-gen', 'kubeconfig'))
    .option('--crd <file...>', 'CRD manifests to load at start (YAML, several documents allowed)')
    .action(async (opts: devclusterCommand.DevclusterCommandOptions) => {
      await (await import('./commands/devcluster.js')).run(opts);
    });

  let exitCode = 0;
  program
    .command('run')
    .description('Run an operator (kopf-gen run --help for its options). Without a configured cluster, or with --dev-cluster, '
      + 'it runs against an embedded devcluster with the CRDs of --crd <file> or ./crds.')
    .argument('[args...]', 'operator files and options of the run command')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (_args: string[], _opts: unknown, command: Command) => {
      exitCode = await (await import('./commands/run.js')).run(command.args, output);
    });

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

/** Whether a path names an existing file (used by commands to report missing inputs clearly). */
export function isFile(p: string): boolean {
  try { return fs.statSync(p).isFile(); } catch { return false; }
}
