/**
 * R-API-1, no silent no-ops: every exported function that registers handlers — every key of `on`
 * and the top-level registration exports, enumerated from the module so that a new one is caught —
 * is engine-backed: a real operator
 * with that one registration (plus what it needs to be observed, e.g. a create handler reading an
 * index) invokes the handler. The operators run in this process against a devcluster over loopback
 * HTTP, through the runtime's real client, logging in with the devcluster's kubeconfig; timers run
 * on a virtual clock.
 *
 * The daemon, timer and index engines land with their own issue: until then, their scenarios fail
 * here on purpose (the handlers are never invoked).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import * as clocks from '../../../runtime/cogs/aio/clocks.js';
import * as kopf from '../../../runtime/index.js';
import * as fx from '../../support/operators.js';
import { inProcessServer, localServer } from '../scenarios/webhooks.js';
import { exportKubeconfig, type ExportedKubeconfig, tempDir } from '../../support/cluster.js';
import { advanceUntil, advanceUntilSettled } from '../../support/waiting.js';

type Json = Record<string, unknown>;
/** A registration function under test, called loosely (its overloads are proven by the type tests). */
type Registration = (...args: unknown[]) => unknown;

const exported = kopf as unknown as Record<string, unknown>;
const WEBHOOK_CONFIGS = { group: 'admissionregistration.k8s.io', version: 'v1' } as const;

/** Top-level exports that register handlers (the rest of them are in `on`). */
const TOP_LEVEL_REGISTRATIONS = ['daemon', 'timer', 'index', 'subhandler', 'register'] as const;

/**
 * Every other exported function, and why it registers nothing. A new exported function fails the
 * first test until it is listed here or as a registration.
 */
const NOT_REGISTRATIONS: Readonly<Record<string, string>> = {
  resource: 'builds a resource descriptor',
  isDescriptor: 'a type guard',
  notFn: 'a filter combinator',
  allFn: 'a filter combinator',
  anyFn: 'a filter combinator',
  noneFn: 'a filter combinator',
  getDefaultRegistry: 'registry access',
  setDefaultRegistry: 'registry access',
  getDefaultLifecycle: 'lifecycle access',
  setDefaultLifecycle: 'lifecycle access',
  configure: 'logging configuration',
  event: 'posts a k8s-event',
  info: 'posts a k8s-event',
  warn: 'posts a k8s-event',
  exception: 'posts a k8s-event',
  execute: 'runs sub-handlers at once',
  operator: 'a runner',
  run: 'a runner',
  spawnTasks: 'a runner',
  runTasks: 'a runner',
  loginWithKubeconfig: 'a login helper',
  loginWithServiceAccount: 'a login helper',
  main: 'the command line',
  isEntryPoint: 'the command line',
  runCommand: 'the command line',
  parseRunArgs: 'the command line',
  connect: 'a typed client for scripts',
  adopt: 'a hierarchy helper',
  appendOwnerReference: 'a hierarchy helper',
  removeOwnerReference: 'a hierarchy helper',
  label: 'a hierarchy helper',
  harmonizeNaming: 'a hierarchy helper',
  adjustNamespace: 'a hierarchy helper',
  buildObjectReference: 'a hierarchy helper',
  buildOwnerReference: 'a hierarchy helper',
  touchCommand: 'the command line',
};

/** What a scenario gets to register its one handler and to drive the cluster. */
interface Stage {
  readonly registry: kopf.OperatorRegistry;
  readonly cluster: DevCluster;
  /** The name of this scenario's object (created by `before` or `act`). */
  readonly name: string;
  readonly clock: clocks.VirtualClock | undefined;
  /** Called by the handler: the registration ran. */
  readonly invoked: (detail: unknown) => void;
  /** What the handlers reported so far. */
  readonly details: readonly unknown[];
  /** The URLs of the liveness and readiness endpoints, once served (scenarios with `liveness`). */
  readonly served: string[];
}

interface Scenario {
  /** Registers the handler through `fn`, the function under test. */
  readonly register: (fn: Registration, stage: Stage) => void;
  /** Before the operator starts, e.g. an object that exists already (for resume handlers). */
  readonly before?: (stage: Stage) => Promise<void>;
  /** While the operator runs: makes the handler run. */
  readonly act?: (stage: Stage) => Promise<void>;
  /** Run the operator on a virtual clock. */
  readonly virtualTime?: boolean;
  /** The handler runs only when the operator stops (cleanup). */
  readonly atStop?: boolean;
  /** Serve the liveness endpoint on a free loopback port. */
  readonly liveness?: boolean;
  /** What the handler must have reported (default: at least one invocation). */
  readonly expected?: (stage: Stage) => void;
}

async function create(stage: Stage, spec: Json = {}): Promise<void> {
  const body = fx.kopfExample(stage.name);
  await stage.cluster.store.create({ ...body, spec: { ...(body['spec'] as Json), ...spec } });
}

async function mergePatch(stage: Stage, patch: Json): Promise<void> {
  await stage.cluster.store.patch(fx.KEX, stage.name, patch, { namespace: 'default', type: 'merge-patch' });
}

function annotationsOf(stage: Stage): Record<string, string> {
  return fx.annotationsOf(stage.cluster, stage.name);
}

function finalizersOf(stage: Stage): string[] {
  const meta = (stage.cluster.store.get(fx.KEX, stage.name, 'default') as Json | undefined)?.['metadata'] as Json | undefined;
  return (meta?.['finalizers'] ?? []) as string[];
}

const LHC = 'kopf.zalando.org/last-handled-configuration';

/** A created object whose creation has been handled (it has a diff-base). */
async function createHandled(stage: Stage): Promise<void> {
  await create(stage);
  await fx.eventually(() => annotationsOf(stage)[LHC] !== undefined, `the diff-base of ${stage.name}`);
}

/** The values an index holds under a key, whatever the engine's read-only map looks like. */
function lookup(index: unknown, key: string): unknown[] {
  if (index === undefined || index === null) return [];
  const get = (index as { get?: unknown }).get;
  const store = typeof get === 'function' ? (get as (key: string) => unknown).call(index, key) : (index as Json)[key];
  if (store === undefined || store === null) return [];
  return typeof (store as Iterable<unknown>)[Symbol.iterator] === 'function' ? [...(store as Iterable<unknown>)] : [store];
}

const daemonScenario: Scenario = {
  register: (fn, { registry, invoked }) => {
    fn('kopfexamples', { registry }, async function monitor({ name, stopped }: { name: string; stopped: kopf.DaemonStopped }) {
      invoked(name);
      await stopped.wait();
    });
  },
  act: (stage) => create(stage),
  expected: (stage) => expect(stage.details).toContain(stage.name),
};

const timerScenario: Scenario = {
  virtualTime: true,
  register: (fn, { registry, invoked, clock }) => {
    fn('kopfexamples', { registry, interval: 1 }, function tick({ name }: { name: string }) {
      invoked({ name, at: clock!.now() });
    });
  },
  act: async (stage) => {
    await create(stage);
    const ticks = (): number => stage.details.filter((d) => (d as { name: string }).name === stage.name).length;
    await advanceUntil(stage.clock!, () => ticks() >= 3, 'three ticks', { stepMs: 1000, pauseMs: 20 });
  },
  expected: (stage) => {
    const at = stage.details.filter((d) => (d as { name: string }).name === stage.name).map((d) => (d as { at: number }).at);
    expect(at.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(1000);
  },
};

const indexScenario: Scenario = {
  register: (fn, { registry, invoked }) => {
    fn('kopfexamples', { registry }, function byName({ name }: { name: string }) {
      return { [name]: 'indexed' };
    });
    // The index is injected into every handler's arguments under its name (R-INDEX-8).
    kopf.on.create('kopfexamples', { registry }, function create_fn(args) {
      invoked({ name: args.name, values: lookup((args as unknown as Json)['byName'], args.name) });
    });
  },
  act: (stage) => create(stage),
  expected: (stage) => expect(stage.details).toContainEqual({ name: stage.name, values: ['indexed'] }),
};

/**
 * Admission handlers: the devcluster calls them through the managed webhook configuration, served
 * by an HTTPS server on loopback written as users may write theirs.
 */
function admissionScenario(type: 'validating' | 'mutating', operations?: readonly string[]): Scenario {
  const server = localServer();
  return {
    register: (fn, { registry, invoked }) => {
      fn('kopfexamples', { registry, ...(operations ? { operations } : {}) }, function hook({ name, operation }: { name: string; operation: string }) {
        invoked({ name, operation });
      });
      kopf.on.startup({ registry }, function configure({ settings }) {
        settings.admission.server = server.serve;
        settings.admission.managed = 'registrations.kopf.dev';
      });
    },
    act: async (stage) => {
      await fx.eventually(() => {
        const config = stage.cluster.store.get({ ...WEBHOOK_CONFIGS, resource: `${type}webhookconfigurations` }, 'registrations.kopf.dev') as Json | undefined;
        return ((config?.['webhooks'] ?? []) as unknown[]).length > 0;
      }, 'the webhook configuration');
      await create(stage);
    },
    expected: (stage) => expect(stage.details).toContainEqual({ name: stage.name, operation: 'CREATE' }),
  };
}

/**
 * Conversions (R-CONVERT-201): the operator's request function gets a ConversionReview at the
 * conversion path, as the API server would send it (the devcluster does not call conversion
 * webhooks itself yet).
 */
function conversionScenario(): Scenario {
  const server = inProcessServer();
  const info = { group: 'kopf.dev', plural: 'kopfexamples', kind: 'KopfExample', namespaced: true } as const;
  const V1 = kopf.resource({ ...info, version: 'v1' });
  const V2 = kopf.resource({ ...info, version: 'v2' });
  return {
    register: (fn, { registry, invoked }) => {
      (fn as unknown as typeof kopf.on.convert)(V1, V2, {
        registry,
        forward: (object) => {
          invoked(object.metadata?.name);
          return { ...object, apiVersion: V2.apiVersion };
        },
        backward: (object) => ({ ...object, apiVersion: V1.apiVersion }),
      });
      kopf.on.startup({ registry }, function configure({ settings }) {
        settings.admission.server = server.serve;
      });
    },
    act: async (stage) => {
      await fx.eventually(() => server.fn() !== undefined, 'the webhook server');
      const object = fx.kopfExample(stage.name);
      const review = {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { uid: 'u', desiredAPIVersion: V2.apiVersion, objects: [object] },
      };
      await server.fn()!(review, { webhook: 'convert/kopfexamples.kopf.dev' });
    },
    expected: (stage) => expect(stage.details).toContain(stage.name),
  };
}

/** Engine-backed registrations: a real operator runs the handler. */
const ENGINE_BACKED: Readonly<Record<string, Scenario>> = {
  'on.startup': {
    register: (fn, { registry, invoked }) => {
      fn({ registry }, function startup_fn() {
        invoked('startup');
      });
    },
  },
  'on.cleanup': {
    atStop: true,
    register: (fn, { registry, invoked }) => {
      fn({ registry }, function cleanup_fn() {
        invoked('cleanup');
      });
    },
  },
  'on.probe': {
    liveness: true,
    register: (fn, { registry, invoked }) => {
      fn({ registry }, function health() {
        invoked('probe');
        return { ok: true };
      });
    },
    // The probe runs when the liveness endpoint is asked (R-ACTIVITY-4).
    act: async (stage) => {
      await fx.eventually(() => stage.served.length > 0, 'the liveness endpoint');
      const response = await fetch(stage.served.find((url) => url.endsWith('/healthz'))!);
      expect([response.status, await response.json()]).toEqual([200, { health: { ok: true } }]);
    },
  },
  'on.login': {
    register: (fn, { registry, invoked, cluster }) => {
      fn({ registry }, function login_fn() {
        invoked('login');
        return { server: cluster.url, token: cluster.token };
      });
      kopf.on.event('kopfexamples', { registry }, function seen() {}); // something to watch with the credentials
    },
    act: async (stage) => {
      await fx.eventually(() => fx.watchRequests(stage.cluster).length > 0, 'a watch with the credentials');
    },
  },
  'on.resume': {
    register: (fn, { registry, invoked }) => {
      fn('kopfexamples', { registry }, function resume_fn({ name }: { name: string }) {
        invoked(name);
      });
    },
    // An object handled by an earlier run of the operator: it has a diff-base (R-CAUSE-2/3).
    before: async (stage) => {
      const body = fx.kopfExample(stage.name);
      await stage.cluster.store.create(fx.kopfExample(stage.name, { metadata: { annotations: { [LHC]: JSON.stringify({ spec: body['spec'] }) } } }));
    },
    expected: (stage) => expect(stage.details).toContain(stage.name),
  },
  'on.create': {
    register: (fn, { registry, invoked }) => {
      fn('kopfexamples', { registry }, function create_fn({ name, reason }: { name: string; reason: string }) {
        invoked({ name, reason });
      });
    },
    act: (stage) => create(stage),
    expected: (stage) => expect(stage.details).toContainEqual({ name: stage.name, reason: 'create' }),
  },
  'on.update': {
    register: (fn, { registry, invoked }) => {
      fn('kopfexamples', { registry }, function update_fn({ name, reason }: { name: string; reason: string }) {
        invoked({ name, reason });
      });
    },
    act: async (stage) => {
      await createHandled(stage);
      await mergePatch(stage, { spec: { field: 'changed' } });
    },
    expected: (stage) => expect(stage.details).toContainEqual({ name: stage.name, reason: 'update' }),
  },
  'on.delete': {
    register: (fn, { registry, invoked }) => {
      fn('kopfexamples', { registry }, function delete_fn({ name, reason }: { name: string; reason: string }) {
        invoked({ name, reason });
      });
    },
    act: async (stage) => {
      await create(stage);
      await fx.eventually(() => finalizersOf(stage).length > 0, 'the finalizer');
      await stage.cluster.store.delete(fx.KEX, stage.name, { namespace: 'default' });
    },
    expected: (stage) => expect(stage.details).toContainEqual({ name: stage.name, reason: 'delete' }),
  },
  'on.field': {
    register: (fn, { registry, invoked }) => {
      fn('kopfexamples', 'spec.field', { registry }, function field_fn({ name, new: now }: { name: string; new: unknown }) {
        invoked({ name, new: now });
      });
    },
    act: async (stage) => {
      await createHandled(stage);
      await mergePatch(stage, { spec: { field: 'changed' } });
    },
    expected: (stage) => expect(stage.details).toContainEqual({ name: stage.name, new: 'changed' }),
  },
  'on.event': {
    register: (fn, { registry, invoked }) => {
      fn('kopfexamples', { registry }, function event_fn({ name }: { name: string }) {
        invoked(name);
      });
    },
    act: (stage) => create(stage),
    expected: (stage) => expect(stage.details).toContain(stage.name),
  },
  'on.index': indexScenario,
  'on.validate': admissionScenario('validating', ['CREATE']),
  'on.mutate': admissionScenario('mutating'),
  'on.convert': conversionScenario(),
  'on.daemon': daemonScenario,
  'on.timer': timerScenario,
  'on.reconcile': {
    register: (fn, { registry, invoked }) => {
      fn('kopfexamples', { registry }, function reconcile_fn({ name }: { name: string }) {
        invoked(name);
      });
    },
    act: (stage) => create(stage),
    expected: (stage) => expect(stage.details).toContain(stage.name),
  },
  index: indexScenario,
  daemon: daemonScenario,
  timer: timerScenario,
  subhandler: {
    register: (fn, { registry, invoked }) => {
      kopf.on.create('kopfexamples', { registry }, function parent_fn({ name }) {
        fn({ id: 'child' }, function child() {
          invoked(name);
        });
      });
    },
    act: (stage) => create(stage),
    expected: (stage) => expect(stage.details).toContain(stage.name),
  },
  register: {
    register: (fn, { registry, invoked }) => {
      kopf.on.create('kopfexamples', { registry }, function parent_fn({ name }) {
        fn(function child() {
          invoked(name);
        });
      });
    },
    act: (stage) => create(stage),
    expected: (stage) => expect(stage.details).toContain(stage.name),
  },
};

/** The registration functions, by name: `on.<key>` for every key of `on`, and the top-level ones. */
function registrations(): Map<string, unknown> {
  const found = new Map<string, unknown>(Object.keys(kopf.on).map((key) => [`on.${key}`, (kopf.on as unknown as Json)[key]]));
  for (const name of TOP_LEVEL_REGISTRATIONS) found.set(name, exported[name]);
  return found;
}

function isClass(value: unknown): boolean {
  return typeof value === 'function' && /^class\b/.test(Function.prototype.toString.call(value));
}

describe('every registration either runs or throws', () => {
  it('R-API-1 every exported function is either a registration or listed as something else', () => {
    const functions = Object.keys(exported).filter((name) => typeof exported[name] === 'function' && !isClass(exported[name]));
    const unclassified = functions.filter((name) => !(TOP_LEVEL_REGISTRATIONS as readonly string[]).includes(name) && !(name in NOT_REGISTRATIONS));
    expect(unclassified).toEqual([]);
    expect(Object.keys(NOT_REGISTRATIONS).filter((name) => typeof exported[name] !== 'function')).toEqual([]);
  });

  it('R-API-1 every exported registration function runs in a real operator', () => {
    const all = registrations();
    for (const [name, fn] of all) expect({ name, type: typeof fn }).toEqual({ name, type: 'function' });
    const unaccounted = [...all.keys()].filter((name) => !(name in ENGINE_BACKED));
    expect(unaccounted).toEqual([]);
    const stale = Object.keys(ENGINE_BACKED).filter((name) => !all.has(name));
    expect(stale).toEqual([]);
  });
});

describe('engine-backed registrations run in a real operator', () => {
  let cluster: DevCluster;
  let exported: ExportedKubeconfig | undefined;
  const names: string[] = [];

  beforeAll(async () => {
    cluster = await fx.startCluster();
    exported = exportKubeconfig(cluster, tempDir('kopf-registrations-'));
  });
  afterAll(async () => {
    exported?.restore();
    await cluster.stop();
  });
  afterEach(async () => {
    // Objects of earlier scenarios are removed (finalizers included), so each operator sees its own only.
    for (const name of names.splice(0)) {
      if (cluster.store.get(fx.KEX, name, 'default') === undefined) continue;
      await cluster.store.patch(fx.KEX, name, { metadata: { finalizers: null } }, { namespace: 'default', type: 'merge-patch' });
      if (cluster.store.get(fx.KEX, name, 'default') !== undefined) await cluster.store.delete(fx.KEX, name, { namespace: 'default' });
    }
  });

  it.each(Object.keys(ENGINE_BACKED))('R-API-1 %s invokes its handler in a real operator', async (name) => {
    const scenario = ENGINE_BACKED[name]!;
    const details: unknown[] = [];
    const clock = scenario.virtualTime ? new clocks.VirtualClock({ start: Date.parse('2030-01-01T00:00:00Z') }) : undefined;
    const stage: Stage = {
      registry: new kopf.OperatorRegistry(),
      cluster,
      name: `reg-${name.replace('.', '-').toLowerCase()}`,
      clock,
      details,
      served: [],
      invoked: (detail) => {
        details.push(detail);
      },
    };
    names.push(stage.name);
    scenario.register(registrations().get(name) as Registration, stage);
    await scenario.before?.(stage);

    const stop = new AbortController();
    let stopped = false;
    let ready = false;
    const watchesBefore = fx.watchRequests(cluster).length;
    const done = kopf
      .operator({
        registry: stage.registry,
        settings: fx.fastSettings(),
        clusterwide: true,
        standalone: true,
        stopFlag: stop.signal,
        readyFlag: () => {
          ready = true;
        },
        ...(clock ? { clock } : {}),
        ...(scenario.liveness
          ? {
              livenessEndpoint: 'http://127.0.0.1:0/healthz',
              onServing: (served: readonly { url: string }[]) => {
                stage.served.push(...served.map((s) => s.url));
              },
            }
          : {}),
      })
      .finally(() => {
        stopped = true;
      });
    done.catch(() => undefined);
    await fx.eventually(() => stopped || ready, 'the startup activity');
    if ([...stage.registry.selectorUsage().watched].length > 0) {
      await fx.eventually(() => stopped || fx.watchRequests(cluster).length > watchesBefore, 'the operator to watch kopfexamples');
    }
    await scenario.act?.(stage);
    if (!scenario.atStop) {
      // Until what the scenario expects has happened (it fails with its own message after the stop if not).
      const happened = (): boolean => {
        try {
          scenario.expected?.(stage);
          return true;
        } catch {
          return false;
        }
      };
      await fx.eventually(() => stopped || (details.length > 0 && happened()), `the handler of ${name}`, 8_000).catch(() => undefined);
    }
    stop.abort();
    // The graceful stop sleeps on the operator's clock: keep virtual time going until it is over.
    if (clock) await advanceUntilSettled(clock, done, { pauseMs: 20 });
    await done;
    if (scenario.expected) scenario.expected(stage);
    expect(details.length).toBeGreaterThan(0);
  });
});
