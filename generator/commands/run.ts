/**
 * `kopf-gen run [FILES…] [-m MODULE…] [options]`: runs an operator with the runtime's `run` command
 * (R-CLI-1), which owns the options, the exit codes and the OS signals.
 *
 * This layer adds what the runtime must not do itself (it never depends on the emulator): when no
 * cluster is configured — no `KUBECONFIG`, no `~/.kube/config`, not in a pod — or with
 * `--dev-cluster`, it starts the devcluster in this process, loads the CRDs given with `--crd` (or
 * found in `./crds`), writes its kubeconfig to `.kopf-gen/kubeconfig`, points `KUBECONFIG` there
 * for the operator, says so in one log line with a kubectl hint, and stops the devcluster after
 * the operator has stopped.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as runtimeCli from '../../runtime/cli.js';
import type * as reporting from './reporting.js';

/** Where the devcluster's kubeconfig is written, relative to the working directory. */
export const KUBECONFIG_PATH = path.join('.kopf-gen', 'kubeconfig');
/** Where the pod's service account would be mounted. */
const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** The launcher's own options, taken out of the arguments; the rest goes to the runtime. */
export interface LauncherArgs {
  readonly devCluster: boolean;
  readonly crds: readonly string[];
  readonly rest: readonly string[];
}

/**
 * Takes `--dev-cluster` and `--crd FILE` / `--crd=FILE` (repeatable) out of the arguments.
 *
 * @throws Error for `--crd` without a file.
 */
export function splitLauncherArgs(args: readonly string[]): LauncherArgs {
  const rest: string[] = [];
  const crds: string[] = [];
  let devCluster = false;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    if (arg === '--') {
      rest.push(...args.slice(i));
      break;
    }
    if (arg === '--dev-cluster') devCluster = true;
    else if (arg.startsWith('--crd=')) crds.push(arg.slice('--crd='.length));
    else if (arg === '--crd') {
      const file = args[i + 1];
      if (file === undefined || file.startsWith('-')) throw new Error('--crd needs a file');
      crds.push(file);
      i += 1;
    } else rest.push(arg);
  }
  return { devCluster, crds, rest };
}

/** Whether a cluster is configured: `KUBECONFIG`, `~/.kube/config`, or a pod's service account. */
export function isClusterConfigured(env: NodeJS.ProcessEnv = process.env, exists: (file: string) => boolean = fs.existsSync): boolean {
  if (env['KUBECONFIG']) return true;
  if (exists(path.join(env['HOME'] || os.homedir(), '.kube', 'config'))) return true;
  return exists(SERVICE_ACCOUNT_TOKEN);
}

/** The CRD files to load: the given ones, or the manifests in `./crds`. */
function crdFiles(given: readonly string[], cwd: string): string[] {
  if (given.length > 0) {
    for (const file of given) if (!fs.existsSync(path.resolve(cwd, file))) throw new Error(`--crd ${file}: no such file`);
    return given.map((file) => path.resolve(cwd, file));
  }
  const folder = path.join(cwd, 'crds');
  if (!fs.existsSync(folder)) return [];
  return fs.readdirSync(folder).filter((name) => /\.(ya?ml|json)$/.test(name)).sort().map((name) => path.join(folder, name));
}

/** The plural names of the CRDs among loaded objects (for the kubectl hint). */
function pluralsOf(objects: readonly Record<string, unknown>[]): string[] {
  return objects.flatMap((object) => {
    const names = (object['spec'] as { names?: { plural?: unknown } } | undefined)?.names;
    return object['kind'] === 'CustomResourceDefinition' && typeof names?.plural === 'string' ? [names.plural] : [];
  });
}

/** Options of `run` for tests and embedders. */
export interface RunOptions {
  readonly cwd?: string;
  /** Extra operator options passed to the runtime (e.g. `stopFlag` in tests). */
  readonly operator?: runtimeCli.RunCommandOptions['operator'];
}

/**
 * Runs the operator (with a devcluster if needed) and resolves to the exit code: 0 after a
 * graceful stop, 1 on failures, 2 on usage errors.
 */
export async function run(args: readonly string[], output: reporting.Output, options: RunOptions = {}): Promise<number> {
  const cwd = options.cwd ?? process.cwd();
  let launcher: LauncherArgs;
  try {
    launcher = splitLauncherArgs(args);
  } catch (error) {
    output.err(`kopf-gen run: ${(error as Error).message}\n`);
    return 2;
  }
  const wanted = launcher.devCluster || (!isClusterConfigured() && !launcher.rest.some((arg) => arg === '-h' || arg === '--help'));
  if (!wanted) return await runtimeCli.runCommand(launcher.rest, { output, cwd, operator: options.operator });

  const files = crdFiles(launcher.crds, cwd);
  // Loaded only when needed: most runs have a cluster and should not pay for the emulator.
  const { DevCluster } = await import('../../devcluster/testing.js');
  const cluster = await DevCluster.start();
  const saved = process.env['KUBECONFIG'];
  try {
    const loaded = files.length > 0 ? await cluster.load(files.map((file) => fs.readFileSync(file, 'utf8'))) : [];
    const kubeconfig = path.resolve(cwd, cluster.writeKubeconfig(path.resolve(cwd, KUBECONFIG_PATH)));
    process.env['KUBECONFIG'] = kubeconfig;
    const why = launcher.devCluster ? 'As requested (--dev-cluster)' : 'No cluster is configured (no KUBECONFIG, no ~/.kube/config, not in a pod)';
    const crds = files.length > 0 ? ` with ${files.length} CRD file(s)` : ' without CRDs';
    const kinds = pluralsOf(loaded as Record<string, unknown>[]);
    output.err(`${why}: started the devcluster at ${cluster.url}${crds}; kubeconfig: ${kubeconfig}; `
      + `try: kubectl --kubeconfig ${kubeconfig} get ${kinds.length > 0 ? kinds.join(',') : 'namespaces'} -A\n`);
    return await runtimeCli.runCommand(launcher.rest, { output, cwd, operator: options.operator });
  } finally {
    if (saved === undefined) delete process.env['KUBECONFIG'];
    else process.env['KUBECONFIG'] = saved;
    await cluster.stop();
  }
}
