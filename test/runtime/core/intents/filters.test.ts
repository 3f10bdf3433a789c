import { describe, expect, it, vi } from 'vitest';
import type { RawBody } from '../../../../runtime/cogs/structs/bodies.js';
import type { JsonObject } from '../../../../runtime/cogs/structs/dicts.js';
import { makeResource } from '../../../../runtime/cogs/structs/references.js';
import * as filters from '../../../../runtime/core/intents/filters.js';
import { ABSENT, PRESENT, type FilterSpec, type Subject } from '../../../../runtime/core/intents/filters.js';

const resource = makeResource({ group: 'kopf.dev', version: 'v1', plural: 'kopfexamples' });
// The object of A-27 (the original's 11-filtering-handlers example).
const body: RawBody = {
  metadata: { name: 'kex', labels: { somelabel: 'somevalue', empty: '' }, annotations: { someannotation: 'somevalue' } },
  spec: { field: 'value' },
};
const watching: Subject = { resource, body };
const noKwargs = (): object => ({ spec: body['spec'] });

function spec(partial: Partial<FilterSpec>): FilterSpec {
  return {
    labels: null,
    annotations: null,
    field: null,
    value: undefined,
    old: undefined,
    new: undefined,
    when: null,
    fieldNeedsChange: false,
    ...partial,
  };
}

describe('matchesFilters for non-change handlers (A-27)', () => {
  const specIsSet = (value: string | null, kwargs: { spec: { field?: unknown } }): boolean => value === 'somevalue' && kwargs.spec.field !== undefined;
  it.each<[string, Partial<FilterSpec>, boolean]>([
    ['Label is matching.', { labels: { somelabel: 'somevalue' } }, true],
    ['label mismatch', { labels: { somelabel: 'othervalue' } }, false],
    ['Label is present.', { labels: { somelabel: PRESENT } }, true],
    ['Label is absent.', { labels: { nonexistent: ABSENT } }, true],
    ['a present label is not absent', { labels: { somelabel: ABSENT } }, false],
    ['an absent label is not present', { labels: { nonexistent: PRESENT } }, false],
    ['the empty string is a value (and so present)', { labels: { empty: '' } }, true],
    ['an empty string does not match an absent label', { labels: { nonexistent: '' } }, false],
    ['Label callback matching.', { labels: { somelabel: specIsSet } }, true],
    ['all label filters must pass', { labels: { somelabel: 'somevalue', nonexistent: PRESENT } }, false],
    ['Annotation is matching.', { annotations: { someannotation: 'somevalue' } }, true],
    ['Annotation is present.', { annotations: { someannotation: PRESENT } }, true],
    ['Annotation is absent.', { annotations: { nonexistent: ABSENT } }, true],
    ['Annotation callback mismatch.', { annotations: { someannotation: () => false } }, false],
    ['Filter satisfied.', { when: () => true }, true],
    ['Filter not satisfied.', { when: () => false }, false],
    ['Field value is satisfied.', { field: ['spec', 'field'], value: 'value' }, true],
    ['Field value is not satisfied.', { field: ['spec', 'field'], value: 'something-else' }, false],
    ['Field presence is satisfied.', { field: ['spec', 'field'], value: PRESENT }, true],
    ['Field presence is not satisfied.', { field: ['spec', 'inexistent'], value: PRESENT }, false],
    ['a field without a value must be present', { field: ['spec', 'field'] }, true],
    ['an absent field without a value fails', { field: ['spec', 'inexistent'] }, false],
    ['an ABSENT field value', { field: ['spec', 'inexistent'], value: ABSENT }, true],
    ['a field value callback', { field: ['spec', 'field'], value: (v: unknown) => v === 'value' }, true],
    ['a literal deep-equal object', { field: ['spec'], value: { field: 'value' } }, true],
  ])('R-FILTERS-2/3/6 %s', (_title, partial, expected) => {
    expect(filters.matchesFilters(spec(partial), watching, noKwargs)).toBe(expected);
  });

  it('R-FILTERS-2 callbacks get null for absent labels and the handler kwargs', () => {
    const callback = vi.fn(() => true);
    filters.matchesFilters(spec({ labels: { nonexistent: callback } }), watching, () => ({ marker: 1 }));
    expect(callback).toHaveBeenCalledWith(null, { marker: 1 });
  });

  it('R-FILTERS-1 builds the kwargs lazily, once per check, and stops at the first mismatch', () => {
    const factory = vi.fn(() => ({}));
    const when = vi.fn(() => true);
    expect(filters.matchesFilters(spec({ labels: { somelabel: 'somevalue' } }), watching, factory)).toBe(true);
    expect(factory).not.toHaveBeenCalled();
    filters.matchesFilters(spec({ labels: { somelabel: () => true }, annotations: { someannotation: () => true }, when }), watching, factory);
    expect(factory).toHaveBeenCalledTimes(1);
    filters.matchesFilters(spec({ labels: { somelabel: 'mismatch' }, when }), watching, factory);
    expect(when).toHaveBeenCalledTimes(1);
  });
});

describe('matchesFilters for change handlers', () => {
  const old: JsonObject = { spec: { field: 'value' } };
  const changed: JsonObject = { spec: { field: 'changed' } };
  const change = (o: JsonObject | null, n: JsonObject): Subject => ({ resource, body, old: o, new: n });

  it.each<[string, Partial<FilterSpec>, Subject, boolean]>([
    ['R-FILTERS-4 a value passes if the old essence has it', { field: ['spec', 'field'], value: 'value' }, change(old, changed), true],
    ['R-FILTERS-4 a value passes if the new essence has it', { field: ['spec', 'field'], value: 'changed' }, change(old, changed), true],
    ['R-FILTERS-4 a value fails if neither has it', { field: ['spec', 'field'], value: 'other' }, change(old, changed), false],
    ['R-FILTERS-4 ABSENT passes if absent on one side', { field: ['spec', 'field'], value: ABSENT }, change(null, changed), true],
    ['R-FILTERS-5 Field change is satisfied.', { field: ['spec', 'field'], old: 'value', new: 'changed', fieldNeedsChange: true }, change(old, changed), true],
    ['R-FILTERS-5 an old filter fails on its own side', { field: ['spec', 'field'], old: 'changed', fieldNeedsChange: true }, change(old, changed), false],
    ['R-FILTERS-5 an unspecified side is not checked', { field: ['spec', 'field'], new: 'changed', fieldNeedsChange: true }, change(old, changed), true],
    ['R-FILTERS-5 no change, no field handler', { field: ['spec', 'field'], fieldNeedsChange: true }, change(old, old), false],
    ['R-FILTERS-5 appearance is a change', { field: ['spec', 'field'], old: ABSENT, new: PRESENT, fieldNeedsChange: true }, change({}, changed), true],
    ['R-CAUSE-4 disappearance is a change', { field: ['spec', 'field'], fieldNeedsChange: true }, change(old, {}), true],
    ['a create handler with a field needs no change', { field: ['spec', 'field'], fieldNeedsChange: false }, change(null, old), true],
  ])('%s', (_title, partial, subject, expected) => {
    expect(filters.matchesFilters(spec(partial), subject, noKwargs)).toBe(expected);
  });

  it('R-FILTERS-8 pre-matching skips the field-change check but keeps the others', () => {
    const unchanged = change(old, old);
    const needsChange = spec({ field: ['spec', 'field'], new: 'changed', fieldNeedsChange: true });
    expect(filters.matchesFilters(needsChange, unchanged, noKwargs)).toBe(false);
    expect(filters.matchesFilters(needsChange, unchanged, noKwargs, { prematch: true })).toBe(true);
    const mislabelled = spec({ labels: { somelabel: 'x' }, field: ['spec', 'field'], fieldNeedsChange: true });
    expect(filters.matchesFilters(mislabelled, change(old, changed), noKwargs, { prematch: true })).toBe(false);
  });
});

describe('combinators', () => {
  const yes = (): boolean => true;
  const no = (): boolean => false;
  it.each<[string, () => boolean, boolean]>([
    ['notFn(yes)', filters.notFn(yes), false],
    ['notFn(no)', filters.notFn(no), true],
    ['allFn([yes, yes])', filters.allFn([yes, yes]), true],
    ['allFn([yes, no])', filters.allFn([yes, no]), false],
    ['allFn([])', filters.allFn([]), true],
    ['anyFn([no, yes])', filters.anyFn([no, yes]), true],
    ['anyFn([no, no])', filters.anyFn([no, no]), false],
    ['anyFn([])', filters.anyFn([]), false],
    ['noneFn([no, no])', filters.noneFn([no, no]), true],
    ['noneFn([no, yes])', filters.noneFn([no, yes]), false],
  ])('R-FILTERS-7 %s', (_title, fn, expected) => {
    expect(fn()).toBe(expected);
  });

  it('R-FILTERS-7 combinators pass arguments through and short-circuit', () => {
    const second = vi.fn(() => true);
    const isValue = (v: unknown, _kwargs: unknown): boolean => v === 'value';
    expect(filters.anyFn([isValue, second])('value', {})).toBe(true);
    expect(second).not.toHaveBeenCalled();
    expect(filters.allFn([isValue, filters.notFn(isValue)])('value', {})).toBe(false);
    expect(filters.matchesFilters(spec({ field: ['spec', 'field'], value: filters.notFn(isValue) }), watching, noKwargs)).toBe(false);
  });
});
