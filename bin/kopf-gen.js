#!/usr/bin/env node
// The kopf-gen command: the compiled command line, run by plain Node.
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
