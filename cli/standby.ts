/**
 * The operator's side of the dev loop: a `kopf-gen run` started by the dev loop (`devloop.ts`)
 * waits in standby until it is told to go. Starting Node, the runtime and the TypeScript loader
 * takes most of a second on a busy machine; done ahead, while the previous operator still runs, a
 * restart after a save costs only the loading of the operator's own files and its login.
 *
 * The dev loop talks to it over Node's IPC channel: the child says `ready` once the runtime is
 * loaded and then waits for `go`. If the dev loop goes away (the channel closes) the child stops
 * too — gracefully, as on SIGTERM, if its operator is already running — so that no operator is
 * left serving a devcluster that is gone.
 */

/** The environment variable that asks a `kopf-gen run` to wait for the dev loop's `go`. */
export const STANDBY_ENV = 'KOPF_GEN_DEV_LOOP_STANDBY';

/** The messages on the IPC channel. */
export type StandbyMessage = { readonly kind: 'ready' } | { readonly kind: 'go' };

/** Whether this process was started by the dev loop in standby. */
export function isStandby(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[STANDBY_ENV] === '1' && typeof process.send === 'function';
}

/**
 * Loads the runtime, says `ready`, and resolves on `go`. If the dev loop goes away before that,
 * the process exits; after it, the operator is stopped as by SIGTERM.
 */
export async function standBy(): Promise<void> {
  delete process.env[STANDBY_ENV]; // Not inherited by anything the operator starts.
  await import('../runtime/index.js');
  let going = false;
  process.on('disconnect', () => {
    if (going) process.kill(process.pid, 'SIGTERM');
    else process.exit(0);
  });
  await new Promise<void>((resolve) => {
    process.on('message', (message: StandbyMessage) => {
      if (message.kind !== 'go') return;
      going = true;
      // The channel must not keep the process alive once the operator has stopped.
      process.channel?.unref();
      resolve();
    });
    process.send?.({ kind: 'ready' } satisfies StandbyMessage);
  });
}
