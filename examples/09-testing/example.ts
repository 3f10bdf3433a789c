/**
 * Testing an operator (Kopf's example 09-testing, in TypeScript): a small operator, and beside it
 * its test, example.test.ts, which runs it the way a project tests its own operator — in the test
 * process with `KopfRunner`, against the embedded devcluster, on a virtual clock.
 *
 * The operator has three things worth testing, each checked differently:
 *
 * - a create handler that logs a line — checked in the runner's captured output;
 * - per-object log lines posted as Kubernetes events (turned on by a startup handler) — checked in
 *   the cluster's events;
 * - a timer that records when it last saw the object, every 10 minutes — checked in the object's
 *   status while the test moves the operator's clock, so ten minutes pass in milliseconds.
 */
import { on } from 'kopf-gen/runtime';

import { KopfExamples } from '../kopfexamples.js';

// Also post the objects' log lines (INFO and above) as events, for `kubectl describe` to show.
on.startup(function configure_posting({ settings }) {
  settings.posting.loggers = true;
});

on.create(KopfExamples, function create_fn({ logger }) {
  logger.info('Something was logged here.');
});

// `started` is the operator's time of this invocation: virtual time in a test with a VirtualClock.
on.timer(KopfExamples, { interval: 600 }, function heartbeat({ patch, started }) {
  patch.status['lastSeen'] = started.toISOString();
});
