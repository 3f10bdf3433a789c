/**
 * Kopf's `freeze` and `resume` against the devcluster (R-CLI-602): the cluster-wide fallback with
 * Kopf's warning, `-n` patterns matched against the existing namespaces, exit code 0 for a peering
 * object that does not exist, the options from `KOPF_FREEZE_*`/`KOPF_RESUME_*`, `-m`, and the
 * logging options (`-v` shows Kopf's keep-alive lines, `-q` hides the result lines).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../../devcluster/testing.js';
import * as credentials from '../../../../runtime/cogs/client/credentials.js';
import * as logging from '../../../../runtime/core/actions/logging.js';
import * as cli from '../../../../runtime/kits/launching/commands.js';
import * as fx from '../../../support/operators.js';

const ROOT = path.resolve(import.meta.dirname, '../../../..');
const PEERING_CRDS = fs.readFileSync(path.join(ROOT, 'fixtures/crds/peering.yaml'), 'utf8');
const CLUSTER_PEERINGS = { group: 'kopf.dev', version: 'v1', resource: 'clusterkopfpeerings' } as const;
const PEERINGS = { group: 'kopf.dev', version: 'v1', resource: 'kopfpeerings' } as const;

type Json = Record<string, unknown>;

describe("Kopf's freeze and resume (R-CLI-602)", () => {
  let cluster: DevCluster;
  const logged: string[] = [];
  let restoreSink: () => void = () => undefined;
  beforeAll(async () => {
    cluster = await fx.startCluster();
    await cluster.load(PEERING_CRDS);
    for (const name of ['team-a', 'team-b', 'other']) await cluster.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    for (const namespace of ['team-a', 'other']) {
      await cluster.store.create({ apiVersion: 'kopf.dev/v1', kind: 'KopfPeering', metadata: { name: 'default', namespace } });
    }
    restoreSink = logging.setLogSink((_line, record) => {
      logged.push(`${logging.levelName(record.level)} ${record.message}`);
    });
  });
  afterEach(() => {
    logging.configure({});
    logged.length = 0;
  });
  afterAll(async () => {
    restoreSink();
    await cluster?.stop();
  });

  const clusterEntries = (): Json => (cluster.store.get(CLUSTER_PEERINGS, 'default') as { status?: Json } | undefined)?.status ?? {};
  const entries = (namespace: string): Json => (cluster.store.get(PEERINGS, 'default', namespace) as { status?: Json } | undefined)?.status ?? {};

  /** Runs one command with only the given environment; resolves to its exit code, stdout and stderr. */
  async function run(which: 'freeze' | 'resume', argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
    const vault = new credentials.Vault();
    vault.populate([['admin', { server: cluster.url, token: cluster.token }]]);
    const printed = { out: '', err: '' };
    const output = {
      out: (text: string) => {
        printed.out += text;
      },
      err: (text: string) => {
        printed.err += text;
      },
    };
    const code = await cli.touchCommand(which, argv, { output, vault, env });
    return { code, ...printed };
  }

  it('R-CLI-602 with neither -A nor -n: Kopf’s warning, then the cluster-wide object', async () => {
    expect(await run('freeze', ['-P', 'default', '-t', '60', '-i', 'ops@desk'])).toEqual({
      code: 0,
      out: "Frozen 'default' cluster-wide (clusterkopfpeerings.kopf.dev) for 60 seconds: the entry of ops@desk has priority 100.\n",
      err: '',
    });
    expect(logged).toContain(
      'WARNING Absence of either namespaces or cluster-wide flag will become an error soon. For now, switching to the cluster-wide mode for backward compatibility.',
    );
    expect(clusterEntries()['ops@desk']).toMatchObject({ priority: 100, lifetime: 60 });
    expect((await run('resume', ['-P', 'default', '-i', 'ops@desk'])).code).toBe(0);
    expect(clusterEntries()).toEqual({});
  });

  it('R-CLI-602 R-CLI-601 every option from KOPF_FREEZE_* / KOPF_RESUME_*', async () => {
    const env = {
      KOPF_FREEZE_PEERING: 'default',
      KOPF_FREEZE_CLUSTERWIDE: 'Yes',
      KOPF_FREEZE_LIFETIME: '30',
      KOPF_FREEZE_PRIORITY: '200',
      KOPF_FREEZE_ID: 'env@desk',
    };
    expect(await run('freeze', [], env)).toMatchObject({ code: 0, err: '' });
    expect(logged.filter((line) => line.startsWith('WARNING'))).toEqual([]);
    expect(clusterEntries()['env@desk']).toMatchObject({ priority: 200, lifetime: 30 });
    expect(await run('resume', [], { KOPF_RESUME_PEERING_NAME: 'default', KOPF_RESUME_CLUSTERWIDE: 'on', KOPF_RESUME_ID: 'env@desk' })).toMatchObject({
      code: 0,
    });
    expect(clusterEntries()).toEqual({});
  });

  it('R-CLI-602 -n patterns match the existing namespaces; a missing object is exit code 0 with a line; -m is said in the result', async () => {
    const result = await run('freeze', ['-P', 'default', '-t', '60', '-n', 'team-*', '-i', 'ops@desk', '-m', 'maintenance']);
    expect(result).toEqual({
      code: 0,
      out: "Frozen 'default' in 'team-a' (kopfpeerings.kopf.dev) for 60 seconds: the entry of ops@desk has priority 100 (maintenance).\n",
      err: "kopf-gen freeze: The peering object 'default' in 'team-b' (kopfpeerings.kopf.dev) does not exist: nothing to freeze.\n",
    });
    expect(entries('team-a')['ops@desk']).toMatchObject({ priority: 100, lifetime: 60 });
    expect(entries('other')).toEqual({});
    expect(await run('resume', ['-P', 'default', '-i', 'ops@desk'], { KOPF_RESUME_NAMESPACES: 'team-a  other' })).toMatchObject({ code: 0, err: '' });
    expect(entries('team-a')).toEqual({});
    expect(await run('freeze', ['-P', 'default', '-t', '60', '-n', 'nothing-*'])).toEqual({
      code: 0,
      out: '',
      err: 'kopf-gen freeze: No existing namespace matches nothing-*: nothing to freeze.\n',
    });
  });

  it("R-CLI-602 -v shows Kopf's keep-alive lines; -q hides the result lines", async () => {
    expect(await run('freeze', ['-P', 'default', '-t', '60', '-A', '-i', 'ops@desk', '-v'])).toMatchObject({ code: 0 });
    expect(logged).toContain("DEBUG Keep-alive in 'default' cluster-wide: ok.");
    logged.length = 0;
    expect(await run('resume', ['-P', 'default', '-A', '-i', 'ops@desk', '--quiet'])).toEqual({ code: 0, out: '', err: '' });
    expect(logged).toEqual([]);
    expect(clusterEntries()).toEqual({});
  });
});
