/**
 * The `freeze` and `resume` commands as an administrator types them, against the devcluster through
 * the runtime's real client. Their effect on running operators is proven with the peering scenarios
 * (test/runtime/scenarios/peering.test.ts); here it is the command line itself (R-CLI-2): the
 * peering object may be named by an environment variable of each command's own, so a deployment can
 * set it once, while an explicit `--peering` still wins, and neither command reads the other's.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import * as cli from '../../../runtime/kits/launching/commands.js';
import * as credentials from '../../../runtime/cogs/client/credentials.js';
import * as fx from '../../support/operators.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const PEERING_CRDS = fs.readFileSync(path.join(ROOT, 'fixtures/crds/peering.yaml'), 'utf8');
const CLUSTER_PEERING = { group: 'kopf.dev', version: 'v1', resource: 'clusterkopfpeerings' } as const;

type Json = Record<string, unknown>;

describe('the freeze and resume commands', () => {
  let cluster: DevCluster;
  beforeAll(async () => {
    cluster = await fx.startCluster();
    await cluster.load(PEERING_CRDS);
    for (const name of ['from-env', 'from-flag']) {
      await cluster.store.create({ apiVersion: 'kopf.dev/v1', kind: 'ClusterKopfPeering', metadata: { name } });
    }
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  /** The entries of a cluster-wide peering object's status. */
  const entries = (name: string): Json => (cluster.store.get(CLUSTER_PEERING, name) as { status?: Json } | undefined)?.status ?? {};

  /** Runs one command with only the given environment; resolves to its exit code and what it printed. */
  async function run(which: 'freeze' | 'resume', argv: string[], env: NodeJS.ProcessEnv): Promise<[number, string]> {
    const vault = new credentials.Vault();
    vault.populate([['admin', { server: cluster.url, token: cluster.token }]]);
    let printed = '';
    const write = (text: string): void => {
      printed += text;
    };
    const code = await cli.touchCommand(which, argv, { output: { out: write, err: write }, vault, env });
    return [code, printed];
  }

  it('R-CLI-2 the peering object comes from KOPF_FREEZE_PEERING or KOPF_RESUME_PEERING when --peering is not given; --peering wins; neither command reads the other one’s variable', async () => {
    // freeze takes the name from its variable.
    expect(await run('freeze', ['-t', '60', '-A', '-i', 'ops@desk'], { KOPF_FREEZE_PEERING: 'from-env' })).toEqual([
      0,
      "Frozen 'from-env' cluster-wide (clusterkopfpeerings.kopf.dev) for 60 seconds: the entry of ops@desk has priority 100.\n",
    ]);
    expect(entries('from-env')['ops@desk']).toEqual(expect.objectContaining({ priority: 100, lifetime: 60 }));

    // An explicit --peering wins over the variable.
    expect(await run('freeze', ['-P', 'from-flag', '-t', '30', '-A', '-i', 'dev@desk'], { KOPF_FREEZE_PEERING: 'from-env' })).toEqual([
      0,
      "Frozen 'from-flag' cluster-wide (clusterkopfpeerings.kopf.dev) for 30 seconds: the entry of dev@desk has priority 100.\n",
    ]);
    expect(Object.keys(entries('from-flag'))).toEqual(['dev@desk']);
    expect(Object.keys(entries('from-env'))).toEqual(['ops@desk']);

    // resume takes the name from its own variable, and --peering wins there too.
    expect(await run('resume', ['-A', '-i', 'ops@desk'], { KOPF_RESUME_PEERING: 'from-env' })).toEqual([
      0,
      "Resumed 'from-env' cluster-wide (clusterkopfpeerings.kopf.dev): the entry of ops@desk is removed.\n",
    ]);
    expect(entries('from-env')).toEqual({});
    expect(await run('resume', ['-P', 'from-flag', '-A', '-i', 'dev@desk'], { KOPF_RESUME_PEERING: 'from-env' })).toEqual([
      0,
      "Resumed 'from-flag' cluster-wide (clusterkopfpeerings.kopf.dev): the entry of dev@desk is removed.\n",
    ]);
    expect(entries('from-flag')).toEqual({});

    // Each command reads only its own variable: the other one's is a usage error, and nothing is written.
    const [freezeCode, freezeOutput] = await run('freeze', ['-t', '60', '-A', '-i', 'ops@desk'], { KOPF_RESUME_PEERING: 'from-env' });
    expect([freezeCode, freezeOutput.split('\n')[0]]).toEqual([
      2,
      "error: required option '-P, --peering <name>' not specified (or the environment variable KOPF_FREEZE_PEERING or KOPF_FREEZE_PEERING_NAME)",
    ]);
    const [resumeCode, resumeOutput] = await run('resume', ['-A', '-i', 'ops@desk'], { KOPF_FREEZE_PEERING: 'from-env' });
    expect(resumeCode).toBe(2);
    expect(resumeOutput).toContain('KOPF_RESUME_PEERING');
    expect([entries('from-env'), entries('from-flag')]).toEqual([{}, {}]);
  });
});
