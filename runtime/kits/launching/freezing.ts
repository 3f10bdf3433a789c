/**
 * The `freeze` and `resume` commands (R-PEER-9, R-CLI-2): a person pauses the operators that use
 * a peering object — for a maintenance window, or while debugging — by writing an entry of their
 * own with a high priority and a lifetime, and lets them go on by removing it. The operators react
 * as to any peer: lower priorities pause until the entry expires or is removed.
 *
 * `touchPeerings` logs in as an operator would (the service account or kubeconfig), discovers the
 * peering resources (`kopf.dev`, and the legacy `zalando.org` when served; both when both are),
 * and writes the entry into the named object cluster-wide (`-A`) or in each namespace given
 * (`-n`), without starting an operator. The identity defaults to `<user>@<host>` (R-PEER-3), the
 * same for both commands, so `resume` removes what `freeze` wrote. Unlike Kopf, a missing peering
 * resource or object is an error (exit code 1) rather than a silent success.
 */

import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import * as clocks from '../../cogs/aio/clocks.js';
import * as api from '../../cogs/client/api.js';
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
  /** `KopfPeering` in these namespaces when not `clusterwide`. */
  readonly namespaces: readonly string[];
  /** `ClusterKopfPeering`. */
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

/**
 * Writes (or, with lifetime 0, removes) the entry in every matching peering object.
 *
 * @returns one outcome per peering object (`not found` when the object does not exist).
 * @throws PeeringResourceMissingError when the cluster has no peering CRD for the scope; the
 *   login's and the API's errors.
 */
export async function touchPeerings(options: TouchOptions): Promise<TouchOutcome[]> {
  const clock = options.clock ?? clocks.realClock;
  const signal = options.signal ?? new AbortController().signal;
  const settings = new settingsModule.OperatorSettings();
  settings.peering.name = options.peeringName;
  settings.peering.priority = options.priority ?? 100;
  settings.peering.clusterwide = options.clusterwide;
  const identity = options.identity ?? identities.detectOwnId({ manual: true, clock });
  const vault = options.vault ?? new credentials.Vault({ clock });
  if (vault.current().length === 0) {
    // A command, not an operator: the login's progress lines are noise; its problems are not.
    const base = logging.getLogger('kopf.activities.authentication');
    const logger: loggers.Logger = {
      debug: () => undefined,
      info: () => undefined,
      warning: (m, e) => base.warning(m, e),
      error: (m, e) => base.error(m, e),
      critical: (m, e) => base.critical(m, e),
    };
    await activities.authenticate({ handlers: [], vault, settings, memo: new memos.Memo(), clock, signal, title: 'Authentication', logger });
  }
  const client = new api.HttpKubeApi({ vault, settings, clock, logger: logging.getLogger('kopf.clients', { lowLevel: true }) });
  try {
    const discovered = await client.scanResources(['kopf.dev', 'zalando.org'], { signal });
    const names = observation.peeringBackbone(options.clusterwide);
    const resources = names.map((name) => observation.BACKBONE[name].select(discovered)[0]).filter((r): r is references.Resource => r !== undefined);
    if (resources.length === 0) {
      throw new PeeringResourceMissingError(
        `The cluster has no peering resource (${observation.BACKBONE[names[0]!].plural}.kopf.dev): apply Kopf's peering CRDs first (docs/peering.md).`,
      );
    }
    const namespaces = options.clusterwide ? [null] : options.namespaces;
    const logger = logging.getLogger('kopf.engines.peering');
    const outcomes: TouchOutcome[] = [];
    for (const resource of resources) {
      for (const namespace of namespaces) {
        const scope: peering.PeeringScope = { api: client, settings, resource, namespace: resource.namespaced ? namespace : null, identity, logger, clock };
        const result = await peering.touch(scope, { lifetime: options.lifetime, signal });
        outcomes.push({ resource: `${resource.plural}.${resource.group}`, namespace: scope.namespace, result });
      }
    }
    return outcomes;
  } finally {
    client.close();
  }
}

function integer(value: string): number {
  if (!/^[+-]?\d+$/.test(value.trim())) throw new InvalidArgumentError('Not an integer.');
  return Number(value);
}

function positive(value: string): number {
  const number = integer(value);
  if (number < 1) throw new InvalidArgumentError('Must be at least 1 second.');
  return number;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** The parsed command line of `freeze` or `resume`. */
export type TouchArgs = Omit<TouchOptions, 'vault' | 'clock' | 'signal'>;

interface ParsedOptions {
  peering?: string;
  lifetime?: number;
  priority?: number;
  dev?: boolean;
  id?: string;
  namespace?: string[];
  allNamespaces?: boolean;
}

/**
 * Parses `freeze`'s or `resume`'s arguments (without the command's own name): `-P/--peering NAME`
 * (or `KOPF_FREEZE_PEERING`/`KOPF_RESUME_PEERING`), `-n NS` (repeatable) or `-A`, `-i/--id`;
 * `freeze` also takes `-t/--lifetime SECONDS` (required), `-p/--priority N` (default 100) and
 * `--dev` (666).
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
  const envName = which === 'freeze' ? 'KOPF_FREEZE_PEERING' : 'KOPF_RESUME_PEERING';
  const command = new Command(options.name ?? which)
    .description(
      which === 'freeze'
        ? 'Pause the operators that use a peering object: write an entry with a higher priority that lives for --lifetime seconds.'
        : 'Resume the operators paused by freeze: remove the entry that freeze wrote.',
    )
    .addOption(new Option('-P, --peering <name>', `the peering object (env: ${envName})`))
    .addOption(new Option('-A, --all-namespaces', 'the cluster-wide peering object (ClusterKopfPeering)').conflicts('namespace'))
    .option('-n, --namespace <namespace>', 'the peering object in this namespace (KopfPeering; repeatable)', collect)
    .option('-i, --id <id>', 'the identity of the entry (default: <user>@<host>)');
  if (which === 'freeze') {
    command
      .addOption(new Option('-t, --lifetime <seconds>', 'how long the freeze lasts, in seconds').argParser(positive).makeOptionMandatory())
      .addOption(new Option('-p, --priority <priority>', 'the priority of the entry').argParser(integer).default(100))
      .addOption(new Option('--dev', 'priority 666'));
  }
  command
    .helpOption('-h, --help', 'show this help')
    .exitOverride()
    .configureOutput({ writeOut: output.out, writeErr: output.err })
    .showHelpAfterError('(add --help for additional information)');
  try {
    command.parse([...argv], { from: 'user' });
    const opts = command.opts<ParsedOptions>();
    if (opts.dev && command.getOptionValueSource('priority') === 'cli') {
      command.error("error: options '--dev' and '-p, --priority <priority>' cannot be used together: --dev is priority 666", {
        exitCode: 2,
        code: 'kopf-gen.conflictingOptions',
      });
    }
    if (opts.peering === undefined && !env[envName]) {
      command.error(`error: required option '-P, --peering <name>' not specified (or the environment variable ${envName})`, {
        exitCode: 2,
        code: 'kopf-gen.missingMandatoryOptionValue',
      });
    }
    if (!opts.allNamespaces && (opts.namespace ?? []).length === 0) {
      command.error("error: either '-A, --all-namespaces' or '-n, --namespace <namespace>' is required", { exitCode: 2, code: 'kopf-gen.missingScope' });
    }
    const wildcard = (opts.namespace ?? []).find((ns) => /[*?[\]!,]/.test(ns));
    if (wildcard !== undefined) {
      command.error(`error: option '-n, --namespace <namespace>' takes namespace names, not patterns: ${JSON.stringify(wildcard)}`, {
        exitCode: 2,
        code: 'kopf-gen.invalidOption',
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
  return {
    peeringName: opts.peering ?? env[envName]!,
    lifetime: which === 'freeze' ? opts.lifetime! : 0,
    priority: which === 'freeze' ? (opts.dev ? 666 : opts.priority) : undefined,
    identity: opts.id,
    clusterwide: opts.allNamespaces === true,
    namespaces: opts.namespace ?? [],
  };
}

/** One line per peering object for the person at the terminal. */
export function describeOutcome(which: 'freeze' | 'resume', args: TouchArgs, identity: string, outcome: TouchOutcome): string {
  const where = `${peering.describeObject(args.peeringName, outcome.namespace)} (${outcome.resource})`;
  if (outcome.result === 'not found') return `The peering object ${where} does not exist.`;
  return which === 'freeze'
    ? `Frozen ${where} for ${args.lifetime} seconds: the entry of ${identity} has priority ${args.priority ?? 100}.`
    : `Resumed ${where}: the entry of ${identity} is removed.`;
}
