/**
 * Interoperability with the real Python Kopf (R-PEER, A-25): a Kopf operator and a kopf-gen
 * operator with the same peering object pause and resume each other, in both directions.
 *
 * Python cannot run everywhere, so this runs only when `KOPF_PYTHON` names a Python interpreter
 * that can `import kopf` (Kopf 1.44; `PYTHONPATH` is passed through). The Kopf operator is Kopf's
 * own examples/06-peering/example.py if `KOPF_SRC` points at Kopf's source, else an equivalent
 * one-handler file written here.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../devcluster/testing.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import type * as inventory from '../../../runtime/core/reactor/inventory.js';
import * as running from '../../../runtime/core/reactor/running.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

const PYTHON = process.env['KOPF_PYTHON'];
const ROOT = path.resolve(import.meta.dirname, '../../..');
const KOPF_OPERATOR = `import kopf\n\n@kopf.on.create('kopfexamples')\ndef create_fn(**_):\n    pass\n`;

describe.skipIf(PYTHON === undefined)('interop with Python Kopf (skipped without KOPF_PYTHON, the path to a Python that can import kopf)', () => {
  let cluster: DevCluster;
  let dir: string;
  let python: ChildProcess | undefined;
  let output = '';
  let logs: fx.LogCapture;

  beforeAll(async () => {
    cluster = await fx.startCluster();
    await cluster.load(fs.readFileSync(path.join(ROOT, 'fixtures/crds/peering.yaml'), 'utf8'));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-interop-'));
    cluster.writeKubeconfig(path.join(dir, 'kubeconfig'));
    fs.writeFileSync(path.join(dir, 'example.py'), KOPF_OPERATOR);
  });
  afterAll(async () => {
    await cluster?.stop();
  });
  afterEach(() => {
    python?.kill('SIGKILL');
    python = undefined;
    logs?.uninstall();
  });

  function startKopf(flags: readonly string[]): void {
    const source = process.env['KOPF_SRC'];
    const file = source !== undefined ? path.join(source, 'examples/06-peering/example.py') : path.join(dir, 'example.py');
    output = '';
    python = spawn(PYTHON!, ['-m', 'kopf', 'run', file, '-A', '--verbose', ...flags], {
      env: { ...process.env, KUBECONFIG: path.join(dir, 'kubeconfig') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    python.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    python.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
  }

  async function startOurs(priority: number): Promise<{ context: inventory.OperatorContext; stop(): Promise<void> }> {
    const registry = new OperatorRegistry();
    on.login({ registry, id: 'login' }, () => ({ server: cluster.url, token: cluster.token }));
    on.create(['kopf.dev', 'v1', 'kopfexamples'], { registry, id: 'create_fn' }, () => undefined);
    const stop = new AbortController();
    const spawned = await running.spawnTasks({
      registry,
      settings: fx.fastSettings(),
      clusterwide: true,
      priority,
      identity: `kopf-gen-${priority}`,
      stopFlag: stop.signal,
    });
    const done = running.runTasks(spawned).catch(() => undefined);
    return {
      context: spawned.context,
      async stop() {
        stop.abort();
        await done;
      },
    };
  }

  it('A-25 a kopf-gen operator pauses for Kopf with --dev, and resumes when Kopf exits', async () => {
    logs = new fx.LogCapture().install();
    const ours = await startOurs(0);
    startKopf(['--dev']);
    await fx.eventually(() => ours.context.paused!.isOn(), 'the kopf-gen operator to pause', 30_000);
    expect(logs.grep('Pausing operations in favour of [<Peer ', fx.INFO)[0]).toMatch(/priority=666, lifetime=60, lastseen='[^']+\+00:00'>\]\.$/);
    python!.kill('SIGINT');
    await fx.eventually(() => !ours.context.paused!.isOn(), 'the kopf-gen operator to resume', 30_000);
    expect(logs.grep('Resuming operations after the pause. Conflicting operators with the same priority are gone.')).toHaveLength(1);
    await ours.stop();
  }, 60_000);

  it('A-25 Kopf pauses for a kopf-gen operator with priority 666, and resumes when it exits', async () => {
    startKopf([]);
    await fx.eventually(() => output.includes("Keep-alive in 'default' cluster-wide: ok."), 'Kopf to start peering', 30_000);
    const ours = await startOurs(666);
    await fx.eventually(() => output.includes('Pausing operations in favour of [<Peer kopf-gen-666: priority=666, lifetime=60'), 'Kopf to pause', 30_000);
    await ours.stop();
    await fx.eventually(() => output.includes('Resuming operations after the pause.'), 'Kopf to resume', 30_000);
  }, 60_000);
});
