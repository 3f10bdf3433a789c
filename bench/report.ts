/**
 * Printing benchmark results: one JSON document (for tools) and one table (for people), with
 * each figure's target and whether it was met. Benchmarks assert nothing.
 */

export interface Target {
  min?: number;
  max?: number;
}

export interface Result {
  name: string;
  figures: Record<string, number>;
  targets?: Record<string, Target>;
  /** Text that qualifies the figures (the command measured, definitions), printed after the table. */
  notes?: Record<string, string>;
  /** Side-by-side tables printed instead of the table of all figures (the JSON keeps them all). */
  tables?: Comparison[];
}

/** A side-by-side table: one row per figure, one value column per operator (or ratio), a target, whether met. */
export interface Comparison {
  title: string;
  columns: string[];
  rows: ComparisonRow[];
}

/** One row: `undefined` values print as `-`; `met` undefined means no verdict (no target, or nothing to compare with). */
export interface ComparisonRow {
  label: string;
  values: (number | undefined)[];
  digits?: number;
  target: string;
  met: boolean | undefined;
}

/** What a benchmark collects part by part before it returns its `Result`: every field present. */
export type Collected = Required<Omit<Result, 'name' | 'tables'>>;

export function percentile(values: number[], p: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

/** Median, minimum and maximum; NaN for no values. */
export function spread(values: readonly number[]): { median: number; min: number; max: number } {
  if (!values.length) return { median: Number.NaN, min: Number.NaN, max: Number.NaN };
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]! };
}

const fmt = (v: number): string => (Number.isInteger(v) ? String(v) : v.toFixed(v < 10 ? 2 : 1));

/** Three significant digits at most, no exponent; `digits` fixes the decimals instead. */
export function short(v: number | undefined, digits?: number): string {
  if (v === undefined) return '-';
  if (!Number.isFinite(v)) return String(v);
  if (digits !== undefined) return v.toFixed(digits);
  if (Number.isInteger(v) || Math.abs(v) >= 100) return v.toFixed(0);
  return Math.abs(v) >= 10 ? v.toFixed(1) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(2);
}

function printGrid(title: string, header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  process.stdout.write(`\n${title}\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${rows.map(line).join('\n')}\n\n`);
}

export function printComparison(table: Comparison): void {
  const rows = table.rows.map((r) => [r.label, ...r.values.map((v) => short(v, r.digits)), r.target, r.met === undefined ? '' : r.met ? 'yes' : 'NO']);
  printGrid(table.title, ['figure', ...table.columns, 'target', 'met'], rows);
}

export function print(result: Result): void {
  const notes = result.notes ? { notes: result.notes } : {};
  process.stdout.write(`${JSON.stringify({ benchmark: result.name, figures: result.figures, targets: result.targets ?? {}, ...notes })}\n`);
  const rows = Object.entries(result.figures).map(([k, v]) => {
    const t = result.targets?.[k];
    const target = t ? [t.min !== undefined ? `>= ${t.min}` : '', t.max !== undefined ? `<= ${t.max}` : ''].filter(Boolean).join(' ') : '';
    const met = t ? ((t.min === undefined || v >= t.min) && (t.max === undefined || v <= t.max) ? 'yes' : 'NO') : '';
    return [k, fmt(v), target, met];
  });
  if (result.tables?.length) for (const table of result.tables) printComparison(table);
  else printGrid(result.name, ['figure', 'value', 'target', 'met'], rows);
  for (const [k, v] of Object.entries(result.notes ?? {})) process.stdout.write(`${k}: ${v}\n`);
  if (result.notes) process.stdout.write('\n');
}
