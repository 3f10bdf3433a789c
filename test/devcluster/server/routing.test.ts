import { describe, expect, it } from 'vitest';
import * as routing from '../../../devcluster/server/routing.js';

/** What the pipeline reads of a target, for comparison with the WHATWG URL parser. */
function parts(t: routing.RequestTarget): { pathname: string; search: string; params: [string, string][] } {
  return { pathname: t.pathname, search: t.search, params: [...t.searchParams] };
}

const TARGETS = [
  '/',
  '/api',
  '/api/v1',
  '/api/v1/namespaces/default/configmaps',
  '/api/v1/namespaces/default/configmaps/c8-17',
  '/apis/example.com/v1/namespaces/ns/widgets/w1/status',
  '/api/v1/namespaces/default/configmaps/',
  '/api/v1/configmaps?watch=true&resourceVersion=0',
  '/api/v1/configmaps?',
  '/api/v1/configmaps?labelSelector=a%3Db,c!%3Dd&limit=5',
  '/api/v1/configmaps?fieldSelector=metadata.name=x&fieldSelector=y',
  '/api/v1/configmaps?q=a+b&r=%20',
  '/api/v1/pods?x=/y?z',
  '/api/v1/namespaces/a%2Fb/pods',
  '/api/v1/namespaces/%zz/pods',
  '/api/v1/pods/%2e%2e/x',
  '/api/v1/pods/../x',
  '/api/v1/./pods',
  '/.well-known/openid-configuration',
  '//api/v1/pods',
  '/api//v1',
  '/api/v1/pods?a=%27&b="c"',
  "/api/v1/pods?a='",
  '/api/v1/pods#frag',
  '/api/v1/pods?a=b#frag',
  '/api/v1/p ods',
  '/api/v1/pöds',
  '/api/v1/pods?x=ü',
  '/api/v1/pods?x=<y>',
  '/api/v1/p%C3%B6ds',
  '',
  '/api/v1/pods\\x',
  '/api/v1/{x}',
  "/api/v1/it's",
  '/api/v1/namespaces/default/configmaps?dryRun=All&fieldManager=kubectl-client-side-apply',
];

describe('request targets', () => {
  it.each(TARGETS)('splits %j exactly as the URL parser does', (target) => {
    expect(parts(routing.parseTarget(target))).toEqual(parts(new URL(target, 'http://devcluster')));
  });

  it('plain targets are split without the URL parser, the others go through it', () => {
    expect(routing.parseTarget('/api/v1/namespaces/default/configmaps/c-1?watch=true')).not.toBeInstanceOf(URL);
    expect(routing.parseTarget('/api/v1/pods/../x')).toBeInstanceOf(URL);
    expect(routing.parseTarget('/api/v1/pods?x=<y>')).toBeInstanceOf(URL);
  });
});

describe('resource paths', () => {
  it('D-BI-18 a proxy subresource keeps the rest of its path; other paths stay limited to name and subresource', () => {
    expect(routing.parsePath('/api/v1/namespaces/default/pods/web:8080/proxy/metrics/a')).toEqual({
      kind: 'resource',
      group: '',
      version: 'v1',
      resource: 'pods',
      namespace: 'default',
      name: 'web:8080',
      subresource: 'proxy',
      subpath: 'metrics/a',
      legacyWatch: false,
    });
    expect(routing.parsePath('/api/v1/nodes/node-1/proxy/stats/summary')).toMatchObject({
      resource: 'nodes',
      name: 'node-1',
      subresource: 'proxy',
      subpath: 'stats/summary',
    });
    expect(routing.parsePath('/api/v1/namespaces/default/pods/web/log/extra')).toEqual({
      kind: 'nonResource',
      path: '/api/v1/namespaces/default/pods/web/log/extra',
    });
    expect(routing.parsePath('/api/v1/namespaces/default/pods/web/proxy')).toMatchObject({ subresource: 'proxy' });
  });
});
