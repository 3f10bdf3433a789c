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
 * of Kopf peering or `--standalone`, it is a usage error naming both. `--shards RING` (env
 * `KOPF_RUN_SHARDS`), `--shard-id ID` and `--shard-key uid|namespace` turn on sharding
 * (docs/sharding.md); together with `--lease` or an option of Kopf peering (`--standalone` is fine),
 * it is a usage error naming both.
 */

import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import * as connections from '../../cogs/client/connections.js';
import * as settingsModule from '../../cogs/configs/settings.js';
import * as clientErrors from '../../cogs/client/errors.js';
import * as environment from './environment.js';
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
  /** `--shards RING` (or `KOPF_RUN_SHARDS`): sharding in this ring (docs/sharding.md). */
  readonly shards?: string;
  /** `--shard-id ID`: this replica's identity in the ring (default: `$POD_NAME`, else `<hostname>-<pid>`). */
  readonly shardIdentity?: string;
  /** `--shard-key uid|namespace`: what assigns objects to replicas (default `uid`). */
  readonly shardKey?: 'uid' | 'namespace';
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

/** The `run` command's options (R-CLI-1), for parsing and help. */
function runCommand(name: string, output: CommandOutput): Command {
  const command = new Command(name)
    .description('Run an operator: load the files and modules (they register handlers), then serve the cluster until stopped.')
    .argument('[paths...]', 'operator files (.ts or .js) to load')
    .option('-m, --module <module>', 'a module to import, resolved from the current directory (repeatable)', collect)
    .addOption(new Option('-A, --all-namespaces', 'serve all namespaces (cluster-wide)').conflicts('namespace'))
    .option('-n, --namespace <pattern>', 'serve namespaces matching a pattern: globs, "!" excludes, comma-separated (repeatable)', collect)
    .option('--standalone', 'do not use peering with other operators at all')
    .addOption(new Option('--dev', 'development mode: priority 666 among peers, so deployed operators pause').implies({ priority: 666 }))
    .addOption(new Option('-p, --priority <priority>', 'the priority among peers (default 0); lower ones pause').argParser(environment.parseInteger))
    .option('-P, --peering <name>', 'the peering object to use; peering becomes mandatory')
    .option('--lease <name>', 'leader election on this Lease (coordination.k8s.io/v1): replicas stand by, the holder works')
    .option('--lease-namespace <namespace>', 'the namespace of the Lease (default: $POD_NAMESPACE, else the service account\'s, else "default")')
    .addOption(
      new Option(
        '--shards <ring>',
        'sharding: spread the objects over the replicas of this ring, each holding a Lease of its own (coordination.k8s.io/v1)',
      ).argParser(shardRing),
    )
    .addOption(new Option('--shard-id <id>', "this replica's identity in the ring (default: $POD_NAME, else <hostname>-<pid>)").argParser(shardIdentity))
    .addOption(
      new Option('--shard-key <key>', "what assigns objects to replicas: uid (default) or namespace (one namespace's objects stay together)").argParser(
        environment.caseInsensitiveChoice(SHARD_KEYS),
      ),
    )
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
    .option('--metrics-tls-dir <dir>', "the https metrics' certificate: tls.crt and tls.key in this directory (default: self-signed, made at start)");
  return addLoggingOptions(command)
    .helpOption('-h, --help', 'show this help')
    .exitOverride()
    .configureOutput({ writeOut: output.out, writeErr: output.err })
    .showHelpAfterError('(add --help for additional information)');
}

/** The logging options of every command (R-POST-5), as Kopf's `logging_options`. */
export function addLoggingOptions(command: Command): Command {
  return command
    .option('-v, --verbose', 'log at DEBUG level')
    .option('-d, --debug', 'log at DEBUG level, including the client and network')
    .option('-q, --quiet', 'log only warnings and errors')
    .addOption(
      new Option('--log-format <format>', 'the log format: plain, full or json (any case)')
        .argParser(environment.caseInsensitiveChoice(LOG_FORMATS))
        .default('full'),
    )
    .option('--log-prefix', 'prefix messages about objects with [namespace/name]')
    .option('--no-log-prefix', 'do not prefix messages about objects')
    .option('--log-refkey <key>', 'the key of the object reference in JSON logs');
}

const LOG_FORMATS: readonly logging.LogFormat[] = ['plain', 'full', 'json'];

/** The values of `--shard-key`. */
const SHARD_KEYS: readonly ('uid' | 'namespace')[] = ['uid', 'namespace'];

/** Checks `--shards` as it is parsed: a label name (it makes the owner label `shard.kopf-gen.dev/<ring>`). */
function shardRing(value: string): string {
  if (!settingsModule.isLabelNamePart(value)) {
    throw new InvalidArgumentError("Not a label name (at most 63 characters: letters, digits, '-', '_', '.', starting and ending with a letter or digit).");
  }
  return value;
}

/** Checks `--shard-id` as it is parsed: a label value (it is written into the owner label of objects). */
function shardIdentity(value: string): string {
  if (value === '' || !settingsModule.isLabelValue(value)) {
    throw new InvalidArgumentError("Not a label value (at most 63 characters: letters, digits, '-', '_', '.', starting and ending with a letter or digit).");
  }
  return value;
}

/** The environment variables of the logging options, with a command's prefix (`KOPF_RUN`, `KOPF_FREEZE`, …). */
export function loggingEnvironment(prefix: string): environment.EnvOption[] {
  return [
    { key: 'verbose', envVars: environment.envVarsOf(prefix, 'verbose'), kind: 'flag' },
    { key: 'debug', envVars: environment.envVarsOf(prefix, 'debug'), kind: 'flag' },
    { key: 'quiet', envVars: environment.envVarsOf(prefix, 'quiet'), kind: 'flag' },
    { key: 'logFormat', envVars: environment.envVarsOf(prefix, 'log_format'), kind: 'string', parse: environment.caseInsensitiveChoice(LOG_FORMATS) },
    { key: 'logRefkey', envVars: environment.envVarsOf(prefix, 'log_refkey'), kind: 'string' },
    { key: 'logPrefix', envVars: environment.envVarsOf(prefix, 'log_prefix'), kind: 'flag' },
  ];
}

/** The parsed logging options. */
export interface LoggingOptions {
  verbose?: boolean;
  debug?: boolean;
  quiet?: boolean;
  logFormat: logging.LogFormat;
  logPrefix?: boolean;
  logRefkey?: string;
}

/** The logging options as `logging.configure()` takes them. */
export function loggingOf(opts: LoggingOptions): logging.ConfigureOptions {
  return {
    verbose: opts.verbose,
    debug: opts.debug,
    quiet: opts.quiet,
    logFormat: opts.logFormat,
    logPrefix: opts.logPrefix,
    logRefkey: opts.logRefkey,
  };
}

/**
 * Adds `(env: NAME)` to the help of every option that has variables, and parses the command line
 * with the environment applied after it (R-CLI-601): a value the environment cannot give is a usage
 * error naming the variable.
 *
 * @returns where each option set from the environment came from.
 * @throws CommanderError as `command.parse()` does.
 */
export function parseWithEnvironment(
  command: Command,
  argv: readonly string[],
  options: readonly environment.EnvOption[],
  env: NodeJS.ProcessEnv,
): environment.EnvSources {
  for (const option of command.options) {
    const spec = options.find((o) => o.key === option.attributeName());
    if (spec !== undefined && !option.negate && !option.description.includes('(env: ')) {
      option.description += ` (env: ${spec.envVars.join(', ')})`;
    }
  }
  command.parse([...argv], { from: 'user' });
  try {
    return environment.applyEnvironment(command, options, env);
  } catch (error) {
    if (!(error instanceof InvalidArgumentError)) throw error;
    return command.error(`error: ${error.message}`, { exitCode: 2, code: 'kopf-gen.invalidEnvironment' });
  }
}

/** `run`'s options from the environment: Kopf's `KOPF_RUN_<NAME>`, and the same rule for kopf-gen's own options. */
function runEnvironment(): environment.EnvOption[] {
  const p = 'KOPF_RUN';
  return [
    { key: 'module', envVars: environment.envVarsOf(p, 'modules'), kind: 'multiple' },
    { key: 'allNamespaces', envVars: environment.envVarsOf(p, 'clusterwide'), kind: 'flag' },
    { key: 'namespace', envVars: environment.envVarsOf(p, 'namespaces'), kind: 'multiple' },
    { key: 'standalone', envVars: environment.envVarsOf(p, 'standalone'), kind: 'flag' },
    { key: 'dev', envVars: environment.envVarsOf(p, 'dev'), kind: 'flag' },
    { key: 'priority', envVars: environment.envVarsOf(p, 'priority'), kind: 'integer', parse: environment.parseInteger },
    { key: 'peering', envVars: environment.envVarsOf(p, 'peering_name', 'KOPF_RUN_PEERING'), kind: 'string' },
    { key: 'liveness', envVars: environment.envVarsOf(p, 'liveness_endpoint'), kind: 'string' },
    { key: 'lease', envVars: environment.envVarsOf(p, 'lease'), kind: 'string' },
    { key: 'leaseNamespace', envVars: environment.envVarsOf(p, 'lease_namespace'), kind: 'string' },
    { key: 'shards', envVars: environment.envVarsOf(p, 'shards'), kind: 'string', parse: shardRing },
    { key: 'shardId', envVars: environment.envVarsOf(p, 'shard_id'), kind: 'string', parse: shardIdentity },
    { key: 'shardKey', envVars: environment.envVarsOf(p, 'shard_key'), kind: 'string', parse: environment.caseInsensitiveChoice(SHARD_KEYS) },
    { key: 'metrics', envVars: environment.envVarsOf(p, 'metrics'), kind: 'string', parse: endpointUrl('--metrics', METRICS_SCHEMES) },
    { key: 'metricsTlsDir', envVars: environment.envVarsOf(p, 'metrics_tls_dir'), kind: 'string' },
    ...loggingEnvironment(p),
  ];
}

/**
 * Every option of `run` with the variables it is read from, for help texts, docs and the parity
 * test (R-CLI-601): `[flags, variables]`, in the order of `run --help`.
 */
export function runOptionVariables(): Array<[string, string[]]> {
  const command = runCommand('run', { out: () => undefined, err: () => undefined });
  const specs = runEnvironment();
  return command.options.map((option) => [option.flags, [...(specs.find((s) => s.key === option.attributeName() && !option.negate)?.envVars ?? [])]]);
}

interface ParsedOptions extends LoggingOptions {
  module?: string[];
  allNamespaces?: boolean;
  namespace?: string[];
  standalone?: boolean;
  dev?: boolean;
  priority?: number;
  peering?: string;
  lease?: string;
  leaseNamespace?: string;
  shards?: string;
  shardId?: string;
  shardKey?: 'uid' | 'namespace';
  liveness?: string;
  metrics?: string;
  metricsTlsDir?: string;
}

/**
 * Lease election together with an option of another mode of coordination, as a usage error's text
 * naming both (`--lease` or `KOPF_RUN_LEASE` with `--standalone`, `--peering` or `KOPF_RUN_PEERING`,
 * `--priority`, `--dev`, or their variables), or `--lease-namespace` without a Lease.
 */
function conflictingMode(command: Command, opts: ParsedOptions, sources: environment.EnvSources): string | undefined {
  const source = (key: string, flags: string): string => environment.describeSource(command, sources, key, flags);
  if (opts.lease === undefined) {
    return opts.leaseNamespace !== undefined
      ? `${source('leaseNamespace', '--lease-namespace <namespace>')} needs option '--lease <name>' (or KOPF_RUN_LEASE)`
      : undefined;
  }
  const lease = source('lease', '--lease <name>');
  const other = opts.standalone
    ? source('standalone', '--standalone')
    : opts.peering !== undefined
      ? source('peering', '-P, --peering <name>')
      : opts.dev
        ? source('dev', '--dev')
        : opts.priority !== undefined
          ? source('priority', '-p, --priority <priority>')
          : undefined;
  return other === undefined
    ? undefined
    : `${lease} cannot be used with ${other}: Lease election and Kopf peering (or standalone) are different modes of coordination; choose one`;
}

/**
 * Sharding together with another mode of coordination, as a usage error's text naming both
 * (`--shards` or `KOPF_RUN_SHARDS` with `--lease`, `--peering`, `--priority`, `--dev`, or their
 * variables; `--standalone` is fine), or `--shard-id`/`--shard-key` without a ring.
 */
function shardingConflict(command: Command, opts: ParsedOptions, sources: environment.EnvSources): string | undefined {
  const source = (key: string, flags: string): string => environment.describeSource(command, sources, key, flags);
  if (opts.shards === undefined) {
    if (opts.shardId !== undefined) return `${source('shardId', '--shard-id <id>')} needs option '--shards <ring>' (or KOPF_RUN_SHARDS)`;
    if (opts.shardKey !== undefined) return `${source('shardKey', '--shard-key <key>')} needs option '--shards <ring>' (or KOPF_RUN_SHARDS)`;
    return undefined;
  }
  const shards = source('shards', '--shards <ring>');
  const other =
    opts.lease !== undefined
      ? source('lease', '--lease <name>')
      : opts.peering !== undefined
        ? source('peering', '-P, --peering <name>')
        : opts.dev
          ? source('dev', '--dev')
          : opts.priority !== undefined
            ? source('priority', '-p, --priority <priority>')
            : undefined;
  return other === undefined
    ? undefined
    : `${shards} cannot be used with ${other}: sharding, Lease election and Kopf peering are different modes of coordination; choose one`;
}

/** Peering options that contradict each other (one would do nothing), as a usage error's text. */
function peeringConflict(command: Command, opts: ParsedOptions, sources: environment.EnvSources): string | undefined {
  const source = (key: string, flags: string): string => environment.describeSource(command, sources, key, flags);
  const priority = opts.priority !== undefined && command.getOptionValueSource('priority') !== 'implied';
  if (opts.dev && priority) {
    return `${source('dev', '--dev')} and ${source('priority', '-p, --priority <priority>')} cannot be used together: --dev is priority 666`;
  }
  if (!opts.standalone) return undefined;
  const other =
    opts.peering !== undefined
      ? source('peering', '-P, --peering <name>')
      : opts.dev
        ? source('dev', '--dev')
        : priority
          ? source('priority', '-p, --priority <priority>')
          : undefined;
  return other === undefined ? undefined : `${source('standalone', '--standalone')} cannot be used together with ${other}: a standalone operator does not peer`;
}

/** `-A` and `-n` from the environment (the command line's own conflict is commander's). */
function scopeConflict(command: Command, opts: ParsedOptions, sources: environment.EnvSources): string | undefined {
  if (!opts.allNamespaces || (opts.namespace ?? []).length === 0) return undefined;
  const all = environment.describeSource(command, sources, 'allNamespaces', '-A, --all-namespaces');
  const some = environment.describeSource(command, sources, 'namespace', '-n, --namespace <pattern>');
  return `${all} cannot be used with ${some}`;
}

/**
 * Parses `run`'s arguments (without the command's own name). Every option may also come from its
 * `KOPF_RUN_<NAME>` variable (R-CLI-601; the command line wins). `-n` with `-A` is a usage error; the
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
    const sources = parseWithEnvironment(command, argv, runEnvironment(), env);
    const opts = command.opts<ParsedOptions>();
    const conflicts = [
      scopeConflict(command, opts, sources),
      shardingConflict(command, opts, sources),
      conflictingMode(command, opts, sources),
      peeringConflict(command, opts, sources),
    ];
    for (const conflict of conflicts) {
      if (conflict !== undefined) command.error(`error: ${conflict}`, { exitCode: 2, code: 'kopf-gen.conflictingOptions' });
    }
    const { metrics, metricsTlsDir } = opts;
    if (metricsTlsDir !== undefined && !(metrics !== undefined && endpoints.parseEndpointUrl(metrics, '--metrics', METRICS_SCHEMES).secure)) {
      command.error("error: option '--metrics-tls-dir <dir>' needs option '--metrics <url>' with an https:// URL", {
        exitCode: 2,
        code: 'kopf-gen.conflictingOptions',
      });
    }
    if (opts.liveness !== undefined) {
      try {
        endpoints.parseEndpointUrl(opts.liveness, environment.describeSource(command, sources, 'liveness', '-L, --liveness <url>'));
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
    priority: opts.dev ? 666 : opts.priority,
    peeringName: opts.peering,
    leaseName: opts.lease,
    leaseNamespace: opts.leaseNamespace,
    shards: opts.shards,
    shardIdentity: opts.shardId,
    shardKey: opts.shardKey,
    livenessEndpoint: opts.liveness,
    metricsEndpoint: opts.metrics,
    metricsTlsDir: opts.metricsTlsDir,
    logging: loggingOf(opts),
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
    ...(args.shards !== undefined ? { shards: args.shards } : {}),
    ...(args.shardIdentity !== undefined ? { shardIdentity: args.shardIdentity } : {}),
    ...(args.shardKey !== undefined ? { shardKey: args.shardKey } : {}),
    ...(args.livenessEndpoint !== undefined ? { livenessEndpoint: args.livenessEndpoint } : {}),
    ...(args.metricsEndpoint !== undefined ? { metricsEndpoint: args.metricsEndpoint } : {}),
    ...(args.metricsTlsDir !== undefined ? { metricsTlsDir: args.metricsTlsDir } : {}),
  });
}
