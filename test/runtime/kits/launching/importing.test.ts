/**
 * Where a module failed to load, from the three shapes the failure can take: a TypeScript
 * loader's transform error, a syntax error, and an exception thrown while the module ran. (The
 * compiled command line is exercised end to end in test/cli/typescript.test.ts.)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as importing from '../../../../runtime/kits/launching/importing.js';
import * as launchErrors from '../../../../runtime/kits/launching/errors.js';

const CWD = '/srv/op';

function errorWithStack(name: string, message: string, frames: string[]): Error {
  const error = new Error(message);
  error.name = name;
  error.stack = [`${name}: ${message}`, ...frames.map((frame) => `    at ${frame}`)].join('\n');
  return error;
}

describe('locating load errors', () => {
  it('takes an esbuild-style error list with 0-based columns', () => {
    const error = Object.assign(new Error('Transform failed with 1 error'), {
      errors: [{ text: 'Unexpected ";"', location: { file: '/srv/op/src/main.ts', line: 4, column: 9 } }],
    });
    expect(importing.locate(error, CWD)).toEqual({ file: 'src/main.ts', line: 4, column: 10 });
  });

  it('reads the FILE:LINE:COLUMN: ERROR lines of a transform error that carries only its message', () => {
    const error = new Error('Transform failed with 1 error:\n/srv/op/src/handlers/w.ts:2:10: ERROR: Unexpected ";"');
    expect(importing.locate(error, CWD)).toEqual({ file: 'src/handlers/w.ts', line: 2, column: 11 });
  });

  it("takes the first stack frame outside node_modules and Node's internals, with file URLs and query strings", () => {
    const error = errorWithStack('TypeError', 'x is not a function', [
      'Object.load (/srv/op/node_modules/lib/index.js:10:3)',
      'file:///srv/op/src/main.ts?kopf-load=1:7:13',
      'ModuleJob.run (node:internal/modules/esm/module_job:325:25)',
    ]);
    expect(importing.locate(error, CWD)).toEqual({ file: 'src/main.ts', line: 7, column: 13 });
  });

  it("skips kopf-gen's own frames, also when kopf-gen is a linked checkout outside node_modules", () => {
    const own = path.resolve(import.meta.dirname, '../../../../dist/runtime/core/intents/handlers.js');
    const error = errorWithStack('Error', 'Handler functions need a name or an id', [`register (${own}:40:15)`, 'file:///srv/op/src/handlers/w.ts:9:3']);
    expect(importing.locate(error, CWD)).toEqual({ file: 'src/handlers/w.ts', line: 9, column: 3 });
  });

  it('keeps absolute paths outside the working directory, and knows nothing when only internals are on the stack', () => {
    expect(importing.locate(errorWithStack('Error', 'x', ['f (/opt/shared/lib.js:1:2)']), CWD)).toEqual({ file: '/opt/shared/lib.js', line: 1, column: 2 });
    expect(importing.locate(errorWithStack('Error', 'x', ['f (node:internal/modules/esm/utils:346:16)']), CWD)).toBeUndefined();
  });

  it("does not take a syntax error's loader frames for its position", () => {
    const error = new SyntaxError('Unexpected token');
    error.stack = 'SyntaxError: Unexpected token\n    at compile (/srv/op/node_modules/loader/x.js:1:1)\n    at g (/srv/op/tools/y.js:2:2)';
    expect(importing.locate(error, CWD)).toBeUndefined();
  });
});

describe('loading operator modules', () => {
  it('reports a missing file as MissingModuleError and a failing module as ModuleLoadError with its cause', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-importing-'));
    try {
      await expect(importing.loadOperatorModules({ paths: ['absent.js'], cwd: dir })).rejects.toMatchObject({
        code: 'MissingModuleError',
        message: 'No such file: absent.js',
      });
      fs.writeFileSync(path.join(dir, 'fails.mjs'), "\nthrow new RangeError('out of range');\n");
      const failure = await importing.loadOperatorModules({ paths: ['fails.mjs'], cwd: dir }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(launchErrors.ModuleLoadError);
      expect((failure as launchErrors.ModuleLoadError).message).toBe('cannot load fails.mjs:2:7: RangeError: out of range');
      expect((failure as launchErrors.ModuleLoadError).cause).toBeInstanceOf(RangeError);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
