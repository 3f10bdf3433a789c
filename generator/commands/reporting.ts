/**
 * What the project commands (`init`, `generate`, `add`) share: turning `--crd` values into CRD
 * sources (`-` reads standard input) and printing a generation report — changes, stubs, the files
 * it left alone, notes and warnings — the same way for all three.
 */
import * as path from 'node:path';
import * as generator from '../index.js';
import * as inputs from '../inputs.js';

export type { Output } from './output.js';
export { processOutput } from './output.js';
import type { Output } from './output.js';

/**
 * `--crd` values as sources: `-` is standard input (at most once, read up to just past
 * `maxBytes`, which is enough for the library to refuse it), anything else a file path.
 */
export async function crdSources(values: readonly string[], output: Output, maxBytes: number): Promise<inputs.CrdSource[]> {
  let stdin: string | undefined;
  const sources: inputs.CrdSource[] = [];
  for (const value of values) {
    if (value !== '-') {
      sources.push(value);
      continue;
    }
    if (stdin !== undefined) throw new Error('--crd - (standard input) may be given only once');
    stdin = await output.stdin(maxBytes);
    sources.push({ path: inputs.STDIN_NAME, text: stdin });
  }
  return sources;
}

/** Prints a report: what changed, what was added, then notes and warnings (on stderr). */
export function printReport(report: generator.GenerationReport, output: Output, options: { readonly verb: string }): void {
  const lines: string[] = [];
  const fromCwd = path.relative(process.cwd(), report.project);
  const relative = fromCwd === '' ? '.' : fromCwd.startsWith('..') ? report.project : fromCwd;
  lines.push(`${options.verb} ${relative}: ${report.written.length} file(s) written`);
  for (const file of report.crdsAdded) lines.push(`  added CRD file ${file}`);
  for (const file of report.stubsAdded) lines.push(`  added handler stub ${file}`);
  for (const file of report.convertersAdded) lines.push(`  added converter stub ${file}`);
  for (const file of report.written.filter((written) => written.startsWith('samples/'))) lines.push(`  added sample object ${file}`);
  if (report.builtins.length > 0) lines.push(`  deploy/rbac.yaml covers the built-in resources the code uses: ${report.builtins.join(', ')}`);
  if (report.admission.length > 0) {
    lines.push(`  deploy/webhooks.yaml and src/generated/admission.ts serve the admission handlers: ${report.admission.join(', ')}`);
  }
  if (report.conversions.length > 0) {
    lines.push(`  src/generated/admission.ts serves the converters, deploy/conversion.yaml points their CRDs at it: ${report.conversions.join(', ')}`);
  }
  for (const file of report.removed) lines.push(`  removed ${file}: no ${file.endsWith('conversion.yaml') ? 'converter' : 'admission handler'} is left`);
  if (report.kept.length > 0) {
    lines.push(`  left alone (yours, not generated): ${report.kept.join(', ')}`);
  }
  const changes = generator.renderSummary(report.summary);
  if (changes.length > 0) {
    lines.push('Changes since the last generation:');
    for (const change of changes) lines.push(`  ${change}`);
  } else {
    lines.push('No changes to kinds, versions or fields since the last generation.');
  }
  lines.push(`Next: ${relative === '.' ? '' : `cd ${relative} && `}npm run typecheck${options.verb === 'created' ? ' (after npm install)' : ''}`);
  output.out(`${lines.join('\n')}\n`);
  for (const note of report.notes) output.err(`note: ${note}\n`);
  for (const warning of report.warnings) output.err(`warning: ${warning}\n`);
}
