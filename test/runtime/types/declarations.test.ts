/**
 * The declarations a user's type-checker reads. kopf-gen is published with `.d.ts` files emitted
 * from runtime/ and devcluster/, and users type-check against those, not against the sources. A
 * user whose tsconfig turns on every strictness flag and checks libraries (`skipLibCheck: false`)
 * must get no diagnostic from kopf-gen's declarations.
 *
 * The test emits the declarations into a temporary folder, installs them there as
 * `node_modules/kopf-gen` (with the `./runtime` and `./testing` subpaths of the package), links the
 * checkout's other packages beside them, and type-checks a small operator that uses the public API.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CHECKOUT = fileURLToPath(new URL('../../../', import.meta.url));
const TSC = path.join(CHECKOUT, 'node_modules', 'typescript', 'bin', 'tsc');

/** The strictest settings a user may have, with the libraries' declarations checked too. */
const STRICTEST = {
  target: 'ES2022',
  lib: ['ES2023'],
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noPropertyAccessFromIndexSignature: true,
  noImplicitOverride: true,
  noImplicitReturns: true,
  skipLibCheck: false,
  noEmit: true,
  isolatedModules: true,
  verbatimModuleSyntax: true,
  types: ['node'],
};

const OPERATOR = `
import * as kopf from 'kopf-gen/runtime';
import { builtins, on, OperatorRegistry, KopfRunner, resource, type Pod } from 'kopf-gen/runtime';
import { DevCluster } from 'kopf-gen/testing';

interface WidgetSpec { replicas: number; owner: string; image?: string }
interface WidgetStatus { replicas?: number }
interface Widget extends kopf.KubernetesObject { spec: WidgetSpec; status?: WidgetStatus }

export const Widgets = resource<Widget>({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });
const registry = new OperatorRegistry();

on.create(Widgets, { registry }, async ({ spec, status, name, patch, logger }) => {
  patch.status.replicas = spec.replicas;
  logger.info(\`\${name}: \${status?.replicas ?? 0}\`);
  return { message: \`created \${name}\` };
});
on.field(Widgets, 'spec.replicas', { registry }, ({ old, new: now }) => (old ?? 0) + (now ?? 0));
kopf.daemon(Widgets, { registry }, async ({ spec, signal }) => {
  while (!signal.aborted) await new Promise((resolve) => setTimeout(resolve, spec.replicas));
});
kopf.timer(Widgets, { registry, interval: 10 }, ({ meta }) => meta.name);
kopf.index(Widgets, { registry }, ({ name, spec }) => ({ [spec.owner]: name }));

on.create(builtins.Pods, { registry }, ({ spec, status, meta, body, patch }) => {
  const pod: Pod = body;
  const phase: string | undefined = status?.phase;
  // @ts-expect-error a pod's phase is a string: the built-in kinds are typed, not \`any\`
  const wrong: number | undefined = status?.phase;
  patch.status.phase = 'Running';
  const limits: { readonly [name: string]: string } | undefined = spec.containers[0]?.resources?.limits;
  return \`\${meta.name} \${phase} \${wrong} \${limits?.['cpu']} \${pod.spec?.nodeName}\`;
});
on.update(builtins.Deployments, { registry }, ({ spec, diff }) => \`\${spec.replicas} \${diff.length}\`);
on.event(builtins.ConfigMaps, { registry }, ({ body }) => { Object.keys(body.data ?? {}); });
on.startup({ registry }, ({ settings }) => { settings.posting.enabled = false; });
on.startup({ registry }, ({ settings }) => {
  settings.admission.server = process.env['KUBERNETES_SERVICE_HOST']
    ? new kopf.WebhookServer({ port: 9443, certfile: '/tls/tls.crt', pkeyfile: '/tls/tls.key', cafile: '/tls/ca.crt', service: { namespace: 'ops', name: 'op', port: 443 } })
    : new kopf.WebhookAutoServer();
});

export async function runOnce(kubeconfig: string): Promise<number | null> {
  const cluster = await DevCluster.start({ crds: [] });
  cluster.writeKubeconfig(kubeconfig);
  const runner = new KopfRunner(['run', '-A', '--standalone', 'operator.ts'], { registry, timeout: 10 });
  await runner.start();
  await runner.stop();
  await cluster.stop();
  return runner.exitCode;
}
`;

/** Runs the 5.9 compiler; resolves to its exit code and output. */
function tsc(args: readonly string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [TSC, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** The files (as printed by tsc, relative or absolute) that diagnostics are located in. */
function diagnosticFiles(output: string): string[] {
  return [...output.matchAll(/^(.+?)\(\d+,\d+\): error TS\d+/gm)].map((match) => match[1]!);
}

function writeJson(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value, null, 2));
}

describe('the emitted declarations', () => {
  let work: string;
  let emitted: { code: number | null; output: string };
  let checked: { code: number | null; output: string };

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-declarations-'));
    const dist = path.join(work, 'dist');
    writeJson(path.join(work, 'tsconfig.emit.json'), {
      extends: path.join(CHECKOUT, 'tsconfig.json'),
      compilerOptions: {
        noEmit: false,
        declaration: true,
        emitDeclarationOnly: true,
        outDir: dist,
        rootDir: CHECKOUT,
        typeRoots: [path.join(CHECKOUT, 'node_modules', '@types')],
      },
      include: [path.join(CHECKOUT, 'runtime'), path.join(CHECKOUT, 'devcluster')],
      exclude: [],
    });
    emitted = await tsc(['-p', 'tsconfig.emit.json'], work);

    const consumer = path.join(work, 'consumer');
    const modules = path.join(consumer, 'node_modules');
    fs.mkdirSync(modules, { recursive: true });
    for (const entry of fs.readdirSync(path.join(CHECKOUT, 'node_modules'))) {
      if (entry.startsWith('.') || entry === 'kopf-gen') continue;
      fs.symlinkSync(path.join(CHECKOUT, 'node_modules', entry), path.join(modules, entry));
    }
    // A real folder, not a link: its declarations must resolve their imports from the consumer's node_modules.
    fs.cpSync(dist, path.join(modules, 'kopf-gen'), { recursive: true });
    writeJson(path.join(modules, 'kopf-gen', 'package.json'), {
      name: 'kopf-gen',
      type: 'module',
      exports: {
        './runtime': { types: './runtime/index.d.ts', default: './runtime/index.js' },
        './testing': { types: './devcluster/testing.d.ts', default: './devcluster/testing.js' },
      },
    });
    writeJson(path.join(consumer, 'package.json'), { name: 'consumer', private: true, type: 'module' });
    writeJson(path.join(consumer, 'tsconfig.json'), { compilerOptions: STRICTEST, include: ['src'] });
    fs.mkdirSync(path.join(consumer, 'src'));
    fs.writeFileSync(path.join(consumer, 'src', 'operator.ts'), OPERATOR);
    checked = await tsc(['-p', 'tsconfig.json'], consumer);
  }, 180_000);

  afterAll(() => {
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('are emitted without errors (every exported type can be named)', () => {
    expect(emitted.output).toBe('');
    expect(emitted.code).toBe(0);
  });

  it('give a user with the strictest settings and skipLibCheck off no error in kopf-gen or in their operator', () => {
    const ours = diagnosticFiles(checked.output).filter((file) => !file.includes('node_modules/') || file.includes('node_modules/kopf-gen/'));
    expect(ours, checked.output).toEqual([]);
  });

  it("give such a user no error in the declarations of kopf-gen's dependencies either", () => {
    const theirs = diagnosticFiles(checked.output).filter((file) => file.includes('node_modules/') && !file.includes('node_modules/kopf-gen/'));
    expect(theirs, checked.output).toEqual([]);
  });
});
