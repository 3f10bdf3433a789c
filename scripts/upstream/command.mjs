// What the scripts that derive data from a kubernetes/api checkout share on the command line: the
// repository argument and `--ref`, and writing (or, with `--check`, comparing) their output file
// in devcluster/upstream/.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The checkout (or git directory) and tag given to `script`; exits with its usage when missing. */
export function repositoryArguments(script, defaultRef) {
  const args = process.argv.slice(2);
  const refAt = args.indexOf('--ref');
  const ref = refAt >= 0 ? args[refAt + 1] : defaultRef;
  const repo = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--ref');
  if (!repo) {
    console.error(`usage: ${script} <kubernetes/api checkout or git dir> [--ref ${defaultRef}] [--check]`);
    process.exit(2);
  }
  return { args, ref, repo: path.resolve(repo) };
}

/** Writes `text` to `target`, or with `--check` exits 1 when the file differs, naming how to refresh it. */
export function writeOrCheck(args, target, text, script) {
  if (!args.includes('--check')) {
    fs.writeFileSync(target, text);
    return;
  }
  const current = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '';
  if (current !== text) {
    console.error(`devcluster/upstream/${path.basename(target)} is out of date: run node scripts/upstream/${script} <kubernetes/api>`);
    process.exit(1);
  }
}
