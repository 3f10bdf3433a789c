/**
 * Features of Kopf that this version of kopf-gen does not have yet, and the error that says so.
 *
 * The rule of the project: an exported function, option or flag either works or fails loudly at
 * the moment it is used — a registration that nothing will ever run, or an option that nothing
 * reads, lets a user believe that the feature exists. Until its engine lands, peering
 * (`peeringName`, `priority`, `identity`, mandatory peering in the settings) throws an
 * `UnsupportedFeatureError` where it is used: when an operator is started.
 * The command line turns the same texts into usage errors (`core/reactor/launching`).
 *
 * Each feature has one entry below with what is missing and what to do instead; an engine that
 * lands removes its entries.
 */

/** One feature that is not available in this version. */
export type UnsupportedFeature =
  | 'peeringName' | 'priority' | 'identity'
  | 'settings.peering.mandatory' | 'settings.peering.priority';

interface Explanation {
  /** Why it does not work: the missing engine. */
  readonly why: string;
  /** What to do instead, as a sentence. */
  readonly instead: string;
}

const PEERING = 'peering between operators is not implemented yet (a later version brings it)';
const STANDALONE = 'operators of this version always run standalone, so run only one operator for the same resources, '
  + 'started with --standalone (standalone: true).';

const EXPLANATIONS: Readonly<Record<UnsupportedFeature, Explanation>> = {
  peeringName: { why: PEERING, instead: `Remove it: ${STANDALONE}` },
  priority: { why: `a priority only ranks operators for peering, and ${PEERING}`, instead: `Remove it: ${STANDALONE}` },
  identity: { why: `an identity only names an operator for peering, and ${PEERING}`, instead: `Remove it: ${STANDALONE}` },
  'settings.peering.mandatory': { why: PEERING, instead: `Leave it false: ${STANDALONE}` },
  'settings.peering.priority': { why: `a priority only ranks operators for peering, and ${PEERING}`, instead: `Leave it at 0: ${STANDALONE}` },
};

/** Why a feature is unavailable and what to do instead, without naming the feature. */
export function explain(feature: UnsupportedFeature): string {
  const { why, instead } = EXPLANATIONS[feature];
  return `${why}. ${instead}`;
}

/**
 * A feature was used that this version does not have (see the module's comment). Thrown where it
 * is used: by the registration function, or by `operator()`/`run()`/`spawnTasks()` before they
 * start anything.
 *
 * @example
 * try { on.validate(Widgets, fn); } catch (error) { if (error instanceof UnsupportedFeatureError) … error.feature === 'on.validate' }
 */
export class UnsupportedFeatureError extends Error {
  readonly code = 'UnsupportedFeatureError' as const;
  /** The function, option or setting that was used. */
  readonly feature: UnsupportedFeature;

  /** @param what how the feature was used, e.g. `on.validate()` or `the option peeringName`. */
  constructor(feature: UnsupportedFeature, what: string) {
    super(`${what} is not available in this version of kopf-gen: ${explain(feature)}`);
    this.name = 'UnsupportedFeatureError';
    this.feature = feature;
  }
}
