/**
 * Request handling: one function per HTTP request that runs the pipeline of D-VERB-1 up to the
 * verb handlers — body reading, authentication, routing, fault injection, authorization, content
 * negotiation — then writes the response and records it in the request log.
 */
import type * as http from 'node:http';
import * as YAML from 'yaml';
import type * as core from '../api/core.js';
import * as converting from '../api/converting.js';
import * as creating from '../api/creating.js';
import * as deleting from '../api/deleting.js';
import * as filters from '../api/filters.js';
import * as objects from '../api/objects.js';
import * as options from '../api/options.js';
import * as reading from '../api/reading.js';
import type * as resources from '../api/resources.js';
import * as scale from '../api/scale.js';
import * as subresources from '../api/subresources.js';
import * as tables from '../api/tables.js';
import * as updating from '../api/updating.js';
import type * as watching from '../api/watching.js';
import * as writes from '../api/writes.js';
import * as impersonation from '../auth/impersonation.js';
import type * as tokens from '../auth/tokens.js';
import type * as faultrules from '../faults/rules.js';
import * as openapiserving from '../openapi/serving.js';
import * as discovery from './discovery.js';
import * as duplicatekeys from './duplicatekeys.js';
import * as negotiation from './negotiation.js';
import * as protobuf from './protobuf.js';
import type * as requestlog from './requestlog.js';
import * as responses from './responses.js';
import * as routing from './routing.js';
import * as statuses from './statuses.js';
import type { JsonObject } from '../json.js';

export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export interface AuthorizationAttributes {
  kind: 'resource' | 'nonResource';
  verb: string;
  apiGroup: string;
  resource: string;
  subresource: string | undefined;
  namespace: string | undefined;
  name: string | undefined;
  path: string;
}

export interface ServerContext {
  readonly core: core.Core;
  readonly hub: watching.WatchHub;
  readonly faults: faultrules.Faults;
  readonly log: requestlog.RequestLog;
  readonly version: string;
  readonly aggregatedDiscovery: boolean;
  /** `/openapi/v3` served (`full`, the default) or answered 404 as by a server without it (D-WIRE-34). */
  readonly openapiV3: '404' | 'full';
  readonly latencyMs: number;
  /** Server-side watch lifetime when timeoutSeconds is absent (ms). */
  watchDefaultTimeoutMs(): number;
  serverAddress(): string;
  /** Resolves when the server is not paused (D-FAULT-9). */
  gate(): Promise<void>;
  /** True while a restart with `refuse: false` is in progress (503 everywhere, D-FAULT-8). */
  unavailable(): boolean;
  authenticate(req: http.IncomingMessage): core.UserInfo | undefined;
  authorize(attrs: AuthorizationAttributes, user: core.UserInfo): statuses.ApiError | undefined;
  /** Where service-account tokens issued through `serviceaccounts/token` are registered. */
  readonly tokens?: tokens.TokenTable;
  /** The Host/Origin check of a plain-HTTP server (D-SEC-1): the 403 to answer before anything else, if any. */
  readonly admit?: (req: http.IncomingMessage) => statuses.ApiError | undefined;
}

interface Reply {
  code: number;
  body?: unknown;
  text?: string;
  /** A body already encoded (OpenAPI documents), sent with `headers`; not kept by the request log. */
  bytes?: Buffer;
  headers?: Readonly<Record<string, string>>;
  form?: 'json' | 'yaml';
  contentType?: string;
  warnings?: string[];
}

class BodyTooLarge extends Error {}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new BodyTooLarge());
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function verbOf(method: string, info: routing.ResourceRequestInfo, watch: boolean): string {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return watch ? 'watch' : info.name ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return info.name ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}

/**
 * One request's state and its ways to answer. A class rather than closures inside `handle`:
 * closures would be created (and, under the TypeScript loader, renamed) on every request.
 */
class Exchange {
  readonly started = Date.now();
  readonly url: routing.RequestTarget;
  readonly method: string;
  readonly info: routing.RequestInfo;
  readonly watch: boolean;
  readonly verb: string;
  user: core.UserInfo = { username: '', uid: '', groups: [] };
  bodyText: string | undefined;
  fault = false;

  constructor(
    readonly ctx: ServerContext,
    readonly req: http.IncomingMessage,
    readonly res: http.ServerResponse,
  ) {
    this.url = routing.parseTarget(req.url ?? '/');
    this.method = (req.method ?? 'GET').toUpperCase();
    const info = routing.parsePath(this.url.pathname);
    this.info = info;
    this.watch = info.kind === 'resource' && (info.legacyWatch || isTrue(this.url.searchParams.get('watch')));
    this.verb = info.kind === 'resource' ? verbOf(this.method, info, this.watch) : this.method.toLowerCase();
  }

  record(code: number, responseBody?: string): void {
    const { ctx, req, info } = this;
    const resource = info.kind === 'resource' ? info : undefined;
    ctx.log.record({
      time: this.started,
      method: this.method,
      path: this.url.pathname,
      query: this.url.search.replace(/^\?/, ''),
      verb: this.verb,
      group: resource?.group,
      resource: resource?.resource,
      subresource: resource?.subresource,
      namespace: resource?.namespace,
      name: resource?.name,
      headers: {
        accept: req.headers.accept,
        contentType: req.headers['content-type'],
        userAgent: req.headers['user-agent'],
        authorization: req.headers.authorization ? '<redacted>' : undefined,
      },
      body: ctx.log.keepBodies ? this.bodyText : undefined,
      user: this.user.username,
      code,
      responseBody: ctx.log.keepResponses ? responseBody : undefined,
      durationMs: Date.now() - this.started,
      fault: this.fault,
    });
  }

  reply(r: Reply): void {
    let text: string | undefined;
    if (r.bytes !== undefined) {
      responses.sendBytes(this.res, r.code, r.bytes, r.contentType ?? 'application/octet-stream', r.headers);
    } else if (r.text !== undefined) {
      responses.sendText(this.res, r.code, r.text, r.contentType);
      text = r.text;
    } else text = responses.sendBody(this.res, r.code, r.body, r.form ?? 'json', { warnings: r.warnings, contentType: r.contentType });
    this.record(r.code, text);
  }

  fail(err: unknown, warnings: string[] = []): void {
    const apiError = err instanceof statuses.ApiError ? err : statuses.internal(err instanceof Error ? err.message : String(err));
    if (!(err instanceof statuses.ApiError)) process.emitWarning(`devcluster: unexpected error: ${err instanceof Error ? err.stack : String(err)}`);
    if (this.res.headersSent) {
      this.res.destroy();
      this.record(apiError.code);
      return;
    }
    const text = responses.sendError(this.res, apiError, warnings);
    this.record(apiError.code, text);
  }

  async finish(r: Reply, afterMs: number, resetAfter: boolean): Promise<void> {
    if (afterMs) await sleep(this.ctx, afterMs);
    if (resetAfter) {
      this.req.socket.destroy();
      this.record(0);
      return;
    }
    this.reply(r);
  }
}

function isTrue(v: string | null): boolean {
  return v === 'true' || v === '1';
}

const HEALTH_PATHS = new Set(['/healthz', '/livez', '/readyz']);

export async function handle(ctx: ServerContext, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const ex = new Exchange(ctx, req, res);
  const { url, method, info, watch, verb } = ex;

  try {
    const refused = ctx.admit?.(req);
    if (refused) {
      req.resume();
      throw refused;
    }
    let body: Buffer;
    try {
      body = await readBody(req);
    } catch (err) {
      if (err instanceof BodyTooLarge) throw statuses.tooLarge();
      throw err;
    }
    ex.bodyText = body.length ? body.toString('utf8') : undefined;
    // During a restart without refusing connections, health endpoints answer themselves (/readyz 500).
    if (ctx.unavailable() && !HEALTH_PATHS.has(url.pathname)) {
      throw new statuses.ApiError(503, 'ServiceUnavailable', 'the server is currently unable to handle the request');
    }
    const authenticated = ctx.authenticate(req);
    if (!authenticated) throw statuses.unauthorized();
    ex.user = authenticated;
    // Impersonation headers switch the user once the authenticated one may impersonate it (D-AUTH-10).
    const user = impersonation.impersonate(req.headersDistinct, authenticated, (a) =>
      ctx.authorize({ ...a, subresource: a.subresource, namespace: a.namespace, name: a.name, path: url.pathname }, authenticated),
    );
    ex.user = user;

    // Fault injection comes after authentication and routing (D-FAULT-1).
    const action = ctx.faults.match({
      method,
      verb,
      group: info.kind === 'resource' ? info.group : undefined,
      version: info.kind === 'resource' ? info.version : undefined,
      resource: info.kind === 'resource' ? info.resource : undefined,
      subresource: info.kind === 'resource' ? info.subresource : undefined,
      namespace: info.kind === 'resource' ? info.namespace : undefined,
      name: info.kind === 'resource' ? info.name : undefined,
      watch,
      path: url.pathname,
      userAgent: req.headers['user-agent'] ?? '',
      user: user.username,
    });
    let afterMs = 0;
    let resetAfter = false;
    let watchFault: Extract<faultrules.FaultAction, { watch: unknown }>['watch'] | undefined;
    if (action) {
      ex.fault = true;
      if ('respond' in action) {
        replyFault(ctx, res, action.respond, (code, text) => ex.record(code, text));
        return;
      }
      if ('reset' in action) {
        if (action.reset === 'before') {
          req.socket.destroy();
          ex.record(0);
          return;
        }
        resetAfter = true;
      }
      if ('hang' in action) {
        ex.record(0);
        return;
      }
      if ('delay' in action) {
        if (action.delay.beforeMs) await sleep(ctx, action.delay.beforeMs);
        afterMs = action.delay.afterMs ?? 0;
      }
      if ('watch' in action) watchFault = action.watch;
    }
    if (ctx.latencyMs && !watch) await sleep(ctx, ctx.latencyMs);
    await ctx.gate();

    if (info.kind === 'nonResource') {
      const denied = ctx.authorize(
        {
          kind: 'nonResource',
          verb: method.toLowerCase(),
          apiGroup: '',
          resource: '',
          subresource: undefined,
          namespace: undefined,
          name: undefined,
          path: url.pathname,
        },
        user,
      );
      if (denied) throw denied;
      const r = openapiserving.isOpenApiPath(url.pathname) ? openapi(ctx, req, url) : nonResource(ctx, req, url.pathname);
      await ex.finish(r, afterMs, resetAfter);
      return;
    }
    const type = ctx.core.registry.find(info.group, info.version, info.resource);
    if (!type) throw statuses.pathNotFound();
    if (type.namespaced !== (info.namespace !== undefined) && !(type.namespaced && info.name === undefined && (method === 'GET' || method === 'HEAD'))) {
      if (type.namespaced && info.namespace === undefined && info.name === undefined && (method === 'POST' || method === 'DELETE'))
        throw statuses.methodNotAllowed();
      throw statuses.pathNotFound();
    }
    if (info.subresource !== undefined && !type.subresources.includes(info.subresource)) throw statuses.pathNotFound();
    const denied = ctx.authorize(
      {
        kind: 'resource',
        verb,
        apiGroup: type.group,
        resource: type.resource,
        subresource: info.subresource,
        namespace: info.namespace,
        name: info.name,
        path: url.pathname,
      },
      user,
    );
    if (denied) throw denied;
    const warnings: string[] = type.deprecationWarning ? [type.deprecationWarning] : [];
    if (watch) {
      await serveWatch(ctx, req, res, url, info, type, user, watchFault, (code) => ex.record(code));
      return;
    }
    let r: Reply;
    try {
      r = await resourceRequest(ctx, req, method, url, info, type, user, { raw: body, text: ex.bodyText }, warnings);
    } catch (err) {
      ex.fail(err, warnings);
      return;
    }
    await ex.finish(r, afterMs, resetAfter);
  } catch (err) {
    ex.fail(err);
  }
}

/** Waits on the cluster's clock, so that a test on virtual time decides when a delay is over. */
const sleep = (ctx: ServerContext, ms: number): Promise<void> =>
  new Promise((resolve) => {
    ctx.core.clock.schedule(ms, resolve);
  });

function replyFault(
  ctx: ServerContext,
  res: http.ServerResponse,
  spec: Extract<faultrules.FaultAction, { respond: unknown }>['respond'],
  record: (code: number, body?: string) => void,
): void {
  const { code, retryAfterSeconds } = spec;
  if (retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(retryAfterSeconds));
  if (code === 429 && (spec.form ?? 'plain') === 'plain') {
    const text = 'Too many requests, please try again later.\n';
    responses.sendText(res, 429, text);
    record(429, text);
    return;
  }
  const defaults: Record<number, [statuses.StatusReason, string]> = {
    429: ['TooManyRequests', 'Too many requests, please try again later.'],
    500: ['InternalError', 'Internal error occurred: injected fault'],
    503: ['ServiceUnavailable', 'the server is currently unable to handle the request'],
    504: ['Timeout', 'the server was unable to return a response in the time allotted'],
    409: ['Conflict', 'Operation cannot be fulfilled: injected conflict'],
    401: ['Unauthorized', 'Unauthorized'],
    403: ['Forbidden', 'forbidden: injected fault'],
  };
  const [reason, message] = defaults[code] ?? ['InternalError', `injected fault ${code}`];
  const err = new statuses.ApiError(
    code,
    (spec.reason as statuses.StatusReason | undefined) ?? reason,
    spec.message ?? message,
    retryAfterSeconds !== undefined ? { retryAfterSeconds } : undefined,
  );
  record(code, responses.sendError(res, err));
  void ctx;
}

/** `/openapi/v2` and `/openapi/v3[/…]`, answered by the OpenAPI modules (D-WIRE-30..34). */
function openapi(ctx: ServerContext, req: http.IncomingMessage, url: routing.RequestTarget): Reply {
  if (ctx.openapiV3 === '404' && url.pathname !== '/openapi/v2') throw statuses.pathNotFound();
  const answer = openapiserving.answer(ctx.core.registry, ctx.version, {
    path: url.pathname,
    query: url.searchParams,
    accept: req.headers.accept,
    ifNoneMatch: req.headers['if-none-match'],
  });
  if (!answer) throw statuses.pathNotFound();
  return { code: answer.code, bytes: answer.body, contentType: answer.contentType, headers: answer.headers };
}

function nonResource(ctx: ServerContext, req: http.IncomingMessage, path: string): Reply {
  const registry = ctx.core.registry;
  const accept = req.headers.accept;
  switch (path) {
    case '/healthz':
    case '/livez':
      return { code: 200, text: 'ok' };
    case '/readyz':
      return ctx.unavailable() ? { code: 500, text: 'not ready' } : { code: 200, text: 'ok' };
    case '/version':
      return { code: 200, body: discovery.versionInfo(ctx.version) };
    case '/api':
    case '/apis': {
      const form = negotiation.negotiate(accept, { allowAggregated: ctx.aggregatedDiscovery });
      if (form === 'discovery-v2' || form === 'discovery-v2beta1') {
        const v = form === 'discovery-v2' ? 'v2' : 'v2beta1';
        return {
          code: 200,
          body: discovery.aggregated(registry, path === '/api', v),
          contentType: v === 'v2' ? negotiation.AGGREGATED_V2 : negotiation.AGGREGATED_V2BETA1,
        };
      }
      const body = path === '/api' ? discovery.apiVersions(ctx.serverAddress()) : discovery.apiGroupList(registry);
      return { code: 200, body, form: form === 'yaml' ? 'yaml' : 'json' };
    }
    default:
      break;
  }
  const segments = path.split('/').filter(Boolean);
  if (segments[0] === 'api' && segments.length === 2) {
    const body = discovery.apiResourceList(registry, '', segments[1]!);
    if (body) return { code: 200, body };
  }
  if (segments[0] === 'apis' && segments.length === 2) {
    const body = discovery.apiGroup(registry, segments[1]!);
    if (body) return { code: 200, body };
  }
  if (segments[0] === 'apis' && segments.length === 3) {
    const body = discovery.apiResourceList(registry, segments[1]!, segments[2]!);
    if (body) return { code: 200, body };
  }
  throw statuses.pathNotFound();
}

/** A request body: its bytes, and their text when there are any. */
interface Body {
  raw: Buffer;
  text: string | undefined;
}

/** The object of a create or update body: JSON, YAML, or protobuf for built-in kinds (D-WIRE-16, D-WIRE-25). */
/** The kind a subresource's body is (`serviceaccounts/token` takes an authentication.k8s.io/v1 TokenRequest). */
function subresourceTarget(type: resources.ResourceType, sub: string | undefined): protobuf.Target {
  const info = sub === undefined ? undefined : type.subresourceInfo?.[sub];
  if (!info) return type;
  return { builtin: type.builtin, group: info.group ?? type.group, version: info.version ?? type.version, kind: info.kind };
}

async function decodeObjectBody(body: Body, contentType: string | undefined, type: resources.ResourceType): Promise<unknown> {
  if (body.raw.length && negotiation.bodyType(contentType) === 'protobuf') return protobuf.decodeObject(body.raw, type);
  return decodeBody(body.text, contentType, 'object', type);
}

function decodeBody(bodyText: string | undefined, contentType: string | undefined, mode: 'object' | 'patch', type?: resources.ResourceType): unknown {
  if (bodyText === undefined || bodyText.trim() === '') {
    throw statuses.badRequest('the body of the request was empty');
  }
  // A create/update body without Content-Type is decoded as JSON, the first supported type, as
  // upstream does (kubectl 1.20's `create configmap|namespace|secret` sends no Content-Type).
  const bodyType = mode === 'object' && !contentType?.trim() ? 'json' : negotiation.bodyType(contentType);
  if (mode === 'object' && bodyType !== 'json' && bodyType !== 'yaml') {
    throw statuses.unsupportedMediaType(type ? protobuf.acceptedTypes(type) : ['application/json', 'application/yaml']);
  }
  try {
    if (bodyType === 'yaml' || bodyType === 'apply-patch') return YAML.parse(bodyText);
    return JSON.parse(bodyText);
  } catch (err) {
    throw statuses.badRequest(`couldn't get version/kind; json parse error: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function resourceRequest(
  ctx: ServerContext,
  req: http.IncomingMessage,
  method: string,
  url: routing.RequestTarget,
  info: routing.ResourceRequestInfo,
  type: resources.ResourceType,
  user: core.UserInfo,
  requestBody: Body,
  warnings: string[],
): Promise<Reply> {
  const c = ctx.core;
  const bodyText = requestBody.text;
  const q = url.searchParams;
  const isRead = method === 'GET' || method === 'HEAD';
  const form = negotiation.negotiate(req.headers.accept, { allowTable: isRead && info.subresource === undefined });
  const out = form === 'yaml' ? 'yaml' : 'json';
  // Answered kinds (reviews) have a collection to POST to and nothing else (D-AUTH-11).
  if (type.answer && info.name !== undefined) throw statuses.pathNotFound();
  const special = subresources.handlerFor(type, info.subresource, method);
  if (special) {
    // kubectl >= 1.32 posts some actions (a TokenRequest of `kubectl create token`) in protobuf.
    const protobufBody =
      requestBody.raw.length && negotiation.bodyType(req.headers['content-type']) === 'protobuf'
        ? await protobuf.decodeObject(requestBody.raw, subresourceTarget(type, info.subresource))
        : undefined;
    const reply = await special({
      core: c,
      type,
      namespace: info.namespace,
      name: info.name,
      subpath: info.subpath,
      query: q,
      user,
      fieldManager: q.get('fieldManager') ?? managerFromAgent(req.headers['user-agent']),
      dryRun: q.getAll('dryRun').includes('All'),
      warnings,
      table: form === 'table',
      tokens: ctx.tokens,
      body: () => protobufBody ?? decodeBody(bodyText, req.headers['content-type'], 'object'),
    });
    if (reply.body === undefined) return { code: reply.code, text: reply.text ?? '', contentType: reply.contentType };
    return { code: reply.code, body: reply.body, form: out, warnings };
  }
  if (isRead) {
    options.checkResourceVersion(q.get('resourceVersion') ?? undefined);
    if (info.name !== undefined) {
      // Conversion webhooks are called before the object is shown (D-CONV-403).
      const stored = await converting.oneInVersion(type, await reading.get(c, type, info.namespace, info.name, q.get('resourceVersion') ?? undefined));
      if (info.subresource === 'scale') return { code: 200, body: scale.scaleOf(type, stored), form: out, warnings };
      if (form === 'table') {
        return {
          code: 200,
          body: tables.tableOf(type, [stored], new Date(c.clock.now()), { resourceVersion: objects.rvOf(stored) }, includeObject(q)),
          warnings,
        };
      }
      return { code: 200, body: objects.toExternal(type, stored), form: out, warnings };
    }
    if (!type.verbs.includes('list')) throw statuses.methodNotAllowed();
    const o = options.decodeListOptions(q);
    const filter = filters.buildFilter(type, info.namespace, o.labelSelector, o.fieldSelector);
    const listed = await reading.list(c, type, filter, o);
    // One conversion webhook call for every item stored in another version (D-CONV-404).
    const result = converting.callsOut(type) ? { ...listed, items: [...(await converting.inVersion(type, listed.items))] } : listed;
    if (form === 'table') {
      const meta: JsonObject = { resourceVersion: result.resourceVersion };
      if (result.continueToken) meta['continue'] = result.continueToken;
      if (result.remainingItemCount !== undefined) meta['remainingItemCount'] = result.remainingItemCount;
      return { code: 200, body: tables.tableOf(type, result.items, new Date(c.clock.now()), meta, o.includeObject), warnings };
    }
    return { code: 200, body: reading.listBody(type, result), form: out, warnings };
  }

  switch (method) {
    case 'POST': {
      if (info.name !== undefined || !type.verbs.includes('create')) throw statuses.methodNotAllowed();
      const wo = options.decodeWriteOptions(q, 'CreateOptions');
      const wr = writeRequestFor(req, info, type, user, warnings, wo, undefined);
      const decoded = await decodeObjectBody(requestBody, req.headers['content-type'], type);
      checkDuplicateKeys(bodyText, req.headers['content-type'], wo, warnings);
      if (type.answer) {
        // Decoded against the kind's schema (D-BI-20); the review's own validation is its answer's.
        const review = writes.normalizeBody(wr, writes.checkIdentity(wr, writes.requireObject(decoded), {}));
        return { code: 201, body: type.answer(wr, review), form: out, warnings };
      }
      const result = await creating.create(c, wr, decoded);
      return { code: 201, body: objects.toExternal(type, await converting.oneInVersion(type, result.object)), form: out, warnings };
    }
    case 'PUT': {
      if (info.name === undefined || !type.verbs.includes('update')) throw statuses.methodNotAllowed();
      const wo = options.decodeWriteOptions(q, 'UpdateOptions');
      const body = await decodeObjectBody(requestBody, req.headers['content-type'], type);
      checkDuplicateKeys(bodyText, req.headers['content-type'], wo, warnings);
      if (info.subresource === 'scale') return scaleWrite(ctx, writeRequestFor(req, info, type, user, warnings, wo, info.name), { kind: 'replace', body }, out);
      const result = await updating.update(c, writeRequestFor(req, info, type, user, warnings, wo, info.name), {
        kind: 'replace',
        body: writes.requireObject(body),
      });
      return { code: result.code, body: objects.toExternal(type, await converting.oneInVersion(type, result.object)), form: out, warnings };
    }
    case 'PATCH': {
      if (info.name === undefined || !type.verbs.includes('patch')) throw statuses.methodNotAllowed();
      const patchType = negotiation.bodyType(req.headers['content-type']);
      if (patchType !== 'merge-patch' && patchType !== 'json-patch' && patchType !== 'strategic-merge-patch' && patchType !== 'apply-patch') {
        throw statuses.unsupportedMediaType(updating.acceptedPatchTypes(type));
      }
      if (patchType === 'strategic-merge-patch' && !type.strategy.smpSchema) throw statuses.unsupportedMediaType(updating.acceptedPatchTypes(type));
      const isApply = patchType === 'apply-patch';
      const wo = options.decodeWriteOptions(q, 'PatchOptions', isApply);
      const patch = decodeBody(bodyText, req.headers['content-type'], 'patch');
      checkDuplicateKeys(bodyText, req.headers['content-type'], wo, warnings);
      const wr = writeRequestFor(req, info, type, user, warnings, wo, info.name);
      if (info.subresource === 'scale') {
        if (patchType !== 'merge-patch' && patchType !== 'json-patch')
          throw statuses.unsupportedMediaType(['application/json-patch+json', 'application/merge-patch+json']);
        return scaleWrite(ctx, wr, { kind: patchType === 'merge-patch' ? 'merge' : 'json', patch }, out);
      }
      let mutation: updating.Mutation;
      if (isApply) {
        const config = writes.requireObject(patch);
        if (!config['apiVersion'] || !config['kind'] || !objects.nameOf(config)) {
          throw statuses.badRequest('apply configuration must specify apiVersion, kind and metadata.name');
        }
        mutation = { kind: 'apply', config, force: wo.force ?? false };
      } else {
        mutation = { kind: 'patch', type: patchType, patch };
      }
      const result = await updating.update(c, wr, mutation);
      return { code: result.code, body: objects.toExternal(type, await converting.oneInVersion(type, result.object)), form: out, warnings };
    }
    case 'DELETE': {
      const body =
        requestBody.raw.length && negotiation.bodyType(req.headers['content-type']) === 'protobuf'
          ? await protobuf.decodeDeleteOptions(requestBody.raw)
          : bodyText?.trim()
            ? decodeBody(bodyText, 'application/json', 'patch')
            : undefined;
      const dopts = options.decodeDeleteOptions(q, body);
      const wr: core.WriteRequest = {
        type,
        namespace: info.namespace,
        name: info.name,
        subresource: undefined,
        user,
        dryRun: dopts.dryRun,
        fieldManager: managerFromAgent(req.headers['user-agent']),
        fieldValidation: 'Warn',
        warnings,
      };
      if (info.subresource !== undefined) throw statuses.methodNotAllowed();
      if (info.name !== undefined) {
        if (!type.verbs.includes('delete')) throw statuses.methodNotAllowed();
        const result = await deleting.remove(c, wr, dopts);
        const shown = { ...result, object: await converting.oneInVersion(type, result.object) };
        return { code: 200, body: deleting.deleteResponse(wr, shown), form: out, warnings };
      }
      if (!type.verbs.includes('deletecollection')) throw statuses.methodNotAllowed();
      const lo = options.decodeListOptions(q);
      const filter = filters.buildFilter(type, info.namespace, lo.labelSelector, lo.fieldSelector);
      const matched = c.store
        .entries(type.storage, filter.prefix)
        .filter((e) => filter.matches(e.object))
        .map((e) => e.object);
      await deleting.removeCollection(c, wr, matched, dopts);
      const items = [...(await converting.inVersion(type, matched))];
      return { code: 200, body: reading.listBody(type, { items, resourceVersion: String(c.store.revision) }), form: out, warnings };
    }
    default:
      throw statuses.methodNotAllowed();
  }
}

/** The write request of a create/update/patch of the resource `info` addresses. */
function writeRequestFor(
  req: http.IncomingMessage,
  info: routing.ResourceRequestInfo,
  type: resources.ResourceType,
  user: core.UserInfo,
  warnings: string[],
  wo: options.WriteOptions,
  name: string | undefined,
): core.WriteRequest {
  return {
    type,
    namespace: info.namespace,
    name,
    subresource: info.subresource,
    user,
    dryRun: wo.dryRun,
    fieldManager: wo.fieldManager ?? managerFromAgent(req.headers['user-agent']),
    fieldValidation: wo.fieldValidation,
    warnings,
  };
}

/**
 * Duplicate keys in a JSON body are handled like unknown fields (D-CRD-9): a Warning per field,
 * or 400 with `fieldValidation=Strict`. YAML bodies are refused by the YAML parser instead.
 */
function checkDuplicateKeys(bodyText: string | undefined, contentType: string | undefined, wo: options.WriteOptions, warnings: string[]): void {
  if (bodyText === undefined || wo.fieldValidation === 'Ignore') return;
  const type = contentType?.trim() ? negotiation.bodyType(contentType) : 'json';
  if (type !== 'json' && type !== 'merge-patch' && type !== 'strategic-merge-patch') return;
  const duplicates = duplicatekeys.findDuplicateKeys(bodyText);
  if (!duplicates.length) return;
  if (wo.fieldValidation === 'Strict') {
    throw statuses.badRequest(`strict decoding error: ${duplicates.map((f) => `duplicate field "${f}"`).join(', ')}`);
  }
  for (const f of duplicates) warnings.push(`duplicate field "${f}"`);
}

function includeObject(q: URLSearchParams): 'None' | 'Metadata' | 'Object' {
  const v = q.get('includeObject');
  return v === 'None' || v === 'Object' ? v : 'Metadata';
}

/** The manager of a non-apply write without `fieldManager`: the User-Agent up to its first `/`. */
function managerFromAgent(agent: string | undefined): string {
  const m = agent?.split('/')[0]?.trim();
  return m || 'unknown';
}

async function scaleWrite(ctx: ServerContext, wr: core.WriteRequest, input: Parameters<typeof scale.desiredScale>[1], out: 'json' | 'yaml'): Promise<Reply> {
  const c = ctx.core;
  const type = wr.type;
  const stored = await converting.oneInVersion(type, await reading.get(c, type, wr.namespace, wr.name!, undefined));
  const current = scale.scaleOf(type, stored);
  const desired = scale.desiredScale(current, input);
  if (desired.resourceVersion && desired.resourceVersion !== objects.rvOf(stored)) {
    throw statuses.conflict(writes.identOf(type), wr.name!);
  }
  const path = type.scale!.specReplicasPath;
  const result = await updating.update(
    c,
    { ...wr, subresource: undefined },
    {
      kind: 'patch',
      type: 'merge-patch',
      patch: objects.setPath({ metadata: { resourceVersion: objects.rvOf(stored) } }, path, desired.replicas),
    },
  );
  return { code: 200, body: scale.scaleOf(type, await converting.oneInVersion(type, result.object)), form: out, warnings: wr.warnings };
}

async function serveWatch(
  ctx: ServerContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  url: routing.RequestTarget,
  info: routing.ResourceRequestInfo,
  type: resources.ResourceType,
  user: core.UserInfo,
  fault: Extract<faultrules.FaultAction, { watch: unknown }>['watch'] | undefined,
  record: (code: number) => void,
): Promise<void> {
  if (!type.verbs.includes('watch')) throw statuses.methodNotAllowed();
  if (info.subresource !== undefined) throw statuses.methodNotAllowed();
  const o = options.decodeListOptions(url.searchParams, { forceWatch: true });
  const filter = filters.buildFilter(type, info.namespace, o.labelSelector, o.fieldSelector, info.name);
  const form = negotiation.negotiate(req.headers.accept, { allowTable: true });
  const timeoutMs = o.timeoutSeconds !== undefined && o.timeoutSeconds > 0 ? o.timeoutSeconds * 1000 : ctx.watchDefaultTimeoutMs();
  // Initial events "not older than" a future N wait for it, else 504 before the stream starts (D-WATCH-8).
  if (o.sendInitialEvents && o.resourceVersion !== undefined && o.resourceVersion !== '0') {
    await reading.awaitRevision(ctx.core, Number(o.resourceVersion));
  }
  const start = (): void => {
    responses.baseHeaders(res);
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Transfer-Encoding', 'chunked');
    res.writeHead(200);
    res.flushHeaders();
    record(200);
    // D-FAULT-5: `error`/`errorAfterEvents` end with an ERROR event (immediately when no count or
    // time is given); otherwise the stream ends cleanly or is aborted after the events or time.
    const isError = fault !== undefined && (fault.errorAfterEvents !== undefined || fault.error !== undefined);
    const endAfter = fault?.errorAfterEvents ?? fault?.endAfterEvents ?? (isError && fault?.endAfterMs === undefined ? 0 : undefined);
    let endedByFault = false;
    const endByFault = (): void => {
      if (endedByFault || res.writableEnded || res.destroyed) return;
      endedByFault = true;
      if (isError) {
        const code = fault?.error ?? 410;
        const line = JSON.stringify({
          type: 'ERROR',
          object: {
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Failure',
            message:
              code === 410
                ? `too old resource version: ${o.resourceVersion ?? 0} (${ctx.core.store.compaction})`
                : 'Internal error occurred: injected watch fault',
            reason: code === 410 ? 'Expired' : 'InternalError',
            code,
          },
        });
        res.end(`${line}\n`);
        return;
      }
      if (fault?.mode !== 'abort') {
        res.end();
        return;
      }
      // Break the connection only once the events already written reached the socket (writes of
      // this tick are still corked).
      setImmediate(() => {
        const socket = res.socket;
        if (socket && socket.writableLength > 0) socket.once('drain', () => res.destroy());
        else res.destroy();
      });
    };
    const id = ctx.hub.open(
      res,
      {
        type,
        filter,
        resourceVersion: o.resourceVersion,
        sendInitialEvents: o.sendInitialEvents,
        bookmarks: o.allowWatchBookmarks,
        timeoutMs,
        table: form === 'table',
        includeObject: o.includeObject,
        user: user.username,
        userAgent: req.headers['user-agent'] ?? '',
      },
      {
        stall: fault?.stall,
        endAfterEvents: endAfter,
        onEnd: fault ? endByFault : undefined,
      },
    );
    if (fault?.endAfterMs !== undefined) {
      const cancel = ctx.core.clock.schedule(fault.endAfterMs, () => ctx.hub.closeById(id, 'fault'));
      res.on('close', cancel);
    }
  };
  start();
}
