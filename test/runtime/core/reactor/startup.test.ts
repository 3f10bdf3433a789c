/**
 * What an operator loads to start (R-PERF-201): a run without metrics never imports the metrics'
 * module (`core/reactor/reporting`) nor prom-client; a run with metrics imports both before
 * anything starts, and a run whose metrics cannot be loaded does not start at all.
 *
 * The imports are counted by module mocks that pass the real modules through (and, when told to,
 * fail like a missing package): the count moves only when some module of the operator imports them.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DevCluster } from '../../../../devcluster/testing.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import { MetricsUnavailableError } from '../../../../runtime/core/reactor/errors.js';
import * as running from '../../../../runtime/core/reactor/running.js';
import { on } from '../../../../runtime/on.js';
import * as fx from '../../../support/operators.js';

const imported = vi.hoisted(() => ({ reporting: 0, promClient: 0, promClientMissing: false }));

vi.mock('../../../../runtime/core/reactor/reporting.js', async (original) => {
  imported.reporting += 1;
  return await original();
});

vi.mock('prom-client', async (original) => {
  imported.promClient += 1;
  if (imported.promClientMissing) throw new Error("Cannot find package 'prom-client'");
  return await original();
});

describe('R-PERF-201: what an operator loads to start', () => {
  let cluster: DevCluster;
  const logs = new fx.LogCapture();
  beforeEach(async () => {
    cluster = await fx.startCluster();
    logs.install();
  });
  afterEach(async () => {
    logs.uninstall();
    await cluster.stop();
  });

  function handled(): OperatorRegistry {
    const registry = new OperatorRegistry();
    on.create('kopfexamples', { registry }, function create_fn() {
      return { done: true };
    });
    return registry;
  }

  it('R-PERF-201: an operator without metrics handles an object without importing the metrics module or prom-client', async () => {
    const op = await fx.startOperator({ cluster, registry: handled() });
    try {
      await cluster.store.create(fx.kopfExample());
      await fx.atRest(logs, 'kopf-example-1');
      expect(op.context.instruments).toBeUndefined();
      expect(imported).toMatchObject({ reporting: 0, promClient: 0 });
    } finally {
      await op.stop();
    }
  });

  it('R-PERF-201: metrics asked for but not loadable stop the operator before anything starts, with MetricsUnavailableError', async () => {
    imported.promClientMissing = true;
    try {
      const spawning = running.spawnTasks({ registry: handled(), standalone: true, clusterwide: true, metricsEndpoint: 'http://127.0.0.1:0/metrics' });
      await expect(spawning).rejects.toBeInstanceOf(MetricsUnavailableError);
      await expect(spawning).rejects.toMatchObject({
        code: 'MetricsUnavailableError',
        message: expect.stringMatching(/^Metrics are asked for \(metricsEndpoint, --metrics\), but they cannot be loaded: /),
        cause: expect.any(Error),
      });
    } finally {
      imported.promClientMissing = false;
    }
    expect(imported.promClient).toBeGreaterThan(0);
    expect(fx.watchRequests(cluster)).toEqual([]);
  });

  it('R-PERF-201: an operator with metrics imports them before it starts and serves them', async () => {
    vi.resetModules(); // the failed import of the test before is not kept
    let served = '';
    const op = await fx.startOperator({
      cluster,
      registry: handled(),
      metricsEndpoint: 'http://127.0.0.1:0/metrics',
      onServing: (endpoints) => {
        served = endpoints.find((endpoint) => endpoint.name === 'metrics')?.url ?? '';
      },
    });
    try {
      expect(imported.reporting).toBeGreaterThan(0);
      expect(op.context.instruments).toBeDefined();
      await fx.eventually(() => served !== '', 'the metrics endpoint to be served');
      const response = await fetch(served);
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('kopf_watch_lists_total');
    } finally {
      await op.stop();
    }
  });
});
