/**
 * The membership of a sharded operator's ring (docs/sharding.md, R-SHARD-105..110): who the live
 * replicas are, as one replica sees them, from one `coordination.k8s.io/v1` Lease per replica.
 *
 * - Each replica holds its own Lease `<ring>-<identity>` in the sharding namespace, labelled
 *   `shard.kopf-gen.dev/ring=<ring>`, with its identity as the holder and Lease election's fields
 *   (`engines/leases.ts`). It renews it every `retryPeriod` with one PUT of the object it wrote
 *   last; when that fails, it reads the Lease and writes again (creating it when absent).
 * - Every `retryPeriod` (a little less, jittered) it lists the ring's Leases by their label —
 *   fresh reads, no watch — and keeps, per Lease, the local time its record last changed. A member
 *   is live while its holder is non-empty and its record changed less than its
 *   `leaseDurationSeconds` ago **on the local clock**: never by the writer's timestamps, as the
 *   Lease elector does (`engines/leadership.ts`).
 * - It fences itself — turns on its toggle of the operator's pause set — until it has written its
 *   Lease and read the ring once, and again as soon as `renewDeadline` passed since the start of
 *   its last successful renewal, even while a request hangs; a successful renewal unfences it.
 *   While fenced, `members()` does not include itself.
 * - On a graceful stop (after the operator's work has stopped) it deletes its Lease, so the others
 *   drop it at their next read rather than after `leaseDuration`.
 *
 * Why no object has two working owners: a replica's last successful renewal was sent at S; the
 * others saw that record no earlier than S and drop the replica no earlier than S + `leaseDuration`
 * on their clocks; the replica fenced itself at S + `renewDeadline`, earlier — the same argument as
 * Lease election's, with the same margin for clock-rate differences and for pausing to take effect.
 *
 * API errors, conflicts, timeouts and partitions are never fatal: each failed attempt logs one
 * WARNING line (a 403 only the first time, then at DEBUG) and the next attempt follows.
 */

import * as os from 'node:os';
import * as aborts from '../../cogs/aio/aborts.js';
import type * as clocks from '../../cogs/aio/clocks.js';
import type * as toggles from '../../cogs/aio/toggles.js';
import type * as api from '../../cogs/client/api.js';
import * as clientErrors from '../../cogs/client/errors.js';
import type * as settings from '../../cogs/configs/settings.js';
import type * as bodies from '../../cogs/structs/bodies.js';
import * as dicts from '../../cogs/structs/dicts.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as leases from './leases.js';
import * as rings from './rings.js';

/** The API calls of a member: its own Lease (get, create, replace, delete) and the ring's listing. */
export interface MembershipApi extends Pick<api.KubeReader, 'get' | 'list'>, Pick<api.KubeWriter, 'create'>, api.KubeReplacer, api.KubeDeleter {}

/** How much shorter than `retryPeriod` a read of the ring may come: `retryPeriod × (1 − random × 0.1)`. */
export const POLL_JITTER = 0.1;

/** What a member needs. */
export interface MembershipOptions {
  readonly api: MembershipApi;
  /** The ring's name (`settings.sharding.ring`). */
  readonly ring: string;
  /** This replica's identity (`settings.sharding.identity`, else `defaultIdentity`). */
  readonly identity: string;
  /**
   * The namespace of the ring's Leases, or how to find it when the membership starts (after the
   * operator's startup handlers, which may set it).
   */
  readonly namespace: string | (() => string);
  /** The timings (read when the membership is made). */
  readonly settings: settings.ShardingSettings;
  readonly clock: clocks.Clock;
  /** On while this replica is not a working member (a member of the operator's pause set). */
  readonly paused: toggles.Toggle;
  readonly logger: loggers.Logger;
  /** Aborts on the graceful stop: `run()` deletes the Lease, then resolves. */
  readonly signal: AbortSignal;
  /** For the jitter of the reads; default `Math.random`. */
  readonly random?: () => number;
}

/** A Lease of the ring as this replica observed it. */
interface Observation {
  readonly record: leases.LeaseRecord;
  /** Local time when this record was first seen. */
  readonly since: number;
}

/**
 * One replica's view of its ring, and the upkeep of its own Lease (see the module's comment).
 *
 * @example
 * const paused = operatorPauses.makeToggle(true, 'sharding');
 * const membership = new Membership({ api, ring: 'my-operator', identity, namespace: 'ops',
 *                                     settings: s.sharding, clock, paused, logger, signal });
 * const done = membership.run();
 * membership.subscribe(() => console.log(membership.members()));
 */
export class Membership implements rings.Ring {
  readonly name: string;
  readonly identity: string;
  readonly label: string;
  /** The name of this replica's own Lease. */
  readonly leaseName: string;
  // Read from the settings when the membership starts (`configured`): a startup handler may set them.
  private where = '';
  private namespace = '';
  private leaseDuration = 0;
  private renewDeadline = 0;
  private retryPeriod = 0;
  private configured = false;
  private readonly listeners = new Set<() => void>();
  /** Other replicas' Leases by name, as last read. */
  private readonly observed = new Map<string, Observation>();
  private current: readonly string[] = [];
  /** The object this replica wrote last (for the next optimistic PUT). */
  private written: bodies.RawBody | undefined;
  /** Local time at which the last successful write was sent. */
  private renewedAt = -Infinity;
  private polled = false;
  private expired = false;
  private joined = false;
  private stopped = false;
  private fenceTimer: AbortController | undefined;
  /**
   * Until when this replica stays paused after rejoining (R-SHARD-113): after a fence, or when its
   * Lease was left by an earlier process of the same identity, the others may still be claiming its
   * objects on a view in which it was gone; they see it back at their next read of the ring.
   */
  private settleUntil = -Infinity;
  private settleTimer: AbortController | undefined;
  private expiryTimer: AbortController | undefined;
  private readonly forbidden = { renew: false, read: false };

  constructor(private readonly o: MembershipOptions) {
    o.settings.validate();
    this.name = o.ring;
    this.identity = o.identity;
    this.label = rings.ownerLabelOf(o.ring);
    this.leaseName = `${o.ring}-${o.identity}`;
  }

  /** Reads the namespace and the timings, once: when the membership starts, or at the first question. */
  private configure(): void {
    if (this.configured) return;
    const { settings, namespace } = this.o;
    settings.validate();
    this.namespace = typeof namespace === 'function' ? namespace() : namespace;
    this.where = `Lease '${this.namespace}/${this.leaseName}'`;
    this.leaseDuration = settings.leaseDuration;
    this.renewDeadline = settings.renewDeadline * 1000;
    this.retryPeriod = settings.retryPeriod * 1000;
    this.configured = true;
  }

  members(): readonly string[] {
    return this.current;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async isGone(identity: string, signal: AbortSignal): Promise<boolean> {
    this.configure();
    const { api, clock } = this.o;
    const namespace = this.namespace;
    const name = `${this.name}-${identity}`;
    let stored: bodies.RawBody;
    try {
      stored = await api.get(leases.LEASES, namespace, name, { signal });
    } catch (error) {
      if (error instanceof clientErrors.ApiNotFoundError) return true;
      throw error;
    }
    const record = leases.recordOf(stored);
    if (record.holderIdentity === '') return true;
    if (name === this.leaseName) return false;
    const seen = this.observe(name, record, clock.now());
    const gone = clock.now() - seen.since >= record.leaseDurationSeconds * 1000;
    this.recompute();
    return gone;
  }

  /**
   * Keeps the Lease and reads the ring until `options.signal` aborts; then deletes the Lease and
   * resolves (never rejects for API errors). The pause toggle is on on return.
   */
  async run(): Promise<void> {
    const { paused, logger } = this.o;
    paused.turnOn();
    this.configure();
    logger.info(`Joining the ring '${this.name}' as '${this.identity}' with ${this.where}: operations are paused until it is joined.`);
    try {
      await Promise.all([this.renewing(), this.polling()]);
    } finally {
      this.stopped = true;
      this.fenceTimer?.abort();
      this.settleTimer?.abort();
      this.expiryTimer?.abort();
      paused.turnOn();
      this.observed.clear();
      this.publish([]);
      if (this.written !== undefined) await this.leave();
    }
  }

  /** Writes the Lease every `retryPeriod` (sooner again after a failure) until the stop. */
  private async renewing(): Promise<void> {
    const { clock, signal } = this.o;
    while (!signal.aborted) {
      const ok = await this.within(this.renewDeadline, (window) => this.renew(window), 'renew');
      if (signal.aborted) return;
      const left = this.renewedAt + this.renewDeadline - clock.now();
      const delay = ok || left <= 0 ? this.retryPeriod : Math.min(this.retryPeriod, left);
      if (!(await aborts.sleepOrAbort(clock, delay, signal))) return;
    }
  }

  /** Reads the ring every `retryPeriod` (jittered below it) until the stop. */
  private async polling(): Promise<void> {
    const { clock, signal } = this.o;
    const random = this.o.random ?? Math.random;
    while (!signal.aborted) {
      await this.within(this.renewDeadline, (window) => this.poll(window), 'read');
      if (signal.aborted) return;
      const delay = this.retryPeriod * (1 - random() * POLL_JITTER);
      if (!(await aborts.sleepOrAbort(clock, delay, signal))) return;
    }
  }

  /** Runs `attempt` aborted after `ms` (or at the stop); logs its failure; whether it succeeded. */
  private async within(ms: number, attempt: (signal: AbortSignal) => Promise<void>, what: 'renew' | 'read'): Promise<boolean> {
    const { clock, signal, logger } = this.o;
    const done = new AbortController();
    const window = aborts.follow([signal, aborts.timeoutSignal(clock, ms, { cancel: done.signal })]);
    try {
      await attempt(window.signal);
      return true;
    } catch (error) {
      if (signal.aborted) return false;
      const reason = window.signal.aborted ? `no answer within ${ms / 1000} s` : describe(error);
      const line =
        what === 'renew' ? `Failed to renew ${this.where}: ${reason}.` : `Failed to read the ring '${this.name}' (Leases in '${this.namespace}'): ${reason}.`;
      // A 403 was reported by the client (R-SEC-1): once more here, then not every retry period.
      if (clientErrors.isForbidden(error) && !window.signal.aborted) {
        if (this.forbidden[what]) logger.debug(line);
        else logger.warning(line);
        this.forbidden[what] = true;
      } else {
        logger.warning(line);
      }
      return false;
    } finally {
      window.release();
      done.abort();
    }
  }

  /** One renewal: a PUT of the last written object; else read (or create) and write. */
  private async renew(signal: AbortSignal): Promise<void> {
    const { api, clock, logger } = this.o;
    const namespace = this.namespace;
    const started = clock.now();
    const time = leases.formatMicroTime(started);
    const mine = (previous: leases.LeaseRecord | undefined): leases.LeaseRecord => {
      const ours = previous !== undefined && previous.holderIdentity === this.identity;
      return {
        holderIdentity: this.identity,
        leaseDurationSeconds: this.leaseDuration,
        acquireTime: ours ? (previous.acquireTime ?? time) : time,
        renewTime: time,
        leaseTransitions: previous === undefined ? 0 : ours ? previous.leaseTransitions : previous.leaseTransitions + 1,
      };
    };

    const last = this.written;
    if (last !== undefined) {
      try {
        const stored = await api.replace(leases.LEASES, namespace, this.leaseName, this.labelled(leases.replacedLease(last, mine(leases.recordOf(last)))), {
          signal,
        });
        this.wrote(stored, started);
        return;
      } catch (error) {
        if (signal.aborted) throw error;
        logger.debug(`Renewing ${this.where} optimistically failed (${describe(error)}); reading it.`);
      }
    }

    let stored: bodies.RawBody;
    try {
      stored = await api.get(leases.LEASES, namespace, this.leaseName, { signal });
    } catch (error) {
      if (!(error instanceof clientErrors.ApiNotFoundError)) throw error;
      if (last !== undefined) logger.warning(`${this.where} is gone (deleted by someone else); creating it again.`);
      const created = await api.create(leases.LEASES, namespace, this.labelled(leases.newLease(this.leaseName, namespace, mine(undefined))), { signal });
      this.wrote(created, started);
      return;
    }
    const previous = leases.recordOf(stored);
    const written = await api.replace(leases.LEASES, namespace, this.leaseName, this.labelled(leases.replacedLease(stored, mine(previous))), {
      signal,
    });
    // A Lease of this identity not released by an earlier process (killed): the others may be
    // claiming its objects now, as that process's.
    this.wrote(written, started, last === undefined && previous.holderIdentity === this.identity);
  }

  /** A Lease body with the ring's label added to its labels. */
  private labelled(body: Record<string, unknown>): Record<string, unknown> {
    const metadata = dicts.isObject(body['metadata']) ? body['metadata'] : {};
    const labels = dicts.isObject(metadata['labels']) ? metadata['labels'] : {};
    return { ...body, metadata: { ...metadata, labels: { ...labels, [rings.RING_LABEL]: this.name } } };
  }

  /**
   * Notes a successful write sent at `started`: unfences, and re-arms the fence at its deadline.
   * After a fence, or over an earlier process's Lease (`inherited`), the replica settles first:
   * it stays paused for two retry periods, by which the others have read the ring again and
   * stopped claiming its objects as a gone replica's (R-SHARD-113).
   */
  private wrote(body: bodies.RawBody, started: number, inherited = false): void {
    if (this.stopped) return;
    const settle = inherited || this.expired;
    this.written = body;
    this.renewedAt = started;
    this.expired = false;
    if (settle) this.settle(started + 2 * this.retryPeriod);
    this.armFence();
    this.update();
  }

  /** Keeps the replica paused until `until`, then re-derives its state. */
  private settle(until: number): void {
    const { clock, signal, logger } = this.o;
    this.settleUntil = until;
    this.settleTimer?.abort();
    const timer = new AbortController();
    this.settleTimer = timer;
    const cancel = aborts.follow([signal, timer.signal]);
    logger.info(
      `Rejoining the ring '${this.name}' as '${this.identity}': paused for ${(2 * this.retryPeriod) / 1000} s more, until the others have seen ${this.where} renewed and stopped claiming its objects.`,
    );
    void aborts.sleepOrAbort(clock, Math.max(0, until - clock.now()), cancel.signal).then((elapsed) => {
      cancel.release();
      if (!elapsed || this.settleTimer !== timer || this.stopped) return;
      this.update();
    });
  }

  /** Fences this replica at `renewedAt + renewDeadline` unless a renewal succeeds before. */
  private armFence(): void {
    const { clock, signal } = this.o;
    this.fenceTimer?.abort();
    const timer = new AbortController();
    this.fenceTimer = timer;
    const cancel = aborts.follow([signal, timer.signal]);
    const delay = Math.max(0, this.renewedAt + this.renewDeadline - clock.now());
    void aborts.sleepOrAbort(clock, delay, cancel.signal).then((elapsed) => {
      cancel.release();
      if (!elapsed || this.fenceTimer !== timer || this.stopped) return;
      this.expired = true;
      this.update();
    });
  }

  /** One read of the ring's Leases. */
  private async poll(signal: AbortSignal): Promise<void> {
    const { api, clock } = this.o;
    const namespace = this.namespace;
    const listing = await api.list(leases.LEASES, namespace, { labelSelector: `${rings.RING_LABEL}=${this.name}`, signal });
    if (this.stopped) return;
    const now = clock.now();
    const seen = new Set<string>();
    for (const item of listing.items) {
      const name = item.metadata?.name;
      if (typeof name !== 'string' || name === this.leaseName) continue;
      seen.add(name);
      this.observe(name, leases.recordOf(item), now);
    }
    for (const name of [...this.observed.keys()]) if (!seen.has(name)) this.observed.delete(name);
    this.polled = true;
    this.update();
  }

  /** Notes a record read at `now`; a changed (or new) record restarts its wait. */
  private observe(name: string, record: leases.LeaseRecord, now: number): Observation {
    const before = this.observed.get(name);
    if (before !== undefined && leases.sameRecord(before.record, record)) return before;
    const seen = { record, since: now };
    this.observed.set(name, seen);
    return seen;
  }

  /** Re-derives the fencing, the toggle and the members after any event. */
  private update(): void {
    if (this.stopped) return;
    const { paused, logger } = this.o;
    const working = this.written !== undefined && this.polled && !this.expired && this.o.clock.now() >= this.settleUntil;
    if (working && !this.joined) {
      this.joined = true;
      paused.turnOff();
      this.recompute();
      logger.info(`Joined the ring '${this.name}' as '${this.identity}': members ${JSON.stringify(this.current)}. Resuming operations.`);
      return;
    }
    if (this.joined && working && paused.isOn()) {
      paused.turnOff();
      logger.info(`Unfenced in the ring '${this.name}': ${this.where} is renewed again. Resuming operations.`);
    } else if (this.joined && !working && paused.isOff()) {
      paused.turnOn();
      logger.info(
        `Fenced in the ring '${this.name}': ${this.where} was not renewed for ${this.o.settings.renewDeadline} s (renewDeadline). Pausing operations.`,
      );
    }
    this.recompute();
  }

  /** The live members now (self while working); announces a change; re-arms the next expiry. */
  private recompute(): void {
    if (this.stopped) return;
    const { clock } = this.o;
    const now = clock.now();
    const live = new Set<string>();
    let nextExpiry = Infinity;
    for (const { record, since } of this.observed.values()) {
      const holder = record.holderIdentity;
      const until = since + record.leaseDurationSeconds * 1000;
      if (holder === '' || holder === this.identity || until <= now) continue;
      live.add(holder);
      nextExpiry = Math.min(nextExpiry, until);
    }
    if (this.joined && this.o.paused.isOff()) live.add(this.identity);
    const members = [...live].sort();
    if (members.length !== this.current.length || members.some((m, i) => m !== this.current[i])) this.publish(members);
    this.armExpiry(nextExpiry);
  }

  /** Re-computes the members when the earliest live Lease would expire (no earlier than that). */
  private armExpiry(at: number): void {
    const { clock, signal } = this.o;
    this.expiryTimer?.abort();
    this.expiryTimer = undefined;
    if (at === Infinity) return;
    const timer = new AbortController();
    this.expiryTimer = timer;
    const cancel = aborts.follow([signal, timer.signal]);
    void aborts.sleepOrAbort(clock, Math.max(0, at - clock.now()), cancel.signal).then((elapsed) => {
      cancel.release();
      if (elapsed && this.expiryTimer === timer) this.recompute();
    });
  }

  /** Sets the members, logs who joined and left, and tells the subscribers. */
  private publish(members: readonly string[]): void {
    const before = new Set(this.current);
    const after = new Set(members);
    this.current = Object.freeze([...members]);
    if (!this.stopped) {
      for (const m of members) if (!before.has(m) && m !== this.identity) this.o.logger.info(`Member joined the ring '${this.name}': '${m}'.`);
      for (const m of before) if (!after.has(m) && m !== this.identity) this.o.logger.info(`Member left the ring '${this.name}': '${m}'.`);
    }
    for (const listener of [...this.listeners]) listener();
  }

  /** Deletes the own Lease (a 404 is fine), within `renewDeadline`. */
  private async leave(): Promise<void> {
    const { api, clock, logger } = this.o;
    const namespace = this.namespace;
    const done = new AbortController();
    try {
      const signal = aborts.timeoutSignal(clock, this.renewDeadline, { cancel: done.signal });
      try {
        await api.delete(leases.LEASES, namespace, this.leaseName, { signal });
      } catch (error) {
        if (!(error instanceof clientErrors.ApiNotFoundError)) throw error;
      }
      logger.info(`Left the ring '${this.name}': deleted ${this.where}.`);
    } catch (error) {
      logger.warning(`Failed to delete ${this.where}: ${describe(error)}. The others drop this replica after ${this.leaseDuration} s.`);
    } finally {
      done.abort();
    }
  }
}

/**
 * Runs a membership until `options.signal` aborts: the ring to read at once, and the promise of
 * its end (after the Lease is deleted).
 */
export function runMembership(options: MembershipOptions): { readonly ring: Membership; readonly done: Promise<void> } {
  const ring = new Membership(options);
  return { ring, done: ring.run() };
}

function describe(error: unknown): string {
  if (error instanceof clientErrors.ConnectionError) return `${error.name}: ${error.detail}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** The characters replaced in a default identity: all but those of a DNS label, so that the Lease's name `<ring>-<identity>` stays valid too. */
const INVALID = /[^a-z0-9-]/g;

/**
 * A replica's identity when none is configured (R-SHARD-110): `$POD_NAME`, else
 * `<hostname>-<pid>`; lower-cased, every character but `a-z`, `0-9` and `-` replaced by `-`, cut
 * to 63 characters and trimmed to start and end with a letter or digit — a label value, and a
 * valid part of the Lease's name.
 *
 * @example
 * defaultIdentity({}, 'Build_Host.local', 4242) // 'build-host-local-4242'
 */
export function defaultIdentity(env: NodeJS.ProcessEnv, hostname: string = os.hostname(), pid: number = process.pid): string {
  const fromEnv = env['POD_NAME']?.trim();
  const raw = fromEnv ? fromEnv : `${hostname}-${pid}`;
  const cleaned = raw.toLowerCase().replace(INVALID, '-').slice(0, 63);
  const trimmed = cleaned.replace(/^[^a-z0-9]+/, '').replace(/[^a-z0-9]+$/, '');
  return trimmed === '' ? `replica-${pid}` : trimmed;
}
