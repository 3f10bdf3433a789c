/**
 * kopf-gen/testing — everything an operator's tests need, in one import: the embedded Kubernetes
 * API server (`DevCluster`), the in-process operator runner (`KopfRunner`), the virtual clock
 * that lets a test move the operator's time (timers, daemons, retries) in milliseconds of real time,
 * and `roundTrip`, which checks that converters between two versions of a kind lose nothing.
 *
 * The devcluster and the runtime never import each other; this module is where they meet.
 *
 * @example
 * import { DevCluster, KopfRunner, VirtualClock } from 'kopf-gen/testing';
 * const cluster = await DevCluster.start({ crds: ['crds/widgets.yaml'] });
 * process.env.KUBECONFIG = cluster.writeKubeconfig('/tmp/kubeconfig');
 * const clock = new VirtualClock({ start: Date.now() });
 * await using runner = await new KopfRunner(['run', '-A', '--standalone', 'src/main.ts'], { clock }).start();
 * // … create an object, then ten virtual minutes pass in a blink:
 * await clock.advance(10 * 60_000);
 *
 * The devcluster accepts the same clock (`DevCluster.start({ clock })`): its timestamps, watch
 * timeouts and bookmarks then move with the operator's time.
 */
export * from '../devcluster/testing.js';
export { KopfRunner } from '../runtime/kits/launching/runner.js';
// What `start()` rejects with when the operator ends before it is ready (R-TEST-103), besides the
// login's and the startup activities' errors.
export { ModuleLoadError, RunnerTimeoutError, TypeScriptLoaderError, UsageError } from '../runtime/kits/launching/errors.js';
export type { KopfRunnerOptions } from '../runtime/kits/launching/runner.js';
export { VirtualClock } from '../runtime/cogs/aio/clocks.js';
// Round trips of converters (`on.convert`): an object converted to the other version and back.
export { roundTrip } from './conversions.js';
export { RoundTripError } from './errors.js';
export type { RoundTripConversion, RoundTripOptions, RoundTripResult } from './conversions.js';
export type { FieldChange } from './errors.js';
