/**
 * The example examples/22-sharding, run as its README says: two replicas, each a `kopf-gen run -A
 * --shards example` process of its own (as two pods would be), on real time against a devcluster
 * in this process. Each object is labelled with one owner, and its create handler and its daemon
 * run in that owner only: the other replica never logs about it (R-SHARD-404). A graceful stop
 * deletes each replica's Lease.
 */
import * as child from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster } from 'kopf-gen/testing';
import { childEnv } from '../support/processes.js';
import { startTestCluster, type TestCluster } from '../support/cluster.js';
import { CRD, eventually, KEX, ROOT } from './support.js';

const LEASES = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' } as const;
const RING = 'example';
const LABEL = `shard.kopf-gen.dev/${RING}`;
const REPLICAS = ['replica-a', 'replica-b'] as const;
/** Enough objects that both replicas get some (all on one of two: a chance of 2 in 2^20). */
const OBJECTS = 20;

type Json = Record<string, unknown>;

/** One replica: a `kopf-gen run` process with its output. */
interface Replica {
  readonly identity: string;
  readonly process: child.ChildProcess;
  output: string;
}

describe('examples/22-sharding', () => {
  let test: TestCluster | undefined;
  let cluster: DevCluster;
  let dir: string;
  const replicas: Replica[] = [];

  beforeAll(async () => {
    test = await startTestCluster({ tls: false, crds: [CRD], prefix: 'kopf-sharding-' });
    cluster = test.cluster;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-sharding-'));
  });
  afterAll(async () => {
    for (const replica of replicas) if (replica.process.exitCode === null) replica.process.kill('SIGKILL');
    await test?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function start(identity: string, kubeconfig: string): Replica {
    const file = path.join(ROOT, 'examples/22-sharding/example.ts');
    const proc = child.spawn(
      process.execPath,
      [
        '--conditions=kopf-gen-source',
        '--import',
        'tsx',
        path.join(ROOT, 'scripts/kopf-gen.ts'),
        'run',
        '-A',
        '--shards',
        RING,
        '--verbose',
        '--log-format',
        'plain',
        file,
      ],
      { cwd: ROOT, env: childEnv({ KUBECONFIG: kubeconfig, POD_NAME: identity, POD_NAMESPACE: 'default' }), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const replica: Replica = { identity, process: proc, output: '' };
    proc.stdout!.on('data', (chunk: Buffer) => {
      replica.output += chunk.toString('utf8');
    });
    proc.stderr!.on('data', (chunk: Buffer) => {
      replica.output += chunk.toString('utf8');
    });
    replicas.push(replica);
    return replica;
  }

  const leases = (): Json[] =>
    cluster.store.list(LEASES, 'default').filter((lease) => (lease['metadata'] as { labels?: Json }).labels?.['shard.kopf-gen.dev/ring'] === RING);
  const versionOf = (name: string): string | undefined =>
    (leases().find((lease) => (lease['metadata'] as { name: string }).name === name)?.['metadata'] as { resourceVersion?: string } | undefined)
      ?.resourceVersion;
  const objects = (): Json[] => cluster.store.list(KEX, 'default');
  const ownerOf = (body: Json): unknown => (body['metadata'] as { labels?: Json }).labels?.[LABEL];
  const handlerOf = (body: Json): unknown => ((body['status'] as Json | undefined)?.['create_fn'] as Json | undefined)?.['replica'];

  it('R-SHARD-404 22-sharding: two replicas, each object labelled with one owner, handled and monitored by that owner only', async () => {
    const kubeconfig = cluster.writeKubeconfig(path.join(dir, 'kubeconfig'));
    const [a, b] = REPLICAS.map((identity) => start(identity, kubeconfig)) as [Replica, Replica];
    const outputs = (): string => replicas.map((replica) => `--- ${replica.identity}:\n${replica.output}`).join('\n');
    /** Fails the wait at once when a replica has exited (a usage error, a crash), with what it printed. */
    const alive = (): true => {
      const gone = replicas.find((replica) => replica.process.exitCode !== null);
      if (gone !== undefined) throw new Error(`The replica ${gone.identity} exited with ${gone.process.exitCode}:\n${outputs()}`);
      return true;
    };

    // Both have joined: each holds its Lease, and has renewed it twice since both exist — so each
    // has polled the ring at least once after the other joined, and both see the same members.
    await eventually(() => alive() && leases().length === 2, "both replicas' Leases", 60_000);
    const joined = REPLICAS.map((identity) => versionOf(`${RING}-${identity}`));
    expect(joined.every((version) => version !== undefined)).toBe(true);
    for (const [index, identity] of REPLICAS.entries()) {
      const seen = new Set([joined[index]]);
      await eventually(
        () => {
          seen.add(versionOf(`${RING}-${identity}`));
          return seen.size >= 3;
        },
        `two renewals of ${identity}'s Lease`,
        30_000,
      );
    }

    for (let index = 0; index < OBJECTS; index += 1) {
      await cluster.store.create({ apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name: `sharded-${index}`, namespace: 'default' }, spec: {} });
    }
    await eventually(() => alive() && objects().length === OBJECTS && objects().every((body) => handlerOf(body) !== undefined), 'every object handled', 60_000);
    await eventually(
      () =>
        objects().every((body) => {
          const owner = replicas.find((replica) => replica.identity === ownerOf(body));
          return owner?.output.includes(`Monitoring ${(body['metadata'] as { name: string }).name} in replica ${owner.identity}.`) === true;
        }),
      "every object's daemon in its owner",
      30_000,
    );

    for (const body of objects()) {
      const name = (body['metadata'] as { name: string }).name;
      const owner = ownerOf(body);
      expect(REPLICAS).toContain(owner);
      expect(handlerOf(body)).toBe(owner); // the create handler ran in the owner…
      for (const replica of [a, b]) {
        const mine = replica.identity === owner;
        const created = replica.output.split('\n').filter((line) => line.includes(`Created ${name}: handled by replica`));
        expect(created).toHaveLength(mine ? 1 : 0); // …once, and never in the other replica
        expect(replica.output.includes(`Monitoring ${name} in replica`)).toBe(mine);
      }
    }
    for (const replica of [a, b]) expect(objects().some((body) => ownerOf(body) === replica.identity)).toBe(true);

    // A graceful stop: each replica leaves the ring by deleting its Lease.
    const exits = [a, b].map((replica) => new Promise<number | null>((resolve) => replica.process.once('exit', (code) => resolve(code))));
    for (const replica of [a, b]) replica.process.kill('SIGTERM');
    expect(await Promise.all(exits)).toEqual([0, 0]);
    expect(leases()).toEqual([]);
  }, 180_000);
});
