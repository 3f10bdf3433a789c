// A revision counter that tasks wait on: changes made while a waiter was busy are never lost.
import { describe, expect, it } from 'vitest';
import { Revision } from '../../../../runtime/cogs/aio/revisions.js';

describe('Revision', () => {
  it('starts at 0 and grows by one with each bump', () => {
    const revision = new Revision();
    expect(revision.value).toBe(0);
    revision.bump();
    revision.bump();
    expect(revision.value).toBe(2);
  });

  it('a wait for a revision already passed resolves at once with the current one', async () => {
    const revision = new Revision();
    revision.bump();
    revision.bump();
    await expect(revision.waitForChange(0)).resolves.toBe(2);
  });

  it('a wait resolves at the first bump past its revision, not before', async () => {
    const revision = new Revision();
    revision.bump();
    let seen: number | undefined;
    const waiting = revision.waitForChange(2).then((value) => {
      seen = value;
    });
    revision.bump();
    await Promise.resolve();
    expect(seen).toBeUndefined();
    revision.bump();
    await waiting;
    expect(seen).toBe(3);
  });

  it("a wait ends with the signal's reason when it aborts first, or at once if already aborted", async () => {
    const revision = new Revision();
    const controller = new AbortController();
    const waiting = revision.waitForChange(0, controller.signal);
    controller.abort(new Error('stopped'));
    await expect(waiting).rejects.toThrow('stopped');
    await expect(revision.waitForChange(0, controller.signal)).rejects.toThrow('stopped');
    revision.bump(); // the aborted waiter is gone: nothing left to resolve
    await expect(revision.waitForChange(0)).resolves.toBe(1);
  });
});
