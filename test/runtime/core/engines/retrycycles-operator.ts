/**
 * The operator of retrycycles.test.ts: a timer that idles for 10 minutes and has a 60-second
 * `timeout`, failing at its first attempt; and a daemon with a 30-second initial delay. Both log
 * their retry fields.
 */
import { on } from 'kopf-gen/runtime';

on.timer('kopfexamples', { idle: 600, timeout: 60, backoff: 5 }, function idler({ retry, started, runtime, logger }) {
  logger.info(`idler: retry=${retry} started=${started.toISOString()} runtime=${runtime}`);
  if (retry === 0) throw new Error('The first attempt fails.');
});

on.daemon('kopfexamples', { initialDelay: 30 }, async function delayed({ retry, started, runtime, logger }) {
  logger.info(`delayed: retry=${retry} started=${started.toISOString()} runtime=${runtime}`);
});
