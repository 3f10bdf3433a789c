/**
 * The `kopf-gen` command line: a thin layer that parses flags and calls the library functions
 * (STYLE item 24). Exit codes: 0 success, 1 failure, 2 usage error.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, CommanderError } from 'commander';
import pkg from '../package.json' with { type: 'json' };
import * as devclusterCommand from './commands/devcluster.js';

export async function main(argv: readonly string[]): Promise<number> {
  const program = new Command();
  program
    .name('kopf-gen')
    .description('Typed Kubernetes operators in TypeScript: generate a project from CRDs, run it with Kopf semantics, develop against an embedded API server.')
    .version(pkg.version, '-V, --version')
    .exitOverride()
    .showHelpAfterError();

  program
    .command('devcluster')
    .description('Run the embedded Kubernetes API server in the foreground until interrupted.')
    .option('-p, --port <port>', 'listening port (0 = any free port)', '0')
    .option('--tls', 'serve HTTPS with a generated CA (default)', true)
    .option('--no-tls', 'serve plain HTTP')
    .option('--kubeconfig <path>', 'where to write the kubeconfig', path.join('.kopf-gen', 'kubeconfig'))
    .option('--crd <file...>', 'CRD manifests to load at start (YAML, several documents allowed)')
    .action(async (opts: devclusterCommand.DevclusterCommandOptions) => {
      await devclusterCommand.run(opts);
    });

  try {
    await program.parseAsync(['node', 'kopf-gen', ...argv]);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 ? 0 : 2;
    }
    process.stderr.write(`kopf-gen: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

/** Whether a path names an existing file (used by commands to report missing inputs clearly). */
export function isFile(p: string): boolean {
  try { return fs.statSync(p).isFile(); } catch { return false; }
}
