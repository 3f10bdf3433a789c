/**
 * Errors of the plain data structures: a structure that cannot be what it was asked to be. Every
 * class follows the runtime's scheme (docs/architecture.md, "Errors").
 */

/** Why a request gets an HTTP error instead of a review. */
export type WebhookRequestProblem =
  | 'malformed' // not JSON, not an AdmissionReview, missing `request.userInfo` or both objects: HTTP 400
  | 'unknown-webhook' // the webhook id in the path is no admission handler's: HTTP 404
  | 'unknown-resource' // no admission handler serves the resource: HTTP 404
  | 'ambiguous-resource'; // several served resources match the request: HTTP 409

const STATUSES: Readonly<Record<WebhookRequestProblem, 400 | 404 | 409>> = {
  malformed: 400,
  'unknown-webhook': 404,
  'unknown-resource': 404,
  'ambiguous-resource': 409,
};

/**
 * A request that gets an HTTP error instead of an `AdmissionReview` (R-ADMISSION-4). Servers reply
 * with `status` and the one-line `message`, never a stack trace. The operator has logged it already
 * (one WARNING line), so servers need not log it again.
 */
export class WebhookRequestError extends Error {
  override readonly name = 'WebhookRequestError';
  readonly code = 'WebhookRequestError' as const;
  readonly problem: WebhookRequestProblem;
  readonly status: 400 | 404 | 409;

  constructor(problem: WebhookRequestProblem, message: string) {
    super(message);
    this.problem = problem;
    this.status = STATUSES[problem];
  }
}

/** A label selector string the grammar rejects (`cogs/structs/labelselectors`), as the API server's 400 would. */
export class LabelSelectorError extends Error {
  readonly code = 'LabelSelectorInvalid' as const;
  override readonly name = 'LabelSelectorError';
}
