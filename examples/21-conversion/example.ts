/**
 * Conversion between two versions of a CRD (not one of Kopf's examples): the Sprocket
 * (fixtures/crds/conversion.yaml) is served in v1 and v2 and stored in v2; v2 renamed v1's
 * `spec.size` to `spec.replicas`, split the image reference `spec.image: "repository:tag"` into
 * `spec.image: { repository, tag }` and added `spec.paused`. The API server asks the operator to
 * convert objects between the versions (ConversionReviews, over the same HTTPS server as
 * admission webhooks); the converters, lossless both ways, are in `converters.ts`.
 *
 * - `config` picks the webhook server (`WebhookAutoServer`: it detects the cluster and generates
 *   a certificate) and `settings.conversion.managed`: the operator writes the CRD's
 *   `spec.conversion.webhook.clientConfig` (its URL and CA bundle) itself.
 * - `on.convert(V1.Sprockets, V2.Sprockets, …)` registers the pair; the compiler checks each
 *   converter's result against the other version's type (`Exact`). The handle it returns is
 *   exported for tests (`roundTrip(sprocketV1V2, object)` from `kopf-gen/testing`).
 * - `rollout` handles Sprockets in v2 only: objects written in v1 reach it converted, and its
 *   result (`status.rollout`) is readable in both versions.
 */
import { on, WebhookAutoServer } from 'kopf-gen/runtime';

import * as V1 from '../../fixtures/generated/sprockets.conversion.kopf-gen.dev.v1.js';
import * as V2 from '../../fixtures/generated/sprockets.conversion.kopf-gen.dev.v2.js';
import { backward, forward, joinImage } from './converters.js';

on.startup(function config({ settings }) {
  settings.admission.server = new WebhookAutoServer();
  settings.conversion.managed = true;
});

export const sprocketV1V2 = on.convert(V1.Sprockets, V2.Sprockets, { forward, backward });

on.create(V2.Sprockets, function rollout({ spec, logger }) {
  const image = joinImage(spec.image);
  logger.info(`Rolling out ${spec.replicas} × ${image}${spec.paused ? ' (paused)' : ''}.`);
  return { replicas: spec.replicas, image, paused: spec.paused ?? false };
});
