/**
 * Running operator files written in TypeScript: `kopf-gen run src/main.ts`. Compiled `.js`/`.mjs`
 * files need nothing; for `.ts`, `.mts` and `.cts` files the command registers tsx's loader before
 * the operator starts, so development runs need no build step. The loader's registration lives in
 * the runtime (`runtime/kits/launching/typescript.ts`), which needs it too: `KopfRunner` loads
 * TypeScript operator files in a project's own tests, whatever the test runner.
 */
export { needsLoader, registerLoader, tsxManifest } from '../runtime/kits/launching/typescript.js';
