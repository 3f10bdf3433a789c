/**
 * Finding kubectl for the suites that drive the devcluster with it. kubectl is not an npm package,
 * so a plain clone may lack it; those suites then fail rather than skip, and the first line of the
 * failure names the script that installs it, so whoever runs `npm test` knows the one command to
 * run. Every suite that needs kubectl goes through here (or through the devcluster's client
 * helpers, which use the same message).
 */
import * as childprocess from 'node:child_process';

/** The first line of every failure caused by a missing kubectl. */
export const KUBECTL_MISSING = 'kubectl is missing: run `bash scripts/install-kubectl.sh` from the repository root, then run the tests again';

/** The error a suite throws when a kubectl it needs is missing or broken: the hint first, the detail after. */
export function kubectlMissing(detail: string): Error {
  return new Error(`${KUBECTL_MISSING}\n(${detail})`);
}

let found: string | undefined;

/** The `kubectl` on PATH, checked (once per test file) to run; throws `kubectlMissing` otherwise. */
export function requireKubectl(): string {
  if (found !== undefined) return found;
  const probe = childprocess.spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8', timeout: 15_000 });
  if (probe.error !== undefined) throw kubectlMissing(`kubectl on PATH does not run: ${probe.error.message}`);
  if (probe.status !== 0) throw kubectlMissing(`\`kubectl version --client\` exited with ${probe.status}: ${probe.stderr.trim()}`);
  found = 'kubectl';
  return found;
}
