#!/usr/bin/env node
// The kopf-gen command. The package ships TypeScript sources; tsx's loader runs them (and the
// user's operator modules given to `kopf-gen run`) without a build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../generator/cli.ts');
process.exitCode = await main(process.argv.slice(2));
