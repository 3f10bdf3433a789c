/**
 * The controllers' work queue (D-GEN-5, D-FAULT-14). Controllers enqueue keyed tasks in reaction
 * to store changes; tasks run one at a time, in the next event-loop turn, deduplicated by key
 * (a task already queued is not queued twice). `settle()` resolves when the queue is empty and no
 * task or delayed task is pending.
 */

type Task = () => Promise<void> | void;

export class ControllerLoop {
  private readonly queue = new Map<string, Task>();
  private running = false;
  private delayed = 0;
  private idleWaiters: (() => void)[] = [];
  private stopped = false;

  constructor(private readonly onError: (key: string, err: unknown) => void) {}

  /** Queues `task` under `key` unless a task with that key is already queued. */
  enqueue(key: string, task: Task): void {
    if (this.stopped || this.queue.has(key)) return;
    this.queue.set(key, task);
    if (!this.running) setImmediate(() => void this.drain());
  }

  /** Queues a task after `ms` (counted as pending work for `settle()`). */
  enqueueLater(key: string, ms: number, task: Task, schedule: (ms: number, callback: () => void) => unknown): void {
    if (this.stopped) return;
    this.delayed++;
    schedule(ms, () => {
      this.delayed--;
      this.enqueue(key, task);
      this.notifyIfIdle();
    });
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.size && !this.stopped) {
        const [key, task] = this.queue.entries().next().value as [string, Task];
        this.queue.delete(key);
        try {
          await task();
        } catch (err) {
          this.onError(key, err);
        }
      }
    } finally {
      this.running = false;
      this.notifyIfIdle();
    }
  }

  get idle(): boolean {
    return !this.running && this.queue.size === 0 && this.delayed === 0;
  }

  private notifyIfIdle(): void {
    if (!this.idle) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  /** Resolves when idle; rejects after `timeoutMs`. */
  settle(timeoutMs = 10_000): Promise<void> {
    // Give reactions to the latest writes a chance to be queued first.
    return new Promise((resolve, reject) => {
      setImmediate(() => {
        if (this.idle) {
          resolve();
          return;
        }
        const timer = setTimeout(() => reject(new Error(`devcluster controllers did not settle within ${timeoutMs} ms`)), timeoutMs);
        timer.unref?.();
        this.idleWaiters.push(() => {
          clearTimeout(timer);
          setImmediate(() => (this.idle ? resolve() : this.settle(timeoutMs).then(resolve, reject)));
        });
      });
    });
  }

  stop(): void {
    this.stopped = true;
    this.queue.clear();
    this.notifyIfIdle();
  }
}
