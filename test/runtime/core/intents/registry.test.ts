import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RawBody, RawEventType } from '../../../../runtime/cogs/structs/bodies.js';
import type { JsonObject } from '../../../../runtime/cogs/structs/dicts.js';
import { makeResource } from '../../../../runtime/cogs/structs/references.js';
import { detectChangingCause, type ChangingCause } from '../../../../runtime/core/intents/causes.js';
import { PRESENT } from '../../../../runtime/core/intents/filters.js';
import * as handlers from '../../../../runtime/core/intents/handlers.js';
import * as registries from '../../../../runtime/core/intents/registry.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import { parseSelector } from '../../../../runtime/core/intents/selectors.js';
import { on } from '../../../../runtime/on.js';
import * as intentErrors from '../../../../runtime/core/intents/errors.js';

const FINALIZER = 'kopf.zalando.org/KopfFinalizerMarker';
const kex = makeResource({ group: 'kopf.dev', version: 'v1', plural: 'kopfexamples', kind: 'KopfExample' });
const pods = makeResource({ group: '', version: 'v1', plural: 'pods', kind: 'Pod' });

function object(options: { labels?: Record<string, string>; deleting?: boolean; spec?: JsonObject } = {}): RawBody {
  return {
    metadata: {
      name: 'kex',
      namespace: 'ns',
      uid: 'u1',
      labels: options.labels ?? {},
      finalizers: [FINALIZER],
      ...(options.deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}),
    },
    spec: options.spec ?? { field: 'value' },
  };
}

function cause(
  old: JsonObject | null,
  now: JsonObject,
  options: { initial?: boolean; deleting?: boolean; type?: RawEventType; labels?: Record<string, string> } = {},
): ChangingCause {
  const body = object({ deleting: options.deleting, labels: options.labels, spec: now['spec'] as JsonObject });
  return detectChangingCause({
    resource: kex,
    finalizer: FINALIZER,
    event: { type: options.type ?? 'MODIFIED', object: body },
    old,
    new: now,
    initial: options.initial ?? false,
  });
}

const BASE: JsonObject = { spec: { field: 'value', other: 1 } };
const CHANGED: JsonObject = { spec: { field: 'changed', other: 1 } };
const OTHER: JsonObject = { spec: { field: 'value', other: 2 } };
const ids = (list: ReadonlyArray<{ id: string }>): string[] => list.map((h) => h.id);

describe('changingHandlers', () => {
  function setup(): OperatorRegistry {
    const registry = new OperatorRegistry();
    on.create('kopfexamples', { registry }, function created() {});
    on.update('kopfexamples', { registry }, function updated() {});
    on.delete('kopfexamples', { registry }, function deleted() {});
    on.resume('kopfexamples', { registry }, function resumed() {});
    on.resume('kopfexamples', { registry, deleted: true }, function resumedDeleted() {});
    on.field('kopfexamples', 'spec.field', { registry }, function fielded() {});
    on.update('kopfexamples', { registry, field: 'spec.other' }, function otherUpdated() {});
    on.create('pods', { registry }, function podCreated() {});
    return registry;
  }

  it.each<[string, ChangingCause, string[]]>([
    [
      'R-CAUSE-3 create never mixes resume handlers in; field handlers fire on creation (R-CAUSE-4)',
      cause(null, BASE, { initial: true, type: null }),
      ['created', 'fielded/spec.field'],
    ],
    ['R-HANDLERS-11 update of spec.field', cause(BASE, CHANGED), ['updated', 'fielded/spec.field']],
    ['R-HANDLERS-11 update of spec.other', cause(BASE, OTHER), ['updated', 'otherUpdated/spec.other']],
    [
      'R-CAUSE-3 update of an initial object mixes resume handlers in, in registration order',
      cause(BASE, CHANGED, { initial: true, type: null }),
      ['updated', 'resumed', 'resumedDeleted', 'fielded/spec.field'],
    ],
    [
      'R-CAUSE-3 resume of an initial object; R-CAUSE-4 no field handlers without changes',
      cause(BASE, BASE, { initial: true, type: null }),
      ['resumed', 'resumedDeleted'],
    ],
    [
      'R-CAUSE-3 deletion of an initial object only mixes in resume handlers with deleted: true',
      cause(BASE, BASE, { initial: true, deleting: true }),
      ['deleted', 'resumedDeleted'],
    ],
    [
      'R-CAUSE-7 deletion with changes: no update handlers, field handlers still fire',
      cause(BASE, CHANGED, { deleting: true }),
      ['deleted', 'fielded/spec.field'],
    ],
    ['noop selects nothing', cause(BASE, BASE), []],
    ['gone selects nothing', cause(BASE, CHANGED, { type: 'DELETED' }), []],
  ])('%s', (_title, c, expected) => {
    expect(ids(setup().changingHandlers(c))).toEqual(expected);
  });

  it('R-HANDLERS-3 runs one function once per cycle when selected twice with the same id', () => {
    const registry = new OperatorRegistry();
    function both(): void {}
    on.update('kopfexamples', { registry }, both);
    on.resume('kopfexamples', { registry }, both);
    on.update(['kopf.dev', 'kopfexamples'], { registry }, both);
    expect(registry.changingHandlers(cause(BASE, CHANGED, { initial: true }))).toHaveLength(1);
  });

  it('R-HANDLERS-3 registrations of one function with different fields run separately', () => {
    const registry = new OperatorRegistry();
    function watcher(): void {}
    on.field('kopfexamples', 'spec.field', { registry }, watcher);
    on.field('kopfexamples', 'spec.other', { registry }, watcher);
    const changedBoth = cause(BASE, { spec: { field: 'changed', other: 2 } });
    expect(ids(registry.changingHandlers(changedBoth))).toEqual(['watcher/spec.field', 'watcher/spec.other']);
  });

  it('R-HANDLERS-10 a create+resume function runs once: creation selects create, restart selects resume', () => {
    const registry = new OperatorRegistry();
    function ensure(): void {}
    on.create('kopfexamples', { registry }, on.resume('kopfexamples', { registry }, ensure));
    expect(registry.changingHandlers(cause(null, BASE, { initial: true }))).toMatchObject([{ reason: 'create', fn: ensure }]);
    expect(registry.changingHandlers(cause(BASE, BASE, { initial: true }))).toMatchObject([{ reason: null, initial: true, fn: ensure }]);
  });

  it('R-FILTERS-1 passes the kwargs builder output to filter callbacks, lazily', () => {
    const registry = new OperatorRegistry();
    const when = vi.fn((kwargs: object) => (kwargs as { marker?: number }).marker === 7);
    on.update('kopfexamples', { registry, when }, function gated() {});
    on.update('kopfexamples', { registry }, function ungated() {});
    const build = vi.fn((_handler: unknown, _subject: unknown) => ({ marker: 7 }));
    expect(ids(registry.changingHandlers(cause(BASE, CHANGED), { kwargs: build }))).toEqual(['gated', 'ungated']);
    expect(build).toHaveBeenCalledTimes(1);
    expect(build.mock.calls[0]![0]).toMatchObject({ id: 'gated' });
  });

  it('R-KWARGS-3 the basic kwargs give field values as old/new and reduce the diff', () => {
    const registry = new OperatorRegistry();
    const seen: unknown[] = [];
    on.field(
      'kopfexamples',
      'spec.field',
      {
        registry,
        when: (kwargs) => {
          seen.push(kwargs);
          return true;
        },
      },
      function f() {},
    );
    registry.changingHandlers(cause(BASE, CHANGED));
    expect(seen[0]).toMatchObject({ old: 'value', new: 'changed', oldValue: 'value', newValue: 'changed', reason: 'update', name: 'kex', namespace: 'ns' });
    expect((seen[0] as { diff: unknown[] }).diff.map((item) => [...(item as unknown[])])).toEqual([['change', [], 'value', 'changed']]);
  });
});

describe('prematchChanging (stealth mode, A-28)', () => {
  const registry = new OperatorRegistry();
  on.create('kopfexamples', { registry, labels: { track: 'yes' } }, function created() {});
  on.update('kopfexamples', { registry, labels: { track: 'yes' }, field: 'spec.field', new: 'changed' }, function updated() {});

  it('R-CAUSE-5 objects that no change handler pre-matches are not pre-matched', () => {
    expect(registry.prematchChanging(cause(null, BASE))).toBe(false);
    expect(registry.prematchChanging(cause(null, BASE, { labels: { track: 'yes' } }))).toBe(true);
  });

  it('R-FILTERS-8 pre-matching ignores the field change', () => {
    const onlyUpdate = new OperatorRegistry();
    on.update('kopfexamples', { registry: onlyUpdate, field: 'spec.field', new: 'changed' }, function updated() {});
    expect(onlyUpdate.changingHandlers(cause(BASE, OTHER))).toEqual([]);
    expect(onlyUpdate.prematchChanging(cause(BASE, { spec: { field: 'changed', other: 1 } }))).toBe(true);
  });

  it('R-CAUSE-5 handlers of other resources do not pre-match', () => {
    const other = new OperatorRegistry();
    on.create('pods', { registry: other }, function podCreated() {});
    expect(other.prematchChanging(cause(null, BASE))).toBe(false);
    expect(other.hasChangingHandlers(kex)).toBe(false);
    expect(other.hasChangingHandlers(pods)).toBe(true);
  });
});

describe('requiresFinalizer', () => {
  const subject = (labels: Record<string, string> = {}) => ({ resource: kex, body: object({ labels }) });

  it.each<[string, (registry: OperatorRegistry) => void, boolean]>([
    ['R-FINAL-2 a non-optional delete handler', (registry) => on.delete('kopfexamples', { registry }, function d() {}), true],
    ['R-HANDLERS-9 an optional delete handler', (registry) => on.delete('kopfexamples', { registry, optional: true }, function d() {}), false],
    [
      'R-FINAL-2 a delete handler that does not pre-match',
      (registry) => on.delete('kopfexamples', { registry, labels: { a: PRESENT } }, function d() {}),
      false,
    ],
    ['R-FINAL-2 a delete handler of another resource', (registry) => on.delete('pods', { registry }, function d() {}), false],
    ['R-FINAL-2 a create handler', (registry) => on.create('kopfexamples', { registry }, function c() {}), false],
    ['R-FINAL-2 a matching daemon', (registry) => on.daemon('kopfexamples', { registry }, async function d() {}), true],
    ['R-FINAL-2 a matching timer', (registry) => on.timer('kopfexamples', { registry, interval: 1 }, function t() {}), true],
    ['R-FINAL-2 a mismatching timer', (registry) => on.timer('kopfexamples', { registry, labels: { a: 'b' } }, function t() {}), false],
    [
      'R-FINAL-2 an on-event handler or an indexer',
      (registry) => {
        on.event('kopfexamples', { registry }, function e() {});
        on.index('kopfexamples', { registry }, function i() {});
      },
      false,
    ],
  ])('%s → %s', (_title, register, expected) => {
    const registry = new OperatorRegistry();
    register(registry);
    expect(registry.requiresFinalizer(subject())).toBe(expected);
  });

  it('R-DAEMON-4 daemons stopped forever no longer require the finalizer', () => {
    const registry = new OperatorRegistry();
    on.daemon('kopfexamples', { registry }, async function monitor() {});
    expect(registry.requiresFinalizer(subject(), { stoppedForever: (h) => h.id === 'monitor' })).toBe(false);
    expect(registry.requiresFinalizer(subject(), { stoppedForever: () => false })).toBe(true);
  });
});

describe('other selections', () => {
  const registry = new OperatorRegistry();
  on.event('kopfexamples', { registry }, function everyEvent() {});
  on.event('kopfexamples', { registry, labels: { a: 'b' } }, function labelled() {});
  on.event('pods', { registry }, function podEvent() {});
  on.daemon('kopfexamples', { registry, field: 'spec.field', value: 'value' }, async function fieldDaemon() {});
  on.timer('kopfexamples', { registry, interval: 1, field: 'status.phase' }, function phaseTimer() {});
  on.index('kopfexamples', { registry, field: 'spec.ignored' }, function byName() {});
  // on.validate()/on.mutate() throw until admission webhooks are served: register their descriptors directly.
  const webhook = (type: 'validating' | 'mutating', options: handlers.RawOptions, fn: () => void): void => {
    registry.register(handlers.webhookHandler(fn, options, parseSelector('kopfexamples'), type));
  };
  webhook('validating', { field: 'spec.ignored2' }, function check() {});
  webhook('mutating', {}, function mutateAll() {});
  webhook('mutating', { operations: ['DELETE'] }, function mutateDeletions() {});
  webhook('validating', { subresource: 'status', operations: ['UPDATE'] }, function statusCheck() {});
  webhook('validating', { subresource: '*' }, function anySub() {});
  on.field('kopfexamples', 'spec.field', { registry }, function f1() {});
  on.update('kopfexamples', { registry, field: 'spec.field' }, function f2() {});
  on.startup({ registry }, function boot() {});
  on.login({ registry }, function creds() {});

  it('R-EVENT-1 on-event handlers are selected by resource and filters', () => {
    const cause = { resource: kex, event: { type: null, object: object() }, type: null, body: object() };
    expect(ids(registry.watchingHandlers(cause))).toEqual(['everyEvent']);
  });

  it('R-DAEMON-9 daemons and timers are selected by their filters on the current body', () => {
    expect(ids(registry.spawningHandlers({ resource: kex, body: object() }))).toEqual(['fieldDaemon/spec.field']);
    const withPhase = { ...object({ spec: { field: 'other' } }), status: { phase: 'Ready' } };
    expect(ids(registry.spawningHandlers({ resource: kex, body: withPhase }))).toEqual(['phaseTimer/status.phase']);
    expect(ids(registry.spawningHandlersOf(kex))).toEqual(['fieldDaemon/spec.field', 'phaseTimer/status.phase']);
  });

  it('R-INDEX-1 indexers are selected by their filters; the index name is the id', () => {
    expect(ids(registry.indexingHandlers({ resource: kex, body: object() }))).toEqual([]);
    expect(ids(registry.indexingHandlers({ resource: kex, body: object({ spec: { ignored: 1 } }) }))).toEqual(['byName']);
    expect(registry.indexNames()).toEqual(['byName']);
  });

  it('R-ESSENCE-2 extra fields come from on-event, change, daemon and timer handlers of the resource', () => {
    expect(registry.extraFields(kex)).toEqual([
      ['spec', 'field'],
      ['status', 'phase'],
    ]);
    expect(registry.extraFields(pods)).toEqual([]);
  });

  it.each<[string, Omit<registries.WebhookSubject, 'resource' | 'body'>, string[]]>([
    ['validating handlers for a main-body CREATE', { type: 'validating', subresource: null, operation: 'CREATE' }, ['anySub']],
    ['mutating handlers skip DELETE unless explicitly for it', { type: 'mutating', subresource: null, operation: 'DELETE' }, ['mutateDeletions']],
    ['the subresource and operations', { type: 'validating', subresource: 'status', operation: 'UPDATE' }, ['statusCheck', 'anySub']],
    ['only the webhook of the request path', { webhook: 'mutateAll', subresource: null, operation: 'CREATE' }, ['mutateAll']],
  ])('R-ADMISSION-4 selects %s', (_title, request, expected) => {
    expect(ids(registry.webhookHandlers({ resource: kex, body: object(), ...request }))).toEqual(expected);
  });

  it('R-ACTIVITY keeps activity handlers by activity', () => {
    expect(ids(registry.activityHandlers('startup'))).toEqual(['boot']);
    expect(ids(registry.activityHandlers('authentication'))).toEqual(['creds']);
    expect(registry.activityHandlers('cleanup')).toEqual([]);
  });

  it('R-RES-5 reports selectors by purpose', () => {
    const usage = registry.selectorUsage();
    // Equal references count once.
    expect([...usage.watched].map(String)).toEqual(["Selector(any_name='kopfexamples')", "Selector(any_name='pods')"]);
    expect([...usage.patched].map(String)).toEqual(["Selector(any_name='kopfexamples')"]);
    expect([...(usage.indexed ?? [])]).toHaveLength(1);
    expect([...(usage.webhooks ?? [])]).toHaveLength(1);
    expect(usage.all).toHaveLength(2);
  });
});

describe('registration into registries', () => {
  afterEach(() => registries.setDefaultRegistry(new OperatorRegistry()));

  it('R-API-5 the default registry is process-global and replaceable', () => {
    const fresh = new OperatorRegistry();
    registries.setDefaultRegistry(fresh);
    expect(registries.getDefaultRegistry()).toBe(fresh);
    function created(): void {}
    expect(on.create('kopfexamples', created)).toBe(created);
    expect(fresh.handlers).toMatchObject([{ id: 'created', fn: created }]);
  });

  it('R-API-2 options.registry isolates registrations and stacking returns the same function', () => {
    const mine = new OperatorRegistry();
    function ensure(): void {}
    expect(on.create('kopfexamples', { registry: mine }, on.resume('kopfexamples', { registry: mine }, ensure))).toBe(ensure);
    expect(mine.handlers).toHaveLength(2);
    expect(registries.getDefaultRegistry().handlers).toHaveLength(0);
  });

  it('R-API-4 rejects a registry that is not an OperatorRegistry', () => {
    expect(() => on.create('kopfexamples', { registry: {} as OperatorRegistry }, function c() {})).toThrow(TypeError);
  });

  it('R-RES-2 rejects malformed references at registration', () => {
    expect(() => on.create({ kind: 'A', plural: 'b' }, { id: 'x' }, () => undefined)).toThrow(TypeError);
    expect(registries.getDefaultRegistry().handlers).toHaveLength(0);
  });
});

describe('one function per handler id (R-HANDLERS-15)', () => {
  const widgets = { group: 'example.com', version: 'v1', plural: 'widgets' } as const;

  /** The line of this file where `marker` occurs (the registrations below are found by their markers). */
  function lineOf(marker: string): number {
    const lines = fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
    const index = lines.findIndex((line) => line.includes(marker) && !line.includes('lineOf('));
    if (index < 0) throw new Error(`no line with ${marker}`);
    return index + 1;
  }

  it('R-HANDLERS-15 throws for a different function under one id, resource and reason, naming both places and the fix', () => {
    const registry = new OperatorRegistry();
    on.create(widgets, { registry }, async function createWidget() {}); // first-registration
    let error: unknown;
    try {
      on.create(widgets, { registry }, async function createWidget() {}); // second-registration
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(intentErrors.DuplicateHandlerIdError);
    const duplicate = error as intentErrors.DuplicateHandlerIdError;
    expect(duplicate.code).toBe('DuplicateHandlerId');
    expect(duplicate.id).toBe('createWidget');
    const file = path
      .relative(process.cwd(), fileURLToPath(import.meta.url))
      .split(path.sep)
      .join('/');
    expect(duplicate.places).toEqual([`${file}:${lineOf('// first-registration')}`, `${file}:${lineOf('// second-registration')}`]);
    expect(duplicate.message).toContain("the handler 'createWidget' of on.create for widgets.example.com/v1");
    expect(duplicate.message).toContain(`the first at ${duplicate.places[0]}, the second at ${duplicate.places[1]}`);
    expect(duplicate.message).toMatch(/distinct `id` option/);
    expect(registry.handlers).toHaveLength(1);
  });

  it('R-HANDLERS-15 applies to every registration function, with explicit ids and predicates alike', () => {
    const registry = new OperatorRegistry();
    const isWidget = (resource: { plural: string }): boolean => resource.plural === 'widgets';
    const pairs: [string, (fn: () => void) => unknown][] = [
      ['on.update', (fn) => on.update(widgets, { registry, id: 'same' }, fn)],
      ['on.delete', (fn) => on.delete(widgets, { registry, id: 'same' }, fn)],
      ['on.resume', (fn) => on.resume(widgets, { registry, id: 'same' }, fn)],
      ['on.field', (fn) => on.field(widgets, 'spec', { registry, id: 'same' }, fn)],
      ['on.event', (fn) => on.event(widgets, { registry, id: 'same' }, fn)],
      ['on.daemon', (fn) => on.daemon(widgets, { registry, id: 'same' }, fn)],
      ['on.timer', (fn) => on.timer(widgets, { registry, id: 'same', interval: 1 }, fn)],
      ['on.index', (fn) => on.index(widgets, { registry, id: 'same' }, fn)],
      ['on.validate', (fn) => on.validate(widgets, { registry, id: 'same' }, fn)],
      ['on.mutate', (fn) => on.mutate(widgets, { registry, id: 'same' }, fn)],
      ['on.startup', (fn) => on.startup({ registry, id: 'same' }, fn)],
      ['on.probe', (fn) => on.probe({ registry, id: 'same' }, fn)],
      ['on.create', (fn) => on.create(isWidget, { registry, id: 'same' }, fn)],
    ];
    for (const [registration, register] of pairs) {
      register(() => undefined);
      expect(() => register(() => undefined), registration).toThrow(intentErrors.DuplicateHandlerIdError);
      expect(() => register(() => undefined), registration).toThrow(`of ${registration}`);
    }
  });

  it('R-HANDLERS-15 accepts one id for different reasons or resources, and the same function twice', () => {
    const registry = new OperatorRegistry();
    const sync = async function sync(): Promise<void> {};
    on.create(widgets, { registry }, sync);
    on.create(widgets, { registry }, sync); // the same function again: e.g. a module imported twice
    on.update(widgets, { registry, id: 'sync' }, async () => {});
    on.resume(widgets, { registry, id: 'sync' }, async () => {});
    on.create({ ...widgets, version: 'v2' }, { registry, id: 'sync' }, async () => {});
    on.create('gadgets', { registry, id: 'sync' }, async () => {});
    on.field(widgets, 'spec.size', { registry, id: 'sync' }, async () => {});
    on.field(widgets, 'spec.color', { registry, id: 'sync' }, async () => {});
    on.startup({ registry, id: 'sync' }, async () => {});
    expect(registry.handlers).toHaveLength(9);
  });

  it('R-HANDLERS-15 names the caller of register() when a handler is registered directly', () => {
    const registry = new OperatorRegistry();
    const selector = parseSelector(widgets);
    const build = (fn: () => void) => handlers.changingHandler(fn, { id: 'direct' }, { registration: 'create', selector });
    registry.register(build(() => undefined));
    expect(() => registry.register(build(() => undefined))).toThrow(/the second at test\/runtime\/core\/intents\/registry\.test\.ts:\d+/);
  });
});

describe('the handlers of a resource', () => {
  it('R-HANDLERS-4 are computed once per resource and kept in registration order, also across later registrations', () => {
    const registry = new registries.OperatorRegistry();
    const selector = parseSelector('kopfexamples');
    registry.register(
      handlers.daemonHandler(
        function first() {
          /* a daemon */
        },
        {},
        selector,
      ),
    );
    const before = registry.spawningHandlersOf(kex);
    expect(registry.spawningHandlersOf(kex)).toBe(before);
    expect(registry.spawningHandlersOf(pods)).toEqual([]);
    registry.register(
      handlers.timerHandler(
        function second() {
          /* a timer */
        },
        { interval: 1 },
        selector,
      ),
    );
    expect(registry.spawningHandlersOf(kex).map((h) => h.id)).toEqual(['first', 'second']);
    expect(before.map((h) => h.id)).toEqual(['first']);
  });
});
