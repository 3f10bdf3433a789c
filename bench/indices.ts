/**
 * The index part of the engines benchmark: what an in-memory index costs per event and per
 * lookup at 100k indexed objects, measured in this process against the compiled runtime
 * (`dist/`), not through an operator — creating 100k objects in a cluster would measure the API
 * and the watch instead.
 *
 * One indexer keyed by a composite key `[namespace, labels.app]` (100 namespaces × 10,000 apps: 100k
 * objects make 10,000 keys of 10 objects each) with the object's name as the value. Per event, the same
 * work as the indexing step of a processing cycle (`processIndexingCause` in
 * `runtime/core/reactor/processing.ts`, with the kwargs of `arguments.ts`): a terse object
 * logger, the resource scope with a read-only view, the indexers matching the object (filters), then
 * `OperatorIndexers.indexObject` (the invocation with its kwargs, result interpretation, key
 * encoding, the reverse-index update). Phases, each over all objects in turn, sequentially:
 *   - `add`: the first event of every object;
 *   - `same`: a new body whose key does not change (the common `MODIFIED` event);
 *   - `move`: a new body whose key changes (the object leaves one store for another);
 *   - `delete`: the `DELETED` event of every object.
 * Lookups: `index.get([namespace, app])` and `index.has(…)` with freshly built tuples (the
 * canonical encoding of the key is part of every lookup), cycling over existing keys, after the
 * `move` phase. For comparison, the bare table: `IndexTable.replace()` with pre-encoded entries.
 * All figures are nanoseconds of this process's CPU time (user + system) per operation: on a
 * shared machine, steadier than wall time.
 */
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as clocksModule from '../runtime/cogs/aio/clocks.js';
import type * as settingsModule from '../runtime/cogs/configs/settings.js';
import type * as patchesModule from '../runtime/cogs/structs/patches.js';
import type * as referencesModule from '../runtime/cogs/structs/references.js';
import type * as viewsModule from '../runtime/cogs/structs/views.js';
import type * as loggingModule from '../runtime/core/actions/logging.js';
import type * as indexingModule from '../runtime/core/engines/indexing.js';
import type * as registryModule from '../runtime/core/intents/registry.js';
import type * as argumentsModule from '../runtime/core/reactor/arguments.js';
import type * as onModule from '../runtime/on.js';

/** Apps per namespace: 100 namespaces × 10,000 apps, so 100k objects make 10,000 keys of 10 objects. */
const APPS = 10_000;

/** CPU time of this process (user + system) in nanoseconds: steadier than wall time on a shared machine. */
function cpuNs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) * 1000;
}

const DIST = path.resolve(import.meta.dirname, '..', 'dist', 'runtime');

/** Imports a module of the compiled runtime, typed as its source. */
async function compiled<T>(relative: string): Promise<T> {
  return (await import(pathToFileURL(path.join(DIST, relative)).href)) as T;
}

/** A type alias, not an interface: assignable to the runtime's raw body (an index signature). */
type Body = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; uid: string; resourceVersion: string; labels: Record<string, string> };
  spec: { field: string };
};

function bodyOf(i: number, app: number, version: number): Body {
  return {
    apiVersion: 'kopf.dev/v1',
    kind: 'KopfExample',
    metadata: { name: `obj-${i}`, namespace: `ns-${i % 100}`, uid: `uid-${i}`, resourceVersion: String(version), labels: { app: `app-${app}` } },
    spec: { field: 'value' },
  };
}

/** Measures the index costs over `objects` objects; returns `index_…` figures (ns per operation). */
export async function measure(objects: number, lookups = 1_000_000): Promise<Record<string, number>> {
  const [clocks, settingsMod, patches, references, views, logging, indexing, registries, kwargs, on] = await Promise.all([
    compiled<typeof clocksModule>('cogs/aio/clocks.js'),
    compiled<typeof settingsModule>('cogs/configs/settings.js'),
    compiled<typeof patchesModule>('cogs/structs/patches.js'),
    compiled<typeof referencesModule>('cogs/structs/references.js'),
    compiled<typeof viewsModule>('cogs/structs/views.js'),
    compiled<typeof loggingModule>('core/actions/logging.js'),
    compiled<typeof indexingModule>('core/engines/indexing.js'),
    compiled<typeof registryModule>('core/intents/registry.js'),
    compiled<typeof argumentsModule>('core/reactor/arguments.js'),
    compiled<typeof onModule>('on.js'),
  ]);
  const settings = new settingsMod.OperatorSettings();
  const resource = references.makeResource({ group: 'kopf.dev', version: 'v1', plural: 'kopfexamples', kind: 'KopfExample', namespaced: true });
  const registry = new registries.OperatorRegistry();
  on.on.index('kopfexamples.v1.kopf.dev', { registry, id: 'byApp' }, function byApp({ namespace, name, labels }) {
    return new Map([[[namespace, labels['app'] ?? ''], name]]);
  });
  const all = registry.indexingHandlersOf(resource);
  if (all.length !== 1) throw new Error(`the benchmark indexer does not match its resource (${all.length} indexers)`);
  const indexers = new indexing.OperatorIndexers(registry.indexNames());
  const table = indexers.table('byApp')!;
  const memories: (indexingModule.IndexingMemory | undefined)[] = new Array<undefined>(objects).fill(undefined);
  const signal = new AbortController().signal;
  const memo = {};

  const event = async (i: number, body: Body | undefined): Promise<void> => {
    const raw = body ?? bodyOf(i, 0, 0);
    const logger = logging.objectLogger({ body: raw, settings, terse: true });
    const scope: argumentsModule.ResourceScope = {
      resource,
      body: raw,
      view: views.viewOf(raw),
      patch: new patches.Patch<object>(),
      logger,
      memo,
      signal,
      indices: indexers.byName,
    };
    const matching =
      body === undefined ? [] : registry.indexingHandlers({ resource, body: raw }, { kwargs: (handler) => kwargs.indexingKwargs(scope, handler) });
    memories[i] = await indexers.indexObject({
      object: `ns-${i % 100}/obj-${i}`,
      all,
      matching,
      deleted: body === undefined,
      memory: memories[i],
      scope: { settings, clock: clocks.realClock, logger, signal, kwargs: (handler, retry) => kwargs.indexingKwargs(scope, handler, retry) },
    });
  };
  const phase = async (make: (i: number) => Body | undefined): Promise<number> => {
    const started = cpuNs();
    for (let i = 0; i < objects; i++) await event(i, make(i));
    return (cpuNs() - started) / objects;
  };

  const figures: Record<string, number> = { index_objects: objects };
  figures['index_event_add_ns'] = await phase((i) => bodyOf(i, i % APPS, 1));
  figures['index_event_same_key_ns'] = await phase((i) => bodyOf(i, i % APPS, 2));
  figures['index_event_move_key_ns'] = await phase((i) => bodyOf(i, (i + 1) % APPS, 3));
  figures['index_keys'] = table.size;
  if (table.objects !== objects) throw new Error(`the index holds ${table.objects} objects, not ${objects}`);

  let found = 0;
  const started = cpuNs();
  for (let j = 0; j < lookups; j++) if (table.get([`ns-${j % 100}`, `app-${(j + 1) % APPS}`]) !== undefined) found++;
  figures['index_lookup_get_ns'] = (cpuNs() - started) / lookups;
  const startedHas = cpuNs();
  for (let j = 0; j < lookups; j++) if (table.has([`ns-${j % 100}`, `app-${(j + 1) % APPS}`])) found++;
  figures['index_lookup_has_ns'] = (cpuNs() - startedHas) / lookups;
  if (found !== 2 * lookups) throw new Error(`${2 * lookups - found} of ${2 * lookups} lookups found nothing`);

  figures['index_event_delete_ns'] = await phase(() => undefined);
  if (table.objects !== 0) throw new Error(`the index still holds ${table.objects} objects after deleting all`);

  // The bare table, without the engine around it: replace() with entries encoded beforehand.
  const bare = new indexing.IndexTable<unknown, string>('bare');
  const entries = Array.from({ length: objects }, (_, i) => {
    const key = [`ns-${i % 100}`, `app-${i % APPS}`];
    return new Map([[indexing.encodeKey(key), { key, value: `obj-${i}` }]]);
  });
  const startedBare = cpuNs();
  for (let i = 0; i < objects; i++) bare.replace(`ns-${i % 100}/obj-${i}`, entries[i]!);
  figures['index_table_replace_ns'] = (cpuNs() - startedBare) / objects;
  return figures;
}
