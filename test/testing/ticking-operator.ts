/**
 * The operator of the virtual-time user story (test/testing/virtualtime.test.ts), written as a
 * user would write `src/operator.ts`: one timer every 10 seconds that counts its ticks in the
 * object's status. The test runs it with `kopf-gen/testing` on a virtual clock.
 */
import { on, resource, type KubernetesObject } from 'kopf-gen/runtime';

interface KopfExample extends KubernetesObject {
  apiVersion: 'kopf.dev/v1';
  kind: 'KopfExample';
  spec?: { field?: string };
  status?: { ticks?: number; at?: string };
}

const KopfExamples = resource<KopfExample>({
  group: 'kopf.dev',
  version: 'v1',
  plural: 'kopfexamples',
  kind: 'KopfExample',
  namespaced: true,
  statusSubresource: true,
});

let ticks = 0;

on.timer(KopfExamples, { interval: 10 }, async function tick({ patch, started, logger }) {
  ticks += 1;
  patch.status.ticks = ticks;
  patch.status.at = started.toISOString(); // the operator's clock: virtual in the test
  logger.info(`Tick #${ticks}.`);
});
