/**
 * The heap policy of a process that runs an operator: trading a little CPU for a much smaller
 * resident size.
 *
 * V8 sizes its old generation for throughput: after each full collection it lets the heap grow to
 * a multiple of what is live, the larger the faster the program allocates. An operator allocates
 * mostly event bodies that wait for their object's turn; under a burst of changes thousands of them
 * survive long enough to be promoted, so V8 lets the heap grow far past what is live and keeps it
 * (measured on 10,000 objects created, updated and deleted: ~320 MB resident for ~60-100 MB live).
 * A lower growing factor (`--heap-growing-percent`, 30 % above the live size after a full
 * collection) brings the peak down by about a third for ~10 % more CPU.
 *
 * Process owners apply it (the `run` command and `main()`, through `runCommand`); embedders that
 * call `operator()` in their own process keep V8's defaults, and a `--heap-growing-percent` given
 * to `node` wins over this one.
 */
import * as v8 from 'node:v8';

/** The growing factor set for operators: the heap may grow to 130 % of the live size. */
export const HEAP_GROWING_PERCENT = 30;

/** What `tuneHeap()` did. */
export type HeapPolicy = { readonly kind: 'tuned'; readonly percent: number } | { readonly kind: 'kept'; readonly reason: string };

/**
 * Sets V8's heap growing factor for an operator process, unless `node` was given one.
 *
 * @param execArgv the process's Node options (default `process.execArgv`).
 */
export function tuneHeap(execArgv: readonly string[] = process.execArgv): HeapPolicy {
  const given = execArgv.find((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg));
  if (given !== undefined) return { kind: 'kept', reason: `${given} is given to node` };
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return { kind: 'tuned', percent: HEAP_GROWING_PERCENT };
}
