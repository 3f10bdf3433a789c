/**
 * The server's internal context: what every verb handler needs (store, registry, clock, ids,
 * the watch hub, the admission chain, options), and the request context of one API call.
 * Handlers take a `Core` instead of reaching for globals, so several clusters can run in one
 * process and tests can drive each with its own clock.
 */
import type { CallOptions } from '../admission/calling.js';
import type { Clock } from '../clock.js';
import type { ConversionCallRecord } from '../crds/conversion.js';
import type { Ids } from '../ids.js';
import type { JsonObject } from '../json.js';
import type { Store } from '../store/revisions.js';
import type { Registry, ResourceType } from './resources.js';
import type { FieldValidation } from './options.js';

export interface UserInfo {
  username: string;
  uid: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionAttributes {
  operation: AdmissionOperation;
  type: ResourceType;
  subresource: string | undefined;
  namespace: string | undefined;
  name: string | undefined;
  object: JsonObject | undefined;
  oldObject: JsonObject | undefined;
  dryRun: boolean;
  /** `CreateOptions` / `UpdateOptions` / `DeleteOptions` as sent to webhooks. */
  options: JsonObject;
  user: UserInfo;
}

/** The admission chain (D-ADM); the default one admits everything unchanged. */
export interface Admission {
  mutate(attrs: AdmissionAttributes, warnings: string[]): Promise<JsonObject | undefined>;
  validate(attrs: AdmissionAttributes, warnings: string[]): Promise<void>;
}

export const noAdmission: Admission = {
  async mutate(attrs) {
    return attrs.object;
  },
  async validate() {
    /* nothing to call */
  },
};

export interface CoreOptions {
  /** Evaluate CEL rules of CRDs (D-CRD-13). */
  cel: boolean;
  /** How long reads for a future RV wait before 504 (D-VERB-2). */
  tooLargeRvWaitMs: number;
  /** Delete dependents whose owner does not exist at creation (D-VERB-35). */
  gcDeleteOrphansOnCreate: boolean;
  /** How webhooks are reached (service resolution, TLS leniency); conversion webhooks use it too (D-CONV-401). */
  webhooks?: CallOptions;
  /** The timeout of conversion webhook calls in seconds (default upstream's 30). */
  conversionTimeoutSeconds?: number;
  /** Observes every finished conversion webhook call (as `onWebhookCall` does admission calls). */
  onConversionCall?: (call: ConversionCallRecord) => void;
}

export interface Core {
  readonly store: Store;
  readonly registry: Registry;
  readonly clock: Clock;
  readonly ids: Ids;
  admission: Admission;
  readonly options: CoreOptions;
  /** Waits until the store reaches `rev` or the timeout passes; resolves to whether it was reached. */
  waitForRevision(rev: number, timeoutMs: number): Promise<boolean>;
}

/** What one API write call carries besides its body. */
export interface WriteRequest {
  readonly type: ResourceType;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly subresource: string | undefined;
  readonly user: UserInfo;
  readonly dryRun: boolean;
  readonly fieldManager: string;
  readonly fieldValidation: FieldValidation;
  /** Warning headers to send with the response. */
  readonly warnings: string[];
}
