import { describe, expect, it } from 'vitest';
import * as selectors from '../../../devcluster/meta/selectors.js';

/** The ConfigMaps of C-61. */
const objects: Record<string, Record<string, string>> = {
  a: { env: 'prod', tier: 'web' },
  b: { env: 'dev' },
  c: {},
};
const select = (text: string): string[] => {
  const selector = selectors.parseLabelSelector(text);
  return Object.keys(objects).filter((name) => selectors.matchesLabels(selector, objects[name]));
};

/** The error a parse throws, or undefined. */
const parseError = (text: string): selectors.SelectorError | undefined => {
  try {
    selectors.parseLabelSelector(text);
    return undefined;
  } catch (error) {
    return error as selectors.SelectorError;
  }
};

describe('label selectors: matching', () => {
  it.each([
    ['env=prod', ['a']],
    ['env==prod', ['a']],
    ['env!=prod', ['b', 'c']],
    ['env in (prod,dev)', ['a', 'b']],
    ['env notin (prod)', ['b', 'c']],
    ['env', ['a', 'b']],
    ['!env', ['c']],
    ['env=prod,tier=web', ['a']],
  ])('C-61 D-VERB-3 %j selects %j', (text, expected) => {
    expect(select(text)).toEqual(expected);
  });

  it.each([
    ['', ['a', 'b', 'c']],
    ['  ', ['a', 'b', 'c']],
    [' env  in ( prod , dev ) ', ['a', 'b']],
    ['env = prod , tier', ['a']],
    ['tier,!tier', []],
    ['env notin (prod,dev)', ['c']],
    ['env in (qa)', []],
    ['!tier,env', ['b']],
  ])('D-VERB-3 %j selects %j', (text, expected) => {
    expect(select(text)).toEqual(expected);
  });

  it.each([
    ['n>5', { n: '6' }, true],
    ['n>5', { n: '5' }, false],
    ['n<5', { n: '-10' }, true],
    ['n<5', { n: '+4' }, true],
    ['n>5', { n: 'abc' }, false],
    ['n>5', {}, false],
    ['n<5', {}, false],
    ['n>0', { n: '-3' }, false],
    ['n<0', { n: '-3' }, true],
    ['n>9223372036854775806', { n: '9223372036854775807' }, true],
    ['n>5', { n: '99999999999999999999' }, false],
  ])('D-VERB-3 %j on %j → %s', (text, labels, expected) => {
    expect(selectors.matchesLabels(selectors.parseLabelSelector(text), labels)).toBe(expected);
  });

  it('an absent label map matches only negative requirements', () => {
    expect(selectors.matchesLabels(selectors.parseLabelSelector('!a,b!=c,d notin (e)'), undefined)).toBe(true);
    expect(selectors.matchesLabels(selectors.parseLabelSelector('a'), undefined)).toBe(false);
  });

  it('the keywords in and notin are ordinary keys and values', () => {
    expect(selectors.matchesLabels(selectors.parseLabelSelector('in=notin'), { in: 'notin' })).toBe(true);
    expect(selectors.matchesLabels(selectors.parseLabelSelector('notin in (in)'), { notin: 'in' })).toBe(true);
  });

  it('keys with a prefix and values with dots, underscores and upper case parse', () => {
    const selector = selectors.parseLabelSelector('app.kubernetes.io/name=My_App.v1');
    expect(selector.requirements).toEqual([{ key: 'app.kubernetes.io/name', operator: 'Equals', values: ['My_App.v1'] }]);
  });

  it('empty members of a value list stand for the empty value (upstream)', () => {
    expect(selectors.matchesLabels(selectors.parseLabelSelector('a in ()'), { a: '' })).toBe(true);
    expect(selectors.matchesLabels(selectors.parseLabelSelector('a in (x,)'), { a: '' })).toBe(true);
    expect(selectors.matchesLabels(selectors.parseLabelSelector('a in (x,)'), { a: 'y' })).toBe(false);
  });
});

describe('label selectors: malformed input', () => {
  it('C-62 D-VERB-3 "env in prod" is refused with a parse error', () => {
    const error = parseError('env in prod');
    expect(error).toBeInstanceOf(selectors.SelectorError);
    expect(error!.code).toBe('invalid-selector');
    expect(error!.message).toBe("unable to parse requirement: found 'prod', expected: '('");
  });

  it.each([
    ['a in b', "unable to parse requirement: found 'b', expected: '('"],
    ['a=', "unable to parse requirement: found '', expected: identifier"],
    ['a=,b', "unable to parse requirement: found ',', expected: identifier"],
    ['=b', "found '=', expected: !, identifier, or 'end of string'"],
    ['a==b==c', "found '==', expected: ',' or 'end of string'"],
    ['a in (b', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['a in (b c)', "unable to parse requirement: found 'c', expected: ',' or ')'"],
    ['a in (b))', "found ')', expected: ',' or 'end of string'"],
    ['a in (', "unable to parse requirement: found '', expected: ',', ')' or identifier"],
    ['(a)', "found '(', expected: !, identifier, or 'end of string'"],
    ['a b', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"],
    ['!a=b', "unable to parse requirement: found '=', expected: ',' or 'end of string'"],
    ['a,', "found '', expected: identifier after ','"],
    [',a', "found ',', expected: !, identifier, or 'end of string'"],
    ['a>x', "unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer"],
    ['a!', "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt"],
    ['a>-1', /^unable to parse requirement: invalid label value: "-1": at key: "a": /],
  ])('D-VERB-3 %j → %j', (text, message) => {
    const error = parseError(text);
    expect(error).toBeInstanceOf(selectors.SelectorError);
    if (typeof message === 'string') expect(error!.message).toBe(message);
    else expect(error!.message).toMatch(message);
  });

  it.each([['bad_ key=x'], ['-a=x'], ['a/b/c=x'], [`${'k'.repeat(64)}=x`]])('D-META-11 invalid key in %j is refused', (text) => {
    expect(parseError(text)?.message).toMatch(/^unable to parse requirement: invalid label key /);
  });

  it.each([['a=-x'], [`a=${'v'.repeat(64)}`], ['a in (ok,b/c)'], ['a!=x_']])('D-META-11 invalid value in %j is refused', (text) => {
    expect(parseError(text)?.message).toMatch(/^unable to parse requirement: invalid label value: /);
  });
});

describe('label selectors: canonical text', () => {
  it.each([
    ['env=prod', 'env=prod'],
    ['tier in (web, api),env==prod,!x,y notin (b,a,b),n>5,m<3,z!=q,k', 'env==prod,k,m<3,n>5,tier in (api,web),!x,y notin (a,b),z!=q'],
    ['', ''],
  ])('%j renders as %j', (text, expected) => {
    expect(selectors.selectorToString(selectors.parseLabelSelector(text))).toBe(expected);
  });

  it('rendering and re-parsing gives the same selector', () => {
    const first = selectors.parseLabelSelector('b notin (y,x), a in (q), !c, d');
    expect(selectors.parseLabelSelector(selectors.selectorToString(first))).toEqual(first);
  });
});

describe('structured label selectors', () => {
  it('labelSelectorToString renders matchLabels as k=v (Scale status.selector)', () => {
    expect(selectors.labelSelectorToString({ matchLabels: { app: 'w1' } })).toBe('app=w1');
    expect(
      selectors.labelSelectorToString({
        matchLabels: { tier: 'web', app: 'w1' },
        matchExpressions: [
          { key: 'env', operator: 'In', values: ['prod', 'dev'] },
          { key: 'legacy', operator: 'DoesNotExist' },
          { key: 'track', operator: 'NotIn', values: ['canary'] },
          { key: 'zone', operator: 'Exists', values: [] },
        ],
      }),
    ).toBe('app=w1,env in (dev,prod),!legacy,tier=web,track notin (canary),zone');
    expect(selectors.labelSelectorToString({})).toBe('');
    expect(selectors.labelSelectorToString(undefined)).toBe('');
  });

  it('labelSelectorFromObject matches like the equivalent text', () => {
    const selector = selectors.labelSelectorFromObject({ matchLabels: { env: 'prod' }, matchExpressions: [{ key: 'tier', operator: 'Exists' }] });
    expect(selectors.matchesLabels(selector, objects['a'])).toBe(true);
    expect(selectors.matchesLabels(selector, { env: 'prod' })).toBe(false);
    expect(selectors.matchesLabels(selector, objects['b'])).toBe(false);
  });

  it('an empty structured selector matches everything, an absent one nothing', () => {
    expect(selectors.matchesLabels(selectors.labelSelectorFromObject({}), { any: 'thing' })).toBe(true);
    expect(selectors.matchesLabels(selectors.labelSelectorFromObject(undefined), {})).toBe(false);
    expect(selectors.matchesLabels(selectors.labelSelectorFromObject(null), { a: 'b' })).toBe(false);
  });

  it.each([
    [{ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }, '"Gt" is not a valid label selector operator'],
    [{ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }, "for 'in', 'notin' operators, values set can't be empty"],
    [{ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, 'values set must be empty for exists and does not exist'],
    [{ matchLabels: { 'bad key': 'x' } }, /^invalid label key "bad key": /],
    [{ matchLabels: { a: '-x' } }, /^invalid label value: "-x": at key: "a": /],
    [{ matchLabels: { a: 1 } }, /matchLabels/],
    [{ matchExpressions: {} }, /matchExpressions/],
    ['app=x', /object/],
  ])('malformed %j is refused', (value, message) => {
    expect(() => selectors.labelSelectorFromObject(value)).toThrow(selectors.SelectorError);
    expect(() => selectors.labelSelectorFromObject(value)).toThrow(message);
  });
});

describe('field selectors (D-VERB-4)', () => {
  const object =
    (name: string, namespace: string, extra: Record<string, string> = {}) =>
    (field: string): string | undefined =>
      ({ 'metadata.name': name, 'metadata.namespace': namespace, ...extra })[field];

  it('C-63 metadata.name=a selects only a; metadata.namespace!=default excludes default', () => {
    const all = [object('a', 'default'), object('b', 'default'), object('a', 'other'), object('c', 'kube-system')];
    const byName = selectors.parseFieldSelector('metadata.name=a');
    expect(all.map((get) => selectors.matchesFields(byName, get))).toEqual([true, false, true, false]);
    const notDefault = selectors.parseFieldSelector('metadata.namespace!=default');
    expect(all.map((get) => selectors.matchesFields(notDefault, get))).toEqual([false, false, true, true]);
  });

  it('C-63 the fields a selector names are listed so unsupported ones can be refused', () => {
    expect(selectors.selectorFields(selectors.parseFieldSelector('spec.size=3'))).toEqual(['spec.size']);
    expect(selectors.selectorFields(selectors.parseFieldSelector('metadata.name=a,metadata.namespace!=x,metadata.name!=b'))).toEqual([
      'metadata.name',
      'metadata.namespace',
    ]);
  });

  it("C-64 involvedObject.name=w1,involvedObject.namespace=default selects only that object's events", () => {
    const selector = selectors.parseFieldSelector('involvedObject.name=w1,involvedObject.namespace=default');
    const event = (name: string, ns: string) => object('e', ns, { 'involvedObject.name': name, 'involvedObject.namespace': ns });
    expect([event('w1', 'default'), event('w2', 'default'), event('w1', 'other')].map((get) => selectors.matchesFields(selector, get))).toEqual([
      true,
      false,
      false,
    ]);
  });

  it.each([
    ['a=b', [{ field: 'a', operator: '=', value: 'b' }]],
    ['a==b', [{ field: 'a', operator: '==', value: 'b' }]],
    ['a!=b', [{ field: 'a', operator: '!=', value: 'b' }]],
    ['a=', [{ field: 'a', operator: '=', value: '' }]],
    ['a=b\\,c', [{ field: 'a', operator: '=', value: 'b,c' }]],
    ['a=b\\=c\\\\d', [{ field: 'a', operator: '=', value: 'b=c\\d' }]],
    [
      'b=2,a!=1',
      [
        { field: 'a', operator: '!=', value: '1' },
        { field: 'b', operator: '=', value: '2' },
      ],
    ],
    ['a=1,,', [{ field: 'a', operator: '=', value: '1' }]],
    ['', []],
  ])('%j parses to %j', (text, requirements) => {
    expect(selectors.parseFieldSelector(text).requirements).toEqual(requirements);
  });

  it.each([
    ['metadata.name', "invalid selector: 'metadata.name'; can't understand 'metadata.name'"],
    ['a=b,c', "invalid selector: 'a=b,c'; can't understand 'c'"],
    ['a=b=c', 'invalid field selector: unescaped character in value: ='],
    ['a=b\\x', 'invalid field selector: invalid escape sequence: \\x'],
    ['a=b\\', 'invalid field selector: invalid escape sequence: \\'],
  ])('%j is refused: %s', (text, message) => {
    expect(() => selectors.parseFieldSelector(text)).toThrow(selectors.SelectorError);
    expect(() => selectors.parseFieldSelector(text)).toThrow(message);
  });

  it('a missing field compares as the empty string', () => {
    expect(selectors.matchesFields(selectors.parseFieldSelector('spec.nodeName='), () => undefined)).toBe(true);
    expect(selectors.matchesFields(selectors.parseFieldSelector('spec.nodeName!='), () => undefined)).toBe(false);
  });

  it('exactName recognises only a lone metadata.name equality', () => {
    expect(selectors.exactName(selectors.parseFieldSelector('metadata.name=x'))).toBe('x');
    expect(selectors.exactName(selectors.parseFieldSelector('metadata.name==x'))).toBe('x');
    expect(selectors.exactName(selectors.parseFieldSelector('metadata.name!=x'))).toBeUndefined();
    expect(selectors.exactName(selectors.parseFieldSelector('metadata.name=x,metadata.namespace=y'))).toBeUndefined();
    expect(selectors.exactName(selectors.parseFieldSelector(''))).toBeUndefined();
    expect(selectors.requiredValue(selectors.parseFieldSelector('metadata.name=x,metadata.namespace=y'), 'metadata.name')).toBe('x');
  });

  it('renders back with escapes', () => {
    const text = 'a=b\\,c,d!=e\\=f';
    expect(selectors.fieldSelectorToString(selectors.parseFieldSelector(text))).toBe(text);
  });
});
