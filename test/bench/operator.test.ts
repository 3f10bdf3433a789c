/**
 * The operator benchmark's side-by-side verdicts: the targets of the kopf-gen column resolved
 * against the versus (Python Kopf) and null columns, and the note printed when a column is
 * missing. The benchmark itself asserts nothing.
 */
import { describe, expect, it } from 'vitest';
import * as operator from '../../bench/operator.js';

/** Figures of one run at N = 10,000 for `key`: ready and peak RSS, growth, per phase CPU and objects/s. */
function figuresOf(key: operator.Key, values: { ready: number; peak: number; growth: number; cpu: number; rate: number }): Record<string, number> {
  const p = `${key}_n10000_`;
  const out: Record<string, number> = {
    [`${p}operator_ready_rss_mb`]: values.ready,
    [`${p}operator_peak_rss_mb`]: values.peak,
    [`${p}operator_rss_growth_per_obj_kb`]: values.growth,
  };
  for (const phase of ['create', 'update', 'delete']) {
    out[`${p}${phase}_operator_cpu_ms_per_obj`] = values.cpu;
    out[`${p}${phase}_objects_per_s`] = values.rate;
  }
  return out;
}

function rowsOf(keys: operator.Key[], figures: Record<string, number>): Map<string, { target: string; met: boolean | undefined }> {
  const [table] = operator.comparisons([10_000], keys, false, figures, {});
  return new Map(table!.rows.map((r) => [r.label, { target: r.target, met: r.met }]));
}

describe('the operator benchmark side by side', () => {
  const versus = { ready: 50, peak: 150, growth: 10, cpu: 4, rate: 300 };
  const nul = { ready: 40, peak: 60, growth: 1, cpu: 0.5, rate: 1000 };

  it("judges kopf-gen against the issue's targets: ready RSS ≤ versus, peak ≤ 0.5 ×, growth ≤ 0.25 × versus, CPU ≤ 1.5 ×, objects/s ≥ 0.8 × null", () => {
    const good = { ready: 50, peak: 75, growth: 2.5, cpu: 0.75, rate: 800 };
    const rows = rowsOf(['kopfgen', 'versus', 'null'], { ...figuresOf('kopfgen', good), ...figuresOf('versus', versus), ...figuresOf('null', nul) });
    expect(rows.get('ready RSS MB')).toEqual({ target: '<= versus = 50', met: true });
    expect(rows.get('peak RSS MB')).toEqual({ target: '<= 0.5 x versus = 75', met: true });
    expect(rows.get('RSS growth KB/object')).toEqual({ target: '<= 0.25 x versus = 2.50', met: true });
    expect(rows.get('update operator CPU ms/object')).toEqual({ target: '<= 1.5 x null = 0.75', met: true });
    expect(rows.get('delete objects/s')).toEqual({ target: '>= 0.8 x null = 800', met: true });

    const bad = { ready: 51, peak: 76, growth: 2.6, cpu: 0.8, rate: 790 };
    const missed = rowsOf(['kopfgen', 'versus', 'null'], { ...figuresOf('kopfgen', bad), ...figuresOf('versus', versus), ...figuresOf('null', nul) });
    for (const label of ['ready RSS MB', 'peak RSS MB', 'RSS growth KB/object', 'create operator CPU ms/object', 'create objects/s'])
      expect(missed.get(label)?.met).toBe(false);
  });

  it('gives no verdict on a relative target whose column did not run, and says so in a note', () => {
    const rows = rowsOf(['kopfgen', 'null'], { ...figuresOf('kopfgen', nul), ...figuresOf('null', nul) });
    expect(rows.get('peak RSS MB')).toEqual({ target: '<= 0.5 x versus (no versus figure)', met: undefined });
    expect(rows.get('create objects/s')?.met).toBe(true);
    expect(operator.relativeTargetsMissing(['kopfgen', 'null'])).toMatch(/^no verdict .* without --versus \(ready RSS/);
    expect(operator.relativeTargetsMissing(['kopfgen'])).toContain('and without --null');
    expect(operator.relativeTargetsMissing(['kopfgen', 'versus', 'null'])).toBeUndefined();
  });
});
