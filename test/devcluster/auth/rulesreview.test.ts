/**
 * Rules reviews (D-AUTH-13): the allow rules, defaults and wildcards a user sees in `kubectl auth can-i --list`.
 */
import { describe, expect, it } from 'vitest';
import * as authorization from '../../../devcluster/auth/authorization.js';
import * as rulesreview from '../../../devcluster/auth/rulesreview.js';
import * as users from '../../../devcluster/auth/users.js';

const alice = users.authenticatedUser({ username: 'alice', groups: ['devs'] });
const anonymous = users.anonymousUser();

const denying = (rules: authorization.AuthorizationRule[]): authorization.Authorizer => new authorization.Authorizer({ defaultDecision: 'deny', rules });

describe('rulesFor', () => {
  it('D-AUTH-13 an allow rule for everything in the default allow-all setup lists only the wildcard rules', () => {
    expect(rulesreview.rulesFor(new authorization.Authorizer(), alice, 'default')).toEqual({
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      incomplete: false,
    });
  });

  it('D-AUTH-13 resources cover their subresources; subresources narrow them; names become resourceNames', () => {
    const authz = denying([
      { effect: 'allow', users: ['alice'], verbs: ['get'], resources: ['pods', 'deployments/scale'] },
      { effect: 'allow', users: ['alice'], verbs: ['patch'], resources: ['widgets'], subresources: ['', 'status'], names: ['w1'] },
      { effect: 'allow', users: ['alice'], verbs: ['update'], subresources: ['status'], names: ['*'] },
    ]);
    expect(rulesreview.rulesFor(authz, alice, 'default').resourceRules.slice(0, 3)).toEqual([
      { verbs: ['get'], apiGroups: ['*'], resources: ['pods', 'pods/*', 'deployments/scale'] },
      { verbs: ['patch'], apiGroups: ['*'], resources: ['widgets', 'widgets/status'], resourceNames: ['w1'] },
      { verbs: ['update'], apiGroups: ['*'], resources: ['*/status'] },
    ]);
  });

  it('D-AUTH-13 only rules that name the user and apply in the namespace are listed', () => {
    const authz = denying([
      { effect: 'allow', users: ['bob'], verbs: ['get'] },
      { effect: 'allow', groups: ['devs'], verbs: ['list'], namespaces: ['team'] },
      { effect: 'allow', groups: ['devs'], verbs: ['watch'], namespaces: ['*'] },
    ]);
    expect(rulesreview.rulesFor(authz, alice, 'default').resourceRules[0]).toEqual({ verbs: ['watch'], apiGroups: ['*'], resources: ['*'] });
    expect(
      rulesreview
        .rulesFor(authz, alice, 'team')
        .resourceRules.slice(0, 2)
        .map((r) => r.verbs),
    ).toEqual([['list'], ['watch']]);
  });

  it('D-AUTH-13 a rule that restricts nothing but verbs speaks about resources and paths alike', () => {
    const status = rulesreview.rulesFor(denying([{ effect: 'allow', users: ['alice'], verbs: ['get'] }]), alice, 'default');
    expect(status.resourceRules[0]).toEqual({ verbs: ['get'], apiGroups: ['*'], resources: ['*'] });
    expect(status.nonResourceRules[0]).toEqual({ verbs: ['get'], nonResourceURLs: ['*'] });
  });

  it('D-AUTH-13 anonymous users get the public paths and no self reviews by default', () => {
    expect(rulesreview.rulesFor(denying([]), anonymous, 'default')).toEqual({
      resourceRules: [],
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/version', '/version/', '/healthz', '/livez', '/readyz'] }],
      incomplete: false,
    });
  });

  it('D-AUTH-13 deny rules that name the user are not listed, and evaluationError says so', () => {
    const status = rulesreview.rulesFor(new authorization.Authorizer({ rules: [{ effect: 'deny', users: ['alice'], verbs: ['delete'] }] }), alice, 'default');
    expect(status.evaluationError).toBe(rulesreview.DENIALS_NOT_LISTED);
    expect(status.incomplete).toBe(false);
    expect(
      rulesreview.rulesFor(new authorization.Authorizer({ rules: [{ effect: 'deny', users: ['bob'] }] }), alice, 'default').evaluationError,
    ).toBeUndefined();
  });
});
