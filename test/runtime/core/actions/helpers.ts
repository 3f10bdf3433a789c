/**
 * Shared fixtures of the actions tests: a recording logger, the reference object, and one
 * processing cycle of a change the way the reactor runs it (load → select → execute → persist).
 */
import * as clocks from '../../../../runtime/cogs/aio/clocks.js';
import * as progress from '../../../../runtime/cogs/configs/progress.js';
import * as settings from '../../../../runtime/cogs/configs/settings.js';
import * as jsonpatches from '../../../../runtime/cogs/structs/jsonpatches.js';
import type * as loggers from '../../../../runtime/cogs/structs/loggers.js';
import * as patches from '../../../../runtime/cogs/structs/patches.js';
import * as execution from '../../../../runtime/core/actions/execution.js';
import * as outcomes from '../../../../runtime/core/actions/outcomes.js';
import * as progression from '../../../../runtime/core/actions/progression.js';

export interface Line {
  readonly level: loggers.LogLevel;
  readonly message: string;
  readonly extra?: loggers.LogExtra;
}

/** A logger that remembers every call. */
export class RecordingLogger implements loggers.Logger {
  readonly lines: Line[] = [];
  debug(message: string, extra?: loggers.LogExtra): void {
    this.lines.push({ level: 'debug', message, extra });
  }
  info(message: string, extra?: loggers.LogExtra): void {
    this.lines.push({ level: 'info', message, extra });
  }
  warning(message: string, extra?: loggers.LogExtra): void {
    this.lines.push({ level: 'warning', message, extra });
  }
  error(message: string, extra?: loggers.LogExtra): void {
    this.lines.push({ level: 'error', message, extra });
  }
  critical(message: string, extra?: loggers.LogExtra): void {
    this.lines.push({ level: 'critical', message, extra });
  }

  messages(level?: loggers.LogLevel): string[] {
    return this.lines.filter((line) => level === undefined || line.level === level).map((line) => line.message);
  }

  count(fragment: string): number {
    return this.lines.filter((line) => line.message.includes(fragment)).length;
  }
}

/** 2024-05-01T10:00:00.123456Z in ms. */
export const T0 = Date.UTC(2024, 4, 1, 10, 0, 0) + 123.456;

export function referenceBody(): Record<string, unknown> {
  return {
    apiVersion: 'kopf.dev/v1',
    kind: 'KopfExample',
    metadata: {
      name: 'kopf-example-1',
      namespace: 'default',
      uid: 'uid-1',
      resourceVersion: '1',
      labels: { somelabel: 'somevalue' },
      annotations: { someannotation: 'somevalue' },
    },
    spec: { duration: '1m', field: 'value', items: ['item1', 'item2'] },
  };
}

export interface World {
  readonly clock: clocks.VirtualClock;
  readonly settings: settings.OperatorSettings;
  readonly logger: RecordingLogger;
  readonly storage: progress.ProgressStorage;
  body: Record<string, unknown>;
}

export function makeWorld(options?: { readonly start?: number; readonly storage?: progress.ProgressStorage }): World {
  return {
    clock: new clocks.VirtualClock({ start: options?.start ?? T0 }),
    settings: new settings.OperatorSettings({ warn: () => undefined }),
    logger: new RecordingLogger(),
    storage: options?.storage ?? new progress.AnnotationsProgressStorage(),
    body: referenceBody(),
  };
}

export interface CycleResult {
  readonly patch: patches.Patch;
  readonly state: progression.State;
  readonly outcomes: Map<string, outcomes.Outcome>;
}

/** Kwargs as the reactor would build them (a small subset). */
export function simpleKwargs(world: World, patch: patches.Patch, reason: string) {
  return (handler: execution.Invocable, retry: execution.RetryKwargs): object => ({
    body: world.body,
    spec: world.body['spec'],
    patch,
    logger: world.logger,
    param: handler.param,
    reason,
    ...retry,
  });
}

/**
 * One processing cycle of a change cause over `world.body`; the resulting merge-patch is applied to
 * the body (as the API would do) unless `apply: false`.
 */
export async function runCycle(
  world: World,
  handlers: readonly execution.Invocable[],
  options?: {
    readonly reason?: string;
    readonly apply?: boolean;
    readonly signal?: AbortSignal;
    readonly scope?: Partial<execution.ExecutionScope>;
  },
): Promise<CycleResult> {
  const reason = options?.reason ?? 'create';
  const patch = new patches.Patch();
  const ids = handlers.map((handler) => handler.id);
  const now = world.clock.now();
  const loaded = await progression.State.fromStorage({ body: world.body, storage: world.storage, handlerIds: ids, now });
  const state = loaded.withPurpose(reason).withHandlers(ids, now);
  const scope: execution.ExecutionScope = {
    settings: world.settings,
    clock: world.clock,
    logger: world.logger,
    signal: options?.signal,
    kwargs: simpleKwargs(world, patch, reason),
    change: { body: world.body, patch, reason, storage: world.storage },
    ...options?.scope,
  };
  const results = await execution.executeHandlersOnce({ handlers, state, scope });
  const final = state.withOutcomes(results, world.clock.now());
  await final.persist({ body: world.body, patch, storage: world.storage, handlerIds: ids });
  outcomes.deliverResults(results, patch);
  if (options?.apply !== false) world.body = jsonpatches.applyMergePatch(world.body, patch.toMergePatch()) as Record<string, unknown>;
  return { patch, state: final, outcomes: results };
}

/** A handler object for tests. */
export function handler(id: string, fn: (kwargs: Record<string, unknown>) => unknown, options?: Partial<execution.Invocable>): execution.Invocable {
  return { id, fn, ...options };
}
