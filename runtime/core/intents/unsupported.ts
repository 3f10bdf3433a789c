/**
 * Features of Kopf that this version of kopf-gen does not have yet, and the error that says so.
 *
 * The rule of the project: an exported function, option or flag either works or fails loudly at
 * the moment it is used — a registration that nothing will ever run, or an option that nothing
 * reads, lets a user believe that the feature exists. Until their engines land, admission webhooks
 * (`on.validate`, `on.mutate`) and peering
 * (`peeringName`, `priority`, `identity`, mandatory peering in the settings) and the admission
 * settings (`settings.admission.server`, `settings.admission.managed`) throw an
 * `UnsupportedFeatureError` where they are used: at registration, or when an operator is started.
 * The command line turns the same texts into usage errors (`core/reactor/launching`).
 *
 * Each feature has one entry below with what is missing and what to do instead; an engine that
 * lands removes its entries.
 */

/** One feature that is not available in this version. */
export type UnsupportedFeature =
  | 'on.validate' | 'on.mutate'
  | 'peeringName' | 'priority' | 'identity'
  | 'settings.peering.mandatory' | 'settings.peering.priority'
  | 'settings.admission.server' | 'settings.admission.managed';

interface Explanation {
  /** Why it does not work: the missing engine. */
  readonly why: string;
  /** What to do instead, as a sentence. */
  readonly instead: string;
}

const ADMISSION = 'admission webhooks are not served yet (a later version brings them)';
const PEERING = 'peering between operators is not implemented yet (a later version brings it)';
const STANDALONE = 'operators of this version always run standalone, so run only one operator for the same resources, '
  + 'started with --standalone (standalone: true).';

const EXPLANATIONS: Readonly<Record<UnsupportedFeature, Explanation>> = {
  'on.validate': {
    why: ADMISSION,
    instead: "Remove the registration; enforce the rule in the CRD's schema (types, enums, patterns, "
      + 'x-kubernetes-validations), or check it in a change handler and report the outcome in the status.',
  },
  'on.mutate': {
    why: ADMISSION,
    instead: "Remove the registration; set defaults in the CRD's schema (default:), or patch the object from a "
      + 'create or update handler.',
  },
  peeringName: { why: PEERING, instead: `Remove it: ${STANDALONE}` },
  priority: { why: `a priority only ranks operators for peering, and ${PEERING}`, instead: `Remove it: ${STANDALONE}` },
  identity: { why: `an identity only names an operator for peering, and ${PEERING}`, instead: `Remove it: ${STANDALONE}` },
  'settings.peering.mandatory': { why: PEERING, instead: `Leave it false: ${STANDALONE}` },
  'settings.peering.priority': { why: `a priority only ranks operators for peering, and ${PEERING}`, instead: `Leave it at 0: ${STANDALONE}` },
  'settings.admission.server': { why: ADMISSION, instead: 'Leave it null: no admission handler can be registered in this version either.' },
  'settings.admission.managed': {
    why: ADMISSION, instead: 'Leave it null, and manage webhook configurations of your own admission server outside of the operator.',
  },
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
