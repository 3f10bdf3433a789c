import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

describe('scripts/upstream/derive-catalog.mjs', () => {
  it('D-BI-1 the catalog and the schema shapes are what the script derives from the kept OpenAPI document', async () => {
    // --check exits non-zero (and execFile rejects) when catalog.json or shapes.tsv is stale. The
    // script runs asynchronously: the test worker's event loop is not held while it derives.
    const { stdout } = await promisify(execFile)(process.execPath, [path.join(ROOT, 'scripts', 'upstream', 'derive-catalog.mjs'), '--check'], {
      encoding: 'utf8',
    });
    expect(stdout).toBe('');
  });
});
