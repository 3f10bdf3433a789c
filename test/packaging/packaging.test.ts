/**
 * kopf-gen as a user gets it from the registry: the two packages are packed with `npm pack`,
 * installed from the tarballs into a temporary folder that has no link to this checkout, and used
 * there with plain Node — `kopf-gen init`, the generated project's `npm install`, `npm run
 * typecheck`, its own `npm test` (vitest, which leaves the installed kopf-gen to Node: the
 * generated test runs the operator in-process with `KopfRunner`, and a second test file runs two
 * runners in a row), the same runner under node's test runner with and without tsx, `npm run
 * build`, a production install (`npm install --omit=dev`), and the compiled operator (`node
 * dist/main.js`) handling an object on a devcluster started from the installed package. The steps
 * share one folder and run in order.
 *
 * Needs the compiled distribution (`npm test` builds it first; `npm run build` otherwise) and the
 * package registry for the packages' own dependencies, as any install does. The production
 * install's size is printed for the record; `npm run bench -- startup` reports it too.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as demo from '../../scripts/demo.js';
import * as conversionProjects from '../support/conversionprojects.js';
import { requireKubectl } from '../support/kubectl.js';
import { childEnv, run, until } from '../support/processes.js';

const CHECKOUT = demo.CHECKOUT;
const CRD = path.join(CHECKOUT, 'fixtures/crds/kopfexamples.yaml');
const SAMPLE = path.join(CHECKOUT, 'fixtures/objects/kopf-example-1.yaml');
const NPM_FLAGS = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];
/** What an operator's production install must not contain: the generator's toolchain and the heavy client. */
const TOOLCHAIN = [
  'typescript',
  'ts-morph',
  '@ts-morph/common',
  'openapi-typescript',
  'handlebars',
  'esbuild',
  'tsx',
  '@kubernetes/client-node',
  '@kopf-gen/generator',
];

/**
 * A test file added to the generated project: two runners in a row in one process, each with every
 * handler `src/main.ts` reaches through its imports (R-TEST-102), with no configuration (R-TEST-101).
 */
const SECOND_RUNNER_TEST = `import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect, it } from 'vitest';
import { DevCluster, KopfRunner } from 'kopf-gen/testing';

it('two runners in a row, each with every handler', async () => {
  const cluster = await DevCluster.start({ crds: [fs.readFileSync('crds/kopfexamples.yaml', 'utf8')] });
  try {
    const kubeconfig = cluster.writeKubeconfig(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'runners-')), 'kubeconfig'));
    const rounds: string[][] = [];
    for (let round = 0; round < 2; round += 1) {
      const runner = await new KopfRunner(['run', '-A', '--standalone', 'src/main.ts'], { kubeconfig, timeout: 10 }).start();
      await runner.stop();
      rounds.push(runner.registry.handlers.map((handler) => handler.id).sort());
    }
    console.log(\`runners: \${JSON.stringify(rounds)}\`);
    expect(rounds[0]).toContain('createKopfExample');
    expect(rounds[1]).toEqual(rounds[0]);
  } finally {
    await cluster.stop();
  }
});
`;

/** The same with node's test runner (R-TEST-101): a plain ES module, run with and without tsx imported. */
const NODE_RUNNER_TEST = `import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { DevCluster, KopfRunner } from 'kopf-gen/testing';

test('KopfRunner under node --test', async () => {
  const cluster = await DevCluster.start({ crds: [fs.readFileSync('crds/kopfexamples.yaml', 'utf8')] });
  try {
    const kubeconfig = cluster.writeKubeconfig(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'node-runner-')), 'kubeconfig'));
    for (let round = 0; round < 2; round += 1) {
      const runner = await new KopfRunner(['run', '-A', '--standalone', 'src/main.ts'], { kubeconfig, timeout: 10 }).start();
      await runner.stop();
      const ids = runner.registry.handlers.map((handler) => handler.id);
      assert.ok(ids.includes('createKopfExample'), ids.join(', '));
      console.log('node runner ' + round + ': ' + ids.sort().join(', '));
    }
  } finally {
    await cluster.stop();
  }
});
`;

/** The folder's size in bytes, as `du` counts it (apparent sizes of files, following no links). */
function sizeOf(folder: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += fs.statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return total;
}

describe('the packed packages, installed from their tarballs as a user would', () => {
  let work: string;
  let tarballs: { kopfGen: string; generator: string };
  let tools: string;
  let project: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    for (const file of ['dist/runtime/index.js', 'dist/cli/main.js', 'generator/dist/index.js', 'generator/templates/package.json.hbs']) {
      if (!fs.existsSync(path.join(CHECKOUT, file))) throw new Error(`${file} is missing: run npm run build first (npm test does)`);
    }
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-packaging-'));
    const destination = path.join(work, 'tarballs');
    fs.mkdirSync(destination);
    // Scripts are skipped: npm test has just built the distribution, and a rebuild here would
    // rewrite dist/ under the feet of the suites running in parallel.
    for (const args of [['pack'], ['pack', '--workspace', 'generator']]) {
      const packed = await run('npm', [...args, '--ignore-scripts', '--pack-destination', destination, '--loglevel=error'], {
        cwd: CHECKOUT,
        timeoutMs: 60_000,
      });
      if (packed.code !== 0) throw new Error(`npm ${args.join(' ')} failed:\n${packed.output}`);
    }
    const names = fs.readdirSync(destination);
    const find = (pattern: RegExp): string => {
      const name = names.find((n) => pattern.test(n));
      if (!name) throw new Error(`no tarball matching ${pattern} among ${names.join(', ')}`);
      return path.join(destination, name);
    };
    tarballs = { kopfGen: find(/^kopf-gen-\d.*\.tgz$/), generator: find(/^kopf-gen-generator-\d.*\.tgz$/) };
    tools = path.join(work, 'tools');
    project = path.join(work, 'my-operator');
    fs.mkdirSync(tools);
    fs.writeFileSync(path.join(tools, 'package.json'), '{ "name": "tools", "private": true }\n');
    fs.copyFileSync(CRD, path.join(work, 'kopfexamples.yaml'));
  }, 120_000);

  afterAll(() => {
    for (const child of children) {
      if (child.pid === undefined || child.exitCode !== null) continue;
      for (const pid of demo.scriptProcesses(child.pid)) process.kill(pid, 'SIGKILL');
      child.kill('SIGKILL');
    }
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it("the runtime tarball holds compiled JavaScript with declarations and no tests; the generator's holds its templates", () => {
    const list = (tarball: string): string[] => spawnSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    const runtime = list(tarballs.kopfGen);
    expect(runtime).toEqual(
      expect.arrayContaining([
        'package/bin/kopf-gen.js',
        'package/dist/runtime/index.js',
        'package/dist/runtime/index.d.ts',
        'package/dist/runtime/index.d.ts.map',
        'package/dist/devcluster/testing.js',
        'package/dist/testing/index.js',
        'package/dist/cli/main.js',
      ]),
    );
    expect(runtime.filter((file) => /(^|\/)test\/|\.test\.ts$|^package\/generator\//.test(file))).toEqual([]);
    const generator = list(tarballs.generator);
    expect(generator).toEqual(
      expect.arrayContaining([
        'package/dist/index.js',
        'package/dist/index.d.ts',
        'package/dist/cli.js',
        'package/templates/package.json.hbs',
        'package/README.md',
        'package/LICENSE',
      ]),
    );
  });

  it("kopf-gen alone (an operator's install) says in one line how to get the generator for init", async () => {
    // Warnings shown (the last --loglevel wins): the package has no install scripts for npm to warn about.
    const installed = await run('npm', ['install', ...NPM_FLAGS, '--loglevel=warn', tarballs.kopfGen], { cwd: tools, timeoutMs: 180_000 });
    expect(installed.code, installed.output).toBe(0);
    expect(installed.output).not.toMatch(/install-scripts/);
    const init = await run(path.join(tools, 'node_modules/.bin/kopf-gen'), ['init', '--crd', '../kopfexamples.yaml', '--out', project], {
      cwd: tools,
      timeoutMs: 30_000,
    });
    expect(init.code).toBe(1);
    expect(init.output).toBe(
      'kopf-gen: kopf-gen init needs the generator, a separate package so that operators do not ship it. ' +
        'Install it (npm install --save-dev @kopf-gen/generator) or run: npx -p kopf-gen -p @kopf-gen/generator kopf-gen init …\n',
    );
    expect(fs.existsSync(project)).toBe(false);
  }, 200_000);

  it('with the generator installed too, kopf-gen init writes a project that depends on the tarballs', async () => {
    const installed = await run('npm', ['install', ...NPM_FLAGS, tarballs.kopfGen, tarballs.generator], { cwd: tools, timeoutMs: 180_000 });
    expect(installed.code, installed.output).toBe(0);
    const init = await run(path.join(tools, 'node_modules/.bin/kopf-gen'), ['init', '--crd', '../kopfexamples.yaml', '--out', project], {
      cwd: tools,
      timeoutMs: 60_000,
    });
    expect(init.code, init.output).toBe(0);
    const manifest = JSON.parse(fs.readFileSync(path.join(project, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(manifest.dependencies).toEqual({ 'kopf-gen': `file:${tarballs.kopfGen}` });
    expect(manifest.devDependencies['@kopf-gen/generator']).toBe(`file:${tarballs.generator}`);
    // The generator as a library, under kopf-gen's subpath and under its own name.
    const library = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const a = await import('kopf-gen/generator'); const b = await import('@kopf-gen/generator'); console.log(typeof a.init, a.init === b.init);",
      ],
      { cwd: tools, timeoutMs: 30_000 },
    );
    expect(library.output).toBe('function true\n');
  }, 200_000);

  it('the project installs, type-checks and passes its own tests, with the operator in-process (R-TEST-101, R-TEST-102, R-TEST-104)', async () => {
    const installed = await run('npm', ['install', ...NPM_FLAGS], { cwd: project, timeoutMs: 300_000 });
    expect(installed.code, installed.output).toBe(0);
    fs.writeFileSync(path.join(project, 'test/second-runner.test.ts'), SECOND_RUNNER_TEST);
    const started = Date.now();
    const typecheck = await run('npm', ['run', 'typecheck'], { cwd: project, timeoutMs: 120_000 });
    expect(typecheck.code, typecheck.output).toBe(0);
    console.log(`packaging: npm run typecheck of the generated project took ${((Date.now() - started) / 1000).toFixed(1)} s`);
    // The generated test alone first, so that its time is its own: in-process, on virtual time. Its
    // time is printed for the record (target: at most 2 seconds, the devcluster's start in beforeAll
    // aside); tests do not assert timings — a loaded machine would fail it with nothing broken.
    const test = await run('npm', ['test', '--', '--reporter=verbose', 'kopf-example'], { cwd: project, timeoutMs: 120_000 });
    expect(test.code, test.output).toBe(0);
    expect(test.output).toMatch(/Tests\s+1 passed \(1\)/);
    const generated = /✓ test\/kopf-example\.test\.ts > runs the create handler of a new KopfExample (\d+)ms/.exec(test.output);
    expect(generated, test.output).not.toBeNull();
    console.log(`packaging: the generated test took ${generated![1]} ms (target: ≤ 2000 ms)`);
    const second = await run('npm', ['test', '--', 'second-runner'], { cwd: project, timeoutMs: 120_000 });
    expect(second.code, second.output).toBe(0);
    expect(second.output).toMatch(/runners: \[\[.*"createKopfExample".*\],\[.*"createKopfExample".*\]\]/);
    fs.rmSync(path.join(project, 'test/second-runner.test.ts'));
  }, 560_000);

  it('R-TEST-501 a reconcile project (init --handlers reconcile) type-checks and passes its own test: the Deployment created, its readiness reported', async () => {
    const reconciling = path.join(path.dirname(project), 'my-reconciler');
    const init = await run(
      path.join(tools, 'node_modules/.bin/kopf-gen'),
      ['init', '--crd', '../kopfexamples.yaml', '--handlers', 'reconcile', '--out', reconciling],
      {
        cwd: tools,
        timeoutMs: 60_000,
      },
    );
    expect(init.code, init.output).toBe(0);
    // The same dependencies as the project above (both depend on the tarballs): its install serves both.
    fs.symlinkSync(path.join(project, 'node_modules'), path.join(reconciling, 'node_modules'), 'dir');
    const typecheck = await run('npm', ['run', 'typecheck'], { cwd: reconciling, timeoutMs: 120_000 });
    expect(typecheck.code, typecheck.output).toBe(0);
    const test = await run('npm', ['test', '--', '--reporter=verbose'], { cwd: reconciling, timeoutMs: 120_000 });
    expect(test.code, test.output).toBe(0);
    expect(test.output).toMatch(
      /✓ test\/kopf-example\.test\.ts > reconciles a new KopfExample: creates its Deployment, and reports the Deployment ready once it is/,
    );
  }, 300_000);

  it('R-TEST-601 a multi-version project with converters type-checks and passes its own tests: kind, round trips and conversions end to end, before and after the renamed field is mapped', async () => {
    const converting = path.join(path.dirname(project), 'my-converter');
    fs.writeFileSync(path.join(work, 'widgets.yaml'), conversionProjects.widgetsCrd());
    const init = await run(path.join(tools, 'node_modules/.bin/kopf-gen'), ['init', '--crd', '../widgets.yaml', '--out', converting], {
      cwd: tools,
      timeoutMs: 60_000,
    });
    expect(init.code, init.output).toBe(0);
    expect(init.output).toContain(`added converter stub ${conversionProjects.STUB}`);
    expect(init.output).toContain(`added converter stub ${conversionProjects.IDENTICAL_STUB}`);
    // The same dependencies as the project above (both depend on the tarballs): its install serves both.
    fs.symlinkSync(path.join(project, 'node_modules'), path.join(converting, 'node_modules'), 'dir');
    const passes = async (): Promise<string> => {
      const typecheck = await run('npm', ['run', 'typecheck'], { cwd: converting, timeoutMs: 120_000 });
      expect(typecheck.code, typecheck.output).toBe(0);
      const test = await run('npm', ['test', '--', '--reporter=verbose'], { cwd: converting, timeoutMs: 180_000 });
      expect(test.code, test.output).toBe(0);
      expect(test.output).toMatch(/Tests\s+9 passed \(9\)/);
      expect(test.output).toMatch(/✓ test\/widget\.test\.ts > runs the create handler of a new Widget/);
      for (const [spoke, file] of [
        ['v1', 'widget.v1'],
        ['v2beta1', 'widget.v2beta1'],
      ] as const) {
        const e2e = `✓ test/conversions/${file}.test.ts > end to end: the API server converts through the operator >`;
        expect(test.output).toContain(`${e2e} the ${spoke} sample, created in ${spoke}, reads in v2 as the converter makes it`);
        expect(test.output).toContain(`${e2e} the v2 sample, created in v2, reads in ${spoke} as the converter makes it`);
      }
      return test.output;
    };
    // As generated: v1's stub refuses the renamed field, and its test expects that, on both paths.
    await passes();
    conversionProjects.mapRenamedField(converting);
    const mapped = await passes();
    expect(mapped).toContain('✓ test/conversions/widget.v1.test.ts > v1 → v2 → v1 keeps the v1 sample');
  }, 560_000);

  it("KopfRunner works under node's test runner too, with and without tsx imported (R-TEST-101)", async () => {
    fs.mkdirSync(path.join(project, 'checks'), { recursive: true });
    fs.writeFileSync(path.join(project, 'checks/node-runner.mjs'), NODE_RUNNER_TEST);
    for (const execArgv of [[], ['--import', 'tsx']]) {
      const test = await run(process.execPath, [...execArgv, '--test', 'checks/node-runner.mjs'], { cwd: project, timeoutMs: 120_000 });
      expect(test.code, test.output).toBe(0);
      expect(test.output).toMatch(/node runner 1: .*createKopfExample/);
    }
    fs.rmSync(path.join(project, 'checks'), { recursive: true });
  }, 260_000);

  it('the compiled operator runs with plain node on a production install and handles an object on the devcluster', async () => {
    const built = await run('npm', ['run', 'build'], { cwd: project, timeoutMs: 120_000 });
    expect(built.code, built.output).toBe(0);
    expect(fs.existsSync(path.join(project, 'dist/main.js'))).toBe(true);

    const pruned = await run('npm', ['install', '--omit=dev', ...NPM_FLAGS], { cwd: project, timeoutMs: 180_000 });
    expect(pruned.code, pruned.output).toBe(0);
    const modules = path.join(project, 'node_modules');
    expect(TOOLCHAIN.filter((name) => fs.existsSync(path.join(modules, name)))).toEqual([]);
    console.log(`packaging: npm install --omit=dev → node_modules is ${(sizeOf(modules) / 1e6).toFixed(1)} MB`);
    const typescriptRun = await run(process.execPath, [path.join(modules, 'kopf-gen/bin/kopf-gen.js'), 'run', '-A', 'src/main.ts'], {
      cwd: project,
      timeoutMs: 30_000,
    });
    expect(typescriptRun.code).toBe(1);
    expect(typescriptRun.output).toBe(
      'kopf-gen run: running TypeScript files needs tsx: install it in the project (npm install --save-dev tsx), ' +
        'or compile the operator and run the .js file\n',
    );

    const binary = requireKubectl();
    const kubeconfig = path.join(work, 'kubeconfig');
    const devcluster = spawn(
      process.execPath,
      [path.join(modules, 'kopf-gen/bin/kopf-gen.js'), 'devcluster', '--crd', 'crds/kopfexamples.yaml', '--kubeconfig', kubeconfig],
      { cwd: project, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(devcluster);
    let clusterLog = '';
    devcluster.stdout!.on('data', (chunk: Buffer) => {
      clusterLog += chunk.toString('utf8');
    });
    devcluster.stderr!.on('data', (chunk: Buffer) => {
      clusterLog += chunk.toString('utf8');
    });
    await until(() => (clusterLog.includes('kubeconfig:') ? true : undefined), `the devcluster to start; it said:\n${clusterLog}`, 30_000);

    const operator = spawn(process.execPath, ['dist/main.js', '-A', '--standalone'], {
      cwd: project,
      env: childEnv({ KUBECONFIG: kubeconfig, HOME: work }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(operator);
    let log = '';
    operator.stdout!.on('data', (chunk: Buffer) => {
      log += chunk.toString('utf8');
    });
    operator.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString('utf8');
    });
    const exited = new Promise<number | null>((resolve) => operator.on('exit', (code) => resolve(code)));

    const kubectl = async (...args: string[]): Promise<string> =>
      (
        await promisify(execFile)(binary, ['--kubeconfig', kubeconfig, '--cache-dir', path.join(work, 'kubectl-cache'), ...args], {
          encoding: 'utf8',
          timeout: 20_000,
        })
      ).stdout;
    expect(await kubectl('apply', '-f', SAMPLE)).toContain('kopfexample.kopf.dev/kopf-example-1 created');
    const stub = fs.readFileSync(path.join(project, 'src/handlers/kopf-example.ts'), 'utf8');
    const [, key] = /patch\.metadata\.annotations\[("[^"]+")\]/.exec(stub) ?? [];
    if (!key) throw new Error('the generated create handler no longer writes patch.metadata.annotations[…]: update this test');
    const annotation = await until(
      async () => {
        const object = JSON.parse(await kubectl('get', 'kopfexample', 'kopf-example-1', '-n', 'default', '-o', 'json')) as {
          metadata: { annotations?: Record<string, string> };
        };
        return object.metadata.annotations?.[JSON.parse(key) as string];
      },
      `the create handler's annotation; the operator's log so far:\n${log}`,
      30_000,
    );
    expect(annotation).toBeTruthy();
    expect(log).toMatch(/Handler 'createKopfExample' succeeded/);

    operator.kill('SIGTERM');
    expect(await exited, log).toBe(0);
    expect(log).toMatch(/Signal SIGTERM is received\. Operator is stopping\./);
  }, 300_000);
});
