import { describe, expect, it } from 'vitest';
import * as handlers from '../../../../runtime/core/intents/handlers.js';
import { PRESENT } from '../../../../runtime/core/intents/filters.js';
import { parseSelector } from '../../../../runtime/core/intents/selectors.js';

const selector = parseSelector('kopfexamples');
function relabel(): void {}
const anonymous = [(): void => undefined][0]!;

describe('handler ids', () => {
  it.each<[string, handlers.HandlerFn, unknown, readonly string[] | null, string]>([
    ['the function name', relabel, undefined, null, 'relabel'],
    ['an explicit id over the name', relabel, 'relabel_fn', null, 'relabel_fn'],
    ['the field suffix', relabel, undefined, ['metadata', 'labels'], 'relabel/metadata.labels'],
    ['the field suffix after an explicit id', anonymous, 'x', ['spec', 'a', 'b'], 'x/spec.a.b'],
  ])('R-HANDLERS-2 uses %s', (_title, fn, id, field, expected) => {
    expect(handlers.handlerId(fn, id, field)).toBe(expected);
  });

  it('R-HANDLERS-2 rejects anonymous functions without an id, and empty ids', () => {
    expect(anonymous.name).toBe('');
    expect(() => handlers.handlerId(anonymous, undefined, null)).toThrow(/anonymous function.*`id`/);
    expect(() => handlers.handlerId(relabel, '', null)).toThrow(TypeError);
    expect(() => handlers.changingHandler(anonymous, {}, { registration: 'create', selector })).toThrow(TypeError);
  });

  it('R-HANDLERS-2 applies the field suffix to all kinds but indexers', () => {
    const options = { field: 'spec.field' };
    expect(handlers.changingHandler(relabel, options, { registration: 'create', selector }).id).toBe('relabel/spec.field');
    expect(handlers.watchingHandler(relabel, options, selector).id).toBe('relabel/spec.field');
    expect(handlers.daemonHandler(relabel, options, selector).id).toBe('relabel/spec.field');
    expect(handlers.timerHandler(relabel, options, selector).id).toBe('relabel/spec.field');
    expect(handlers.webhookHandler(relabel, options, selector, 'validating').id).toBe('relabel/spec.field');
    expect(handlers.indexingHandler(relabel, options, selector).id).toBe('relabel');
  });

  it('R-HANDLERS-13 prefixes sub-handler ids with the parent id', () => {
    const sub = handlers.changingHandler(relabel, { id: 'item1' }, { registration: 'subhandler', selector: null, parentId: 'parent' });
    expect(sub).toMatchObject({ id: 'parent/item1', reason: null, selector: null, initial: false, requiresFinalizer: false });
  });
});

describe('change handler descriptors', () => {
  it.each<[handlers.ChangingHow['registration'], Partial<handlers.ChangingHandler>]>([
    ['create', { reason: 'create', initial: false, requiresFinalizer: false, fieldNeedsChange: false }],
    ['update', { reason: 'update', initial: false, requiresFinalizer: false, fieldNeedsChange: true }],
    ['delete', { reason: 'delete', initial: false, requiresFinalizer: true, fieldNeedsChange: false }],
    ['resume', { reason: null, initial: true, deleted: false, requiresFinalizer: false, fieldNeedsChange: false }],
  ])('R-HANDLERS-1 on.%s', (registration, expected) => {
    expect(handlers.changingHandler(relabel, {}, { registration, selector })).toMatchObject({ kind: 'change', ...expected });
  });

  it('R-HANDLERS-1 on.field has no reason and needs a change of a required field', () => {
    expect(handlers.changingHandler(relabel, {}, { registration: 'field', selector, field: 'spec.x' })).toMatchObject({
      reason: null,
      field: ['spec', 'x'],
      fieldNeedsChange: true,
      id: 'relabel/spec.x',
    });
    expect(() => handlers.changingHandler(relabel, {}, { registration: 'field', selector })).toThrow(/requires a field/);
    expect(() => handlers.changingHandler(relabel, { field: 'a' }, { registration: 'field', selector, field: 'b' })).toThrow(/twice/);
  });

  it('R-HANDLERS-9 optional delete handlers do not require the finalizer; resume keeps `deleted`', () => {
    expect(handlers.changingHandler(relabel, { optional: true }, { registration: 'delete', selector }).requiresFinalizer).toBe(false);
    expect(handlers.changingHandler(relabel, { deleted: true }, { registration: 'resume', selector }).deleted).toBe(true);
  });

  it('R-API-4 keeps the retry options and the param', () => {
    const handler = handlers.changingHandler(
      relabel,
      { errors: 'PERMANENT', timeout: 30, retries: 3, backoff: 1.5, param: { a: 1 } },
      { registration: 'create', selector },
    );
    expect(handler).toMatchObject({ errors: 'PERMANENT', timeout: 30, retries: 3, backoff: 1.5, param: { a: 1 } });
    expect(handlers.changingHandler(relabel, {}, { registration: 'create', selector })).toMatchObject({
      errors: null,
      timeout: null,
      retries: null,
      backoff: null,
    });
  });
});

describe('registration errors', () => {
  const create = (options: Record<string, unknown>) => () => handlers.changingHandler(relabel, options, { registration: 'create', selector });
  const update = (options: Record<string, unknown>) => () => handlers.changingHandler(relabel, options, { registration: 'update', selector });

  it.each<[string, () => unknown, RegExp]>([
    ['R-API-4 an unknown option key', create({ colour: 'red' }), /Unknown options of on.create\(\): colour/],
    ['R-API-4 old/new on a create handler', create({ field: 'spec.x', old: 1 }), /Unknown options of on.create\(\): old/],
    ['R-API-4 retries on an on-event handler', () => handlers.watchingHandler(relabel, { retries: 1 }, selector), /on.event\(\): retries/],
    ['R-API-4 errors on an admission handler', () => handlers.webhookHandler(relabel, { errors: 'IGNORED' }, selector, 'mutating'), /on.mutate\(\): errors/],
    ['R-FILTERS-2 a null label filter (A-27)', create({ labels: { app: null } }), /label filter 'app' is null; use PRESENT or ABSENT/],
    ['R-FILTERS-2 an undefined annotation filter', create({ annotations: { a: undefined } }), /PRESENT or ABSENT/],
    ['R-FILTERS-2 a numeric label filter', create({ labels: { app: 1 } }), /must be a string, PRESENT, ABSENT or a callback/],
    ['R-FILTERS-5 value with old (A-27)', update({ field: 'spec.x', value: 1, old: 2 }), /mutually exclusive/],
    ['R-FILTERS-5 value with new', update({ field: 'spec.x', value: 1, new: 2 }), /mutually exclusive/],
    ['R-FILTERS-5 value without field', create({ value: 1 }), /require a 'field'/],
    ['R-FILTERS-5 old without field', update({ old: 1 }), /require a 'field'/],
    ['a negative timeout', create({ timeout: -1 }), /non-negative number/],
    ['a fractional retries count', create({ retries: 1.5 }), /integer/],
    ['an unknown errors mode', create({ errors: 'SOMETIMES' }), /IGNORED, TEMPORARY, PERMANENT/],
    ['a non-function when', create({ when: true }), /'when' must be a function/],
    ['a bad field', create({ field: 42 }), /A field must be/],
    ['a non-function handler', () => handlers.changingHandler('nope', {}, { registration: 'create', selector }), /needs a handler function/],
    ['empty admission operations', () => handlers.webhookHandler(relabel, { operations: [] }, selector, 'validating'), /non-empty list/],
    [
      'both operations and operation',
      () => handlers.webhookHandler(relabel, { operations: ['CREATE'], operation: 'UPDATE' }, selector, 'validating'),
      /either/,
    ],
    ['a non-boolean sharp', () => handlers.timerHandler(relabel, { sharp: 'yes' }, selector), /boolean/],
  ])('%s throws a TypeError', (_title, register, message) => {
    expect(register).toThrow(TypeError);
    expect(register).toThrow(message);
  });

  it('accepts PRESENT, strings and callbacks as label filters, and null/undefined options as unset', () => {
    const handler = handlers.changingHandler(
      relabel,
      { labels: { a: PRESENT, b: 'x', c: () => true }, timeout: undefined, when: null },
      { registration: 'create', selector },
    );
    expect(Object.keys(handler.labels!)).toEqual(['a', 'b', 'c']);
    expect(handler.timeout).toBeNull();
  });
});

describe('other descriptors', () => {
  it('R-DAEMON-1 daemons keep their cancellation options; initialDelay may be a callback', () => {
    const delay = (): number => 5;
    expect(
      handlers.daemonHandler(relabel, { initialDelay: delay, cancellationBackoff: 1, cancellationTimeout: 2, cancellationPolling: 3 }, selector),
    ).toMatchObject({ kind: 'daemon', initialDelay: delay, cancellationBackoff: 1, cancellationTimeout: 2, cancellationPolling: 3 });
  });

  it('R-TIMER-1 timers keep interval, initialDelay, sharp and idle', () => {
    expect(handlers.timerHandler(relabel, { interval: 10, initialDelay: 1, sharp: true, idle: 5 }, selector)).toMatchObject({
      kind: 'timer',
      interval: 10,
      initialDelay: 1,
      sharp: true,
      idle: 5,
    });
  });

  it('R-ADMISSION-1 admission handlers: operations (also the deprecated alias), subresource, flags', () => {
    expect(
      handlers.webhookHandler(
        relabel,
        { operation: 'CREATE', subresource: '*', persistent: true, sideEffects: true, ignoreFailures: true },
        selector,
        'mutating',
      ),
    ).toMatchObject({ kind: 'webhook', type: 'mutating', operations: ['CREATE'], subresource: '*', persistent: true, sideEffects: true, ignoreFailures: true });
    expect(handlers.webhookHandler(relabel, {}, selector, 'validating')).toMatchObject({ operations: null, subresource: null, persistent: false });
  });

  it('R-KWARGS-7 login handlers are the authentication activity', () => {
    expect(handlers.activityHandler(relabel, {}, 'login')).toMatchObject({ kind: 'activity', activity: 'authentication', id: 'relabel' });
    expect(() => handlers.activityHandler(relabel, { labels: {} }, 'startup')).toThrow(/on.startup\(\): labels/);
  });

  it('R-ERRORS-3 default errors modes by kind', () => {
    expect(handlers.defaultErrorsMode(handlers.watchingHandler(relabel, {}, selector))).toBe('IGNORED');
    expect(handlers.defaultErrorsMode(handlers.indexingHandler(relabel, {}, selector))).toBe('IGNORED');
    expect(handlers.defaultErrorsMode(handlers.webhookHandler(relabel, {}, selector, 'validating'))).toBe('PERMANENT');
    expect(handlers.defaultErrorsMode(handlers.daemonHandler(relabel, {}, selector))).toBe('TEMPORARY');
    expect(handlers.defaultErrorsMode(handlers.activityHandler(relabel, {}, 'startup'))).toBe('TEMPORARY');
  });

  it('descriptors are frozen', () => {
    expect(Object.isFrozen(handlers.changingHandler(relabel, {}, { registration: 'create', selector }))).toBe(true);
  });
});
