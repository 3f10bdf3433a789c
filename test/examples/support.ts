/**
 * What the tests of examples/ share: where the repository and the examples' CRD are, and a
 * real-time wait for what an operator running in the test process does against the devcluster
 * (its I/O is real even when its clock is virtual).
 */
import * as path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const CRD = path.join(ROOT, 'fixtures/crds/kopfexamples.yaml');
export const KEX = { group: 'kopf.dev', version: 'v1', resource: 'kopfexamples' } as const;

/** Resolves once `predicate` holds; rejects naming `what` after `timeoutMs` of real time. */
export async function eventually(predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
