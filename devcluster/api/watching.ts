/**
 * Watch streams (D-WATCH-1..14). The hub subscribes to every store change and fans it out to the
 * open streams of that storage, classifying each change by whether the old and the new state match
 * the stream's filter (ADDED / MODIFIED / DELETED, D-WATCH-6). A stream starts with synthetic ADDED
 * events, a replay from an older revision, or an ERROR 410 when that revision was compacted.
 * Events are written as one compact JSON line each and flushed immediately; a stream whose client
 * does not read is ended rather than allowed to grow without bound (D-WATCH-14).
 */
import type * as http from 'node:http';
import type { Clock } from '../clock.js';
import * as keyorder from '../meta/keyorder.js';
import * as statuses from '../server/statuses.js';
import type * as revisions from '../store/revisions.js';
import * as converting from './converting.js';
import type * as filters from './filters.js';
import * as objects from './objects.js';
import * as resources from './resources.js';
import * as tables from './tables.js';
import type { JsonObject } from '../json.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchParams {
  type: resources.ResourceType;
  filter: filters.ObjectFilter;
  /** undefined/'0' → synthetic ADDED; N → replay changes after N. */
  resourceVersion: string | undefined;
  sendInitialEvents: boolean | undefined;
  bookmarks: boolean;
  timeoutMs: number;
  table: boolean;
  includeObject: 'None' | 'Metadata' | 'Object';
  user: string;
  /** The request's `User-Agent` header ('' without one), for dropping one client's streams (D-FAULT-6). */
  userAgent: string;
}

export interface WatchLogEntry {
  stream: number;
  type: WatchEventType;
  rv: string;
}

export interface HubOptions {
  bookmarkIntervalMs: number;
  /** Events (or bytes/1000) a slow client may have pending before its stream is ended. */
  queueLimit: number;
  onEvent?: (entry: WatchLogEntry) => void;
}

interface Stream {
  readonly id: number;
  readonly params: WatchParams;
  readonly res: http.ServerResponse;
  /** Changes with revision ≤ this were already delivered (or are before the start). */
  lastRev: number;
  pending: string[] | undefined;
  closed: boolean;
  stalled: boolean;
  eventsLeft: number | undefined;
  /** Cancels the stream's pending timers. */
  timers: (() => void)[];
  onEnd: (() => void) | undefined;
  /**
   * Events of a kind whose conversion calls a webhook wait for it here, in order (D-CONV-406);
   * bookmarks queue behind them.
   */
  converting: Promise<void> | undefined;
}

export type DropMode = 'end' | 'abort' | 'expire';

/** Serialised event lines of one change, by served type and variant (event type, or how the object was derived). */
type EventLines = Map<resources.ResourceType, Map<string, string>>;

/** One watch event as written on the stream: compact JSON and a newline. */
function eventLine(type: WatchEventType, object: JsonObject): string {
  return `${JSON.stringify({ type, object })}\n`;
}

export class WatchHub {
  private readonly streams = new Map<number, Stream>();
  private nextId = 1;
  private paused = false;
  /** Streams closed while paused, ended on `resume()` after their queued events (D-FAULT-9). */
  private readonly draining = new Map<Stream, 'end' | 'fault'>();

  constructor(
    private readonly store: revisions.Store,
    private readonly clock: Clock,
    private readonly options: HubOptions,
  ) {
    store.subscribe((change) => this.onChange(change));
  }

  get size(): number {
    return this.streams.size;
  }

  /** Events queued by a pause (D-FAULT-9), including those of streams that end on `resume()`. */
  get queued(): number {
    let n = 0;
    for (const stream of this.streams.values()) n += stream.pending?.length ?? 0;
    for (const stream of this.draining.keys()) n += stream.pending?.length ?? 0;
    return n;
  }

  /**
   * Starts a stream on a response whose headers were already flushed. Returns the stream id.
   * `faults` lets fault injection end or break the stream after some events (D-FAULT-5).
   */
  open(res: http.ServerResponse, params: WatchParams, faults: { endAfterEvents?: number; stall?: boolean; onEnd?: () => void } = {}): number {
    const stream: Stream = {
      id: this.nextId++,
      params,
      res,
      lastRev: this.store.revision,
      pending: undefined,
      closed: false,
      stalled: faults.stall ?? false,
      eventsLeft: faults.endAfterEvents,
      timers: [],
      onEnd: faults.onEnd,
      converting: undefined,
    };
    res.on('close', () => this.close(stream, 'gone'));
    this.streams.set(stream.id, stream);
    if (stream.eventsLeft !== undefined && stream.eventsLeft <= 0) {
      // A fault that ends the stream before its first event (D-FAULT-5).
      this.close(stream, stream.onEnd ? 'fault' : 'end');
      return stream.id;
    }
    const rv = params.resourceVersion;
    const synthetic = params.sendInitialEvents ?? (rv === undefined || rv === '0');
    // With initial events the state is served "not older than N" (never 410); otherwise N is
    // the replay start (D-WATCH-4/5/8).
    if (rv !== undefined && rv !== '0' && !synthetic) {
      const start = Number(rv);
      const replay = this.store.changesSince(params.type.storage, Math.min(start, this.store.revision));
      if (!replay) {
        this.sendError(stream, 410, 'Expired', `too old resource version: ${start} (${this.store.compaction})`);
        return stream.id;
      }
      // Replay starts right after N: `deliver` skips changes at or below `lastRev`.
      stream.lastRev = Math.min(start, this.store.revision);
      for (const change of replay) this.deliver(stream, change, undefined);
      stream.lastRev = Math.max(start, this.store.revision);
    }
    if (synthetic) {
      for (const entry of this.store.entries(params.type.storage, params.filter.prefix)) {
        if (params.filter.matches(entry.object)) this.send(stream, 'ADDED', entry.object);
      }
      stream.lastRev = this.store.revision;
      if (params.sendInitialEvents && params.bookmarks) {
        this.sendBookmark(stream, { 'k8s.io/initial-events-end': 'true' });
      }
    }
    this.scheduleTimers(stream);
    return stream.id;
  }

  private scheduleTimers(stream: Stream): void {
    const { timeoutMs, bookmarks } = stream.params;
    stream.timers.push(this.clock.schedule(timeoutMs, () => this.close(stream, 'end')));
    if (!bookmarks) return;
    if (timeoutMs > 2000) stream.timers.push(this.clock.schedule(timeoutMs - 2000, () => this.sendBookmark(stream)));
    const tick = (): void => {
      if (stream.closed) return;
      this.sendBookmark(stream);
      stream.timers.push(this.clock.schedule(this.options.bookmarkIntervalMs, tick));
    };
    stream.timers.push(this.clock.schedule(this.options.bookmarkIntervalMs, tick));
  }

  private onChange(change: revisions.Change): void {
    let cache: EventLines | undefined;
    for (const stream of this.streams.values()) {
      if (stream.params.type.storage === change.storage) this.deliver(stream, change, (cache ??= new Map()));
    }
  }

  /** `cache` holds the lines already serialised for this change (shared by the streams it reaches). */
  private deliver(stream: Stream, change: revisions.Change, cache: EventLines | undefined): void {
    if (stream.closed || change.rev <= stream.lastRev) return;
    stream.lastRev = change.rev;
    const filter = stream.params.filter;
    const wasMatching = change.prev !== undefined && filter.matches(change.prev);
    if (change.type === 'DELETED') {
      if (wasMatching) this.send(stream, 'DELETED', change.object, cache, 'DELETED');
      return;
    }
    const isMatching = filter.matches(change.object);
    if (isMatching && wasMatching) this.send(stream, 'MODIFIED', change.object, cache, 'MODIFIED');
    else if (isMatching) this.send(stream, 'ADDED', change.object, cache, 'ADDED');
    else if (wasMatching) {
      // Stopped matching: the previous state, stamped with the new revision (D-WATCH-6).
      this.send(
        stream,
        'DELETED',
        objects.withMeta(change.prev!, (m) => {
          m['resourceVersion'] = String(change.rev);
        }),
        cache,
        'DELETED-previous',
      );
    }
  }

  /**
   * Sends one object event. Plain (non-Table) events of one change are serialised once per served
   * type and `variant`, however many streams receive them.
   */
  private send(stream: Stream, type: WatchEventType, stored: JsonObject, cache?: EventLines, variant?: string): void {
    if (stream.closed || stream.stalled) return;
    if (converting.callsOut(stream.params.type)) {
      this.sendConverted(stream, type, stored);
      return;
    }
    this.sendNow(stream, type, stored, cache, variant);
  }

  /**
   * An event of a kind with a conversion webhook (D-CONV-406): its conversion starts at once and the
   * event is written after it and after the stream's earlier events; a failed conversion ends the
   * stream with an ERROR event carrying the Status.
   */
  private sendConverted(stream: Stream, type: WatchEventType, stored: JsonObject): void {
    const conversion = converting.oneInVersion(stream.params.type, stored);
    conversion.catch(() => undefined);
    stream.converting = (stream.converting ?? Promise.resolve()).then(async () => {
      let shown: JsonObject;
      try {
        shown = await conversion;
      } catch (err) {
        const failure = err instanceof statuses.ApiError ? err : statuses.internal(err instanceof Error ? err.message : String(err));
        this.sendError(stream, failure.code, failure.reason, failure.message);
        return;
      }
      if (!stream.closed && !stream.stalled) this.sendNow(stream, type, shown, undefined, undefined);
    });
  }

  private sendNow(stream: Stream, type: WatchEventType, stored: JsonObject, cache?: EventLines, variant?: string): void {
    try {
      this.sendObject(stream, type, stored, cache, variant);
    } catch (err) {
      // An object the stream's version cannot show ends the stream with an ERROR event carrying
      // the request error's Status.
      if (!(err instanceof statuses.ApiError)) throw err;
      this.sendError(stream, err.code, err.reason, err.message);
      return;
    }
    if (stream.eventsLeft !== undefined && --stream.eventsLeft <= 0) this.close(stream, stream.onEnd ? 'fault' : 'end');
  }

  private sendObject(stream: Stream, type: WatchEventType, stored: JsonObject, cache: EventLines | undefined, variant: string | undefined): void {
    const params = stream.params;
    if (params.table) {
      const table = tables.tableOf(params.type, [stored], new Date(this.clock.now()), { resourceVersion: objects.rvOf(stored) }, params.includeObject);
      this.write(stream, type, table, objects.rvOf(stored));
    } else {
      let lines: Map<string, string> | undefined;
      if (cache && variant !== undefined) {
        lines = cache.get(params.type);
        if (!lines) {
          lines = new Map();
          cache.set(params.type, lines);
        }
      }
      let line = lines?.get(variant!);
      if (line === undefined) {
        line = eventLine(type, objects.toExternal(params.type, stored));
        lines?.set(variant!, line);
      }
      this.writeLine(stream, type, line, objects.rvOf(stored));
    }
  }

  private sendBookmark(stream: Stream, annotations?: Record<string, string>): void {
    if (stream.converting) {
      // Behind the events still being converted, with the revision of when it was due.
      const rev = this.store.revision;
      stream.converting = stream.converting.then(() => this.sendBookmarkNow(stream, rev, annotations));
      return;
    }
    this.sendBookmarkNow(stream, this.store.revision, annotations);
  }

  private sendBookmarkNow(stream: Stream, revision: number, annotations?: Record<string, string>): void {
    if (stream.closed || stream.stalled || !stream.params.bookmarks) return;
    const metadata: JsonObject = { resourceVersion: String(revision) };
    if (annotations) metadata['annotations'] = annotations;
    const type = stream.params.type;
    const bookmark = keyorder.arrange(type, { kind: type.kind, apiVersion: resources.apiVersionOf(type), metadata });
    this.write(stream, 'BOOKMARK', bookmark, String(revision));
  }

  /** Sends an ERROR event with a Status and ends the stream. */
  sendError(stream: Stream | number, code: number, reason: string, message: string): void {
    const s = typeof stream === 'number' ? this.streams.get(stream) : stream;
    if (!s || s.closed) return;
    this.write(s, 'ERROR', { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code }, '');
    this.close(s, 'end');
  }

  private write(stream: Stream, type: WatchEventType, object: JsonObject, rv: string): void {
    if (stream.closed) return;
    this.writeLine(stream, type, eventLine(type, object), rv);
  }

  private writeLine(stream: Stream, type: WatchEventType, line: string, rv: string): void {
    if (stream.closed) return;
    this.options.onEvent?.({ stream: stream.id, type, rv });
    if (this.paused) {
      (stream.pending ??= []).push(line);
      if (stream.pending.length > this.options.queueLimit) {
        stream.pending = undefined;
        this.close(stream, 'end');
      }
      return;
    }
    stream.res.write(line);
    if (stream.res.writableLength > this.options.queueLimit * 1000) this.close(stream, 'end');
  }

  /** Holds events (D-FAULT-9) until `resume()`. */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    for (const stream of this.streams.values()) this.flush(stream);
    // Streams that ended while paused: their queued events first, then the end itself.
    const draining = [...this.draining];
    this.draining.clear();
    for (const [stream, how] of draining) {
      this.flush(stream);
      this.finish(stream, how);
    }
  }

  private flush(stream: Stream): void {
    const pending = stream.pending;
    stream.pending = undefined;
    if (pending && !stream.res.destroyed) for (const line of pending) stream.res.write(line);
  }

  private close(stream: Stream, how: 'end' | 'abort' | 'gone' | 'fault'): void {
    if (stream.closed) return;
    stream.closed = true;
    for (const cancel of stream.timers) cancel();
    this.streams.delete(stream.id);
    if (this.paused && (how === 'end' || how === 'fault')) {
      this.draining.set(stream, how);
      return;
    }
    this.finish(stream, how);
  }

  private finish(stream: Stream, how: 'end' | 'abort' | 'gone' | 'fault'): void {
    if (how === 'fault') {
      stream.onEnd?.();
      return;
    }
    if (how === 'abort') stream.res.destroy();
    else if (how === 'end') stream.res.end();
  }

  /** Acts on open streams (D-FAULT-6); returns how many were affected. */
  drop(match: { group?: string; resource?: string; namespace?: string; user?: string; userAgent?: RegExp; storage?: string }, mode: DropMode): number {
    let n = 0;
    for (const stream of [...this.streams.values()]) {
      const t = stream.params.type;
      if (match.group !== undefined && t.group !== match.group) continue;
      if (match.resource !== undefined && t.resource !== match.resource) continue;
      if (match.storage !== undefined && t.storage !== match.storage) continue;
      if (match.namespace !== undefined && stream.params.filter.namespace !== match.namespace) continue;
      if (match.user !== undefined && stream.params.user !== match.user) continue;
      if (match.userAgent !== undefined && !match.userAgent.test(stream.params.userAgent)) continue;
      n++;
      if (mode === 'expire') this.sendError(stream, 410, 'Expired', `too old resource version: ${stream.lastRev} (${this.store.revision})`);
      else this.close(stream, mode);
    }
    return n;
  }

  /** Ends one stream; `fault` hands the ending over to the stream's fault callback. */
  closeById(id: number, how: 'end' | 'abort' | 'fault'): void {
    const stream = this.streams.get(id);
    if (stream) this.close(stream, how);
  }

  closeAll(mode: 'end' | 'abort'): void {
    for (const stream of [...this.streams.values()]) this.close(stream, mode);
    if (mode === 'abort') {
      for (const stream of this.draining.keys()) stream.res.destroy();
      this.draining.clear();
    }
  }
}
