import { describe, expect, it } from 'vitest';

import * as diffbase from '../../../../runtime/cogs/configs/diffbase.js';
import * as progress from '../../../../runtime/cogs/configs/progress.js';
import * as timestamps from '../../../../runtime/cogs/configs/timestamps.js';
import * as patches from '../../../../runtime/cogs/structs/patches.js';
import * as errors from '../../../../runtime/core/actions/errors.js';
import * as progression from '../../../../runtime/core/actions/progression.js';
import { T0, handler, makeWorld, referenceBody, runCycle } from './helpers.js';

const TS0 = '2024-05-01T10:00:00.123456+00:00';
const TS1 = '2024-05-01T10:00:00.234567+00:00';

describe('trace 4.3: two create handlers, one per cycle', () => {
  it('R-HANDLERS-5 R-HANDLERS-6 R-STORAGE-4 the two merge-patches are byte-for-byte those of the trace', async () => {
    const world = makeWorld();
    const diffbaseStorage = new diffbase.AnnotationsDiffBaseStorage();
    const calls: string[] = [];
    const handlers = [
      handler('A', async () => {
        calls.push('A');
        await world.clock.advance(111.111);
      }),
      handler('B', () => {
        calls.push('B');
      }),
    ];

    const first = await runCycle(world, handlers);
    expect(calls).toEqual(['A']);
    expect(first.state.done).toBe(false);
    expect(JSON.stringify(first.patch.toMergePatch())).toBe(
      '{"metadata":{"annotations":{' +
        `"kopf.zalando.org/A":"{\\"started\\":\\"${TS0}\\",\\"stopped\\":\\"${TS1}\\",\\"purpose\\":\\"create\\",\\"retries\\":1,\\"success\\":true,\\"failure\\":false}",` +
        `"kopf.zalando.org/B":"{\\"started\\":\\"${TS0}\\",\\"purpose\\":\\"create\\",\\"retries\\":0,\\"success\\":false,\\"failure\\":false}"` +
        '}}}',
    );

    const second = await runCycle(world, handlers, { apply: false });
    expect(calls).toEqual(['A', 'B']);
    expect(second.state.done).toBe(true);
    expect(second.state.counts).toEqual({ success: 2, failure: 0, running: 0 });
    diffbaseStorage.store({ body: world.body, patch: second.patch, essence: diffbaseStorage.build({ body: referenceBody() }) });
    const essence =
      '{"spec":{"duration":"1m","field":"value","items":["item1","item2"]},"metadata":{"labels":{"somelabel":"somevalue"},"annotations":{"someannotation":"somevalue"}}}';
    expect(JSON.stringify(second.patch.toMergePatch())).toBe(
      `{"metadata":{"annotations":{"kopf.zalando.org/A":null,"kopf.zalando.org/B":null,"kopf.zalando.org/last-handled-configuration":${JSON.stringify(`${essence}\n`)}}}}`,
    );
  });

  it('R-STORAGE-8 a record created and finished in the same cycle is never sent', async () => {
    const world = makeWorld();
    const result = await runCycle(world, [handler('create_fn', () => ({ message: 'hello world' }))]);
    expect(result.patch.toMergePatch()).toEqual({ status: { create_fn: { message: 'hello world' } } });
  });
});

describe('handler states', () => {
  it('R-STORAGE-5 records are read with any timestamp form; absent started means now; absent counters mean zero', () => {
    const state = progression.HandlerState.fromStorage(
      {
        started: '2024-05-01T10:00:00Z',
        delayed: '2024-05-01T12:00:10+02:00',
        purpose: 'update',
        retries: 2,
        success: false,
        failure: false,
        message: 'Not ready yet.',
        subrefs: ['p/b', 'p/a'],
      },
      { now: 5 },
    );
    expect(state.started).toBe(Date.UTC(2024, 4, 1, 10, 0, 0));
    expect(state.delayed).toBe(Date.UTC(2024, 4, 1, 10, 0, 10));
    expect(state.retries).toBe(2);
    expect(state.active).toBe(false);
    expect(state.forStorage().subrefs).toEqual(['p/a', 'p/b']);
    const bare = progression.HandlerState.fromStorage({}, { now: 5 });
    expect(bare).toMatchObject({ started: 5, retries: 0, success: false, failure: false, purpose: null, message: null });
    expect(progression.HandlerState.fromStorage({ started: 'garbage' }, { now: 7 }).started).toBe(7);
  });

  it('R-HANDLERS-4 awakened means not finished and not delayed into the future', () => {
    const fresh = progression.HandlerState.fromScratch({ now: 1000, purpose: 'create' });
    expect(fresh.isAwakened(1000)).toBe(true);
    const delayed = fresh.withOutcome({ final: false, delay: 10, error: new errors.TemporaryError('later') }, 1000);
    expect(delayed.delayed).toBe(11_000);
    expect(delayed.isSleeping(10_999)).toBe(true);
    expect(delayed.isAwakened(10_999)).toBe(false);
    expect(delayed.isAwakened(11_000)).toBe(true);
    const done = delayed.withOutcome({ final: true, result: 1 }, 12_000);
    expect(done.isAwakened(12_000)).toBe(false);
    expect(done.finished).toBe(true);
  });

  it('R-ERRORS-1 R-ERRORS-2 outcomes: retries+1, delayed, message; finished as success or failure', () => {
    const fresh = progression.HandlerState.fromScratch({ now: T0, purpose: 'update' });
    const retried = fresh.withOutcome({ final: false, delay: 60, error: new errors.TemporaryError('Not ready yet.') }, T0);
    expect(retried.forStorage()).toEqual({
      started: '2024-05-01T10:00:00.123456+00:00',
      stopped: null,
      delayed: '2024-05-01T10:01:00.123456+00:00',
      purpose: 'update',
      retries: 1,
      success: false,
      failure: false,
      message: 'Not ready yet.',
      subrefs: null,
    });
    const asap = retried.withOutcome({ final: false, delay: null, error: new errors.TemporaryError('again') }, T0 + 1000);
    expect(asap.delayed).toBeNull();
    expect(asap.retries).toBe(2);
    const failed = asap.withOutcome({ final: true, error: new errors.PermanentError('Fail once and for all.') }, T0 + 2000);
    expect(failed).toMatchObject({ success: false, failure: true, retries: 3, stopped: T0 + 2000, message: 'Fail once and for all.' });
    const succeeded = fresh.withOutcome({ final: true, result: 'x', subrefs: ['p/b'] }, T0 + 5).withOutcome({ final: true, subrefs: ['p/a', 'p/b'] }, T0 + 9);
    expect(succeeded).toMatchObject({ success: true, failure: false, stopped: T0 + 5, message: null, subrefs: ['p/a', 'p/b'] });
  });

  it('R-KWARGS-2 runtime is measured from the persisted started', () => {
    const state = progression.HandlerState.fromStorage({ started: timestamps.formatTimestamp(T0) }, { now: 0 });
    expect(state.runtime(T0 + 90_500)).toBeCloseTo(90.5, 6);
  });
});

describe('states of a change', () => {
  const now = T0;
  const stored = (record: progress.ProgressRecord) => progression.HandlerState.fromStorage(record, { now });

  it('R-HANDLERS-6 R-HANDLERS-7 only selected handlers are active: they decide done, counts and delays', () => {
    const state = progression.State.of({
      done: stored({ started: timestamps.formatTimestamp(now), success: true, retries: 1 }),
      sleeping: stored({ started: timestamps.formatTimestamp(now), delayed: timestamps.formatTimestamp(now + 5000), retries: 1 }),
      other: stored({ started: timestamps.formatTimestamp(now), retries: 0 }),
    }).withPurpose('create');
    expect(state.done).toBe(true);
    expect(state.delays(now)).toEqual([]);
    const active = state.withHandlers(['done', 'sleeping', 'fresh'], now);
    expect(active.done).toBe(false);
    expect(active.counts).toEqual({ success: 1, failure: 0, running: 2 });
    expect(active.delays(now)).toEqual([5, 0]);
    expect(active.delay(now + 2000)).toBe(0);
    expect(active.get('fresh')).toMatchObject({ purpose: 'create', retries: 0, started: now, active: true });
    expect(active.get('other').active).toBe(false);
    expect(progression.State.fromScratch().withPurpose('create').done).toBe(true);
  });

  it('extras count the states of a superseded purpose; re-purposing clears them', () => {
    const state = progression.State.of({
      a: stored({ purpose: 'resume', success: true }),
      b: stored({ purpose: 'resume' }),
      c: stored({ purpose: 'update' }),
    }).withPurpose('update');
    expect([...state.extras]).toEqual([['resume', { success: 1, failure: 0, running: 1 }]]);
    expect(state.withPurpose('update', ['a', 'b']).extras.size).toBe(0);
  });

  it('outcomes for unknown handlers are refused', () => {
    expect(() => progression.State.fromScratch().withOutcomes(new Map([['x', { final: true }]]), now)).toThrow(/unknown handlers: x/);
  });

  it('R-STORAGE-9 only records that differ from the loaded ones are written', async () => {
    const storage = new progress.AnnotationsProgressStorage();
    const record = { started: timestamps.formatTimestamp(now), purpose: 'create', retries: 1, success: false, failure: false };
    const body = { metadata: { annotations: { 'kopf.zalando.org/same': JSON.stringify(record), 'kopf.zalando.org/changed': JSON.stringify(record) } } };
    const state = (await progression.State.fromStorage({ body, storage, handlerIds: ['same', 'changed', 'absent'], now }))
      .withPurpose('create')
      .withHandlers(['same', 'changed'], now)
      .withOutcomes(new Map([['changed', { final: true }]]), now);
    const patch = new patches.Patch();
    await state.store({ body, patch, storage });
    expect(Object.keys(patch.toMergePatch()['metadata'] as object)).toEqual(['annotations']);
    expect(Object.keys((patch.toMergePatch()['metadata'] as { annotations: object }).annotations)).toEqual(['kopf.zalando.org/changed']);
  });

  it('R-STORAGE-8 purging covers own handlers, loaded states and their subrefs; foreign records stay', async () => {
    const storage = new progress.AnnotationsProgressStorage();
    const body = {
      metadata: {
        annotations: {
          'kopf.zalando.org/parent': JSON.stringify({ retries: 1, subrefs: ['parent/x', 'parent/y'] }),
          'kopf.zalando.org/parent.x': '{}',
          'kopf.zalando.org/foreign': '{}',
        },
      },
    };
    const state = await progression.State.fromStorage({ body, storage, handlerIds: ['parent', 'gone'], now });
    const patch = new patches.Patch();
    patch.setAt(['metadata', 'annotations', 'kopf.zalando.org/gone'], 'pending');
    await state.purge({ body, patch, storage, handlerIds: ['parent', 'gone'] });
    expect(patch.toMergePatch()).toEqual({
      metadata: {
        annotations: {
          'kopf.zalando.org/parent': null,
          'kopf.zalando.org/parent.x': null,
        },
      },
    });
  });
});

describe('A-37 long handler ids and hashed keys', () => {
  const LONG = 'create_fn/spec.items.very-long-sub-handler-identifier-for-testing';
  const ids = ['a'.repeat(50), LONG];

  async function retryOnce(world: ReturnType<typeof makeWorld>) {
    const failed = new Set<string>();
    const handlers = ids.map((id) =>
      handler(id, () => {
        if (!failed.has(id)) {
          failed.add(id);
          throw new errors.TemporaryError('once', { delay: 1 });
        }
      }),
    );
    const patches: Array<Record<string, unknown>> = [];
    for (let cycle = 0; cycle < 10; cycle += 1) {
      const result = await runCycle(world, handlers);
      patches.push(result.patch.toMergePatch());
      if (result.state.done) break;
      const delay = result.state.delay(world.clock.now()) ?? 0;
      if (delay > 0) await world.clock.advance(delay * 1000);
    }
    return patches;
  }

  const annotationsIn = (patch: Record<string, unknown>): Record<string, unknown> =>
    (patch['metadata'] as { annotations?: Record<string, unknown> } | undefined)?.annotations ?? {};

  it('R-STORAGE-6 R-STORAGE-7 records go to both V2 and V1 keys with identical values, and both are nulled at the end', async () => {
    const world = makeWorld();
    const patches = await retryOnce(world);
    const keys = [
      [`kopf.zalando.org/${'a'.repeat(50)}`, `kopf.zalando.org/${'a'.repeat(39)}-koaVtw`],
      ['kopf.zalando.org/create_fn.spec.items.very-long-sub-handler-identifier-fo-1Zgo2w', 'kopf.zalando.org/create_fn.spec.items.very-long-sub-hand-zlF-7g'],
    ];
    const first = annotationsIn(patches[0]!);
    for (const [v2, v1] of keys) {
      expect(typeof first[v2!]).toBe('string');
      expect(first[v1!]).toBe(first[v2!]);
    }
    const last = annotationsIn(patches.at(-1)!);
    expect(last).toEqual(Object.fromEntries(keys.flat().map((key) => [key, null])));
  });

  it('R-STORAGE-11 a custom prefix writes the kopf-managed marker once and stays out of the essence', async () => {
    const world = makeWorld({ storage: new progress.AnnotationsProgressStorage({ prefix: 'my-op.example.com' }) });
    const patches = await retryOnce(world);
    const markers = patches.filter((patch) => annotationsIn(patch)['my-op.example.com/kopf-managed'] === 'yes');
    expect(markers).toHaveLength(1);
    expect(patches.length).toBeGreaterThan(2);
    const during = patches.slice(0, -1).reduce<Record<string, unknown>>((body, patch) => Object.assign(body, annotationsIn(patch)), {});
    expect(Object.keys(during).some((key) => key.startsWith('my-op.example.com/a'))).toBe(true);
    expect(diffbase.buildEssence({ metadata: { annotations: { ...during, someannotation: 'somevalue' } } })).toEqual({
      metadata: { annotations: { someannotation: 'somevalue' } },
    });
  });
});
