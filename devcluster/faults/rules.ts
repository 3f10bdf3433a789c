/**
 * Fault injection rules (D-FAULT-1..5): a matcher over request attributes plus one action
 * (latency, an error response, a broken connection, a hang, or a watch misbehaviour). Rules are
 * checked in insertion order after authentication and routing; the first match applies.
 */

export interface FaultMatch {
  method?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  watch?: boolean;
  path?: RegExp;
  userAgent?: RegExp;
  user?: string;
}

export type FaultAction =
  | { delay: { beforeMs?: number; afterMs?: number } }
  | { respond: { code: number; reason?: string; message?: string; retryAfterSeconds?: number; form?: 'plain' | 'status' } }
  | { reset: 'before' | 'after' }
  | { hang: true }
  | { watch: { endAfterEvents?: number; endAfterMs?: number; mode?: 'end' | 'abort'; errorAfterEvents?: number; error?: 410 | 500; stall?: boolean } };

interface FaultCounters extends FaultMatch {
  /** Let the first K matching requests pass. */
  skip?: number;
  /** Apply to the next N matches, then expire. */
  times?: number;
  /** Probability (0–1) of applying to a match, from the cluster's seedable random source. */
  probability?: number;
}

type UnionKeys<T> = T extends unknown ? keyof T : never;
type ActionKeys = UnionKeys<FaultAction>;

/**
 * A rule: matcher, counters and one action — written either as the devcluster reference does, with the action's
 * key at the top level (`{ resource: 'widgets', respond: { code: 429 } }`), or wrapped
 * (`{ resource: 'widgets', action: { respond: { code: 429 } } }`).
 */
export type FaultRule = FaultCounters & ({ action: FaultAction } | (FaultAction & { action?: undefined }));

function actionOf(rule: FaultRule): FaultAction {
  if (rule.action) return rule.action;
  const keys: ActionKeys[] = ['delay', 'respond', 'reset', 'hang', 'watch'];
  const fields = rule as unknown as Record<string, unknown>;
  const present = keys.filter((k) => fields[k] !== undefined);
  if (present.length !== 1)
    throw new TypeError(`A fault rule needs exactly one action (${keys.join(', ')}), got ${present.length ? present.join(', ') : 'none'}.`);
  return { [present[0]!]: fields[present[0]!] } as unknown as FaultAction;
}

export interface RequestAttributes {
  method: string;
  verb: string;
  group: string | undefined;
  version: string | undefined;
  resource: string | undefined;
  subresource: string | undefined;
  namespace: string | undefined;
  name: string | undefined;
  watch: boolean;
  path: string;
  userAgent: string;
  user: string;
}

export interface FaultHandle {
  remove(): void;
  /** How many requests the rule has acted on so far (removed or expired rules keep their count). */
  applied(): number;
}

interface Installed {
  rule: FaultRule;
  action: FaultAction;
  skipped: number;
  applied: number;
}

export class Faults {
  private rules: Installed[] = [];

  constructor(private readonly random: () => number) {}

  add(rule: FaultRule): FaultHandle {
    const installed: Installed = { rule, action: actionOf(rule), skipped: 0, applied: 0 };
    this.rules.push(installed);
    return {
      remove: () => {
        this.rules = this.rules.filter((r) => r !== installed);
      },
      applied: () => installed.applied,
    };
  }

  clear(): void {
    this.rules = [];
  }

  /** The action of the first matching rule, consuming its counters; undefined when none applies. */
  match(attrs: RequestAttributes): FaultAction | undefined {
    for (const installed of this.rules) {
      const r = installed.rule;
      if (!matches(r, attrs)) continue;
      if (r.skip !== undefined && installed.skipped < r.skip) {
        installed.skipped++;
        continue;
      }
      if (r.probability !== undefined && this.random() >= r.probability) continue;
      installed.applied++;
      if (r.times !== undefined && installed.applied >= r.times) this.rules = this.rules.filter((x) => x !== installed);
      return installed.action;
    }
    return undefined;
  }
}

function matches(m: FaultMatch, a: RequestAttributes): boolean {
  if (m.method !== undefined && m.method.toUpperCase() !== a.method) return false;
  if (m.verb !== undefined && m.verb !== a.verb) return false;
  if (m.group !== undefined && m.group !== a.group) return false;
  if (m.version !== undefined && m.version !== a.version) return false;
  if (m.resource !== undefined && m.resource !== a.resource) return false;
  if (m.subresource !== undefined && m.subresource !== a.subresource) return false;
  if (m.namespace !== undefined && m.namespace !== a.namespace) return false;
  if (m.name !== undefined && m.name !== a.name) return false;
  if (m.watch !== undefined && m.watch !== a.watch) return false;
  if (m.path !== undefined && !m.path.test(a.path)) return false;
  if (m.userAgent !== undefined && !m.userAgent.test(a.userAgent)) return false;
  if (m.user !== undefined && m.user !== a.user) return false;
  return true;
}
