/**
 * The resource of Kopf's examples, `KopfExample` (`kopfexamples.kopf.dev/v1`, CRD in
 * fixtures/crds/kopfexamples.yaml), typed for the examples in this folder and the user's guide.
 *
 * The CRD keeps `spec` and `status` open (`x-kubernetes-preserve-unknown-fields`), so
 * `kopf-gen generate` would type them as open records; here they are declared by hand with the
 * fields the examples use. In your own project, the descriptor comes from `src/generated/`.
 */
import { resource, type KubernetesObject } from 'kopf-gen/runtime';

export interface KopfExampleSpec {
  /** For how long the example's pods should sleep, e.g. `1m`. */
  duration?: string;
  field?: string;
  items?: string[];
  /** Injected by the 17-admission example's mutating webhook. */
  injected?: number;
}

export interface KopfExampleStatus {
  message?: string;
  /** Written by the 16-indexing example: `<namespace>::<name>` of running pods. */
  'running-pods'?: string[];
  /** Written by the 16-indexing example: names of pods sharing a label with the object. */
  'labelled-pods'?: string[];
  /** Handler results land here under the handlers' ids. */
  [key: string]: unknown;
}

export interface KopfExample extends KubernetesObject {
  apiVersion: 'kopf.dev/v1';
  kind: 'KopfExample';
  spec?: KopfExampleSpec;
  status?: KopfExampleStatus;
}

export const KopfExamples = resource<KopfExample>({
  group: 'kopf.dev',
  version: 'v1',
  plural: 'kopfexamples',
  kind: 'KopfExample',
  namespaced: true,
  singular: 'kopfexample',
  shortNames: ['kopfexes', 'kopfex', 'kexes', 'kex'],
  statusSubresource: true,
});
