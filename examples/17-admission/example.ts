/**
 * Admission webhooks (Kopf's example 17-admission, in TypeScript): validating and mutating
 * handlers for `KopfExample` objects, served by the operator itself and configured in the API
 * server by it.
 *
 * - `config` picks the webhook server: `WebhookAutoServer` detects the cluster (the devcluster,
 *   k3d/k3s, minikube, Docker Desktop or any other) and serves HTTPS with a certificate it
 *   generates for the address that cluster reaches; `settings.admission.managed` makes the
 *   operator create and keep up to date the ValidatingWebhookConfiguration and
 *   MutatingWebhookConfiguration named `auto.kopf.dev`. The other servers (and tunnels) of
 *   Kopf's example are listed in the README.
 * - `authhook` warns about who is calling: the User-Agent header and the client certificate
 *   (`sslPeer`, empty unless the server verifies client certificates).
 * - `validate1` denies `spec.field: wrong`, except in dry runs.
 * - `validate2` denies `spec.field: not-allowed` with HTTP code 555 (selected by a field filter).
 * - `validate_subresources` sees the subresources (its rule is `kopfexamples/*`, which the API
 *   server matches against subresources only): a status write must keep `status.field` equal to
 *   `spec.field`. Its warning branch runs only for reviews of the main body sent to it directly.
 * - `mutate1` injects `spec.injected: 123` into objects labelled `somelabel: somevalue`.
 */
import { AdmissionError, on, WebhookAutoServer } from 'kopf-gen/runtime';

import { KopfExamples } from '../kopfexamples.js';

on.startup(function config({ settings }) {
  // The final configuration for development and CI: detect the cluster, generate a certificate.
  settings.admission.server = new WebhookAutoServer();
  settings.admission.managed = 'auto.kopf.dev';
});

on.validate(KopfExamples, function authhook({ headers, sslPeer, warnings }) {
  const userAgent = headers['user-agent'] ?? '(unidentified)';
  warnings.push(`Accessing as user-agent: ${userAgent}`);
  const subject = sslPeer['subject'] as Readonly<Record<string, string>> | undefined;
  if (subject === undefined) {
    warnings.push('SSL peer is not identified.');
  } else if (subject['CN'] !== undefined) {
    warnings.push(`SSL peer is ${subject['CN']}.`);
  } else {
    warnings.push("SSL peer's common name is absent.");
  }
});

on.validate(KopfExamples, function validate1({ spec, dryRun }) {
  if (!dryRun && spec?.field === 'wrong') throw new AdmissionError("Meh! I don't like it. Change the field.");
});

on.validate(KopfExamples, { field: 'spec.field', value: 'not-allowed' }, function validate2() {
  throw new AdmissionError("I'm too lazy anyway. Go away!", 555);
});

on.validate(KopfExamples, { subresource: '*' }, function validate_subresources({ spec, status, subresource, warnings }) {
  if (subresource === 'status' && status?.['field'] !== spec?.field) {
    throw new AdmissionError('status.field MUST be equal to spec.field!');
  } else if (subresource === null && status?.['field'] !== spec?.field) {
    warnings.push(`Also update status.field to match spec.field: ${JSON.stringify(spec?.field)} != ${JSON.stringify(status?.['field'])}`);
  }
});

on.mutate(KopfExamples, { labels: { somelabel: 'somevalue' } }, function mutate1({ patch }) {
  patch.spec.injected = 123;
});
