/**
 * The errors of the testing toolkit's own helpers (the runtime's and the devcluster's have theirs):
 * what a failed round trip of converters reports.
 */
import { AssertionError } from 'node:assert';

/** One difference between the object given and the one that came back. */
export interface FieldChange {
  /** `changed` (both have a value), `lost` (only the original has it), `added` (only the result). */
  readonly kind: 'changed' | 'lost' | 'added';
  /** The field's path, as in `spec.ports[0].name` or `metadata.annotations["example.com/a"]`. */
  readonly path: string;
  /** The value before; `undefined` when absent. */
  readonly before: unknown;
  /** The value after; `undefined` when absent. */
  readonly after: unknown;
}

/** A round trip did not give the object back, or a converter changed its input. */
export class RoundTripError extends AssertionError {
  override readonly name = 'RoundTripError';
  /** The differences between the object given and the one that came back. */
  readonly changes: readonly FieldChange[];
  /** The changes a converter made to the object it was given (normally none). */
  readonly mutations: readonly FieldChange[];

  constructor(route: string, original: unknown, restored: unknown, changes: readonly FieldChange[], mutations: readonly FieldChange[]) {
    const sections = [
      ...(changes.length > 0 ? [`the round trip ${route} changed the object:`, ...changes.map(describeChange)] : []),
      ...(mutations.length > 0 ? [`a converter changed the object it was given (${route}):`, ...mutations.map(describeChange)] : []),
    ];
    super({ message: sections.join('\n'), actual: restored, expected: original, operator: 'roundTrip' });
    this.changes = changes;
    this.mutations = mutations;
  }
}

function describeChange(change: FieldChange): string {
  return `  ${change.path}: ${show(change.before)} → ${show(change.after)} (${change.kind})`;
}

/** A value as JSON, shortened; `(absent)` for `undefined`. */
function show(value: unknown): string {
  if (value === undefined) return '(absent)';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
