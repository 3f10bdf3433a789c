/**
 * Shared helpers of the observation and orchestration tests: a recording logger, a real HTTP
 * client logged in to a devcluster with a bearer token, polling, and background runs of the
 * observers and the orchestrator.
 */
import type { DevCluster } from '../../../../devcluster/testing.js';
import * as api from '../../../../runtime/cogs/client/api.js';
import * as credentials from '../../../../runtime/cogs/client/credentials.js';
import * as settings from '../../../../runtime/cogs/configs/settings.js';

// The recording logger is shared with the client's tests.
import { RecordingLogger } from '../../cogs/client/helpers.js';
export { eventually } from '../../../support/waiting.js';
export { RecordingLogger };
export type { LogRecord } from '../../cogs/client/helpers.js';

export interface Client {
  readonly api: api.HttpKubeApi;
  readonly settings: settings.OperatorSettings;
  readonly logger: RecordingLogger;
}

/**
 * A client of the cluster with a bearer token (the admin's unless given), fast retries and
 * reconnects (so 403s escalate quickly).
 */
export function clientFor(cluster: DevCluster, options: { token?: string; configure?: (s: settings.OperatorSettings) => void } = {}): Client {
  const token = options.token ?? cluster.kubeconfigObject().users[0]!.user.token!;
  const vault = new credentials.Vault();
  vault.populate({ test: { server: cluster.url, token, insecure: true } });
  const s = new settings.OperatorSettings();
  s.networking.errorBackoffs = [0.01];
  s.watching.reconnectBackoff = 0.01;
  options.configure?.(s);
  const logger = new RecordingLogger();
  return { api: new api.HttpKubeApi({ vault, settings: s, logger }), settings: s, logger };
}

/** A background task with its own abort controller. */
export interface Background {
  readonly done: Promise<void>;
  /** Whether it has settled (either way). */
  settled(): boolean;
  /** Aborts it and waits for it to settle; rethrows its error. */
  stop(): Promise<void>;
}

/** Runs `fn(signal)` in the background. */
export function background(fn: (signal: AbortSignal) => Promise<void>): Background {
  const controller = new AbortController();
  let isSettled = false;
  const done = fn(controller.signal).finally(() => {
    isSettled = true;
  });
  done.catch(() => undefined);
  return {
    done,
    settled: () => isSettled,
    async stop() {
      controller.abort();
      await done;
    },
  };
}
