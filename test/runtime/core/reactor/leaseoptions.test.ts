/**
 * How Lease election is asked for: the command line (`--lease`, `--lease-namespace`,
 * `KOPF_RUN_LEASE`) and the operator's options (`leaseName`, `leaseNamespace`), and the
 * combinations with other modes of coordination that are refused before anything starts.
 */
import { describe, expect, it } from 'vitest';

import * as cli from '../../../../runtime/kits/launching/commands.js';
import * as settings from '../../../../runtime/cogs/configs/settings.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import * as running from '../../../../runtime/core/reactor/running.js';
import { captureOutput } from '../../kits/launching/support.js';
import * as reactorErrors from '../../../../runtime/core/reactor/errors.js';
import * as launchErrors from '../../../../runtime/kits/launching/errors.js';

describe('Lease election: the command line', () => {
  it.each<[string, string[], NodeJS.ProcessEnv, Partial<cli.RunArgs>]>([
    ['--lease', ['--lease', 'my-operator'], {}, { leaseName: 'my-operator', leaseNamespace: undefined }],
    ['--lease with --lease-namespace', ['--lease', 'my-operator', '--lease-namespace', 'ops'], {}, { leaseName: 'my-operator', leaseNamespace: 'ops' }],
    ['KOPF_RUN_LEASE', [], { KOPF_RUN_LEASE: 'from-env' }, { leaseName: 'from-env' }],
    ['--lease wins over KOPF_RUN_LEASE', ['--lease', 'flag'], { KOPF_RUN_LEASE: 'from-env' }, { leaseName: 'flag' }],
    ['an empty KOPF_RUN_LEASE', [], { KOPF_RUN_LEASE: '' }, { leaseName: undefined }],
    ['no lease', [], {}, { leaseName: undefined, leaseNamespace: undefined }],
  ])('Lease election: %s', (_title, argv, env, expected) => {
    const output = captureOutput();
    expect(cli.parseRunArgs(argv, { env, output })).toMatchObject(expected);
    expect(output.text()).toBe('');
  });

  it.each<[string, string[], NodeJS.ProcessEnv, string]>([
    ['--lease with --standalone', ['--lease', 'x', '--standalone'], {}, "option '--lease <name>' cannot be used with option '--standalone'"],
    ['--lease with --peering', ['--lease', 'x', '--peering', 'ring'], {}, "option '--lease <name>' cannot be used with option '-P, --peering <name>'"],
    ['--lease with --priority', ['--lease', 'x', '-p', '100'], {}, "option '--lease <name>' cannot be used with option '-p, --priority <priority>'"],
    ['--lease with --dev', ['--lease', 'x', '--dev'], {}, "option '--lease <name>' cannot be used with option '--dev'"],
    [
      'KOPF_RUN_LEASE with --standalone',
      ['--standalone'],
      { KOPF_RUN_LEASE: 'x' },
      "the environment variable KOPF_RUN_LEASE cannot be used with option '--standalone'",
    ],
    ['--lease-namespace without --lease', ['--lease-namespace', 'ops'], {}, "option '--lease-namespace <namespace>' needs option '--lease <name>'"],
  ])('Lease election: usage error: %s (exit code 2)', async (_title, argv, env, message) => {
    expect(() => cli.parseRunArgs(argv, { env, output: captureOutput() })).toThrow(launchErrors.UsageError);
    const output = captureOutput();
    expect(await cli.runCommand([...argv, '-A', 'nothing-is-loaded.ts'], { env, output })).toBe(2);
    expect(output.text()).toContain(message);
  });

  it('Lease election: --help lists --lease and --lease-namespace', async () => {
    const output = captureOutput();
    expect(await cli.runCommand(['--help'], { env: {}, output })).toBe(0);
    expect(output.text()).toContain('--lease <name>');
    expect(output.text()).toContain('KOPF_RUN_LEASE');
    expect(output.text()).toContain('--lease-namespace <namespace>');
  });
});

describe("Lease election: the operator's options", () => {
  const registry = new OperatorRegistry();

  it.each<[string, running.OperatorOptions]>([
    ['standalone', { leaseName: 'x', standalone: true }],
    ['peeringName', { leaseName: 'x', peeringName: 'ring' }],
    ['priority', { leaseName: 'x', priority: 10 }],
  ])('Lease election: leaseName with %s is refused before anything starts', async (name, options) => {
    await expect(running.spawnTasks({ registry, clusterwide: true, ...options })).rejects.toThrow(
      new reactorErrors.OperatorModeError(`leaseName (Lease election) and ${name} (Kopf peering) exclude each other: choose one mode of coordination.`),
    );
  });

  it('Lease election: leaseNamespace without leaseName is refused', async () => {
    await expect(running.spawnTasks({ registry, clusterwide: true, leaseNamespace: 'ops' })).rejects.toThrow(reactorErrors.OperatorModeError);
  });

  it('Lease election: settings of another mode (peering.standalone, peering.mandatory) are refused with it', async () => {
    for (const name of ['standalone', 'mandatory'] as const) {
      const s = new settings.OperatorSettings();
      s.peering[name] = true;
      await expect(running.spawnTasks({ registry, clusterwide: true, settings: s, leaseName: 'x' })).rejects.toThrow(
        `settings.leaderElection.leaseName (Lease election) and settings.peering.${name} exclude each other: choose one mode of coordination.`,
      );
    }
  });

  it('Lease election: bad timings are refused before anything starts, naming the setting', async () => {
    const s = new settings.OperatorSettings();
    s.leaderElection.retryPeriod = 20;
    await expect(running.spawnTasks({ registry, clusterwide: true, settings: s, leaseName: 'x' })).rejects.toThrow(
      'leaderElection.retryPeriod (20 s) must be less than leaderElection.renewDeadline (10 s).',
    );
  });

  it('Lease election: the options are written into settings.leaderElection; identity is accepted in Lease election', async () => {
    const s = new settings.OperatorSettings();
    const stop = new AbortController();
    stop.abort();
    const tasks = await running.spawnTasks({
      registry,
      clusterwide: true,
      settings: s,
      leaseName: 'x',
      leaseNamespace: 'ops',
      identity: 'me',
      stopFlag: stop.signal,
    });
    await running.runTasks(tasks);
    expect(s.leaderElection.leaseName).toBe('x');
    expect(s.leaderElection.leaseNamespace).toBe('ops');
    expect(tasks.context.paused?.isOn()).toBe(true); // never the leader: paused throughout
  });
});
