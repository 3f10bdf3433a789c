/**
 * The client you already have (beyond Kopf's examples): handlers written with
 * `@kubernetes/client-node`, the client most TypeScript operators use today.
 *
 * `kubeConfig()` gives a handler a client-node `KubeConfig` that authenticates every request with
 * the operator's current credentials — after a re-login (a rotated token, an exec plugin's new
 * token, a 401), client-node's next request uses the new ones. Here the create handler makes the
 * object's ConfigMap with client-node's `CoreV1Api` (owned by the object, so that it goes with it),
 * and a timer reads it back every 10 seconds through the same API. client-node is an optional
 * package of kopf-gen: install it beside kopf-gen to use this (`npm install @kubernetes/client-node`).
 */
import { CoreV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { kubeConfig } from 'kopf-gen/client-node';
import { adopt, on, timer } from 'kopf-gen/runtime';

import { KopfExamples } from '../kopfexamples.js';

on.create(KopfExamples, async function create_fn({ spec, namespace, logger }) {
  const core = (await kubeConfig()).makeApiClient(CoreV1Api);
  // `adopt()` makes it the object's child: owner reference, name from the object's, namespace, labels.
  const body: V1ConfigMap = adopt({ apiVersion: 'v1', kind: 'ConfigMap', data: { field: spec.field ?? '' } });
  const created = await core.createNamespacedConfigMap({ namespace: namespace!, body });
  logger.info(`ConfigMap ${created.metadata?.name} is created with @kubernetes/client-node.`);
  return { configmap: created.metadata?.name };
});

timer(KopfExamples, { interval: 10, initialDelay: 10 }, async function check_fn({ status, namespace, logger }) {
  const name = (status?.['create_fn'] as { configmap?: string } | undefined)?.configmap;
  if (name === undefined) return;
  const core = (await kubeConfig()).makeApiClient(CoreV1Api);
  const found = await core.readNamespacedConfigMap({ name, namespace: namespace! });
  logger.info(`ConfigMap ${name} holds field=${found.data?.['field']}.`);
});
