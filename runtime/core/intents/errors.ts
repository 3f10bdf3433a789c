/**
 * Errors of what the user registers: a registration that cannot work, found when it is made.
 * Named and coded by the runtime's scheme (docs/architecture.md, "Errors").
 */

/**
 * Two different functions registered under one handler id for the same resource and reason
 * (R-HANDLERS-15): thrown by the second registration, naming both places.
 */
export class DuplicateHandlerIdError extends TypeError {
  readonly code = 'DuplicateHandlerId' as const;
  override readonly name = 'DuplicateHandlerIdError';

  constructor(
    /** The handler id both registrations use. */
    readonly id: string,
    /** The registration function, e.g. `on.create`. */
    readonly registration: string,
    /** The places of the first and the second registration (`file:line`). */
    readonly places: readonly [string, string],
    /** ` for <resource>`, or empty for activity handlers. */
    resource: string,
  ) {
    super(
      `Two different functions are registered as the handler '${id}' of ${registration}${resource}: the first at ${places[0]}, ` +
        `the second at ${places[1]}. They would share one progress record and one result per object, so one would silently ` +
        `stand in for the other. Give one of them a distinct \`id\` option (e.g. ${registration}(…, { id: '${id}-2' }, …)), or remove one.`,
    );
  }
}
