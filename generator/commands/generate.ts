/** `kopf-gen generate`: regenerates a project from its kopf-gen.json and crds/ (library `generate`). */
import * as generator from '../index.js';
import * as reporting from './reporting.js';

export interface GenerateCommandOptions {
  project: string;
  /** `--max-input-mib`, in bytes. */
  maxInputMib?: number;
}

/** Runs `kopf-gen generate`. */
export async function run(opts: GenerateCommandOptions, output: reporting.Output = reporting.processOutput): Promise<void> {
  const report = await generator.generate({ project: opts.project, maxInputBytes: opts.maxInputMib ?? generator.MAX_INPUT_BYTES });
  reporting.printReport(report, output, { verb: 'regenerated' });
}
