// Type-level tests of the typed client: the descriptor given first decides the body type of every
// verb's result and the input type of what is written, so wrong fields, server-populated metadata
// and wrong patch values do not compile. `tsc` checks this file in `npm test`; vitest runs it too
// (the client's requests never settle, and the calls that would fail are in a function never invoked).
import { describe, expect, expectTypeOf, it } from 'vitest';
import { builtins, KubeClient, on, OperatorRegistry, Patch, resource } from '../../../runtime/index.js';
import type { ApplyOf, ConfigMap, InputOf, ObjectList, ObjectMeta, Pod, WatchEvent } from '../../../runtime/index.js';

interface Database {
  apiVersion?: 'example.com/v1';
  kind?: 'Database';
  metadata?: ObjectMeta;
  spec: { engine: 'postgres' | 'mysql'; size: number; replicas?: number };
  status?: { phase?: 'Provisioning' | 'Ready' };
}
const Databases = resource<Database>({ group: 'example.com', version: 'v1', plural: 'databases', kind: 'Database', namespaced: true });

// Requests never settle: the type tests only look at what the calls return.
const client = new KubeClient({ request: () => new Promise(() => undefined), watch: () => new Promise(() => undefined) });

describe('the typed client: types', () => {
  it('results are typed by the descriptor', () => {
    expectTypeOf(client.get(builtins.ConfigMaps, 'x', { namespace: 'default' })).toEqualTypeOf<Promise<ConfigMap>>();
    expectTypeOf(client.get(Databases, 'x', { namespace: 'default' })).toEqualTypeOf<Promise<Database>>();
    expectTypeOf(client.list(builtins.Pods)).toEqualTypeOf<Promise<ObjectList<Pod>>>();
    expectTypeOf(client.delete(Databases, 'x', { namespace: 'default' })).toEqualTypeOf<Promise<Database | undefined>>();
    expectTypeOf(client.watch(Databases)).toEqualTypeOf<AsyncGenerator<WatchEvent<Database>, void, undefined>>();
    expectTypeOf(client.iterate(builtins.ConfigMaps)).toEqualTypeOf<AsyncGenerator<ConfigMap, void, undefined>>();
  });

  it('wrong fields, server-populated metadata and wrong patch values do not compile', () => {
    async function calls(): Promise<void> {
      await client.create(Databases, { metadata: { name: 'db', namespace: 'default' }, spec: { engine: 'postgres', size: 1 } });
      // @ts-expect-error: `engine` is 'postgres' | 'mysql'
      await client.create(Databases, { metadata: { name: 'db' }, spec: { engine: 'oracle', size: 1 } });
      // @ts-expect-error: `size` is required in the spec
      await client.create(Databases, { metadata: { name: 'db' }, spec: { engine: 'mysql' } });
      // @ts-expect-error: the uid is the server's to set
      await client.create(Databases, { metadata: { name: 'db', uid: 'x' }, spec: { engine: 'mysql', size: 1 } });
      // @ts-expect-error: no such field in a ConfigMap
      await client.create(builtins.ConfigMaps, { metadata: { name: 'cm' }, spek: {} });

      await client.patch(Databases, 'db', { spec: { size: 2, replicas: null } }, { namespace: 'default' });
      // @ts-expect-error: `size` is a number
      await client.patch(Databases, 'db', { spec: { size: 'two' } }, { namespace: 'default' });
      const patch = new Patch<Database>();
      patch.spec.size = 3;
      await client.patch(Databases, 'db', patch, { namespace: 'default' });
      await client.patch(Databases, 'db', [{ op: 'replace', path: '/spec/size', value: 4 }], { namespace: 'default' });
      // @ts-expect-error: no such JSON-Patch operation
      await client.patch(Databases, 'db', [{ op: 'increment', path: '/spec/size' }], { namespace: 'default' });

      const partial: ApplyOf<InputOf<Database>> = { metadata: { name: 'db', namespace: 'default' }, spec: { replicas: 2 } };
      await client.apply(Databases, partial, { fieldManager: 'me' });
      // @ts-expect-error: apply needs a field manager
      await client.apply(Databases, partial, {});
      // @ts-expect-error: apply addresses the object by metadata.name
      await client.apply(Databases, { spec: { replicas: 2 } }, { fieldManager: 'me' });

      await client.delete(builtins.Pods, 'p', { namespace: 'default', propagationPolicy: 'Foreground', preconditions: { uid: 'u' } });
      // @ts-expect-error: not a propagation policy
      await client.delete(builtins.Pods, 'p', { namespace: 'default', propagationPolicy: 'Later' });
    }
    expect(typeof calls).toBe('function');
  });

  it('handlers get the client as `client`', () => {
    const registry = new OperatorRegistry();
    on.create(Databases, { registry }, async function create_fn({ client: given, name }) {
      expectTypeOf(given).toEqualTypeOf<KubeClient>();
      const child = await given.create(builtins.ConfigMaps, { metadata: { name, namespace: 'default' }, data: { a: '1' } });
      expectTypeOf(child).toEqualTypeOf<ConfigMap>();
    });
    on.cleanup({ registry }, function cleanup_fn({ client: given }) {
      expectTypeOf(given).toEqualTypeOf<KubeClient>();
    });
    expect(registry.activityHandlers('cleanup')).toHaveLength(1);
  });
});
