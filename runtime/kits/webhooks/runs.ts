/**
 * The serving lifecycle of the servers that delegate to another server: the auto-detecting one
 * and the tunnels. Each `serve()` call is a run with a stop switch of its own, ended by the
 * operator's signal (the environment's) or by disposing the server object, and released when
 * its iteration ends, however it ends. Subclasses only say how one run serves, given the signal
 * that ends it.
 */
import * as aborts from '../../cogs/aio/aborts.js';
import type * as webhooks from '../../cogs/structs/webhooks.js';

export abstract class DelegatingServer implements webhooks.WebhookServerObject {
  private readonly runs = new Set<AbortController>();

  serve(fn: webhooks.WebhookFn, environment?: webhooks.WebhookServerEnvironment): AsyncIterable<webhooks.WebhookClientConfig> {
    return this.run(fn, environment);
  }

  /** Stops every running `serve()`: the servers it delegated to close and the iterations end. */
  async [Symbol.asyncDispose](): Promise<void> {
    for (const run of this.runs) run.abort();
    this.runs.clear();
  }

  /**
   * Serves one run. `environment.signal` (never absent here) aborts when the operator stops or
   * this server object is disposed; pass this environment on to the server delegated to.
   */
  protected abstract serving(
    fn: webhooks.WebhookFn,
    environment: webhooks.WebhookServerEnvironment,
  ): AsyncGenerator<webhooks.WebhookClientConfig, void, undefined>;

  private async *run(fn: webhooks.WebhookFn, environment?: webhooks.WebhookServerEnvironment): AsyncGenerator<webhooks.WebhookClientConfig, void, undefined> {
    const run = new AbortController();
    const stopping = aborts.follow([environment?.signal, run.signal]);
    this.runs.add(run);
    try {
      yield* this.serving(fn, { ...environment, signal: stopping.signal });
    } finally {
      stopping.release();
      this.runs.delete(run);
    }
  }
}
