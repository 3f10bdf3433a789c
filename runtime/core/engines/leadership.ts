/**
 * Leader election on a Lease (docs/leader-election.md): several replicas of one operator run as hot
 * standbys, and only the one holding the `coordination.k8s.io/v1` Lease works. The others keep
 * the operator paused — the same pause as Kopf's peering (R-PEER-7): no watching (R-WATCH-6), no
 * daemons (R-DAEMON-10) — through one toggle of the operator's pause set, on while not the leader.
 *
 * The protocol is client-go's, so Go controllers and tools reading Leases agree with it:
 * - a standby reads the Lease every `retryPeriod` (jittered up to ×2.2, as client-go does) and
 *   takes it when nobody holds it, or when its record has not changed for the record's
 *   `leaseDurationSeconds` **as observed on the local clock** (never by the writer's timestamps:
 *   clocks of different machines disagree). A missing Lease is created.
 * - writes are optimistic: a PUT of the last read object, whose `resourceVersion` makes the
 *   server refuse (409) a writer that did not see the latest change; a taker increments
 *   `leaseTransitions`, a renewing holder keeps `acquireTime`.
 * - the leader renews every `retryPeriod` with one PUT of the object it wrote last (one request
 *   per period); on a failure it reads the Lease and tries again until `renewDeadline` after the
 *   start of its last successful renewal — then it pauses at once, even while a request hangs.
 *   If the Lease turns out to be held by someone else (stolen), it pauses at once too.
 * - on a graceful stop, after the operator's work has stopped, the leader releases the Lease
 *   (holder `''`, duration 1 s, as client-go's `ReleaseOnCancel`), so a standby takes over at its
 *   next read instead of after `leaseDuration`.
 *
 * Why two leaders never work at once: the leader's last successful write was sent at S, so the
 * server stored it after S, and a standby saw it no earlier; it takes over no earlier than S +
 * `leaseDuration`. The leader pauses at S + `renewDeadline` < S + `leaseDuration`. The margin,
 * `leaseDuration − renewDeadline`, absorbs how long pausing takes and clock-rate differences.
 *
 * API errors, conflicts, timeouts and partitions are never fatal: each failed attempt logs one
 * WARNING line and the next attempt follows. INFO lines say `became the leader`, `lost
 * leadership`, and `new leader observed`.
 */

import * as aborts from '../../cogs/aio/aborts.js';
import type * as clocks from '../../cogs/aio/clocks.js';
import type * as toggles from '../../cogs/aio/toggles.js';
import type * as api from '../../cogs/client/api.js';
import * as clientErrors from '../../cogs/client/errors.js';
import type * as settings from '../../cogs/configs/settings.js';
import type * as bodies from '../../cogs/structs/bodies.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as leases from './leases.js';

/** The API calls an elector makes: get, create and replace (PUT) of one Lease. */
export interface LeaseApi extends Pick<api.KubeReader, 'get'>, Pick<api.KubeWriter, 'create'>, api.KubeReplacer {}

/** client-go's jitter of the standbys' reads: `retryPeriod × (1 + random × 1.2)`. */
export const JITTER_FACTOR = 1.2;

/** What an elector needs. */
export interface ElectionOptions {
  readonly api: LeaseApi;
  /** The Lease's name and namespace. */
  readonly name: string;
  readonly namespace: string;
  /** The `holderIdentity` this operator writes (R-PEER-3). */
  readonly identity: string;
  /** The timings (read when the election starts). */
  readonly settings: settings.LeaderElectionSettings;
  readonly clock: clocks.Clock;
  /** On while this operator is not the leader (a member of the operator's pause set). */
  readonly paused: toggles.Toggle;
  readonly logger: loggers.Logger;
  /** Aborts on the graceful stop: the elector releases the Lease if it holds it, then resolves. */
  readonly signal: AbortSignal;
  /** For the standbys' jitter; default `Math.random`. */
  readonly random?: () => number;
}

/** What one attempt to acquire or renew found. */
type Attempt = 'leading' | 'held' | 'failed';

interface Observation {
  readonly record: leases.LeaseRecord;
  /** Local time when this record was first seen (or written by us). */
  readonly time: number;
  /** The stored object (for the next optimistic PUT). */
  readonly body: bodies.RawBody;
}

/**
 * Runs the election until `options.signal` aborts (see the module's comment); never rejects for
 * API errors. The pause toggle is on on return.
 *
 * @example
 * const paused = operatorPauses.makeToggle(true, 'lease');
 * await runElection({ api, name: 'my-operator', namespace: 'default', identity, settings: s.leaderElection,
 *                     clock, paused, logger, signal });
 */
export async function runElection(options: ElectionOptions): Promise<void> {
  await new Elector(options).run();
}

class Elector {
  private observed: Observation | undefined;
  private leading = false;
  /** Local time at which the last successful write was sent. */
  private renewedAt = -Infinity;
  private readonly where: string;
  private readonly leaseDuration: number;
  private readonly renewDeadline: number;
  private readonly retryPeriod: number;

  constructor(private readonly o: ElectionOptions) {
    this.where = `Lease '${o.namespace}/${o.name}'`;
    o.settings.validate();
    this.leaseDuration = o.settings.leaseDuration;
    this.renewDeadline = o.settings.renewDeadline * 1000;
    this.retryPeriod = o.settings.retryPeriod * 1000;
  }

  async run(): Promise<void> {
    const { paused, signal, logger } = this.o;
    paused.turnOn();
    logger.info(`Leader election in ${this.where} as '${this.o.identity}': operations are paused until this operator is the leader.`);
    try {
      while (!signal.aborted) {
        if (!(await this.acquire())) break;
        this.leading = true;
        paused.turnOff();
        logger.info(`Became the leader in ${this.where} as '${this.o.identity}': resuming operations.`);
        const lost = await this.renew();
        if (lost === undefined) break;
        this.leading = false;
        paused.turnOn();
        logger.info(`Lost leadership in ${this.where}: ${lost}. Pausing operations.`);
      }
    } finally {
      paused.turnOn();
      if (this.leading) await this.release();
    }
  }

  /** Tries until this operator leads (`true`) or the stop (`false`). */
  private async acquire(): Promise<boolean> {
    const { clock, signal } = this.o;
    const random = this.o.random ?? Math.random;
    for (;;) {
      const outcome = await this.attemptWithin(clock.now() + this.renewDeadline);
      if (signal.aborted) return false;
      if (outcome === 'leading') return true;
      const delay = this.retryPeriod * (1 + random() * JITTER_FACTOR);
      if (!(await aborts.sleepOrAbort(clock, delay, signal))) return false;
    }
  }

  /** Renews until leadership is lost (the reason) or the stop (`undefined`). */
  private async renew(): Promise<string | undefined> {
    const { clock, signal } = this.o;
    for (;;) {
      if (!(await aborts.sleepOrAbort(clock, this.retryPeriod, signal))) return undefined;
      for (;;) {
        const deadline = this.renewedAt + this.renewDeadline;
        const outcome = await this.attemptWithin(deadline);
        if (signal.aborted) return undefined;
        if (outcome === 'leading') break;
        if (outcome === 'held') return `it is held by '${this.observed?.record.holderIdentity ?? ''}'`;
        const left = deadline - clock.now();
        if (left <= 0) return `it was not renewed for ${this.o.settings.renewDeadline} s (renewDeadline)`;
        if (!(await aborts.sleepOrAbort(clock, Math.min(this.retryPeriod, left), signal))) return undefined;
      }
    }
  }

  /** One attempt, aborted at the local time `deadline` (or the stop); failures are logged. */
  private async attemptWithin(deadline: number): Promise<Attempt> {
    const { clock, signal, logger } = this.o;
    const done = new AbortController();
    const window = aborts.follow([signal, aborts.timeoutSignal(clock, Math.max(0, deadline - clock.now()), { cancel: done.signal })]);
    try {
      return await this.attempt(window.signal);
    } catch (error) {
      if (signal.aborted) return 'failed';
      const what = window.signal.aborted ? `no answer before the deadline (${this.o.settings.renewDeadline} s)` : describe(error);
      // A 403 was reported once by the client (R-SEC-1): not again every retry period.
      const line = `Failed to ${this.leading ? 'renew' : 'acquire'} ${this.where}: ${what}.`;
      if (clientErrors.isForbidden(error) && !window.signal.aborted) logger.debug(line);
      else logger.warning(line);
      return 'failed';
    } finally {
      window.release();
      done.abort();
    }
  }

  /** client-go's `tryAcquireOrRenew`: one PUT while leading; else read, decide, write. */
  private async attempt(signal: AbortSignal): Promise<Attempt> {
    const { api, clock, identity, name, namespace, logger } = this.o;
    const started = clock.now();
    const time = leases.formatMicroTime(started);
    const mine = (acquireTime: string | null, leaseTransitions: number): leases.LeaseRecord => ({
      holderIdentity: identity,
      leaseDurationSeconds: this.leaseDuration,
      acquireTime: acquireTime ?? time,
      renewTime: time,
      leaseTransitions,
    });

    // The fast path of a leader: the object it wrote last, with its resourceVersion.
    const last = this.observed;
    if (this.leading && last !== undefined && last.record.holderIdentity === identity) {
      try {
        const stored = await api.replace(
          leases.LEASES,
          namespace,
          name,
          leases.replacedLease(last.body, mine(last.record.acquireTime, last.record.leaseTransitions)),
          { signal },
        );
        this.wrote(stored, started);
        return 'leading';
      } catch (error) {
        if (signal.aborted) throw error;
        logger.debug(`Renewing ${this.where} optimistically failed (${describe(error)}); reading it.`);
      }
    }

    let stored: bodies.RawBody;
    try {
      stored = await api.get(leases.LEASES, namespace, name, { signal });
    } catch (error) {
      if (!(error instanceof clientErrors.ApiNotFoundError)) throw error;
      if (this.leading) logger.warning(`${this.where} is gone (deleted by someone else); creating it again.`);
      const created = await api.create(leases.LEASES, namespace, leases.newLease(name, namespace, mine(null, 0)), { signal });
      this.wrote(created, started);
      return 'leading';
    }
    const record = leases.recordOf(stored);
    this.observe(record, stored, clock.now());
    const seen = this.observed!;
    const valid = seen.time + record.leaseDurationSeconds * 1000 > clock.now();
    if (record.holderIdentity !== '' && record.holderIdentity !== identity && valid) return 'held';

    const ours = record.holderIdentity === identity;
    const next = ours ? mine(record.acquireTime, record.leaseTransitions) : mine(null, record.leaseTransitions + 1);
    const written = await api.replace(leases.LEASES, namespace, name, leases.replacedLease(stored, next), { signal });
    this.wrote(written, started);
    return 'leading';
  }

  /** Notes a record read from the server; a change restarts the standby's wait. */
  private observe(record: leases.LeaseRecord, body: bodies.RawBody, now: number): void {
    const before = this.observed;
    if (before !== undefined && leases.sameRecord(before.record, record)) {
      this.observed = { ...before, body };
      return;
    }
    this.observed = { record, time: now, body };
    const holder = record.holderIdentity;
    if (holder !== '' && holder !== this.o.identity && holder !== before?.record.holderIdentity) {
      this.o.logger.info(`New leader observed in ${this.where}: '${holder}'.`);
    }
  }

  /** Notes our own successful write, sent at `started`. */
  private wrote(body: bodies.RawBody, started: number): void {
    this.observed = { record: leases.recordOf(body), time: started, body };
    this.renewedAt = started;
  }

  /** Gives the Lease up (client-go's `ReleaseOnCancel`): holder `''`, duration 1 s. */
  private async release(): Promise<void> {
    const { api, clock, name, namespace, logger } = this.o;
    const last = this.observed;
    if (last === undefined || last.record.holderIdentity !== this.o.identity) return;
    const now = leases.formatMicroTime(clock.now());
    const record: leases.LeaseRecord = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: last.record.leaseTransitions,
    };
    const done = new AbortController();
    try {
      const signal = aborts.timeoutSignal(clock, this.renewDeadline, { cancel: done.signal });
      try {
        await api.replace(leases.LEASES, namespace, name, leases.replacedLease(last.body, record), { signal });
      } catch (error) {
        // A conflict: e.g. the last renewal was stored, but its answer was lost. Still ours? Release it.
        if (!(error instanceof clientErrors.ApiConflictError)) throw error;
        const stored = await api.get(leases.LEASES, namespace, name, { signal });
        const now = leases.recordOf(stored);
        if (now.holderIdentity !== this.o.identity) return;
        await api.replace(leases.LEASES, namespace, name, leases.replacedLease(stored, { ...record, leaseTransitions: now.leaseTransitions }), { signal });
      }
      logger.info(`Released ${this.where}.`);
    } catch (error) {
      logger.warning(`Failed to release ${this.where}: ${describe(error)}. The standbys take over after ${this.leaseDuration} s.`);
    } finally {
      done.abort();
      this.leading = false;
    }
  }
}

function describe(error: unknown): string {
  if (error instanceof clientErrors.ConnectionError) return `${error.name}: ${error.detail}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * The Lease's namespace when none is configured: `$POD_NAMESPACE`, else the in-cluster service
 * account's namespace (`readServiceAccountNamespace`), else `default`.
 */
export function defaultLeaseNamespace(env: NodeJS.ProcessEnv, readServiceAccountNamespace: () => string | undefined): string {
  const fromEnv = env['POD_NAMESPACE']?.trim();
  if (fromEnv) return fromEnv;
  return readServiceAccountNamespace()?.trim() || 'default';
}
