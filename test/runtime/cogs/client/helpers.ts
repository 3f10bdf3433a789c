/**
 * Shared helpers of the client tests: a recording logger, a client wired to a devcluster through
 * its kubeconfig (the real login, vault, transport and retries), and a driver for virtual clocks.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DevCluster } from '../../../../devcluster/testing.js';
import type * as clocks from '../../../../runtime/cogs/aio/clocks.js';
import * as api from '../../../../runtime/cogs/client/api.js';
import * as credentials from '../../../../runtime/cogs/client/credentials.js';
import * as logins from '../../../../runtime/cogs/client/logins.js';
import * as settings from '../../../../runtime/cogs/configs/settings.js';
import type * as loggers from '../../../../runtime/cogs/structs/loggers.js';
import * as waiting from '../../../support/waiting.js';
export { eventually } from '../../../support/waiting.js';

export interface LogRecord {
  readonly level: loggers.LogLevel;
  readonly message: string;
  /** The extra fields (e.g. an `error` whose stack trace the real loggers print). */
  readonly extra?: loggers.LogExtra;
}

/** A logger that keeps every record. */
export class RecordingLogger implements loggers.Logger {
  readonly records: LogRecord[] = [];
  debug(message: string, extra?: loggers.LogExtra): void {
    this.records.push({ level: 'debug', message, extra });
  }
  info(message: string, extra?: loggers.LogExtra): void {
    this.records.push({ level: 'info', message, extra });
  }
  warning(message: string, extra?: loggers.LogExtra): void {
    this.records.push({ level: 'warning', message, extra });
  }
  error(message: string, extra?: loggers.LogExtra): void {
    this.records.push({ level: 'error', message, extra });
  }
  critical(message: string, extra?: loggers.LogExtra): void {
    this.records.push({ level: 'critical', message, extra });
  }
  messages(level?: loggers.LogLevel): string[] {
    return this.records.filter((r) => level === undefined || r.level === level).map((r) => r.message);
  }
}

/** A fresh temporary folder. */
export function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-client-'));
}

export interface Client {
  readonly api: api.HttpKubeApi;
  readonly vault: credentials.Vault;
  readonly settings: settings.OperatorSettings;
  readonly logger: RecordingLogger;
}

/** A client logged in with the cluster's kubeconfig (written to a temp file). */
export function clientFor(cluster: DevCluster, options: { clock?: clocks.Clock; configure?: (s: settings.OperatorSettings) => void } = {}): Client {
  const file = cluster.writeKubeconfig(path.join(tempDir(), 'config'));
  const info = logins.loginWithKubeconfig({ paths: [file] });
  const vault = new credentials.Vault();
  vault.populate({ kubeconfig: info });
  const s = new settings.OperatorSettings();
  options.configure?.(s);
  const logger = new RecordingLogger();
  return { api: new api.HttpKubeApi({ vault, settings: s, logger, clock: options.clock }), vault, settings: s, logger };
}

/**
 * Runs `promise` to completion on a virtual clock: whenever it sleeps, jumps to the wake-up time.
 * Returns the outcome and every sleep's duration (ms) in order.
 */
export async function drive<T>(clock: clocks.VirtualClock, promise: Promise<T>): Promise<{ value?: T; error?: unknown; slept: number[] }> {
  let settled = false;
  let value: T | undefined;
  let error: unknown;
  promise
    .then(
      (v) => {
        value = v;
      },
      (e: unknown) => {
        error = e;
      },
    )
    .finally(() => {
      settled = true;
    });
  const slept: number[] = [];
  while (!settled) {
    // The signal to act on: the promise settled, or no request is in flight (the client tracks them
    // on the clock) and something sleeps on the clock (a retry's back-off).
    await waiting.until(() => (settled || (clock.busyCount === 0 && clock.nextDue() !== undefined) ? true : undefined), 'the request to settle or to sleep');
    const due = clock.nextDue();
    if (due !== undefined && !settled) {
      // a wake-up after settling is none of this promise's sleeps
      slept.push(due - clock.now());
      await clock.advanceTo(due);
    }
  }
  return { value, error, slept };
}
