/**
 * Operator hooks (Kopf's example 13-hooks, in TypeScript): the activities around the resource
 * handlers — startup, login, probes and cleanup — and one background task per pod.
 *
 * - `startup_fn_simple` prepares the operator's state; `startup_fn_retried` fails three times with
 *   `TemporaryError` (1 second apart) before it succeeds. Nothing talks to the cluster until both
 *   have succeeded.
 * - `login_fn` replaces the built-in logins: it reads the local kubeconfig and declares the
 *   credentials expired 30 seconds later, so the operator logs in again every 30 seconds. Its errors
 *   are permanent: a broken kubeconfig stops the operator instead of being retried.
 * - `tasks_count` and `monitored_objects` are probes: with `--liveness=http://HOST:PORT/PATH`, a GET
 *   of PATH answers `{"tasks_count": …, "monitored_objects": {…}}` (cached for 10 seconds).
 * - `pod_task` starts a background task for every pod it sees; `cleanup_fn` stops them all when the
 *   operator exits.
 *
 * Kopf's original guards its task registry with an asyncio lock; the check-and-insert below is
 * synchronous, and JavaScript runs one piece of code at a time, so no lock is needed.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { loginWithKubeconfig, on, TemporaryError, type ConnectionInfo, type Logger } from 'kopf-gen/runtime';

/** A stop switch per background task, by namespace and pod name. */
const STOPPERS = new Map<string, Map<string, AbortController>>();

on.startup(async function startup_fn_simple({ logger }) {
  logger.info('Initialising the task registry...');
  STOPPERS.clear();
});

on.startup(async function startup_fn_retried({ retry, logger }) {
  if (retry < 3) throw new TemporaryError(`Going to succeed in ${3 - retry}s`, { delay: 1 });
  logger.info('Starting retried...');
});

on.cleanup(async function cleanup_fn({ logger }) {
  logger.info('Cleaning up...');
  for (const tasks of STOPPERS.values()) for (const stopper of tasks.values()) stopper.abort();
  logger.info('All pod-tasks are requested to stop...');
});

on.login({ errors: 'PERMANENT' }, function login_fn({ started }): ConnectionInfo {
  // An equivalent of the built-in kubeconfig login, with an expiration for the demo: `started` is
  // the start of this login on the operator's clock.
  const info = loginWithKubeconfig();
  if (info === null) throw new Error('No kubeconfig is found: set KUBECONFIG or create ~/.kube/config.');
  return { ...info, expiration: new Date(started.getTime() + 30_000) };
});

on.probe(function tasks_count(): number {
  let count = 0;
  for (const tasks of STOPPERS.values()) count += tasks.size;
  return count;
});

on.probe(function monitored_objects(): Record<string, string[]> {
  return Object.fromEntries([...STOPPERS].map(([namespace, tasks]) => [namespace, [...tasks.keys()].sort()]));
});

on.event('pods', function pod_task({ namespace, name, logger }) {
  const tasks = STOPPERS.get(namespace ?? '') ?? new Map<string, AbortController>();
  STOPPERS.set(namespace ?? '', tasks);
  if (tasks.has(name)) return;
  const stopper = new AbortController();
  tasks.set(name, stopper);
  void serve(logger, stopper.signal);
});

/** The background task of one pod: works at random intervals until asked to stop. */
async function serve(logger: Logger, signal: AbortSignal): Promise<void> {
  try {
    for (;;) {
      await sleep((1 + Math.floor(Math.random() * 10)) * 1000, undefined, { signal });
      logger.info('Served by the background task.');
    }
  } catch {
    logger.info('Serving is finished by request.');
  }
}
