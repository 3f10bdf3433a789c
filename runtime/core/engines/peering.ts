/**
 * Peering (R-PEER): operators that serve the same resources tell each other that they are alive
 * through one peering object, and the ones with lower priorities pause while a higher one runs.
 * This is how a developer's operator on a workstation (`--dev`, priority 666) silences the
 * deployed one, and how `freeze` silences all of them for a while. It is wire-compatible with
 * Kopf: the same objects (`ClusterKopfPeering`/`KopfPeering`), the same records (`peers`), the same
 * log lines, so Python Kopf operators and kopf-gen operators pause and resume each other.
 *
 * Two tasks per peering object (a peering resource in a served namespace, or cluster-wide):
 *
 * - `keepAlive` writes this operator's entry every `lifetime − random(5..10)` seconds (at least 1),
 *   and removes it (a merge-patch to null) when it stops. A missing object is not an error: the
 *   DEBUG line `Keep-alive in 'default' cluster-wide: not found.` and nothing else (auto-detection
 *   runs as standalone then). Other failures are logged as one ERROR line and retried.
 * - `observePeering` watches the peering resource and evaluates every event of the named object:
 *   dead entries are removed, then the operator pauses in favour of a higher priority, pauses
 *   everyone for a conflict of equal priorities, or resumes (the exact lines of Kopf); then it
 *   sleeps until the earliest deadline of the peers that block it — a newer event interrupts the
 *   sleep — and, if nothing changed meanwhile, touches its own entry so that the resulting event
 *   re-evaluates the peers (whoever died is removed then). Errors of the watch are logged and
 *   retried after a back-off: peering never stops the operator.
 *
 * The pause itself is a `Toggle` the caller owns (one per peering object, in the operator's
 * `paused` set); what pausing means — closed watch-streams, stopped daemons — is done by those who
 * watch that set. Time and randomness are injected.
 */

import * as aborts from '../../cogs/aio/aborts.js';
import type * as clocks from '../../cogs/aio/clocks.js';
import type * as toggles from '../../cogs/aio/toggles.js';
import type * as api from '../../cogs/client/api.js';
import * as clientErrors from '../../cogs/client/errors.js';
import * as watching from '../../cogs/client/watching.js';
import type * as settingsModule from '../../cogs/configs/settings.js';
import type * as bodies from '../../cogs/structs/bodies.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import type * as references from '../../cogs/structs/references.js';
import * as errors from '../actions/errors.js';
import * as peers from './peers.js';

/** One peering object: which resource, where, and who we are in it. */
export interface PeeringScope {
  readonly api: api.KubeApi;
  readonly settings: settingsModule.OperatorSettings;
  /** The peering resource (`ClusterKopfPeering` or `KopfPeering`, of either group). */
  readonly resource: references.Resource;
  /** The namespace of a `KopfPeering`; `null` for `ClusterKopfPeering`. */
  readonly namespace: string | null;
  /** This operator's identity (R-PEER-3). */
  readonly identity: string;
  readonly logger: loggers.Logger;
  readonly clock: clocks.Clock;
}

/** How one touch ended. */
export type TouchResult = 'ok' | 'not found';

function where(namespace: string | null): string {
  return namespace === null ? 'cluster-wide' : `in '${namespace}'`;
}

/** `'default' cluster-wide` or `'default' in 'ns'`, as in Kopf's lines. */
export function describeObject(name: string, namespace: string | null): string {
  return `'${name}' ${where(namespace)}`;
}

/**
 * Writes this operator's entry with a fresh `lastseen` (or removes it, for `lifetime` 0 or less:
 * an entry that is dead at once is written as null, as Kopf does). A missing object (404) is
 * `not found`, logged at DEBUG; the result is logged at DEBUG unless `settings.peering.stealth`.
 *
 * @throws the API's errors other than 404 (after the client's own retries); the signal's reason.
 */
export async function touch(scope: PeeringScope, options: { readonly lifetime?: number; readonly signal?: AbortSignal } = {}): Promise<TouchResult> {
  const { settings, identity } = scope;
  const { name, priority } = settings.peering;
  const lifetime = options.lifetime ?? settings.peering.lifetime;
  const entry = lifetime <= 0 ? null : peers.recordOf(priority, lifetime, scope.clock.now());
  let result: TouchResult = 'ok';
  try {
    await scope.api.patch(scope.resource, scope.namespace, name, { status: { [identity]: entry } }, { signal: options.signal });
  } catch (error) {
    if (!(error instanceof clientErrors.ApiNotFoundError)) throw error;
    result = 'not found';
  }
  if (!settings.peering.stealth || result !== 'ok') scope.logger.debug(`Keep-alive in ${describeObject(name, scope.namespace)}: ${result}.`);
  return result;
}

/** Removes the entries of the given peers (dead ones) in one merge-patch; a missing object is fine. */
export async function clean(scope: PeeringScope, gone: readonly peers.Peer[], signal?: AbortSignal): Promise<void> {
  if (gone.length === 0) return;
  const status = Object.fromEntries(gone.map((peer) => [peer.identity, null]));
  try {
    await scope.api.patch(scope.resource, scope.namespace, scope.settings.peering.name, { status }, { signal });
  } catch (error) {
    if (!(error instanceof clientErrors.ApiNotFoundError)) throw error;
  }
}

/** The seconds between two keep-alives: `lifetime − random(5..10)`, at least 1, at most `lifetime`. */
export function keepAliveInterval(lifetime: number, random: () => number): number {
  const jitter = 5 + Math.min(5, Math.floor(random() * 6));
  return Math.max(1, Math.min(lifetime, Math.max(1, lifetime - jitter)));
}

/** What the keep-alive task needs beyond the scope. */
export interface KeepAliveOptions {
  /** Stops the keep-alives; the entry is then removed. */
  readonly signal: AbortSignal;
  /** Aborts the removal too (the operator gives up on hung work). */
  readonly cancel?: AbortSignal;
  /** A number in [0, 1) for the jitter; default `Math.random`. */
  readonly random?: () => number;
}

/**
 * Keeps this operator's entry fresh until `signal` aborts (R-PEER-5), then removes it. Never
 * throws: failures are logged (one ERROR line each) and the next keep-alive comes at the usual time
 * (sooner after a failure: within 10 seconds), since a stale entry would let peers believe this
 * operator is dead.
 */
export async function keepAlive(scope: PeeringScope, options: KeepAliveOptions): Promise<void> {
  const { signal } = options;
  const random = options.random ?? Math.random;
  const what = describeObject(scope.settings.peering.name, scope.namespace);
  try {
    while (!signal.aborted) {
      let failed = false;
      try {
        await touch(scope, { signal });
      } catch (error) {
        if (signal.aborted) break;
        failed = true;
        // A 403 was reported once by the client (R-SEC-1): not again every keep-alive.
        const line = `Keep-alive in ${what} has failed: ${errors.errorMessage(error)}`;
        if (clientErrors.isForbidden(error)) scope.logger.debug(line);
        else scope.logger.error(line);
      }
      const interval = keepAliveInterval(scope.settings.peering.lifetime, random);
      if (!(await aborts.sleepOrAbort(scope.clock, (failed ? Math.min(interval, 10) : interval) * 1000, signal))) break;
    }
  } finally {
    try {
      await touch(scope, { lifetime: 0, signal: options.cancel });
    } catch (error) {
      // Kopf's line verbatim; the error's stack follows it, as after Kopf's logger.exception().
      if (!options.cancel?.aborted) scope.logger.error("Couldn't remove self from the peering. Ignoring.", { error });
    }
  }
}

/** What the observer needs beyond the scope. */
export interface ObserverOptions {
  /** On while this peering object asks the operator to pause. */
  readonly conflicts: toggles.Toggle;
  readonly signal: AbortSignal;
  /** Seconds to wait before re-watching after a failed watch; default `settings.watching.reconnectBackoff`, at least 1. */
  readonly retryDelay?: number;
}

/**
 * Evaluates one state of the peering object (R-PEER-6) and turns `conflicts` on or off, with
 * Kopf's log lines. Removes dead entries. Returns the milliseconds until the earliest deadline of
 * the peers that block this operator (empty when none does).
 */
export async function evaluate(
  scope: PeeringScope,
  body: bodies.RawBody,
  conflicts: toggles.Toggle,
  reported: Set<string>,
  signal?: AbortSignal,
): Promise<number[]> {
  const { settings, identity, logger } = scope;
  const now = scope.clock.now();
  const verdict = peers.judge(body['status'], identity, settings.peering.priority, now);
  for (const entry of verdict.malformed) {
    const key = `${entry.identity}\u0000${entry.reason}`;
    if (reported.has(key)) continue;
    reported.add(key);
    logger.warning(`Ignoring the peering entry '${entry.identity}' in ${describeObject(settings.peering.name, scope.namespace)}: ${entry.reason}.`);
  }
  await clean(scope, verdict.dead, signal);

  if (verdict.higher.length > 0) {
    if (conflicts.isOff()) {
      logger.info(`Pausing operations in favour of ${peers.describePeers(verdict.higher)}.`);
      conflicts.turnOn();
    }
  } else if (verdict.same.length > 0) {
    logger.warning(`Possibly conflicting operators with the same priority: ${peers.describePeers(verdict.same)}.`);
    if (conflicts.isOff()) {
      logger.warning(`Pausing all operators, including self: ${peers.describePeers(verdict.peers)}`);
      conflicts.turnOn();
    }
  } else if (conflicts.isOn()) {
    logger.info('Resuming operations after the pause. Conflicting operators with the same priority are gone.');
    conflicts.turnOff();
  }
  return [...verdict.same, ...verdict.higher].map((peer) => peer.deadline - now);
}

/**
 * Watches the peering resource and evaluates every event of the named object until `signal`
 * aborts (R-PEER-6). Events of other objects are ignored. Evaluations run one at a time; events
 * that arrive meanwhile are merged into the newest, which also interrupts the sleep until the
 * earliest deadline. Never throws: a failed watch or evaluation is logged (one ERROR line) and
 * retried after a back-off.
 */
export async function observePeering(scope: PeeringScope, options: ObserverOptions): Promise<void> {
  const { signal, conflicts } = options;
  const { settings, logger } = scope;
  const what = describeObject(settings.peering.name, scope.namespace);
  const reported = new Set<string>();
  let latest: bodies.RawBody | undefined;
  let arrived = new AbortController();
  let wake: () => void = () => undefined;

  const evaluator = (async (): Promise<void> => {
    while (!signal.aborted) {
      if (latest === undefined) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (signal.aborted) resolve();
        });
        continue;
      }
      const body = latest;
      latest = undefined;
      arrived = new AbortController();
      const pressure = aborts.follow([signal, arrived.signal]);
      try {
        const delays = await evaluate(scope, body, conflicts, reported, signal);
        if (delays.length === 0) continue;
        const delay = Math.max(0, Math.min(...delays));
        // Interrupted by a newer event (or the stop): that event is evaluated instead.
        if (delay > 0 && !(await aborts.sleepOrAbort(scope.clock, delay, pressure.signal))) continue;
        await touch(scope, { signal });
      } catch (error) {
        if (signal.aborted) return;
        const line = `Peering evaluation in ${what} has failed: ${errors.errorMessage(error)}`;
        if (clientErrors.isForbidden(error))
          logger.debug(line); // reported once by the client (R-SEC-1)
        else logger.error(line);
        latest ??= body; // evaluate it again after the back-off
        await aborts.sleepOrAbort(scope.clock, retryDelayOf(options) * 1000, signal);
      } finally {
        pressure.release();
      }
    }
  })();
  const stopEvaluator = aborts.onAbort(signal, () => wake());

  try {
    while (!signal.aborted) {
      try {
        const ctx: watching.WatchContext = { api: scope.api, settings, resource: scope.resource, namespace: scope.namespace, logger, clock: scope.clock };
        for await (const event of watching.infiniteWatch(ctx, { signal })) {
          if (watching.isListed(event)) continue;
          if (event.object.metadata?.name !== settings.peering.name) continue;
          latest = event.object;
          arrived.abort();
          wake();
        }
      } catch (error) {
        if (signal.aborted) break;
        const line = `Peering watch in ${what} has failed: ${errors.errorMessage(error)}`;
        if (clientErrors.isForbidden(error))
          logger.debug(line); // reported once by the client (R-SEC-1)
        else logger.error(line);
        await aborts.sleepOrAbort(scope.clock, retryDelayOf(options) * 1000, signal);
      }
    }
  } finally {
    stopEvaluator();
    wake();
    await evaluator;
  }

  function retryDelayOf(o: ObserverOptions): number {
    return o.retryDelay ?? Math.max(1, settings.watching.reconnectBackoff);
  }
}
