/**
 * `kopf-gen run` on operator files as users write them, through the compiled binary: TypeScript
 * through tsx whatever the enclosing package's `type`, CommonJS `.cts`, and load failures reported
 * in one line with file, line and column. No cluster is configured, so a file that loads prints
 * its line while loading and the command then stops for lack of credentials (exit 1, R-CLI-701) —
 * which is enough to see what the loading did.
 */
import * as child from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as typescript from '../../cli/typescript.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
let dir: string;

beforeAll(() => {
  if (!fs.existsSync(path.join(ROOT, 'dist/cli/main.js'))) throw new Error('dist/ is missing: run npm run build first (npm test does)');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-ts-'));
  // What `npm init -y` writes since npm 11: a CommonJS package.
  fs.writeFileSync(path.join(dir, 'package.json'), '{ "name": "op", "version": "1.0.0", "type": "commonjs" }\n');
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(ROOT, path.join(dir, 'node_modules', 'kopf-gen'));
  const files: Record<string, string> = {
    'esm.ts': "import { on } from 'kopf-gen/runtime';\nconst n: number = await Promise.resolve(42);\nconsole.log(`loaded with ${n}`, typeof on.startup);\n",
    'common.cts': "const { on } = require('kopf-gen/runtime') as typeof import('kopf-gen/runtime');\nconsole.log('loaded as CommonJS', typeof on.startup);\n",
    'syntax.ts': "import { on } from 'kopf-gen/runtime';\nconst b = ;\n",
    'throws.ts': "import { on } from 'kopf-gen/runtime';\n\nthrow new Error('boom at load');\n",
    'syntax.mjs': 'const a = 1;\nconst b = ;\n',
  };
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
});

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

function kopfGenRun(file: string): { status: number | null; output: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: dir, NO_COLOR: '1' };
  delete env['KUBECONFIG'];
  delete env['NODE_OPTIONS'];
  const result = child.spawnSync(process.execPath, [path.join(ROOT, 'bin/kopf-gen.js'), 'run', '-A', '--standalone', '--log-format', 'plain', file], {
    cwd: dir,
    env,
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('kopf-gen run loads operator files', () => {
  it('runs a .ts file with imports and top-level await as an ES module in a CommonJS package', () => {
    const { status, output } = kopfGenRun('esm.ts');
    expect(output).toContain('loaded with 42 function');
    expect(status).toBe(1); // then: no credentials
    expect(output).toMatch(/^kopf-gen run: No credentials found: /m);
  });

  it('runs a .cts file as CommonJS', () => {
    expect(kopfGenRun('common.cts').output).toContain('loaded as CommonJS function');
  });

  it.each([
    ['syntax.ts', 'kopf-gen run: cannot load syntax.ts:2:11: SyntaxError: Unexpected ";"\n'],
    ['throws.ts', 'kopf-gen run: cannot load throws.ts:3:7: Error: boom at load\n'],
    ['syntax.mjs', "kopf-gen run: cannot load syntax.mjs:2:11: SyntaxError: Unexpected token ';'\n"],
  ])('names the file, line and column when %s fails to load, in one line', (file, line) => {
    const { status, output } = kopfGenRun(file);
    expect(status).toBe(1);
    expect(output).toBe(line);
  });
});

describe('which files need the TypeScript loader', () => {
  it.each([
    [['dist/main.js'], false],
    [['main.mjs', 'other.cjs'], false],
    [['src/main.ts'], true],
    [['a.js', 'b.mts'], true],
    [['c.cts'], true],
  ])('%j → %s', (files, expected) => {
    expect(typescript.needsLoader(files)).toBe(expected);
  });
});
