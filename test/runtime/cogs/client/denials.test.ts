/**
 * What a 403 says was denied, and how it is reported (R-SEC-1): the API server's messages parsed
 * into user, verb, resource, group and namespace (or a non-resource path); one ERROR line per
 * client, verb, resource and namespace, DEBUG after that.
 */
import { describe, expect, it } from 'vitest';
import * as denials from '../../../../runtime/cogs/client/denials.js';
import * as errors from '../../../../runtime/cogs/client/errors.js';
import { RecordingLogger } from './helpers.js';

const forbidden = (message: string): errors.ApiForbiddenError =>
  errors.apiErrorFor(
    403,
    JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason: 'Forbidden', code: 403 }),
  ) as errors.ApiForbiddenError;

describe('R-SEC-1 denials', () => {
  it.each([
    [
      'kopfexamples.kopf.dev "kex-1" is forbidden: User "system:serviceaccount:op:op" cannot get resource "kopfexamples" in API group "kopf.dev" in the namespace "default"',
      { user: 'system:serviceaccount:op:op', verb: 'get', resource: 'kopfexamples', group: 'kopf.dev', namespace: 'default' },
    ],
    [
      'namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io "x" not found',
      { user: 'alice', verb: 'list', resource: 'namespaces', group: '', namespace: null },
    ],
    [
      'kopfexamples.kopf.dev "kex-1" is forbidden: User "bob" cannot patch resource "kopfexamples/status" in API group "kopf.dev" in the namespace "ns"',
      { user: 'bob', verb: 'patch', resource: 'kopfexamples/status', group: 'kopf.dev', namespace: 'ns' },
    ],
    ['forbidden: User "carol" cannot get path "/metrics"', { user: 'carol', verb: 'get', path: '/metrics' }],
    ['forbidden: injected fault', undefined],
  ])('R-SEC-1 %s', (message, expected) => {
    expect(forbidden(message).denial).toEqual(expected);
  });

  it('R-SEC-1 one ERROR line per client, verb, resource and namespace; DEBUG after', () => {
    const logger = new RecordingLogger();
    const client = {};
    const get = forbidden('x is forbidden: User "u" cannot get resource "widgets" in API group "example.com" in the namespace "a"');
    const request = { method: 'GET', url: 'https://k/apis/example.com/v1/namespaces/a/widgets/x' };
    denials.reportDenial(client, logger, get, request);
    denials.reportDenial(client, logger, get, request);
    denials.reportDenial(
      client,
      logger,
      forbidden('x is forbidden: User "u" cannot get resource "widgets" in API group "example.com" in the namespace "b"'),
      request,
    );
    denials.reportDenial({}, logger, get, request);
    denials.reportDenial(client, logger, forbidden('forbidden: injected fault'), { method: 'PATCH', url: 'https://k/x?dryRun=All' });
    denials.reportDenial(client, logger, forbidden('forbidden: injected fault'), { method: 'PATCH', url: 'https://k/x' });
    expect(logger.messages('error').map((line) => line.split(' — ')[0])).toEqual([
      'Forbidden (HTTP 403): user "u" may not get "widgets.example.com" in namespace "a": GET https://k/apis/example.com/v1/namespaces/a/widgets/x',
      'Forbidden (HTTP 403): user "u" may not get "widgets.example.com" in namespace "b": GET https://k/apis/example.com/v1/namespaces/a/widgets/x',
      'Forbidden (HTTP 403): user "u" may not get "widgets.example.com" in namespace "a": GET https://k/apis/example.com/v1/namespaces/a/widgets/x',
      'Forbidden (HTTP 403): PATCH https://k/x?dryRun=All -> forbidden: injected fault',
    ]);
    expect(logger.messages('debug')).toHaveLength(2);
  });
});
