/**
 * The operator context (Kopf's per-operator state bundle): everything one processing cycle needs
 * from the operator it runs in. Built once by `running.ts`; several operators in one process each
 * have their own (R-LIFE-5), so nothing here is global.
 */
import type * as api from '../../cogs/client/api.js';
import type * as clients from '../../cogs/client/clients.js';
import type * as clocks from '../../cogs/aio/clocks.js';
import type * as toggles from '../../cogs/aio/toggles.js';
import type * as settings from '../../cogs/configs/settings.js';
import type * as instruments from '../../cogs/structs/instruments.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import type * as events from '../actions/events.js';
import type * as lifecycles from '../actions/lifecycles.js';
import type * as health from '../engines/health.js';
import type * as indexing from '../engines/indexing.js';
import type * as spawning from '../engines/spawning.js';
import type * as registry from '../intents/registry.js';
import type * as census from './census.js';
import type * as memories from './memories.js';

export interface OperatorContext {
  readonly settings: settings.OperatorSettings;
  readonly registry: registry.OperatorRegistry;
  readonly api: api.KubeApi;
  /** The typed client handlers get as `client`, over `api` (absent in tests that build contexts by hand). */
  readonly client?: clients.KubeClient;
  readonly clock: clocks.Clock;
  /** The operator memo (activity handlers get it; objects get shallow copies, R-MEMO-2/3). */
  readonly memo: object;
  readonly memories: memories.Memories;
  /** The lifecycle for change handlers; default: `lifecycles.getDefaultLifecycle()`. */
  readonly lifecycle?: lifecycles.Lifecycle;
  /** Where k8s-events go (the poster's queue). */
  readonly events: events.EventSink;
  /** The operator-level logger (not per object). */
  readonly logger: loggers.Logger;
  /** Aborts when the operator stops: handlers are cancelled, sleeps end. */
  readonly signal: AbortSignal;
  /**
   * While on, watchers do not list or watch (R-WATCH-6) and daemons and timers are stopped
   * (R-DAEMON-10). On when any member is on: each coordinating engine (peering, Lease election)
   * adds its own toggles.
   */
  readonly paused?: toggles.ToggleSet;
  /** This operator's identity among peers (R-PEER-3): its peering entry's key, a Lease's holder. */
  readonly identity?: string;
  /** The in-memory indices (R-INDEX); injected into kwargs by name (R-INDEX-8). */
  readonly indices?: indexing.OperatorIndexers;
  /** Holds all handlers back until the initial listings are indexed (R-INDEX-7). */
  readonly barrier?: indexing.IndexingBarrier;
  /** All running daemons and timers (R-DAEMON); required to spawn any. */
  readonly daemons?: spawning.Daemons;
  /** The queues of the running watchers, for counting per-object state (`census.takeCensus`). */
  readonly queues?: census.Queues;
  /** Where the operator's work is reported for its metrics; absent when metrics are off. */
  readonly instruments?: instruments.Instruments;
  /** The watch-streams' health, fed by the watchers, read by the liveness and readiness endpoints. */
  readonly streams?: health.StreamHealth;
}
