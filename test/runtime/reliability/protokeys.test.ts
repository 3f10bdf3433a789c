/**
 * A key named `__proto__` is a key like any other in JSON, and the API server stores it as such.
 * The runtime must keep it as an own key wherever it copies a body (the diff-base, the handlers'
 * read-only views, patches), compare it as one, and never let it change an object's prototype
 * (R-ESSENCE-6).
 */
import { describe, expect, it } from 'vitest';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

const LHC = 'kopf.zalando.org/last-handled-configuration';

type Json = Record<string, unknown>;

/** What a handler saw, as a test can compare it: own keys and prototypes made visible. */
function describeValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(describeValue);
  if (typeof value !== 'object' || value === null) return value;
  const proto = Object.getPrototypeOf(value);
  const out: Json = { '<plain>': proto === Object.prototype || proto === null };
  for (const key of Object.keys(value))
    Object.defineProperty(out, key, { value: describeValue((value as Json)[key]), enumerable: true, writable: true, configurable: true });
  return out;
}

describe('a spec with a __proto__ key', () => {
  const suite = fx.clusterPerTest();
  const { logs } = suite;

  it('R-ESSENCE-6 is stored in the diff-base exactly, seen in the handlers read-only views exactly, and its changes are diffs', async () => {
    await suite.cluster.load(fx.ODDITIES_CRD);
    const registry = new OperatorRegistry();
    const seen: Json[] = [];
    on.create('oddities', { registry }, function create_fn({ spec, body }) {
      seen.push({ spec: describeValue(spec), bodySpec: describeValue(body['spec']) });
    });
    on.update('oddities', { registry }, function update_fn({ spec, old, new: now, diff }) {
      seen.push({ spec: describeValue(spec), old: describeValue((old as Json)['spec']), new: describeValue((now as Json)['spec']), diff: describeValue(diff) });
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry, waitForWatch: 'oddities' });
    const created = JSON.parse(
      '{"apiVersion":"kopf.dev/v1","kind":"Oddity","metadata":{"name":"proto","namespace":"default"},"spec":{"__proto__":{"polluted":"yes"},"size":1}}',
    );
    await suite.cluster.store.create(created);
    const stored = (): Json => suite.cluster.store.get(fx.ODD, 'proto', 'default') as Json;
    const diffBase = (): string | undefined => (stored()['metadata'] as { annotations?: Record<string, string> }).annotations?.[LHC];
    await fx.eventually(() => diffBase() !== undefined, 'the diff-base');
    await fx.atRest(logs, 'proto');
    expect(diffBase()).toBe('{"spec":{"__proto__":{"polluted":"yes"},"size":1}}\n');

    await suite.cluster.store.patch(fx.ODD, 'proto', JSON.parse('{"spec":{"__proto__":{"polluted":"no"}}}'), { namespace: 'default' });
    await fx.eventually(() => seen.length === 2, 'the update');
    await fx.atRest(logs, 'proto');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(diffBase()).toBe('{"spec":{"__proto__":{"polluted":"no"},"size":1}}\n');
    const spec = (polluted: string): unknown => describeValue(JSON.parse(`{"__proto__":{"polluted":"${polluted}"},"size":1}`));
    expect(seen[0]).toStrictEqual({ spec: spec('yes'), bodySpec: spec('yes') });
    expect(seen[1]).toStrictEqual({
      spec: spec('no'),
      old: spec('yes'),
      new: spec('no'),
      diff: describeValue([['change', ['spec', '__proto__', 'polluted'], 'yes', 'no']]),
    });
    expect(({} as Json)['polluted']).toBeUndefined(); // nothing leaked into Object.prototype
  });
});
