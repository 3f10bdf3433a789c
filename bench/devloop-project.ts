/**
 * The small operator project the dev loop is exercised on, shared by the dev-loop test and the
 * dev-loop benchmark so that both measure the same thing: `src/main.ts` importing
 * `src/handlers/greet.ts` (an on-event handler for kopfexamples whose log line carries a marker
 * that a save changes), the Kopf example CRD in `./crds`, and a node_modules that links kopf-gen
 * (this checkout) and, when asked, the checkout's TypeScript and Node types, so that saves are
 * type-checked as in a generated project.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const CRD = path.join(ROOT, 'fixtures/crds/kopfexamples.yaml');

/** The handler file: an on-event handler that logs a marker, the object's name and its KUBECONFIG; `extra` goes before the log call. */
export function handlerSource(marker: string, extra = ''): string {
  return [
    "import { on } from 'kopf-gen/runtime';",
    '',
    "on.event(['kopf.dev', 'v1', 'kopfexamples'], function greet({ name, logger }) {",
    `  ${extra}logger.info(\`${marker} \${name} KUBECONFIG=\${process.env['KUBECONFIG']}\`);`,
    '});',
    '',
  ].join('\n');
}

/** A project folder and a HOME folder for the commands run in it (both temporary; the caller removes them). */
export interface DevLoopProject {
  readonly dir: string;
  readonly home: string;
}

/** Makes the project in a fresh temporary folder, with the handler file of marker `v1`. */
export function makeProject(options: { readonly typescript: boolean }): DevLoopProject {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-devloop-'));
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-home-'));
  fs.mkdirSync(path.join(dir, 'crds'));
  fs.copyFileSync(CRD, path.join(dir, 'crds', 'kopfexamples.yaml'));
  fs.writeFileSync(path.join(dir, 'package.json'), '{ "name": "op", "private": true, "type": "module" }\n');
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    `${JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: ['node'] }, include: ['src'] })}\n`,
  );
  fs.mkdirSync(path.join(dir, 'src', 'handlers'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'src', 'main.ts'), "import { main } from 'kopf-gen/runtime';\nimport './handlers/greet.js';\n\nawait main(import.meta);\n");
  fs.writeFileSync(path.join(dir, 'src', 'handlers', 'greet.ts'), handlerSource('v1'));
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(ROOT, path.join(dir, 'node_modules', 'kopf-gen'));
  if (options.typescript) {
    fs.symlinkSync(path.join(ROOT, 'node_modules', 'typescript'), path.join(dir, 'node_modules', 'typescript'));
    fs.symlinkSync(path.join(ROOT, 'node_modules', '@types'), path.join(dir, 'node_modules', '@types'));
  }
  return { dir, home };
}
