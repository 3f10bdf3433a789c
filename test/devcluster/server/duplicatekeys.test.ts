import { describe, expect, it } from 'vitest';
import * as duplicatekeys from '../../../devcluster/server/duplicatekeys.js';

describe('findDuplicateKeys', () => {
  it.each([
    ['{}', []],
    ['{"a":1,"b":2}', []],
    ['{"a":1,"a":2}', ['a']],
    ['{"spec":{"size":1,"size":2}}', ['spec.size']],
    ['{"a":1,"a":2,"a":3}', ['a']],
    ['{"a":{"x":1},"b":{"x":1}}', []],
    ['{"items":[{"n":1,"n":2},{"n":1}]}', ['items[0].n']],
    ['[{"k":1,"k":2}]', ['[0].k']],
    ['{"a\\"b":1,"a\\u0022b":2}', ['a"b']],
    ['{"s":"x,\\"y\\":}","s2":[1, 2.5e3, true, false, null],"s2":0}', ['s2']],
    [' { "m" : { "z" : 1 , "z" : 2 } , "m" : 3 } ', ['m.z', 'm']],
  ])('%s → %j', (text, expected) => {
    expect(duplicatekeys.findDuplicateKeys(text)).toEqual(expected);
  });

  it('never throws on malformed input', () => {
    for (const text of ['{', '{"a":', '{"a":1,"a"', '[1,', '"abc', '']) {
      expect(() => duplicatekeys.findDuplicateKeys(text)).not.toThrow();
    }
    expect(duplicatekeys.findDuplicateKeys('{"a":1,"a":2,')).toEqual(['a']);
  });
});
