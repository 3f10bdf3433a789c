/**
 * A revision counter that tasks can wait on: something that changes now and then (the served
 * resources, the client configuration of a webhook server) bumps it, and whoever acts on the
 * changes remembers the revision it last saw and waits for a greater one. Changes made while the
 * waiter was busy are not lost: a wait for a revision already passed resolves at once.
 */
export class Revision {
  private counter = 0;
  private readonly waiters = new Set<() => void>();

  /** 0 before the first change; one more with each. */
  get value(): number {
    return this.counter;
  }

  /** Announces a change: the revision grows by one, and the waiters past their revision resolve. */
  bump(): void {
    this.counter += 1;
    for (const waiter of [...this.waiters]) waiter();
  }

  /**
   * Resolves with the revision as soon as it is greater than `since` (at once if it already is).
   * Rejects with the signal's reason if `signal` aborts first.
   */
  waitForChange(since: number, signal?: AbortSignal): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      if (this.counter > since) return resolve(this.counter);
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = (): void => {
        this.waiters.delete(waiter);
        reject(signal!.reason);
      };
      const waiter = (): void => {
        if (this.counter <= since) return;
        this.waiters.delete(waiter);
        signal?.removeEventListener('abort', onAbort);
        resolve(this.counter);
      };
      this.waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
