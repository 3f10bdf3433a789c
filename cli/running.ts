/**
 * `kopf-gen run [FILES…] [-m MODULE…] [options]`: runs an operator with the runtime's `run` command
 * (R-CLI-1), which owns the options, the exit codes and the OS signals.
 *
 * This layer adds what the runtime must not do itself (it never depends on the emulator, and
 * never loads TypeScript):
 * - TypeScript operator files get tsx's loader (`typescript.ts`); compiled `.js` runs as it is.
 * - The embedded devcluster, only when asked: `--dev-cluster` (or `--dev-cluster=always`) always
 *   starts it; `--dev-cluster=auto` — what a generated project's `npm run operator` passes —
 *   starts it only when no cluster is configured (no `KUBECONFIG`, no `~/.kube/config`, no
 *   service-account token) and the process is not in a pod. It loads the CRDs given with
 *   `--crd` (or found in `./crds`), writes its kubeconfig to `.kopf-gen/kubeconfig` (for kubectl),
 *   points `KUBECONFIG` at it for the operator (so that `@kubernetes/client-node`'s
 *   `loadFromDefault()` in handlers reaches the same devcluster), says so in one line with a
 *   kubectl hint, and stops the devcluster after the operator has stopped.
 * - The dev loop (`devloop.ts`): with `--watch` — the default when the devcluster is used — the
 *   operator runs in a child process that is restarted when a source file is saved, while the
 *   devcluster stays in this process; `--no-watch` runs the operator in this process, once.
 * Without the flag nothing development-only happens: with no cluster configured, the operator's
 * login fails with one line naming what was looked for, as it would in a deployed container.
 * Inside a pod the devcluster never starts, even with `--dev-cluster`, unless
 * `--dev-cluster-in-pod` forces it (D-SEC-2, `pods.ts`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as kubeconfigs from '../runtime/cogs/client/kubeconfigs.js';
import * as logins from '../runtime/cogs/client/logins.js';
import * as runtimeCli from '../runtime/kits/launching/commands.js';
import type * as outputs from '../runtime/kits/launching/output.js';
import * as pods from './pods.js';
import * as standby from './standby.js';
import * as typescript from './typescript.js';

/** Where the devcluster's kubeconfig is written, relative to the working directory. */
export const KUBECONFIG_PATH = path.join('.kopf-gen', 'kubeconfig');

/** Where the devcluster keeps its objects between runs (D-PERSIST-301), relative to the working directory. */
export const STATE_PATH = path.join('.kopf-gen', 'devcluster');

/** The flag that empties the kept state before the devcluster starts. */
const RESET_FLAG = '--reset-dev-cluster';

/** The launcher's options, printed after the runtime's in `kopf-gen run --help`. */
const LAUNCHER_HELP = `
Development options (kopf-gen run only; \`node dist/main.js\` has none of them):
  --dev-cluster[=always|auto]  run against the embedded devcluster: always, or (auto) only when no
                               cluster is configured and not in a pod
  --crd <file>                 CRD manifests to load into the devcluster (repeatable; default: ./crds)
  --dev-cluster-in-pod         start the devcluster even inside a Kubernetes pod (refused by default:
                               a development server that trusts loopback must not run beside a real
                               cluster)
  --watch, --no-watch          restart the operator when a source file is saved, keeping the
                               devcluster and its objects (default: --watch when the devcluster is
                               used, --no-watch otherwise)
  --reset-dev-cluster          start the devcluster empty: delete the objects it kept in
                               .kopf-gen/devcluster from earlier runs
`;

/** When to start the embedded devcluster: never (the default), always, or if no cluster is configured. */
export type DevClusterMode = 'never' | 'always' | 'auto';

/** The launcher's own options, taken out of the arguments; the rest goes to the runtime. */
export interface LauncherArgs {
  readonly devCluster: DevClusterMode;
  readonly crds: readonly string[];
  /** `--dev-cluster-in-pod`: start the devcluster even in a pod. */
  readonly inPod: boolean;
  /** `--watch` (true), `--no-watch` (false), or neither (undefined: watch when the devcluster is used). */
  readonly watch?: boolean;
  /** `--reset-dev-cluster`: delete the devcluster's kept state before it starts. */
  readonly reset: boolean;
  readonly rest: readonly string[];
}

/**
 * Takes `--dev-cluster[=always|auto]`, `--crd FILE` / `--crd=FILE` (repeatable), `--dev-cluster-in-pod`,
 * `--watch` / `--no-watch` and `--reset-dev-cluster` out of the arguments.
 *
 * @throws Error for `--crd` without a file, or an unknown `--dev-cluster` mode.
 */
export function splitLauncherArgs(args: readonly string[]): LauncherArgs {
  const rest: string[] = [];
  const crds: string[] = [];
  let devCluster: DevClusterMode = 'never';
  let inPod = false;
  let watch: boolean | undefined;
  let reset = false;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    if (arg === '--') {
      rest.push(...args.slice(i));
      break;
    }
    if (arg === '--dev-cluster') devCluster = 'always';
    else if (arg === '--watch') watch = true;
    else if (arg === '--no-watch') watch = false;
    else if (arg === RESET_FLAG) reset = true;
    else if (arg === pods.IN_POD_FLAG) inPod = true;
    else if (arg.startsWith('--dev-cluster=')) {
      const mode = arg.slice('--dev-cluster='.length);
      if (mode !== 'always' && mode !== 'auto') throw new Error(`--dev-cluster=${mode}: the mode must be "always" or "auto"`);
      devCluster = mode;
    } else if (arg.startsWith('--crd=')) crds.push(arg.slice('--crd='.length));
    else if (arg === '--crd') {
      const file = args[i + 1];
      if (file === undefined || file.startsWith('-')) throw new Error('--crd needs a file');
      crds.push(file);
      i += 1;
    } else rest.push(arg);
  }
  return { devCluster, crds, inPod, ...(watch !== undefined ? { watch } : {}), reset, rest };
}

/**
 * Whether a cluster is configured: `KUBECONFIG`, `~/.kube/config`, or a pod's service account.
 * Inside a pod (`KUBERNETES_SERVICE_HOST` is set) the answer is always yes: a deployed operator
 * that cannot log in must fail, never fall back to a development cluster.
 */
export function isClusterConfigured(env: NodeJS.ProcessEnv = process.env, exists: (file: string) => boolean = fs.existsSync): boolean {
  if (env['KUBECONFIG'] || env['KUBERNETES_SERVICE_HOST']) return true;
  // The places the runtime's built-in logins read, so that the two never disagree.
  if (exists(kubeconfigs.defaultKubeconfigPath(env))) return true;
  return exists(path.join(logins.SERVICE_ACCOUNT_FOLDER, 'token'));
}

/** The CRD files to load: the given ones, or the manifests in `./crds`. */
function crdFiles(given: readonly string[], cwd: string): string[] {
  if (given.length > 0) {
    for (const file of given) if (!fs.existsSync(path.resolve(cwd, file))) throw new Error(`--crd ${file}: no such file`);
    return given.map((file) => path.resolve(cwd, file));
  }
  const folder = path.join(cwd, 'crds');
  if (!fs.existsSync(folder)) return [];
  return fs
    .readdirSync(folder)
    .filter((name) => /\.(ya?ml|json)$/.test(name))
    .sort()
    .map((name) => path.join(folder, name));
}

/**
 * Loads the CRD files into the devcluster one by one, so that a bad one is named. Over a kept state
 * (D-PERSIST-301) a CRD of the same name is replaced by the file's, and the files' other objects are
 * created only where absent: the objects kept from the last run stay as they were.
 *
 * @throws Error `<file>: <what is wrong>`.
 */
async function loadCrds(cluster: CrdStore, files: readonly string[], cwd: string): Promise<Record<string, unknown>[]> {
  const loaded: Record<string, unknown>[] = [];
  for (const file of files) {
    try {
      loaded.push(...(await applyCrdFile(cluster, file, { others: true })));
    } catch (error) {
      throw new Error(`${path.relative(cwd, file) || file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
  return loaded;
}

/** What `reloadCrds` needs of the devcluster. */
interface CrdStore {
  readonly store: {
    get(ref: { apiVersion: string; kind: string }, name: string, namespace?: string): Record<string, unknown> | undefined;
    create(object: Record<string, unknown>): Promise<unknown>;
    update(object: Record<string, unknown>): Promise<unknown>;
  };
  settle(): Promise<void>;
}

/**
 * Loads a changed CRD file into the running devcluster again (the dev loop): each CRD is created,
 * or replaced over the stored one; the file's other objects are left alone (they are the user's
 * to apply). CRDs removed from the file stay in the devcluster.
 *
 * @returns the line to print; @throws Error when the file cannot be parsed or a CRD is refused.
 */
async function reloadCrds(cluster: CrdStore, file: string, cwd: string): Promise<string> {
  const crds = await applyCrdFile(cluster, file, { others: false });
  return `reloaded ${crds.length} CRD(s) of ${path.relative(cwd, file) || file} into the devcluster`;
}

/**
 * Creates or replaces the file's CRDs in the devcluster (and, with `others`, creates its other
 * objects where absent), then waits for the devcluster to settle (CRDs established).
 *
 * @returns the objects written; @throws Error when the file cannot be parsed or an object is refused.
 */
async function applyCrdFile(cluster: CrdStore, file: string, options: { readonly others: boolean }): Promise<Record<string, unknown>[]> {
  // The YAML parser only with the devcluster: a run against a cluster never loads it.
  const YAML = await import('yaml');
  const documents = YAML.parseAllDocuments(fs.readFileSync(file, 'utf8')).map((document) => {
    if (document.errors.length > 0) throw new Error(document.errors[0]!.message);
    return document.toJS() as unknown;
  });
  const objects = documents.filter((doc): doc is Record<string, unknown> => typeof doc === 'object' && doc !== null && !Array.isArray(doc));
  const isCrd = (object: Record<string, unknown>): boolean => object['kind'] === 'CustomResourceDefinition';
  const written: Record<string, unknown>[] = [];
  for (const crd of objects.filter(isCrd)) {
    const name = String((crd['metadata'] as { name?: unknown } | undefined)?.name ?? '');
    const stored = cluster.store.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' }, name);
    const version = (stored?.['metadata'] as { resourceVersion?: string } | undefined)?.resourceVersion;
    if (stored) await cluster.store.update({ ...crd, metadata: { ...(crd['metadata'] as object), resourceVersion: version } });
    else await cluster.store.create(crd);
    written.push(crd);
  }
  await cluster.settle();
  if (!options.others) return written;
  for (const object of objects.filter((o) => !isCrd(o))) {
    const metadata = (object['metadata'] ?? {}) as { name?: unknown; namespace?: unknown };
    const ref = { apiVersion: String(object['apiVersion'] ?? ''), kind: String(object['kind'] ?? '') };
    const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : undefined;
    if (cluster.store.get(ref, String(metadata.name ?? ''), namespace)) continue;
    await cluster.store.create(object);
    written.push(object);
  }
  await cluster.settle();
  return written;
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
  /** How a pod is recognised (tests; default: the process's environment and the token's real path). */
  readonly pod?: pods.PodDetection;
  /** Stops the dev loop as SIGTERM does (tests; the operator's own stop flag is `operator.stopFlag`). */
  readonly stopFlag?: AbortSignal;
}

/**
 * Runs the operator (with a devcluster if needed, in the dev loop if watching) and resolves to the
 * exit code: 0 after a graceful stop, 1 on failures, 2 on usage errors.
 */
export async function run(args: readonly string[], output: outputs.CommandOutput, options: RunOptions = {}): Promise<number> {
  const cwd = options.cwd ?? process.cwd();
  let launcher: LauncherArgs;
  let files: string[];
  try {
    launcher = splitLauncherArgs(args);
    if (launcher.crds.length > 0 && launcher.devCluster === 'never') {
      throw new Error('--crd loads CRDs into the embedded devcluster: give it with --dev-cluster or --dev-cluster=auto');
    }
    if (launcher.reset && launcher.devCluster === 'never') {
      throw new Error(`${RESET_FLAG} empties the embedded devcluster's kept state: give it with --dev-cluster or --dev-cluster=auto`);
    }
    files = crdFiles(launcher.crds, cwd);
  } catch (error) {
    output.err(`kopf-gen run: ${(error as Error).message}\n`);
    return 2;
  }
  const help = launcher.rest.some((arg) => arg === '-h' || arg === '--help');
  const wanted = !help && (launcher.devCluster === 'always' || (launcher.devCluster === 'auto' && !isClusterConfigured()));
  const watch = !help && (launcher.watch ?? wanted);
  try {
    // The dev loop's children load the operator; this process only checks and watches.
    const operatorFiles = launcher.rest.filter((arg) => !arg.startsWith('-'));
    if (!help && !watch && typescript.needsLoader(operatorFiles)) await typescript.registerLoader(cwd);
    // Started by a dev loop: wait, with the runtime and the loader ready, until told to go.
    if (standby.isStandby()) await standby.standBy();
  } catch (error) {
    output.err(`kopf-gen run: ${(error as Error).message}\n`);
    return 1;
  }
  if (help) {
    const code = await runtimeCli.runCommand(launcher.rest, { output, cwd, operator: options.operator });
    output.out(LAUNCHER_HELP);
    return code;
  }
  let entries: readonly string[] = [];
  if (watch) {
    // Usage errors are found here, once, rather than by every restarted child.
    let parsed: ReturnType<typeof runtimeCli.parseRunArgs>;
    try {
      parsed = runtimeCli.parseRunArgs(launcher.rest, { output, name: 'kopf-gen run' });
    } catch {
      return 2;
    }
    if (parsed === null) return 0;
    entries = parsed.paths;
  }
  if (!wanted) {
    if (watch)
      return await (await import('./devloop.js')).runDevLoop({ cwd, args: launcher.rest, entries, env: process.env, output, stopFlag: options.stopFlag });
    return await runtimeCli.runCommand(launcher.rest, { output, cwd, operator: options.operator });
  }

  const evidence = launcher.inPod ? undefined : pods.podEvidence(options.pod);
  if (evidence) {
    output.err(`kopf-gen run: ${pods.refusal(evidence)}\n`);
    return 1;
  }
  // Loaded only when needed: most runs have a cluster and should not pay for the emulator.
  const { DevCluster, StateError } = await import('../devcluster/testing.js');
  const stateDir = path.resolve(cwd, STATE_PATH);
  let cluster: Awaited<ReturnType<typeof DevCluster.start>>;
  try {
    if (launcher.reset) {
      DevCluster.resetState(stateDir);
      output.err(`kopf-gen run: ${RESET_FLAG}: the devcluster starts empty (its kept state in ${STATE_PATH} was deleted)\n`);
    }
    cluster = await DevCluster.start({ stateDir });
  } catch (error) {
    if (!(error instanceof StateError)) throw error;
    output.err(`kopf-gen run: ${error.message} — or: npm run operator -- ${RESET_FLAG}\n`);
    return 1;
  }
  try {
    let loaded: Record<string, unknown>[];
    try {
      loaded = await loadCrds(cluster, files, cwd);
    } catch (error) {
      output.err(`kopf-gen run: ${(error as Error).message}\n`);
      return 1;
    }
    // Written for kubectl and the user, and given to the operator both explicitly and as KUBECONFIG.
    const kubeconfig = path.resolve(cwd, cluster.writeKubeconfig(path.resolve(cwd, KUBECONFIG_PATH)));
    const why =
      launcher.devCluster === 'always'
        ? 'As requested (--dev-cluster)'
        : 'No cluster is configured (no KUBECONFIG, no ~/.kube/config, not in a pod) and --dev-cluster=auto is given';
    const crds = files.length > 0 ? ` with ${files.length} CRD file(s)` : ' without CRDs';
    const kinds = pluralsOf(loaded);
    output.err(
      `${why}: started the devcluster at ${cluster.url}${crds}; kubeconfig: ${kubeconfig}; ` +
        `try: kubectl --kubeconfig ${kubeconfig} get ${kinds.length > 0 ? kinds.join(',') : 'namespaces'} -A\n`,
    );
    if (watch) {
      return await (await import('./devloop.js')).runDevLoop({
        cwd,
        args: launcher.rest,
        entries,
        env: { ...process.env, KUBECONFIG: kubeconfig },
        output,
        stopFlag: options.stopFlag,
        crds: {
          files,
          ...(launcher.crds.length === 0 ? { folder: path.join(cwd, 'crds') } : {}),
          reload: async (file) => await reloadCrds(cluster, file, cwd),
        },
      });
    }
    return await withKubeconfig(kubeconfig, () => runtimeCli.runCommand(launcher.rest, { output, cwd, operator: { ...options.operator, kubeconfig } }));
  } finally {
    await cluster.stop();
  }
}

/**
 * Runs `body` with `KUBECONFIG` pointing at the devcluster's kubeconfig — for clients in the
 * operator's process that read it, such as `@kubernetes/client-node`'s `loadFromDefault()` — and
 * restores the variable afterwards.
 */
async function withKubeconfig<T>(kubeconfig: string, body: () => Promise<T>): Promise<T> {
  const saved = process.env['KUBECONFIG'];
  process.env['KUBECONFIG'] = kubeconfig;
  try {
    return await body();
  } finally {
    if (saved === undefined) delete process.env['KUBECONFIG'];
    else process.env['KUBECONFIG'] = saved;
  }
}
