/**
 * The contract between an admission webhook server and the operator (R-ADMISSION-3).
 *
 * The operator does not own a web server for admission: it hands a server one function, `WebhookFn`,
 * which turns a received `AdmissionReview` (or, at a conversion path, a `ConversionReview`,
 * R-CONVERT-205) into the review to send back, and reads from the server
 * the client configurations (`url` or `service`, and `caBundle`) under which the API server can
 * reach it. Each configuration the server yields replaces the previous one in the managed webhook
 * configurations. The built-in servers (`kits/webhooks`) and any user-written server speak this
 * contract; the admission engine (`core/engines/admission`) implements the function.
 *
 * These are plain types (and one error class) so that the settings can name a server's type
 * without depending on the engine or the kit.
 */

/** A group/version/resource triple, as in `request.resource`. */
export interface GroupVersionResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

/** A group/version/kind triple, as in `request.kind`. */
export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** `request` of an `AdmissionReview` (admission.k8s.io/v1), as the API server sends it. */
export interface AdmissionRequest {
  readonly uid: string;
  readonly kind?: GroupVersionKind;
  readonly resource: GroupVersionResource;
  readonly subResource?: string;
  readonly requestKind?: GroupVersionKind;
  readonly requestResource?: GroupVersionResource;
  readonly requestSubResource?: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  readonly userInfo: {
    readonly username?: string;
    readonly uid?: string;
    readonly groups?: readonly string[];
    readonly extra?: Readonly<Record<string, readonly string[]>>;
  };
  readonly object?: Record<string, unknown> | null;
  readonly oldObject?: Record<string, unknown> | null;
  readonly dryRun?: boolean;
  readonly options?: Record<string, unknown> | null;
}

/** What the operator answers (R-ADMISSION-5). */
export interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly warnings?: readonly string[];
  /** Base64 of a JSON-Patch (RFC 6902) array. */
  readonly patch?: string;
  readonly patchType?: 'JSONPatch';
  readonly status?: { readonly message: string; readonly code: number };
}

/** An `AdmissionReview` carrying the operator's response. */
export interface AdmissionReviewResponse {
  readonly apiVersion: string;
  readonly kind: string;
  readonly response: AdmissionResponse;
}

/** `request` of a `ConversionReview` (apiextensions.k8s.io/v1 or v1beta1), as the API server sends it. */
export interface ConversionRequest {
  readonly uid: string;
  /** The version to convert every object to, as `group/version`. */
  readonly desiredAPIVersion: string;
  readonly objects: readonly Record<string, unknown>[];
}

/** The outcome of a conversion: `Success`, or `Failure` with a message (R-CONVERT-203). */
export type ConversionResult = { readonly status: 'Success' } | { readonly status: 'Failure'; readonly message: string };

/** What the operator answers to a `ConversionReview`. */
export interface ConversionResponse {
  readonly uid: string;
  /** The converted objects, in the order of the request's; empty on failure. */
  readonly convertedObjects: readonly Record<string, unknown>[];
  readonly result: ConversionResult;
}

/** A `ConversionReview` carrying the operator's response. */
export interface ConversionReviewResponse {
  readonly apiVersion: string;
  readonly kind: string;
  readonly response: ConversionResponse;
}

/** What a server knows about one request beside its body; all optional. */
export interface WebhookRequestContext {
  /**
   * The webhook id taken from the request path below the server's root path (e.g. `validate1`, or
   * `validate2/spec.field`): only that handler runs. Absent or empty: all handlers of the resource.
   */
  readonly webhook?: string | null;
  /** The kind of webhook configuration that called, when the server can tell. */
  readonly type?: 'validating' | 'mutating' | null;
  /** The HTTP request headers (lowercase names), passed to handlers as `headers`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The verified client certificate, if any, passed to handlers as `sslPeer`. */
  readonly sslPeer?: Readonly<Record<string, unknown>>;
}

/**
 * The function a server calls for each received request body (already parsed JSON, or the raw
 * text when it could not be parsed). Resolves to the review to send back with HTTP 200 (an
 * `AdmissionReview`, or a `ConversionReview` for a conversion path `convert/<plural>.<group>`);
 * rejects with a `WebhookRequestError` for requests that get an HTTP error instead (its `status`).
 */
export type WebhookFn = (body: unknown, context?: WebhookRequestContext) => Promise<AdmissionReviewResponse | ConversionReviewResponse>;

/** A reference to a Service in the cluster, as in a webhook's `clientConfig.service`. */
export interface WebhookServiceReference {
  readonly namespace: string;
  readonly name: string;
  readonly path?: string;
  readonly port?: number;
}

/** Where the API server reaches the server: a URL or a Service, and the CA to trust (Base64 PEM). */
export interface WebhookClientConfig {
  readonly url?: string;
  readonly service?: WebhookServiceReference;
  readonly caBundle?: string;
}

/**
 * What the operator tells a server when it starts it (kopf-gen's addition to Kopf's protocol,
 * which passes only the function): servers that ignore it work all the same.
 */
export interface WebhookServerEnvironment {
  /** The API server's URL as the operator reaches it, e.g. for recognising the cluster's flavour. */
  readonly apiServer?: string;
  /** The API server's CA (PEM), if the operator's credentials name one. */
  readonly apiServerCa?: string;
  /** Aborts when the operator stops serving: the server then closes and ends its iteration. */
  readonly signal: AbortSignal;
}

/** A server as a function: serves `fn` and yields client configurations while it runs. */
export type WebhookServerFn = (fn: WebhookFn, environment?: WebhookServerEnvironment) => AsyncIterable<WebhookClientConfig>;

/** A server as an object; disposal hooks, if any, wrap the iteration. */
export interface WebhookServerObject {
  serve(fn: WebhookFn, environment?: WebhookServerEnvironment): AsyncIterable<WebhookClientConfig>;
  [Symbol.asyncDispose]?(): PromiseLike<void>;
}

/** What `settings.admission.server` accepts. */
export type WebhookServerLike = WebhookServerFn | WebhookServerObject;
