import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

describe('scripts/upstream/derive-catalog.mjs', () => {
  it('D-BI-1 the catalog and the schema shapes are what the script derives from the kept OpenAPI document', () => {
    // --check exits non-zero (and execFileSync throws) when catalog.json or shapes.tsv is stale.
    const out = execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'upstream', 'derive-catalog.mjs'), '--check'], { encoding: 'utf8' });
    expect(out).toBe('');
  });
});
