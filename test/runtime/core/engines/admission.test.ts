/**
 * The admission engine's request path, simulated (R-ADMISSION-1/4/5/6, R-KWARGS-6, A-22): the
 * `WebhookFn` that servers call, given reviews as a server would pass them (parsed JSON, raw text,
 * bytes), with handlers registered through `on.validate`/`on.mutate`. No server and no cluster: the
 * served resources and the memos are given directly.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as clocks from '../../../../runtime/cogs/aio/clocks.js';
import * as settingsModule from '../../../../runtime/cogs/configs/settings.js';
import * as bodies from '../../../../runtime/cogs/structs/bodies.js';
import * as references from '../../../../runtime/cogs/structs/references.js';
import type * as webhooks from '../../../../runtime/cogs/structs/webhooks.js';
import * as errors from '../../../../runtime/core/actions/errors.js';
import * as admission from '../../../../runtime/core/engines/admission.js';
import { ABSENT, PRESENT } from '../../../../runtime/core/intents/filters.js';
import * as memos from '../../../../runtime/core/intents/memos.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import { OperatorMetrics } from '../../../../runtime/core/reactor/reporting.js';
import { on } from '../../../../runtime/on.js';
import { Captured } from '../reactor/lifecycle.js';
import * as structErrors from '../../../../runtime/cogs/structs/errors.js';

type Json = Record<string, unknown>;

const KEX = references.makeResource({
  group: 'kopf.dev',
  version: 'v1',
  plural: 'kopfexamples',
  kind: 'KopfExample',
  namespaced: true,
  subresources: ['status'],
});
const KEX_V2 = references.makeResource({ group: 'kopf.dev', version: 'v2', plural: 'kopfexamples', kind: 'KopfExample' });
const PODS = references.makeResource({ group: '', version: 'v1', plural: 'pods', kind: 'Pod' });

/** The reference object (spec section 8.0) as it arrives in a creation request. */
function example(extra: Json = {}): Json {
  return {
    apiVersion: 'kopf.dev/v1',
    kind: 'KopfExample',
    metadata: { name: 'kopf-example-1', namespace: 'default', uid: 'uid-1', labels: { somelabel: 'somevalue' }, annotations: { someannotation: 'somevalue' } },
    spec: { duration: '1m', field: 'value', items: ['item1', 'item2'] },
    ...extra,
  };
}

/** An AdmissionReview as the API server sends it (D-ADM-6); `request` overrides its fields. */
function review(request: Json = {}, top: Json = {}): Json {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    ...top,
    request: {
      uid: 'U',
      kind: { group: 'kopf.dev', version: 'v1', kind: 'KopfExample' },
      resource: { group: 'kopf.dev', version: 'v1', resource: 'kopfexamples' },
      name: 'kopf-example-1',
      namespace: 'default',
      operation: 'CREATE',
      userInfo: { username: 'admin', groups: ['system:masters'] },
      object: example(),
      oldObject: null,
      dryRun: false,
      ...request,
    },
  };
}

/** Object memories as the reactor keeps them: one memo per object key, copied from the operator memo. */
class Memories implements admission.MemoSource {
  readonly byKey = new Map<string, object>();
  constructor(readonly operatorMemo: object = new memos.Memo({ shared: 'operator' })) {}
  recallMemo(body: bodies.RawBody, options: { readonly ephemeral: boolean }): object {
    if (options.ephemeral) return memos.copyMemo(this.operatorMemo);
    const key = bodies.objectKey(body);
    if (!this.byKey.has(key)) this.byKey.set(key, memos.copyMemo(this.operatorMemo));
    return this.byKey.get(key)!;
  }
}

/** The request function, typed for admission reviews (the tests here send no ConversionReviews). */
function admitting(fn: webhooks.WebhookFn): (body: unknown, context?: webhooks.WebhookRequestContext) => Promise<webhooks.AdmissionReviewResponse> {
  return fn as (body: unknown, context?: webhooks.WebhookRequestContext) => Promise<webhooks.AdmissionReviewResponse>;
}

function engine(registry: OperatorRegistry, options: { resources?: references.Resource[]; memories?: Memories; indices?: Json } = {}) {
  return admitting(
    admission.webhookFn({
      registry,
      settings: new settingsModule.OperatorSettings({ warn: () => undefined }),
      clock: clocks.realClock,
      resources: { webhooks: options.resources ?? [KEX] },
      memos: options.memories ?? new Memories(),
      signal: new AbortController().signal,
      ...(options.indices ? { indices: options.indices } : {}),
    }),
  );
}

async function refusal(promise: Promise<unknown>): Promise<structErrors.WebhookRequestError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(structErrors.WebhookRequestError);
  return error as structErrors.WebhookRequestError;
}

function decodedPatch(response: webhooks.AdmissionResponse): unknown {
  return response.patch === undefined ? undefined : JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));
}

let log: Captured;
beforeEach(() => {
  log = new Captured();
});
afterEach(() => {
  log.restore();
});

/** The handlers of Kopf's 17-admission example, as in A-21/A-22 (authhook's checks aside). */
function exampleHandlers(registry: OperatorRegistry, calls: string[] = []): void {
  on.validate('kopfexamples', { registry }, function authhook({ headers, warnings }) {
    calls.push('authhook');
    warnings.push(`Accessing as user-agent: ${headers['user-agent'] ?? '(unidentified)'}`);
  });
  on.validate('kopfexamples', { registry }, function validate1({ spec, dryRun }) {
    calls.push('validate1');
    if (!dryRun && spec['field'] === 'wrong') throw new errors.AdmissionError("Meh! I don't like it. Change the field.");
  });
  on.validate('kopfexamples', { registry, field: 'spec.field', value: 'not-allowed' }, function validate2() {
    calls.push('validate2');
    throw new errors.AdmissionError("I'm too lazy anyway. Go away!", 555);
  });
  on.validate('kopfexamples', { registry, subresource: '*' }, function validate_subresources({ subresource }) {
    calls.push(`validate_subresources:${subresource}`);
  });
  on.mutate('kopfexamples', { registry, labels: { somelabel: 'somevalue' } }, function mutate1({ patch }) {
    calls.push('mutate1');
    patch.spec['injected'] = 123;
  });
}

describe('A-22 admission edge cases', () => {
  it('A-22 a review for an unknown resource gets HTTP 404', async () => {
    const registry = new OperatorRegistry();
    exampleHandlers(registry);
    const error = await refusal(engine(registry)(review({ resource: { group: '', version: 'v1', resource: 'pods' } })));
    expect(error).toMatchObject({ status: 404, problem: 'unknown-resource', message: 'The resource pods.v1 has no admission handlers.' });
    expect(log.lines).toContain('Admission request is refused with HTTP 404: The resource pods.v1 has no admission handlers.');
  });

  it('A-22 missing userInfo gets HTTP 400', async () => {
    const registry = new OperatorRegistry();
    exampleHandlers(registry);
    const error = await refusal(engine(registry)(review({ userInfo: undefined })));
    expect(error).toMatchObject({ status: 400, problem: 'malformed', message: 'The admission request has no userInfo.' });
  });

  it('A-22 malformed JSON gets HTTP 400 (as text or bytes)', async () => {
    const registry = new OperatorRegistry();
    exampleHandlers(registry);
    for (const payload of ['{"apiVersion": "admission.k8s.io/v1", "kind":', Buffer.from('not json at all')]) {
      const error = await refusal(engine(registry)(payload));
      expect(error).toMatchObject({ status: 400, message: 'The admission request is not valid JSON.' });
    }
  });

  it('A-22 a DELETE review (only oldObject) sent to /mutate1 is allowed, without a patch: mutating handlers skip deletions', async () => {
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    exampleHandlers(registry, calls);
    const reply = await engine(registry)(review({ operation: 'DELETE', object: null, oldObject: example({ spec: {} }) }), { webhook: 'mutate1' });
    expect(reply).toEqual({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'U', allowed: true } });
    expect(calls).toEqual([]);
  });

  it('A-22 a status-subresource review without a webhook id triggers only validate_subresources among the validating handlers', async () => {
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    exampleHandlers(registry, calls);
    await engine(registry)(review({ operation: 'UPDATE', subResource: 'status', oldObject: example() }), { type: 'validating' });
    expect(calls).toEqual(['validate_subresources:status']);
  });

  it('A-22 a handler throwing a plain error gives allowed: false, code 500 and its message', async () => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function plain() {
      throw new Error('Something broke.');
    });
    const reply = await engine(registry)(review());
    expect(reply.response).toEqual({ uid: 'U', allowed: false, status: { message: 'Something broke.', code: 500 } });
    expect(log.matching("Handler 'plain' failed with an exception and will stop now: Something broke.")).toHaveLength(1);
  });

  it("A-22 two failing handlers (a plain error, then an AdmissionError) give the AdmissionError's message", async () => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function plain() {
      throw new Error('Plain.');
    });
    on.validate('kopfexamples', { registry }, function admitting() {
      throw new errors.AdmissionError('Admission says no.', 403);
    });
    const reply = await engine(registry)(review());
    expect(reply.response).toEqual({ uid: 'U', allowed: false, status: { message: 'Admission says no.', code: 403 } });
  });
});

describe('R-ADMISSION-1 registration', () => {
  it('R-ADMISSION-1 on.validate and on.mutate register webhook handlers with their options', () => {
    const registry = new OperatorRegistry();
    const fn = function check(): void {};
    expect(
      on.validate(
        'kopfexamples',
        { registry, operations: ['CREATE', 'UPDATE'], subresource: 'status', persistent: true, sideEffects: true, ignoreFailures: true },
        fn,
      ),
    ).toBe(fn);
    on.mutate('kopfexamples', { registry, operation: 'DELETE', id: 'defaults' }, fn);
    expect(registry.handlers).toMatchObject([
      {
        kind: 'webhook',
        type: 'validating',
        id: 'check',
        operations: ['CREATE', 'UPDATE'],
        subresource: 'status',
        persistent: true,
        sideEffects: true,
        ignoreFailures: true,
      },
      {
        kind: 'webhook',
        type: 'mutating',
        id: 'defaults',
        operations: ['DELETE'],
        subresource: null,
        persistent: false,
        sideEffects: false,
        ignoreFailures: false,
      },
    ]);
  });

  it.each(['errors', 'timeout', 'retries', 'backoff'])('R-ADMISSION-1 the option %s is not accepted', (option) => {
    const registry = new OperatorRegistry();
    expect(() => on.validate('kopfexamples', { registry, [option]: 1 } as never, function check() {})).toThrow(/Unknown options of on\.validate\(\)/);
    expect(() => on.mutate('kopfexamples', { registry, [option]: 1 } as never, function check() {})).toThrow(/Unknown options of on\.mutate\(\)/);
    expect(registry.handlers).toEqual([]);
  });

  it('R-ADMISSION-1 operations must be a non-empty list of known operations', () => {
    const registry = new OperatorRegistry();
    expect(() => on.validate('kopfexamples', { registry, operations: [] }, function check() {})).toThrow(/non-empty list/);
    expect(() => on.validate('kopfexamples', { registry, operations: ['PATCH'] } as never, function check() {})).toThrow(/non-empty list/);
  });
});

describe('R-ADMISSION-4 request handling', () => {
  it('R-ADMISSION-4 the resource is found among the served ones: several matches get HTTP 409', async () => {
    const registry = new OperatorRegistry();
    exampleHandlers(registry);
    const error = await refusal(engine(registry, { resources: [KEX, KEX, KEX_V2] })(review()));
    expect(error).toMatchObject({ status: 409, problem: 'ambiguous-resource' });
    const other = await refusal(engine(registry, { resources: [KEX_V2, PODS] })(review()));
    expect(other).toMatchObject({ status: 404, message: 'The resource kopfexamples.v1.kopf.dev has no admission handlers.' });
  });

  it.each<[string, unknown, string]>([
    ['a JSON array', [1, 2], 'The admission request is not an AdmissionReview: not a JSON object.'],
    ['another kind', { kind: 'Pod', request: {} }, 'The admission request is not an AdmissionReview: its kind is "Pod".'],
    ['no request', { kind: 'AdmissionReview' }, 'The admission request has no request in its AdmissionReview.'],
    ['no uid', review({ uid: undefined }), 'The admission request has no uid.'],
    ['no resource', review({ resource: { group: 'kopf.dev' } }), 'The admission request has no resource (group, version and resource are required).'],
    ['an unknown operation', review({ operation: 'PATCH' }), 'The admission request has an unknown operation: "PATCH".'],
    ['neither object', review({ object: null, oldObject: null }), 'The admission request has neither an object nor an oldObject.'],
    ['a non-object body', review({ object: 'text' }), "The admission request's object is not an object."],
  ])('R-ADMISSION-4 %s gets HTTP 400 with one line saying what is wrong', async (_, payload, message) => {
    const registry = new OperatorRegistry();
    exampleHandlers(registry);
    const error = await refusal(engine(registry)(payload));
    expect({ status: error.status, message: error.message }).toEqual({ status: 400, message });
    // One line above DEBUG (the DEBUG line is the request's record).
    expect(log.records.filter((record) => record.level > 10).map((record) => record.message)).toEqual([
      `Admission request is refused with HTTP 400: ${message}`,
    ]);
  });

  it('R-ADMISSION-4 the body is the object, or the oldObject when the object is null', async () => {
    const registry = new OperatorRegistry();
    const seen: unknown[] = [];
    on.validate('kopfexamples', { registry }, function look({ body, old, new: now, spec }) {
      seen.push({ field: spec['field'], body: body.metadata?.name, old: old?.spec, now: now?.spec });
    });
    const fn = engine(registry);
    await fn(review({ operation: 'UPDATE', object: example({ spec: { field: 'new' } }), oldObject: example({ spec: { field: 'old' } }) }));
    await fn(review({ operation: 'DELETE', object: null, oldObject: example({ spec: { field: 'gone' } }) }));
    expect(seen).toEqual([
      { field: 'new', body: 'kopf-example-1', old: { field: 'old' }, now: { field: 'new' } },
      { field: 'gone', body: 'kopf-example-1', old: { field: 'gone' }, now: undefined },
    ]);
  });

  it("R-ADMISSION-4 a webhook id from the request path selects only that handler (also a field handler's id)", async () => {
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    exampleHandlers(registry, calls);
    const fn = engine(registry);
    await fn(review(), { webhook: 'validate1' });
    await fn(review({ object: example({ spec: { field: 'not-allowed' } }) }), { webhook: 'validate2/spec.field' });
    expect(calls).toEqual(['validate1', 'validate2']);
  });

  it('R-ADMISSION-4 handlers are selected by type when the server knows it, and all run in registration order otherwise', async () => {
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    exampleHandlers(registry, calls);
    const fn = engine(registry);
    await fn(review(), { type: 'mutating' });
    await fn(review(), { type: 'validating' });
    await fn(review());
    expect(calls).toEqual(['mutate1', 'authhook', 'validate1', 'validate_subresources:null', 'authhook', 'validate1', 'validate_subresources:null', 'mutate1']);
  });

  it('R-ADMISSION-4 subresources: unset matches only the main body, a name only that subresource, * all', async () => {
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    on.validate('kopfexamples', { registry }, function main() {
      calls.push('main');
    });
    on.validate('kopfexamples', { registry, subresource: 'status' }, function status() {
      calls.push('status');
    });
    on.validate('kopfexamples', { registry, subresource: '*' }, function all({ subresource }) {
      calls.push(`all:${subresource}`);
    });
    const fn = engine(registry);
    for (const subResource of [undefined, 'status', 'scale']) {
      await fn(review({ operation: 'UPDATE', subResource, oldObject: example() }));
    }
    expect(calls).toEqual(['main', 'all:null', 'status', 'all:status', 'all:scale']);
  });

  it('R-ADMISSION-4 operations select handlers; mutating handlers see DELETE only when their operations are exactly [DELETE]', async () => {
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    on.validate('kopfexamples', { registry, operations: ['UPDATE'] }, function updates({ operation }) {
      calls.push(`updates:${operation}`);
    });
    on.mutate('kopfexamples', { registry }, function any({ operation }) {
      calls.push(`any:${operation}`);
    });
    on.mutate('kopfexamples', { registry, operations: ['DELETE'] }, function deletions({ operation }) {
      calls.push(`deletions:${operation}`);
    });
    on.mutate('kopfexamples', { registry, operations: ['UPDATE', 'DELETE'] }, function both({ operation }) {
      calls.push(`both:${operation}`);
    });
    const fn = engine(registry);
    await fn(review({ operation: 'CREATE' }));
    await fn(review({ operation: 'UPDATE', oldObject: example() }));
    await fn(review({ operation: 'DELETE', object: null, oldObject: example() }));
    expect(calls).toEqual(['any:CREATE', 'updates:UPDATE', 'any:UPDATE', 'both:UPDATE', 'deletions:DELETE']);
  });

  it("R-ADMISSION-4 R-FILTERS label, annotation, field-value and when filters apply to the request's body; callbacks get the handler's arguments", async () => {
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    on.validate('kopfexamples', { registry, labels: { somelabel: 'somevalue' } }, function labelled() {
      calls.push('labelled');
    });
    on.validate('kopfexamples', { registry, labels: { otherlabel: PRESENT } }, function other() {
      calls.push('other');
    });
    on.validate('kopfexamples', { registry, annotations: { someannotation: ABSENT } }, function unannotated() {
      calls.push('unannotated');
    });
    on.validate('kopfexamples', { registry, field: 'spec.field', value: 'value' }, function valued() {
      calls.push('valued');
    });
    on.validate(
      'kopfexamples',
      { registry, when: ({ operation, dryRun, userInfo }) => operation === 'CREATE' && !dryRun && userInfo.username === 'admin' },
      function when_fn() {
        calls.push('when');
      },
    );
    await engine(registry)(review());
    expect(calls).toEqual(['labelled', 'valued', 'when']);
  });

  it('R-ADMISSION-4 all selected handlers run in one go, each once: arbitrary errors are permanent, no retries', async () => {
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    on.validate('kopfexamples', { registry }, function first() {
      calls.push('first');
      throw new Error('first failed');
    });
    on.validate('kopfexamples', { registry }, function second() {
      calls.push('second');
      throw new errors.TemporaryError('later', { delay: 1 });
    });
    on.validate('kopfexamples', { registry }, function third() {
      calls.push('third');
    });
    const reply = await engine(registry)(review());
    expect(calls).toEqual(['first', 'second', 'third']);
    expect(reply.response).toEqual({ uid: 'U', allowed: false, status: { message: 'later', code: 500 } });
    // One line each (the object's prefix first; the trace of a handler's bug follows in the log only).
    expect(log.lines.filter((line) => / failed /.test(line)).map((line) => line.split('\n')[0])).toEqual([
      "[default/kopf-example-1] Handler 'first' failed with an exception and will stop now: first failed",
      "[default/kopf-example-1] Handler 'second' failed temporarily: later",
    ]);
  });
});

describe('R-KWARGS-6 admission arguments', () => {
  it('R-KWARGS-6 handlers get the resource arguments and dryRun, warnings, userInfo, headers, sslPeer, operation, subresource, old/new and diff', async () => {
    const registry = new OperatorRegistry();
    let args: Json = {};
    on.validate('kopfexamples', { registry, param: 'p' }, function look(kwargs) {
      args = { ...kwargs };
    });
    const old = example({ spec: { field: 'old' } });
    await engine(registry, { indices: { byName: 'the index' } })(review({ operation: 'UPDATE', oldObject: old, dryRun: true }), {
      headers: { 'user-agent': 'kube-apiserver-admission' },
      sslPeer: { subject: [[['commonName', 'apiserver']]] },
    });
    expect(args).toMatchObject({
      resource: KEX,
      name: 'kopf-example-1',
      namespace: 'default',
      uid: 'uid-1',
      param: 'p',
      spec: { field: 'value' },
      meta: { name: 'kopf-example-1' },
      status: {},
      labels: { somelabel: 'somevalue' },
      annotations: { someannotation: 'somevalue' },
      dryRun: true,
      warnings: [],
      userInfo: { username: 'admin' },
      operation: 'UPDATE',
      subresource: null,
      headers: { 'user-agent': 'kube-apiserver-admission' },
      sslPeer: { subject: [[['commonName', 'apiserver']]] },
      old: { spec: { field: 'old' } },
      new: { spec: { field: 'value' } },
      oldValue: { spec: { field: 'old' } },
      newValue: { spec: { field: 'value' } },
      byName: 'the index',
    });
    expect([...(args['diff'] as unknown[])].map((item) => [...(item as unknown[])])).toEqual([
      ['add', ['spec', 'duration'], null, '1m'],
      ['add', ['spec', 'items'], null, ['item1', 'item2']],
      ['change', ['spec', 'field'], 'old', 'value'],
    ]);
    expect(Object.isFrozen(args['body'])).toBe(true);
    expect(args['signal']).toBeInstanceOf(AbortSignal);
  });

  it('R-KWARGS-6 the subresource argument is the request\'s subresource (never "*"); headers and sslPeer default to empty maps', async () => {
    const registry = new OperatorRegistry();
    const seen: unknown[] = [];
    on.validate('kopfexamples', { registry, subresource: '*' }, function look({ subresource, headers, sslPeer }) {
      seen.push({ subresource, headers, sslPeer });
    });
    await engine(registry)(review({ operation: 'UPDATE', subResource: 'status', oldObject: example() }));
    expect(seen).toEqual([{ subresource: 'status', headers: {}, sslPeer: {} }]);
  });

  it('R-KWARGS-6 creations with generateName: the name and namespace come from the request when the body has none', async () => {
    const registry = new OperatorRegistry();
    const seen: unknown[] = [];
    on.validate('kopfexamples', { registry }, function look({ name, namespace, uid }) {
      seen.push({ name, namespace, uid });
    });
    const object = { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { generateName: 'ex-' }, spec: {} };
    await engine(registry)(review({ object, name: undefined, namespace: 'other' }));
    expect(seen).toEqual([{ name: '', namespace: 'other', uid: '' }]);
  });

  it('R-KWARGS-8 the body and its views are read-only: writes go through patch', async () => {
    const registry = new OperatorRegistry();
    const failures: string[] = [];
    on.mutate('kopfexamples', { registry }, function write({ spec, patch }) {
      try {
        (spec as Json)['field'] = 'x';
      } catch (e) {
        failures.push((e as Error).constructor.name);
      }
      patch.spec['field'] = 'patched';
    });
    const reply = await engine(registry)(review());
    expect(failures).toEqual(['TypeError']);
    expect(decodedPatch(reply.response)).toEqual([{ op: 'replace', path: '/spec/field', value: 'patched' }]);
  });
});

describe('R-ADMISSION-5 responses', () => {
  it("R-ADMISSION-5 a rejection is exactly the review of the spec's example", async () => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function meh() {
      throw new errors.AdmissionError('Meh!', 555);
    });
    const reply = await engine(registry)(review());
    expect(JSON.stringify(reply)).toBe(
      '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"U","allowed":false,"status":{"message":"Meh!","code":555}}}',
    );
  });

  it('R-ADMISSION-5 A-21 validate1 rejects a wrong field with code 500 (exact reply); dry runs pass', async () => {
    const registry = new OperatorRegistry();
    exampleHandlers(registry);
    const fn = engine(registry);
    const wrong = review({ object: example({ spec: { field: 'wrong' } }) });
    expect(JSON.stringify(await fn(wrong, { webhook: 'validate1' }))).toBe(
      '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"U","allowed":false,"status":{"message":"Meh! I don\'t like it. Change the field.","code":500}}}',
    );
    const dry = review({ object: example({ spec: { field: 'wrong' } }), dryRun: true });
    expect((await fn(dry, { webhook: 'validate1' })).response).toEqual({ uid: 'U', allowed: true });
  });

  it("R-ADMISSION-5 A-21 mutate1 answers allowed with a Base64 JSON-Patch relative to the request's body", async () => {
    const registry = new OperatorRegistry();
    exampleHandlers(registry);
    const reply = await engine(registry)(review({ object: example({ spec: {} }) }), { webhook: 'mutate1' });
    expect(reply.response).toMatchObject({ uid: 'U', allowed: true, patchType: 'JSONPatch' });
    expect(decodedPatch(reply.response)).toEqual([{ op: 'add', path: '/spec/injected', value: 123 }]);
  });

  it('R-ADMISSION-5 the apiVersion and kind are echoed (default admission.k8s.io/v1); warnings are listed as strings', async () => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function warn({ warnings }) {
      warnings.push('one');
      (warnings as unknown[]).push(2);
    });
    const fn = engine(registry);
    expect(await fn(review({}, { apiVersion: 'admission.k8s.io/v1beta1' }))).toEqual({
      apiVersion: 'admission.k8s.io/v1beta1',
      kind: 'AdmissionReview',
      response: { uid: 'U', allowed: true, warnings: ['one', '2'] },
    });
    const { apiVersion: _, kind: __, ...bare } = review();
    expect(await fn(bare)).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
  });

  it('R-ADMISSION-5 the patches of all handlers are merged; an empty merge gives no patch', async () => {
    const registry = new OperatorRegistry();
    on.mutate('kopfexamples', { registry }, function label({ patch }) {
      patch.metadata.labels['added'] = 'yes';
    });
    on.mutate('kopfexamples', { registry }, function unlabel({ patch }) {
      patch.metadata.labels['somelabel'] = null;
    });
    on.validate('kopfexamples', { registry }, function also({ patch }) {
      patch.spec['validated'] = true;
    });
    const reply = await engine(registry)(review());
    expect(decodedPatch(reply.response)).toEqual([
      { op: 'remove', path: '/metadata/labels/somelabel' },
      { op: 'add', path: '/metadata/labels/added', value: 'yes' },
      { op: 'add', path: '/spec/validated', value: true },
    ]);
    const quiet = new OperatorRegistry();
    on.mutate('kopfexamples', { registry: quiet }, function same({ patch }) {
      patch.spec['field'] = 'value';
    });
    expect((await engine(quiet)(review())).response).toEqual({ uid: 'U', allowed: true });
  });

  it('R-ADMISSION-5 the status comes from the error of the highest priority: AdmissionError, permanent, temporary, arbitrary', async () => {
    const cases: Array<[unknown[], { message: string; code: number }]> = [
      [
        [new Error('arbitrary'), new errors.TemporaryError('temporary'), new errors.PermanentError('permanent'), new errors.AdmissionError('admission', 418)],
        { message: 'admission', code: 418 },
      ],
      [[new Error('arbitrary'), new errors.TemporaryError('temporary'), new errors.PermanentError('permanent')], { message: 'permanent', code: 500 }],
      [[new Error('arbitrary'), new errors.TemporaryError('temporary')], { message: 'temporary', code: 500 }],
      [[new errors.AdmissionError('')], { message: 'AdmissionError', code: 500 }],
    ];
    for (const [thrown, status] of cases) {
      const registry = new OperatorRegistry();
      thrown.forEach((error, i) =>
        on.validate('kopfexamples', { registry, id: `h${i}` }, () => {
          throw error;
        }),
      );
      expect((await engine(registry)(review())).response.status).toEqual(status);
    }
  });

  it.each<[string, unknown, string]>([
    ['a string', 'just text', 'just text'],
    ['an object with a message', { message: 'objective' }, 'objective'],
    ['an empty object', {}, 'Object'],
    ['undefined', undefined, 'undefined'],
    ['a number', 42, '42'],
  ])('R-ADMISSION-5 a handler throwing %s (not an Error) is denied with a message, code 500', async (_, thrown, message) => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function odd() {
      throw thrown;
    });
    const reply = await engine(registry)(review());
    expect(reply.response).toEqual({ uid: 'U', allowed: false, status: { message, code: 500 } });
    expect(log.matching("Handler 'odd' failed with an exception and will stop now:")).toHaveLength(1);
  });
});

describe('R-ADMISSION-6 memos', () => {
  it("R-ADMISSION-6 creations get a throwaway copy of the operator memo; other operations the object's memo", async () => {
    const registry = new OperatorRegistry();
    const seen: unknown[] = [];
    on.validate('kopfexamples', { registry }, function remember({ memo, operation }) {
      seen.push({ operation, shared: memo['shared'], count: memo['count'] });
      memo['count'] = ((memo['count'] as number | undefined) ?? 0) + 1;
    });
    const memories = new Memories();
    const fn = engine(registry, { memories });
    await fn(review({ operation: 'CREATE' }));
    await fn(review({ operation: 'CREATE' }));
    await fn(review({ operation: 'UPDATE', oldObject: example() }));
    await fn(review({ operation: 'DELETE', object: null, oldObject: example() }));
    expect(seen).toEqual([
      { operation: 'CREATE', shared: 'operator', count: undefined },
      { operation: 'CREATE', shared: 'operator', count: undefined },
      { operation: 'UPDATE', shared: 'operator', count: undefined },
      { operation: 'DELETE', shared: 'operator', count: 1 },
    ]);
    expect(memories.byKey.get('uid-1')).toMatchObject({ count: 2 });
    expect(memories.operatorMemo).toEqual(new memos.Memo({ shared: 'operator' }));
  });
});

describe('R-ADMISSION-4 one record per request', () => {
  it('R-ADMISSION-4 R-ADMISSION-5 every request is recorded once with its webhook id, HTTP status, allowed and duration by the operator clock', async () => {
    const clock = new clocks.VirtualClock({ start: 1_000_000 });
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, async function slow({ spec }) {
      await clock.sleep(1500);
      if (spec['field'] === 'wrong') throw new errors.AdmissionError('No.');
    });
    const fn = admitting(
      admission.webhookFn({
        registry,
        settings: new settingsModule.OperatorSettings({ warn: () => undefined }),
        clock,
        resources: { webhooks: [KEX] },
        memos: new Memories(),
        signal: new AbortController().signal,
      }),
    );
    const allowed = fn(review(), { webhook: 'slow' });
    await clock.advance(1500);
    expect((await allowed).response.allowed).toBe(true);
    const denied = fn(review({ object: example({ spec: { field: 'wrong' } }) }));
    await clock.advance(250);
    await clock.advance(1250);
    expect((await denied).response.allowed).toBe(false);
    await refusal(fn(review({ resource: { group: 'x', version: 'v1', resource: 'ys' } }), { webhook: 'slow' }));
    await refusal(fn('{not json'));
    expect(log.lines.filter((line) => line.includes('Admission request for'))).toEqual([
      expect.stringMatching(/Admission request for the webhook "slow" is answered with HTTP 200 \(allowed\) in 1\.500s\.$/),
      expect.stringMatching(/Admission request for all webhooks is answered with HTTP 200 \(denied\) in 1\.500s\.$/),
      expect.stringMatching(/Admission request for the webhook "slow" is answered with HTTP 404 \(refused\) in 0\.000s\.$/),
      expect.stringMatching(/Admission request for all webhooks is answered with HTTP 400 \(refused\) in 0\.000s\.$/),
    ]);
  });

  it('R-ADMISSION-4 with metrics on, every request is in flight until answered, then counted with its status and duration', async () => {
    const clock = new clocks.VirtualClock({ start: 1_000_000 });
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, async function slow() {
      await clock.sleep(2000);
    });
    const reports: string[] = [];
    const fn = admitting(
      admission.webhookFn({
        registry,
        settings: new settingsModule.OperatorSettings({ warn: () => undefined }),
        clock,
        resources: { webhooks: [KEX] },
        memos: new Memories(),
        signal: new AbortController().signal,
        instruments: {
          webhookInFlight: (id, change) => {
            reports.push(`in-flight ${id} ${change}`);
          },
          webhookRequest: (id, code, seconds) => {
            reports.push(`request ${id} ${code} ${seconds}s`);
          },
        },
      }),
    );
    const answered = fn(review(), { webhook: 'slow' });
    await clock.advance(0);
    expect(reports).toEqual(['in-flight slow 1']);
    await clock.advance(2000);
    await answered;
    await refusal(fn('{not json'));
    expect(reports).toEqual(['in-flight slow 1', 'in-flight slow -1', 'request slow 200 2s', 'in-flight  1', 'in-flight  -1', 'request  400 0s']);
  });
});

describe('R-SEC-6 unknown webhook ids', () => {
  it('R-SEC-6 a webhook id no handler has gets HTTP 404: no handler runs, nothing is measured, one WARNING line', async () => {
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    exampleHandlers(registry, calls);
    const reports: string[] = [];
    const fn = admitting(
      admission.webhookFn({
        registry,
        settings: new settingsModule.OperatorSettings({ warn: () => undefined }),
        clock: clocks.realClock,
        resources: { webhooks: [KEX] },
        memos: new Memories(),
        signal: new AbortController().signal,
        instruments: {
          webhookInFlight: (id, change) => reports.push(`in-flight ${id} ${change}`),
          webhookRequest: (id, code) => reports.push(`request ${id} ${code}`),
        },
      }),
    );
    const error = await refusal(fn(review(), { webhook: 'nonexistent' }));
    expect(error).toMatchObject({ status: 404, problem: 'unknown-webhook', message: 'No admission handler has the webhook id "nonexistent".' });
    expect(calls).toEqual([]);
    expect(reports).toEqual([]);
    expect(log.matching('nonexistent')).toEqual(['Admission request is refused with HTTP 404: No admission handler has the webhook id "nonexistent".']);
    // Registered ids (also a field handler's) and no id at all are served as before.
    await fn(review(), { webhook: 'validate1' });
    await fn(review({ object: example({ spec: { field: 'not-allowed' } }) }), { webhook: 'validate2/spec.field' });
    expect(calls).toEqual(['validate1', 'validate2']);
  });

  it('R-SEC-6 20,000 random webhook ids leave the metrics exposition as it was', async () => {
    const registry = new OperatorRegistry();
    exampleHandlers(registry);
    const metrics = new OperatorMetrics({ processMetrics: false });
    const fn = admitting(
      admission.webhookFn({
        registry,
        settings: new settingsModule.OperatorSettings({ warn: () => undefined }),
        clock: clocks.realClock,
        resources: { webhooks: [KEX] },
        memos: new Memories(),
        signal: new AbortController().signal,
        instruments: metrics,
        logger: { debug() {}, info() {}, warning() {}, error() {}, critical() {} },
      }),
    );
    await fn(review(), { webhook: 'validate1' });
    const before = (await metrics.scrape()).body;
    expect(before).toContain('webhook="validate1"');
    let refused = 0;
    for (let i = 0; i < 20_000; i++) {
      const id = `random-${i}-${Math.random().toString(36).slice(2)}`;
      await fn(review(), { webhook: id }).catch((e: unknown) => {
        if ((e as structErrors.WebhookRequestError).status === 404) refused += 1;
      });
    }
    expect(refused).toBe(20_000);
    expect((await metrics.scrape()).body).toBe(before);
  });
});

describe('R-SEC-8 request texts in log lines', () => {
  it('R-SEC-8 a newline in the object name or the webhook id forges no log line: control characters are escaped', async () => {
    const registry = new OperatorRegistry();
    on.validate('kopfexamples', { registry }, function check({ logger }) {
      logger.info('Checked.');
    });
    const fn = engine(registry);
    const forged = "evil\n[default/kopf-example-1] Handler 'check' succeeded.\u001b[2J";
    const object = example({ metadata: { name: forged, namespace: 'default\rX', uid: 'uid-1' } });
    await fn(review({ name: forged, namespace: 'default\rX', object }), { webhook: 'check' });
    await refusal(fn(review(), { webhook: 'no\nsuch' }));
    expect(log.lines.length).toBeGreaterThan(0);
    for (const line of log.lines) expect(line.replace(/\n$/, '')).not.toMatch(/[\u0000-\u001f\u007f]/);
    expect(log.matching('Checked.')).toEqual(["[default\\rX/evil\\n[default/kopf-example-1] Handler 'check' succeeded.\\u001b[2J] Checked."]);
    expect(log.matching('such')).toEqual(['Admission request is refused with HTTP 404: No admission handler has the webhook id "no\\nsuch".']);
  });
});
