/** `kopf-gen add`: adds CRDs to a project, then regenerates it (library `add`). */
import * as generator from '../index.js';
import * as reporting from './reporting.js';

export interface AddCommandOptions {
  crd: string[];
  project: string;
  /** `--max-input-mib`, in bytes. */
  maxInputMib?: number;
}

/** Runs `kopf-gen add`. */
export async function run(opts: AddCommandOptions, output: reporting.Output = reporting.processOutput): Promise<void> {
  const maxInputBytes = opts.maxInputMib ?? generator.MAX_INPUT_BYTES;
  const crds = await reporting.crdSources(opts.crd, output, maxInputBytes);
  const report = await generator.add({ project: opts.project, crds, maxInputBytes });
  reporting.printReport(report, output, { verb: 'updated' });
}
