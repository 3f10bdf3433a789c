/**
 * `KopfRunner` as a project's own tests use it, from the compiled package and Node's own module
 * loader (not vitest's, which transforms the runtime in this repository): a test file run by
 * node's test runner — plain, or with tsx imported first — starts two runners in a row on a
 * TypeScript entry file that reaches its handlers through an import. Each runner must load the
 * TypeScript (R-TEST-101), get a registry of its own with every handler and fresh module-level
 * state (R-TEST-102), and a runner whose file fails to load must reject `start()` (R-TEST-103). A
 * compiled operator must load without tsx: a resolve hook refuses tsx in that run.
 */
import * as child from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../../..');
let dir: string;

/** The project's test file, for `node --test`: two runners, then one that cannot load its file. */
const TEST_FILE = `
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as module from 'node:module';
import * as path from 'node:path';
import { test } from 'node:test';
import { DevCluster, KopfRunner } from 'kopf-gen/testing';

const OPERATOR = process.env.OPERATOR;
if (process.env.REFUSE_TSX) {
  const hook = "export async function resolve(s, c, next) { const r = await next(s, c); if (r.url.includes('/tsx/')) throw new Error('tsx was loaded: ' + r.url); return r; }";
  module.register('data:text/javascript,' + encodeURIComponent(hook));
}

test('two runners in a row, each with every handler of ' + OPERATOR, async () => {
  const cluster = await DevCluster.start({ crds: [fs.readFileSync('kopfexamples.yaml', 'utf8')] });
  try {
    const kubeconfig = cluster.writeKubeconfig(path.resolve('kubeconfig'));
    for (const round of [1, 2]) {
      const runner = await new KopfRunner(['run', '-A', '--standalone', OPERATOR], { kubeconfig, timeout: 20 }).start();
      await runner.stop();
      const ids = runner.registry.activityHandlers('startup').map((handler) => handler.id);
      assert.deepEqual(ids, ['started'], 'round ' + round);
      assert.match(runner.output, /handlers loaded 1 time\\(s\\)/, 'round ' + round);
      console.log('round ' + round + ': ' + ids.join(', ') + ', ' + /handlers loaded \\d+ time\\(s\\)/.exec(runner.output)[0]);
    }
  } finally {
    await cluster.stop();
  }
});

test('start() rejects with the load error', async () => {
  const broken = OPERATOR.replace('main', 'broken');
  const runner = new KopfRunner(['run', '-A', '--standalone', broken], { timeout: 20 });
  await assert.rejects(runner.start(), (error) => error.code === 'ModuleLoadError' && error.message.startsWith('cannot load ' + broken + ':2:'));
  assert.equal(runner.exitCode, 1);
  console.log('rejected: ' + runner.exception.message);
});
`;

const HANDLERS = (typed: boolean): string =>
  [
    "import { on } from 'kopf-gen/runtime';",
    typed ? 'let loaded: number = (globalThis as { loaded?: number }).loaded ?? 0;' : 'let loaded = 0;',
    'loaded += 1;',
    'on.startup(function started({ logger }) { logger.info(`handlers loaded ${loaded} time(s)`); });',
    '',
  ].join('\n');

beforeAll(() => {
  if (!fs.existsSync(path.join(ROOT, 'dist/testing/index.js'))) throw new Error('dist/ is missing: run npm run build first (npm test does)');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-runner-loading-'));
  fs.writeFileSync(path.join(dir, 'package.json'), '{ "name": "op", "private": true, "type": "module" }\n');
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(ROOT, path.join(dir, 'node_modules', 'kopf-gen'));
  fs.symlinkSync(path.join(ROOT, 'node_modules', 'tsx'), path.join(dir, 'node_modules', 'tsx'));
  fs.copyFileSync(path.join(ROOT, 'fixtures/crds/kopfexamples.yaml'), path.join(dir, 'kopfexamples.yaml'));
  fs.mkdirSync(path.join(dir, 'src'));
  const files: Record<string, string> = {
    'src/main.ts': "import { main } from 'kopf-gen/runtime';\nimport './handlers.js';\n\nawait main(import.meta);\n",
    'src/handlers.ts': HANDLERS(true),
    'src/main.js': "import { main } from 'kopf-gen/runtime';\nimport './handlers.js';\n\nawait main(import.meta);\n",
    'src/handlers.js': HANDLERS(false),
    'src/broken.ts': "import { on } from 'kopf-gen/runtime';\nconst b: number = ;\n",
    'src/broken.js': "import { on } from 'kopf-gen/runtime';\nconst b = ;\n",
    'runners.test.mjs': TEST_FILE,
  };
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
});

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

function nodeTest(execArgv: readonly string[], env: Record<string, string>): { status: number | null; output: string } {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, HOME: dir, NO_COLOR: '1', ...env };
  delete childEnv['KUBECONFIG'];
  delete childEnv['NODE_OPTIONS'];
  const result = child.spawnSync(process.execPath, [...execArgv, '--test', 'runners.test.mjs'], { cwd: dir, env: childEnv, encoding: 'utf8', timeout: 90_000 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('KopfRunner from the compiled package under node --test', () => {
  it('R-TEST-101 R-TEST-102 R-TEST-103 loads a TypeScript entry with plain node: each runner has every handler, fresh; a broken file rejects start()', () => {
    const { status, output } = nodeTest([], { OPERATOR: 'src/main.ts' });
    expect(output).toContain('round 1: started, handlers loaded 1 time(s)');
    expect(output).toContain('round 2: started, handlers loaded 1 time(s)');
    expect(output).toMatch(/rejected: cannot load src\/broken\.ts:2:\d+: SyntaxError/);
    expect(status, output).toBe(0);
  }, 100_000);

  it('R-TEST-101 R-TEST-102 with tsx imported first, the same', () => {
    const { status, output } = nodeTest(['--import', 'tsx'], { OPERATOR: 'src/main.ts' });
    expect(output).toContain('round 2: started, handlers loaded 1 time(s)');
    expect(status, output).toBe(0);
  }, 100_000);

  it('R-TEST-101 R-TEST-102 a compiled operator loads without tsx, every handler in every runner', () => {
    const { status, output } = nodeTest([], { OPERATOR: 'src/main.js', REFUSE_TSX: '1' });
    expect(output).toContain('round 2: started, handlers loaded 1 time(s)');
    expect(output).toMatch(/rejected: cannot load src\/broken\.js:2:\d+: SyntaxError/);
    expect(status, output).toBe(0);
  }, 100_000);
});
