/**
 * The conversion engine (R-CONVERT-203..207): a `ConversionReview` in, the registered converters
 * run, a `ConversionReview` out — what the API server calls for a CRD whose `spec.conversion` is a
 * webhook pointing at `convert/<plural>.<group>` of the operator's webhook server.
 *
 * The conversions registered with `on.convert` form a graph per CRD: versions are the nodes, each
 * pair an edge usable both ways (`forward` and `backward`). An object goes from its version to the
 * review's desired version along the shortest path (breadth-first, edges in registration order, so
 * the choice is stable); hub-and-spoke registrations make a star, so a spoke goes through the hub.
 * Objects already in the desired version are passed through as they are.
 *
 * Every step's result is checked before the next step gets it: a plain JSON object (not a
 * thenable: converters are synchronous), whose `apiVersion` is the step's target, whose `kind` is
 * unchanged, and whose `metadata.name`, `namespace` and `uid` are unchanged where the input had
 * them (the API server restores the rest of the metadata itself, except labels and annotations).
 * A converter that throws, a failed check, an object that is not one of this CRD's, or a version
 * with no path fails the whole review: HTTP 200 with `result.status: Failure` and a message naming
 * the object, the versions and the cause; it is logged once at ERROR (the object's namespace/name
 * and the cause, never the object), a success once at DEBUG. Nothing is thrown to the server except
 * the `WebhookRequestError` of a malformed review (HTTP 400, logged as one WARNING line).
 *
 * Converters run one object after another, synchronously: a review of 100 small objects takes
 * a few milliseconds in all (about 3 ms measured), so yielding to the event loop between objects would
 * only add latency (measured in the R-CONVERT-207 test).
 */

import type * as clocks from '../../cogs/aio/clocks.js';
import type * as settingsModule from '../../cogs/configs/settings.js';
import * as dicts from '../../cogs/structs/dicts.js';
import * as structErrors from '../../cogs/structs/errors.js';
import type * as instruments from '../../cogs/structs/instruments.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as printables from '../../cogs/structs/printables.js';
import type * as webhooks from '../../cogs/structs/webhooks.js';
import * as errors from '../actions/errors.js';
import * as logging from '../actions/logging.js';
import type * as callbacks from '../intents/callbacks.js';
import * as handlers from '../intents/handlers.js';
import * as registries from '../intents/registry.js';
import * as conversionreviews from './conversionreviews.js';

/** The prefix of conversion paths below the webhook server's root: `convert/<plural>.<group>`. */
export const PATH_PREFIX = handlers.CONVERSION_PATH_PREFIX;

/** What the conversion request path needs from the operator. */
export interface ConvertingOptions {
  readonly registry: registries.OperatorRegistry;
  readonly settings: settingsModule.OperatorSettings;
  readonly clock: clocks.Clock;
  /** Where reviews are logged; default `kopf.engines.converting`. */
  readonly logger?: loggers.Logger;
  /** Where requests are counted and timed when metrics are on, with the webhook id `convert/<crd>`. */
  readonly instruments?: instruments.WebhookInstruments;
}

/** The webhook id of a CRD's conversion path (R-CONVERT-205): `convert/widgets.example.com`. */
export function webhookIdOf(crd: string): string {
  return `${PATH_PREFIX}${crd}`;
}

/** The CRD (`<plural>.<group>`) a webhook id is the conversion path of; `null` for other ids. */
export function crdOfWebhook(webhook: string | null | undefined): string | null {
  return typeof webhook === 'string' && webhook.startsWith(PATH_PREFIX) ? webhook.slice(PATH_PREFIX.length) : null;
}

/** One step of a path: the converter and the version it converts to. */
interface Step {
  readonly handler: handlers.ConversionHandler;
  readonly direction: 'forward' | 'backward';
  readonly from: string;
  readonly to: string;
  readonly toApiVersion: string;
}

/** The conversions of one CRD as a graph: version → the steps leaving it, in registration order. */
export class ConversionGraph {
  readonly group: string;
  readonly kind: string;
  private readonly edges = new Map<string, Step[]>();
  private readonly paths = new Map<string, readonly Step[] | null>();

  constructor(conversions: readonly handlers.ConversionHandler[]) {
    const first = conversions[0]!;
    this.group = first.from.group;
    this.kind = first.from.kind;
    for (const handler of conversions) {
      this.add({ handler, direction: 'forward', from: handler.from.version, to: handler.to.version, toApiVersion: handler.to.apiVersion });
      this.add({ handler, direction: 'backward', from: handler.to.version, to: handler.from.version, toApiVersion: handler.from.apiVersion });
    }
  }

  private add(step: Step): void {
    const list = this.edges.get(step.from) ?? [];
    list.push(step);
    this.edges.set(step.from, list);
  }

  /** The versions the conversions know. */
  get versions(): readonly string[] {
    return [...this.edges.keys()];
  }

  /** The shortest path of steps between two versions (empty if equal); `null` if there is none. */
  pathBetween(from: string, to: string): readonly Step[] | null {
    const key = `${from}\u0000${to}`;
    if (!this.paths.has(key)) this.paths.set(key, this.search(from, to));
    return this.paths.get(key)!;
  }

  private search(from: string, to: string): readonly Step[] | null {
    if (from === to) return [];
    if (!this.edges.has(from) || !this.edges.has(to)) return null;
    const arrivals = new Map<string, Step | null>([[from, null]]);
    const queue = [from];
    while (queue.length > 0) {
      const version = queue.shift()!;
      for (const step of this.edges.get(version) ?? []) {
        if (arrivals.has(step.to)) continue;
        arrivals.set(step.to, step);
        if (step.to === to) return unwind(arrivals, to);
        queue.push(step.to);
      }
    }
    return null;
  }
}

function unwind(arrivals: ReadonlyMap<string, Step | null>, to: string): Step[] {
  const steps: Step[] = [];
  for (let step = arrivals.get(to); step; step = arrivals.get(step.from)) steps.unshift(step);
  return steps;
}

/** The conversion graph of a CRD (`<plural>.<group>`) from a registry; `null` if it has no conversions. */
export function graphOf(registry: registries.OperatorRegistry, crd: string): ConversionGraph | null {
  const conversions = registries.conversionsOf(registry).filter((h) => `${h.from.plural}.${h.from.group}` === crd);
  return conversions.length === 0 ? null : new ConversionGraph(conversions);
}

/** A conversion of one object that cannot be done: what the `Failure` message and the log say. */
class Failed extends Error {
  constructor(
    readonly object: string,
    readonly from: string,
    message: string,
  ) {
    super(message);
  }
}

function objectName(object: unknown): string {
  const metadata = dicts.isObject(object) && dicts.isObject(object['metadata']) ? object['metadata'] : {};
  const name = typeof metadata['name'] === 'string' && metadata['name'] !== '' ? metadata['name'] : '(unnamed)';
  return typeof metadata['namespace'] === 'string' && metadata['namespace'] !== '' ? `${metadata['namespace']}/${name}` : name;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!dicts.isObject(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

const KEPT_METADATA = ['name', 'namespace', 'uid'] as const;

/**
 * What is wrong with one step's result (R-CONVERT-204), or `undefined` if nothing is: a plain
 * object, the step's target `apiVersion`, the source's `kind`, and its name, namespace and uid.
 */
export function resultProblem(input: Record<string, unknown>, output: unknown, targetApiVersion: string): string | undefined {
  if (isThenable(output)) return 'the converter returned a promise (or another thenable): converters must be synchronous';
  if (!isPlainObject(output)) return `the converter returned ${Array.isArray(output) ? 'an array' : errors.typeNameOf(output)}, not an object`;
  if (output['apiVersion'] !== targetApiVersion) {
    return `the converter returned apiVersion ${JSON.stringify(output['apiVersion']) ?? 'undefined'}, expected ${JSON.stringify(targetApiVersion)}`;
  }
  if (output['kind'] !== input['kind'])
    return `the converter changed the kind from ${JSON.stringify(input['kind'])} to ${JSON.stringify(output['kind']) ?? 'undefined'}`;
  const before = dicts.isObject(input['metadata']) ? input['metadata'] : {};
  const after = dicts.isObject(output['metadata']) ? output['metadata'] : {};
  for (const key of KEPT_METADATA) {
    if (before[key] !== undefined && after[key] !== before[key]) {
      return `the converter changed metadata.${key} from ${JSON.stringify(before[key])} to ${JSON.stringify(after[key]) ?? 'undefined'}`;
    }
  }
  return undefined;
}

/** A context whose logger is built only if the converter reads it (most never log). */
function contextOf(
  object: Record<string, unknown>,
  desiredApiVersion: string,
  param: unknown,
  settings: settingsModule.OperatorSettings,
): callbacks.ConversionContext {
  let logger: loggers.Logger | undefined;
  return {
    get logger(): loggers.Logger {
      logger ??= logging.objectLogger({ body: loggedBody(object), settings, local: true });
      return logger;
    },
    desiredApiVersion,
    param,
  };
}

/** The object's reference for its logger's prefix, escaped for log lines (R-SEC-8). */
function loggedBody(object: Record<string, unknown>): Record<string, unknown> {
  const metadata = dicts.isObject(object['metadata']) ? object['metadata'] : {};
  const kept: Record<string, string> = {};
  for (const key of KEPT_METADATA) if (typeof metadata[key] === 'string') kept[key] = printables.printable(metadata[key]);
  return { apiVersion: printables.printable(object['apiVersion']), kind: printables.printable(object['kind']), metadata: kept };
}

/** The version of an `apiVersion` of the graph's group; `null` if it is of another group. */
function versionIn(graph: ConversionGraph, apiVersion: unknown): string | null {
  if (typeof apiVersion !== 'string') return null;
  const slash = apiVersion.lastIndexOf('/');
  if (slash < 0 || apiVersion.slice(0, slash) !== graph.group) return null;
  return apiVersion.slice(slash + 1);
}

/**
 * Converts one object to the desired version along the graph, checking every step (R-CONVERT-204).
 *
 * @throws Failed naming the object, its version and the cause.
 */
export function convertObject(
  graph: ConversionGraph,
  object: unknown,
  desiredApiVersion: string,
  settings: settingsModule.OperatorSettings,
): Record<string, unknown> {
  const name = objectName(object);
  if (!isPlainObject(object)) throw new Failed(name, '?', `the object is ${Array.isArray(object) ? 'an array' : errors.typeNameOf(object)}, not an object`);
  const from = versionIn(graph, object['apiVersion']);
  if (from === null) throw new Failed(name, String(object['apiVersion']), `its apiVersion is not of the group ${graph.group}`);
  if (object['kind'] !== graph.kind) throw new Failed(name, from, `its kind is ${JSON.stringify(object['kind']) ?? 'missing'}, expected ${graph.kind}`);
  const to = versionIn(graph, desiredApiVersion);
  if (to === null) throw new Failed(name, from, `the desired apiVersion is not of the group ${graph.group}`);
  const path = graph.pathBetween(from, to);
  if (path === null) {
    throw new Failed(name, from, `no conversion leads from ${from} to ${to} (the conversions know ${graph.versions.join(', ')})`);
  }
  let current: Record<string, unknown> = object;
  for (const step of path) {
    const fn = step.direction === 'forward' ? step.handler.forward : step.handler.backward;
    let output: unknown;
    try {
      output = fn(current, contextOf(current, desiredApiVersion, step.handler.param, settings));
    } catch (error) {
      throw new Failed(name, from, `the converter '${step.handler.id}' (${step.from} → ${step.to}) failed: ${errors.describeError(error)}`);
    }
    const problem = resultProblem(current, output, step.toApiVersion);
    if (problem !== undefined) {
      // A rejected thenable nobody awaits would be an unhandled rejection: swallow it here.
      if (isThenable(output)) output.then(undefined, () => undefined);
      throw new Failed(name, from, `${problem} (the converter '${step.handler.id}', ${step.from} → ${step.to})`);
    }
    current = output as Record<string, unknown>;
  }
  return current;
}

/**
 * Serves one conversion request for a CRD, start to end (R-CONVERT-203..206): parse, convert every
 * object in order, answer; measured and logged.
 *
 * @throws WebhookRequestError `malformed` (400) for a malformed review, `unknown-webhook` (404) for
 *   a CRD without conversions or an `AdmissionReview` at a conversion path.
 */
export function serveConversionRequest(options: ConvertingOptions, payload: unknown, crd: string): webhooks.ConversionReviewResponse {
  const logger = options.logger ?? logging.getLogger('kopf.engines.converting');
  const webhook = webhookIdOf(crd);
  const started = options.clock.now();
  options.instruments?.webhookInFlight(webhook, 1);
  let status = 500;
  try {
    const graph = graphOf(options.registry, crd);
    const review = parse(payload, graph, crd);
    const reply = convertReview(options, graph!, review, crd, logger);
    status = 200;
    return reply;
  } catch (error) {
    if (error instanceof structErrors.WebhookRequestError) {
      status = error.status;
      logger.warning(`Conversion request is refused with HTTP ${error.status}: ${printables.printable(error.message)}`);
    }
    throw error;
  } finally {
    const seconds = (options.clock.now() - started) / 1000;
    options.instruments?.webhookInFlight(webhook, -1);
    options.instruments?.webhookRequest(webhook, status, seconds);
  }
}

function parse(payload: unknown, graph: ConversionGraph | null, crd: string): conversionreviews.ConversionReview {
  if (graph === null) {
    throw new structErrors.WebhookRequestError('unknown-webhook', `No conversions are registered for ${quoted(crd)}.`);
  }
  const decoded = conversionreviews.decoded(payload);
  if (conversionreviews.kindOf(decoded) === 'AdmissionReview') {
    throw new structErrors.WebhookRequestError('unknown-webhook', `The conversion path of ${quoted(crd)} serves no admission webhooks.`);
  }
  return conversionreviews.parseConversionReview(decoded);
}

function convertReview(
  options: ConvertingOptions,
  graph: ConversionGraph,
  review: conversionreviews.ConversionReview,
  crd: string,
  logger: loggers.Logger,
): webhooks.ConversionReviewResponse {
  const { desiredAPIVersion, objects } = review.request;
  const converted: Record<string, unknown>[] = [];
  for (const object of objects) {
    try {
      converted.push(convertObject(graph, object, desiredAPIVersion, options.settings));
    } catch (error) {
      if (!(error instanceof Failed)) throw error;
      const message = `Cannot convert ${graph.kind} ${error.object} of ${crd} from ${error.from} to ${desiredAPIVersion}: ${error.message}.`;
      logger.error(printables.printable(message));
      return conversionreviews.failureResponse(review, message);
    }
  }
  logger.debug(`Converted ${objects.length} object(s) of ${crd} to ${printables.printable(desiredAPIVersion)}.`);
  return conversionreviews.successResponse(review, converted);
}

/** A text from the request, quoted and safe for a log line (control characters escaped). */
function quoted(text: string, limit = 200): string {
  const safe = printables.printable(text);
  return `"${safe.length > limit ? `${safe.slice(0, limit)}…` : safe}"`;
}
