/**
 * Shared helpers of the lifecycle tests (running, activities, CLI, runner): log capture through
 * the logging sink, polling, and a devcluster with the Kopf example CRD.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DevCluster } from '../../../../devcluster/testing.js';
import * as logging from '../../../../runtime/core/actions/logging.js';
export { tempDir } from '../../../support/cluster.js';
export { eventually } from '../../../support/waiting.js';

/** The Kopf example CRD (`kopfexamples.kopf.dev`). */
export const KOPF_EXAMPLES_CRD = path.resolve(import.meta.dirname, '../../../../fixtures/crds/kopfexamples.yaml');

/** Captures every formatted log line (plain format, DEBUG level) until `restore()`. */
export class Captured {
  readonly lines: string[] = [];
  readonly records: logging.LogRecord[] = [];
  private readonly undo: () => void;

  constructor(options: logging.ConfigureOptions = { verbose: true, logFormat: 'plain' }) {
    logging.configure(options);
    this.undo = logging.setLogSink((line, record) => {
      this.lines.push(line);
      this.records.push(record);
    });
  }

  /** Lines containing `text`. */
  matching(text: string): string[] {
    return this.lines.filter((line) => line.includes(text));
  }

  restore(): void {
    this.undo();
    logging.configure({});
  }
}

/** A devcluster over plain HTTP with the Kopf example CRD loaded. */
export async function startCluster(options: { readonly auth?: 'none' | 'enforced' } = {}): Promise<DevCluster> {
  const cluster = await DevCluster.start({ tls: false, auth: options.auth ?? 'none' });
  await cluster.load(fs.readFileSync(KOPF_EXAMPLES_CRD, 'utf8'));
  return cluster;
}

/** A deferred flag (Kopf's `threading.Event` shape): `set()`, `wait()`, `isSet`. */
export class Flag {
  isSet = false;
  private resolve: () => void = () => undefined;
  private readonly promise = new Promise<void>((resolve) => {
    this.resolve = resolve;
  });

  set(): void {
    this.isSet = true;
    this.resolve();
  }

  wait(): Promise<void> {
    return this.promise;
  }
}
