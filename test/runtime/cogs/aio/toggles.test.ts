import { describe, expect, it } from 'vitest';

import * as toggles from '../../../../runtime/cogs/aio/toggles.js';

async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe('Toggle', () => {
  it('waiting for the current state resolves at once; other states wait for turnTo', async () => {
    const toggle = new toggles.Toggle(false, 'paused');
    expect(toggle.isOff()).toBe(true);
    expect(await isSettled(toggle.waitFor(false))).toBe(true);
    const on = toggle.waitFor(true);
    expect(await isSettled(on)).toBe(false);
    toggle.turnTo(true);
    expect(await isSettled(on)).toBe(true);
    expect(toggle.isOn()).toBe(true);
    const off = toggle.waitFor(false);
    toggle.turnOff();
    expect(await isSettled(off)).toBe(true);
  });

  it('waiting can be aborted', async () => {
    const toggle = new toggles.Toggle();
    const controller = new AbortController();
    const waiting = toggle.waitFor(true, controller.signal);
    controller.abort(new Error('stopped'));
    await expect(waiting).rejects.toThrow('stopped');
    toggle.turnOn();
    await expect(toggle.waitFor(false, AbortSignal.abort(new Error('early')))).rejects.toThrow('early');
  });
});

describe('ToggleSet', () => {
  it('an all-set is on when every member is on, and empty sets follow every/some', async () => {
    const set = new toggles.ToggleSet('all');
    expect(set.isOn()).toBe(true);
    expect(new toggles.ToggleSet('any').isOn()).toBe(false);
    const a = set.makeToggle(false, 'a');
    const b = set.makeToggle(true, 'b');
    expect(set.isOn()).toBe(false);
    const ready = set.waitFor(true);
    expect(await isSettled(ready)).toBe(false);
    a.turnOn();
    expect(await isSettled(ready)).toBe(true);
    b.turnOff();
    expect(set.isOn()).toBe(false);
    set.drop(b);
    expect(set.isOn()).toBe(true);
    b.turnOn();
    b.turnOff();
    expect(set.isOn()).toBe(true);
    expect(set.size).toBe(1);
  });

  it('an any-set is on when some member is on; members can join while others wait', async () => {
    const set = new toggles.ToggleSet('any');
    const a = set.makeToggle(false);
    const paused = set.waitFor(true);
    const late = new toggles.Toggle(true);
    set.add(late);
    expect(set.has(late)).toBe(true);
    expect(await isSettled(paused)).toBe(true);
    const resumed = set.waitFor(false);
    a.turnOn();
    late.turnOff();
    expect(await isSettled(resumed)).toBe(false);
    a.turnOff();
    expect(await isSettled(resumed)).toBe(true);
  });
});
