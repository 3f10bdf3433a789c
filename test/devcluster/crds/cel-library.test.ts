import { describe, expect, it } from 'vitest';
import * as cellibrary from '../../../devcluster/crds/cel-library.js';

const run = (expression: string, self: unknown = null): unknown => cellibrary.environment.evaluate(expression, { self });

describe('Kubernetes CEL library', () => {
  it.each<[string, unknown]>([
    // lists
    ['[1, 2, 2, 5].isSorted()', true],
    ['[3, 1].isSorted()', false],
    ['["a", "b", "c"].isSorted()', true],
    ['[1, 2, 3].sum()', 6n],
    ['[1.5, 2.5].sum()', 4],
    ['[].sum()', 0n],
    ['[3, 1, 2].min()', 1n],
    ['[3, 1, 2].max()', 3n],
    ['["b", "a", "c"].min()', 'a'],
    ['[1, 2, 1].indexOf(1)', 0n],
    ['[1, 2, 1].lastIndexOf(1)', 2n],
    ['[1, 2].indexOf(5)', -1n],
    ['[[1], [2]].indexOf([2])', 1n],
    // strings
    ['"HeLLo".lowerAscii()', 'hello'],
    ['"HeLLo".upperAscii()', 'HELLO'],
    ['"a,b,c".split(",")', ['a', 'b', 'c']],
    ['["a", "b"].join("-")', 'a-b'],
    ['"  x ".trim()', 'x'],
    ['"aaa".replace("a", "b")', 'bbb'],
    ['"aaa".replace("a", "b", 2)', 'bba'],
    ['"hello".substring(1, 3)', 'el'],
    ['"hello".indexOf("l")', 2n],
    ['"hello".lastIndexOf("l")', 3n],
    ['"héllo".charAt(1)', 'é'],
    ['"abc".charAt(3)', ''],
    ['"abc".reverse()', 'cba'],
    ['"abc123def456".find("[0-9]+")', '123'],
    ['"abc123def456".findAll("[0-9]+")', ['123', '456']],
    ['"abc123def456".findAll("[0-9]+", 1)', ['123']],
    // URLs and IPs
    ['isURL("https://example.com:8443/p?q=1")', true],
    ['isURL("/just/a/path")', true],
    ['isURL("example.com/chart")', false],
    ['isURL("http://" + "example.com/chart")', true],
    ['url("https://u@example.com:8443/a/b?x=1&x=2").getScheme()', 'https'],
    ['url("https://u@example.com:8443/a/b?x=1&x=2").getHost()', 'example.com:8443'],
    ['url("https://u@example.com:8443/a/b?x=1&x=2").getHostname()', 'example.com'],
    ['url("https://u@example.com:8443/a/b?x=1&x=2").getPort()', '8443'],
    ['url("https://u@example.com:8443/a/b?x=1&x=2").getEscapedPath()', '/a/b'],
    ['url("https://example.com/?x=1&x=2&y=3").getQuery()["x"]', ['1', '2']],
    ['url("https://[::1]:80/").getHostname()', '::1'],
    ['isIP("10.0.0.1")', true],
    ['isIP("010.0.0.1")', false],
    ['isIP("1.2.3")', false],
    ['isIP("::1")', true],
    ['isIP("fe80::1%eth0")', false],
    ['isIP("example.com")', false],
    ['isCIDR("10.0.0.0/8")', true],
    ['isCIDR("10.0.0.0/33")', false],
    ['isCIDR("::/0")', true],
    ['isCIDR("10.0.0.0")', false],
  ])('D-CRD-13 %s', (expression, expected) => {
    expect(run(expression)).toEqual(expected);
  });

  it.each<[string, unknown, unknown]>([
    ['has(self.a) && !has(self.b)', { a: 1n }, true],
    ['size(self.l) == 2 && self.l.size() == 2', { l: [1n, 2n] }, true],
    ['"x" in self.m && 2 in self.l', { m: { x: 1n }, l: [1n, 2n] }, true],
    ['self.all(x, x > 0)', [1n, 2n], true],
    ['self.exists(x, x > 1)', [1n, 2n], true],
    ['self.exists_one(x, x > 0)', [1n, 2n], false],
    ['self.map(x, x * 2)', [1n, 2n], [2n, 4n]],
    ['self.filter(x, x > 1)', [1n, 2n, 3n], [2n, 3n]],
    ['self.all(k, k.startsWith("a"))', { ab: 1n, ac: 2n }, true],
    ['self.startsWith("ab") && self.endsWith("yz") && self.contains("mm")', 'abmmyz', true],
    ['self.matches("^[a-z]+$")', 'abc', true],
    ['self.matches("^[a-z]+$")', 'aBc', false],
    ["duration(self) >= duration('1ms')", '1h30m', true],
    ["duration(self) >= duration('1ms')", '500us', false],
  ])('D-CRD-13 standard CEL: %s', (expression, self, expected) => {
    expect(run(expression, self)).toEqual(expected);
  });

  it.each([
    ['[].min()', /min called on empty list/],
    ['[].max()', /max called on empty list/],
    ['"abc".charAt(4)', /index out of range/],
    ['url("not a url")', /URL parse error/],
    ['[1, "a"].isSorted()', /no such overload/],
  ])('D-CRD-13 %s is an evaluation error', (expression, message) => {
    expect(() => run(expression)).toThrow(message);
  });

  it.each<[string, unknown, unknown]>([
    [String.raw`self.matches(r'(?i)^\pL+\z')`, 'Ünïcode', true],
    [String.raw`self.matches(r'(?i)^\pL+\z')`, 'abc\n', false],
    [String.raw`self.matches(r'^\d+$')`, '١٢', false],
    ["self.matches('(?s)^a.b$')", 'a\nb', true],
    ["self.matches('^a.b$')", 'a\nb', false],
    ["self.matches('b')", 'abc', true],
    ["self.matches('(?P<x>a)(?P<x>b)')", 'ab', true],
    ["matches(self, '^[a-z]+$')", 'abc', true],
    ["self.find('a|ab')", 'xab', 'a'],
    ["self.find('[0-9]+')", 'abc', ''],
    ["self.findAll('a*')", 'baaab', ['', 'aaa', '']],
    ["self.findAll('')", 'a😀', ['', '', '']],
    ["self.findAll('.', 2)", '😀é!', ['😀', 'é']],
    ["self.findAll('.', 0)", 'abc', []],
  ])('D-CRD-20 %s on %j', (expression, self, expected) => {
    expect(run(expression, self)).toEqual(expected);
  });

  it.each([
    ['self.matches(self)', '(', 'error parsing regexp: missing closing ): `(`'],
    ['self.find(self)', 'a\\', 'Illegal regex: error parsing regexp: trailing backslash at end of expression: ``'],
    ['self.findAll(self, 1)', '(?<=a)', 'Illegal regex: error parsing regexp: invalid named capture: `(?<=a)`'],
    ["self.matches('a')", 1n, "found no matching overload for 'int.matches(string)'"],
  ])('D-CRD-20 %s with self = %s is an evaluation error', (expression, self, message) => {
    let error: unknown;
    try {
      run(expression, self);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(Error);
    expect((error as { summary: string }).summary).toBe(message);
  });

  it('D-CRD-20 a matches() call on a non-string is a type error', () => {
    const checked = cellibrary.environment.check("1.matches('a')");
    expect(checked.valid).toBe(false);
    expect(checked.error?.message).toContain("found no matching overload for 'int.matches(string)'");
  });

  it('D-CRD-13 optionalOldSelf environment types oldSelf as an optional', () => {
    const env = cellibrary.optionalOldSelfEnvironment;
    expect(env.check('self >= oldSelf.value()').valid).toBe(true);
    expect(env.check('oldSelf + 1').valid).toBe(false);
  });
});

describe('celEquals', () => {
  it.each<[unknown, unknown, boolean]>([
    [1n, 1, true],
    [1, 1n, true],
    [1n, 2n, false],
    ['a', 'a', true],
    [[1n, { a: 'x' }], [1n, { a: 'x' }], true],
    [[1n, { a: 'x' }], [1n, { a: 'y' }], false],
    [{ a: 1n }, { a: 1n, b: 2n }, false],
    [{ a: 1n }, { b: 1n }, false],
    [null, null, true],
    [null, {}, false],
    [[], {}, false],
  ])('celEquals(%o, %o) is %s', (a, b, expected) => {
    expect(cellibrary.celEquals(a, b)).toBe(expected);
  });
});
