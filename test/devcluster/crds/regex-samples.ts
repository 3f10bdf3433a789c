/**
 * Patterns from real CRDs that real clusters accept but JavaScript regular expressions do not, shared
 * by the pattern tests (D-CRD-18).
 */

/** Azure Service Operator's resource-id pattern: a case-insensitive alternation of anchored branches. */
export const AZURE_RESOURCE_ID =
  '(?i)(^(/subscriptions/([^/]+)(/resourcegroups/([^/]+))?)?/providers/([^/]+)/([^/]+/[^/]+)(/([^/]+/[^/]+))*$|^/subscriptions/([^/]+)(/resourcegroups/([^/]+))?$|^/subscriptions/([^/]+)/resourcegroups/([^/]+)/providers/([^/]+)/([^/]+/[^/]+)(/([^/]+/[^/]+))*$)';

/** The Zalando postgres-operator's maintenance-window pattern, with escaped spaces (`\ `). */
export const MAINTENANCE_WINDOW = String.raw`^\ *((Mon|Tue|Wed|Thu|Fri|Sat|Sun)(-(Mon|Tue|Wed|Thu|Fri|Sat|Sun))?:(2[0-3]|[01]?\d):([0-5]?\d)|(2[0-3]|[01]?\d):([0-5]?\d))-((Mon|Tue|Wed|Thu|Fri|Sat|Sun)(-(Mon|Tue|Wed|Thu|Fri|Sat|Sun))?:(2[0-3]|[01]?\d):([0-5]?\d)|(2[0-3]|[01]?\d):([0-5]?\d))\ *$`;
