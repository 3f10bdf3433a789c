/** `kopf-gen add`: adds CRDs to a project, then regenerates it (library `add`). */
import * as generator from '../index.js';
import * as reporting from './reporting.js';

export interface AddCommandOptions {
  crd: string[];
  project: string;
}

/** Runs `kopf-gen add`. */
export async function run(opts: AddCommandOptions, output: reporting.Output = reporting.processOutput): Promise<void> {
  const crds = await reporting.crdSources(opts.crd, output);
  const report = await generator.add({ project: opts.project, crds });
  reporting.printReport(report, output, { verb: 'updated' });
}
