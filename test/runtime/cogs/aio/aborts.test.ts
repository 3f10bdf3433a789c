import { describe, expect, it } from 'vitest';

import * as aborts from '../../../../runtime/cogs/aio/aborts.js';
import * as clocks from '../../../../runtime/cogs/aio/clocks.js';

describe('sleepOrAbort', () => {
  it('R-PATCH-7 returns true when the full sleep elapsed, after exactly that virtual time', async () => {
    const clock = new clocks.VirtualClock();
    const result = aborts.sleepOrAbort(clock, 10_000, new AbortController().signal);
    await clock.advance(10_000);
    expect(await result).toBe(true);
    expect(clock.now()).toBe(10_000);
  });

  it('R-PATCH-7 returns false when interrupted, and the time left is measurable', async () => {
    const clock = new clocks.VirtualClock();
    const controller = new AbortController();
    const result = aborts.sleepOrAbort(clock, 10_000, controller.signal);
    await clock.advance(4000);
    controller.abort();
    expect(await result).toBe(false);
    expect(clock.now()).toBe(4000);
    expect(clock.pending).toBe(0);
  });

  it('returns false at once for an already aborted signal', async () => {
    const clock = new clocks.VirtualClock();
    expect(await aborts.sleepOrAbort(clock, 1000, AbortSignal.abort())).toBe(false);
    expect(clock.pending).toBe(0);
  });
});

describe('anySignal', () => {
  it('aborts with the reason of the first input to abort', () => {
    const a = new AbortController();
    const b = new AbortController();
    const any = aborts.anySignal([a.signal, undefined, b.signal]);
    expect(any.aborted).toBe(false);
    b.abort('b-reason');
    a.abort('a-reason');
    expect(any.aborted).toBe(true);
    expect(any.reason).toBe('b-reason');
  });

  it('is aborted at once if an input already is, and never for no inputs', () => {
    expect(aborts.anySignal([new AbortController().signal, AbortSignal.abort('x')]).reason).toBe('x');
    expect(aborts.anySignal([]).aborted).toBe(false);
  });
});

describe('timeoutSignal', () => {
  it('aborts after exactly the given virtual time with a TimeoutError', async () => {
    const clock = new clocks.VirtualClock();
    const signal = aborts.timeoutSignal(clock, 1500);
    await clock.advance(1499);
    expect(signal.aborted).toBe(false);
    await clock.advance(1);
    expect(signal.aborted).toBe(true);
    expect(aborts.isAbortError(signal.reason)).toBe(true);
    expect((signal.reason as Error).name).toBe('TimeoutError');
  });

  it('cancelling drops the timer without aborting', async () => {
    const clock = new clocks.VirtualClock();
    const cancel = new AbortController();
    const signal = aborts.timeoutSignal(clock, 1000, { cancel: cancel.signal });
    cancel.abort();
    await clock.advance(5000);
    expect(signal.aborted).toBe(false);
    expect(clock.pending).toBe(0);
  });
});

describe('isAbortError', () => {
  it.each<[unknown, boolean]>([
    [new DOMException('x', 'AbortError'), true],
    [new DOMException('x', 'TimeoutError'), true],
    [new Error('x'), false],
    ['AbortError', false],
  ])('isAbortError(%s) is %s', (error, expected) => {
    expect(aborts.isAbortError(error)).toBe(expected);
  });
});

describe('follow', () => {
  it('aborts with the first aborted input and detaches in O(1) from long-lived inputs', () => {
    const parent = new AbortController();
    const other = new AbortController();
    const followers = Array.from({ length: 1000 }, () => aborts.follow([parent.signal, other.signal]));
    expect(aborts.followers(parent.signal)).toBe(1000);
    for (const f of followers.slice(0, 999)) f.release();
    expect(aborts.followers(parent.signal)).toBe(1);
    parent.abort('stop');
    expect(followers[999]!.signal.aborted).toBe(true);
    expect(followers[999]!.signal.reason).toBe('stop');
    expect(followers.slice(0, 999).some((f) => f.signal.aborted)).toBe(false);
  });

  it('is aborted at once when an input already is', () => {
    const parent = new AbortController();
    parent.abort('gone');
    expect(aborts.follow([parent.signal]).signal.reason).toBe('gone');
  });
});

describe('onAbort', () => {
  it('calls each attached callback once on abort, not the detached ones, and counts them as followers', () => {
    const parent = new AbortController();
    const calls: number[] = [];
    const detaches = Array.from({ length: 1000 }, (_, i) => aborts.onAbort(parent.signal, () => calls.push(i)));
    expect(aborts.followers(parent.signal)).toBe(1000);
    for (const detach of detaches.slice(0, 998)) detach();
    expect(aborts.followers(parent.signal)).toBe(2);
    parent.abort('stop');
    expect(calls).toEqual([998, 999]);
    expect(aborts.followers(parent.signal)).toBe(0);
  });

  it('calls the callback at once when the signal is already aborted', () => {
    const parent = new AbortController();
    parent.abort('gone');
    let called = 0;
    aborts.onAbort(parent.signal, () => {
      called += 1;
    })();
    expect(called).toBe(1);
  });
});
