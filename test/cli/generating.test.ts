/**
 * The command line hands `init`, `generate` and `add` to the generator package, and says how to
 * install it when it is missing — but only when it is the generator that is missing, not something
 * an installed generator needs. (The missing-generator message itself is checked on a real
 * install in test/packaging/packaging.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import * as generating from '../../cli/generating.js';

const failure = (code: string, message: string): Error => Object.assign(new Error(message), { code });

describe('a missing generator', () => {
  it.each([
    [failure('ERR_MODULE_NOT_FOUND', "Cannot find package '@kopf-gen/generator' imported from /app/node_modules/kopf-gen/dist/cli/generating.js"), true],
    [failure('MODULE_NOT_FOUND', "Cannot find module '@kopf-gen/generator/cli'\nRequire stack:\n- /app/package.json"), true],
    [failure('ERR_MODULE_NOT_FOUND', "Cannot find package 'ts-morph' imported from /app/node_modules/@kopf-gen/generator/dist/detecting.js"), false],
    [failure('ERR_MODULE_NOT_FOUND', "Cannot find module '/app/node_modules/@kopf-gen/generator/dist/cli.js' imported from /app/x.js"), false],
    [new Error("Cannot find package '@kopf-gen/generator'"), false],
  ])('%s → %s', (error, expected) => {
    expect(generating.isMissing(error)).toBe(expected);
  });

  it('is found in this repository (the workspace) and hands over the command line', async () => {
    const generator = await generating.loadGenerator('init');
    let text = '';
    const output = {
      out: (t: string) => {
        text += t;
      },
      err: (t: string) => {
        text += t;
      },
      stdin: async () => '',
    };
    expect(await generator.main(['init', '--help'], output)).toBe(0);
    expect(text).toMatch(/^Usage: kopf-gen init \[options\]/);
  });
});
