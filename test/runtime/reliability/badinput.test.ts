/**
 * Odd objects and odd handlers (R-KWARGS-1, R-STORAGE-6/7, R-ERRORS-3/5/8, A-37): objects without
 * `spec`, with a `status` that is not an object, with huge annotations; handler ids too long for
 * annotation keys; handlers throwing values that are not errors, and handlers that never resolve.
 * All are handled as the runtime reference says, with the documented log lines, and no other object suffers.
 */
import { blake2b } from '@noble/hashes/blake2.js';
import { describe, expect, it } from 'vitest';
import * as diffbase from '../../../runtime/cogs/configs/diffbase.js';
import * as progress from '../../../runtime/cogs/configs/progress.js';
import { TemporaryError } from '../../../runtime/core/actions/errors.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as clocks from '../../../runtime/cogs/aio/clocks.js';
import * as fx from '../../support/operators.js';

const LHC = 'kopf.zalando.org/last-handled-configuration';

/** H(x) of R-STORAGE-6, computed independently: BLAKE2b-32, Base64 with `-`/`.`, stripped. */
function hashSuffix(text: string): string {
  const digest = Buffer.from(blake2b(new TextEncoder().encode(text), { dkLen: 4 })).toString('base64');
  return `-${digest.replace(/\+/g, '-').replace(/\//g, '.')}`.replace(/[=\-.]+$/, '');
}

/** The V1 and V2 annotation keys of a record key under a prefix (R-STORAGE-6). */
function keysOf(prefix: string, key: string): { v1: string; v2: string } {
  const safe = key.replace(/\//g, '.').replace(/[<>]/g, '_');
  const v2 = key.length > 63 ? `${prefix}/${safe.slice(0, 63 - hashSuffix(key).length)}${hashSuffix(key)}` : `${prefix}/${safe}`;
  const room = 63 - prefix.length - 1;
  const v1 = safe.length <= room ? `${prefix}/${safe}` : `${prefix}/${safe.slice(0, room - hashSuffix(safe).length)}${hashSuffix(safe)}`;
  return { v1, v2 };
}

type Annotations = Record<string, string | null>;
const annotationsIn = (body: unknown): Annotations => (body as { metadata?: { annotations?: Annotations } }).metadata?.annotations ?? {};

describe('odd input', () => {
  const suite = fx.clusterPerTest();
  const { logs } = suite;

  it('R-KWARGS-1 objects without spec and with a non-object status are handled: spec/status are empty, results replace the status', async () => {
    await suite.cluster.load(fx.ODDITIES_CRD);
    const registry = new OperatorRegistry();
    const seen: Record<string, unknown> = {};
    on.create('oddities', { registry }, function create_fn({ name, spec, status, body }) {
      seen[name] = { spec, status, bodySpec: body['spec'], bodyStatus: body['status'] };
      return { message: 'ok' };
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry, waitForWatch: 'oddities' });
    await suite.cluster.store.create({ apiVersion: 'kopf.dev/v1', kind: 'Oddity', metadata: { name: 'no-spec', namespace: 'default' } });
    await suite.cluster.store.create({
      apiVersion: 'kopf.dev/v1',
      kind: 'Oddity',
      metadata: { name: 'text-status', namespace: 'default' },
      spec: { a: 1 },
      status: 'text',
    });
    await suite.cluster.store.create({
      apiVersion: 'kopf.dev/v1',
      kind: 'Oddity',
      metadata: { name: 'list-spec', namespace: 'default' },
      spec: ['x'],
      status: [1, 2],
    });
    const stored = (name: string): Record<string, unknown> => suite.cluster.store.get(fx.ODD, name, 'default') as Record<string, unknown>;
    const handled = (name: string): boolean => annotationsIn(stored(name))[LHC] !== undefined;
    await fx.eventually(() => handled('no-spec') && handled('text-status') && handled('list-spec'), 'all three handled');
    for (const name of ['no-spec', 'text-status', 'list-spec']) await fx.atRest(logs, name);
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(seen).toEqual({
      'no-spec': { spec: {}, status: {}, bodySpec: undefined, bodyStatus: undefined },
      'text-status': { spec: { a: 1 }, status: {}, bodySpec: { a: 1 }, bodyStatus: 'text' },
      'list-spec': { spec: {}, status: {}, bodySpec: ['x'], bodyStatus: [1, 2] },
    });
    expect(logs.grep("Handler 'create_fn' succeeded.")).toHaveLength(3);
    expect(logs.grep('Throttling')).toEqual([]);
    expect(logs.lines(fx.ERROR)).toEqual([]);
    expect(stored('text-status')['status']).toEqual({ create_fn: { message: 'ok' } });
    expect(stored('no-spec')['status']).toEqual({ create_fn: { message: 'ok' } });
    expect(JSON.parse(annotationsIn(stored('no-spec'))[LHC]!)).not.toHaveProperty('spec');
    expect(JSON.parse(annotationsIn(stored('list-spec'))[LHC]!)).toMatchObject({ spec: ['x'] });
  });

  it('R-WATCH-2 R-STORAGE-16 objects with huge annotations are handled; a diff-base that cannot fit as it is is stored with the value as a digest, other objects go on', async () => {
    const registry = new OperatorRegistry();
    const created: string[] = [];
    on.create('kopfexamples', { registry }, function create_fn({ name }: { name: string }) {
      created.push(name);
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    const big = 'b'.repeat(100 * 1024);
    const huge = 'h'.repeat(200 * 1024); // fits alone; twice (with the diff-base) exceeds 256 KiB
    await suite.cluster.store.create(fx.kopfExample('kex-big', { metadata: { annotations: { big } } }));
    await suite.cluster.store.create(fx.kopfExample('kex-huge', { metadata: { annotations: { huge } } }));
    await suite.cluster.store.create(fx.kopfExample('kex-small'));
    for (const name of ['kex-big', 'kex-huge', 'kex-small']) {
      await fx.eventually(() => fx.annotationsOf(suite.cluster, name)[LHC] !== undefined, name);
      await fx.atRest(logs, name);
    }
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(fx.tally(created)).toEqual({ 'kex-big': 1, 'kex-huge': 1, 'kex-small': 1 });
    expect(JSON.parse(fx.annotationsOf(suite.cluster, 'kex-big')[LHC]!).metadata.annotations.big).toBe(big);
    expect(JSON.parse(fx.annotationsOf(suite.cluster, 'kex-huge')[LHC]!).metadata.annotations.huge).toMatch(/^kopf-gen\/digest:204802:sha256:[0-9a-f]{64}$/);
    expect(logs.grep('Throttling')).toEqual([]);
    expect(logs.lines(fx.WARNING)).toHaveLength(1);
    expect(logs.lines(fx.WARNING)[0]).toMatch(/^\[default\/kex-huge\] The operator's state does not fit this object as it is\./);
  });

  it('R-STORAGE-6 R-STORAGE-7 A-37 long handler ids: records go to both V2 and V1 (hashed) keys while retrying, both are purged at the end', async () => {
    const long = `create_${'x'.repeat(293)}`;
    const ids = ['a'.repeat(50), 'create_fn/spec.items.very-long-sub-handler-identifier-for-testing', long];
    expect(long).toHaveLength(300);
    const registry = new OperatorRegistry();
    const invoked: string[] = [];
    for (const id of ids) {
      on.create('kopfexamples', { registry, id }, function handler({ retry }: { retry: number }) {
        invoked.push(id);
        if (retry === 0) throw new TemporaryError('Not yet.', { delay: 0 });
      });
    }
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => fx.annotationsOf(suite.cluster, 'kopf-example-1')[LHC] !== undefined, 'the end of the creation');
    await fx.atRest(logs, 'kopf-example-1');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(fx.tally(invoked)).toEqual(Object.fromEntries(ids.map((id) => [id, 2])));
    expect(logs.grep('Creation is processed: 3 succeeded; 0 failed.')).toHaveLength(1);
    // The test vectors of R-STORAGE-6 for the first two ids.
    expect(keysOf('kopf.zalando.org', ids[0]!)).toEqual({ v1: `kopf.zalando.org/${'a'.repeat(39)}-koaVtw`, v2: `kopf.zalando.org/${'a'.repeat(50)}` });
    expect(keysOf('kopf.zalando.org', ids[1]!)).toEqual({
      v1: 'kopf.zalando.org/create_fn.spec.items.very-long-sub-hand-zlF-7g',
      v2: 'kopf.zalando.org/create_fn.spec.items.very-long-sub-handler-identifier-fo-1Zgo2w',
    });
    const bodies = fx.patchBodies(suite.cluster, 'kopf-example-1').map(annotationsIn);
    for (const id of ids) {
      const { v1, v2 } = keysOf('kopf.zalando.org', id);
      expect(v1).not.toBe(v2);
      expect(v1.split('/')[1]!.length).toBeLessThanOrEqual(63);
      expect(v2.split('/')[1]!.length).toBeLessThanOrEqual(63);
      const writes = bodies.filter((a) => typeof a[v2] === 'string');
      expect(writes.length).toBeGreaterThan(0);
      for (const a of writes) expect(a[v1]).toBe(a[v2]);
      const failed = writes.map((a) => JSON.parse(a[v2]!) as Record<string, unknown>).find((r) => r['retries'] === 1);
      expect(failed).toMatchObject({ purpose: 'create', retries: 1, success: false, failure: false, message: 'Not yet.' });
      const last = bodies.filter((a) => v2 in a).at(-1)!;
      expect([last[v1], last[v2]]).toEqual([null, null]);
      expect(fx.annotationsOf(suite.cluster, 'kopf-example-1')).not.toHaveProperty(v1);
      expect(fx.annotationsOf(suite.cluster, 'kopf-example-1')).not.toHaveProperty(v2);
    }
  });

  it('R-STORAGE-7 R-STORAGE-11 A-37 with a custom prefix, the ownership marker is written once and the prefix stays out of the essence', async () => {
    const prefix = 'my-op.example.com';
    const id = 'a'.repeat(50);
    const registry = new OperatorRegistry();
    const invoked: number[] = [];
    on.create('kopfexamples', { registry, id }, function handler({ retry }: { retry: number }) {
      invoked.push(retry);
      if (retry === 0) throw new TemporaryError('Not yet.', { delay: 0 });
    });
    const settings = fx.fastSettings((s) => {
      s.persistence.progressStorage = new progress.SmartProgressStorage({ prefix });
      s.persistence.diffbaseStorage = new diffbase.AnnotationsDiffBaseStorage({ prefix });
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry, settings });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(
      () => fx.annotationsOf(suite.cluster, 'kopf-example-1')[`${prefix}/last-handled-configuration`] !== undefined,
      'the end of the creation',
    );
    await fx.atRest(logs, 'kopf-example-1');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(invoked).toEqual([0, 1]);
    const { v1, v2 } = keysOf(prefix, id);
    expect(v2).toBe(`${prefix}/${id}`);
    expect(v1).toMatch(new RegExp(`^${prefix.replace(/\./g, '\\.')}/a{38,44}-[\\w.-]+$`));
    const bodies = fx.patchBodies(suite.cluster, 'kopf-example-1').map(annotationsIn);
    const writes = bodies.filter((a) => typeof a[v2] === 'string');
    expect(writes.length).toBeGreaterThan(0);
    for (const a of writes) expect(a[v1]).toBe(a[v2]);
    expect(bodies.filter((a) => a[`${prefix}/kopf-managed`] === 'yes')).toHaveLength(1);
    const annotations = fx.annotationsOf(suite.cluster, 'kopf-example-1');
    expect(annotations[`${prefix}/kopf-managed`]).toBe('yes');
    expect(annotations).not.toHaveProperty(v1);
    expect(annotations).not.toHaveProperty(v2);
    const essence = JSON.parse(annotations[`${prefix}/last-handled-configuration`]!) as { metadata: { annotations: Record<string, string> } };
    expect(essence.metadata.annotations).toEqual({ someannotation: 'somevalue' });
    expect(Object.keys(annotations).filter((k) => k.startsWith('kopf.zalando.org/'))).toEqual([]);
  });

  it("R-ERRORS-3 handlers throwing non-Error values ('a string', 42, undefined, {}, null) are retried with the documented log lines", async () => {
    const thrown: Record<string, unknown> = { 'kex-string': 'a string', 'kex-number': 42, 'kex-undefined': undefined, 'kex-object': {}, 'kex-null': null };
    const expected: Record<string, string> = {
      'kex-string': 'a string',
      'kex-number': '42',
      'kex-undefined': 'undefined',
      'kex-object': 'Object',
      'kex-null': 'null',
    };
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    on.create('kopfexamples', { registry }, function create_fn({ name, retry }: { name: string; retry: number }) {
      calls.push(`${name}#${retry}`);
      if (retry === 0) throw thrown[name];
      return { ok: retry };
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    for (const name of Object.keys(thrown)) await suite.cluster.store.create(fx.kopfExample(name));
    await fx.eventually(() => logs.grep("Handler 'create_fn' succeeded.").length === 5, 'all five succeeded');
    for (const name of Object.keys(thrown)) await fx.atRest(logs, name);
    await op.stop();

    expect(op.error).toBeUndefined();
    expect([...calls].sort()).toEqual(
      Object.keys(thrown)
        .flatMap((name) => [`${name}#0`, `${name}#1`])
        .sort(),
    );
    const failures = logs.records.filter((r) => r.message.startsWith("Handler 'create_fn' failed"));
    expect(failures.map((r) => r.line).sort()).toEqual(
      Object.keys(thrown)
        .map((name) => `[default/${name}] Handler 'create_fn' failed with an exception and will try again in 0.2 seconds: ${expected[name]}`)
        .sort(),
    );
    for (const failure of failures) {
      expect(failure.level).toBe(fx.ERROR);
      expect(failure.error).toBeInstanceOf(Error); // a stack trace follows the line
    }
    for (const name of Object.keys(thrown)) {
      expect((suite.cluster.store.get(fx.KEX, name, 'default') as { status: unknown }).status).toEqual({ create_fn: { ok: 1 } });
    }
    expect(logs.grep('Throttling')).toEqual([]);
    expect(logs.grep('unrecoverable')).toEqual([]);
  });

  it('R-ERRORS-5 R-ERRORS-8 a handler that never resolves is not interrupted by its timeout, others go on; on stop it is cancelled, after a restart it times out', async () => {
    const registry = new OperatorRegistry();
    const created: string[] = [];
    const hanging: AbortSignal[] = [];
    on.create('kopfexamples', { registry }, function create_fn({ name }: { name: string }) {
      created.push(name);
    });
    on.create('kopfexamples', { registry, labels: { hang: 'yes' }, timeout: 1 }, function hang_fn({ signal }: { signal: AbortSignal }) {
      hanging.push(signal);
      return new Promise<never>(() => undefined);
    });
    // The operators run on one virtual clock, so that "beyond the timeout" is a step of virtual time
    // and the restarted operator counts from the same persisted start.
    const clock = new clocks.VirtualClock({ start: Date.now() });
    const op = await fx.startOperator({ cluster: suite.cluster, registry, clock });
    await suite.cluster.store.create(fx.kopfExample('kex-hang', { metadata: { labels: { hang: 'yes' } } }));
    await suite.cluster.store.create(fx.kopfExample('kex-1'));
    await fx.eventually(() => hanging.length === 1 && created.length === 2, 'the hanging handler');
    // Newer events of the stuck object queue up behind the running handler.
    await suite.cluster.store.patch(fx.KEX, 'kex-hang', { metadata: { labels: { more: 'one' } } }, { namespace: 'default' });
    await suite.cluster.store.patch(fx.KEX, 'kex-hang', { spec: { field: 'two' } }, { namespace: 'default' });
    await clock.advance(1500); // beyond the timeout of 1 s
    await suite.cluster.store.create(fx.kopfExample('kex-2'));
    await fx.eventually(() => fx.annotationsOf(suite.cluster, 'kex-2')[LHC] !== undefined, 'another object meanwhile');

    expect(hanging).toHaveLength(1);
    expect(hanging[0]!.aborted).toBe(false);
    expect(logs.grep('timed out')).toEqual([]);
    expect(fx.tally(created)).toEqual({ 'kex-hang': 1, 'kex-1': 1, 'kex-2': 1 });

    const uid = (suite.cluster.store.get(fx.KEX, 'kex-hang', 'default') as { metadata: { uid: string } }).metadata.uid;
    await op.stop();
    expect(op.error).toBeUndefined();
    expect(hanging[0]!.aborted).toBe(true);
    expect(logs.grep('is cancelled. Will escalate.', fx.WARNING)).toEqual(["[default/kex-hang] Handler 'hang_fn' is cancelled. Will escalate."]);
    expect(logs.grep('Unprocessed streams left for', fx.WARNING)).toEqual([`Unprocessed streams left for ['${uid}'].`]);
    // The queued events are abandoned, not processed with a cancelled context.
    expect(logs.grep('[default/kex-hang] Handler')).toEqual([
      "[default/kex-hang] Handler 'create_fn' is invoked.",
      "[default/kex-hang] Handler 'create_fn' succeeded.",
      "[default/kex-hang] Handler 'hang_fn' is invoked.",
      "[default/kex-hang] Handler 'hang_fn' is cancelled. Will escalate.",
    ]);

    // The timeout counts from the persisted start: after a restart, the handler fails without a call.
    logs.clear();
    const second = await fx.startOperator({ cluster: suite.cluster, registry, clock });
    await fx.eventually(() => logs.grep('[default/kex-hang] Creation is processed:').length === 1, 'the timed-out handler to fail');
    await second.stop();
    expect(hanging).toHaveLength(1);
    const timedOut = logs.grep("Handler 'hang_fn' has timed out after", fx.ERROR);
    expect(timedOut).toHaveLength(1);
    // Python's timedelta format: whole seconds without a fraction (as on virtual time), else microseconds.
    expect(timedOut[0]).toMatch(/^\[default\/kex-hang\] Handler 'hang_fn' has timed out after 0:00:0\d(\.\d{6})?\.$/);
    expect(logs.grep('[default/kex-hang] Creation is processed:')).toEqual(['[default/kex-hang] Creation is processed: 1 succeeded; 1 failed.']);
    expect(fx.tally(created)).toEqual({ 'kex-hang': 1, 'kex-1': 1, 'kex-2': 1 });
  });
});
