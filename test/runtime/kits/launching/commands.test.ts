import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as cli from '../../../../runtime/kits/launching/commands.js';
import * as settingsModule from '../../../../runtime/cogs/configs/settings.js';
import { OperatorRegistry, getDefaultRegistry, setDefaultRegistry } from '../../../../runtime/core/intents/registry.js';
import { Captured, Flag, eventually, tempDir } from '../../core/reactor/lifecycle.js';
import { captureOutput, operatorFile, useOperatorFolder } from './support.js';
import * as launchErrors from '../../../../runtime/kits/launching/errors.js';

describe('parsing (R-CLI-1)', () => {
  const cases: Array<[string, string[], NodeJS.ProcessEnv, Partial<cli.RunArgs>]> = [
    ['files and -A', ['-A', 'a.ts', 'b.js'], {}, { paths: ['a.ts', 'b.js'], clusterwide: true, namespaces: [] }],
    ['--all-namespaces', ['--all-namespaces'], {}, { clusterwide: true }],
    ['repeated -n with globs', ['-n', 'ns1', '--namespace', 'app-*,!*-pr-*'], {}, { clusterwide: false, namespaces: ['ns1', 'app-*,!*-pr-*'] }],
    ['KOPF_RUN_NAMESPACE adds one namespace', ['-n', 'a'], { KOPF_RUN_NAMESPACE: 'legacy' }, { namespaces: ['a', 'legacy'] }],
    ['KOPF_RUN_NAMESPACE is ignored with -A', ['-A'], { KOPF_RUN_NAMESPACE: 'legacy' }, { clusterwide: true, namespaces: [] }],
    ['-m modules, repeatable', ['-m', 'pkg', '-m', './local.js'], {}, { modules: ['pkg', './local.js'], paths: [] }],
    ['--standalone', ['--standalone'], {}, { standalone: true }],
    ['no --standalone', [], {}, { standalone: undefined }],
    ['no peering or liveness options', [], {}, { priority: undefined, peeringName: undefined, livenessEndpoint: undefined }],
    ['R-ACTIVITY-4 --liveness', ['--liveness=http://0.0.0.0:8080/healthz'], {}, { livenessEndpoint: 'http://0.0.0.0:8080/healthz' }],
    ['R-ACTIVITY-4 -L without a host', ['-L', 'http://:8080/healthz'], {}, { livenessEndpoint: 'http://:8080/healthz' }],
    ['an empty KOPF_RUN_PEERING', [], { KOPF_RUN_PEERING: '' }, { peeringName: undefined }],
    [
      'logging defaults',
      [],
      {},
      { logging: { logFormat: 'full', verbose: undefined, debug: undefined, quiet: undefined, logPrefix: undefined, logRefkey: undefined } },
    ],
    [
      'logging flags',
      ['-v', '-d', '-q', '--log-format', 'json', '--no-log-prefix', '--log-refkey', 'k8s'],
      {},
      { logging: { verbose: true, debug: true, quiet: true, logFormat: 'json', logPrefix: false, logRefkey: 'k8s' } },
    ],
    [
      '--log-prefix',
      ['--log-format', 'plain', '--log-prefix'],
      {},
      { logging: { logFormat: 'plain', logPrefix: true, verbose: undefined, debug: undefined, quiet: undefined, logRefkey: undefined } },
    ],
  ];
  it.each(cases)('R-CLI-1 %s', (_title, argv, env, expected) => {
    const output = captureOutput();
    expect(cli.parseRunArgs(argv, { env, output })).toMatchObject(expected);
    expect(output.text()).toBe('');
  });

  const usage: Array<[string, string[], string]> = [
    ['-n together with -A', ['-n', 'default', '-A'], "option '-A, --all-namespaces' cannot be used with option '-n, --namespace <pattern>'"],
    ['an unknown log format', ['--log-format', 'xml'], 'Allowed choices are plain, full, json.'],
    ['a non-integer priority', ['-p', 'high'], 'Not an integer.'],
    ['an unknown option', ['--bogus'], "unknown option '--bogus'"],
    [
      'R-ACTIVITY-4 an https liveness URL',
      ['--liveness', 'https://0.0.0.0:8080/healthz'],
      `option '-L, --liveness <url>': "https://0.0.0.0:8080/healthz" is not a valid endpoint URL: the scheme must be http, not https`,
    ],
    ['R-ACTIVITY-4 a liveness URL without a scheme', ['-L', '0.0.0.0:8080'], 'option \'-L, --liveness <url>\': "0.0.0.0:8080" is not a valid endpoint URL'],
  ];
  it.each(usage)('R-CLI-1 usage error: %s (exit code 2)', async (_title, argv, message) => {
    expect(() => cli.parseRunArgs(argv, { env: {}, output: captureOutput() })).toThrow(launchErrors.UsageError);
    const output = captureOutput();
    expect(await cli.runCommand(argv, { env: {}, output })).toBe(2);
    expect(output.text()).toContain(message);
  });

  // Peering options (R-PEER-2, R-PEER-8).
  const peeringCases: Array<[string, string[], NodeJS.ProcessEnv, Partial<cli.RunArgs>]> = [
    ['--dev is priority 666', ['--dev'], {}, { priority: 666, peeringName: undefined }],
    ['--priority', ['--priority', '-10'], {}, { priority: -10 }],
    ['-P makes peering mandatory', ['-P', 'ring'], {}, { peeringName: 'ring' }],
    ['--peering=NAME', ['--peering=ring'], {}, { peeringName: 'ring' }],
    ['KOPF_RUN_PEERING', [], { KOPF_RUN_PEERING: 'env-ring' }, { peeringName: 'env-ring' }],
    ['--peering wins over KOPF_RUN_PEERING', ['-P', 'flag'], { KOPF_RUN_PEERING: 'env' }, { peeringName: 'flag' }],
  ];
  it.each(peeringCases)('R-PEER-2 R-PEER-8 %s', (_title, argv, env, expected) => {
    const output = captureOutput();
    expect(cli.parseRunArgs(argv, { env, output })).toMatchObject(expected);
    expect(output.text()).toBe('');
  });

  const conflicts: Array<[string, string[], NodeJS.ProcessEnv, string]> = [
    ['--dev with -p', ['--dev', '-p', '5'], {}, "option '--dev' and option '-p, --priority <priority>' cannot be used together"],
    ['--standalone with --peering', ['--standalone', '-P', 'ring'], {}, "option '--standalone' cannot be used together with option '-P, --peering <name>'"],
    [
      '--standalone with KOPF_RUN_PEERING',
      ['--standalone'],
      { KOPF_RUN_PEERING: 'ring' },
      "option '--standalone' cannot be used together with the environment variable KOPF_RUN_PEERING",
    ],
    ['--standalone with --dev', ['--standalone', '--dev'], {}, "option '--standalone' cannot be used together with option '--dev'"],
    ['--standalone with --priority', ['--standalone', '-p', '1'], {}, "option '--standalone' cannot be used together with option '-p, --priority <priority>'"],
  ];
  it.each(conflicts)('R-PEER-2 %s is a usage error in one line (exit code 2)', async (_title, argv, env, message) => {
    expect(() => cli.parseRunArgs(argv, { env, output: captureOutput() })).toThrow(launchErrors.UsageError);
    const output = captureOutput();
    expect(await cli.runCommand([...argv, '-A', 'nothing-is-loaded.ts'], { env, output })).toBe(2);
    expect(output.text()).toContain(message);
  });

  it('R-CLI-1 --help prints the options and exits with 0', async () => {
    const output = captureOutput();
    expect(await cli.runCommand(['--help'], { output })).toBe(0);
    for (const flag of [
      '--all-namespaces',
      '--namespace',
      '--standalone',
      '--dev',
      '--priority',
      '--peering',
      '--liveness',
      '--verbose',
      '--debug',
      '--quiet',
      '--log-format',
      '--no-log-prefix',
      '--log-refkey',
      '--module',
    ]) {
      expect(output.text()).toContain(flag);
    }
    const help = output.text().replace(/\s+/g, ' ');
    expect(help).not.toMatch(/not available/);
    expect(help).toMatch(/--liveness <url> serve the liveness endpoint at http:\/\/HOST:PORT\/PATH/);
    expect(help).not.toMatch(/--liveness[^()]*\([^()]*not available/);
  });
});

describe('running (R-CLI-1/3, R-LIFE-3)', () => {
  const folder = useOperatorFolder('kopf-cli-');
  let savedRegistry: OperatorRegistry;
  let log: Captured;

  beforeEach(() => {
    savedRegistry = getDefaultRegistry();
    setDefaultRegistry(new OperatorRegistry());
    log = new Captured();
    folder.cluster.requests.clear();
  });
  afterEach(() => {
    log.restore();
    setDefaultRegistry(savedRegistry);
  });

  function fastSettings(): settingsModule.OperatorSettings {
    const settings = new settingsModule.OperatorSettings();
    settings.networking.errorBackoffs = [0.05];
    settings.queueing.exitTimeout = 0.5;
    return settings;
  }

  it('R-CLI-3 loads TypeScript files (relative to the working directory) and exits with 0 after a graceful stop', async () => {
    operatorFile(
      folder.dir,
      'hello.ts',
      [
        "on.startup(function startup_fn({ logger }) { logger.info('Loaded and started.'); });",
        "on.create(['kopf.dev', 'v1', 'kopfexamples'], function create_fn({ name, logger }) { logger.info(`Hello, ${name}!`); });",
      ].join('\n'),
    );
    const stop = new Flag();
    const output = captureOutput();
    const before = process.listenerCount('SIGINT');
    const running = cli.runCommand(['--standalone', '-A', '--log-format', 'plain', 'hello.ts'], {
      output,
      cwd: folder.dir,
      operator: { stopFlag: stop, settings: fastSettings(), handleSignals: false },
    });
    await eventually(() => log.matching('Loaded and started.').length === 1, 'the startup handler');
    await folder.cluster.store.create({ apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name: 'kex', namespace: 'default' }, spec: {} });
    await eventually(() => log.matching('[default/kex] Hello, kex!').length === 1, 'the create handler');
    expect(process.listenerCount('SIGINT')).toBe(before);
    stop.set();
    expect(await running).toBe(0);
    expect(output.text()).toBe('');
    await folder.cluster.store.delete({ apiVersion: 'kopf.dev/v1', kind: 'KopfExample' }, 'kex', { namespace: 'default' });
  });

  it('R-CLI-1 a startup failure exits with a non-zero code and says why', async () => {
    operatorFile(folder.dir, 'broken.ts', "on.startup(function startup_fn() { throw new errors.PermanentError('Cannot start.'); });");
    const output = captureOutput();
    expect(await cli.runCommand(['-A', 'broken.ts'], { output, cwd: folder.dir, operator: { settings: fastSettings(), handleSignals: false } })).toBe(1);
    expect(output.text()).toContain('kopf-gen run: One or more handlers failed.');
    expect(log.matching("Activity 'startup_fn' failed permanently: Cannot start.")).toHaveLength(1);
    expect(folder.cluster.requests.all).toHaveLength(0);
  });

  it('R-LIFE-3 a failing watcher stops the operator with a non-zero exit code', async () => {
    operatorFile(folder.dir, 'pods.ts', "on.event(['v1', 'pods'], function pod_fn() {});");
    const fault = folder.cluster.faults.add({ resource: 'pods', verb: 'list', action: { respond: { code: 404, message: 'No pods here.' } } });
    try {
      const output = captureOutput();
      expect(
        await cli.runCommand(['-A', '--standalone', 'pods.ts'], { output, cwd: folder.dir, operator: { settings: fastSettings(), handleSignals: false } }),
      ).toBe(1);
      expect(output.text()).toContain('kopf-gen run: No pods here.');
      expect(log.matching('Watcher for pods.v1@cluster-wide has failed: No pods here.')).toHaveLength(1);
    } finally {
      fault.remove();
    }
  });

  it('R-CLI-1 a missing file is an error before anything runs', async () => {
    const output = captureOutput();
    expect(await cli.runCommand(['-A', 'missing.ts'], { output, cwd: folder.dir, operator: { handleSignals: false } })).toBe(2);
    expect(output.text()).toContain('No such file: missing.ts');
    expect(folder.cluster.requests.all).toHaveLength(0);
  });

  it('R-CLI-1 -m imports modules resolved from the working directory; -n serves only the matching namespaces', async () => {
    operatorFile(
      folder.dir,
      'module.ts',
      "on.startup(function startup_fn({ logger }) { logger.info('Module loaded.'); });\non.event(['v1', 'configmaps'], function cm_fn() {});",
    );
    const stop = new Flag();
    const running = cli.runCommand(['-m', './module.ts', '-n', 'def*'], {
      output: captureOutput(),
      cwd: folder.dir,
      operator: { stopFlag: stop, settings: fastSettings(), handleSignals: false },
    });
    await folder.cluster.requests.waitFor((r) => r.resource === 'configmaps' && r.verb === 'watch', 10_000);
    stop.set();
    expect(await running).toBe(0);
    expect(log.matching('Module loaded.')).toHaveLength(1);
    const watched = new Set(folder.cluster.requests.filter((r) => r.resource === 'configmaps').map((r) => r.namespace));
    expect([...watched]).toEqual(['default']);
  });
});

describe('fatal login and connection errors are one line (R-AUTH-2/3/5)', () => {
  const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';
  let dir: string;
  let saved: { kubeconfig?: string; home?: string };
  let savedRegistry: OperatorRegistry;
  let log: Captured;

  beforeEach(() => {
    dir = tempDir('kopf-cli-');
    fs.writeFileSync(path.join(dir, 'package.json'), '{"type": "module"}\n');
    operatorFile(dir, 'op.ts', "on.event(['v1', 'pods'], function pod_fn() {});");
    saved = { kubeconfig: process.env['KUBECONFIG'], home: process.env['HOME'] };
    savedRegistry = getDefaultRegistry();
    setDefaultRegistry(new OperatorRegistry());
    log = new Captured({ logFormat: 'full' });
  });
  afterEach(() => {
    log.restore();
    setDefaultRegistry(savedRegistry);
    for (const [name, value] of [
      ['KUBECONFIG', saved.kubeconfig],
      ['HOME', saved.home],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  /** Every log line is one line, and no record carries an error (whose stack trace would be printed). */
  function expectNoStackTraces(): void {
    expect(log.lines.filter((line) => line.includes('\n'))).toEqual([]);
    expect(log.records.filter((record) => record.error !== undefined).map((record) => record.message)).toEqual([]);
  }

  // On a machine that runs in a pod, the service-account login would find credentials.
  it.skipIf(fs.existsSync(SERVICE_ACCOUNT_TOKEN))(
    'R-CLI-701 no credentials anywhere: one line naming what was looked for, and the operator never starts',
    async () => {
      delete process.env['KUBECONFIG'];
      process.env['HOME'] = dir;
      const output = captureOutput();
      expect(await cli.runCommand(['-A', '--standalone', 'op.ts'], { output, cwd: dir, operator: { handleSignals: false } })).toBe(1);
      const message =
        `No credentials found: KUBECONFIG is not set, ${path.join(dir, '.kube', 'config')} does not exist, ` +
        `and ${SERVICE_ACCOUNT_TOKEN} does not exist (not running in a pod). Point KUBECONFIG at a kubeconfig file or register a login handler (on.login).`;
      expect(output.text()).toBe(`kopf-gen run: ${message}\n`);
      expect(log.records.filter((record) => record.level >= 20).map((record) => record.message)).toEqual([]);
      expectNoStackTraces();
    },
  );

  it.skipIf(fs.existsSync(SERVICE_ACCOUNT_TOKEN))('R-AUTH-3 a login handler that finds nothing: the WARNING, then one line', async () => {
    delete process.env['KUBECONFIG'];
    process.env['HOME'] = dir;
    operatorFile(dir, 'op.ts', "on.event(['v1', 'pods'], function pod_fn() {});\non.login(function nothing() { return null; });");
    const output = captureOutput();
    expect(await cli.runCommand(['-A', '--standalone', 'op.ts'], { output, cwd: dir, operator: { handleSignals: false } })).toBe(1);
    expect(output.text()).toMatch(/^kopf-gen run: .+\n$/);
    expect(log.matching('Initial authentication has failed: no credentials were retrieved from the login handlers.')).toHaveLength(1);
    expectNoStackTraces();
  });

  it('R-AUTH-5 a stale kubeconfig: one line per failed attempt, one final line', async () => {
    const file = path.join(dir, 'config');
    fs.writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: stale',
        'clusters: [{name: gone, cluster: {server: "https://127.0.0.1:1"}}]',
        'users: [{name: me, user: {token: old}}]',
        'contexts: [{name: stale, context: {cluster: gone, user: me}}]',
        '',
      ].join('\n'),
    );
    process.env['KUBECONFIG'] = file;
    const settings = new settingsModule.OperatorSettings();
    settings.networking.errorBackoffs = [];
    const output = captureOutput();
    expect(await cli.runCommand(['-A', '--standalone', 'op.ts'], { output, cwd: dir, operator: { settings, handleSignals: false } })).toBe(1);
    expect(output.text()).toBe('kopf-gen run: GET https://127.0.0.1:1/api failed: connect ECONNREFUSED 127.0.0.1:1\n');
    expect(
      log.matching('Request attempt #1/1 failed; escalating: GET https://127.0.0.1:1/api -> ConnectionError: connect ECONNREFUSED 127.0.0.1:1'),
    ).toHaveLength(1);
    expect(log.matching('has failed: GET https://127.0.0.1:1/api failed: connect ECONNREFUSED 127.0.0.1:1')).toHaveLength(1);
    expectNoStackTraces();
  });
});
