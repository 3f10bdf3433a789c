/**
 * Built-in resources (Kopf's example 10-builtins, in TypeScript): handlers on pods and services,
 * registered exactly like handlers on a custom resource, and typed by the built-in descriptors
 * kopf-gen offers — `builtins.Pods` gives `Pod` bodies, `builtins.Services` gives `Service` bodies
 * (the types of the `kubernetes-types` package), so `spec.containers` or `spec.ports` are checked.
 *
 * The pods: every pod in sight — created, or found when the operator starts — may live for 30
 * seconds; then the operator deletes it. For no reason but fun, or as chaos engineering that makes
 * applications tolerate the loss of pods. Pods of the system namespaces (`kube-*`) are left alone,
 * so as not to kill the cluster itself: a `when` filter keeps the handlers away from them.
 *
 * Kopf's original starts an asyncio task per pod in the create/resume handler and cancels it in the
 * delete handler. Here that task is a daemon: one per pod, started by the framework, and asked to
 * stop when the pod is deleted. It sleeps with `stopped.wait(30)`, which ends early on that
 * request, and runs on the operator's clock, so a test passes the 30 seconds in no time.
 *
 * The services: each one gets an annotation listing its ports, written through the typed `patch`.
 */
import { builtins, on } from 'kopf-gen/runtime';

const KILL_AFTER = 30; // seconds

/** Keeps the handlers away from the system namespaces (filters get the handler's arguments). */
const outsideSystemNamespaces = ({ namespace }: { readonly namespace: string | null }): boolean => !namespace?.startsWith('kube-');

// Created, or found when the operator starts: announce the pod's fate. `spec` is a PodSpec.
on.create(
  builtins.Pods,
  { when: outsideSystemNamespaces },
  on.resume(builtins.Pods, { when: outsideSystemNamespaces }, function pod_in_sight({ spec, logger }) {
    const images = spec.containers.map((container) => container.image ?? '?').join(', ');
    logger.info(`=== Pod killing happens in ${KILL_AFTER}s (images: ${images}).`);
  }),
);

// The killer: deletes the pod after 30 seconds, unless the pod is deleted before.
on.daemon(builtins.Pods, { when: outsideSystemNamespaces }, async function pod_killer({ stopped, name, namespace, client, logger }) {
  if (await stopped.wait(KILL_AFTER)) {
    logger.info('=== Pod killing is cancelled!');
    return;
  }
  logger.info('=== Pod killing happens NOW!');
  await client.delete(builtins.Pods, name, { namespace: namespace ?? undefined });
});

// Services: record their ports in an annotation. `spec.ports` is typed as ServicePort[].
on.create(builtins.Services, async function service_in_sight({ spec, patch, logger }) {
  const ports = (spec.ports ?? []).map((port) => `${port.port}/${port.protocol ?? 'TCP'}`).join(',');
  patch.metadata.annotations['example.kopf.dev/ports'] = ports;
  logger.info(`=== Service of type ${spec.type ?? 'ClusterIP'} exposes ${ports || 'no ports'}.`);
});
