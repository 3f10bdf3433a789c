/**
 * The records that operators keep in a peering object's `status` (R-PEER-4), read and written
 * exactly as Kopf does, so that kopf-gen operators and Python Kopf operators see each other:
 *
 *     status:
 *       <identity>: { priority: 0, lifetime: 60, lastseen: '2026-11-24T10:00:00.123456+00:00' }
 *
 * `lastseen` is Python's `datetime.isoformat()` of a UTC time: microseconds (six digits) unless
 * they are zero, then none, and `+00:00`. Reading accepts any ISO-8601 time (a missing offset
 * means UTC, as Kopf's parser assumes).
 *
 * The status is written by other programs too, so reading never throws. Kopf crashes its peering
 * observer on a malformed entry; here such an entry is *ignored*: it neither pauses nor resumes
 * anyone and is never removed (it may belong to a newer program that knows what it means), and
 * the caller reports it once. Precisely:
 * - extra keys in an entry: ignored, the entry is used;
 * - `priority`/`lifetime` as numeric strings (`"100"`): used as numbers (Kopf's `int()` does it too);
 *   `lifetime` is truncated to whole seconds; anything else that is not a finite number: malformed;
 * - missing `priority` = 0, missing `lifetime` = 60, missing or null `lastseen` = now;
 * - a `lastseen` that is not an ISO-8601 time, or an entry that is not an object: malformed;
 * - a `status` that is not an object: no entries.
 */

/** One operator's entry, parsed. */
export interface Peer {
  readonly identity: string;
  readonly priority: number;
  /** Seconds. */
  readonly lifetime: number;
  /** Clock milliseconds (may be fractional: microseconds are kept). */
  readonly lastseen: number;
  /** `lastseen + lifetime`, clock milliseconds. */
  readonly deadline: number;
}

/** An entry that could not be understood, with why. */
export interface MalformedEntry {
  readonly identity: string;
  readonly reason: string;
}

/** The entry as written to the status (key order as Kopf's: priority, lifetime, lastseen). */
export interface PeerRecord {
  readonly priority: number;
  readonly lifetime: number;
  readonly lastseen: string;
}

/** Whether a peer's deadline has come (Kopf: `deadline <= now`). */
export function isDead(peer: Peer, now: number): boolean {
  return peer.deadline <= now;
}

/**
 * A clock time as Python's `datetime.isoformat()` writes a UTC time: `2026-11-24T10:00:00.123456+00:00`,
 * without the fraction when the microseconds are zero.
 */
export function formatLastseen(ms: number): string {
  const whole = Math.floor(ms / 1000);
  const micros = Math.round((ms - whole * 1000) * 1000);
  // Rounding up to a full second moves the second, as it must.
  const seconds = micros >= 1_000_000 ? whole + 1 : whole;
  const fraction = micros >= 1_000_000 ? 0 : micros;
  const date = new Date(seconds * 1000).toISOString().slice(0, 19);
  return fraction === 0 ? `${date}+00:00` : `${date}.${String(fraction).padStart(6, '0')}+00:00`;
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):?(\d{2})(?::?(\d{2})(?:[.,](\d+))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/** Parses an ISO-8601 time into clock milliseconds (fractional), or `undefined` if it is not one. */
export function parseLastseen(text: string): number | undefined {
  const match = ISO.exec(text.trim());
  if (match === null) return undefined;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone = 'Z'] = match;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  let ms = Date.UTC(year, month - 1, day, hour, minute, second);
  if (Number.isNaN(ms) || new Date(ms).getUTCDate() !== day) return undefined;
  if (frac !== '') ms += Number(`0.${frac}`) * 1000;
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offset = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0');
    ms -= sign * offset * 60_000;
  }
  return ms;
}

/** The entry this operator writes: fresh `lastseen` at `now`. */
export function recordOf(priority: number, lifetime: number, now: number): PeerRecord {
  return { priority: Math.trunc(priority), lifetime: Math.trunc(lifetime), lastseen: formatLastseen(now) };
}

function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && /^\s*[+-]?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}

/** Reads one entry (see the module's comment for what is malformed). */
export function parsePeer(identity: string, entry: unknown, now: number): Peer | MalformedEntry {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return { identity, reason: 'the entry is not an object' };
  const fields = entry as Record<string, unknown>;
  const priority = fields['priority'] === undefined || fields['priority'] === null ? 0 : numberOf(fields['priority']);
  if (priority === undefined) return { identity, reason: `priority is not a number: ${JSON.stringify(fields['priority'])}` };
  const lifetime = fields['lifetime'] === undefined || fields['lifetime'] === null ? 60 : numberOf(fields['lifetime']);
  if (lifetime === undefined) return { identity, reason: `lifetime is not a number: ${JSON.stringify(fields['lifetime'])}` };
  const raw = fields['lastseen'];
  let lastseen: number | undefined = now;
  if (raw !== undefined && raw !== null) lastseen = typeof raw === 'string' ? parseLastseen(raw) : undefined;
  if (lastseen === undefined) return { identity, reason: `lastseen is not an ISO-8601 time: ${JSON.stringify(raw)}` };
  const seconds = Math.trunc(lifetime);
  return { identity, priority, lifetime: seconds, lastseen, deadline: lastseen + seconds * 1000 };
}

/** Reads every entry of a peering object's status. */
export function parsePeers(status: unknown, now: number): { readonly peers: Peer[]; readonly malformed: MalformedEntry[] } {
  const peers: Peer[] = [];
  const malformed: MalformedEntry[] = [];
  if (typeof status !== 'object' || status === null || Array.isArray(status)) return { peers, malformed };
  for (const [identity, entry] of Object.entries(status as Record<string, unknown>)) {
    const parsed = parsePeer(identity, entry, now);
    if ('reason' in parsed) malformed.push(parsed);
    else peers.push(parsed);
  }
  return { peers, malformed };
}

/** A peer as Kopf prints it in its log lines: `<Peer id: priority=0, lifetime=60, lastseen='…'>`. */
export function describePeer(peer: Peer): string {
  return `<Peer ${peer.identity}: priority=${peer.priority}, lifetime=${peer.lifetime}, lastseen='${formatLastseen(peer.lastseen)}'>`;
}

/** A list of peers as Kopf prints it: `[<Peer …>, <Peer …>]`. */
export function describePeers(peers: readonly Peer[]): string {
  return `[${peers.map(describePeer).join(', ')}]`;
}

/** What one evaluation found (R-PEER-6). */
export interface Verdict {
  /** All readable entries (self included). */
  readonly peers: readonly Peer[];
  /** Entries whose deadline has passed: to be removed. */
  readonly dead: readonly Peer[];
  /** Live others with a higher priority. */
  readonly higher: readonly Peer[];
  /** Live others with the same priority. */
  readonly same: readonly Peer[];
  readonly malformed: readonly MalformedEntry[];
}

/** Sorts a peering object's entries for one operator (pure). */
export function judge(status: unknown, identity: string, priority: number, now: number): Verdict {
  const { peers, malformed } = parsePeers(status, now);
  const dead = peers.filter((peer) => isDead(peer, now));
  const live = peers.filter((peer) => !isDead(peer, now) && peer.identity !== identity);
  return {
    peers,
    dead,
    malformed,
    higher: live.filter((peer) => peer.priority > priority),
    same: live.filter((peer) => peer.priority === priority),
  };
}
