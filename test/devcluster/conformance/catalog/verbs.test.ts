/**
 * Conformance checklist C-141 and C-142 (devcluster reference section 13, "Built-ins"), generated
 * from the catalog: every built-in kind answers the verbs discovery lists for it, over real HTTP,
 * with a minimal valid object of the kind (`test/support/builtins/samples.ts`) — create, get,
 * list with a label selector, update (PUT), merge and strategic merge patch, delete and
 * deletecollection; a watch that sees ADDED, MODIFIED and DELETED as they happen; and for the
 * kinds that can only be created (reviews, bindings), the answer upstream gives to a create.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entries, type ResourceEntry } from '../../../../devcluster/upstream/catalog.js';
import { SAMPLE_LABEL, isCreateOnly, isObjectKind, offers, sampleName, sampleObject } from '../../../support/builtins/samples.js';
import { NAMESPACE, collectionUrl, objectUrl, titleOf } from '../../../support/builtins/urls.js';
import { openWatch } from '../../../support/watchstream.js';
import { startHarness, type Harness, type HttpResult, type Json } from '../harness.js';

const CATALOG = entries();
const by = (title: string): ResourceEntry => CATALOG.find((e) => titleOf(e) === title)!;

/** `?labelSelector=…` for the samples labelled `conformance=<value>`. */
const selecting = (value: string): string => `labelSelector=${encodeURIComponent(`${SAMPLE_LABEL}=${value}`)}`;

function expectOk(r: HttpResult, code: number, what: string): Json {
  expect(r.status, `${what}: ${r.text}`).toBe(code);
  return r.json;
}

describe('C-141 C-142 every built-in kind answers its verbs', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ widgets: false });
  });
  afterAll(async () => {
    await h?.stop();
  });

  describe.each(CATALOG.filter(isObjectKind).map((e) => [titleOf(e), e] as const))('%s', (_, e) => {
    const sample = sampleObject(e, sampleName(e, 'crud'), { [SAMPLE_LABEL]: 'crud' });
    const name = sample['metadata']['name'] as string;
    const url = objectUrl(e, name);

    it('D-VERB-9 create answers 201 with the stored object', async () => {
      const created = expectOk(await h.post(collectionUrl(e), sample), 201, 'create');
      expect(created).toMatchObject({ apiVersion: sample['apiVersion'], kind: e.kind, metadata: { name, labels: { [SAMPLE_LABEL]: 'crud' } } });
      expect(created['metadata']['uid']).toMatch(/^[0-9a-f-]{36}$/);
      expect(created['metadata']['resourceVersion']).toMatch(/^\d+$/);
      if (e.namespaced) expect(created['metadata']['namespace']).toBe(NAMESPACE);
    });

    it('D-VERB-2 get answers the stored object', async () => {
      const read = expectOk(await h.get(url), 200, 'get');
      expect(read).toMatchObject({ apiVersion: sample['apiVersion'], kind: e.kind, metadata: { name } });
    });

    it('D-VERB-3 list with a label selector answers exactly the labelled object', async () => {
      const list = expectOk(await h.get(`${collectionUrl(e)}?${selecting('crud')}`), 200, 'list');
      expect(list['kind']).toBe(`${e.kind}List`);
      expect((list['items'] as Json[]).map((i) => i['metadata']['name'])).toEqual([name]);
      const none = expectOk(await h.get(`${collectionUrl(e)}?${selecting('nothing')}`), 200, 'list');
      expect(none['items']).toEqual([]);
    });

    it('D-VERB-13 D-VERB-16 update (PUT) replaces the object', async () => {
      const read = expectOk(await h.get(url), 200, 'get');
      read['metadata']['labels'] = { ...read['metadata']['labels'], updated: 'yes' };
      const updated = expectOk(await h.put(url, read), 200, 'update');
      expect(updated['metadata']['labels']).toMatchObject({ updated: 'yes' });
      expect(updated['metadata']['resourceVersion']).not.toBe(read['metadata']['resourceVersion']);
    });

    it('D-VERB-20 a merge patch changes the object', async () => {
      const patched = expectOk(await h.patch(url, { metadata: { labels: { merged: 'yes' } } }, 'merge'), 200, 'merge patch');
      expect(patched['metadata']['labels']).toMatchObject({ [SAMPLE_LABEL]: 'crud', updated: 'yes', merged: 'yes' });
    });

    it('D-VERB-21 D-KCTL-3 a strategic merge patch changes the object', async () => {
      const patched = expectOk(
        await h.patch(url, { metadata: { annotations: { strategic: 'yes' }, labels: { merged: null } } }, 'strategic'),
        200,
        'strategic merge patch',
      );
      expect(patched['metadata']['annotations']).toMatchObject({ strategic: 'yes' });
      expect(patched['metadata']['labels']).toMatchObject({ ...sample['metadata']['labels'], updated: 'yes' });
      expect(patched['metadata']['labels']['merged']).toBeUndefined();
    });

    if (offers(e, 'deletecollection')) {
      it('D-VERB-29 deletecollection with a label selector deletes only the matching objects', async () => {
        for (const purpose of ['dc1', 'dc2'])
          expectOk(await h.post(collectionUrl(e), sampleObject(e, sampleName(e, purpose), { [SAMPLE_LABEL]: 'dc' })), 201, 'create');
        const answer = expectOk(await h.del(`${collectionUrl(e)}?${selecting('dc')}`), 200, 'deletecollection');
        expect(answer['kind']).toBe(`${e.kind}List`);
        await h.cluster.settle();
        expect(expectOk(await h.get(`${collectionUrl(e)}?${selecting('dc')}`), 200, 'list')['items']).toEqual([]);
        expectOk(await h.get(url), 200, 'the unlabelled sample');
      });
    }

    it('D-VERB-25 D-VERB-27 delete removes the object', async () => {
      const r = expectOk(await h.del(url), 200, 'delete');
      expect(r['kind'] === 'Status' ? r['details']['name'] : r['metadata']['name']).toBe(name);
      await h.cluster.settle();
      expect((await h.get(url)).status).toBe(404);
    });

    it('D-WATCH-3 D-WATCH-4 a watch from the list sees ADDED, MODIFIED and DELETED as they happen', async () => {
      const watched = sampleObject(e, sampleName(e, 'watch'), { [SAMPLE_LABEL]: 'watch' });
      const watchedName = watched['metadata']['name'] as string;
      const rv = expectOk(await h.get(collectionUrl(e)), 200, 'list')['metadata']['resourceVersion'];
      const query = `watch=true&resourceVersion=${rv}&fieldSelector=${encodeURIComponent(`metadata.name=${watchedName}`)}`;
      const stream = await openWatch(`${h.cluster.url}${collectionUrl(e)}?${query}`);
      try {
        expect(stream.status).toBe(200);
        expectOk(await h.post(collectionUrl(e), watched), 201, 'create');
        const added = await stream.next('ADDED');
        expect(added).toMatchObject({ type: 'ADDED', object: { kind: e.kind, metadata: { name: watchedName } } });
        expectOk(await h.patch(objectUrl(e, watchedName), { metadata: { labels: { watched: 'yes' } } }), 200, 'patch');
        // Controllers may write too (a CRD's conditions): every event before the patch's is MODIFIED as well.
        const changes = await stream.until((event) => event.object['metadata']['labels']?.['watched'] === 'yes', 'the MODIFIED event of the patch');
        expect(changes.map((event) => event.type)).toEqual(changes.map(() => 'MODIFIED'));
        const modified = changes.at(-1)!;
        expect(modified).toMatchObject({ object: { metadata: { name: watchedName, labels: { watched: 'yes' } } } });
        expectOk(await h.del(objectUrl(e, watchedName)), 200, 'delete');
        // Kinds with finalizers (Namespaces, CRDs) are first marked (MODIFIED), then removed.
        const rest = await stream.until((event) => event.type !== 'MODIFIED', 'DELETED');
        expect(rest.at(-1)).toMatchObject({ type: 'DELETED', object: { kind: e.kind, metadata: { name: watchedName } } });
        const revisions = [added, modified, ...rest].map((event) => Number(event.object['metadata']['resourceVersion']));
        expect(revisions).toEqual([...revisions].sort((a, b) => a - b));
      } finally {
        stream.close();
      }
    });
  });

  describe.each(CATALOG.filter((e) => !isObjectKind(e) && !isCreateOnly(e)).map((e) => [titleOf(e), e] as const))('%s (read only)', (_, e) => {
    it('D-VERB-2 D-VERB-8 D-BI-18 it is listed, and a missing object is refused as upstream', async () => {
      expect(e.verbs).toEqual(expect.arrayContaining(['get', 'list']));
      expect(expectOk(await h.get(collectionUrl(e)), 200, 'list')['kind']).toBe(`${e.kind}List`);
      const missing = await h.get(objectUrl(e, 'absent'));
      if (e.resource === 'componentstatuses') {
        // Upstream's component-status registry answers a plain error, which the API serves as 500.
        expect(missing.status).toBe(500);
        expect(missing.json['message']).toBe('Component not found: absent');
        return;
      }
      expect(missing.status).toBe(404);
      expect(missing.json['message']).toBe(`${e.resource}${e.group ? `.${e.group}` : ''} "absent" not found`);
    });
  });
});

/** What upstream answers to a create of each create-only kind, beyond 201 and the kind. */
const CREATE_ANSWERS: Readonly<Record<string, (answer: Json, h: Harness) => Promise<void> | void>> = {
  'authentication.k8s.io/v1 selfsubjectreviews': (answer) => {
    expect(answer['status']['userInfo']['username']).toEqual(expect.any(String));
  },
  'authentication.k8s.io/v1 tokenreviews': async (answer, h) => {
    // The sample's token is not one the cluster issued (`authenticated` is omitted when false).
    expect(answer['status']['authenticated'] ?? false).toBe(false);
    const e = by('authentication.k8s.io/v1 tokenreviews');
    const own = expectOk(await h.post(collectionUrl(e), { ...sampleObject(e, 'own-token'), spec: { token: h.cluster.token } }), 201, 'create');
    expect(own['status']).toMatchObject({ authenticated: true, user: { username: expect.any(String) } });
  },
  'authorization.k8s.io/v1 localsubjectaccessreviews': (answer) => {
    expect(answer['status']['allowed']).toEqual(expect.any(Boolean));
  },
  'authorization.k8s.io/v1 selfsubjectaccessreviews': (answer) => {
    expect(answer['status']['allowed']).toBe(true);
  },
  'authorization.k8s.io/v1 selfsubjectrulesreviews': (answer) => {
    expect(answer['status']).toMatchObject({ resourceRules: expect.any(Array), nonResourceRules: expect.any(Array), incomplete: expect.any(Boolean) });
  },
  'authorization.k8s.io/v1 subjectaccessreviews': (answer) => {
    expect(answer['status']['allowed']).toEqual(expect.any(Boolean));
  },
};

describe('C-141 the create-only kinds answer a create as upstream does', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ widgets: false });
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('every create-only kind of the catalog is one this suite knows the answer of', () => {
    const createOnly = CATALOG.filter(isCreateOnly).map(titleOf);
    expect(createOnly.sort()).toEqual([...Object.keys(CREATE_ANSWERS), 'v1 bindings'].sort());
  });

  it.each(Object.keys(CREATE_ANSWERS))('D-BI-1 %s: create answers 201 with the review decided in its status, and stores nothing', async (title) => {
    const e = by(title);
    const sample = sampleObject(e, sampleName(e, 'review'));
    const r = await h.post(collectionUrl(e), sample);
    const answer = expectOk(r, 201, 'create');
    expect(answer).toMatchObject({ apiVersion: sample['apiVersion'], kind: e.kind });
    // Access and token reviews echo their spec; a rules review answers an empty spec, a self review has none.
    if (e.kind === 'SelfSubjectRulesReview') expect(answer['spec']).toEqual({});
    else if (sample['spec'] !== undefined) expect(answer['spec']).toEqual(sample['spec']);
    expect(answer['metadata']?.['resourceVersion']).toBeUndefined();
    expect(answer['status']).toBeDefined();
    await CREATE_ANSWERS[title]!(answer, h);
  });

  it('D-BI-1 v1 bindings: create answers 201 Success and binds the pod to the target node', async () => {
    const pods = by('v1 pods');
    const pod = sampleObject(pods, 'bound');
    expectOk(await h.post(collectionUrl(pods), pod), 201, 'create pod');
    const binding = sampleObject(by('v1 bindings'), 'bound');
    const answer = expectOk(await h.post(collectionUrl(by('v1 bindings')), binding), 201, 'create binding');
    expect(answer).toMatchObject({ kind: 'Status', status: 'Success', code: 201 });
    expect(expectOk(await h.get(objectUrl(pods, 'bound')), 200, 'get pod')['spec']['nodeName']).toBe(binding['target']['name']);
  });
});
