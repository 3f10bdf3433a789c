/**
 * What the tests of examples/ share: where the repository and the examples' CRD are, and a
 * real-time wait for what an operator running in the test process does against the devcluster
 * (its I/O is real even when its clock is virtual).
 */
import * as path from 'node:path';
export { eventually } from '../support/waiting.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const CRD = path.join(ROOT, 'fixtures/crds/kopfexamples.yaml');
export const KEX = { group: 'kopf.dev', version: 'v1', resource: 'kopfexamples' } as const;
