/**
 * The operator side of the webhook probe (`webhooks.ts`), in a process of its own so that its file
 * descriptors, sockets and log lines are its own: the built-in `WebhookServer` (HTTPS, generated
 * certificate, on loopback) serving the real admission engine with one validating handler
 * (`check`) and metrics, and the health and metrics endpoints as an operator serves them
 * (`/healthz`, `/metrics` on one plain HTTP port). Logs at the default level to stderr, as an
 * operator does. Tells the parent its ports over IPC, then serves until the parent says `stop`;
 * meanwhile it measures how long its event loop is held up (`loop-reset`, `loop-read`).
 *
 * The server's limits come from the environment (`PROBE_HANDSHAKE_TIMEOUT`, seconds), so that the
 * probe can run against code that has none (then they are ignored).
 */
import * as perf_hooks from 'node:perf_hooks';

import * as clocks from '../../runtime/cogs/aio/clocks.js';
import * as settingsModule from '../../runtime/cogs/configs/settings.js';
import * as references from '../../runtime/cogs/structs/references.js';
import * as logging from '../../runtime/core/actions/logging.js';
import * as admission from '../../runtime/core/engines/admission.js';
import * as endpoints from '../../runtime/core/engines/endpoints.js';
import * as memos from '../../runtime/core/intents/memos.js';
import { OperatorRegistry } from '../../runtime/core/intents/registry.js';
import { OperatorMetrics } from '../../runtime/core/reactor/reporting.js';
import { WebhookServer } from '../../runtime/kits/webhooks/index.js';
import { on } from '../../runtime/on.js';

const KEX = references.makeResource({ group: 'kopf.dev', version: 'v1', plural: 'kopfexamples', kind: 'KopfExample', namespaced: true });

async function main(): Promise<void> {
  logging.configure({});
  const stop = new AbortController();
  // How long the event loop was held up: the operator's own view of its latency.
  const delays = perf_hooks.monitorEventLoopDelay({ resolution: 10 });
  delays.enable();
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'stop') stop.abort();
    if (message.type === 'loop-reset') {
      delays.reset();
      process.send?.({ type: 'loop-reset' });
    }
    if (message.type === 'loop-read') process.send?.({ type: 'loop', maxMs: delays.max / 1e6, p99Ms: delays.percentile(99) / 1e6 });
  });

  const registry = new OperatorRegistry();
  on.validate('kopfexamples', { registry }, function check() {});
  const metrics = new OperatorMetrics();
  const fn = admission.webhookFn({
    registry,
    settings: new settingsModule.OperatorSettings({ warn: () => undefined }),
    clock: clocks.realClock,
    resources: { webhooks: [KEX] },
    memos: { recallMemo: () => new memos.Memo() },
    signal: stop.signal,
    instruments: metrics,
  });

  const handshake = Number(process.env['PROBE_HANDSHAKE_TIMEOUT'] ?? '');
  const server = new WebhookServer({ addr: '127.0.0.1', ...(handshake > 0 ? { handshakeTimeout: handshake } : {}) });
  const iterator = server.serve(fn, { signal: stop.signal })[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done) throw new Error('the webhook server yielded nothing');
  const webhookUrl = first.value.url!;

  let healthUrl = '';
  const health = endpoints.serveEndpoints({
    endpoints: [
      { name: 'liveness', url: 'http://127.0.0.1:0/healthz', handle: () => ({ status: 200, contentType: 'application/json', body: '{}' }) },
      {
        name: 'metrics',
        url: 'http://127.0.0.1:0/metrics',
        handle: async () => {
          const scrape = await metrics.scrape();
          return { status: 200, contentType: scrape.contentType, body: scrape.body };
        },
      },
    ],
    logger: logging.getLogger('kopf.probe'),
    signal: stop.signal,
    onServing: (served) => {
      healthUrl = new URL(served[0]!.url).origin;
      process.send?.({ type: 'ready', webhookUrl, caBundle: first.value.caBundle, healthUrl });
    },
  });
  await Promise.all([health, iterator.next()]);
  await iterator.return?.();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`probe server failed: ${String(error)}\n`);
  process.exit(1);
});
