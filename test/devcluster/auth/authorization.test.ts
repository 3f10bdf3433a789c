import { describe, expect, it } from 'vitest';
import * as authorization from '../../../devcluster/auth/authorization.js';
import * as users from '../../../devcluster/auth/users.js';

const alice = users.authenticatedUser({ username: 'alice', groups: ['devs'] });
const bob = users.authenticatedUser({ username: 'bob' });
const anonymous = users.anonymousUser();

const widgets = (verb: string, extra: Partial<authorization.ResourceAttributes> = {}): authorization.ResourceAttributes => ({
  kind: 'resource',
  verb,
  apiGroup: 'example.com',
  resource: 'widgets',
  namespace: 'default',
  ...extra,
});
const path = (p: string, verb = 'get'): authorization.NonResourceAttributes => ({ kind: 'nonResource', verb, path: p });

describe('Authorizer', () => {
  it('C-116 a rule denying alice delete on widgets refuses the delete but not the list', () => {
    const authz = new authorization.Authorizer({
      rules: [{ effect: 'deny', users: ['alice'], verbs: ['delete'], resources: ['widgets'] }],
    });
    expect(authz.authorize(widgets('delete', { name: 'w1' }), alice)).toEqual({ allowed: false, source: 'rule', ruleIndex: 0 });
    expect(authz.authorize(widgets('list'), alice)).toEqual({ allowed: true, source: 'default' });
    expect(authz.authorize(widgets('delete', { name: 'w1' }), bob).allowed).toBe(true);
  });

  it('D-AUTH-5 the first matching rule decides', () => {
    const authz = new authorization.Authorizer({
      defaultDecision: 'deny',
      rules: [
        { effect: 'allow', users: ['alice'], verbs: ['get'], reason: 'alice reads' },
        { effect: 'deny', resources: ['widgets'], reason: 'no widgets' },
        { effect: 'allow', resources: ['widgets'] },
      ],
    });
    expect(authz.authorize(widgets('get'), alice)).toEqual({ allowed: true, source: 'rule', ruleIndex: 0, reason: 'alice reads' });
    expect(authz.authorize(widgets('get'), bob)).toEqual({ allowed: false, source: 'rule', ruleIndex: 1, reason: 'no widgets' });
    expect(authz.authorize(widgets('list'), alice)).toMatchObject({ allowed: false, ruleIndex: 1 });
  });

  it('D-AUTH-5 without a matching rule the default decision applies (allow unless configured)', () => {
    expect(new authorization.Authorizer().authorize(widgets('delete'), bob)).toEqual({ allowed: true, source: 'default' });
    expect(new authorization.Authorizer({ defaultDecision: 'deny' }).authorize(widgets('delete'), bob)).toEqual({ allowed: false, source: 'default' });
  });

  it('D-AUTH-5 rules and the default can be replaced at run time', () => {
    const authz = new authorization.Authorizer();
    expect(authz.authorize(widgets('delete'), alice).allowed).toBe(true);
    authz.setRules([{ effect: 'deny', verbs: ['delete'] }]);
    expect(authz.authorize(widgets('delete'), alice).allowed).toBe(false);
    authz.setRules([]);
    authz.setDefaultDecision('deny');
    expect(authz.authorize(widgets('delete'), alice).allowed).toBe(false);
    expect(authz.defaultDecision).toBe('deny');
    expect(() => authz.setRules([{ effect: 'nope' } as unknown as authorization.AuthorizationRule])).toThrowError(
      expect.objectContaining({ code: 'InvalidAuthorizationRule' }),
    );
    expect(authz.rules).toEqual([]);
  });

  it('D-AUTH-5 the list passed to setRules can be mutated afterwards without effect', () => {
    const authz = new authorization.Authorizer();
    const list: authorization.AuthorizationRule[] = [{ effect: 'deny', users: ['alice'] }];
    authz.setRules(list);
    list.length = 0;
    expect(authz.authorize(widgets('get'), alice).allowed).toBe(false);
  });

  it('D-AUTH-7 authenticated users may get discovery paths even when the default denies', () => {
    const authz = new authorization.Authorizer({ defaultDecision: 'deny' });
    for (const p of ['/version', '/api', '/api/v1', '/apis', '/apis/example.com/v1', '/openapi/v2', '/openapi/v3', '/healthz', '/livez', '/readyz']) {
      expect(authz.authorize(path(p), alice), p).toEqual({ allowed: true, source: 'discovery' });
    }
    expect(authz.authorize(path('/metrics'), alice).allowed).toBe(false);
    expect(authz.authorize(path('/apis', 'post'), alice).allowed).toBe(false);
    expect(authz.authorize(path('/healthzz'), alice).allowed).toBe(false);
  });

  it('D-AUTH-7 a rule overrides the discovery defaults', () => {
    const authz = new authorization.Authorizer({
      defaultDecision: 'deny',
      rules: [{ effect: 'deny', users: ['alice'], nonResourceURLs: ['/apis', '/apis/*'] }],
    });
    expect(authz.authorize(path('/apis'), alice)).toMatchObject({ allowed: false, source: 'rule' });
    expect(authz.authorize(path('/apis/example.com'), alice)).toMatchObject({ allowed: false, source: 'rule' });
    expect(authz.authorize(path('/api'), alice)).toMatchObject({ allowed: true, source: 'discovery' });
    expect(authz.authorize(path('/apis'), bob)).toMatchObject({ allowed: true, source: 'discovery' });
  });

  it('D-AUTH-7 anonymous users get only the public-info paths by default', () => {
    const authz = new authorization.Authorizer({ defaultDecision: 'deny' });
    for (const p of ['/version', '/healthz', '/livez', '/readyz']) expect(authz.authorize(path(p), anonymous).allowed, p).toBe(true);
    for (const p of ['/api', '/apis', '/apis/example.com', '/openapi/v2']) expect(authz.authorize(path(p), anonymous).allowed, p).toBe(false);
  });

  it('D-AUTH-11 authenticated users may create the self reviews even when the default denies, unless a rule says otherwise', () => {
    const authz = new authorization.Authorizer({ defaultDecision: 'deny' });
    const create = (apiGroup: string, resource: string): authorization.ResourceAttributes => ({ kind: 'resource', verb: 'create', apiGroup, resource });
    expect(authz.authorize(create('authorization.k8s.io', 'selfsubjectaccessreviews'), alice)).toEqual({ allowed: true, source: 'self-review' });
    expect(authz.authorize(create('authorization.k8s.io', 'selfsubjectrulesreviews'), alice).allowed).toBe(true);
    expect(authz.authorize(create('authentication.k8s.io', 'selfsubjectreviews'), alice).allowed).toBe(true);
    expect(authz.authorize(create('authorization.k8s.io', 'subjectaccessreviews'), alice).allowed).toBe(false);
    expect(authz.authorize(create('authentication.k8s.io', 'tokenreviews'), alice).allowed).toBe(false);
    expect(authz.authorize({ ...create('authorization.k8s.io', 'selfsubjectaccessreviews'), verb: 'list' }, alice).allowed).toBe(false);
    expect(authz.authorize(create('authorization.k8s.io', 'selfsubjectaccessreviews'), anonymous).allowed).toBe(false);
    authz.setRules([{ effect: 'deny', users: ['alice'], resources: ['selfsubjectaccessreviews'] }]);
    expect(authz.authorize(create('authorization.k8s.io', 'selfsubjectaccessreviews'), alice).allowed).toBe(false);
  });

  it('D-AUTH-1 the admin of auth "none" is subject to rules like anyone', () => {
    const admin = users.adminUser('uid');
    const authz = new authorization.Authorizer({ rules: [{ effect: 'deny', groups: ['system:masters'], verbs: ['delete'] }] });
    expect(authz.authorize(widgets('delete'), admin).allowed).toBe(false);
    expect(authz.authorize(widgets('get'), admin).allowed).toBe(true);
  });
});

describe('forbiddenError', () => {
  it('C-116 the message of a denied named delete is exact', () => {
    const err = authorization.forbiddenError(widgets('delete', { name: 'w1' }), alice);
    expect(err.message).toBe(
      'widgets.example.com "w1" is forbidden: User "alice" cannot delete resource "widgets" in API group "example.com" in the namespace "default"',
    );
    expect(err.toStatus()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      message: err.message,
      details: { name: 'w1', group: 'example.com', kind: 'widgets' },
    });
  });

  const table: Array<[string, authorization.RequestAttributes, users.UserInfo, string | undefined, string]> = [
    [
      'a nameless request omits the name',
      { kind: 'resource', verb: 'list', apiGroup: '', resource: 'configmaps', namespace: 'default' },
      alice,
      undefined,
      'configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "default"',
    ],
    [
      'a cluster-scoped request ends at the cluster scope',
      { kind: 'resource', verb: 'get', apiGroup: '', resource: 'namespaces', name: 'kube-system' },
      bob,
      undefined,
      'namespaces "kube-system" is forbidden: User "bob" cannot get resource "namespaces" in API group "" at the cluster scope',
    ],
    [
      'an all-namespace list ends at the cluster scope',
      { kind: 'resource', verb: 'list', apiGroup: 'example.com', resource: 'widgets', namespace: '' },
      alice,
      undefined,
      'widgets.example.com is forbidden: User "alice" cannot list resource "widgets" in API group "example.com" at the cluster scope',
    ],
    [
      'a subresource is named res/sub',
      { kind: 'resource', verb: 'patch', apiGroup: 'example.com', resource: 'widgets', subresource: 'status', namespace: 'ns1', name: 'w2' },
      alice,
      undefined,
      'widgets.example.com "w2" is forbidden: User "alice" cannot patch resource "widgets/status" in API group "example.com" in the namespace "ns1"',
    ],
    [
      'a non-resource path',
      { kind: 'nonResource', verb: 'get', path: '/apis' },
      anonymous,
      undefined,
      'forbidden: User "system:anonymous" cannot get path "/apis"',
    ],
    [
      'a reason is appended',
      { kind: 'resource', verb: 'create', apiGroup: 'apps', resource: 'deployments', namespace: 'default' },
      alice,
      'frozen for the test',
      'deployments.apps is forbidden: User "alice" cannot create resource "deployments" in API group "apps" in the namespace "default": frozen for the test',
    ],
    [
      'a reason is appended to non-resource refusals too',
      { kind: 'nonResource', verb: 'get', path: '/version' },
      alice,
      'no',
      'forbidden: User "alice" cannot get path "/version": no',
    ],
  ];
  for (const [title, attributes, user, reason, message] of table) {
    it(`D-AUTH-6 ${title}`, () => {
      const err = authorization.forbiddenError(attributes, user, reason);
      expect(err.code).toBe(403);
      expect(err.reason).toBe('Forbidden');
      expect(err.message).toBe(message);
    });
  }

  it('D-AUTH-6 details carry group and resource, and the name only when there is one', () => {
    expect(authorization.forbiddenError({ kind: 'resource', verb: 'list', apiGroup: '', resource: 'configmaps', namespace: 'd' }, alice).details).toEqual({
      group: '',
      kind: 'configmaps',
    });
    expect(authorization.forbiddenError(path('/apis'), alice).toStatus().details).toBeUndefined();
  });
});

describe('accessReview', () => {
  const authz = new authorization.Authorizer({
    defaultDecision: 'deny',
    rules: [
      { effect: 'deny', users: ['alice'], verbs: ['delete'], resources: ['widgets'], reason: 'not yours' },
      { effect: 'allow', groups: ['devs'], apiGroups: ['example.com'], reason: 'devs own widgets' },
    ],
  });

  it('D-AUTH-8 resource attributes are evaluated with the rules', () => {
    const spec = { resourceAttributes: { namespace: 'default', verb: 'delete', group: 'example.com', version: 'v1', resource: 'widgets', name: 'w1' } };
    expect(authorization.accessReview(spec, authz, alice)).toEqual({ allowed: false, denied: true, reason: 'not yours' });
    expect(authorization.accessReview({ resourceAttributes: { ...spec.resourceAttributes, verb: 'get' } }, authz, alice)).toEqual({
      allowed: true,
      reason: 'devs own widgets',
    });
    expect(authorization.accessReview({ resourceAttributes: { verb: 'list', resource: 'pods' } }, authz, alice)).toEqual({ allowed: false });
  });

  it('D-AUTH-8 non-resource attributes use the discovery defaults', () => {
    expect(authorization.accessReview({ nonResourceAttributes: { path: '/apis', verb: 'get' } }, authz, alice)).toEqual({ allowed: true });
    expect(authorization.accessReview({ nonResourceAttributes: { path: '/metrics', verb: 'get' } }, authz, alice)).toEqual({ allowed: false });
  });

  it('D-AUTH-8 exactly one kind of attributes is required (422 Invalid)', () => {
    for (const spec of [{}, undefined, { resourceAttributes: {}, nonResourceAttributes: {} }]) {
      expect(() => authorization.accessReview(spec, authz, alice)).toThrowError(expect.objectContaining({ code: 422, reason: 'Invalid' }));
    }
    expect(() => authorization.accessReview({}, authz, alice)).toThrowError(
      'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified',
    );
  });
});
