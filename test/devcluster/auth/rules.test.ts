import { describe, expect, it } from 'vitest';
import * as rules from '../../../devcluster/auth/rules.js';
import * as users from '../../../devcluster/auth/users.js';

const alice = users.authenticatedUser({ username: 'alice', groups: ['devs'] });
const bob = users.authenticatedUser({ username: 'bob', groups: ['ops'] });

const deleteWidget: rules.ResourceAttributes = {
  kind: 'resource',
  verb: 'delete',
  apiGroup: 'example.com',
  resource: 'widgets',
  namespace: 'default',
  name: 'w1',
};
const patchStatus: rules.ResourceAttributes = { ...deleteWidget, verb: 'patch', subresource: 'status' };
const listAll: rules.ResourceAttributes = { kind: 'resource', verb: 'list', apiGroup: 'example.com', resource: 'widgets' };
const getApis: rules.NonResourceAttributes = { kind: 'nonResource', verb: 'get', path: '/apis/example.com/v1' };

describe('ruleMatches', () => {
  const table: Array<[string, rules.AuthorizationRule, rules.RequestAttributes, users.UserInfo, boolean]> = [
    ['an empty rule matches anything', { effect: 'deny' }, deleteWidget, alice, true],
    ['an empty rule matches non-resource requests too', { effect: 'deny' }, getApis, alice, true],
    ['users narrows to the named users', { effect: 'deny', users: ['alice'] }, deleteWidget, bob, false],
    ['groups matches any of the user groups', { effect: 'deny', groups: ['ops', 'devs'] }, deleteWidget, alice, true],
    ['groups can name system:authenticated', { effect: 'deny', groups: ['system:authenticated'] }, deleteWidget, bob, true],
    ['users and groups must both match', { effect: 'deny', users: ['alice'], groups: ['ops'] }, deleteWidget, alice, false],
    ['verbs narrows the verb', { effect: 'deny', verbs: ['get', 'list'] }, deleteWidget, alice, false],
    ['* matches any verb', { effect: 'deny', verbs: ['*'] }, deleteWidget, alice, true],
    ['apiGroups narrows the group', { effect: 'deny', apiGroups: [''] }, deleteWidget, alice, false],
    ['a plain resource covers its subresources', { effect: 'deny', resources: ['widgets'] }, patchStatus, alice, true],
    ['res/sub matches only that subresource', { effect: 'deny', resources: ['widgets/status'] }, deleteWidget, alice, false],
    ['res/sub matches the subresource', { effect: 'deny', resources: ['widgets/status'] }, patchStatus, alice, true],
    ['res/* matches subresources', { effect: 'deny', resources: ['widgets/*'] }, patchStatus, alice, true],
    ['res/* does not match the main resource', { effect: 'deny', resources: ['widgets/*'] }, deleteWidget, alice, false],
    ['*/sub matches the subresource of any resource', { effect: 'deny', resources: ['*/status'] }, patchStatus, alice, true],
    ['subresources "" means the main resource', { effect: 'deny', subresources: [''] }, patchStatus, alice, false],
    ['subresources names subresources', { effect: 'deny', subresources: ['status'] }, patchStatus, alice, true],
    ['namespaces narrows the namespace', { effect: 'deny', namespaces: ['kube-system'] }, deleteWidget, alice, false],
    ['namespaces "" matches all-namespace requests', { effect: 'deny', namespaces: [''] }, listAll, alice, true],
    ['names never match nameless requests', { effect: 'deny', names: ['w1'] }, listAll, alice, false],
    ['names match the name', { effect: 'deny', names: ['w1'] }, deleteWidget, alice, true],
    ['resource rules skip non-resource requests', { effect: 'deny', resources: ['*'] }, getApis, alice, false],
    ['nonResourceURLs rules skip resource requests', { effect: 'deny', nonResourceURLs: ['*'] }, deleteWidget, alice, false],
    ['a trailing * is a prefix', { effect: 'deny', nonResourceURLs: ['/apis/*'] }, getApis, alice, true],
    ['exact paths are exact', { effect: 'deny', nonResourceURLs: ['/apis'] }, getApis, alice, false],
  ];
  for (const [title, rule, attributes, user, expected] of table) {
    it(`D-AUTH-5 ${title}`, () => {
      expect(rules.ruleMatches(rule, attributes, user)).toBe(expected);
    });
  }
});

describe('validateRules', () => {
  it('D-AUTH-5 returns a frozen copy of valid rules', () => {
    const input: rules.AuthorizationRule[] = [{ effect: 'allow', verbs: ['get'], reason: 'r' }];
    const out = rules.validateRules(input);
    expect(out).toEqual(input);
    input[0]!.effect = 'deny';
    expect(out[0]!.effect).toBe('allow');
    expect(Object.isFrozen(out)).toBe(true);
    expect(Object.isFrozen(out[0])).toBe(true);
  });

  it('rejects malformed rules with a coded error naming the rule', () => {
    const bad: unknown[] = [
      { effect: 'maybe' },
      { effect: 'allow', verbs: 'get' },
      { effect: 'allow', verbs: [1] },
      { effect: 'allow', resource: ['typo'] },
      { effect: 'allow', nonResourceURLs: ['/x'], resources: ['y'] },
      { effect: 'allow', reason: 5 },
      null,
    ];
    for (const rule of bad) {
      expect(() => rules.validateRules([{ effect: 'allow' }, rule])).toThrowError(
        expect.objectContaining({ code: 'InvalidAuthorizationRule', message: expect.stringContaining('rules[1]') }),
      );
    }
  });
});
