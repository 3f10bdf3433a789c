/**
 * Lease election with a real SIGKILL: the leader is a `kopf-gen run --lease` process, the standby
 * an elector in this process, both on real time against the devcluster over loopback. The leader
 * is killed with SIGKILL, so it cannot release the Lease; the standby must take over after the
 * Lease's duration, as it saw it on its own clock. The timings are shortened by the operator's
 * startup handler (leaseDuration 2 s, renewDeadline 1.5 s, retryPeriod 0.5 s) so the test takes
 * seconds; the virtual-time tests (core/engines/leadership.test.ts) measure the defaults.
 */
import * as child from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import * as clocks from '../../../runtime/cogs/aio/clocks.js';
import * as toggles from '../../../runtime/cogs/aio/toggles.js';
import * as api from '../../../runtime/cogs/client/api.js';
import * as credentials from '../../../runtime/cogs/client/credentials.js';
import * as settings from '../../../runtime/cogs/configs/settings.js';
import * as leadership from '../../../runtime/core/engines/leadership.js';
import { childEnv } from '../../support/processes.js';
import { RecordingLogger } from '../cogs/client/helpers.js';
import { eventually, startCluster } from '../../support/operators.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

describe('Lease election: SIGKILL of a leader process', () => {
  let cluster: DevCluster;
  let dir: string;
  let proc: child.ChildProcess | undefined;
  const stopper = new AbortController();

  beforeEach(async () => {
    cluster = await startCluster();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-lease-'));
  });
  afterEach(async () => {
    stopper.abort();
    proc?.kill('SIGKILL');
    await cluster.stop();
  });

  it("Lease election: the standby takes over a killed leader's Lease after leaseDuration — failover measured with a real SIGKILL", async () => {
    const operatorFile = path.join(dir, 'operator.ts');
    fs.writeFileSync(
      operatorFile,
      [
        `import { on } from ${JSON.stringify(path.join(ROOT, 'runtime/on.ts'))};`,
        'on.startup(function fast_leases({ settings }) {',
        '  Object.assign(settings.leaderElection, { leaseDuration: 2, renewDeadline: 1.5, retryPeriod: 0.5 });',
        '});',
        '',
      ].join('\n'),
    );
    fs.writeFileSync(path.join(dir, 'package.json'), '{"type": "module"}\n');
    const kubeconfig = cluster.writeKubeconfig(path.join(dir, 'kubeconfig'));
    let output = '';
    proc = child.spawn(
      process.execPath,
      [
        '--conditions=kopf-gen-source',
        '--import',
        'tsx',
        path.join(ROOT, 'scripts/kopf-gen.ts'),
        'run',
        '-A',
        '--lease',
        'kill-test',
        '--lease-namespace',
        'default',
        '--log-format',
        'plain',
        operatorFile,
      ],
      { cwd: ROOT, env: childEnv({ KUBECONFIG: kubeconfig, POD_ID: 'leader-process' }), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    proc.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    proc.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    await eventually(
      () => output.includes("Became the leader in Lease 'default/kill-test' as 'leader-process'"),
      `the leader process to lead:\n${output}`,
      60_000,
    );

    const s = new settings.OperatorSettings({ warn: () => undefined });
    Object.assign(s.leaderElection, { leaseDuration: 2, renewDeadline: 1.5, retryPeriod: 0.5 });
    s.networking.errorBackoffs = [0.05];
    const vault = new credentials.Vault();
    vault.populate({ static: { server: cluster.url, token: cluster.token } });
    const client = new api.HttpKubeApi({ vault, settings: s, logger: new RecordingLogger() });
    const toggle = new toggles.Toggle(true, 'standby');
    const logger = new RecordingLogger();
    const election = leadership.runElection({
      api: client,
      name: 'kill-test',
      namespace: 'default',
      identity: 'standby',
      settings: s.leaderElection,
      clock: clocks.realClock,
      paused: toggle,
      logger,
      signal: stopper.signal,
    });
    try {
      await eventually(
        () => logger.messages('info').includes("New leader observed in Lease 'default/kill-test': 'leader-process'."),
        'the standby to see the leader',
      );
      // The leader renews (the standby does not write while it stands by): it is alive, the standby waits.
      const renewals = (): number => cluster.requests.filter((r) => r.verb === 'update' && r.resource === 'leases' && r.code === 200).length;
      const before = renewals();
      await eventually(() => renewals() >= before + 3, 'three more renewals of the leader');
      expect(toggle.isOn()).toBe(true);

      const exited = new Promise((resolve) => proc!.once('exit', resolve));
      const killedAt = Date.now();
      proc.kill('SIGKILL');
      await exited;
      await eventually(() => toggle.isOff(), 'the standby to lead', 15_000);
      const failover = (Date.now() - killedAt) / 1000;
      console.log(
        `Lease failover after SIGKILL of the leader process: ${failover.toFixed(2)} s (leaseDuration 2 s, retryPeriod 0.5 s, standby reads every 0.5–1.1 s)`,
      );
      // The Lease was renewed ≤ 0.5 s before the kill, and the standby saw that ≤ 1.1 s later; it
      // takes over at its first read after leaseDuration (2 s) from then.
      expect(failover).toBeGreaterThanOrEqual(2 - 0.5 - 1.1);
      expect(failover).toBeLessThanOrEqual(2 + 1.1 + 1.1 + 1);
      expect(output).not.toContain('Released Lease');
    } finally {
      stopper.abort();
      await election;
      client.close();
    }
  }, 120_000);
});
