/**
 * The harness of the acceptance scenarios (section 8 of the runtime reference): a devcluster per
 * scenario file with the reference CRD, the operator started the way section 8.0 says (`kopf run
 * --all-namespaces --standalone --verbose <module>` with `execution.defaultBackoff = 1` and
 * `watching.serverTimeout = 10`) through the test runner (R-TEST-1), the captured log output with
 * waits on lines, the reference object, and the generic checks G-1..G-6.
 *
 * This is the one other way of running an operator in a test (the embedded one is in
 * `operators.ts`, whose fixtures it shares): the scenarios prove that invocation, so they go
 * through it. Operators run in the test process through the runtime's real HTTP client against
 * the devcluster over loopback (found through `KUBECONFIG`, as a user's operator would find its
 * cluster). Log lines are captured by the runner through the process-wide log sink: scenario
 * files run in their own worker processes, and the operators of one file run one after another.
 */
import * as fs from 'node:fs';

import { expect } from 'vitest';
import * as YAML from 'yaml';

import { DevCluster, type DevClusterOptions, type RequestRecord } from '../../devcluster/testing.js';
import type * as clocks from '../../runtime/cogs/aio/clocks.js';
import * as settingsModule from '../../runtime/cogs/configs/settings.js';
import * as references from '../../runtime/cogs/structs/references.js';
import type * as registries from '../../runtime/core/intents/registry.js';
import { KopfRunner } from '../../runtime/kits/launching/runner.js';
import { exportKubeconfig, tempDir } from './cluster.js';
import { CRD_FILE, KEX, OBJECT_FILE } from './operators.js';
import { eventually } from './waiting.js';

export { CRD_FILE, FINALIZER, KEX, LHC, OBJECT_FILE, ROOT } from './operators.js';
export { eventually } from './waiting.js';

/** The reference CRD's type, for the devcluster's out-of-band store. */
export const PODS = { group: '', version: 'v1', resource: 'pods' } as const;
export const EVENTS = { group: '', version: 'v1', resource: 'events' } as const;
export const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' } as const;

/** The reference CRD as the runtime discovers it. */
export function kexResource(): references.Resource {
  return references.makeResource({
    group: 'kopf.dev',
    version: 'v1',
    plural: 'kopfexamples',
    kind: 'KopfExample',
    singular: 'kopfexample',
    shortcuts: ['kopfexes', 'kopfex', 'kexes', 'kex'],
    namespaced: true,
    subresources: ['status'],
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  });
}

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

type Json = Record<string, unknown>;

/** The explicit signal that an object's processing is over (see `test/support/signals.ts`). */
export { AT_REST } from './signals.js';

/**
 * Starts a devcluster with the reference CRD (and more CRDs if given) and points `KUBECONFIG` to
 * it, so that operators started afterwards log in to it.
 */
export async function startCluster(options: DevClusterOptions & { readonly extraCrds?: readonly (Json | string)[] } = {}): Promise<DevCluster> {
  const { extraCrds, ...rest } = options;
  const cluster = await DevCluster.start({ tls: false, ...rest, crds: [CRD_FILE, ...((extraCrds ?? []) as (Json | string)[]), ...(rest.crds ?? [])] });
  exportKubeconfig(cluster, tempDir('kopf-scenario-'));
  return cluster;
}

/**
 * The reference object of section 8.0 (fixtures/objects/kopf-example-1.yaml) as a fresh plain
 * object in namespace `default`, optionally renamed or relocated.
 */
export function referenceObject(overrides: { name?: string; namespace?: string } = {}): Json {
  const body = YAML.parse(fs.readFileSync(OBJECT_FILE, 'utf8')) as { metadata: Json };
  body.metadata['name'] = overrides.name ?? body.metadata['name'];
  body.metadata['namespace'] = overrides.namespace ?? 'default';
  return body as Json;
}

/**
 * Creates an object the way `kubectl apply` does on first use: with the
 * `kubectl.kubernetes.io/last-applied-configuration` annotation holding the applied manifest.
 */
export async function apply(cluster: DevCluster, body: Json): Promise<Json> {
  const manifest = JSON.parse(JSON.stringify(body)) as { metadata: { annotations?: Record<string, string> } };
  const annotations = { ...(manifest.metadata.annotations ?? {}) };
  annotations[LAST_APPLIED] = `${JSON.stringify(body)}\n`;
  return await cluster.store.create({ ...manifest, metadata: { ...manifest.metadata, annotations } } as Json);
}

/** Deletes the reference object (or another one of the reference CRD). */
export async function remove(cluster: DevCluster, name = 'kopf-example-1', namespace = 'default'): Promise<void> {
  await cluster.store.delete(KEX, name, { namespace });
}

/** Reads an object of the reference CRD from the store. */
export function getObject(cluster: DevCluster, name = 'kopf-example-1', namespace = 'default'): Json | undefined {
  return cluster.store.get(KEX, name, namespace);
}

/** Annotations of a stored object. */
export function annotationsOf(body: Json | undefined): Record<string, string> {
  return ((body?.['metadata'] as Json | undefined)?.['annotations'] ?? {}) as Record<string, string>;
}

/** One log entry of the output: its logger, level, message (without the object prefix) and trace. */
export interface Entry {
  readonly line: string;
  readonly logger: string;
  readonly level: string;
  /** The message; for per-object loggers without the `[ns/name] ` prefix. */
  readonly message: string;
  /** The object prefix, e.g. `default/kopf-example-1`, if any. */
  readonly object: string | undefined;
  /** The stack trace lines following the message, if any. */
  readonly trace: string | undefined;
}

const ENTRY = /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] (.{20}) \[(\w+)\s*\] (.*)$/;

/**
 * The log output of one operator run, as the runner captured it (the `full` format): parsed
 * into entries, with waits on messages.
 */
export class Output {
  private parsedLength = -1;
  private parsed: Entry[] = [];

  constructor(private readonly source: () => string) {}

  get text(): string {
    return this.source();
  }

  /** The entries so far (a stack trace belongs to the entry it follows). */
  get entries(): readonly Entry[] {
    const text = this.source();
    if (text.length === this.parsedLength) return this.parsed;
    const entries: { line: string; logger: string; level: string; message: string; object: string | undefined; trace: string[] }[] = [];
    for (const raw of text.split('\n')) {
      const found = ENTRY.exec(raw);
      if (!found) {
        const last = entries[entries.length - 1];
        if (last && raw !== '') {
          last.trace.push(raw);
          last.line += `\n${raw}`;
        }
        continue;
      }
      const logger = found[1]!.trim();
      let message = found[3]!;
      let object: string | undefined;
      const prefixed = logger === 'kopf.objects' ? /^\[([^\]]+)\] (.*)$/.exec(message) : null;
      if (prefixed) {
        object = prefixed[1];
        message = prefixed[2]!;
      }
      entries.push({ line: raw, logger, level: found[2]!, message, object, trace: [] });
    }
    this.parsed = entries.map((e) => ({ ...e, trace: e.trace.length ? e.trace.join('\n') : undefined }));
    this.parsedLength = text.length;
    return this.parsed;
  }

  /** Formatted lines (with their stack traces), in order. */
  get lines(): string[] {
    return this.entries.map((e) => e.line);
  }

  /** Entries whose message contains the text (or matches the pattern). */
  matching(what: string | RegExp): Entry[] {
    return this.entries.filter((e) => (typeof what === 'string' ? e.message.includes(what) : what.test(e.message)));
  }

  /** How many messages contain the text (or match the pattern). */
  count(what: string | RegExp): number {
    return this.matching(what).length;
  }

  /** Messages in order. */
  messages(): string[] {
    return this.entries.map((e) => e.message);
  }

  /** Formatted lines containing the text (e.g. with the `[ns/name] ` prefix). */
  linesWith(what: string): string[] {
    return this.lines.filter((line) => line.includes(what));
  }

  /** Waits until at least `times` messages contain the text (or match the pattern). */
  async waitFor(what: string | RegExp, options: { times?: number; timeoutMs?: number } = {}): Promise<void> {
    const times = options.times ?? 1;
    await eventually(() => this.count(what) >= times, `${times}× log line ${String(what)}`, options.timeoutMs ?? 10_000);
  }
}

/** The operator options of a scenario, beyond section 8.0's invocation. */
export interface OperatorStart {
  readonly registry: registries.OperatorRegistry;
  /** Adjust the settings after section 8.0's defaults are applied. */
  readonly configure?: (settings: settingsModule.OperatorSettings) => void;
  /** Namespace patterns (`-n`, repeated) instead of `--all-namespaces`. */
  readonly namespaces?: readonly string[];
  /** Operator files to load (`kopf run <paths>`); they register into the registry. */
  readonly paths?: readonly string[];
  /** The resource whose watch request means "started"; default `kopfexamples`; null: do not wait. */
  readonly watches?: string | null;
  /**
   * The operator's clock (`KopfRunner(args, { clock })`); default: the real one. With a
   * `VirtualClock`, the scenario moves time itself, and the runner's `stop()` keeps it moving
   * until the operator has stopped (its graceful stop sleeps on that clock, too).
   */
  readonly clock?: clocks.Clock;
}

/**
 * An operator of a scenario, run by the test runner (R-TEST-1) as section 8.0 says:
 * `kopf run --all-namespaces --standalone --verbose` with short backoffs and server timeouts.
 */
export class RunningOperator {
  readonly settings: settingsModule.OperatorSettings;
  readonly runner: KopfRunner;
  readonly output: Output;
  readonly clock: clocks.Clock | undefined;

  constructor(options: OperatorStart) {
    const settings = new settingsModule.OperatorSettings();
    settings.execution.defaultBackoff = 1;
    settings.watching.serverTimeout = 10;
    options.configure?.(settings);
    this.settings = settings;
    const scope = options.namespaces ? options.namespaces.flatMap((pattern) => ['-n', pattern]) : ['--all-namespaces'];
    this.runner = new KopfRunner(['run', ...scope, '--standalone', '--verbose', ...(options.paths ?? [])], {
      registry: options.registry,
      settings,
      timeout: 30,
      reraise: false,
      ...(options.clock ? { clock: options.clock } : {}),
    });
    this.output = new Output(() => this.runner.output);
    this.clock = options.clock;
  }

  /** The operator's failure (G-1 demands none). */
  get exception(): unknown {
    return this.runner.exception;
  }

  /** 0 after a graceful stop, 1 after a failure, null while running. */
  get exitCode(): number | null {
    return this.runner.exitCode;
  }

  /**
   * Stops the operator through the runner (the stop flag) and waits for the graceful stop (on a
   * virtual clock, the runner moves time on while the operator stops).
   */
  async stop(): Promise<void> {
    await this.runner.stop();
  }
}

/**
 * Starts an operator as section 8.0 says and waits until its watcher has started watching the
 * reference CRD (so that objects created afterwards arrive as `ADDED` events).
 */
export async function startOperator(cluster: DevCluster, options: OperatorStart): Promise<RunningOperator> {
  const since = cluster.requests.all.length;
  const op = new RunningOperator(options);
  // A failure before the start rejects start() (R-TEST-103); scenarios read it from exitCode/exception.
  await op.runner.start().catch((error: unknown) => {
    if (op.exitCode === null) throw error;
  });
  const watches = options.watches === undefined ? 'kopfexamples' : options.watches;
  if (watches !== null && op.exitCode === null) await waitForWatch(cluster, watches, since);
  return op;
}

/** Waits for a watch request of a resource made after the `since`-th request. */
export async function waitForWatch(cluster: DevCluster, resource: string, since = 0, timeoutMs = 5000): Promise<RequestRecord> {
  return await cluster.requests.waitFor((r) => r.resource === resource && r.verb === 'watch' && cluster.requests.all.indexOf(r) >= since, timeoutMs);
}

/** PATCH requests of one object (body parsed), in order; optionally of one subresource only. */
export function patchesOf(
  cluster: DevCluster,
  options: { resource?: string; name?: string; since?: number } = {},
): { subresource: string | undefined; contentType: string | undefined; body: unknown; code: number }[] {
  const resource = options.resource ?? 'kopfexamples';
  const name = options.name ?? 'kopf-example-1';
  return cluster.requests.all
    .slice(options.since ?? 0)
    .filter((r) => r.method === 'PATCH' && r.resource === resource && r.name === name)
    .map((r) => ({
      subresource: r.subresource,
      contentType: r.headers.contentType,
      body: r.body === undefined ? undefined : (JSON.parse(r.body) as unknown),
      code: r.code,
    }));
}

/** K8s-events (core/v1) about an object, from the store. */
export function eventsAbout(cluster: DevCluster, name = 'kopf-example-1', namespace = 'default'): Json[] {
  return cluster.store.list(EVENTS, namespace).filter((e) => (e['involvedObject'] as Json | undefined)?.['name'] === name);
}

/** What a scenario's operator module has and what happened to the object, for the generic checks. */
export interface GenericExpectations {
  /** The module has create handlers and the object was created while it ran (G-2). */
  readonly created?: boolean;
  /** The module has change handlers and the object was deleted while it ran (G-2). */
  readonly deleted?: boolean;
  /** The module has a non-optional delete handler: the finalizer was added while it ran (G-3). */
  readonly finalizerAdded?: boolean;
  /** The module has a non-optional delete handler and the object was deleted while it ran (G-3). */
  readonly deletionHandled?: boolean;
  /** The object the checks are about; default `default/kopf-example-1`. */
  readonly object?: string;
  /** Skip G-4 (handlers legitimately succeed several times). */
  readonly skipG4?: boolean;
  /** Skip G-5 (failures expected). */
  readonly skipG5?: boolean;
  /** Skip G-6 (stack traces expected). */
  readonly skipG6?: boolean;
}

/**
 * The generic checks of section 8.0 (G-1..G-6) over a stopped operator and its output: G-4 counts
 * successes per operator run, so a run must see at most one lifecycle of the object unless
 * `skipG4`.
 */
export function genericChecks(op: RunningOperator, expectations: GenericExpectations = {}): void {
  const output = op.output;
  const prefix = `[${expectations.object ?? 'default/kopf-example-1'}] `;
  // G-1: no exception, exit code 0 after a graceful stop.
  expect(op.exception).toBeNull();
  expect(op.exitCode).toBe(0);
  // G-2: creation and deletion are visible per object.
  if (expectations.created) expect(output.linesWith(`${prefix}Creation is in progress:`).length).toBeGreaterThan(0);
  if (expectations.deleted) expect(output.linesWith(`${prefix}Deleted, really deleted`).length).toBeGreaterThan(0);
  // G-3: the finalizer of non-optional delete handlers.
  if (expectations.finalizerAdded) expect(output.linesWith(`${prefix}Adding the finalizer`).length).toBeGreaterThan(0);
  if (expectations.deletionHandled) expect(output.linesWith(`${prefix}Deletion is in progress:`).length).toBeGreaterThan(0);
  // G-4: every handler that succeeds does so once per object lifecycle: once in the creation, once
  // in the deletion, once per update or resuming (a change ends with its `… is processed:` line).
  if (!expectations.skipG4) {
    const successes = new Map<string, number>();
    let title = '';
    for (const line of output.linesWith(prefix)) {
      const progress = /(\w+) is in progress:/.exec(line);
      if (progress) title = progress[1]!;
      const found = /Handler '([^']+)' succeeded\./.exec(line);
      if (found) successes.set(`${title}: ${found[1]!}`, (successes.get(`${title}: ${found[1]!}`) ?? 0) + 1);
      const processed = /(\w+) is processed:/.exec(line);
      if (processed && processed[1] !== 'Creation' && processed[1] !== 'Deletion') {
        for (const key of [...successes.keys()]) if (key.startsWith(`${processed[1]}: `)) successes.delete(key);
      }
      for (const [id, times] of successes) expect({ id, times }).toEqual({ id, times: 1 });
    }
  }
  // G-5: no permanent failures unless expected.
  if (!expectations.skipG5) {
    expect(output.matching(/failed permanently|failed with an exception and will stop/).map((r) => r.message)).toEqual([]);
  }
  // G-6: no stack traces unless expected.
  if (!expectations.skipG6) {
    expect(output.entries.filter((e) => e.trace !== undefined).map((e) => e.line)).toEqual([]);
    expect(output.text).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
  }
}

/** Merge-patches an object of the reference CRD out of band (as `kubectl patch --type=merge`). */
export async function mergePatch(cluster: DevCluster, patch: Json, name = 'kopf-example-1', namespace = 'default'): Promise<Json> {
  return await cluster.store.patch(KEX, name, patch, { namespace, type: 'merge-patch' });
}

/** Removes an object regardless of its finalizers (test cleanup without an operator). */
export async function purge(cluster: DevCluster, name = 'kopf-example-1', namespace = 'default'): Promise<void> {
  if (!getObject(cluster, name, namespace)) return;
  await cluster.store.patch(KEX, name, { metadata: { finalizers: null } }, { namespace, type: 'merge-patch' });
  if (getObject(cluster, name, namespace)) await cluster.store.delete(KEX, name, { namespace });
}

/** The finalizers of a stored object. */
export function finalizersOf(body: Json | undefined): string[] {
  return ((body?.['metadata'] as Json | undefined)?.['finalizers'] ?? []) as string[];
}
