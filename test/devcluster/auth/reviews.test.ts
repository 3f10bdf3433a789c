/**
 * The review APIs over HTTP (D-AUTH-11..15): access, rules, token and self reviews answered from the
 * devcluster's rules and token table, with upstream's shapes, validation and messages, in both
 * authentication modes. Time comes from a virtual clock, so expiry and timestamps are exact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../devcluster/testing.js';
import { VirtualClock } from '../../../testing/index.js';

type Json = Record<string, any>;

const AUTHZ = '/apis/authorization.k8s.io/v1';
const AUTHN = '/apis/authentication.k8s.io/v1';
const START = Date.parse('2025-03-04T05:06:07.890Z');

interface Reply {
  status: number;
  json: Json;
}

async function call(cluster: DevCluster, method: string, path: string, body?: unknown, token?: string, agent = 'review-test/1.0'): Promise<Reply> {
  const headers: Record<string, string> = { 'user-agent': agent };
  if (token) headers['authorization'] = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(cluster.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Json) : {} };
}

const ssar = (spec: Json): Json => ({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec });
const sar = (spec: Json, metadata?: Json): Json => ({
  apiVersion: 'authorization.k8s.io/v1',
  kind: 'SubjectAccessReview',
  ...(metadata ? { metadata } : {}),
  spec,
});
const lsar = (spec: Json, metadata?: Json): Json => ({
  apiVersion: 'authorization.k8s.io/v1',
  kind: 'LocalSubjectAccessReview',
  ...(metadata ? { metadata } : {}),
  spec,
});
const rulesReview = (namespace?: string): Json => ({
  apiVersion: 'authorization.k8s.io/v1',
  kind: 'SelfSubjectRulesReview',
  spec: namespace ? { namespace } : {},
});
const tokenReview = (spec: Json): Json => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec });
const selfReview = (): Json => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });

describe('review APIs with authentication enforced', () => {
  const clock = new VirtualClock({ start: START });
  let cluster: DevCluster;

  beforeAll(async () => {
    cluster = await DevCluster.start({ tls: false, auth: 'enforced', clock });
    cluster.auth.addToken({ token: 'alice-token', username: 'alice', uid: 'alice-uid', groups: ['devs'], extra: { team: ['blue'] } });
    cluster.auth.addToken({ token: 'bob-token', username: 'bob' });
    cluster.auth.addToken({ token: 'old-token', username: 'old', expiresAt: new Date(START - 1000) });
    cluster.auth.addToken({ token: 'later-token', username: 'later', notBefore: new Date(START + 60_000) });
    cluster.auth.addToken({ token: 'checker-token', username: 'checker' });
    cluster.auth.authorizer.setDefaultDecision('deny');
    cluster.auth.authorizer.setRules([
      { effect: 'allow', users: ['checker'] },
      { effect: 'deny', users: ['alice'], verbs: ['delete'], resources: ['jobs'], reason: 'no deleting jobs' },
      { effect: 'allow', users: ['alice'], verbs: ['create', 'delete'], apiGroups: ['batch'], resources: ['jobs'], namespaces: ['default'] },
      { effect: 'allow', groups: ['devs'], verbs: ['get', 'list'], resources: ['configmaps'], names: ['settings'] },
      { effect: 'allow', users: ['alice'], verbs: ['get'], nonResourceURLs: ['/metrics'] },
    ]);
  });
  afterAll(async () => {
    await cluster.stop();
  });

  it('D-AUTH-11 the reviews are in discovery with the verb create only, and without a storage version', async () => {
    const authz = await call(cluster, 'GET', AUTHZ, undefined, 'alice-token');
    expect(authz.json['resources']).toEqual([
      { name: 'localsubjectaccessreviews', singularName: 'localsubjectaccessreview', namespaced: true, kind: 'LocalSubjectAccessReview', verbs: ['create'] },
      { name: 'selfsubjectaccessreviews', singularName: 'selfsubjectaccessreview', namespaced: false, kind: 'SelfSubjectAccessReview', verbs: ['create'] },
      { name: 'selfsubjectrulesreviews', singularName: 'selfsubjectrulesreview', namespaced: false, kind: 'SelfSubjectRulesReview', verbs: ['create'] },
      { name: 'subjectaccessreviews', singularName: 'subjectaccessreview', namespaced: false, kind: 'SubjectAccessReview', verbs: ['create'] },
    ]);
    const authn = await call(cluster, 'GET', AUTHN, undefined, 'alice-token');
    expect(authn.json['resources'].map((r: Json) => [r['name'], r['verbs']])).toEqual([
      ['selfsubjectreviews', ['create']],
      ['tokenreviews', ['create']],
    ]);
    const groups = (await call(cluster, 'GET', '/apis', undefined, 'alice-token')).json['groups'].map((g: Json) => g['name']);
    expect(groups).toEqual(expect.arrayContaining(['authentication.k8s.io', 'authorization.k8s.io']));
  });

  it('D-AUTH-11 reviews are only created: other verbs are refused and nothing is stored', async () => {
    expect((await call(cluster, 'GET', `${AUTHZ}/selfsubjectaccessreviews`, undefined, 'checker-token')).status).toBe(405);
    expect((await call(cluster, 'GET', `${AUTHZ}/selfsubjectaccessreviews/x`, undefined, 'checker-token')).status).toBe(404);
    expect(
      (await call(cluster, 'POST', `${AUTHZ}/selfsubjectaccessreviews`, ssar({ nonResourceAttributes: { path: '/x', verb: 'get' } }), 'checker-token')).status,
    ).toBe(201);
    expect(cluster.store.list({ group: 'authorization.k8s.io', version: 'v1', resource: 'selfsubjectaccessreviews' })).toEqual([]);
  });

  it('D-AUTH-11 a review posted in protobuf, as kubectl posts it, is answered in JSON; a body of another kind is refused (400)', async () => {
    // `kubectl auth can-i create pods`, as kubectl 1.32.5 encodes it (every byte below 0x80).
    const body = Buffer.from(
      'k8s\u0000\n2\n\u0017authorization.k8s.io/v1\u0012\u0017SelfSubjectAccessReview\u0012?\n\u0010\n\u0000\u0012\u0000\u001a\u0000"\u0000*\u00002\u00008\u0000B\u0000' +
        '\u0012!\n\u001f\n\u0007default\u0012\u0006create\u001a\u0000"\u0000*\u0004pods2\u0000:\u0000\u001a\b\b\u0000\u0012\u0000\u001a\u0000 \u0000\u001a\u0000"\u0000',
      'latin1',
    );
    const headers = {
      authorization: 'Bearer alice-token',
      'content-type': 'application/vnd.kubernetes.protobuf',
      accept: 'application/vnd.kubernetes.protobuf,application/json',
    };
    const res = await fetch(`${cluster.url}${AUTHZ}/selfsubjectaccessreviews`, { method: 'POST', headers, body });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/json');
    const review = (await res.json()) as Json;
    expect(review['spec']).toEqual({ resourceAttributes: { namespace: 'default', verb: 'create', resource: 'pods' } });
    expect(review['status']).toEqual({ allowed: false });
    const configmap = await fetch(`${cluster.url}/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      headers: { ...headers, authorization: 'Bearer checker-token' },
      body,
    });
    // Built-in kinds read protobuf (D-WIRE-25); a SelfSubjectAccessReview is not a ConfigMap.
    expect(configmap.status).toBe(400);
  });

  it('D-AUTH-11 authenticated users may ask about themselves unless a rule says otherwise, but not about others', async () => {
    expect(
      (await call(cluster, 'POST', `${AUTHZ}/selfsubjectaccessreviews`, ssar({ resourceAttributes: { verb: 'get', resource: 'pods' } }), 'bob-token')).status,
    ).toBe(201);
    expect((await call(cluster, 'POST', `${AUTHZ}/selfsubjectrulesreviews`, rulesReview('default'), 'bob-token')).status).toBe(201);
    expect((await call(cluster, 'POST', `${AUTHN}/selfsubjectreviews`, selfReview(), 'bob-token')).status).toBe(201);
    const other = await call(
      cluster,
      'POST',
      `${AUTHZ}/subjectaccessreviews`,
      sar({ user: 'alice', resourceAttributes: { verb: 'get', resource: 'pods' } }),
      'bob-token',
    );
    expect(other.status).toBe(403);
    expect(other.json['message']).toBe(
      'subjectaccessreviews.authorization.k8s.io is forbidden: User "bob" cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope',
    );
    expect((await call(cluster, 'POST', `${AUTHN}/tokenreviews`, tokenReview({ token: 'alice-token' }), 'bob-token')).status).toBe(403);
  });

  it('D-AUTH-12 a SelfSubjectAccessReview is answered for the requester: the request comes back with status and the metadata upstream gives it', async () => {
    const spec = { resourceAttributes: { namespace: 'default', verb: 'create', group: 'batch', resource: 'jobs' } };
    const r = await call(cluster, 'POST', `${AUTHZ}/selfsubjectaccessreviews?fieldManager=asker`, { ...ssar(spec), status: { allowed: false } }, 'alice-token');
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      kind: 'SelfSubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: {
        creationTimestamp: null,
        managedFields: [
          {
            manager: 'asker',
            operation: 'Update',
            apiVersion: 'authorization.k8s.io/v1',
            time: '2025-03-04T05:06:07Z',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:spec': { 'f:resourceAttributes': { '.': {}, 'f:group': {}, 'f:namespace': {}, 'f:resource': {}, 'f:verb': {} } } },
          },
        ],
      },
      spec,
      status: { allowed: true },
    });
    const denied = await call(
      cluster,
      'POST',
      `${AUTHZ}/selfsubjectaccessreviews`,
      ssar({ resourceAttributes: { ...spec.resourceAttributes, verb: 'delete' } }),
      'alice-token',
    );
    expect(denied.json['status']).toEqual({ allowed: false, denied: true, reason: 'no deleting jobs' });
    expect(denied.json['metadata']['managedFields'][0]['manager']).toBe('review-test');
    const elsewhere = await call(
      cluster,
      'POST',
      `${AUTHZ}/selfsubjectaccessreviews`,
      ssar({ resourceAttributes: { ...spec.resourceAttributes, namespace: 'other' } }),
      'alice-token',
    );
    expect(elsewhere.json['status']).toEqual({ allowed: false });
    const path = await call(
      cluster,
      'POST',
      `${AUTHZ}/selfsubjectaccessreviews`,
      ssar({ nonResourceAttributes: { path: '/metrics', verb: 'get' } }),
      'alice-token',
    );
    expect(path.json['status']).toEqual({ allowed: true });
  });

  it('D-AUTH-12 a SubjectAccessReview evaluates the subject of its spec: user, groups', async () => {
    const ask = (spec: Json): Promise<Reply> => call(cluster, 'POST', `${AUTHZ}/subjectaccessreviews`, sar(spec), 'checker-token');
    const settings = { namespace: 'default', verb: 'get', resource: 'configmaps', name: 'settings' };
    expect((await ask({ groups: ['devs'], resourceAttributes: settings })).json['status']).toEqual({ allowed: true });
    expect((await ask({ user: 'bob', resourceAttributes: settings })).json['status']).toEqual({ allowed: false });
    expect((await ask({ user: 'alice', resourceAttributes: { ...settings, name: 'secrets' } })).json['status']).toEqual({ allowed: false });
    const r = await ask({ user: 'alice', uid: 'u', groups: ['devs'], extra: { team: ['blue'] }, resourceAttributes: settings });
    expect(r.status).toBe(201);
    expect(r.json['spec']).toEqual({ user: 'alice', uid: 'u', groups: ['devs'], extra: { team: ['blue'] }, resourceAttributes: settings });
    expect(r.json['metadata']['creationTimestamp']).toBeNull();
  });

  it("D-AUTH-12 a SubjectAccessReview needs exactly one kind of attributes, a user or a group, and no metadata (upstream's messages)", async () => {
    const r = await call(cluster, 'POST', `${AUTHZ}/subjectaccessreviews`, sar({}, { name: 'x' }), 'checker-token');
    expect(r.status).toBe(422);
    expect(r.json['details']['causes']).toEqual([
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified',
        field: 'spec.resourceAttributes',
      },
      { reason: 'FieldValueInvalid', message: 'Invalid value: "": at least one of user or group must be specified', field: 'spec.user' },
      { reason: 'FieldValueInvalid', message: expect.stringMatching(/: must be empty$/), field: 'metadata' },
    ]);
    expect(r.json['message']).toMatch(/^SubjectAccessReview\.authorization\.k8s\.io "" is invalid: \[spec\.resourceAttributes: /);
    const both = await call(
      cluster,
      'POST',
      `${AUTHZ}/subjectaccessreviews`,
      sar({ user: 'a', resourceAttributes: { verb: 'get' }, nonResourceAttributes: { path: '/x', verb: 'get' } }),
      'checker-token',
    );
    expect(both.json['details']['causes'].map((c: Json) => [c['field'], c['message']])).toEqual([
      ['spec.nonResourceAttributes', 'Invalid value: {"path":"/x","verb":"get"}: cannot be specified in combination with resourceAttributes'],
    ]);
  });

  it('D-AUTH-12 a LocalSubjectAccessReview asks about resources in the namespace of its URL', async () => {
    const url = `${AUTHZ}/namespaces/default/localsubjectaccessreviews`;
    const settings = { namespace: 'default', verb: 'get', resource: 'configmaps', name: 'settings' };
    const r = await call(cluster, 'POST', url, lsar({ groups: ['devs'], resourceAttributes: settings }), 'checker-token');
    expect(r.status).toBe(201);
    expect(r.json['metadata']).toMatchObject({ namespace: 'default', creationTimestamp: null });
    expect(r.json['status']).toEqual({ allowed: true });
    const mismatch = await call(cluster, 'POST', url, lsar({ user: 'a', resourceAttributes: { ...settings, namespace: 'other' } }), 'checker-token');
    expect(mismatch.status).toBe(422);
    expect(mismatch.json['message']).toBe(
      'LocalSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace',
    );
    const nonResource = await call(cluster, 'POST', url, lsar({ user: 'a', nonResourceAttributes: { path: '/x', verb: 'get' } }), 'checker-token');
    expect(nonResource.json['details']['causes'].map((c: Json) => c['field'])).toEqual(['spec.nonResourceAttributes']);
    const otherMeta = await call(cluster, 'POST', url, lsar({ user: 'a', resourceAttributes: settings }, { namespace: 'other' }), 'checker-token');
    expect(otherMeta.status).toBe(400);
    expect(otherMeta.json['message']).toBe('the namespace of the provided object does not match the namespace sent on the request');
  });

  it('D-AUTH-13 a SelfSubjectRulesReview lists the allow rules that name the requester in the namespace, and the default grants', async () => {
    const r = await call(cluster, 'POST', `${AUTHZ}/selfsubjectrulesreviews`, rulesReview('default'), 'alice-token');
    expect(r.status).toBe(201);
    expect(r.json['metadata']).toEqual({ creationTimestamp: null });
    expect(r.json['spec']).toEqual({});
    const status = r.json['status'];
    expect(status['incomplete']).toBe(false);
    expect(status['resourceRules']).toEqual([
      { verbs: ['create', 'delete'], apiGroups: ['batch'], resources: ['jobs', 'jobs/*'] },
      { verbs: ['get', 'list'], apiGroups: ['*'], resources: ['configmaps', 'configmaps/*'], resourceNames: ['settings'] },
      { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'] },
      { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
    ]);
    expect(status['nonResourceRules']).toEqual([
      { verbs: ['get'], nonResourceURLs: ['/metrics'] },
      {
        verbs: ['get'],
        nonResourceURLs: ['/version', '/version/', '/api', '/api/*', '/apis', '/apis/*', '/openapi', '/openapi/*', '/healthz', '/livez', '/readyz'],
      },
    ]);
    expect(status['evaluationError']).toMatch(/^deny rules apply to this user/);
    const elsewhere = await call(cluster, 'POST', `${AUTHZ}/selfsubjectrulesreviews`, rulesReview('other'), 'alice-token');
    expect(elsewhere.json['status']['resourceRules'].map((rule: Json) => rule['resources'][0])).toEqual([
      'configmaps',
      'selfsubjectaccessreviews',
      'selfsubjectreviews',
    ]);
  });

  it('D-AUTH-13 a SelfSubjectRulesReview without a namespace is a 400', async () => {
    const r = await call(cluster, 'POST', `${AUTHZ}/selfsubjectrulesreviews`, rulesReview(), 'alice-token');
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ reason: 'BadRequest', message: 'no namespace on request' });
  });

  it('D-AUTH-14 a TokenReview of a valid token names its user and the audiences', async () => {
    const r = await call(cluster, 'POST', `${AUTHN}/tokenreviews`, tokenReview({ token: 'alice-token' }), 'checker-token');
    expect(r.status).toBe(201);
    expect(r.json['spec']).toEqual({ token: 'alice-token' });
    expect(r.json['metadata']['managedFields'][0]['fieldsV1']).toEqual({ 'f:spec': { 'f:token': {} } });
    expect(r.json['status']).toEqual({
      authenticated: true,
      user: { username: 'alice', uid: 'alice-uid', groups: ['devs', 'system:authenticated'], extra: { team: ['blue'] } },
      audiences: ['https://kubernetes.default.svc.cluster.local'],
    });
    const bob = await call(
      cluster,
      'POST',
      `${AUTHN}/tokenreviews`,
      tokenReview({ token: 'bob-token', audiences: ['x', 'https://kubernetes.default.svc.cluster.local'] }),
      'checker-token',
    );
    expect(bob.json['status']).toEqual({
      authenticated: true,
      user: { username: 'bob', groups: ['system:authenticated'] },
      audiences: ['https://kubernetes.default.svc.cluster.local'],
    });
  });

  it('D-AUTH-14 a TokenReview of an unknown, expired, not yet valid or foreign-audience token is not authenticated, with an error', async () => {
    const review = async (spec: Json): Promise<Json> =>
      (await call(cluster, 'POST', `${AUTHN}/tokenreviews`, tokenReview(spec), 'checker-token')).json['status'];
    expect(await review({ token: 'who-knows' })).toEqual({ user: {}, error: 'invalid bearer token' });
    expect(await review({ token: 'old-token' })).toEqual({ user: {}, error: 'token has expired' });
    expect(await review({ token: 'later-token' })).toEqual({ user: {}, error: 'token is not valid yet' });
    expect(await review({ token: 'alice-token', audiences: ['https://vault.example.com'] })).toEqual({ user: {}, error: 'invalid bearer token' });
  });

  it('D-AUTH-14 a TokenReview without a token is a 400', async () => {
    const r = await call(cluster, 'POST', `${AUTHN}/tokenreviews`, tokenReview({}), 'checker-token');
    expect(r.status).toBe(400);
    expect(r.json['message']).toBe('token is required for TokenReview in authentication');
  });

  it('D-AUTH-15 a SelfSubjectReview returns the user the request authenticated as', async () => {
    const r = await call(cluster, 'POST', `${AUTHN}/selfsubjectreviews`, selfReview(), 'alice-token');
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      kind: 'SelfSubjectReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { creationTimestamp: '2025-03-04T05:06:07Z' },
      status: { userInfo: { username: 'alice', uid: 'alice-uid', groups: ['devs', 'system:authenticated'], extra: { team: ['blue'] } } },
    });
  });
});

describe('review APIs without authentication (auth: none)', () => {
  let cluster: DevCluster;

  beforeAll(async () => {
    cluster = await DevCluster.start({ tls: false });
  });
  afterAll(async () => {
    await cluster.stop();
  });

  it('D-AUTH-12 D-AUTH-13 everything is allowed, as by an allow-all authorizer', async () => {
    const access = await call(cluster, 'POST', `${AUTHZ}/selfsubjectaccessreviews`, ssar({ resourceAttributes: { verb: 'delete', resource: 'nodes' } }));
    expect(access.json['status']).toEqual({ allowed: true });
    const subject = await call(
      cluster,
      'POST',
      `${AUTHZ}/subjectaccessreviews`,
      sar({ user: 'anyone', nonResourceAttributes: { path: '/metrics', verb: 'get' } }),
    );
    expect(subject.json['status']).toEqual({ allowed: true });
    const rules = await call(cluster, 'POST', `${AUTHZ}/selfsubjectrulesreviews`, rulesReview('default'));
    expect(rules.json['status']).toEqual({
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      incomplete: false,
    });
  });

  it('D-AUTH-15 D-AUTH-14 the requester is the devcluster admin, and its token still reviews as its own', async () => {
    const self = await call(cluster, 'POST', `${AUTHN}/selfsubjectreviews`, selfReview());
    const admin = self.json['status']['userInfo'];
    expect(admin).toMatchObject({ username: 'devcluster-admin', groups: ['system:masters', 'system:authenticated'] });
    expect(admin['uid']).toMatch(/^[0-9a-f-]{36}$/);
    const token = cluster.kubeconfigObject().users[0]!.user.token!;
    const review = await call(cluster, 'POST', `${AUTHN}/tokenreviews`, tokenReview({ token }));
    expect(review.json['status']).toMatchObject({ authenticated: true, user: { username: 'devcluster-admin', uid: admin['uid'] } });
  });
});
