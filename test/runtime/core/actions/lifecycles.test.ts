import { afterEach, describe, expect, it } from 'vitest';

import * as lifecycles from '../../../../runtime/core/actions/lifecycles.js';
import * as progression from '../../../../runtime/core/actions/progression.js';
import { RecordingLogger } from './helpers.js';

const NOW = 1_000_000;

function stateWith(retries: Record<string, number>): progression.State {
  const states: Record<string, progression.HandlerState> = {};
  for (const [id, count] of Object.entries(retries)) {
    states[id] = progression.HandlerState.fromStorage({ started: '2024-05-01T10:00:00+00:00', retries: count, success: false, failure: false }, { now: NOW });
  }
  return progression.State.of(states);
}

const a = { id: 'a' };
const b = { id: 'b' };
const c = { id: 'c' };

describe('lifecycles', () => {
  afterEach(() => lifecycles.setDefaultLifecycle(null));

  it.each([
    ['the first registered when all are fresh', { a: 0, b: 0, c: 0 }, 'a'],
    ['the one with the fewest retries', { a: 2, b: 1, c: 3 }, 'b'],
    ['ties broken by registration order', { a: 2, b: 1, c: 1 }, 'b'],
    ['a retried handler yields to fresh ones', { a: 1, b: 0, c: 0 }, 'b'],
  ])('R-HANDLERS-5 asap picks exactly one: %s', (_title, retries, expected) => {
    const chosen = lifecycles.asap([a, b, c], { state: stateWith(retries) });
    expect(chosen.map((h) => h.id)).toEqual([expected]);
  });

  it('R-HANDLERS-5 asap picks nothing from nothing; handlers unknown to the state count as fresh', () => {
    expect(lifecycles.asap([], { state: stateWith({}) })).toEqual([]);
    expect(lifecycles.asap([a, b], { state: stateWith({ a: 1 }) }).map((h) => h.id)).toEqual(['b']);
  });

  it('R-HANDLERS-5 allAtOnce, oneByOne, randomized and shuffled', () => {
    const state = stateWith({ a: 3, b: 0, c: 0 });
    const input = [a, b, c];
    expect(lifecycles.allAtOnce(input, { state })).toEqual([a, b, c]);
    expect(lifecycles.oneByOne(input, { state })).toEqual([a]);
    for (let i = 0; i < 20; i += 1) {
      const one = lifecycles.randomized(input, { state });
      expect(one).toHaveLength(1);
      expect(input).toContain(one[0]);
      const all = lifecycles.shuffled(input, { state });
      expect([...all].sort((x, y) => x.id.localeCompare(y.id))).toEqual([a, b, c]);
    }
    expect(lifecycles.randomized([], { state })).toEqual([]);
    expect(input).toEqual([a, b, c]);
  });

  it('R-HANDLERS-5 the default is asap; setting it twice warns', () => {
    const logger = new RecordingLogger();
    expect(lifecycles.getDefaultLifecycle()).toBe(lifecycles.asap);
    lifecycles.setDefaultLifecycle(lifecycles.allAtOnce, logger);
    expect(lifecycles.getDefaultLifecycle()).toBe(lifecycles.allAtOnce);
    expect(logger.lines).toEqual([]);
    lifecycles.setDefaultLifecycle(lifecycles.oneByOne, logger);
    expect(lifecycles.getDefaultLifecycle()).toBe(lifecycles.oneByOne);
    expect(logger.messages('warning')).toEqual(['The default lifecycle is already set to allAtOnce, overriding it to oneByOne.']);
  });
});
