/**
 * The replicas of a sharded operator as the benchmarks run them: separate processes of one
 * command (the compiled `fixtures/operators/bench-sharding.ts` by default), each with its own shard
 * identity and its own ledger file, started, stopped gracefully (SIGTERM: the replica leaves the
 * ring) or killed (SIGKILL of its process group) one by one, with the moment each one ended taken
 * on the monotonic clock the ledgers use. The ledgers of all replicas are read as they grow.
 * Shared by the sharding benchmark and the sharded variant of the chaos benchmark.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as clients from './clients.js';
import * as compiling from './compiling.js';
import * as processes from './processes.js';
import * as ledger from './sharding-ledger.js';

export const BUILD = 'bench/.build/sharding';
export const COMPILED_OPERATOR = `${BUILD}/bench-sharding.js`;
/** The ring every benchmark replica joins. */
export const RING = 'bench';
/** The label of an object's owner in the benchmark's ring. */
export const OWNER_LABEL = `shard.kopf-gen.dev/${RING}`;
/** A replica's command: `{id}`, `{ring}` and `{kubeconfig}` are substituted. */
export const SHARDED_COMMAND = `exec node bin/kopf-gen.js run ${COMPILED_OPERATOR} --all-namespaces --quiet --shards {ring} --shard-id {id}`;
/** A replica's command with the ring's timings from `BENCH_SHARDING_LEASE_DURATION` (`sharding-launcher.ts`). */
export const SHARDED_SHORT_LEASE_COMMAND = `exec node ${BUILD}/sharding-launcher.js ${COMPILED_OPERATOR} --all-namespaces --quiet --shards {ring} --shard-id {id}`;
/** The same operator without sharding (one replica only: the runtime before sharding, or a baseline). */
export const PLAIN_COMMAND = `exec node bin/kopf-gen.js run ${COMPILED_OPERATOR} --all-namespaces --quiet --standalone`;

/** The machine's monotonic clock in milliseconds (the ledgers' `mono`). */
export const mono = (): number => Number(process.hrtime.bigint() / 1000n) / 1000;
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Whether the compiled command line knows `--shards` (the sharding runtime is built). */
export function shardingSupported(): boolean {
  const help = spawnSync(process.execPath, ['bin/kopf-gen.js', 'run', '--help'], {
    cwd: compiling.ROOT,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return `${help.stdout}${help.stderr}`.includes('--shards');
}

/** Compiles the replicas' operator; throws if the compiled runtime is missing or stale. */
export function prepare(): string {
  compiling.requireFreshDistribution();
  compiling.transpile('fixtures/operators/bench-sharding.ts', COMPILED_OPERATOR);
  compiling.transpile('bench/sharding-launcher.ts', `${BUILD}/sharding-launcher.js`);
  return compiling.requireRuntimeFromDist(BUILD);
}

/** One replica process. */
export class Replica {
  readonly process: processes.OperatorProcess;
  readonly startedMono = mono();
  end: ledger.ReplicaEnd | undefined;

  constructor(
    readonly id: string,
    command: string,
    env: Record<string, string>,
    readonly ledgerFile: string,
    logFile: string,
  ) {
    fs.writeFileSync(ledgerFile, '', { flag: 'a' });
    this.process = new processes.OperatorProcess(command, { ...env, BENCH_SHARDING_LEDGER: ledgerFile, BENCH_SHARDING_REPLICA: id }, logFile);
  }

  get running(): boolean {
    return this.end === undefined && !this.process.exited;
  }

  /** SIGKILL; returns when the kill was sent (monotonic ms). The end is when the exit was seen. */
  async kill(): Promise<number> {
    const sent = mono();
    await this.process.kill();
    this.end = { mono: mono(), killed: true };
    return sent;
  }

  /** SIGTERM (SIGKILL after `graceMs`): a graceful leave. */
  async stop(graceMs = 30_000): Promise<void> {
    await this.process.stop(graceMs);
    this.end ??= { mono: mono(), killed: false };
  }

  /** Records an exit nobody asked for (a crash). */
  noteExit(): void {
    if (this.end === undefined && this.process.exited) this.end = { mono: mono(), killed: false };
  }
}

/** Reads every replica's ledger as it grows: whole lines only. */
export class Ledgers {
  readonly lines: ledger.ShardLine[] = [];
  unreadable = 0;
  private readonly files = new Map<string, { offset: number; rest: string }>();

  add(file: string): void {
    if (!this.files.has(file)) this.files.set(file, { offset: 0, rest: '' });
  }

  /** Reads what was appended since the last call; `finish` also takes a last line without its newline. */
  poll(finish = false): void {
    for (const [file, state] of this.files) {
      let text = '';
      try {
        const fd = fs.openSync(file, 'r');
        try {
          const size = fs.fstatSync(fd).size;
          if (size > state.offset) {
            const buffer = Buffer.alloc(size - state.offset);
            fs.readSync(fd, buffer, 0, buffer.length, state.offset);
            state.offset = size;
            text = buffer.toString('utf8');
          }
        } finally {
          fs.closeSync(fd);
        }
      } catch {
        continue;
      }
      text = state.rest + text;
      const cut = finish ? text.length : text.lastIndexOf('\n') + 1;
      state.rest = text.slice(cut);
      const parsed = ledger.parseShardLedger(text.slice(0, cut));
      for (const l of parsed.lines) this.lines.push(l);
      this.unreadable += parsed.unreadable;
    }
  }
}

/** The command of a sharded replica: the production command line, or the launcher when the Lease duration is shortened. */
export function shardedCommand(leaseDuration: number | undefined): string {
  return leaseDuration === undefined ? SHARDED_COMMAND : SHARDED_SHORT_LEASE_COMMAND;
}

/** The replicas of one session, their ledgers, and how each ended. */
export class Fleet {
  readonly replicas = new Map<string, Replica>();
  readonly ledgers = new Ledgers();

  constructor(
    private readonly command: string,
    private readonly env: Record<string, string>,
    private readonly dir: string,
    private readonly kubeconfig: string,
  ) {}

  /** Starts the replica `id`. */
  start(id: string): Replica {
    const command = this.command.replaceAll('{id}', id).replaceAll('{ring}', RING).replaceAll('{kubeconfig}', this.kubeconfig);
    const file = path.join(this.dir, `ledger-${id}.jsonl`);
    const replica = new Replica(id, command, { ...this.env, KUBECONFIG: this.kubeconfig }, file, path.join(this.dir, `${id}.log`));
    this.replicas.set(id, replica);
    this.ledgers.add(file);
    return replica;
  }

  running(): Replica[] {
    for (const r of this.replicas.values()) r.noteExit();
    return [...this.replicas.values()].filter((r) => r.running);
  }

  /** How each replica that ended ended. */
  ends(): Map<string, ledger.ReplicaEnd> {
    const out = new Map<string, ledger.ReplicaEnd>();
    for (const r of this.replicas.values()) {
      r.noteExit();
      if (r.end) out.set(r.id, r.end);
    }
    return out;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.replicas.values()].map((r) => r.stop(10_000)));
    this.ledgers.poll(true);
  }
}

/** The holders of the ring's Leases in `namespace` (listed by the ring's label). */
export async function ringHolders(client: clients.Client, namespace = 'default'): Promise<string[]> {
  const selector = encodeURIComponent(`shard.kopf-gen.dev/ring=${RING}`);
  const r = await client.request('GET', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases?labelSelector=${selector}`);
  if (r.status !== 200) return [];
  const list = JSON.parse(r.text) as { items?: { spec?: { holderIdentity?: string } }[] };
  return (list.items ?? []).map((l) => l.spec?.holderIdentity ?? '').filter(Boolean);
}
