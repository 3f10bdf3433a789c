/**
 * The devcluster's clock (D-FAULT-13). Timestamps and timers (bookmarks, watch timeouts,
 * controller delays, revision waits, compaction, token validity) all go through it, so a test can
 * move the cluster's time instead of waiting for it.
 *
 * The shape is the runtime's clock minus sleeping: `now()` and `schedule()`. The devcluster never
 * imports the runtime, so it declares the shape itself; because the two agree structurally, the
 * virtual clock of `kopf-gen/testing` (the runtime's) is also a devcluster clock, and one instance
 * can drive a test's cluster and its operator together.
 */

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Calls `callback` once after `ms` milliseconds of this clock's time, unless the returned
   * function is called first.
   */
  schedule(ms: number, callback: () => void): () => void;
}

/**
 * Wall-clock time and real timers. The timers are unreferenced: a cluster's periodic work
 * (bookmarks, compaction) never keeps a process alive on its own.
 */
export const realClock: Clock = Object.freeze({
  now: () => Date.now(),
  schedule(ms: number, callback: () => void): () => void {
    const handle = setTimeout(callback, Math.max(0, ms));
    handle.unref?.();
    return () => clearTimeout(handle);
  },
});
