/**
 * Awaitable on/off flags: "is the operator paused?", "are all indices ready?", "is it ready?".
 *
 * A `Toggle` is a boolean that tasks can wait on (`await toggle.waitFor(true)`). A `ToggleSet` is a
 * group of toggles that is itself on when all (or any) of its members are on — e.g. the operator is
 * paused if any peering freezer is on, and fully indexed when every index toggle is on. Members can
 * be added and dropped while others wait. This mirrors Kopf's `aiotoggles`.
 */

type Listener = () => void;

/** What a waiter can wait on. */
export interface Awaitable {
  /** Whether the flag is on right now. */
  isOn(): boolean;
  /**
   * Resolves as soon as the flag is in `state` (at once if it already is). If `signal` aborts first,
   * rejects with its reason.
   */
  waitFor(state: boolean, signal?: AbortSignal): Promise<void>;
  /** Optional: the names of the members that are on (a set's), for log lines such as a pause's blockers. */
  activeNames?(): string[];
}

abstract class Watchable implements Awaitable {
  private readonly listeners = new Set<Listener>();

  abstract isOn(): boolean;

  /** Whether the flag is off right now. */
  isOff(): boolean {
    return !this.isOn();
  }

  /** @internal Subscribes to changes; returns the unsubscriber. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  protected notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  waitFor(state: boolean, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.isOn() === state) {
        resolve();
        return;
      }
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = (): void => {
        unsubscribe();
        reject(signal!.reason);
      };
      const unsubscribe = this.subscribe(() => {
        if (this.isOn() !== state) return;
        unsubscribe();
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/**
 * An awaitable boolean.
 *
 * @example
 * const paused = new Toggle(false, 'paused');
 * setTimeout(() => paused.turnTo(true));
 * await paused.waitFor(true);
 */
export class Toggle extends Watchable {
  private state: boolean;

  /** @param initial the starting state (default off). @param name for diagnostics only. */
  constructor(
    initial = false,
    readonly name?: string,
  ) {
    super();
    this.state = initial;
  }

  isOn(): boolean {
    return this.state;
  }

  /** Sets the state; waiters of the new state wake up. Setting the same state is a no-op. */
  turnTo(state: boolean): void {
    if (this.state === state) return;
    this.state = state;
    this.notify();
  }

  turnOn(): void {
    this.turnTo(true);
  }

  turnOff(): void {
    this.turnTo(false);
  }
}

/**
 * A set of toggles that is on when `all` (default) or `any` of its members are on.
 * An empty `all` set is on; an empty `any` set is off (as `every`/`some` on an empty array).
 */
export class ToggleSet extends Watchable {
  private readonly members = new Map<Toggle, () => void>();
  private last: boolean;

  constructor(readonly mode: 'all' | 'any' = 'all') {
    super();
    this.last = this.isOn();
  }

  isOn(): boolean {
    const states = [...this.members.keys()].map((toggle) => toggle.isOn());
    return this.mode === 'all' ? states.every(Boolean) : states.some(Boolean);
  }

  /** The current members. */
  get size(): number {
    return this.members.size;
  }

  /** Creates a member toggle with an initial state and adds it to the set. */
  makeToggle(initial = false, name?: string): Toggle {
    const toggle = new Toggle(initial, name);
    this.add(toggle);
    return toggle;
  }

  /** Adds an existing toggle to the set. */
  add(toggle: Toggle): void {
    if (this.members.has(toggle)) return;
    this.members.set(
      toggle,
      toggle.subscribe(() => this.recheck()),
    );
    this.recheck();
  }

  /** Removes a toggle from the set (the toggle itself is left as it is). */
  drop(toggle: Toggle): void {
    const unsubscribe = this.members.get(toggle);
    if (!unsubscribe) return;
    unsubscribe();
    this.members.delete(toggle);
    this.recheck();
  }

  /** The names of the named members that are on, in the order they were added (Kopf's pause "blockers"). */
  activeNames(): string[] {
    return [...this.members.keys()].filter((toggle) => toggle.isOn() && toggle.name).map((toggle) => toggle.name!);
  }

  /** Whether a toggle belongs to the set. */
  has(toggle: Toggle): boolean {
    return this.members.has(toggle);
  }

  private recheck(): void {
    const now = this.isOn();
    if (now === this.last) return;
    this.last = now;
    this.notify();
  }
}
