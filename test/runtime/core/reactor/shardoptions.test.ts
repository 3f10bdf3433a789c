/**
 * How sharding is asked for (R-SHARD-111): the command line (`--shards`, `--shard-id`,
 * `--shard-key`, `KOPF_RUN_SHARDS`, …) and the operator's options (`shards`, `shardIdentity`,
 * `shardKey`) write `settings.sharding`; the combinations with Kopf peering and Lease election are
 * refused before anything starts.
 */
import { describe, expect, it } from 'vitest';

import * as settings from '../../../../runtime/cogs/configs/settings.js';
import * as configErrors from '../../../../runtime/cogs/configs/errors.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import * as reactorErrors from '../../../../runtime/core/reactor/errors.js';
import * as options from '../../../../runtime/core/reactor/options.js';
import * as running from '../../../../runtime/core/reactor/running.js';
import * as cli from '../../../../runtime/kits/launching/commands.js';
import * as launchErrors from '../../../../runtime/kits/launching/errors.js';
import { captureOutput } from '../../kits/launching/support.js';

describe('Sharding: the command line', () => {
  it.each<[string, string[], NodeJS.ProcessEnv, Partial<cli.RunArgs>]>([
    ['--shards', ['--shards', 'my-operator'], {}, { shards: 'my-operator', shardIdentity: undefined, shardKey: undefined }],
    [
      '--shards with --shard-id and --shard-key',
      ['--shards', 'my-operator', '--shard-id', 'pod-a', '--shard-key', 'namespace'],
      {},
      { shards: 'my-operator', shardIdentity: 'pod-a', shardKey: 'namespace' },
    ],
    ['--shard-key in any case', ['--shards', 'r', '--shard-key', 'UID'], {}, { shardKey: 'uid' }],
    ['--shards with --standalone', ['--shards', 'r', '--standalone'], {}, { shards: 'r', standalone: true }],
    [
      'the variables',
      [],
      { KOPF_RUN_SHARDS: 'from-env', KOPF_RUN_SHARD_ID: 'pod-b', KOPF_RUN_SHARD_KEY: 'namespace' },
      { shards: 'from-env', shardIdentity: 'pod-b', shardKey: 'namespace' },
    ],
    ['--shards wins over KOPF_RUN_SHARDS', ['--shards', 'flag'], { KOPF_RUN_SHARDS: 'from-env' }, { shards: 'flag' }],
    ['an empty KOPF_RUN_SHARDS', [], { KOPF_RUN_SHARDS: '' }, { shards: undefined }],
    ['no sharding', [], {}, { shards: undefined, shardIdentity: undefined, shardKey: undefined }],
  ])('R-SHARD-111 %s', (_title, argv, env, expected) => {
    const output = captureOutput();
    expect(cli.parseRunArgs(argv, { env, output })).toMatchObject(expected);
    expect(output.text()).toBe('');
  });

  it.each<[string, string[], NodeJS.ProcessEnv, string]>([
    ['--shards with --lease', ['--shards', 'r', '--lease', 'x'], {}, "option '--shards <ring>' cannot be used with option '--lease <name>'"],
    ['--shards with --peering', ['--shards', 'r', '--peering', 'p'], {}, "option '--shards <ring>' cannot be used with option '-P, --peering <name>'"],
    ['--shards with --priority', ['--shards', 'r', '-p', '100'], {}, "option '--shards <ring>' cannot be used with option '-p, --priority <priority>'"],
    ['--shards with --dev', ['--shards', 'r', '--dev'], {}, "option '--shards <ring>' cannot be used with option '--dev'"],
    [
      'KOPF_RUN_SHARDS with --lease',
      ['--lease', 'x'],
      { KOPF_RUN_SHARDS: 'r' },
      "the environment variable KOPF_RUN_SHARDS cannot be used with option '--lease <name>'",
    ],
    [
      '--shards with KOPF_RUN_LEASE',
      ['--shards', 'r'],
      { KOPF_RUN_LEASE: 'x' },
      "option '--shards <ring>' cannot be used with the environment variable KOPF_RUN_LEASE",
    ],
    ['--shard-id without --shards', ['--shard-id', 'a'], {}, "option '--shard-id <id>' needs option '--shards <ring>'"],
    ['--shard-key without --shards', ['--shard-key', 'uid'], {}, "option '--shard-key <key>' needs option '--shards <ring>'"],
    ['an unknown --shard-key', ['--shards', 'r', '--shard-key', 'name'], {}, 'Allowed choices are uid, namespace.'],
    ['a --shard-id that is no label value', ['--shards', 'r', '--shard-id', 'my pod'], {}, 'Not a label value'],
    ['a --shards that is no label name', ['--shards', 'a/b'], {}, 'Not a label name'],
    ['a KOPF_RUN_SHARD_KEY that is no key', ['--shards', 'r'], { KOPF_RUN_SHARD_KEY: 'name' }, 'KOPF_RUN_SHARD_KEY'],
  ])('R-SHARD-111 usage error: %s (exit code 2)', async (_title, argv, env, message) => {
    expect(() => cli.parseRunArgs(argv, { env, output: captureOutput() })).toThrow(launchErrors.UsageError);
    const output = captureOutput();
    expect(await cli.runCommand([...argv, '-A', 'nothing-is-loaded.ts'], { env, output })).toBe(2);
    expect(output.text()).toContain(message);
  });

  it('R-SHARD-111 --help lists --shards, --shard-id and --shard-key with their variables', async () => {
    const output = captureOutput();
    expect(await cli.runCommand(['--help'], { env: {}, output })).toBe(0);
    for (const text of ['--shards <ring>', 'KOPF_RUN_SHARDS', '--shard-id <id>', 'KOPF_RUN_SHARD_ID', '--shard-key <key>', 'KOPF_RUN_SHARD_KEY']) {
      expect(output.text()).toContain(text);
    }
  });
});

describe("Sharding: the operator's options", () => {
  const registry = new OperatorRegistry();

  it.each<[string, string, running.OperatorOptions]>([
    ['peeringName', 'Kopf peering', { shards: 'r', peeringName: 'ring' }],
    ['priority', 'Kopf peering', { shards: 'r', priority: 10 }],
    ['leaseName', 'Lease election', { shards: 'r', leaseName: 'x' }],
  ])('R-SHARD-111 shards with %s is refused before anything starts', async (name, mode, given) => {
    await expect(running.spawnTasks({ registry, clusterwide: true, ...given })).rejects.toThrow(
      new reactorErrors.OperatorModeError(`shards (sharding) and ${name} (${mode}) exclude each other: choose one mode of coordination.`),
    );
  });

  it('R-SHARD-111 shardIdentity or shardKey without shards is refused', async () => {
    await expect(running.spawnTasks({ registry, clusterwide: true, shardIdentity: 'a' })).rejects.toThrow(
      "shardIdentity is given without shards: sharding needs the ring's name.",
    );
    await expect(running.spawnTasks({ registry, clusterwide: true, shardKey: 'namespace' })).rejects.toThrow(reactorErrors.OperatorModeError);
  });

  it('R-SHARD-111 settings of another mode (peering.mandatory, leaderElection.leaseName) are refused with it', async () => {
    const mandatory = new settings.OperatorSettings();
    mandatory.peering.mandatory = true;
    await expect(running.spawnTasks({ registry, clusterwide: true, settings: mandatory, shards: 'r' })).rejects.toThrow(
      'settings.sharding.ring (sharding) and settings.peering.mandatory exclude each other: choose one mode of coordination.',
    );
    const lease = new settings.OperatorSettings();
    lease.leaderElection.leaseName = 'x';
    await expect(running.spawnTasks({ registry, clusterwide: true, settings: lease, shards: 'r' })).rejects.toThrow(
      'settings.sharding.ring (sharding) and settings.leaderElection.leaseName (Lease election) exclude each other: choose one mode of coordination.',
    );
  });

  it('R-SHARD-111 invalid values are refused before anything starts, naming the setting', async () => {
    await expect(running.spawnTasks({ registry, clusterwide: true, shards: 'a/b' })).rejects.toThrow(configErrors.SettingsError);
    await expect(running.spawnTasks({ registry, clusterwide: true, shards: 'r', shardIdentity: 'my pod' })).rejects.toThrow(
      'sharding.identity must be null or a non-empty label value',
    );
    const s = new settings.OperatorSettings();
    s.sharding.retryPeriod = 20;
    await expect(running.spawnTasks({ registry, clusterwide: true, settings: s, shards: 'r' })).rejects.toThrow(
      'sharding.retryPeriod (20 s) must be less than sharding.renewDeadline (10 s).',
    );
  });

  it('R-SHARD-111 the options are written into settings.sharding; standalone is accepted with them', () => {
    const s = new settings.OperatorSettings();
    const { settings: written } = options.configure({
      clusterwide: true,
      settings: s,
      shards: 'my-operator',
      shardIdentity: 'pod-a',
      shardKey: 'namespace',
      standalone: true,
    });
    expect(written).toBe(s);
    expect([s.sharding.ring, s.sharding.identity, s.sharding.key]).toEqual(['my-operator', 'pod-a', 'namespace']);
    expect(s.peering.standalone).toBe(true);
    // A ring set in the settings is enough for shardIdentity; and no sharding leaves the settings alone.
    const preset = new settings.OperatorSettings();
    preset.sharding.ring = 'preset';
    expect(options.applyShardOptions({ shardIdentity: 'pod-b' }, preset)).toBe(true);
    expect(preset.sharding.identity).toBe('pod-b');
    const plain = new settings.OperatorSettings();
    expect(options.applyShardOptions({}, plain)).toBe(false);
    expect(plain.sharding.ring).toBeNull();
  });
});
