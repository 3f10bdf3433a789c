/**
 * Conformance checklist C-147 (devcluster reference section 13, "Built-ins"), generated from the
 * catalog: `@kubernetes/client-node` 1.x's typed API of every built-in kind against a TLS
 * devcluster configured from its kubeconfig only. For each catalog entry, the API class of its
 * group/version (`CoreV1Api`, `BatchV1Api`, `RbacAuthorizationV1Api`, …) comes from
 * `makeApiClient`, and its `create…`/`read…`/`list…`/`patch…`/`delete…` methods — named from the
 * kind and scope as the library names them (`createNamespacedJob`, `readClusterRole`), called in
 * the object-parameter style of 1.x — are driven by one loop.
 */
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../../devcluster/testing.js';
import { entries, type ResourceEntry } from '../../../../devcluster/upstream/catalog.js';
import { SAMPLE_LABEL, isCreateOnly, offers, sampleName, sampleObject } from '../../../support/builtins/samples.js';
import { NAMESPACE, titleOf } from '../../../support/builtins/urls.js';

type Json = Record<string, any>;
/** A typed API object of the library, seen as its methods (each takes one parameter object). */
type Api = Record<string, (param: Json, options?: k8s.ConfigurationOptions) => Promise<Json>>;

const CATALOG = entries();

/**
 * Catalog entries whose methods the library lacks, with why. Empty for 1.4.0: it has every one.
 * A test checks that each entry listed here really lacks its methods, so the list cannot go stale.
 */
const LIBRARY_LACKS: Readonly<Record<string, string>> = {};

/** `CoreV1Api`, `FlowcontrolApiserverV1Api`, `RbacAuthorizationV1Api`: the library's class name for a group/version. */
function apiClassName(e: ResourceEntry): string {
  const capital = (s: string): string => s[0]!.toUpperCase() + s.slice(1);
  const group = e.group
    ? e.group
        .replace(/\.k8s\.io$/, '')
        .split('.')
        .map(capital)
        .join('')
    : 'Core';
  return `${group}${capital(e.version)}Api`;
}

/** The library's method name of `verb` for `e`: `createNamespacedJob`, `listClusterRole`, `readNamespace`. */
const methodName = (e: ResourceEntry, verb: 'create' | 'read' | 'list' | 'patch' | 'delete' | 'replace'): string =>
  `${verb}${e.namespaced ? 'Namespaced' : ''}${e.kind}`;

/** The methods the catalog's verbs call for. */
function methodsOf(e: ResourceEntry): string[] {
  const verbs = { create: 'create', get: 'read', list: 'list', patch: 'patch', delete: 'delete' } as const;
  return Object.entries(verbs)
    .filter(([verb]) => offers(e, verb))
    .map(([, method]) => methodName(e, method));
}

const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

describe('C-147 @kubernetes/client-node typed APIs against every built-in kind', () => {
  let cluster: DevCluster;
  let kc: k8s.KubeConfig;

  beforeAll(async () => {
    cluster = await DevCluster.start();
    kc = new k8s.KubeConfig();
    kc.loadFromString(cluster.kubeconfig());
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  /** The typed API of `e`'s group/version from `makeApiClient`, or undefined when the library has no such class. */
  const apiOf = (e: ResourceEntry): Api | undefined => {
    const ApiClass = (k8s as unknown as Record<string, (new (config: k8s.Configuration) => unknown) | undefined>)[apiClassName(e)];
    return ApiClass ? (kc.makeApiClient(ApiClass as unknown as k8s.ApiConstructor<k8s.ApiType>) as unknown as Api) : undefined;
  };

  it('the library lacks exactly the methods listed as lacking', () => {
    const lacking = CATALOG.filter((e) => {
      const api = apiOf(e);
      return !api || methodsOf(e).some((m) => typeof api[m] !== 'function');
    }).map(titleOf);
    expect(lacking).toEqual(Object.keys(LIBRARY_LACKS));
  });

  describe.each(CATALOG.filter((e) => !(titleOf(e) in LIBRARY_LACKS)).map((e) => [`${titleOf(e)} (${apiClassName(e)})`, e] as const))('%s', (_, e) => {
    const sample = sampleObject(e, sampleName(e, 'client'), { [SAMPLE_LABEL]: 'client' });
    const name = sample['metadata']['name'] as string;
    const scope = e.namespaced ? { namespace: NAMESPACE } : {};

    if (isCreateOnly(e)) {
      it(`D-BI-1 ${methodName(e, 'create')} answers the created ${e.kind}`, async () => {
        // A Binding binds an existing Pod, the one it names.
        let body = sample;
        if (e.resource === 'bindings') {
          const pods = CATALOG.find((x) => x.group === '' && x.resource === 'pods')!;
          await apiOf(pods)![methodName(pods, 'create')]!({ ...scope, body: sampleObject(pods, `${name}-bound`) });
          body = { ...sample, metadata: { ...sample['metadata'], name: `${name}-bound` } };
        }
        const answer = await apiOf(e)![methodName(e, 'create')]!({ ...scope, body });
        expect(answer).toBeDefined();
        // A review is answered with its decision in `status` (a Binding with a Success Status).
        if (e.kind.endsWith('Review')) expect(answer['status']).toBeDefined();
      });
      return;
    }

    if (!offers(e, 'create')) {
      it(`D-VERB-8 ${methodName(e, 'list')} answers a ${e.kind}List`, async () => {
        const list = await apiOf(e)![methodName(e, 'list')]!({ ...scope });
        expect(list['items']).toEqual(expect.any(Array));
      });
      return;
    }

    it(`D-VERB-9 D-VERB-2 D-VERB-3 D-VERB-20 D-VERB-25 ${methodsOf(e).join(', ')}`, async () => {
      const api = apiOf(e)!;
      const created = await api[methodName(e, 'create')]!({ ...scope, body: sample });
      expect(created['metadata']['name']).toBe(name);
      expect(created['metadata']['creationTimestamp']).toBeInstanceOf(Date);

      const read = await api[methodName(e, 'read')]!({ ...scope, name });
      expect(read['metadata']['uid']).toBe(created['metadata']['uid']);

      const list = await api[methodName(e, 'list')]!({ ...scope, labelSelector: `${SAMPLE_LABEL}=client` });
      expect((list['items'] as Json[]).map((i) => i['metadata']['name'])).toEqual([name]);

      const patched = await api[methodName(e, 'patch')]!({ ...scope, name, body: { metadata: { labels: { patched: 'yes' } } } }, mergePatch);
      expect(patched['metadata']['labels']).toMatchObject({ [SAMPLE_LABEL]: 'client', patched: 'yes' });

      const deleted = await api[methodName(e, 'delete')]!({ ...scope, name });
      expect(deleted).toBeDefined();
      await cluster.settle();
      const gone = await api[methodName(e, 'read')]!({ ...scope, name }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(gone).toBeInstanceOf(k8s.ApiException);
      expect((gone as k8s.ApiException<unknown>).code).toBe(404);
    });
  });
});
