/**
 * Sharding (not one of Kopf's examples): several replicas of one operator share the objects, each
 * working on its own share only, so that more replicas add capacity rather than idle standbys.
 *
 * The operator is ordinary — a create handler and a daemon per object. What the example shows
 * happens around it: run it twice with `--shards example`, and each replica holds a Lease of its
 * own (`example-<identity>`), the objects get the label `shard.kopf-gen.dev/example` naming their
 * owner, and each object's handler and daemon run in that owner only. Stop one replica and the
 * other takes its objects over; start it again and about half of them move back. See
 * docs/sharding.md.
 *
 * Both handlers say which replica they run in: `$POD_NAME`, the identity a replica takes by default
 * (the generated Deployment sets it from the pod's name; run the example with it set).
 */
import { on } from 'kopf-gen/runtime';

import { KopfExamples } from '../kopfexamples.js';

/** The replica this process runs as: what its Lease and its objects' owner label say. */
const REPLICA = process.env['POD_NAME'] ?? 'this replica (set POD_NAME to name it)';

// Runs once per object, in the object's owner only; the result lands in status.create_fn.
on.create(KopfExamples, function create_fn({ name, logger }) {
  logger.info(`Created ${name}: handled by replica ${REPLICA}.`);
  return { replica: REPLICA };
});

// Runs for as long as the object exists, in its owner only; moves with the object when it changes
// hands (stopped here first, then started in the new owner).
on.daemon(KopfExamples, async function monitor({ name, stopped, logger }) {
  while (!stopped.isSet()) {
    logger.info(`Monitoring ${name} in replica ${REPLICA}.`);
    await stopped.wait(10);
  }
  logger.info(`Stopped monitoring ${name} in replica ${REPLICA}.`);
});
