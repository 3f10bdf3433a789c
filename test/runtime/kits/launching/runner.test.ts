import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as logging from '../../../../runtime/core/actions/logging.js';
import * as settingsModule from '../../../../runtime/cogs/configs/settings.js';
import { OperatorRegistry, getDefaultRegistry } from '../../../../runtime/core/intents/registry.js';
import { KopfRunner, RunnerTimeoutError } from '../../../../runtime/index.js';
import { eventually } from '../../core/reactor/lifecycle.js';
import { operatorFile, useOperatorFolder } from './support.js';

const folder = useOperatorFolder('kopf-runner-');

function fastSettings(): settingsModule.OperatorSettings {
  const settings = new settingsModule.OperatorSettings();
  settings.networking.errorBackoffs = [0.05];
  settings.execution.defaultBackoff = 0.1;
  settings.queueing.exitTimeout = 0.5;
  return settings;
}

describe('KopfRunner (R-TEST-1)', () => {
  it('R-TEST-1 runs the run command in-process, captures the output, and stops gracefully via the stop flag', async () => {
    const file = operatorFile(
      folder.dir,
      'example.ts',
      [
        "on.startup(function startup_fn({ logger }) { logger.info('Started for the runner.'); });",
        "on.cleanup(function cleanup_fn({ logger }) { logger.info('Cleaning up...'); });",
        "on.create(['kopf.dev', 'v1', 'kopfexamples'], function create_fn({ name, logger }) { logger.info(`Created ${name}.`); return { done: true }; });",
      ].join('\n'),
    );
    const elsewhere: string[] = [];
    const restore = logging.setLogSink((_line, record) => {
      elsewhere.push(record.message);
    });
    const registry = new OperatorRegistry();
    const runner = new KopfRunner(['run', '-A', '--standalone', '--verbose', file], { settings: fastSettings(), registry, timeout: 10 });
    expect(runner.exitCode).toBeNull();
    await runner.start();
    expect(runner.output).toContain('Started for the runner.');
    expect(registry.activityHandlers('startup').map((h) => h.id)).toEqual(['startup_fn']);
    expect(getDefaultRegistry().activityHandlers('startup')).toEqual([]);
    await folder.cluster.store.create({ apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name: 'kopf-example-1', namespace: 'default' }, spec: {} });
    await eventually(() => runner.output.includes("Handler 'create_fn' succeeded."), 'the create handler');
    await runner.stop();
    expect(runner.exitCode).toBe(0);
    expect(runner.exception).toBeNull();
    expect(runner.output).toContain('[default/kopf-example-1] Created kopf-example-1.');
    expect(runner.output).toContain('Stop-flag is raised. Operator is stopping.');
    expect(runner.output.indexOf('Cleaning up...')).toBeGreaterThan(runner.output.indexOf('Stop-flag is raised.'));
    logging.getLogger('kopf.test').warning('Logged after the stop.');
    expect(elsewhere).toEqual(['Logged after the stop.']);
    expect(runner.output).not.toContain('Logged after the stop.');
    restore();
    await folder.cluster.store.delete({ apiVersion: 'kopf.dev/v1', kind: 'KopfExample' }, 'kopf-example-1', { namespace: 'default' });
  });

  it('R-TEST-1 `await using` stops the operator at the end of the block', async () => {
    const file = operatorFile(folder.dir, 'disposable.ts', "on.startup(function startup_fn({ logger }) { logger.info('Disposable runner.'); });");
    let kept: KopfRunner | undefined;
    {
      await using runner = await new KopfRunner(['-A', '--standalone', file], { registry: new OperatorRegistry(), settings: fastSettings() }).start();
      kept = runner;
      expect(runner.exitCode).toBeNull();
    }
    expect(kept.exitCode).toBe(0);
    expect(kept.output).toContain('Disposable runner.');
  });

  it('R-TEST-1 R-TEST-103 a failure before the start rejects start(), whatever reraise; after the start, stop() re-throws it with reraise', async () => {
    const file = operatorFile(folder.dir, 'failing.ts', "on.startup(function startup_fn() { throw new errors.PermanentError('Broken on purpose.'); });");
    for (const reraise of [true, false]) {
      const runner = new KopfRunner(['run', '-A', file], { registry: new OperatorRegistry(), settings: fastSettings(), reraise });
      await expect(runner.start()).rejects.toMatchObject({ code: 'ActivityError' });
      expect(runner.exitCode).toBe(1);
      expect(runner.output).toContain("Activity 'startup_fn' failed permanently: Broken on purpose.");
      if (reraise) await expect(runner.stop()).rejects.toMatchObject({ code: 'ActivityError' });
      else await runner.stop();
    }

    const later = operatorFile(folder.dir, 'failing-later.ts', "on.cleanup(function cleanup_fn() { throw new errors.PermanentError('Broken at the end.'); });");
    const raising = await new KopfRunner(['run', '-A', '--standalone', later], { registry: new OperatorRegistry(), settings: fastSettings() }).start();
    await expect(raising.stop()).rejects.toMatchObject({ code: 'ActivityError' });
    expect(raising.exitCode).toBe(1);
    const quiet = await new KopfRunner(['run', '-A', '--standalone', later], {
      registry: new OperatorRegistry(),
      settings: fastSettings(),
      reraise: false,
    }).start();
    await quiet.stop();
    expect(quiet.exitCode).toBe(1);
    expect(quiet.exception).toMatchObject({ code: 'ActivityError' });
  });

  it('R-TEST-103 usage errors reject start() with exit code 2 and their message in the output', async () => {
    const runner = new KopfRunner(['run', '-A', '-n', 'default'], { reraise: false });
    await expect(runner.start()).rejects.toMatchObject({ code: 'UsageError' });
    expect(runner.exitCode).toBe(2);
    expect(runner.output).toContain("option '-A, --all-namespaces' cannot be used with option '-n, --namespace <pattern>'");
  });

  it('R-TEST-103 a missing file or one that fails to load rejects start() with the load error, and the log goes back to the process', async () => {
    const missing = new KopfRunner(['run', '-A', '--standalone', 'absent.ts'], { cwd: folder.dir });
    await expect(missing.start()).rejects.toMatchObject({ code: 'UsageError', message: 'No such file: absent.ts' });
    expect(missing.exitCode).toBe(2);
    const file = operatorFile(folder.dir, 'throwing.ts', "throw new RangeError('out of range');");
    const throwing = new KopfRunner(['run', '-A', '--standalone', file], { cwd: folder.dir });
    const failure = await throwing.start().catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'ModuleLoadError' });
    // (The line is the transformed module's under vitest; the compiled package's is in loading.test.ts.)
    expect((failure as Error).message).toMatch(/^cannot load throwing\.ts:\d+:7: RangeError: out of range$/);
    expect(throwing.exitCode).toBe(1);
    expect(throwing.output).toContain((failure as Error).message);
    const elsewhere: string[] = [];
    const restore = logging.setLogSink((_line, record) => {
      elsewhere.push(record.message);
    });
    logging.getLogger('kopf.test').warning('Logged after the failed start.');
    restore();
    expect(elsewhere).toEqual(['Logged after the failed start.']);
    expect(throwing.output).not.toContain('Logged after the failed start.');
  });

  it('R-TEST-102 a runner without a registry gets one of its own, not the default registry', async () => {
    const file = operatorFile(folder.dir, 'own-registry.ts', "on.startup(function startup_fn({ logger }) { logger.info('Own registry.'); });");
    const runners = [
      new KopfRunner(['-A', '--standalone', file], { settings: fastSettings() }),
      new KopfRunner(['-A', '--standalone', file], { settings: fastSettings() }),
    ];
    for (const runner of runners) {
      await runner.start();
      await runner.stop();
      expect(runner.registry.activityHandlers('startup').map((h) => h.id)).toEqual(['startup_fn']);
    }
    expect(runners[0]!.registry).not.toBe(runners[1]!.registry);
    expect(getDefaultRegistry().activityHandlers('startup')).toEqual([]);
  });

  it('R-TEST-1 the runner waits at most `timeout` seconds for the operator to stop', async () => {
    // The cleanup handler ends when the test lets it (the operator file runs in this process).
    const shared = globalThis as { slowCleanup?: Promise<void> };
    let release!: () => void;
    shared.slowCleanup = new Promise<void>((resolve) => {
      release = resolve;
    });
    const file = operatorFile(
      folder.dir,
      'slow.ts',
      'on.cleanup(async function cleanup_fn() { await (globalThis as { slowCleanup?: Promise<void> }).slowCleanup; });',
    );
    const runner = new KopfRunner(['run', '-A', '--standalone', file], { registry: new OperatorRegistry(), settings: fastSettings(), timeout: 0.2 });
    await runner.start();
    await expect(runner.stop()).rejects.toBeInstanceOf(RunnerTimeoutError);
    expect(runner.exitCode).toBeNull();
    release();
    await eventually(() => runner.output.includes("Activity 'cleanup_fn' succeeded."), 'the slow cleanup');
    await runner.stop();
    expect(runner.exitCode).toBe(0);
  });
});

describe('KopfRunner with explicit connections (R-TEST-1)', () => {
  /** Runs `fn` with no KUBECONFIG in the process's environment: only what is given explicitly counts. */
  async function withoutProcessKubeconfig(fn: () => Promise<void>): Promise<void> {
    const saved = process.env['KUBECONFIG'];
    delete process.env['KUBECONFIG'];
    try {
      await fn();
    } finally {
      if (saved !== undefined) process.env['KUBECONFIG'] = saved;
    }
  }

  async function handled(runner: KopfRunner, name: string): Promise<void> {
    await folder.cluster.store.create({ apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name, namespace: 'default' }, spec: {} });
    await eventually(() => runner.output.includes(`[default/${name}] Created ${name}.`), `the create handler of ${name}`);
    await runner.stop();
    expect(runner.exitCode).toBe(0);
    await folder.cluster.store.delete({ apiVersion: 'kopf.dev/v1', kind: 'KopfExample' }, name, { namespace: 'default' });
  }

  const OPERATOR = "on.create(['kopf.dev', 'v1', 'kopfexamples'], function create_fn({ name, logger }) { logger.info(`Created ${name}.`); });";

  it('R-TEST-1 `env: { KUBECONFIG }` is given to the login, not only to the argument parser', async () => {
    const file = operatorFile(folder.dir, 'env.ts', OPERATOR);
    const kubeconfig = process.env['KUBECONFIG']!;
    await withoutProcessKubeconfig(async () => {
      const runner = new KopfRunner(['run', '-A', '--standalone', file], {
        registry: new OperatorRegistry(),
        settings: fastSettings(),
        timeout: 10,
        env: { KUBECONFIG: kubeconfig, HOME: folder.dir },
      });
      await runner.start();
      expect(runner.exitCode).toBeNull();
      await handled(runner, 'via-env');
    });
  });

  it('R-TEST-1 an explicit `kubeconfig` or `connection` is used instead of the environment', async () => {
    const file = operatorFile(folder.dir, 'explicit.ts', OPERATOR);
    const kubeconfig = process.env['KUBECONFIG']!;
    await withoutProcessKubeconfig(async () => {
      const byFile = new KopfRunner(['-A', '--standalone', file], { registry: new OperatorRegistry(), settings: fastSettings(), timeout: 10, kubeconfig });
      await byFile.start();
      await handled(byFile, 'via-kubeconfig');
      const byInfo = new KopfRunner(['-A', '--standalone', file], {
        registry: new OperatorRegistry(),
        settings: fastSettings(),
        timeout: 10,
        connection: { server: folder.cluster.url, caData: folder.cluster.caPem, token: folder.cluster.token },
      });
      await byInfo.start();
      expect(byInfo.output).toContain("Activity 'login_with_connection' succeeded.");
      await handled(byInfo, 'via-connection');
    });
  });

  it('R-TEST-1 R-TEST-103 a login that finds no credentials rejects start() promptly with the LoginError', async () => {
    const file = operatorFile(folder.dir, 'nowhere.ts', OPERATOR);
    await withoutProcessKubeconfig(async () => {
      const runner = new KopfRunner(['-A', '--standalone', file], {
        registry: new OperatorRegistry(),
        settings: fastSettings(),
        timeout: 10,
        env: { KUBECONFIG: path.join(folder.dir, 'absent'), HOME: folder.dir },
      });
      const started = Date.now();
      await expect(runner.start()).rejects.toMatchObject({
        code: 'LoginError',
        message: expect.stringContaining(`KUBECONFIG=${path.join(folder.dir, 'absent')} lists no existing file`) as unknown,
      });
      expect(Date.now() - started).toBeLessThan(3000);
      expect(runner.exitCode).toBe(1);
      expect(runner.exception).toMatchObject({ code: 'LoginError' });
      await expect(runner.stop()).rejects.toMatchObject({ code: 'LoginError' });
    });
  });
});
