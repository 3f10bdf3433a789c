/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for the tests of the
 * metrics: prom-client's own parser is not public, and reading what a scraper reads is the point.
 *
 * It checks what a Prometheus server would reject or misread: every sample belongs to a family
 * declared by `# HELP` and `# TYPE` before it; a family is declared once; names and label names
 * are valid; label values are quoted and escaped; values are numbers; histogram samples are the
 * family's `_bucket` (with `le`), `_sum` and `_count`, with cumulative buckets ending in `+Inf`
 * that equal the count. A violation throws an error naming the line.
 */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  readonly samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** A sample value as Prometheus reads it (Go's `ParseFloat`: `NaN` and `Inf` in any case; prom-client writes `Nan`). */
function parseValue(text: string, line: string): number {
  const lower = text.toLowerCase();
  if (lower === '+inf' || lower === 'inf') return Infinity;
  if (lower === '-inf') return -Infinity;
  if (lower === 'nan') return NaN;
  const value = Number(text);
  if (text === '' || Number.isNaN(value)) throw new Error(`Not a number in: ${line}`);
  return value;
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = text;
  while (rest.length > 0) {
    const match = /^([^=]+)="((?:[^"\\]|\\.)*)"(,?)/.exec(rest);
    if (match === null) throw new Error(`Malformed labels in: ${line}`);
    const [whole, name, raw, comma] = match as unknown as [string, string, string, string];
    if (!LABEL.test(name)) throw new Error(`Invalid label name ${name} in: ${line}`);
    if (name in labels) throw new Error(`Label ${name} given twice in: ${line}`);
    labels[name] = raw.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    rest = rest.slice(whole.length);
    if (comma === '' && rest.length > 0) throw new Error(`Malformed labels in: ${line}`);
  }
  return labels;
}

function familyOf(families: Map<string, Family>, sample: string): Family | undefined {
  const exact = families.get(sample);
  if (exact !== undefined) return exact;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sample.endsWith(suffix)) continue;
    const family = families.get(sample.slice(0, -suffix.length));
    if (family !== undefined && (family.type === 'histogram' || family.type === 'summary')) return family;
  }
  return undefined;
}

function checkHistogram(family: Family): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (sample.name === `${family.name}_bucket`) {
      if (le === undefined) throw new Error(`A bucket of ${family.name} has no le label.`);
      entry.buckets.push([parseValue(le, le), sample.value]);
    } else if (sample.name === `${family.name}_count`) {
      entry.count = sample.value;
    } else if (sample.name !== `${family.name}_sum`) {
      throw new Error(`${sample.name} is not a sample of the histogram ${family.name}.`);
    }
  }
  for (const { buckets, count } of series.values()) {
    const last = buckets[buckets.length - 1];
    if (last === undefined || last[0] !== Infinity) throw new Error(`The histogram ${family.name} has no +Inf bucket.`);
    for (let i = 1; i < buckets.length; i++) {
      if (buckets[i]![0] <= buckets[i - 1]![0] || buckets[i]![1] < buckets[i - 1]![1]) throw new Error(`The buckets of ${family.name} are not cumulative.`);
    }
    if (count !== last[1]) throw new Error(`The count of ${family.name} differs from its +Inf bucket.`);
  }
}

/**
 * Parses an exposition text strictly (see the module's comment).
 *
 * @throws Error naming the offending line or family.
 */
export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const helps = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const help = /^# HELP (\S+) (.*)$/.exec(line);
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (help !== null) {
        if (!NAME.test(help[1]!)) throw new Error(`Invalid metric name in: ${line}`);
        if (helps.has(help[1]!) || families.has(help[1]!)) throw new Error(`${help[1]} is declared twice.`);
        helps.set(help[1]!, help[2]!);
      } else if (type !== null) {
        const [, name, kind] = type as unknown as [string, string, string];
        if (!TYPES.has(kind)) throw new Error(`Unknown type in: ${line}`);
        if (families.has(name)) throw new Error(`${name} is declared twice.`);
        if (!helps.has(name)) throw new Error(`${name} has a TYPE but no HELP before it.`);
        families.set(name, { name, help: helps.get(name)!, type: kind as Family['type'], samples: [] });
      } else if (!/^# /.test(line)) {
        throw new Error(`Malformed comment: ${line}`);
      }
      continue;
    }
    const match = /^([^\s{]+)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/.exec(line);
    if (match === null) throw new Error(`Malformed sample: ${line}`);
    const [, name, labels, value] = match as unknown as [string, string, string | undefined, string];
    if (!NAME.test(name)) throw new Error(`Invalid metric name in: ${line}`);
    const family = familyOf(families, name);
    if (family === undefined) throw new Error(`A sample without a declared family: ${line}`);
    family.samples.push({ name, labels: parseLabels(labels ?? '', line), value: parseValue(value, line) });
  }
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** The sum of the samples named `name` whose labels include `labels`; `undefined` if there are none. */
export function metricValue(families: Map<string, Family>, name: string, labels: Readonly<Record<string, string>> = {}): number | undefined {
  const family = familyOf(families, name);
  const matching =
    family?.samples.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value)) ?? [];
  if (matching.length === 0) return undefined;
  return matching.reduce((sum, sample) => sum + sample.value, 0);
}
