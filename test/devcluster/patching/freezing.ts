/**
 * Test helper: freezes a value recursively, so any attempt by the code under test to mutate an
 * input throws (test modules run in strict mode).
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
