/**
 * Activities: the operator-level handlers — startup, cleanup, login and probes (R-ACTIVITY,
 * R-AUTH-1..3) — and the authenticator that keeps the credentials vault filled.
 *
 * An activity runs all its handlers "in one go", then retries the unfinished ones together until
 * each has finished (R-ACTIVITY-1/2): the same `execution` machinery as change handlers (retry
 * rules of R-ERRORS, default mode TEMPORARY, `retries`/`timeout`/`backoff`), with an in-memory
 * `progression.State` instead of persisted records, and Kopf's `Activity '<id>'` wording in the
 * logs (R-ACTIVITY-5). Handlers get the activity kwargs of R-KWARGS-7; there is no object, no
 * patch and no sub-handler. If any handler fails for good, `runActivity` rejects with an
 * `ActivityError` (the startup failure that stops the operator, R-ACTIVITY-1).
 *
 * The authentication activity is the login: its handlers return `ConnectionInfo`s (or null), which
 * populate the `Vault`; without any login handler registered, the built-in logins of R-AUTH-2 are
 * used (service account, then kubeconfig). The `authenticator` task re-runs it whenever the vault
 * runs empty (R-AUTH-3), with Kopf's exact INFO/WARNING lines. The reactor's `roots` schedules
 * both. Probes are not retried activities: `probing` invokes them once per evaluation, with the
 * same kwargs (R-ACTIVITY-4).
 */

import * as aborts from '../../cogs/aio/aborts.js';
import type * as clocks from '../../cogs/aio/clocks.js';
import * as clients from '../../cogs/client/clients.js';
import type * as credentials from '../../cogs/client/credentials.js';
import * as connections from '../../cogs/client/connections.js';
import type * as logins from '../../cogs/client/logins.js';
import type * as settings from '../../cogs/configs/settings.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as errors from '../actions/errors.js';
import * as execution from '../actions/execution.js';
import * as invocation from '../actions/invocation.js';
import * as lifecycles from '../actions/lifecycles.js';
import * as logging from '../actions/logging.js';
import type * as outcomes from '../actions/outcomes.js';
import * as progression from '../actions/progression.js';
import type * as callbacks from '../intents/callbacks.js';
import type * as handlers from '../intents/handlers.js';
import { ActivityError } from './errors.js';

/** The longest sleep between retries of an activity, seconds (Kopf: `WAITING_KEEPALIVE_INTERVAL`). */
export const WAITING_KEEPALIVE_INTERVAL = 10 * 60;

/** What an activity needs from the operator. */
export interface ActivityOptions {
  readonly activity: callbacks.ActivityName;
  /** The handlers to run, e.g. `registry.activityHandlers('startup')`. */
  readonly handlers: readonly execution.Invocable[];
  /** Passed as `settings` (startup handlers may change it, R-ACTIVITY-1). */
  readonly settings: settings.OperatorSettings;
  /** The operator memo, passed as `memo`. */
  readonly memo: object;
  readonly clock: clocks.Clock;
  /** Cancels the running handlers and the sleeps between retries (the activity then rejects). */
  readonly signal: AbortSignal;
  /** Default: the framework logger `kopf.activities.<activity>`; handlers get it as `logger`. */
  readonly logger?: loggers.Logger;
  /** Index names → indices, added to the kwargs (R-INDEX-8). */
  readonly indices?: Readonly<Record<string, unknown>>;
  /** Default `lifecycles.allAtOnce` (Kopf's choice for activities). */
  readonly lifecycle?: lifecycles.Lifecycle;
}

/**
 * Rewrites execution's `Handler '<id>' …` messages as `Activity '<id>' …` (R-ACTIVITY-5).
 * Messages of the handlers themselves go to the unwrapped logger, untouched.
 */
export function activityLogger(base: loggers.Logger): loggers.Logger {
  return logging.titledLogger(base, 'Activity');
}

/**
 * Runs the handlers of one activity until each has finished (R-ACTIVITY-1/2): all awakened ones
 * in one go, then sleeps until the next one is due and repeats. Errors follow R-ERRORS (default
 * mode TEMPORARY); logs say `Activity '<id>' succeeded.` etc.
 *
 * @returns the results of the handlers that succeeded, by handler id (empty without handlers).
 * @throws ActivityError if any handler failed for good (after all others have finished).
 * @throws the signal's reason if `signal` aborts meanwhile.
 * @example
 * await runActivity({ activity: 'startup', handlers: registry.activityHandlers('startup'), settings, memo, clock, signal });
 */
export async function runActivity(options: ActivityOptions): Promise<Map<string, unknown>> {
  const { activity, handlers, settings, memo, clock, signal } = options;
  const base = options.logger ?? logging.getLogger(`kopf.activities.${activity}`);
  const scope: execution.ExecutionScope = {
    settings,
    clock,
    signal,
    logger: activityLogger(base),
    lifecycle: options.lifecycle ?? lifecycles.allAtOnce,
    defaultErrors: errors.ErrorsMode.TEMPORARY,
    kwargs: (handler, retry) => activityKwargs({ activity, handler, retry, logger: base, memo, settings, signal, indices: options.indices }),
  };
  let state = progression.State.fromScratch().withHandlers(
    handlers.map((handler) => handler.id),
    clock.now(),
  );
  const last = new Map<string, outcomes.Outcome>();
  while (!state.done) {
    signal.throwIfAborted();
    const results = await execution.executeHandlersOnce({ handlers, state, scope });
    for (const [id, outcome] of results) last.set(id, outcome);
    state = state.withOutcomes(results, clock.now());
    const delay = state.delay(clock.now());
    if (!state.done && delay !== null && delay > 0) await clock.sleep(Math.min(delay, WAITING_KEEPALIVE_INTERVAL) * 1000, signal);
  }
  const failures = [...last.values()].filter((outcome) => outcome.error !== undefined);
  if (failures.length > 0) {
    throw new ActivityError('One or more handlers failed.', { outcomes: last, cause: failures[0]!.error });
  }
  return new Map([...last].map(([id, outcome]) => [id, outcome.result]));
}

const NO_CLIENT_IN_LOGINS = clients.refusingClient(
  () => new errors.PermanentError('`client` is not available to login handlers: they provide the credentials it would wait for.'),
);
const NO_CLIENT_IN_STARTUP = clients.refusingClient(
  () =>
    new errors.PermanentError(
      '`client` is not available to startup handlers: the operator logs in after the startup activity. ' +
        'Use it in other handlers, or make a client of your own with connect().',
    ),
);

/** The kwargs of an activity handler (R-KWARGS-7), computed lazily; indices override built-ins. */
export function activityKwargs(options: {
  readonly activity: callbacks.ActivityName;
  readonly handler: execution.Invocable;
  readonly retry: execution.RetryKwargs;
  readonly logger: loggers.Logger;
  readonly memo: object;
  readonly settings: settings.OperatorSettings;
  readonly signal: AbortSignal;
  readonly indices?: Readonly<Record<string, unknown>>;
}): object {
  const { retry } = options;
  const getters: Record<string, () => unknown> = {
    activity: () => options.activity,
    logger: () => options.logger,
    memo: () => options.memo,
    settings: () => options.settings,
    param: () => options.handler.param,
    retry: () => retry.retry,
    started: () => retry.started,
    runtime: () => retry.runtime,
    signal: () => options.signal,
    // Both run before the operator has credentials: their calls would wait for them forever.
    client: () =>
      options.activity === 'authentication' ? NO_CLIENT_IN_LOGINS : options.activity === 'startup' ? NO_CLIENT_IN_STARTUP : invocation.currentClient(),
  };
  for (const [name, index] of Object.entries(options.indices ?? {})) getters[name] = () => index;
  return invocation.lazyKwargs(getters);
}

/** A built-in login used when no login handler is registered (R-AUTH-2); its failures go to `failures`. */
function fallbackLogin(id: string, fn: () => credentials.ConnectionInfo | null, failures?: string[]): execution.Invocable {
  // Kopf registers its fallbacks with errors=IGNORED: a broken kubeconfig is logged, not retried.
  const call = (): credentials.ConnectionInfo | null => {
    try {
      return fn();
    } catch (error) {
      failures?.push(`${id} failed: ${errors.describeError(error)}`);
      throw error;
    }
  };
  return { id, fn: call, errors: errors.ErrorsMode.IGNORED, param: undefined };
}

/**
 * The built-in logins of R-AUTH-2, in Kopf's order: the in-cluster service account (priority 20),
 * then kubeconfig files (priority 10). Each returns null when it does not apply. Explicit
 * connection options replace them (`connections.builtinLogins`): a given `connection` or
 * `kubeconfig`, or the environment (`env`) they read instead of `process.env`.
 *
 * @param failures collects `<id> failed: <message>` of the logins that throw.
 */
export function fallbackLogins(
  failures?: string[],
  connection?: connections.ConnectionOptions,
  plugins?: logins.PluginOptions,
): readonly execution.Invocable[] {
  return connections.builtinLogins(connection, plugins).map((login) => fallbackLogin(login.id, login.fn, failures));
}

/**
 * The login handlers to run: the registered ones, or the built-in fallbacks if there are none.
 * An explicit connection (`connection`, `kubeconfig`) runs in any case, beside registered ones.
 *
 * @param failures collects the failures of the built-in logins (see `fallbackLogins()`).
 */
export function loginHandlers(
  registered: readonly handlers.ActivityHandler[],
  failures?: string[],
  connection?: connections.ConnectionOptions,
  plugins?: logins.PluginOptions,
): readonly execution.Invocable[] {
  if (connections.isExplicit(connection)) return [...registered, ...fallbackLogins(failures, connection, plugins)];
  return registered.length > 0 ? registered : fallbackLogins(failures, connection, plugins);
}

/** What authentication needs: the activity's options without the activity and with the vault. */
export interface AuthenticationOptions extends Omit<ActivityOptions, 'activity' | 'handlers' | 'logger'> {
  /** The registered login handlers (`registry.activityHandlers('authentication')`). */
  readonly handlers: readonly handlers.ActivityHandler[];
  readonly vault: credentials.Vault;
  /** Default: `kopf.activities.authentication` (the activity's and these lines' logger, P-30). */
  readonly logger?: loggers.Logger;
  /** Where the built-in logins get credentials (the operator's explicit connection); default: discovery. */
  readonly connection?: connections.ConnectionOptions;
}

/**
 * Runs the login activity once and puts its credentials into the vault (R-AUTH-1..3): INFO
 * `<title> has been initiated.`, then `<title> has finished.`, or the WARNING
 * `<title> has failed: no credentials were retrieved from the login handlers.` when every login
 * returned null — the vault is then exhausted and API calls fail with `LoginError`. When that
 * happens with the built-in logins, the error says exactly why: what they looked for and did not
 * find (`logins.noCredentialsMessage()`), or how they failed.
 *
 * @param title `Initial authentication`, `Re-authentication` (Kopf's wording) or anything else.
 * @returns how many credentials the vault accepted.
 * @throws ActivityError if a login handler failed for good; the signal's reason on abort.
 */
export async function authenticate(options: AuthenticationOptions & { readonly title?: string }): Promise<number> {
  const logger = options.logger ?? logging.getLogger('kopf.activities.authentication');
  const title = options.title ?? 'Authentication';
  logger.info(`${title} has been initiated.`);
  const failures: string[] = [];
  const results = await runActivity({
    ...options,
    activity: 'authentication',
    handlers: loginHandlers(options.handlers, failures, options.connection, { timeout: options.settings.networking.execPluginTimeout }),
    logger,
  });
  const found = [...results].filter((entry): entry is [string, credentials.ConnectionInfo] => entry[1] !== null && entry[1] !== undefined);
  if (found.length > 0) logger.info(`${title} has finished.`);
  else logger.warning(`${title} has failed: no credentials were retrieved from the login handlers.`);
  const builtin = (options.handlers.length === 0 || connections.isExplicit(options.connection)) && found.length === 0;
  const reason = !builtin ? undefined : failures.length > 0 ? `No credentials: ${failures.join('; ')}` : connections.noCredentialsMessage(options.connection);
  return options.vault.populate(found, { reason });
}

/**
 * The authenticator task (Kopf: `authenticator`): whenever the vault is depleted — at start, after
 * the last credentials were invalidated by HTTP 401, or when they expire — re-runs the login
 * activity (`Initial authentication` the first time, `Re-authentication` afterwards). Expirations
 * are noticed on time (not only on the next request). If a login brings nothing valid, it waits
 * until the vault is refilled by other means (API calls fail with `LoginError` meanwhile, which
 * stops the operator). Resolves when `signal` aborts.
 *
 * @throws ActivityError if a login handler failed for good (this stops the operator).
 */
export async function authenticator(options: AuthenticationOptions): Promise<void> {
  const { vault, clock, signal } = options;
  let counter = vault.current().length > 0 ? 1 : 0;
  try {
    for (;;) {
      await waitForDepletion(vault, clock, signal);
      await authenticate({ ...options, title: counter > 0 ? 'Re-authentication' : 'Initial authentication' });
      counter += 1;
      if (vault.depleted.isOn()) await vault.depleted.waitFor(false, signal);
    }
  } catch (error) {
    if (signal.aborted && (error === signal.reason || aborts.isAbortError(error))) return;
    throw error;
  }
}

/** Waits until the vault is depleted, checking expirations when the soonest one is due. */
async function waitForDepletion(vault: credentials.Vault, clock: clocks.Clock, signal: AbortSignal): Promise<void> {
  for (;;) {
    const expirations = vault.current().flatMap((item) => (item.info.expiration ? [item.info.expiration.getTime()] : []));
    if (vault.depleted.isOn()) return;
    if (expirations.length === 0) return await vault.depleted.waitFor(true, signal);
    const due = Math.max(0, Math.min(...expirations) - clock.now());
    const timer = new AbortController();
    const both = aborts.anySignal([signal, timer.signal]);
    const sleeping = clock.sleep(due, both).then(
      () => timer.abort(),
      () => undefined,
    );
    try {
      await vault.depleted.waitFor(true, both);
      return;
    } catch (error) {
      if (signal.aborted) throw error;
    } finally {
      timer.abort();
      await sleeping;
    }
  }
}
