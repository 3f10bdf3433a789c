/**
 * `main(import.meta)`, the last line of a generated project's src/main.ts: it runs the operator
 * when the module is the process's entry point (`node dist/main.js -A`), does nothing when a
 * launcher (`kopf-gen run`, `KopfRunner`) loads the module, and fails loudly otherwise, because
 * then nothing would ever run the operator.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as url from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as cli from '../../runtime/kits/launching/commands.js';
import * as importing from '../../runtime/kits/launching/importing.js';
import * as launchErrors from '../../runtime/kits/launching/errors.js';

const CLI_MODULE = path.resolve(import.meta.dirname, '../../runtime/kits/launching/commands.ts');
let dir: string;
const href = (file: string): string => url.pathToFileURL(path.join(dir, file)).href;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-main-'));
  fs.mkdirSync(path.join(dir, 'dist'));
  fs.writeFileSync(path.join(dir, 'dist', 'main.js'), '');
  fs.writeFileSync(path.join(dir, 'other.js'), '');
  fs.symlinkSync(path.join(dir, 'dist', 'main.js'), path.join(dir, 'linked.js'));
  fs.writeFileSync(path.join(dir, 'package.json'), '{ "main": "dist/main.js" }\n');
});

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('the entry point', () => {
  it.each([
    ['the file itself', 'dist/main.js', true],
    ['the file without its extension', 'dist/main', true],
    ['a symbolic link to the file', 'linked.js', true],
    ['the package folder (node .), by package.json main', '.', true],
    ['another file', 'other.js', false],
    ['a file that does not exist', 'absent.js', false],
  ])('%s: %s → %s', (_title, script, expected) => {
    expect(cli.isEntryPoint(href('dist/main.js'), ['node', path.join(dir, script)])).toBe(expected);
  });

  it('is never a module that is not a file, nor anything when node runs no script', () => {
    expect(cli.isEntryPoint('data:text/javascript,', ['node', path.join(dir, 'dist/main.js')])).toBe(false);
    expect(cli.isEntryPoint(href('dist/main.js'), ['node'])).toBe(false);
  });
});

describe('main(import.meta)', () => {
  it("runs the run command with the process's options when the module is the entry point", async () => {
    let text = '';
    const output = {
      out: (t: string) => {
        text += t;
      },
      err: (t: string) => {
        text += t;
      },
    };
    const saved = process.exitCode;
    try {
      await cli.main({ url: href('dist/main.js') }, { argv: ['node', path.join(dir, 'dist/main.js'), '--help'], output, cwd: dir });
      expect(process.exitCode).toBe(0);
    } finally {
      process.exitCode = saved;
    }
    expect(text).toMatch(/^Usage: node dist\/main\.js \[options\] \[paths\.\.\.\]/);
    expect(text).toContain('-A, --all-namespaces');
  });

  it('fails loudly when the module is imported by anything but a launcher: nothing would run the operator', async () => {
    const failure = cli.main({ url: href('dist/main.js') }, { argv: ['node', '/opt/pm2/container.js'], cwd: dir });
    await expect(failure).rejects.toBeInstanceOf(launchErrors.EntryPointError);
    await expect(failure).rejects.toThrow(
      "main(import.meta) in dist/main.js runs the operator only when that file is the process's entry point " +
        '(node dist/main.js), or does nothing when kopf-gen run or KopfRunner loads it; here the entry point is /opt/pm2/container.js, ' +
        'so nothing would run the operator.',
    );
  });

  it('does nothing when a launcher loads the module as an operator module', async () => {
    fs.writeFileSync(
      path.join(dir, 'operator.ts'),
      [
        `import { main } from ${JSON.stringify(CLI_MODULE)};`,
        'await main(import.meta);',
        '(globalThis as { loadedOperator?: boolean }).loadedOperator = true;',
        '',
      ].join('\n'),
    );
    expect(importing.isLoadingOperatorModules()).toBe(false);
    await importing.loadOperatorModules({ paths: ['operator.ts'], cwd: dir });
    expect((globalThis as { loadedOperator?: boolean }).loadedOperator).toBe(true);
    expect(importing.isLoadingOperatorModules()).toBe(false);
  });
});
