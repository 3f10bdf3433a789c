/**
 * The kopf-gen command line from its TypeScript sources, for development in the repository:
 * `npm run kopf-gen -- init --crd …` (which runs Node with the `kopf-gen-source` condition and
 * tsx's loader). The published binary, bin/kopf-gen.js, runs the compiled command line instead.
 */
import { main } from '../cli/main.js';

process.exitCode = await main(process.argv.slice(2));
