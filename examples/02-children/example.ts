/**
 * Children (Kopf's example 02-children, in TypeScript): every KopfExample gets a pod of its own.
 *
 * The handler builds the pod from the object's spec, makes it the object's child with `adopt()` —
 * the owner reference (so that deleting the parent garbage-collects the pod), a generated name
 * derived from the parent's, the parent's namespace and labels — and creates it with the typed
 * `client` the operator hands to every handler (its own connection: credentials, retries,
 * keep-alive). The returned pod uid goes to the parent's status as the handler's result. (Kopf's
 * original uses pykube with a client of its own; here the operator's client does it.)
 */
import { adopt, builtins, on, type Pod } from 'kopf-gen/runtime';

import { KopfExamples } from '../kopfexamples.js';

on.create(KopfExamples, async function create_fn({ spec, client, logger }) {
  // Render the pod with some spec fields used in the template.
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    spec: {
      containers: [
        {
          name: 'the-only-one',
          image: 'busybox',
          command: ['sh', '-x', '-c'],
          args: [`echo "FIELD=$FIELD"\nsleep ${spec.duration ?? 0}\n`],
          env: [{ name: 'FIELD', value: spec.field ?? 'default-value' }],
        },
      ],
    },
  };

  // Make it our child: assign the namespace, name, labels, owner references, etc.
  adopt(pod);

  // Actually create the object by requesting the Kubernetes API.
  const created = await client.create(builtins.Pods, pod);
  logger.info(`Pod ${created.metadata?.name} is created.`);

  // Update the parent's status.
  return { children: [created.metadata?.uid] };
});
