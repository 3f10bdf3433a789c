/**
 * The dev loop of `kopf-gen run` (what a generated project's `npm run operator` does), through the
 * compiled binary in a temporary project with real files: a saved handler file restarts the
 * operator with the new behaviour while the devcluster keeps its objects; a type error or a syntax
 * error is one line and the old operator keeps serving; Ctrl-C stops the operator gracefully and
 * then the devcluster. The restart time is measured and printed, not asserted (the machine may be
 * busy); every wait is for a line of output, with a generous timeout.
 */
import * as child from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handlerSource as handler, makeProject as project } from '../../bench/devloop-project.js';
import * as api from '../../runtime/cogs/client/api.js';
import * as credentials from '../../runtime/cogs/client/credentials.js';
import * as logins from '../../runtime/cogs/client/logins.js';
import * as settingsModule from '../../runtime/cogs/configs/settings.js';
import * as references from '../../runtime/cogs/structs/references.js';
import * as logging from '../../runtime/core/actions/logging.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const KOPFEXAMPLES = references.makeResource({ group: 'kopf.dev', version: 'v1', plural: 'kopfexamples', kind: 'KopfExample' });
const WAIT_MS = 60_000;

/** `kopf-gen run --dev-cluster=auto …` as `npm run operator` runs it, with its output collected. */
class Launcher {
  readonly proc: child.ChildProcess;
  readonly exited: Promise<number | null>;
  text = '';
  private readonly listeners = new Set<() => void>();

  constructor(dir: string, home: string) {
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, NO_COLOR: '1' };
    delete env['KUBECONFIG'];
    delete env['KUBERNETES_SERVICE_HOST'];
    delete env['NODE_OPTIONS'];
    this.proc = child.spawn(
      process.execPath,
      [path.join(ROOT, 'bin/kopf-gen.js'), 'run', '--dev-cluster=auto', '-A', '--standalone', '--log-format', 'plain', 'src/main.ts'],
      { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const collect = (chunk: Buffer): void => {
      this.text += chunk.toString();
      for (const listener of this.listeners) listener();
    };
    this.proc.stdout!.on('data', collect);
    this.proc.stderr!.on('data', collect);
    this.exited = new Promise((resolve) => this.proc.on('exit', (code) => resolve(code)));
  }

  /** Resolves with what matched once `pattern` appears after `from`; rejects with the output after the timeout. */
  waitFor(pattern: RegExp, from = 0): Promise<string> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const match = pattern.exec(this.text.slice(from));
        if (!match) return false;
        this.listeners.delete(listener);
        clearTimeout(timer);
        resolve(match[0]);
        return true;
      };
      const listener = (): void => void check();
      const timer = setTimeout(() => {
        this.listeners.delete(listener);
        reject(new Error(`no ${pattern} within ${WAIT_MS} ms; the output was:\n${this.text}`));
      }, WAIT_MS);
      this.listeners.add(listener);
      check();
    });
  }

  kill(): void {
    if (this.proc.exitCode === null) this.proc.kill('SIGKILL');
  }
}

/** A client of the devcluster through the kubeconfig the launcher wrote. */
function clientOf(kubeconfig: string): api.HttpKubeApi {
  const vault = new credentials.Vault();
  vault.populate({ kubeconfig: logins.loginWithKubeconfig({ paths: [kubeconfig] }) });
  const settings = new settingsModule.OperatorSettings();
  settings.networking.errorBackoffs = [];
  return new api.HttpKubeApi({ vault, settings, logger: logging.getLogger('test') });
}

async function createExample(client: api.HttpKubeApi, name: string): Promise<void> {
  await client.create(KOPFEXAMPLES, 'default', { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name }, spec: {} });
}

beforeAll(() => {
  if (!fs.existsSync(path.join(ROOT, 'dist/cli/devloop.js'))) throw new Error('dist/ is missing: run npm run build first (npm test does)');
});

describe('the dev loop with the project’s typescript', () => {
  let dir: string;
  let launcher: Launcher;
  let client: api.HttpKubeApi;
  let kubeconfig: string;
  const greet = (): string => path.join(dir, 'src', 'handlers', 'greet.ts');

  beforeAll(async () => {
    const made = project({ typescript: true });
    dir = made.dir;
    launcher = new Launcher(dir, made.home);
    kubeconfig = path.join(dir, '.kopf-gen', 'kubeconfig');
    await launcher.waitFor(/Initial authentication has finished\./);
    client = clientOf(kubeconfig);
    await createExample(client, 'kex-1');
    await launcher.waitFor(/\[default\/kex-1\] v1 kex-1/);
    // The checker is warm: what follows measures a save as a developer makes it.
    expect(await launcher.waitFor(/^kopf-gen run: watching .*\n/m)).toBe(
      'kopf-gen run: watching src/, crds/ and 2 more files: a save is type-checked, then the operator restarts\n',
    );
  }, 2 * WAIT_MS);

  afterAll(() => {
    client?.close();
    launcher?.kill();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it(
    'R-CLI-201: a saved handler file restarts the operator with the new behaviour; the devcluster keeps its objects',
    async () => {
      const from = launcher.text.length;
      const saved = performance.now();
      fs.writeFileSync(greet(), handler('v2'));
      await launcher.waitFor(/\[default\/kex-1\] v2 kex-1/, from);
      const elapsed = performance.now() - saved;
      console.log(`R-CLI-201: the new behaviour was seen ${Math.round(elapsed)} ms after the save`);
      const text = launcher.text.slice(from);
      expect(text).toContain('kopf-gen run: src/handlers/greet.ts changed; restarting the operator\n');
      // The old operator stopped before the new one started: never two at once.
      expect(text.indexOf('Signal SIGTERM is received. Operator is stopping.')).toBeGreaterThanOrEqual(0);
      expect(text.indexOf('Signal SIGTERM is received. Operator is stopping.')).toBeLessThan(text.indexOf('Initial authentication has been initiated.'));
      // R-CLI-204: the operator's KUBECONFIG is the devcluster's, for clients that read it.
      expect(text).toContain(`v2 kex-1 KUBECONFIG=${kubeconfig}`);
      expect((await client.list(KOPFEXAMPLES, 'default')).items.map((o) => o['metadata']?.name)).toEqual(['kex-1']);
    },
    2 * WAIT_MS,
  );

  it(
    'R-CLI-202: a type error, then a syntax error, is one line each and the old operator keeps serving until the next good save',
    async () => {
      let from = launcher.text.length;
      fs.writeFileSync(greet(), handler('v3', "const count: number = 'many'; "));
      expect(await launcher.waitFor(/^.*error TS\d+.*\n/m, from)).toBe(
        "src/handlers/greet.ts:4:9: error TS2322: Type 'string' is not assignable to type 'number'.\n",
      );
      // Still the v2 operator: a new object is greeted by it.
      await createExample(client, 'kex-2');
      await launcher.waitFor(/\[default\/kex-2\] v2 kex-2/, from);

      from = launcher.text.length;
      fs.writeFileSync(greet(), handler('v3', 'const = ; '));
      expect(await launcher.waitFor(/^.*error TS\d+.*\n/m, from)).toBe('src/handlers/greet.ts:4:9: error TS1134: Variable declaration expected.\n');
      await createExample(client, 'kex-3');
      await launcher.waitFor(/\[default\/kex-3\] v2 kex-3/, from);
      expect(launcher.text.slice(from)).not.toContain('restarting the operator');

      from = launcher.text.length;
      fs.writeFileSync(greet(), handler('v3'));
      await launcher.waitFor(/\[default\/kex-3\] v3 kex-3/, from);
      expect(launcher.text.slice(from)).toContain('v3 kex-1');
    },
    3 * WAIT_MS,
  );

  it(
    'R-CLI-201: a saved CRD file is loaded into the devcluster again; the operator is not restarted',
    async () => {
      const from = launcher.text.length;
      const crd = path.join(dir, 'crds', 'kopfexamples.yaml');
      fs.writeFileSync(
        crd,
        fs
          .readFileSync(crd, 'utf8')
          .replace('metadata:\n  name: kopfexamples.kopf.dev', 'metadata:\n  name: kopfexamples.kopf.dev\n  labels: { reloaded: "yes" }'),
      );
      expect(await launcher.waitFor(/^kopf-gen run: reloaded .*\n/m, from)).toBe(
        'kopf-gen run: reloaded 1 CRD(s) of crds/kopfexamples.yaml into the devcluster\n',
      );
      const crds = references.makeResource({
        group: 'apiextensions.k8s.io',
        version: 'v1',
        plural: 'customresourcedefinitions',
        kind: 'CustomResourceDefinition',
        namespaced: false,
      });
      const stored = await client.get(crds, null, 'kopfexamples.kopf.dev');
      expect((stored['metadata'] as { labels?: unknown } | undefined)?.labels).toEqual({ reloaded: 'yes' });
      expect(launcher.text.slice(from)).not.toContain('restarting the operator');
      expect((await client.list(KOPFEXAMPLES, 'default')).items).toHaveLength(3);
    },
    2 * WAIT_MS,
  );

  it(
    'R-CLI-203: Ctrl-C stops the operator gracefully, then the devcluster; the exit code is 0',
    async () => {
      const from = launcher.text.length;
      launcher.proc.kill('SIGINT');
      expect(await launcher.exited).toBe(0);
      const text = launcher.text.slice(from);
      // One signal for the operator, passed on by the launcher.
      expect(text.match(/Signal SIGINT is received\. Operator is stopping\./g)).toHaveLength(1);
      await expect(client.list(KOPFEXAMPLES, 'default')).rejects.toMatchObject({ code: 'ConnectionError' });
    },
    2 * WAIT_MS,
  );
});

describe('the dev loop without typescript in the project', () => {
  it(
    'R-CLI-205: says once that only syntax is checked; a syntax error is one line with the file, line and column',
    async () => {
      const { dir, home } = project({ typescript: false });
      const launcher = new Launcher(dir, home);
      try {
        await launcher.waitFor(/Initial authentication has finished\./);
        expect(launcher.text).toContain(
          'kopf-gen run: the project has no typescript: saved files are checked for syntax only before a restart (npm install --save-dev typescript checks types too)\n',
        );
        const from = launcher.text.length;
        fs.writeFileSync(path.join(dir, 'src', 'handlers', 'greet.ts'), handler('v2', 'const = ; '));
        expect(await launcher.waitFor(/^.*error: .*\n/m, from)).toMatch(/^src\/handlers\/greet\.ts:4:9: error: .+\n$/);
        launcher.proc.kill('SIGINT');
        expect(await launcher.exited).toBe(0);
        expect(launcher.text.match(/the project has no typescript/g)).toHaveLength(1);
        expect(launcher.text).not.toContain('restarting the operator');
      } finally {
        launcher.kill();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
    3 * WAIT_MS,
  );
});
