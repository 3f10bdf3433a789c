/**
 * The `freeze` and `resume` commands (R-PEER-9, R-CLI-2): a person pauses the operators that use
 * a peering object — for a maintenance window, or while debugging — by writing an entry of their
 * own with a high priority and a lifetime, and lets them go on by removing it. The operators react
 * as to any peer: lower priorities pause until the entry expires or is removed.
 *
 * `touchPeerings` logs in as an operator would (the service account or kubeconfig), discovers the
 * peering resources (`kopf.dev`, and the legacy `zalando.org` when served; both when both are),
 * and writes the entry into the named object cluster-wide (`-A`) or in each existing namespace that
 * matches a `-n` pattern, without starting an operator. With neither `-A` nor `-n` it warns and
 * falls back to the cluster-wide object, as Kopf does. The identity defaults to `<user>@<host>`
 * (R-PEER-3), the same for both commands, so `resume` removes what `freeze` wrote.
 *
 * The command line is Kopf's (R-CLI-602): the same options, each also read from
 * `KOPF_FREEZE_<NAME>` / `KOPF_RESUME_<NAME>`, the logging options of `run`, and Kopf's exit codes:
 * a peering object that does not exist is not an error (exit code 0, with a line saying so); a
 * cluster without the peering resource is (exit code 1).
 */

import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import * as clocks from '../../cogs/aio/clocks.js';
import * as api from '../../cogs/client/api.js';
import * as clientErrors from '../../cogs/client/errors.js';
import * as credentials from '../../cogs/client/credentials.js';
import * as settingsModule from '../../cogs/configs/settings.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import type * as references from '../../cogs/structs/references.js';
import * as logging from '../../core/actions/logging.js';
import * as activities from '../../core/engines/activities.js';
import * as identities from '../../core/engines/identities.js';
import * as peering from '../../core/engines/peering.js';
import * as memos from '../../core/intents/memos.js';
import * as observation from '../../core/reactor/observation.js';
import * as scopes from '../../core/reactor/options.js';
import * as environment from './environment.js';
import * as launching from './launching.js';
import * as outputs from './output.js';
import { PeeringResourceMissingError } from './errors.js';
import * as launchErrors from './errors.js';

/** What `freeze`/`resume` write, and where. */
export interface TouchOptions {
  /** The peering object's name. */
  readonly peeringName: string;
  /** Seconds the entry lives; 0 removes it (`resume`). */
  readonly lifetime: number;
  /** Default 100 (R-PEER-9). */
  readonly priority?: number;
  /** Default `<user>@<host>`. */
  readonly identity?: string;
  /** `KopfPeering` in the existing namespaces matching these patterns (R-SCOPE-2) when not `clusterwide`. */
  readonly namespaces: readonly string[];
  /** `ClusterKopfPeering`; also when no namespace is given (with Kopf's warning). */
  readonly clusterwide: boolean;
  /** Credentials to use; default: a vault filled by the built-in logins (service account, kubeconfig). */
  readonly vault?: credentials.Vault;
  readonly clock?: clocks.Clock;
  readonly signal?: AbortSignal;
}

/** What happened to one peering object. */
export interface TouchOutcome {
  /** E.g. `clusterkopfpeerings.kopf.dev`. */
  readonly resource: string;
  readonly namespace: string | null;
  readonly result: peering.TouchResult;
}

const logger = logging.getLogger('kopf.engines.peering');

/**
 * Writes (or, with lifetime 0, removes) the entry in every matching peering object.
 *
 * @returns one outcome per peering object (`not found` when the object does not exist); none when
 *   no existing namespace matches the patterns.
 * @throws PeeringResourceMissingError when the cluster has no peering CRD for the scope; the
 *   login's and the API's errors.
 */
export async function touchPeerings(options: TouchOptions): Promise<TouchOutcome[]> {
  const clock = options.clock ?? clocks.realClock;
  const signal = options.signal ?? new AbortController().signal;
  const scope = scopes.resolveScope({ clusterwide: options.clusterwide, namespaces: options.namespaces });
  const settings = new settingsModule.OperatorSettings();
  settings.peering.name = options.peeringName;
  settings.peering.priority = options.priority ?? 100;
  settings.peering.clusterwide = scope.clusterwide;
  const identity = options.identity ?? identities.detectOwnId({ manual: true, clock });
  const vault = options.vault ?? new credentials.Vault({ clock });
  if (vault.current().length === 0) {
    // A command, not an operator: the login's progress lines are noise; its problems are not.
    const base = logging.getLogger('kopf.activities.authentication');
    const quiet: loggers.Logger = {
      debug: () => undefined,
      info: () => undefined,
      warning: (m, e) => base.warning(m, e),
      error: (m, e) => base.error(m, e),
      critical: (m, e) => base.critical(m, e),
    };
    await activities.authenticate({ handlers: [], vault, settings, memo: new memos.Memo(), clock, signal, title: 'Authentication', logger: quiet });
  }
  const client = new api.HttpKubeApi({ vault, settings, clock, logger: logging.getLogger('kopf.clients', { lowLevel: true }) });
  try {
    const discovered = await client.scanResources(['kopf.dev', 'zalando.org'], { signal });
    const names = observation.peeringBackbone(scope.clusterwide);
    const resources = names.map((name) => observation.BACKBONE[name].select(discovered)[0]).filter((r): r is references.Resource => r !== undefined);
    if (resources.length === 0) {
      throw new PeeringResourceMissingError(
        `The cluster has no peering resource (${observation.BACKBONE[names[0]!].plural}.kopf.dev): apply Kopf's peering CRDs first (docs/peering.md).`,
      );
    }
    const namespaces = scope.clusterwide ? [null] : await servedNamespaces(client, scope.namespaces, signal);
    const outcomes: TouchOutcome[] = [];
    for (const resource of resources) {
      for (const namespace of namespaces) {
        const where: peering.PeeringScope = { api: client, settings, resource, namespace: resource.namespaced ? namespace : null, identity, logger, clock };
        const result = await peering.touch(where, { lifetime: options.lifetime, signal });
        outcomes.push({ resource: `${resource.plural}.${resource.group}`, namespace: where.namespace, result });
      }
    }
    return outcomes;
  } finally {
    client.close();
  }
}

/**
 * The existing namespaces that match the patterns, sorted (R-SCOPE-2), as an operator would serve
 * them; when namespaces cannot be listed (403), the plain names among the patterns, with Kopf's
 * warning (R-SCOPE-4).
 */
async function servedNamespaces(client: api.KubeApi, patterns: readonly observation.NamespacePattern[], signal: AbortSignal): Promise<string[]> {
  try {
    const listing = await client.list(observation.NAMESPACES, null, { signal });
    const names = listing.items.map((item) => item.metadata?.name).filter((name): name is string => typeof name === 'string');
    return names.filter((name) => observation.matchNamespaces(name, patterns)).sort();
  } catch (error) {
    if (!clientErrors.isForbidden(error)) throw error;
    const exact = observation.exactNamespaces(patterns);
    logging
      .getLogger('kopf.reactor.observation')
      .warning(
        `Not enough permissions to list namespaces. Falling back to a list of namespaces which are assumed to exist: [${exact.map((n) => `'${n}'`).join(', ')}]`,
      );
    return exact;
  }
}

function positive(value: string): number {
  const number = environment.parseInteger(value);
  if (number < 1) throw new InvalidArgumentError('Must be at least 1 second.');
  return number;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** The parsed command line of `freeze` or `resume`. */
export interface TouchArgs extends Omit<TouchOptions, 'vault' | 'clock' | 'signal'> {
  /** `freeze -m/--message`: said in the result lines (Kopf accepts it and writes it nowhere). */
  readonly message?: string;
  /**
   * For `logging.configure()`, when a logging option was given (on the command line or in the
   * environment); otherwise the process's log configuration is left as it is.
   */
  readonly logging?: logging.ConfigureOptions;
}

interface ParsedOptions extends launching.LoggingOptions {
  peering?: string;
  lifetime?: number;
  priority?: number;
  dev?: boolean;
  id?: string;
  message?: string;
  namespace?: string[];
  allNamespaces?: boolean;
}

/** The options of `freeze` (or `resume`) from the environment: Kopf's `KOPF_FREEZE_<NAME>` (`KOPF_RESUME_<NAME>`). */
function touchEnvironment(which: 'freeze' | 'resume'): environment.EnvOption[] {
  const p = which === 'freeze' ? 'KOPF_FREEZE' : 'KOPF_RESUME';
  const common: environment.EnvOption[] = [
    { key: 'namespace', envVars: environment.envVarsOf(p, 'namespaces'), kind: 'multiple' },
    { key: 'allNamespaces', envVars: environment.envVarsOf(p, 'clusterwide'), kind: 'flag' },
    { key: 'id', envVars: environment.envVarsOf(p, 'id'), kind: 'string' },
    { key: 'peering', envVars: environment.envVarsOf(p, 'peering_name', `${p}_PEERING`), kind: 'string' },
  ];
  const freezing: environment.EnvOption[] = [
    { key: 'dev', envVars: environment.envVarsOf(p, 'dev'), kind: 'flag' },
    { key: 'priority', envVars: environment.envVarsOf(p, 'priority'), kind: 'integer', parse: environment.parseInteger },
    { key: 'lifetime', envVars: environment.envVarsOf(p, 'lifetime'), kind: 'integer', parse: positive },
    { key: 'message', envVars: environment.envVarsOf(p, 'message'), kind: 'string' },
  ];
  return [...launching.loggingEnvironment(p), ...common, ...(which === 'freeze' ? freezing : [])];
}

/** The command of `freeze` or `resume`, for parsing and help. */
function touchCommandLine(which: 'freeze' | 'resume', name: string, output: outputs.CommandOutput): Command {
  const command = launching.addLoggingOptions(
    new Command(name).description(
      which === 'freeze'
        ? 'Pause the operators that use a peering object: write an entry with a higher priority that lives for --lifetime seconds.'
        : 'Resume the operators paused by freeze: remove the entry that freeze wrote.',
    ),
  );
  command
    .option('-n, --namespace <pattern>', 'the peering objects (KopfPeering) in the existing namespaces matching a pattern (repeatable)', collect)
    .addOption(new Option('-A, --all-namespaces', 'the cluster-wide peering object (ClusterKopfPeering); the default').conflicts('namespace'))
    .option('-i, --id <id>', 'the identity of the entry (default: <user>@<host>)');
  if (which === 'freeze') command.addOption(new Option('--dev', 'priority 666'));
  command.option('-P, --peering <name>', 'the peering object (required)');
  if (which === 'freeze') {
    command
      .addOption(new Option('-p, --priority <priority>', 'the priority of the entry').argParser(environment.parseInteger).default(100))
      .addOption(new Option('-t, --lifetime <seconds>', 'how long the freeze lasts, in seconds (required)').argParser(positive))
      .option('-m, --message <text>', 'why (said in the result; not written into the peering object)');
  }
  return command
    .helpOption('-h, --help', 'show this help')
    .exitOverride()
    .configureOutput({ writeOut: output.out, writeErr: output.err })
    .showHelpAfterError('(add --help for additional information)');
}

/**
 * Every option of `freeze` or `resume` with the variables it is read from (R-CLI-601), in the
 * order of `--help`: `[flags, variables]`.
 */
export function touchOptionVariables(which: 'freeze' | 'resume'): Array<[string, string[]]> {
  const command = touchCommandLine(which, which, { out: () => undefined, err: () => undefined });
  const specs = touchEnvironment(which);
  return command.options.map((option) => [option.flags, [...(specs.find((s) => s.key === option.attributeName() && !option.negate)?.envVars ?? [])]]);
}

/**
 * Parses `freeze`'s or `resume`'s arguments (without the command's own name), Kopf's options:
 * `-P/--peering NAME` (required), `-n NS` (repeatable; patterns) or `-A`, `-i/--id`, the logging
 * options; `freeze` also takes `-t/--lifetime SECONDS` (required), `-p/--priority N` (default 100),
 * `--dev` (666) and `-m/--message`. Every option may come from `KOPF_FREEZE_<NAME>` /
 * `KOPF_RESUME_<NAME>` (R-CLI-601).
 *
 * @returns the arguments, or `null` if help was requested (and printed).
 * @throws launchErrors.UsageError (the message was printed to `output.err`).
 */
export function parseTouchArgs(
  which: 'freeze' | 'resume',
  argv: readonly string[],
  options: {
    readonly env?: NodeJS.ProcessEnv;
    readonly output?: outputs.CommandOutput;
    readonly name?: string;
  },
): TouchArgs | null {
  const output = options.output ?? outputs.processOutput;
  const env = options.env ?? process.env;
  const command = touchCommandLine(which, options.name ?? which, output);
  const specs = touchEnvironment(which);
  const variables = (key: string): string => specs.find((s) => s.key === key)!.envVars.join(' or ');
  try {
    const sources = launching.parseWithEnvironment(command, argv, specs, env);
    const opts = command.opts<ParsedOptions>();
    const source = (key: string, flags: string): string => environment.describeSource(command, sources, key, flags);
    if (opts.allNamespaces && (opts.namespace ?? []).length > 0) {
      command.error(`error: ${source('allNamespaces', '-A, --all-namespaces')} cannot be used with ${source('namespace', '-n, --namespace <pattern>')}`, {
        exitCode: 2,
        code: 'kopf-gen.conflictingOptions',
      });
    }
    if (opts.dev && command.getOptionValueSource('priority') !== 'default') {
      command.error(`error: ${source('dev', '--dev')} and ${source('priority', '-p, --priority <priority>')} cannot be used together: --dev is priority 666`, {
        exitCode: 2,
        code: 'kopf-gen.conflictingOptions',
      });
    }
    if (opts.peering === undefined) {
      command.error(`error: required option '-P, --peering <name>' not specified (or the environment variable ${variables('peering')})`, {
        exitCode: 2,
        code: 'kopf-gen.missingMandatoryOptionValue',
      });
    }
    if (which === 'freeze' && opts.lifetime === undefined) {
      command.error(`error: required option '-t, --lifetime <seconds>' not specified (or the environment variable ${variables('lifetime')})`, {
        exitCode: 2,
        code: 'kopf-gen.missingMandatoryOptionValue',
      });
    }
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) return null;
      throw new launchErrors.UsageError(error.message.replace(/^error: /, ''));
    }
    throw error;
  }
  const opts = command.opts<ParsedOptions>();
  const configured = ['verbose', 'debug', 'quiet', 'logFormat', 'logPrefix', 'logRefkey'].some((key) => {
    const source = command.getOptionValueSource(key);
    return source === 'cli' || source === 'env';
  });
  return {
    peeringName: opts.peering!,
    lifetime: which === 'freeze' ? opts.lifetime! : 0,
    priority: which === 'freeze' ? (opts.dev ? 666 : opts.priority) : undefined,
    identity: opts.id,
    clusterwide: opts.allNamespaces === true,
    namespaces: opts.namespace ?? [],
    ...(opts.message !== undefined ? { message: opts.message } : {}),
    ...(configured ? { logging: launching.loggingOf(opts) } : {}),
  };
}

/** One line per peering object for the person at the terminal. */
export function describeOutcome(which: 'freeze' | 'resume', args: TouchArgs, identity: string, outcome: TouchOutcome): string {
  const where = `${peering.describeObject(args.peeringName, outcome.namespace)} (${outcome.resource})`;
  if (outcome.result === 'not found') return `The peering object ${where} does not exist: nothing to ${which}.`;
  const why = args.message !== undefined ? ` (${args.message})` : '';
  return which === 'freeze'
    ? `Frozen ${where} for ${args.lifetime} seconds: the entry of ${identity} has priority ${args.priority ?? 100}${why}.`
    : `Resumed ${where}: the entry of ${identity} is removed.`;
}
