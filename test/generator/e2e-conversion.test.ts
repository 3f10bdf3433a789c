/**
 * A generated project with converters, end to end with the real commands in child processes: `kopf-gen
 * init` from a CRD serving v2 (storage), v1 (a required field renamed) and v2beta1 (v2's schema),
 * the renamed field mapped in the v1 stub as its TODO says, then `npm run operator` on the embedded
 * devcluster — the operator points the CRD at its webhook (managed conversion in development) and
 * kubectl reads an object written in one version in the other — and the project's own `npm test`,
 * with kopf-gen linked rather than installed (the packaging test runs it installed from tarballs).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as demo from '../../scripts/demo.js';
import * as conversionProjects from '../support/conversionprojects.js';
import { requireKubectl } from '../support/kubectl.js';
import { childEnv, run, until } from '../support/processes.js';

describe('a generated project with converters, on the devcluster', () => {
  let work: string;
  let project: string;
  let operator: ChildProcess | undefined;
  let log = '';

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-e2e-conversion-'));
    project = path.join(work, 'widget-operator');
    const crd = path.join(work, 'widgets.yaml');
    fs.writeFileSync(crd, conversionProjects.widgetsCrd());
    const init = await run(process.execPath, [path.join(demo.CHECKOUT, 'bin/kopf-gen.js'), 'init', '--crd', crd, '--out', project], {
      cwd: work,
      timeoutMs: 30_000,
    });
    if (init.code !== 0) throw new Error(`kopf-gen init exited with ${init.code}:\n${init.output}`);
    demo.linkNodeModules(project);
    conversionProjects.mapRenamedField(project);
  }, 40_000);

  afterAll(() => {
    if (operator?.pid !== undefined && operator.exitCode === null) {
      for (const pid of demo.scriptProcesses(operator.pid)) process.kill(pid, 'SIGKILL');
      operator.kill('SIGKILL');
    }
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('R-CONVERT-309 npm run operator configures the conversion; kubectl reads an object written in v2 as v1, and one written in v1 as v2, with no ERROR line', async () => {
    const binary = requireKubectl();
    const home = fs.mkdtempSync(path.join(work, 'home-'));
    operator = spawn('npm', ['run', 'operator'], { cwd: project, env: childEnv({ HOME: home, KUBECONFIG: undefined }), stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [operator.stdout!, operator.stderr!]) {
      stream.on('data', (chunk: Buffer) => {
        log += chunk.toString('utf8');
      });
    }
    const kubeconfig = await until(() => /kubeconfig: (\S+);/.exec(log)?.[1], `the devcluster's log line; the log so far:\n${log}`, 60_000);
    await until(
      () => (log.includes(`Configured the conversion webhook of the CustomResourceDefinition ${conversionProjects.CRD_NAME}`) ? true : undefined),
      `the managed conversion; the operator's log so far:\n${log}`,
      60_000,
    );
    const kubectl = async (...args: string[]): Promise<string> =>
      (
        await promisify(execFile)(binary, ['--kubeconfig', kubeconfig, '--cache-dir', path.join(work, 'kubectl-cache'), ...args], {
          encoding: 'utf8',
          timeout: 20_000,
        })
      ).stdout;
    const apply = (object: object): Promise<string> => {
      const file = path.join(work, `object-${Math.random().toString(36).slice(2)}.json`);
      fs.writeFileSync(file, JSON.stringify(object));
      return kubectl('apply', '-f', file);
    };
    const metadata = (name: string) => ({ name, namespace: 'default' });
    expect(await apply({ apiVersion: 'example.com/v2', kind: 'Widget', metadata: metadata('new'), spec: { size: 3, color: 'red' } })).toContain(
      'widget.example.com/new created',
    );
    expect(await apply({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: metadata('old'), spec: { size: 2, colour: 'blue' } })).toContain(
      'widget.example.com/old created',
    );
    const read = async (version: string, name: string): Promise<{ apiVersion: string; spec: object }> =>
      JSON.parse(await kubectl('get', `widgets.${version}.example.com`, name, '-n', 'default', '-o', 'json')) as { apiVersion: string; spec: object };
    expect(await read('v1', 'new')).toMatchObject({ apiVersion: 'example.com/v1', spec: { size: 3, colour: 'red' } });
    expect(await read('v2', 'old')).toMatchObject({ apiVersion: 'example.com/v2', spec: { size: 2, color: 'blue' } });
    expect(await read('v2beta1', 'old')).toMatchObject({ apiVersion: 'example.com/v2beta1', spec: { size: 2, color: 'blue' } });
    expect(await kubectl('get', 'widgets.v1.example.com', '-n', 'default', '-o', 'name')).toBe('widget.example.com/new\nwidget.example.com/old\n');
    expect(log).not.toMatch(/\[ERROR/);
    operator.kill('SIGTERM');
  }, 120_000);

  it('the project type-checks and passes its own tests with kopf-gen linked: the kind, the round trips and the conversions end to end', async () => {
    const typecheck = await run('npm', ['run', 'typecheck'], { cwd: project, timeoutMs: 120_000 });
    expect(typecheck.code, typecheck.output).toBe(0);
    const test = await run('npm', ['test', '--', '--reporter=verbose'], { cwd: project, timeoutMs: 180_000 });
    expect(test.code, test.output).toBe(0);
    expect(test.output).toMatch(/Tests\s+9 passed \(9\)/);
    expect(test.output).toContain(
      '✓ test/conversions/widget.v1.test.ts > end to end: the API server converts through the operator > the v2 sample, created in v2, reads in v1 as the converter makes it',
    );
  }, 200_000);
});
