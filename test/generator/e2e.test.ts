/**
 * The user's first five minutes, end to end, with the real commands in child processes: `kopf-gen
 * init` from the Kopf example CRD into a temporary folder; an offline install (node_modules linked
 * to this checkout, as `npm run demo` does it, with `tsc` being TypeScript 5.9); `npm run
 * typecheck`; the generated project's own `npm test` (the operator in-process); and `npm run
 * operator` with no cluster configured, which must fall back to the embedded devcluster, while
 * kubectl applies the reference object and the test waits for the generated create handler's
 * annotation. The steps share one project and run in order; the whole file stays well under two
 * minutes.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as demo from '../../scripts/demo.js';
import { requireKubectl } from '../support/kubectl.js';
import { childEnv, run, until } from '../support/processes.js';

const CRD = path.join(demo.CHECKOUT, 'fixtures/crds/kopfexamples.yaml');
const SAMPLE = path.join(demo.CHECKOUT, 'fixtures/objects/kopf-example-1.yaml');

/** The annotation the generated create handler writes: key and value, read from the stub. */
function stubAnnotation(project: string): { key: string; value: string } {
  const stub = fs.readFileSync(path.join(project, 'src/handlers/kopf-example.ts'), 'utf8');
  const match = /patch\.metadata\.annotations\[("[^"]+")\]\s*=\s*("[^"]*")/.exec(stub);
  if (!match) throw new Error('the generated create handler no longer writes patch.metadata.annotations[…]: update this test');
  return { key: JSON.parse(match[1]!) as string, value: JSON.parse(match[2]!) as string };
}

describe('a project generated from the Kopf example CRD, from init to a running operator', () => {
  let work: string;
  let project: string;
  let operator: ChildProcess | undefined;

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-e2e-'));
    project = path.join(work, 'kopf-example-operator');
    const init = await run(process.execPath, [path.join(demo.CHECKOUT, 'bin/kopf-gen.js'), 'init', '--crd', CRD, '--out', project], {
      cwd: work,
      timeoutMs: 30_000,
    });
    if (init.code !== 0) throw new Error(`kopf-gen init exited with ${init.code}:\n${init.output}`);
    demo.linkNodeModules(project);
  }, 40_000);

  afterAll(() => {
    if (operator?.pid !== undefined && operator.exitCode === null) {
      for (const pid of demo.scriptProcesses(operator.pid)) process.kill(pid, 'SIGKILL');
      operator.kill('SIGKILL');
    }
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('init writes a project that depends on this checkout and runs `kopf-gen run src/main.ts`', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(project, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(manifest.dependencies['kopf-gen']).toBe(`file:${demo.CHECKOUT}`);
    expect(manifest.scripts['operator']).toMatch(/^exec kopf-gen run --dev-cluster=auto --watch -A src\/main\.ts$/);
    expect(manifest.devDependencies['typescript']).toMatch(/^[~^]?5\./);
    expect(fs.readFileSync(path.join(project, 'crds/kopfexamples.yaml'), 'utf8')).toBe(fs.readFileSync(CRD, 'utf8'));
  });

  it("npm run typecheck passes with the project's TypeScript 5.9", async () => {
    const version = spawnSync(path.join(project, 'node_modules/.bin/tsc'), ['--version'], { encoding: 'utf8' });
    expect(version.stdout).toMatch(/^Version 5\.9\./);
    const typecheck = await run('npm', ['run', 'typecheck'], { cwd: project, timeoutMs: 60_000 });
    expect(typecheck.code, typecheck.output).toBe(0);
    expect(typecheck.output).not.toMatch(/error TS\d+/);
  }, 70_000);

  it("the generated project's own npm test runs the operator in-process on a devcluster and passes", async () => {
    const test = await run('npm', ['test'], { cwd: project, timeoutMs: 60_000 });
    expect(test.code, test.output).toBe(0);
    expect(test.output).toMatch(/Tests\s+1 passed \(1\)/);
    // The operator runs inside the test (KopfRunner captures its log): nothing of it on the console.
    expect(test.output).not.toMatch(/Handler 'createKopfExample' succeeded/);
  }, 70_000);

  it('npm run operator falls back to the devcluster, handles an object kubectl applies, and stops with 0 on SIGTERM', async () => {
    requireKubectl();
    const { key, value } = stubAnnotation(project);
    const home = fs.mkdtempSync(path.join(work, 'home-'));
    operator = spawn('npm', ['run', 'operator'], {
      cwd: project,
      env: childEnv({ HOME: home, KUBECONFIG: undefined }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    operator.stdout!.on('data', (chunk: Buffer) => {
      log += chunk.toString('utf8');
    });
    operator.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString('utf8');
    });
    const exited = new Promise<number | null>((resolve) => operator!.on('exit', (code) => resolve(code)));

    const kubeconfig = await until(() => /kubeconfig: (\S+);/.exec(log)?.[1], `the devcluster's log line; the log so far:\n${log}`, 60_000);
    expect(log).toMatch(/No cluster is configured .*: started the devcluster at https:\/\/127\.0\.0\.1:\d+ with 1 CRD file\(s\)/);
    expect(kubeconfig).toBe(path.join(project, '.kopf-gen', 'kubeconfig'));
    expect(log).toContain(`try: kubectl --kubeconfig ${kubeconfig} get kopfexamples -A`);

    const kubectl = async (...args: string[]): Promise<string> =>
      (
        await promisify(execFile)('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', path.join(work, 'kubectl-cache'), ...args], {
          encoding: 'utf8',
          timeout: 20_000,
        })
      ).stdout;
    expect(await kubectl('apply', '-f', SAMPLE)).toContain('kopfexample.kopf.dev/kopf-example-1 created');
    const annotation = await until(
      async () => {
        const object = JSON.parse(await kubectl('get', 'kopfexample', 'kopf-example-1', '-n', 'default', '-o', 'json')) as {
          metadata: { annotations?: Record<string, string> };
        };
        return object.metadata.annotations?.[key];
      },
      `the annotation ${key}; the operator's log so far:\n${log}`,
      30_000,
    );
    expect(annotation).toBe(value);
    expect(log).toMatch(/\[default\/kopf-example-1\] Handler 'createKopfExample' succeeded/);

    const running = demo.scriptProcesses(operator.pid!);
    expect(running.length, 'the operator process under npm').toBeGreaterThan(0);
    for (const pid of running) process.kill(pid, 'SIGTERM');
    const code = await Promise.race([exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running after 20s'), 20_000))]);
    expect(code, log).toBe(0);
    expect(log).toMatch(/Signal SIGTERM is received\. Operator is stopping\./);
    expect(fs.existsSync(path.join(home, '.kube')), 'no kubeconfig written to HOME').toBe(false);
  }, 90_000);
});
