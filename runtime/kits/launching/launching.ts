/**
 * Launching an operator from the words of a command line (R-CLI-1/3): parsing the options of
 * `run`, loading the operator's files and modules (which register handlers as a side effect),
 * configuring the log output (R-POST-5), and running the operator until it stops.
 *
 * Both the process-owning commands (`commands.ts`: `runCommand()` and `main()`, which add OS
 * signals and the exit code) and the test runner (`runner.ts`, which stops the operator with a stop
 * flag) launch operators through here, so they parse and behave identically; this kit sits on top
 * of the reactor, which only runs the operator it is given.
 *
 * Peering (docs/peering.md): `--peering NAME` (or `KOPF_RUN_PEERING`) makes it mandatory with that
 * object, `--priority N` ranks the operator, `--dev` is priority 666, `--standalone` turns peering
 * off; combining `--standalone` with the others, or `--dev` with `--priority`, is a usage error
 * (one of them would do nothing). `--liveness` serves the
 * liveness and readiness endpoints (docs/health.md), `--metrics` the Prometheus metrics
 * (docs/metrics.md): securely at an `https://` URL (TLS, TokenReview and SubjectAccessReview of
 * every caller; `--metrics-tls-dir` for a certificate of one's own), in plain HTTP at an `http://`
 * one; a malformed URL is a usage error. `--lease NAME` (env `KOPF_RUN_LEASE`) and
 * `--lease-namespace NS` turn on Lease election (docs/leader-election.md); together with an option
 * of Kopf peering or `--standalone`, it is a usage error naming both.
 */

import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import * as connections from '../../cogs/client/connections.js';
import * as clientErrors from '../../cogs/client/errors.js';
import * as logging from '../../core/actions/logging.js';
import * as endpoints from '../../core/engines/endpoints.js';
import * as registries from '../../core/intents/registry.js';
import * as footprint from './footprint.js';
import * as importing from './importing.js';
import { type CommandOutput, processOutput } from './output.js';
import { METRICS_SCHEMES } from '../../core/reactor/options.js';
import * as running from '../../core/reactor/running.js';
import { UsageError } from './errors.js';
import * as engineErrors from '../../core/engines/errors.js';
import * as launchErrors from './errors.js';

const logger = logging.getLogger('kopf.reactor.running');

/** What `run`'s command line asks for. */
export interface RunArgs {
  /** Operator files (`.ts`/`.js`), relative to the working directory. */
  readonly paths: readonly string[];
  /** Module specifiers (`-m`), resolved from the working directory. */
  readonly modules: readonly string[];
  readonly clusterwide: boolean;
  /** Namespace patterns (`-n`, plus `KOPF_RUN_NAMESPACE`). */
  readonly namespaces: readonly string[];
  readonly standalone?: boolean;
  /** `--priority N`, or 666 for `--dev` (R-PEER-8). */
  readonly priority?: number;
  /** `--peering NAME` or `KOPF_RUN_PEERING`: mandatory peering with that object (R-PEER-2). */
  readonly peeringName?: string;
  /** `--lease NAME` (or `KOPF_RUN_LEASE`): Lease election on this Lease (docs/leader-election.md). */
  readonly leaseName?: string;
  /** `--lease-namespace NS`: the Lease's namespace (default: `$POD_NAMESPACE`, the service account's, `default`). */
  readonly leaseNamespace?: string;
  /** `--liveness=http://HOST:PORT/PATH`: serve the liveness and readiness endpoints there. */
  readonly livenessEndpoint?: string;
  /** `--metrics`: where the Prometheus metrics are served (`https://HOST:PORT/PATH` secure, `http://…` plain). */
  readonly metricsEndpoint?: string;
  /** `--metrics-tls-dir`: the directory of the https metrics' `tls.crt` and `tls.key`. */
  readonly metricsTlsDir?: string;
  /** For `logging.configure()`. */
  readonly logging: logging.ConfigureOptions;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Checks an endpoint URL as the command line is parsed (the same rules as the operator's). */
function endpointUrl(flag: string, schemes?: readonly endpoints.EndpointScheme[]): (value: string) => string {
  return (value) => {
    try {
      endpoints.parseEndpointUrl(value, flag, schemes);
    } catch (error) {
      if (error instanceof engineErrors.EndpointUrlError) throw new InvalidArgumentError(error.message.replace(`${flag}: `, ''));
      throw error;
    }
    return value;
  };
}

function integer(value: string): number {
  if (!/^[+-]?\d+$/.test(value.trim())) throw new InvalidArgumentError('Not an integer.');
  return Number(value);
}

/** The `run` command's options (R-CLI-1), for parsing and help. */
function runCommand(name: string, output: CommandOutput): Command {
  return new Command(name)
    .description('Run an operator: load the files and modules (they register handlers), then serve the cluster until stopped.')
    .argument('[paths...]', 'operator files (.ts or .js) to load')
    .option('-m, --module <module>', 'a module to import, resolved from the current directory (repeatable)', collect)
    .addOption(new Option('-A, --all-namespaces', 'serve all namespaces (cluster-wide)').conflicts('namespace'))
    .option('-n, --namespace <pattern>', 'serve namespaces matching a pattern: globs, "!" excludes, comma-separated (repeatable)', collect)
    .option('--standalone', 'do not use peering with other operators at all')
    .addOption(new Option('--dev', 'development mode: priority 666 among peers, so deployed operators pause').implies({ priority: 666 }))
    .addOption(new Option('-p, --priority <priority>', 'the priority among peers (default 0); lower ones pause').argParser(integer))
    .option('-P, --peering <name>', 'the peering object to use; peering becomes mandatory (env: KOPF_RUN_PEERING)')
    .option('--lease <name>', 'leader election on this Lease (coordination.k8s.io/v1): replicas stand by, the holder works (env: KOPF_RUN_LEASE)')
    .option('--lease-namespace <namespace>', 'the namespace of the Lease (default: $POD_NAMESPACE, else the service account\'s, else "default")')
    .option(
      '-L, --liveness <url>',
      'serve the liveness endpoint at http://HOST:PORT/PATH (probes and watch health), and the readiness endpoint at /readyz on the same host and port',
    )
    .addOption(
      new Option(
        '--metrics <url>',
        'serve Prometheus metrics at https://HOST:PORT/PATH (TLS; callers need a token allowed to get PATH), e.g. https://0.0.0.0:8443/metrics, or in plain HTTP to anyone at http://HOST:PORT/PATH (development)',
      ).argParser(endpointUrl('--metrics', METRICS_SCHEMES)),
    )
    .option('--metrics-tls-dir <dir>', "the https metrics' certificate: tls.crt and tls.key in this directory (default: self-signed, made at start)")
    .option('-v, --verbose', 'log at DEBUG level')
    .option('-d, --debug', 'log at DEBUG level, including the client and network')
    .option('-q, --quiet', 'log only warnings and errors')
    .addOption(new Option('--log-format <format>', 'the log format').choices(['plain', 'full', 'json']).default('full'))
    .option('--log-prefix', 'prefix messages about objects with [namespace/name]')
    .option('--no-log-prefix', 'do not prefix messages about objects')
    .option('--log-refkey <key>', 'the key of the object reference in JSON logs')
    .helpOption('-h, --help', 'show this help')
    .exitOverride()
    .configureOutput({ writeOut: output.out, writeErr: output.err })
    .showHelpAfterError('(add --help for additional information)');
}

interface ParsedOptions {
  module?: string[];
  allNamespaces?: boolean;
  namespace?: string[];
  standalone?: boolean;
  dev?: boolean;
  priority?: number;
  peering?: string;
  lease?: string;
  leaseNamespace?: string;
  liveness?: string;
  metrics?: string;
  metricsTlsDir?: string;
  verbose?: boolean;
  debug?: boolean;
  quiet?: boolean;
  logFormat: logging.LogFormat;
  logPrefix?: boolean;
  logRefkey?: string;
}

/**
 * Lease election together with an option of another mode of coordination, as a usage error's text
 * naming both flags (`--lease` or `KOPF_RUN_LEASE` with `--standalone`, `--peering` or `KOPF_RUN_PEERING`,
 * `--priority`, `--dev`), or `--lease-namespace` without a Lease.
 */
function conflictingMode(command: Command, opts: ParsedOptions, env: NodeJS.ProcessEnv): string | undefined {
  const lease = opts.lease !== undefined ? "option '--lease <name>'" : env['KOPF_RUN_LEASE'] ? 'the environment variable KOPF_RUN_LEASE' : undefined;
  if (lease === undefined) {
    return opts.leaseNamespace !== undefined ? "option '--lease-namespace <namespace>' needs option '--lease <name>' (or KOPF_RUN_LEASE)" : undefined;
  }
  const other = opts.standalone
    ? "option '--standalone'"
    : opts.peering !== undefined
      ? "option '-P, --peering <name>'"
      : env['KOPF_RUN_PEERING']
        ? 'the environment variable KOPF_RUN_PEERING'
        : opts.dev
          ? "option '--dev'"
          : command.getOptionValueSource('priority') === 'cli'
            ? "option '-p, --priority <priority>'"
            : undefined;
  return other === undefined
    ? undefined
    : `${lease} cannot be used with ${other}: Lease election and Kopf peering (or standalone) are different modes of coordination; choose one`;
}

/** Peering options that contradict each other (one would do nothing), as a usage error's text. */
function peeringConflict(command: Command, opts: ParsedOptions, env: NodeJS.ProcessEnv): string | undefined {
  const priority = command.getOptionValueSource('priority') === 'cli';
  if (opts.dev && priority) return "options '--dev' and '-p, --priority <priority>' cannot be used together: --dev is priority 666";
  if (!opts.standalone) return undefined;
  const other =
    opts.peering !== undefined
      ? "'-P, --peering <name>'"
      : env['KOPF_RUN_PEERING']
        ? 'the environment variable KOPF_RUN_PEERING'
        : opts.dev
          ? "'--dev'"
          : priority
            ? "'-p, --priority <priority>'"
            : undefined;
  return other === undefined ? undefined : `option '--standalone' cannot be used together with ${other}: a standalone operator does not peer`;
}

/**
 * Parses `run`'s arguments (without the command's own name). `-n` with `-A` is a usage error; the
 * legacy `KOPF_RUN_NAMESPACE` adds one namespace unless `-A` is given. `--standalone` with a
 * peering option, `--dev` with `--priority`, and a malformed `-L` URL are usage errors.
 *
 * @returns the arguments, or `null` if help was requested (and printed).
 * @throws UsageError for malformed command lines (the message was printed to `output.err`).
 * @example
 * parseRunArgs(['-A', '--standalone', 'operator.ts']) // { paths: ['operator.ts'], clusterwide: true, … }
 */
export function parseRunArgs(
  argv: readonly string[],
  options: { readonly env?: NodeJS.ProcessEnv; readonly output?: CommandOutput; readonly name?: string } = {},
): RunArgs | null {
  const env = options.env ?? process.env;
  const command = runCommand(options.name ?? 'run', options.output ?? processOutput);
  try {
    command.parse([...argv], { from: 'user' });
    const conflict = conflictingMode(command, command.opts<ParsedOptions>(), env);
    if (conflict !== undefined) command.error(`error: ${conflict}`, { exitCode: 2, code: 'kopf-gen.conflictingOptions' });
    const peering = peeringConflict(command, command.opts<ParsedOptions>(), env);
    if (peering !== undefined) command.error(`error: ${peering}`, { exitCode: 2, code: 'kopf-gen.conflictingOptions' });
    const { metrics, metricsTlsDir } = command.opts<ParsedOptions>();
    if (metricsTlsDir !== undefined && !(metrics !== undefined && endpoints.parseEndpointUrl(metrics, '--metrics', METRICS_SCHEMES).secure)) {
      command.error("error: option '--metrics-tls-dir <dir>' needs option '--metrics <url>' with an https:// URL", {
        exitCode: 2,
        code: 'kopf-gen.conflictingOptions',
      });
    }
    const liveness = command.opts<ParsedOptions>().liveness;
    if (liveness !== undefined) {
      try {
        endpoints.parseEndpointUrl(liveness, "option '-L, --liveness <url>'");
      } catch (error) {
        if (!(error instanceof engineErrors.EndpointUrlError)) throw error;
        command.error(`error: ${error.message}`, { exitCode: 2, code: 'kopf-gen.invalidOption' });
      }
    }
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) return null;
      throw new UsageError(error.message.replace(/^error: /, ''));
    }
    throw error;
  }
  const opts = command.opts<ParsedOptions>();
  const namespaces = [...(opts.namespace ?? [])];
  const legacy = env['KOPF_RUN_NAMESPACE'];
  if (legacy && !opts.allNamespaces) namespaces.push(legacy);
  return {
    paths: [...(command.processedArgs[0] as string[])],
    modules: opts.module ?? [],
    clusterwide: opts.allNamespaces === true,
    namespaces,
    standalone: opts.standalone,
    priority: opts.priority,
    peeringName: opts.peering ?? (env['KOPF_RUN_PEERING'] || undefined),
    leaseName: opts.lease ?? (env['KOPF_RUN_LEASE'] || undefined),
    leaseNamespace: opts.leaseNamespace,
    livenessEndpoint: opts.liveness,
    metricsEndpoint: opts.metrics,
    metricsTlsDir: opts.metricsTlsDir,
    logging: {
      verbose: opts.verbose,
      debug: opts.debug,
      quiet: opts.quiet,
      logFormat: opts.logFormat,
      logPrefix: opts.logPrefix,
      logRefkey: opts.logRefkey,
    },
  };
}

/**
 * Launches an operator as `run` would: configures logging, loads the modules (registering into
 * `options.registry` if given, else into the default registry), then runs `running.operator()`
 * with the command line's scope and peering options on top of `options`. With no login handler,
 * no vault and nothing for the built-in logins to read, it stops before the operator starts.
 *
 * @throws UsageError, loading errors, LoginError naming what was looked for when there are no
 *   credentials to find, and the operator's own errors (after a graceful stop).
 */
export async function launch(args: RunArgs, options: running.OperatorOptions & { readonly cwd?: string; readonly tuneHeap?: boolean } = {}): Promise<void> {
  logging.configure(args.logging);
  if (options.tuneHeap) {
    const policy = footprint.tuneHeap();
    logger.debug(
      policy.kind === 'tuned'
        ? `The heap may grow to ${100 + policy.percent}% of its live size (--heap-growing-percent=${policy.percent}).`
        : `The heap growing factor is left as it is: ${policy.reason}.`,
    );
  }
  const registry = options.registry ?? registries.getDefaultRegistry();
  const previous = registries.getDefaultRegistry();
  registries.setDefaultRegistry(registry);
  try {
    await importing.loadOperatorModules({ paths: args.paths, modules: args.modules, cwd: options.cwd });
  } catch (error) {
    throw error instanceof launchErrors.MissingModuleError ? new UsageError(error.message) : error;
  } finally {
    registries.setDefaultRegistry(previous);
  }
  // Nothing to log in with: one line before anything starts, not the login activity's log (R-CLI-701).
  if (options.vault === undefined && registry.activityHandlers('authentication').length === 0) {
    const missing = connections.missingCredentials(options);
    if (missing !== undefined) throw new clientErrors.LoginError(missing);
  }
  const { tuneHeap: _, ...operatorOptions } = options;
  await running.operator({
    ...operatorOptions,
    registry,
    clusterwide: args.clusterwide,
    namespaces: args.namespaces,
    ...(args.standalone !== undefined ? { standalone: args.standalone } : {}),
    ...(args.priority !== undefined ? { priority: args.priority } : {}),
    ...(args.peeringName !== undefined ? { peeringName: args.peeringName } : {}),
    ...(args.leaseName !== undefined ? { leaseName: args.leaseName } : {}),
    ...(args.leaseNamespace !== undefined ? { leaseNamespace: args.leaseNamespace } : {}),
    ...(args.livenessEndpoint !== undefined ? { livenessEndpoint: args.livenessEndpoint } : {}),
    ...(args.metricsEndpoint !== undefined ? { metricsEndpoint: args.metricsEndpoint } : {}),
    ...(args.metricsTlsDir !== undefined ? { metricsTlsDir: args.metricsTlsDir } : {}),
  });
}
