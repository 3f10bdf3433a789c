/**
 * Probe of issue 33, item 5: where Secret values end up when an operator handles Secrets.
 *
 * An operator with create and update handlers on Secrets runs against a devcluster at DEBUG level
 * (`--debug`: the client's low-level logs too) with its per-object log lines posted as Kubernetes
 * events (`settings.posting.loggers`, level DEBUG). It handles K Secrets with `data` and one with
 * `stringData`, then an update of one key of each. The figures count the Secret values found —
 * each value as written and as base64 — in the objects' annotations, in the formatted log lines
 * (traces included) and in the posted events; and the login token in logs and events. The target
 * of each is 0.
 *
 * Options: `--secrets K` (default 10).
 */

import { DevCluster } from '../../devcluster/testing.js';
import * as settingsModule from '../../runtime/cogs/configs/settings.js';
import * as logging from '../../runtime/core/actions/logging.js';
import { OperatorRegistry } from '../../runtime/core/intents/registry.js';
import * as running from '../../runtime/core/reactor/running.js';
import { on } from '../../runtime/on.js';
import type * as report from '../report.js';

const SECRETS = { group: '', version: 'v1', resource: 'secrets' } as const;
const EVENTS = { group: '', version: 'v1', resource: 'events' } as const;
const LHC = 'kopf.zalando.org/last-handled-configuration';

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

function option(args: readonly string[], name: string, fallback: number): number {
  const index = args.indexOf(name);
  const value = index >= 0 ? Number(args[index + 1]) : Number.NaN;
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

/** Occurrences of any of `forms` in `texts`. */
function occurrences(texts: readonly string[], forms: readonly string[]): number {
  let count = 0;
  for (const text of texts) for (const form of forms) count += text.split(form).length - 1;
  return count;
}

async function until(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function run(args: readonly string[]): Promise<report.Result> {
  const count = option(args, '--secrets', 10);
  const cluster = await DevCluster.start({ tls: false });
  const lines: string[] = [];
  logging.configure({ debug: true });
  const restoreSink = logging.setLogSink((line) => lines.push(line));
  const stopper = new AbortController();
  try {
    const values: string[] = [];
    const secretValue = (label: string): string => {
      const value = `${label}-${Math.random().toString(36).slice(2, 12)}-value`;
      values.push(value);
      return value;
    };
    const registry = new OperatorRegistry();
    const updated = new Set<string>();
    on.login({ registry }, function login_fn() {
      return { server: cluster.url, token: cluster.token };
    });
    on.create('secrets', { registry }, function create_fn({ logger, name }) {
      logger.info(`Secret ${name} created.`);
    });
    on.update('secrets', { registry }, function update_fn({ name, logger }) {
      updated.add(name);
      logger.info(`Secret ${name} updated.`);
    });
    const settings = new settingsModule.OperatorSettings({ warn: () => undefined });
    settings.posting.enabled = true;
    settings.posting.loggers = true;
    settings.posting.level = 10;
    settings.persistence.consistencyTimeout = 2;
    const done = running.operator({ registry, settings, clusterwide: true, standalone: true, stopFlag: stopper.signal });

    const names: string[] = [];
    for (let i = 0; i < count; i++) {
      const name = `secret-${i}`;
      names.push(name);
      await cluster.store.create({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace: 'default' },
        data: { password: b64(secretValue('password')), user: b64(secretValue('user')) },
      });
    }
    names.push('with-string-data');
    await cluster.store.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'with-string-data', namespace: 'default' },
      stringData: { token: secretValue('token') },
    });
    const annotationsOf = (name: string): Record<string, string> =>
      (cluster.store.get(SECRETS, name, 'default') as { metadata?: { annotations?: Record<string, string> } }).metadata?.annotations ?? {};
    await until(() => names.every((name) => annotationsOf(name)[LHC] !== undefined), 'every Secret handled');
    const before = new Map(names.map((name) => [name, annotationsOf(name)[LHC]]));
    for (const name of names) {
      const key = name === 'with-string-data' ? 'token' : 'password';
      await cluster.store.patch(SECRETS, name, { data: { [key]: b64(secretValue('changed')) } }, { namespace: 'default', type: 'merge-patch' });
    }
    // Handled once the diff-base of the update is stored.
    await until(() => names.every((name) => updated.has(name) && annotationsOf(name)[LHC] !== before.get(name)), 'every update handled');
    // The events are posted in the background: let the poster drain (no new event for 0.5 s).
    const eventCount = (): number => cluster.store.list(EVENTS, 'default').length;
    for (let seen = -1, quiet = 0; quiet < 5; ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const now = eventCount();
      quiet = now === seen ? quiet + 1 : 0;
      seen = now;
    }
    stopper.abort();
    await done;

    const forms = values.flatMap((value) => [value, b64(value)]);
    const annotations = names.flatMap((name) => Object.values(annotationsOf(name)));
    const events = cluster.store.list(EVENTS, 'default').map((event) => JSON.stringify(event));
    return {
      name: 'security: secret values (issue 33, item 5)',
      figures: {
        secrets: names.length,
        log_lines: lines.length,
        events_posted: events.length,
        values_in_annotations: occurrences(annotations, forms),
        values_in_logs: occurrences(lines, forms),
        values_in_events: occurrences(events, forms),
        token_in_logs_and_events: occurrences([...lines, ...events], [cluster.token]),
      },
      targets: {
        values_in_annotations: { max: 0 },
        values_in_logs: { max: 0 },
        values_in_events: { max: 0 },
        token_in_logs_and_events: { max: 0 },
      },
      notes: {
        measured: `${count} Secrets with data (2 keys) and 1 with stringData, created then one key of each updated, under create/update handlers at --debug with settings.posting.loggers on at DEBUG.`,
        counted:
          'each Secret value as written and as base64, found in the annotations of the Secrets, the formatted log lines (traces included), and the posted events.',
      },
    };
  } finally {
    stopper.abort();
    restoreSink();
    logging.configure({});
    await cluster.stop();
  }
}
