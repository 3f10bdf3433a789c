/**
 * Probe of credentials that fail (issue 33, items 4 and 9): how an operator's client behaves when
 * its credentials or its server go bad, measured through the runtime's own client (`connect()`)
 * against an enforcing devcluster and hostile exec plugins.
 *
 * - 401 loop: an exec plugin whose tokens the server rejects; requests are sent as a watcher would
 *   (again one second after each failure) for `--seconds` of real time. Counted: plugin runs and
 *   the client's log lines.
 * - Leaks: plugins that print a token after their JSON, or on stderr; the longest run of the
 *   token's characters found in errors and log lines.
 * - Silence: a TCP server that accepts connections and never answers; real seconds until the
 *   client names it (an error, or an ERROR line), capped at `--silence-cap`.
 * - Output: a plugin printing `--output-mb` MB; the process's RSS growth while it runs.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as YAML from 'yaml';
import { DevCluster } from '../../devcluster/testing.js';
import { OperatorSettings, builtins, connect } from '../../runtime/index.js';
import type * as loggers from '../../runtime/cogs/structs/loggers.js';
import type * as report from '../report.js';

const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXBheWxvYWQtMDEyMzQ1Njc4OQ.c2lnbmF0dXJl';

/** A logger keeping every line as text. */
class Lines implements loggers.Logger {
  readonly lines: string[] = [];
  debug(message: string): void {
    this.lines.push(`DEBUG ${message}`);
  }
  info(message: string): void {
    this.lines.push(`INFO ${message}`);
  }
  warning(message: string): void {
    this.lines.push(`WARNING ${message}`);
  }
  error(message: string): void {
    this.lines.push(`ERROR ${message}`);
  }
  critical(message: string): void {
    this.lines.push(`CRITICAL ${message}`);
  }
}

function option(args: readonly string[], name: string, fallback: number): number {
  const index = args.indexOf(name);
  return index >= 0 && args[index + 1] !== undefined ? Number(args[index + 1]) : fallback;
}

function kubeconfigFor(cluster: DevCluster, dir: string, user: Record<string, unknown>): string {
  const config = YAML.parse(cluster.kubeconfig()) as { users: { user: unknown }[] };
  config.users[0]!.user = user;
  const file = path.join(dir, 'config');
  fs.writeFileSync(file, YAML.stringify(config));
  return file;
}

function plugin(dir: string, name: string, body: string): Record<string, unknown> {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: file, interactiveMode: 'Never' } };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Plugin runs and log lines while requests keep failing for `seconds`. */
async function unauthorizedLoop(cluster: DevCluster, seconds: number): Promise<{ runs: number; lines: number; last: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probe-401-'));
  const user = plugin(
    dir,
    'plugin.sh',
    `echo x >> "${dir}/runs"\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"revoked-'$$'"}}'`,
  );
  const logger = new Lines();
  const client = await connect({ kubeconfig: kubeconfigFor(cluster, dir, user), logger });
  const deadline = Date.now() + seconds * 1000;
  let last = '';
  try {
    while (Date.now() < deadline) {
      const left = deadline - Date.now();
      const outcome = await Promise.race([
        client.list(builtins.Namespaces).then(
          () => 'ok',
          (e: unknown) => String((e as Error).message ?? e),
        ),
        sleep(left).then(() => ''),
      ]);
      if (outcome) last = outcome;
      await sleep(Math.min(1000, Math.max(0, deadline - Date.now())));
    }
  } finally {
    await Promise.race([client.close(), sleep(2000)]);
  }
  const runs = fs.existsSync(path.join(dir, 'runs')) ? fs.readFileSync(path.join(dir, 'runs'), 'utf8').split('\n').filter(Boolean).length : 0;
  return { runs, lines: logger.lines.length, last };
}

/** The longest run of the token's characters (≥ 8) found in a text. */
function leaked(text: string): number {
  for (let length = TOKEN.length; length >= 8; length -= 1) {
    for (let start = 0; start + length <= TOKEN.length; start += 1) if (text.includes(TOKEN.slice(start, start + length))) return length;
  }
  return 0;
}

/** Bytes of the token in errors and logs of plugins that print it where they should not. */
async function leaks(cluster: DevCluster): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probe-leak-'));
  const json = `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${TOKEN}"}}`;
  const bodies = [`echo '${json}'\necho '${TOKEN}'`, `echo 'token ${TOKEN} rejected' >&2\nexit 1`, `echo '${TOKEN}'`];
  let worst = 0;
  for (const [index, body] of bodies.entries()) {
    const sub = fs.mkdtempSync(path.join(dir, `${index}-`));
    const logger = new Lines();
    const text: string[] = [];
    try {
      const client = await connect({ kubeconfig: kubeconfigFor(cluster, sub, plugin(sub, 'plugin.sh', body)), logger });
      await client.list(builtins.Namespaces).catch((e: unknown) => text.push(String(e), String((e as Error)?.stack), String((e as Error)?.cause ?? '')));
      await client.close();
    } catch (error) {
      text.push(String(error), String((error as Error)?.stack));
    }
    worst = Math.max(worst, leaked([...text, ...logger.lines].join('\n')));
  }
  return worst;
}

/** Seconds until a client names a server that accepts connections and never answers. */
async function silence(cap: number): Promise<number> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const logger = new Lines();
  const started = Date.now();
  // One attempt: its failure is what is timed (retries would outlive the probe).
  const settings = new OperatorSettings();
  settings.networking.errorBackoffs = [];
  const client = await connect({ connection: { server: `https://127.0.0.1:${port}`, token: 't', insecure: true }, logger, settings });
  const failed = client.list(builtins.Namespaces).then(
    () => undefined,
    () => undefined,
  );
  let named: number | undefined;
  while (named === undefined && Date.now() - started < cap * 1000) {
    if (logger.lines.some((line) => line.includes(`127.0.0.1:${port}`))) named = (Date.now() - started) / 1000;
    await Promise.race([failed.then(() => sleep(0)), sleep(50)]);
  }
  for (const socket of sockets) socket.destroy();
  server.close();
  await Promise.race([client.close(), sleep(2000)]);
  return named ?? cap;
}

/** RSS growth, MB, while a plugin prints `megabytes` MB. */
async function output(cluster: DevCluster, megabytes: number): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probe-output-'));
  const user = plugin(dir, 'plugin.sh', `head -c ${megabytes * 1_000_000} /dev/zero | tr '\\0' 'a'`);
  global.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  try {
    const client = await connect({ kubeconfig: kubeconfigFor(cluster, dir, user), logger: new Lines() });
    await client.list(builtins.Namespaces).catch(() => undefined);
    await client.close();
  } finally {
    clearInterval(sampler);
  }
  peak = Math.max(peak, process.memoryUsage().rss);
  return (peak - before) / 1e6;
}

export async function run(args: readonly string[] = []): Promise<report.Result> {
  const seconds = option(args, '--seconds', 15);
  const cap = option(args, '--silence-cap', 20);
  const megabytes = option(args, '--output-mb', 300);
  const cluster = await DevCluster.start({ auth: 'enforced' });
  try {
    const loop = await unauthorizedLoop(cluster, seconds);
    const leakedBytes = await leaks(cluster);
    const silent = await silence(cap);
    const rss = await output(cluster, megabytes);
    return {
      name: 'security: credentials',
      figures: {
        pluginRunsAfter401: loop.runs,
        logLinesAfter401: loop.lines,
        tokenBytesInErrorsAndLogs: leakedBytes,
        silentServerNamedSeconds: silent,
        rssGrowthMbForPluginOutput: rss,
      },
      targets: {
        pluginRunsAfter401: { max: 3 },
        logLinesAfter401: { max: 6 },
        tokenBytesInErrorsAndLogs: { max: 0 },
        silentServerNamedSeconds: { max: 10.5 },
        rssGrowthMbForPluginOutput: { max: 50 },
      },
      notes: {
        pluginRunsAfter401: `real time: runs of an exec plugin whose tokens the server rejects, ${seconds} s of requests (again 1 s after each failure) through connect()`,
        logLinesAfter401: `the client's log lines in the same ${seconds} s; the last outcome was: ${loop.last.slice(0, 200)}`,
        tokenBytesInErrorsAndLogs: 'longest run of a token found in errors and logs of plugins printing it after their JSON, on stderr, or instead of JSON',
        silentServerNamedSeconds: `real seconds until a TCP server that never answers is named in a log line (capped at ${cap} s; the request timeout is 300 s)`,
        rssGrowthMbForPluginOutput: `peak RSS growth while a plugin prints ${megabytes} MB`,
      },
    };
  } finally {
    await cluster.stop();
  }
}
