/**
 * The watcher's state machine, one transition at a time (R-WATCH-1..6): every step runs against a
 * scripted API (no cluster) on a virtual clock (no real sleeps), so back-offs and the inactivity
 * timeout are asserted to the virtual millisecond. The devcluster tests of `watching.test.ts` show
 * the same behaviour over real HTTP.
 */
import { describe, expect, it } from 'vitest';
import * as clocks from '../../../../runtime/cogs/aio/clocks.js';
import { Toggle, ToggleSet } from '../../../../runtime/cogs/aio/toggles.js';
import type * as api from '../../../../runtime/cogs/client/api.js';
import * as errors from '../../../../runtime/cogs/client/errors.js';
import type * as watchconnections from '../../../../runtime/cogs/client/watchconnections.js';
import * as watching from '../../../../runtime/cogs/client/watching.js';
import * as watchstates from '../../../../runtime/cogs/client/watchstates.js';
import * as settingsModule from '../../../../runtime/cogs/configs/settings.js';
import * as references from '../../../../runtime/cogs/structs/references.js';
import * as health from '../../../../runtime/core/engines/health.js';
import { flushed } from '../../../support/waiting.js';
import { RecordingLogger } from './helpers.js';

const CONFIGMAPS = references.makeResource({ group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap' });
const WHERE = "configmaps.v1 in 'ns'";

type State = watchstates.WatchState;
type Of<K extends State['kind']> = Extract<State, { kind: K }>;

/** The lines of one scripted watch connection: the test pushes them; an abort rejects a pending read. */
class FakeLines implements AsyncIterator<api.WatchLine> {
  private readonly queued: Array<IteratorResult<api.WatchLine> | { readonly error: unknown }> = [];
  private waiter: ((item: IteratorResult<api.WatchLine> | { readonly error: unknown }) => void) | undefined;
  returned = false;

  attach(signal: AbortSignal | undefined): void {
    signal?.addEventListener('abort', () => this.fail(signal.reason), { once: true });
  }
  push(type: string, name: string, resourceVersion?: string): this {
    return this.feed({ value: { type, object: { metadata: { name, resourceVersion } } }, done: false });
  }
  line(line: api.WatchLine): this {
    return this.feed({ value: line, done: false });
  }
  end(): this {
    return this.feed({ value: undefined, done: true });
  }
  fail(error: unknown): this {
    return this.feed({ error });
  }
  next(): Promise<IteratorResult<api.WatchLine>> {
    const item = this.queued.shift();
    if (item !== undefined) return this.settle(item);
    return new Promise((resolve) => {
      this.waiter = resolve;
    }).then((got) => this.settle(got as IteratorResult<api.WatchLine> | { readonly error: unknown }));
  }
  return(): Promise<IteratorResult<api.WatchLine>> {
    this.returned = true;
    return Promise.resolve({ value: undefined, done: true });
  }
  private feed(item: IteratorResult<api.WatchLine> | { readonly error: unknown }): this {
    const waiter = this.waiter;
    this.waiter = undefined;
    if (waiter) waiter(item);
    else this.queued.push(item);
    return this;
  }
  private settle(item: IteratorResult<api.WatchLine> | { readonly error: unknown }): Promise<IteratorResult<api.WatchLine>> {
    return 'error' in item ? Promise.reject(item.error) : Promise.resolve(item);
  }
}

type Answer<T> = T | Error;

/**
 * A scripted API: each list or watch request takes the next queued answer; a request without one
 * waits — a server that never answers — until its signal aborts.
 */
class FakeApi implements api.KubeReader, api.KubeWatcher {
  readonly requests: Array<{ readonly verb: 'list' | 'watch'; readonly options: api.WatchRequestOptions }> = [];
  private readonly lists: Answer<api.Listing>[] = [];
  private readonly watches: Answer<FakeLines>[] = [];

  /** Queues the answer to the next listing. */
  listing(answer: Answer<api.Listing>): this {
    this.lists.push(answer);
    return this;
  }
  /** Queues an accepted watch request (its lines are returned) or a refusal. */
  watching(refusal?: Error): FakeLines {
    const lines = new FakeLines();
    this.watches.push(refusal ?? lines);
    return lines;
  }
  count(verb: 'list' | 'watch'): number {
    return this.requests.filter((r) => r.verb === verb).length;
  }
  async list(_resource: references.Resource, _namespace: string | null, options: api.CallOptions = {}): Promise<api.Listing> {
    this.requests.push({ verb: 'list', options });
    return await answerOf(this.lists.shift(), options.signal);
  }
  async watch(_resource: references.Resource, _namespace: string | null, options: api.WatchRequestOptions = {}): Promise<AsyncIterable<api.WatchLine>> {
    this.requests.push({ verb: 'watch', options });
    const lines = await answerOf(this.watches.shift(), options.signal);
    lines.attach(options.signal);
    return { [Symbol.asyncIterator]: () => lines };
  }
  scanResources(): Promise<references.Resource[]> {
    throw new Error('not scripted');
  }
  get(): never {
    throw new Error('not scripted');
  }
}

function answerOf<T>(answer: Answer<T> | undefined, signal: AbortSignal | undefined): Promise<T> {
  if (answer instanceof Error) return Promise.reject(answer);
  if (answer !== undefined) return Promise.resolve(answer);
  return new Promise<T>((_resolve, reject) => {
    if (signal?.aborted) reject(signal.reason);
    signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/** One machine under test: its scripted API, clock, controls, and what it told its observers. */
function machine(options: { readonly paused?: Toggle | ToggleSet; readonly configure?: (s: settingsModule.OperatorSettings) => void } = {}) {
  const fake = new FakeApi();
  const clock = new clocks.VirtualClock({ start: 0 });
  const settings = new settingsModule.OperatorSettings();
  options.configure?.(settings);
  const logger = new RecordingLogger();
  const heard: string[] = [];
  const hear = (what: string) => (): void => {
    heard.push(what);
  };
  const observer: watchconnections.WatchObserver = {
    listing: hear('listing'),
    listed: hear('listed'),
    opened: hear('opened'),
    line: hear('line'),
    closed: hear('closed'),
    paused: hear('paused'),
    resumed: hear('resumed'),
  };
  const instruments = { listed: hear('#listed'), connected: hear('#connected'), gone: hear('#gone') };
  const ctx: watchconnections.WatchContext = { api: fake, settings, resource: CONFIGMAPS, namespace: 'ns', logger, clock, observer, instruments };
  const stopper = new AbortController();
  const controls = new watchstates.Controls(stopper.signal, options.paused);
  return {
    fake,
    clock,
    logger,
    heard,
    ctx,
    stopper,
    step: (state: State) => watchstates.step(state, ctx, controls),
    /** Steps until a state of `kind` (or an event) is reached; for setting up a later transition. */
    async reach<K extends State['kind']>(state: State, kind: K): Promise<Of<K>> {
      for (let i = 0; i < 100 && state.kind !== kind; i++) state = (await watchstates.step(state, ctx, controls)).state;
      if (state.kind !== kind) throw new Error(`never reached ${kind}`);
      return state as Of<K>;
    },
  };
}

/** Follows a promise without awaiting it: whether (and to what) it has settled so far. */
function track<T>(promise: Promise<T>): { readonly settled: boolean; readonly value: T | undefined } {
  const tracked = { settled: false, value: undefined as T | undefined };
  void promise.then((value) => {
    tracked.settled = true;
    tracked.value = value;
  });
  return tracked;
}

const listing = (resourceVersion: string, ...names: string[]): api.Listing => ({
  items: names.map((name) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' } })),
  resourceVersion,
});

/** A machine watching from version `rv` on an open connection, with what it heard so far forgotten. */
async function watchingFrom(rv = '7', options: Parameters<typeof machine>[0] = {}) {
  const m = machine(options);
  m.fake.listing(listing(rv));
  const lines = m.fake.watching();
  const state = await m.reach(watchstates.UNLISTED, 'watching');
  m.heard.length = 0;
  return { ...m, lines, state };
}

const names = (steps: watchstates.Step[]): string[] =>
  steps.map(({ event }) => (event === undefined ? '-' : watching.isListed(event) ? 'LISTED' : `${event.type ?? 'null'}:${event.object.metadata?.name}`));

describe('the watcher, step by step', () => {
  it('R-WATCH-1 unlisted → listed: one listing; then one object per step as a type-null event, then LISTED and connecting from the list version', async () => {
    const m = machine();
    m.fake.listing(listing('7', 'a', 'b'));
    const first = await m.step(watchstates.UNLISTED);
    expect(first.state).toMatchObject({ kind: 'listed', next: 0, resourceVersion: '7' });
    expect(first.event).toBeUndefined();
    expect(m.fake.requests.map((r) => r.verb)).toEqual(['list']);
    expect(m.heard).toEqual(['listing', '#listed']);
    const steps: watchstates.Step[] = [];
    let state = first.state;
    for (let i = 0; i < 3; i++) {
      const next = await m.step(state);
      steps.push(next);
      state = next.state;
    }
    expect(names(steps)).toEqual(['null:a', 'null:b', 'LISTED']);
    expect(steps[0]!.event).toMatchObject({ type: null, object: { kind: 'ConfigMap', apiVersion: 'v1' } });
    expect(state).toEqual({ kind: 'connecting', resourceVersion: '7' });
    expect(m.heard).toEqual(['listing', '#listed', 'listed']);
    expect(m.fake.requests.map((r) => r.verb)).toEqual(['list']);
  });

  it('R-WATCH-1 an empty listing hands out LISTED at once', async () => {
    const m = machine();
    m.fake.listing(listing('3'));
    const listed = await m.step(watchstates.UNLISTED);
    const marker = await m.step(listed.state);
    expect(marker.event).toBe(watching.LISTED);
    expect(marker.state).toEqual({ kind: 'connecting', resourceVersion: '3' });
  });

  it('R-WATCH-2 connecting → watching: the watch request from the version, with the timeouts of the settings', async () => {
    const m = machine({
      configure: (s) => {
        s.watching.serverTimeout = 30;
        s.watching.clientTimeout = 45;
        s.networking.connectTimeout = 5;
      },
    });
    m.fake.watching();
    const { state, event } = await m.step({ kind: 'connecting', resourceVersion: '7' });
    expect(state).toMatchObject({ kind: 'watching', resourceVersion: '7' });
    expect(event).toBeUndefined();
    expect(m.fake.requests[0]).toMatchObject({ verb: 'watch', options: { resourceVersion: '7', timeoutSeconds: 30, clientTimeout: 45, connectTimeout: 5 } });
    expect(m.heard).toEqual(['#connected', 'opened']);
  });

  it('R-WATCH-2 the connect timeout is the first set of watching.connectTimeout, networking.connectTimeout, networking.requestTimeout', async () => {
    const timeouts: unknown[] = [];
    for (const configure of [
      (s: settingsModule.OperatorSettings) => {
        s.watching.connectTimeout = 1;
        s.networking.connectTimeout = 2;
      },
      (s: settingsModule.OperatorSettings) => {
        s.networking.connectTimeout = 2;
      },
      (s: settingsModule.OperatorSettings) => {
        s.networking.requestTimeout = 3;
      },
    ]) {
      const m = machine({ configure });
      m.fake.watching();
      await m.step({ kind: 'connecting', resourceVersion: '7' });
      timeouts.push(m.fake.requests[0]!.options.connectTimeout);
    }
    expect(timeouts).toEqual([1, 2, 3]);
  });

  it('R-WATCH-3 watching: ADDED, MODIFIED and DELETED are handed out and move the version; a BOOKMARK only moves it', async () => {
    const m = await watchingFrom('7');
    m.lines.push('ADDED', 'a', '8').push('BOOKMARK', '', '9').push('MODIFIED', 'a', '10').push('DELETED', 'a', '11');
    const steps: watchstates.Step[] = [];
    let state: State = m.state;
    for (let i = 0; i < 4; i++) {
      const next = await m.step(state);
      steps.push(next);
      state = next.state;
    }
    expect(names(steps)).toEqual(['ADDED:a', '-', 'MODIFIED:a', 'DELETED:a']);
    expect(steps.map((s) => (s.state as Of<'watching'>).resourceVersion)).toEqual(['8', '9', '10', '11']);
    expect(steps.every((s) => s.state.kind === 'watching')).toBe(true);
    expect(m.heard).toEqual(['line', 'line', 'line', 'line']);
  });

  it('R-WATCH-3 an ERROR 410 closes the connection and re-lists after exactly the back-off (debug log; counted as gone)', async () => {
    const m = await watchingFrom('7');
    m.lines.line({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
    const { state } = await m.step(m.state);
    expect(state).toEqual({ kind: 'relisting' });
    expect(m.lines.returned).toBe(true);
    expect(m.heard).toEqual(['line', '#gone', 'closed']);
    expect(m.logger.messages('debug')).toContain(`Restarting the watch-stream for ${WHERE}.`);
    const backoff = track(m.step(state));
    await m.clock.advance(99);
    expect(backoff.settled).toBe(false);
    await m.clock.advance(1);
    expect(backoff.value).toEqual({ state: watchstates.UNLISTED });
    expect(m.fake.count('list')).toBe(1);
  });

  it('R-WATCH-3 an ERROR other than 410 ends in failed with a WatchingError; the connection is closed', async () => {
    const m = await watchingFrom('7');
    m.lines.line({ type: 'ERROR', object: { kind: 'Status', code: 500, message: 'boom' } });
    const { state } = await m.step(m.state);
    expect(state.kind).toBe('failed');
    const error = (state as Of<'failed'>).error as errors.WatchingError;
    expect(error).toBeInstanceOf(errors.WatchingError);
    expect(error.message).toMatch(/^Error in the watch-stream: \{.*"code":500/);
    expect(m.heard).toEqual(['line', 'closed']);
    expect(await m.step(state)).toEqual({ state }); // the end stays the end
  });

  it('R-WATCH-3 unknown event types are ignored with a warning and change nothing', async () => {
    const m = await watchingFrom('7');
    m.lines.line({ type: 'SURPRISE', object: { metadata: { name: 'x', resourceVersion: '99' } } });
    const { state, event } = await m.step(m.state);
    expect(state).toBe(m.state);
    expect(event).toBeUndefined();
    expect(m.logger.messages('warning')[0]).toMatch(/^Ignoring an unsupported event type: .*SURPRISE/);
  });

  it('R-WATCH-4 a stream ended by the server is watched again at once from the last version: no listing, no back-off', async () => {
    const m = await watchingFrom('7');
    m.lines.push('ADDED', 'a', '8').end();
    const added = await m.step(m.state);
    const ended = await m.step(added.state);
    expect(ended.state).toEqual({ kind: 'connecting', resourceVersion: '8' });
    expect(m.heard).toEqual(['line', 'closed']);
    m.fake.watching();
    expect((await m.step(ended.state)).state).toMatchObject({ kind: 'watching', resourceVersion: '8' });
    expect(m.fake.requests.map((r) => [r.verb, r.options.resourceVersion])).toEqual([
      ['list', undefined],
      ['watch', '7'],
      ['watch', '8'],
    ]);
    expect(m.clock.now()).toBe(0);
  });

  it('R-WATCH-4 a broken connection and a client-side timeout are swallowed: connecting from the last version', async () => {
    for (const failure of [new errors.ConnectionError('socket hang up'), new errors.RequestTimeoutError('timed out')]) {
      const m = await watchingFrom('7');
      m.lines.fail(failure);
      expect((await m.step(m.state)).state).toEqual({ kind: 'connecting', resourceVersion: '7' });
      expect(m.heard).toEqual(['closed']);
      expect(m.logger.messages('warning')).toEqual([]);
    }
  });

  it('R-WATCH-4 a watch request that cannot connect is retried from the same version after exactly the back-off', async () => {
    const m = machine();
    m.fake.watching(new errors.ConnectionError('connect ECONNREFUSED'));
    const refused = await m.step({ kind: 'connecting', resourceVersion: '7' });
    expect(refused.state).toEqual({ kind: 'reconnecting', resourceVersion: '7' });
    expect(m.heard).toEqual([]); // never opened: neither opened nor closed
    const backoff = track(m.step(refused.state));
    await m.clock.advance(99);
    expect(backoff.settled).toBe(false);
    await m.clock.advance(1);
    expect(backoff.value).toEqual({ state: { kind: 'connecting', resourceVersion: '7' } });
  });

  it('R-WATCH-4 a listing refused by a connection error, a timeout or a persisting 429 is repeated after exactly the back-off', async () => {
    for (const failure of [new errors.ConnectionError('connect ECONNREFUSED'), new errors.RequestTimeoutError('timed out'), errors.apiErrorFor(429, '')]) {
      const m = machine({
        configure: (s) => {
          s.watching.reconnectBackoff = 2.5;
        },
      });
      m.fake.listing(failure);
      const refused = await m.step(watchstates.UNLISTED);
      expect(refused.state).toEqual({ kind: 'relisting', error: failure });
      const backoff = track(m.step(refused.state));
      await m.clock.advance(2499);
      expect(backoff.settled).toBe(false);
      await m.clock.advance(1);
      expect(backoff.value).toEqual({ state: watchstates.UNLISTED });
    }
  });

  it('R-WATCH-4 other listing errors end in failed', async () => {
    const m = machine();
    const forbidden = errors.apiErrorFor(403, '');
    m.fake.listing(forbidden);
    expect((await m.step(watchstates.UNLISTED)).state).toEqual({ kind: 'failed', error: forbidden });
  });

  it('R-WATCH-3 R-WATCH-4 a watch request answered 410 re-lists (logged, counted as gone); 429 re-lists; others fail', async () => {
    const m = machine();
    m.fake.watching(errors.apiErrorFor(410, ''));
    expect((await m.step({ kind: 'connecting', resourceVersion: '7' })).state).toEqual({ kind: 'relisting' });
    expect(m.heard).toEqual(['#gone']);
    expect(m.logger.messages('debug')).toContain(`Restarting the watch-stream for ${WHERE}.`);
    const throttled = errors.apiErrorFor(429, '');
    m.fake.watching(throttled);
    expect((await m.step({ kind: 'connecting', resourceVersion: '7' })).state).toEqual({ kind: 'relisting', error: throttled });
    const forbidden = errors.apiErrorFor(403, '');
    m.fake.watching(forbidden);
    expect((await m.step({ kind: 'connecting', resourceVersion: '7' })).state).toEqual({ kind: 'failed', error: forbidden });
  });

  it('R-WATCH-5 no line for watching.inactivityTimeout drops the connection (debug log) and watches again from the same version', async () => {
    const m = await watchingFrom('7');
    m.lines.push('ADDED', 'a', '8');
    const added = await m.step(m.state);
    await m.clock.advance(100_000); // the consumer handles the event for long: that is not silence
    const silent = track(m.step(added.state));
    await m.clock.advance(69_999);
    expect(silent.settled).toBe(false);
    await m.clock.advance(1);
    expect(silent.value).toEqual({ state: { kind: 'connecting', resourceVersion: '8' } });
    expect(m.lines.returned).toBe(true);
    expect(m.heard).toEqual(['line', 'closed']);
    expect(m.logger.messages('debug')).toContain(`Watch-stream for ${WHERE} is inactive, reconnecting.`);
    expect(m.fake.count('list')).toBe(1);
  });

  it('R-WATCH-5 a line, a bookmark included, restarts the inactivity countdown', async () => {
    const m = await watchingFrom('7', {
      configure: (s) => {
        s.watching.inactivityTimeout = 10;
      },
    });
    const reading = track(m.step(m.state));
    await m.clock.advance(9_000);
    m.lines.push('BOOKMARK', '', '8');
    await flushed();
    expect(reading.value?.state).toMatchObject({ kind: 'watching', resourceVersion: '8' });
    const next = track(m.step(reading.value!.state));
    await m.clock.advance(9_999);
    expect(next.settled).toBe(false);
    await m.clock.advance(1);
    expect(next.value?.state).toEqual({ kind: 'connecting', resourceVersion: '8' });
  });

  it('R-WATCH-5 a watch request unanswered for watching.inactivityTimeout is dropped and sent again', async () => {
    const m = machine({
      configure: (s) => {
        s.watching.inactivityTimeout = 5;
      },
    });
    const connecting = track(m.step({ kind: 'connecting', resourceVersion: '7' })); // no answer scripted
    await m.clock.advance(5_000);
    expect(connecting.value).toEqual({ state: { kind: 'connecting', resourceVersion: '7' } });
    expect(m.fake.requests[0]!.options.signal?.aborted).toBe(true);
    expect(m.heard).toEqual([]);
  });

  it('R-WATCH-6 while a pause is on, nothing is listed: the watcher waits (debug logs) and re-lists when it ends', async () => {
    const paused = new Toggle(true);
    const m = machine({ paused });
    const first = await m.step(watchstates.UNLISTED);
    expect(first.state).toEqual({ kind: 'paused' });
    const waiting = track(m.step(first.state));
    await flushed();
    expect(waiting.settled).toBe(false);
    expect(m.fake.requests).toEqual([]);
    expect(m.heard).toEqual(['paused']);
    expect(m.logger.messages('debug')).toEqual([`Pausing the watch-stream for ${WHERE}.`]);
    paused.turnOff();
    await flushed();
    expect(waiting.value).toEqual({ state: watchstates.UNLISTED });
    expect(m.heard).toEqual(['paused', 'resumed']);
    expect(m.logger.messages('debug')).toEqual([`Pausing the watch-stream for ${WHERE}.`, `Resuming the watch-stream for ${WHERE}.`]);
  });

  it("R-CLI-603 a pause held by named toggles is logged with Kopf's blockers, and the resumption without them", async () => {
    const set = new ToggleSet('any');
    const peering = set.makeToggle(true, 'default@None');
    set.makeToggle(false, 'peering CRD is missing');
    const unnamed = set.makeToggle(true); // not listed, as in Kopf
    const m = machine({ paused: set });
    const first = await m.step(watchstates.UNLISTED);
    const waiting = track(m.step(first.state));
    await flushed();
    expect(m.logger.messages('debug')).toEqual([`Pausing the watch-stream for ${WHERE} (blockers: default@None).`]);
    peering.turnOff();
    unnamed.turnOff();
    await flushed();
    expect(waiting.value).toEqual({ state: watchstates.UNLISTED });
    expect(m.logger.messages('debug')).toEqual([`Pausing the watch-stream for ${WHERE} (blockers: default@None).`, `Resuming the watch-stream for ${WHERE}.`]);
  });

  it('R-WATCH-6 a pause that begins while watching closes the connection at once', async () => {
    const paused = new Toggle(false);
    const m = await watchingFrom('7', { paused });
    const reading = track(m.step(m.state));
    await flushed();
    paused.turnOn();
    await flushed();
    expect(reading.value).toEqual({ state: { kind: 'paused' } });
    expect(m.lines.returned).toBe(true);
    expect(m.fake.requests.at(-1)!.options.signal?.aborted).toBe(true);
    expect(m.heard).toEqual(['closed']);
  });

  it('R-WATCH-6 a pause that begins during a listing, a watch request or a back-off interrupts it', async () => {
    for (const state of [
      watchstates.UNLISTED,
      { kind: 'connecting', resourceVersion: '7' },
      { kind: 'relisting' },
      { kind: 'reconnecting', resourceVersion: '7' },
    ] as State[]) {
      const paused = new Toggle(false);
      const m = machine({ paused }); // nothing scripted: the requests wait
      const pending = track(m.step(state));
      await flushed();
      expect(pending.settled).toBe(false);
      paused.turnOn();
      await flushed();
      expect(pending.value).toEqual({ state: { kind: 'paused' } });
    }
  });

  it('R-WATCH-6 a pause that is already over when the watcher gets to it re-lists at once, without pausing', async () => {
    const m = machine({ paused: new Toggle(false) });
    expect(await m.step({ kind: 'paused' })).toEqual({ state: watchstates.UNLISTED });
    expect(m.heard).toEqual([]);
  });

  it('the signal stops the watcher from any step: an open connection is closed; a pause is waited out no longer', async () => {
    const w = await watchingFrom('7');
    const reading = track(w.step(w.state));
    await flushed();
    w.stopper.abort();
    await flushed();
    expect(reading.value).toEqual({ state: { kind: 'stopped' } });
    expect(w.heard).toEqual(['closed']);

    const p = machine({ paused: new Toggle(true) });
    const pausing = track(p.step({ kind: 'paused' }));
    await flushed();
    p.stopper.abort();
    await flushed();
    expect(pausing.value).toEqual({ state: { kind: 'stopped' } });

    const b = machine();
    b.stopper.abort();
    expect(await b.step({ kind: 'relisting' })).toEqual({ state: { kind: 'stopped' } });
    expect(await b.step({ kind: 'stopped' })).toEqual({ state: { kind: 'stopped' } });
    expect(b.clock.pending).toBe(0);
  });
});

describe('the drivers of the machine', () => {
  /** Collects what an iterator yields until it ends or throws. */
  async function collect(iterator: AsyncIterable<watching.WatchEvent>, into: watching.WatchEvent[]): Promise<unknown> {
    try {
      for await (const event of iterator) into.push(event);
      return undefined;
    } catch (error) {
      return error;
    }
  }
  const named = (events: watching.WatchEvent[]): string[] =>
    events.map((e) => (watching.isListed(e) ? 'LISTED' : `${e.type ?? 'null'}:${e.object.metadata?.name}`));

  it('R-WATCH-1 R-WATCH-3 R-WATCH-4 infiniteWatch lists, watches, re-lists after a 410 and the back-off, and ends only on its signal', async () => {
    const m = machine();
    m.fake.listing(listing('7', 'a'));
    const first = m.fake.watching();
    first.push('ADDED', 'b', '8').line({ type: 'ERROR', object: { code: 410 } });
    m.fake.listing(listing('9', 'a', 'b'));
    const second = m.fake.watching();
    const events: watching.WatchEvent[] = [];
    const done = collect(watching.infiniteWatch(m.ctx, { signal: m.stopper.signal }), events);
    await m.clock.advance(100);
    expect(named(events)).toEqual(['null:a', 'LISTED', 'ADDED:b', 'null:a', 'null:b', 'LISTED']);
    expect(m.fake.requests.map((r) => [r.verb, r.options.resourceVersion])).toEqual([
      ['list', undefined],
      ['watch', '7'],
      ['list', undefined],
      ['watch', '9'],
    ]);
    m.stopper.abort();
    expect(await done).toBeUndefined();
    expect(second.returned).toBe(true);
    expect(m.logger.messages('debug')).toEqual([
      `Starting the watch-stream for ${WHERE}.`,
      `Restarting the watch-stream for ${WHERE}.`,
      `Stopping the watch-stream for ${WHERE}.`,
    ]);
  });

  it('R-WATCH-3 infiniteWatch throws a fatal error after closing the connection', async () => {
    const m = machine();
    m.fake.listing(listing('7'));
    m.fake.watching().line({ type: 'ERROR', object: { code: 500 } });
    const events: watching.WatchEvent[] = [];
    expect(await collect(watching.infiniteWatch(m.ctx, { signal: m.stopper.signal }), events)).toBeInstanceOf(errors.WatchingError);
    expect(named(events)).toEqual(['LISTED']);
    expect(m.heard.at(-1)).toBe('closed');
  });

  it('R-WATCH-6 infiniteWatch started while paused waits before listing, and a consumer leaving early closes the stream', async () => {
    const paused = new Toggle(true);
    const m = machine({ paused });
    m.fake.listing(listing('7', 'a'));
    const lines = m.fake.watching();
    const iterator = watching.infiniteWatch(m.ctx, { paused, signal: m.stopper.signal });
    const first = track(iterator.next());
    await flushed();
    expect(m.fake.requests).toEqual([]);
    expect(m.logger.messages('debug')).toEqual([`Starting the watch-stream for ${WHERE} (paused).`, `Pausing the watch-stream for ${WHERE}.`]);
    paused.turnOff();
    await flushed();
    expect(first.value?.value).toMatchObject({ type: null });
    expect((await iterator.next()).value).toBe(watching.LISTED);
    lines.push('ADDED', 'b', '8');
    expect((await iterator.next()).value).toMatchObject({ type: 'ADDED' });
    expect(m.heard).toContain('opened');
    await iterator.return(undefined); // the consumer leaves while it holds an event
    expect(lines.returned).toBe(true);
    expect(m.heard.at(-1)).toBe('closed');
  });

  it('R-WATCH-3 continuousWatch ends where a re-list is due after a 410, and throws where the listing fails', async () => {
    const m = machine();
    m.fake.listing(listing('7', 'a'));
    m.fake.watching().line({ type: 'ERROR', object: { code: 410 } });
    const events: watching.WatchEvent[] = [];
    expect(await collect(watching.continuousWatch(m.ctx, { signal: m.stopper.signal }), events)).toBeUndefined();
    expect(named(events)).toEqual(['null:a', 'LISTED']);
    const refused = new errors.ConnectionError('connect ECONNREFUSED');
    m.fake.listing(refused);
    expect(await collect(watching.continuousWatch(m.ctx, { signal: m.stopper.signal }), [])).toBe(refused);
  });

  it('R-WATCH-2 R-WATCH-5 streamWatch yields one connection’s lines as they are, and ends quietly when inactive', async () => {
    const m = machine();
    const lines = m.fake.watching();
    lines.push('BOOKMARK', '', '8').line({ type: 'ERROR', object: { code: 410 } });
    const got: api.WatchLine[] = [];
    const done = (async () => {
      for await (const line of watching.streamWatch(m.ctx, { resourceVersion: '7', signal: m.stopper.signal })) got.push(line);
    })();
    await m.clock.advance(70_000);
    await done;
    expect(got.map((l) => l.type)).toEqual(['BOOKMARK', 'ERROR']);
    expect(m.logger.messages('debug')).toEqual([`Watch-stream for ${WHERE} is inactive, reconnecting.`]);
  });

  it('the health tracker hears a stream open, listed, closed by a pause and listed again after it', async () => {
    const paused = new Toggle(false);
    const m = machine({ paused });
    const streams = new health.StreamHealth(m.clock);
    const tracker = streams.track('configmaps@ns', WHERE);
    const ctx = { ...m.ctx, observer: tracker };
    m.fake.listing(listing('7', 'a'));
    m.fake.watching();
    const events: watching.WatchEvent[] = [];
    const done = collect(watching.infiniteWatch(ctx, { paused, signal: m.stopper.signal }), events);
    await flushed();
    expect(tracker.snapshot()).toMatchObject({ listed: true, open: true, paused: false });
    paused.turnOn();
    await flushed();
    expect(tracker.snapshot()).toMatchObject({ open: false, paused: true });
    await m.clock.advance(60_000);
    m.fake.listing(listing('9', 'a'));
    m.fake.watching();
    paused.turnOff();
    await flushed();
    expect(tracker.snapshot()).toMatchObject({ listed: true, open: true, paused: false, startedAt: 60_000 });
    expect(named(events)).toEqual(['null:a', 'LISTED', 'null:a', 'LISTED']);
    m.stopper.abort();
    await done;
  });
});
