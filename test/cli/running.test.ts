/**
 * The `kopf-gen run` command of the binary: the launcher's own options (`--dev-cluster[=auto]`,
 * `--crd`), when the embedded devcluster starts (only when asked), what it says, and how the
 * command fails without a cluster. The operator runs in-process here, except for the test of the
 * compiled binary's signal handling.
 */
import * as child from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as cli from '../../cli/main.js';
import * as runCommand from '../../cli/running.js';
import * as api from '../../runtime/cogs/client/api.js';
import * as credentials from '../../runtime/cogs/client/credentials.js';
import * as logins from '../../runtime/cogs/client/logins.js';
import * as settingsModule from '../../runtime/cogs/configs/settings.js';
import * as references from '../../runtime/cogs/structs/references.js';
import * as logging from '../../runtime/core/actions/logging.js';
import { OperatorRegistry, getDefaultRegistry, setDefaultRegistry } from '../../runtime/core/intents/registry.js';
import { eventually } from '../support/waiting.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ON_MODULE = path.join(ROOT, 'runtime/on.ts');
const CRD = path.join(ROOT, 'fixtures/crds/kopfexamples.yaml');
const IN_A_POD = fs.existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token');
/** The pod detection of a machine that is not in a pod, wherever the tests run. */
const NOT_A_POD = { env: {}, tokenPath: '/nonexistent/serviceaccount/token' };
const KOPFEXAMPLES = references.makeResource({ group: 'kopf.dev', version: 'v1', plural: 'kopfexamples', kind: 'KopfExample' });

function output() {
  let text = '';
  return {
    out: (t: string) => {
      text += t;
    },
    err: (t: string) => {
      text += t;
    },
    stdin: async () => '',
    text: () => text,
  };
}

/**
 * A project folder with an operator and the example CRD in ./crds; HOME is an empty folder. The
 * operator imports the runtime by its source path (for in-process runs, which share the test's
 * module instances), or as `kopf-gen/runtime` through a node_modules link to this checkout (for
 * the compiled binary, whose runtime is the compiled one).
 */
function project(options: { readonly runtime: 'source' | 'package' } = { runtime: 'source' }): { dir: string; home: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-run-'));
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-home-'));
  fs.mkdirSync(path.join(dir, 'crds'));
  fs.copyFileSync(CRD, path.join(dir, 'crds', 'kopfexamples.yaml'));
  fs.writeFileSync(path.join(dir, 'package.json'), '{"type": "module"}\n');
  fs.writeFileSync(
    path.join(dir, 'operator.ts'),
    [
      `import { on } from ${JSON.stringify(options.runtime === 'source' ? ON_MODULE : 'kopf-gen/runtime')};`,
      "on.startup(function startup_fn({ logger }) { logger.info('Operator started.'); });",
      "on.create(['kopf.dev', 'v1', 'kopfexamples'], function create_fn({ name, logger }) { logger.info(`Hello, ${name}!`); });",
      '',
    ].join('\n'),
  );
  if (options.runtime === 'package') {
    fs.mkdirSync(path.join(dir, 'node_modules'));
    fs.symlinkSync(ROOT, path.join(dir, 'node_modules', 'kopf-gen'));
  }
  return { dir, home };
}

describe('launcher arguments', () => {
  it.each([
    [['-A', 'op.ts'], { devCluster: 'never', crds: [], inPod: false, reset: false, rest: ['-A', 'op.ts'] }],
    [
      ['--dev-cluster', '-A', '--crd', 'a.yaml', '--crd=b.yaml', 'op.ts'],
      { devCluster: 'always', crds: ['a.yaml', 'b.yaml'], inPod: false, reset: false, rest: ['-A', 'op.ts'] },
    ],
    [['--dev-cluster=auto', 'op.ts'], { devCluster: 'auto', crds: [], inPod: false, reset: false, rest: ['op.ts'] }],
    [['--dev-cluster=always', 'op.ts'], { devCluster: 'always', crds: [], inPod: false, reset: false, rest: ['op.ts'] }],
    [['--dev-cluster', '--dev-cluster-in-pod', 'op.ts'], { devCluster: 'always', crds: [], inPod: true, reset: false, rest: ['op.ts'] }],
    [['-A', '--', '--dev-cluster'], { devCluster: 'never', crds: [], inPod: false, reset: false, rest: ['-A', '--', '--dev-cluster'] }],
    [['--dev-cluster=auto', '--watch', 'op.ts'], { devCluster: 'auto', crds: [], inPod: false, watch: true, reset: false, rest: ['op.ts'] }],
    [['--no-watch', '-A', 'op.ts'], { devCluster: 'never', crds: [], inPod: false, watch: false, reset: false, rest: ['-A', 'op.ts'] }],
    [['--dev-cluster=auto', '--reset-dev-cluster', 'op.ts'], { devCluster: 'auto', crds: [], inPod: false, reset: true, rest: ['op.ts'] }],
  ])('splits %j', (args, expected) => {
    expect(runCommand.splitLauncherArgs(args)).toEqual(expected);
  });

  it('--crd without a file is a usage error', async () => {
    expect(() => runCommand.splitLauncherArgs(['--crd'])).toThrow('--crd needs a file');
    const out = output();
    expect(await cli.main(['run', '--crd'], out)).toBe(2);
  });

  it("--help lists the runtime's options and then the development options of kopf-gen run", async () => {
    const out = output();
    expect(await cli.main(['run', '--help'], out)).toBe(0);
    expect(out.text()).toMatch(
      /-A, --all-namespaces[\s\S]*\nDevelopment options \(kopf-gen run only; `node dist\/main\.js` has none of them\):\n {2}--dev-cluster\[=always\|auto\][\s\S]*--crd <file>/,
    );
  });

  it('an unknown --dev-cluster mode is a usage error', async () => {
    expect(() => runCommand.splitLauncherArgs(['--dev-cluster=sometimes'])).toThrow('--dev-cluster=sometimes: the mode must be "always" or "auto"');
    const out = output();
    expect(await cli.main(['run', '--dev-cluster=sometimes', 'op.ts'], out)).toBe(2);
    expect(out.text()).toBe('kopf-gen run: --dev-cluster=sometimes: the mode must be "always" or "auto"\n');
  });

  it.each<[string, NodeJS.ProcessEnv, string[], boolean]>([
    ['KUBECONFIG', { KUBECONFIG: '/nowhere/config', HOME: '/home/u' }, [], true],
    ['~/.kube/config', { HOME: '/home/u' }, ['/home/u/.kube/config'], true],
    ['a pod', { HOME: '/home/u' }, ['/var/run/secrets/kubernetes.io/serviceaccount/token'], true],
    ['nothing', { HOME: '/home/u' }, [], false],
    ['a pod without a token (never the devcluster in a pod)', { HOME: '/home/u', KUBERNETES_SERVICE_HOST: '10.0.0.1' }, [], true],
  ])('a cluster is configured with %s', (_title, env, files, expected) => {
    expect(runCommand.isClusterConfigured(env, (file) => files.includes(file))).toBe(expected);
  });
});

describe('kopf-gen run with the devcluster fallback', () => {
  let saved: { KUBECONFIG?: string | undefined; HOME?: string | undefined; KUBERNETES_SERVICE_HOST?: string | undefined };
  let savedRegistry: OperatorRegistry;
  let restoreSink: () => void;
  let lines: string[];

  beforeEach(() => {
    saved = { KUBECONFIG: process.env['KUBECONFIG'], HOME: process.env['HOME'], KUBERNETES_SERVICE_HOST: process.env['KUBERNETES_SERVICE_HOST'] };
    // These tests are about a machine that is not in a pod, wherever they run.
    delete process.env['KUBERNETES_SERVICE_HOST'];
    savedRegistry = getDefaultRegistry();
    setDefaultRegistry(new OperatorRegistry());
    lines = [];
    restoreSink = logging.setLogSink((line) => {
      lines.push(line);
    });
  });
  afterEach(() => {
    restoreSink();
    setDefaultRegistry(savedRegistry);
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  // A machine with a service-account token (a pod) always has a cluster configured: the two tests
  // about having none cannot run there.
  it.skipIf(IN_A_POD)(
    'R-CLI-204: --dev-cluster=auto without a configured cluster starts the devcluster with ./crds, writes a kubeconfig, points KUBECONFIG at it for the operator, and says so',
    async () => {
      const { dir, home } = project();
      delete process.env['KUBECONFIG'];
      process.env['HOME'] = home;
      const out = output();
      const stop = new AbortController();
      const running = runCommand.run(['--dev-cluster=auto', '--no-watch', '--standalone', '-A', 'operator.ts'], out, {
        cwd: dir,
        operator: { stopFlag: stop.signal, handleSignals: false },
        pod: NOT_A_POD,
      });
      const kubeconfig = path.join(dir, '.kopf-gen', 'kubeconfig');
      await eventually(() => lines.some((line) => line.includes('Initial authentication has finished.')), 'the operator to log in', 15_000);
      expect(out.text()).toMatch(
        /^No cluster is configured \(no KUBECONFIG, no ~\/\.kube\/config, not in a pod\) and --dev-cluster=auto is given: started the devcluster at https:\/\/127\.0\.0\.1:\d+ with 1 CRD file\(s\); kubeconfig: \S+; try: kubectl --kubeconfig \S+ get kopfexamples -A\n$/,
      );
      expect(out.text()).toContain(`kubeconfig: ${kubeconfig};`);
      // The operator's process has KUBECONFIG pointing at the devcluster (for client-node's loadFromDefault()).
      expect(process.env['KUBECONFIG']).toBe(kubeconfig);

      // The operator serves the devcluster: create an object through the written kubeconfig.
      const vault = new credentials.Vault();
      vault.populate({ kubeconfig: logins.loginWithKubeconfig({ paths: [kubeconfig] }) });
      const client = new api.HttpKubeApi({ vault, settings: new settingsModule.OperatorSettings(), logger: logging.getLogger('test') });
      await client.create(KOPFEXAMPLES, 'default', { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name: 'kex-1' }, spec: {} });
      await eventually(() => lines.some((line) => line.includes('[default/kex-1] Hello, kex-1!')), 'the create handler', 15_000);
      client.close();

      stop.abort();
      expect(await running).toBe(0);
      expect(process.env['KUBECONFIG']).toBeUndefined();
      const settings = new settingsModule.OperatorSettings();
      settings.networking.errorBackoffs = [];
      const gone = new api.HttpKubeApi({ vault, settings, logger: logging.getLogger('test') });
      await expect(gone.list(KOPFEXAMPLES, 'default')).rejects.toMatchObject({ code: 'ConnectionError' });
      gone.close();
    },
  );

  it.skipIf(IN_A_POD)(
    'R-CLI-206: the devcluster of kopf-gen run keeps its objects in .kopf-gen/devcluster across runs; --reset-dev-cluster starts it empty',
    async () => {
      const { dir, home } = project();
      delete process.env['KUBECONFIG'];
      process.env['HOME'] = home;
      const kubeconfig = path.join(dir, '.kopf-gen', 'kubeconfig');
      const sample = { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name: 'kept-1' }, spec: {} };
      /** One run of `kopf-gen run --dev-cluster=auto`: `body` gets a client of its devcluster. */
      const once = async (extra: readonly string[], body: (client: api.HttpKubeApi) => Promise<void>): Promise<string> => {
        lines.length = 0;
        setDefaultRegistry(new OperatorRegistry()); // each run is a new process in real life
        const out = output();
        const stop = new AbortController();
        const running = runCommand.run(['--dev-cluster=auto', '--no-watch', ...extra, '--standalone', '-A', 'operator.ts'], out, {
          cwd: dir,
          operator: { stopFlag: stop.signal, handleSignals: false },
          pod: NOT_A_POD,
        });
        let ended: number | undefined;
        void running.then((code) => {
          ended = code;
        });
        await eventually(
          () => ended !== undefined || lines.some((line) => line.includes('Initial authentication has finished.')),
          'the operator to log in',
          15_000,
        );
        expect(ended, out.text()).toBeUndefined();
        const vault = new credentials.Vault();
        vault.populate({ kubeconfig: logins.loginWithKubeconfig({ paths: [kubeconfig] }) });
        const client = new api.HttpKubeApi({ vault, settings: new settingsModule.OperatorSettings(), logger: logging.getLogger('test') });
        try {
          await body(client);
        } finally {
          client.close();
          stop.abort();
        }
        expect(await running).toBe(0);
        return out.text();
      };
      await once([], async (client) => {
        await client.create(KOPFEXAMPLES, 'default', sample);
        await eventually(() => lines.some((line) => line.includes('[default/kept-1] Hello, kept-1!')), 'the create handler', 15_000);
      });
      expect(fs.existsSync(path.join(dir, '.kopf-gen', 'devcluster'))).toBe(true);
      // A second run: the object, its CRD (loaded again from ./crds over the kept one) and the
      // operator's marks on it (its diff-base) are there.
      await once([], async (client) => {
        const kept = (await client.get(KOPFEXAMPLES, 'default', 'kept-1')) as { metadata: { annotations?: Record<string, string> } };
        expect(Object.keys(kept.metadata.annotations ?? {})).toContain('kopf.zalando.org/last-handled-configuration');
      });
      // A third run with the reset flag: empty.
      const said = await once(['--reset-dev-cluster'], async (client) => {
        await expect(client.get(KOPFEXAMPLES, 'default', 'kept-1')).rejects.toMatchObject({ code: 'ApiNotFound' });
      });
      expect(said).toContain('--reset-dev-cluster: the devcluster starts empty');
    },
  );

  it.skipIf(IN_A_POD)('without --dev-cluster and without a cluster, fails with one line naming what was looked for and starts no devcluster', async () => {
    const { dir, home } = project();
    delete process.env['KUBECONFIG'];
    process.env['HOME'] = home;
    const out = output();
    const code = await runCommand.run(['--standalone', '-A', 'operator.ts'], out, { cwd: dir, operator: { handleSignals: false } });
    expect(code).toBe(1);
    expect(out.text()).toBe(
      `kopf-gen run: No credentials found: KUBECONFIG is not set, ${path.join(home, '.kube', 'config')} does not exist, ` +
        'and /var/run/secrets/kubernetes.io/serviceaccount/token does not exist (not running in a pod). ' +
        'Point KUBECONFIG at a kubeconfig file or register a login handler (on.login).\n',
    );
    expect(fs.existsSync(path.join(dir, '.kopf-gen'))).toBe(false);
  });

  it('--dev-cluster=auto uses the configured cluster when there is one, and starts no devcluster', async () => {
    const { dir } = project();
    process.env['KUBECONFIG'] = path.join(dir, 'stale-config');
    const out = output();
    const code = await runCommand.run(['--dev-cluster=auto', '--standalone', '-A', 'operator.ts'], out, { cwd: dir, operator: { handleSignals: false } });
    expect(code).toBe(1);
    expect(out.text()).toMatch(/^kopf-gen run: No credentials found: KUBECONFIG=\S+stale-config lists no existing file/);
    expect(fs.existsSync(path.join(dir, '.kopf-gen'))).toBe(false);
  });

  it('--crd or --reset-dev-cluster without --dev-cluster, and a --crd file that does not exist, are usage errors', async () => {
    const { dir } = project();
    const out = output();
    expect(await runCommand.run(['--crd', CRD, '-A', 'operator.ts'], out, { cwd: dir })).toBe(2);
    expect(out.text()).toBe('kopf-gen run: --crd loads CRDs into the embedded devcluster: give it with --dev-cluster or --dev-cluster=auto\n');
    const missing = output();
    expect(await runCommand.run(['--dev-cluster', '--crd', 'nope.yaml', '-A', 'operator.ts'], missing, { cwd: dir })).toBe(2);
    expect(missing.text()).toBe('kopf-gen run: --crd nope.yaml: no such file\n');
    const reset = output();
    expect(await runCommand.run(['--reset-dev-cluster', '-A', 'operator.ts'], reset, { cwd: dir })).toBe(2);
    expect(reset.text()).toBe(
      "kopf-gen run: --reset-dev-cluster empties the embedded devcluster's kept state: give it with --dev-cluster or --dev-cluster=auto\n",
    );
    expect(fs.existsSync(path.join(dir, '.kopf-gen'))).toBe(false);
  });

  it('a CRD file the devcluster cannot load is named, and the operator does not start', async () => {
    const { dir } = project();
    fs.writeFileSync(path.join(dir, 'crds', 'broken.yaml'), 'kind: CustomResourceDefinition\napiVersion: apiextensions.k8s.io/v1\nspec: [not, a, spec]\n');
    const out = output();
    expect(
      await runCommand.run(['--dev-cluster', '-A', '--standalone', 'operator.ts'], out, { cwd: dir, operator: { handleSignals: false }, pod: NOT_A_POD }),
    ).toBe(1);
    expect(out.text()).toMatch(/^kopf-gen run: crds\/broken\.yaml: \S.*\n$/);
    expect(lines.some((line) => line.includes('Operator started.'))).toBe(false);
  });

  it('D-SEC-2 --dev-cluster refuses to start the devcluster in a pod, with one line; --dev-cluster-in-pod forces it', async () => {
    const { dir } = project();
    fs.writeFileSync(path.join(dir, 'crds', 'broken.yaml'), 'kind: CustomResourceDefinition\napiVersion: apiextensions.k8s.io/v1\nspec: [not, a, spec]\n');
    const token = path.join(dir, 'token');
    fs.writeFileSync(token, 'x');
    const refused = output();
    const args = ['--dev-cluster', '-A', '--standalone', 'operator.ts'];
    expect(await runCommand.run(args, refused, { cwd: dir, operator: { handleSignals: false }, pod: { env: {}, tokenPath: token } })).toBe(1);
    expect(refused.text()).toBe(
      `kopf-gen run: refusing to start the devcluster inside a Kubernetes pod (a service-account token is mounted at ${token}): ` +
        'it is a development server that trusts loopback and serves an API beside the real one; pass --dev-cluster-in-pod to start it anyway\n',
    );
    expect(fs.existsSync(path.join(dir, '.kopf-gen'))).toBe(false);
    // Forced: the devcluster starts (and then names the broken CRD it cannot load).
    const forced = output();
    const pod = { env: { KUBERNETES_SERVICE_HOST: '10.96.0.1' }, tokenPath: token };
    expect(await runCommand.run(['--dev-cluster-in-pod', ...args], forced, { cwd: dir, operator: { handleSignals: false }, pod })).toBe(1);
    expect(forced.text()).toMatch(/^kopf-gen run: crds\/broken\.yaml: \S.*\n$/);
  });

  it('--dev-cluster forces the devcluster even when a cluster is configured; --crd picks the CRDs', async () => {
    const { dir } = project();
    fs.rmSync(path.join(dir, 'crds'), { recursive: true });
    process.env['KUBECONFIG'] = path.join(dir, 'elsewhere-config');
    const out = output();
    const stop = new AbortController();
    const running = runCommand.run(['--dev-cluster', '--no-watch', '--crd', CRD, '-A', '--standalone', 'operator.ts'], out, {
      cwd: dir,
      operator: { stopFlag: stop.signal, handleSignals: false },
      pod: NOT_A_POD,
    });
    await eventually(() => lines.some((line) => line.includes('Initial authentication has finished.')), 'the operator to log in', 15_000);
    // The devcluster's kubeconfig replaces the configured one while the operator runs, and is restored after.
    expect(process.env['KUBECONFIG']).toBe(path.join(dir, '.kopf-gen', 'kubeconfig'));
    expect(out.text()).toMatch(/^As requested \(--dev-cluster\): started the devcluster at \S+ with 1 CRD file\(s\)/);
    expect(fs.existsSync(path.join(dir, '.kopf-gen', 'kubeconfig'))).toBe(true);
    stop.abort();
    expect(await running).toBe(0);
    expect(process.env['KUBECONFIG']).toBe(path.join(dir, 'elsewhere-config'));
  });

  it('R-CLI-1 the kopf-gen binary stops on SIGINT with exit code 0 and the exact log line', async () => {
    const { dir, home } = project({ runtime: 'package' });
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
    delete env['KUBECONFIG'];
    const proc = child.spawn(
      process.execPath,
      [path.join(ROOT, 'bin/kopf-gen.js'), 'run', '--dev-cluster=auto', '-A', '--standalone', '--log-format', 'plain', 'operator.ts'],
      { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let text = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    proc.stderr.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    try {
      await eventually(() => text.includes('Initial authentication has finished.'), `the operator to start; it said: ${text}`, 50_000);
      expect(text).toContain('Operator started.');
      proc.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(text).toContain('Signal SIGINT is received. Operator is stopping.');
      expect(fs.existsSync(path.join(dir, '.kopf-gen', 'kubeconfig'))).toBe(true);
    } finally {
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
  }, 60_000);
});
