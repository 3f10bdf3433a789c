import { describe, expect, it } from 'vitest';
import * as references from '../../../../runtime/cogs/structs/references.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import * as observation from '../../../../runtime/core/reactor/observation.js';
import * as orchestration from '../../../../runtime/core/reactor/orchestration.js';
import { on } from '../../../../runtime/on.js';
import { background, eventually } from './observing.js';
import { flushed } from '../../../support/waiting.js';

const PODS = references.makeResource({ group: '', version: 'v1', plural: 'pods', kind: 'Pod' });
const NODES = references.makeResource({ group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false });
const WIDGETS = references.makeResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget' });

/** Insights over a registry watching pods, nodes and widgets. */
function picture(): observation.Insights {
  const registry = new OperatorRegistry();
  on.event(['v1', 'pods'], { registry }, function pods() {});
  on.event(['v1', 'nodes'], { registry }, function nodes() {});
  on.event(['example.com', 'widgets'], { registry }, function widgets() {});
  return new observation.Insights({ registry });
}

/**
 * A fake watcher: records its life, runs until aborted, then settles once `settling` resolves (at
 * once by default: `holdStops()` makes the test decide when).
 */
class Watchers {
  readonly log: string[] = [];
  readonly live = new Set<string>();
  private settling: Promise<void> = Promise.resolve();
  failWith: { readonly name: string; readonly error: unknown } | undefined;

  /** Aborted watchers settle only when the returned function is called. */
  holdStops(): () => void {
    let release!: () => void;
    this.settling = new Promise<void>((resolve) => {
      release = resolve;
    });
    return release;
  }

  readonly spawn: orchestration.Spawn = async (resource, namespace, signal) => {
    const name = `${resource.plural}@${namespace ?? '-'}`;
    this.log.push(`+${name}`);
    this.live.add(name);
    try {
      await new Promise<void>((resolve, reject) => {
        // A failing watcher fails on the next turn, once its siblings have started.
        if (this.failWith?.name === name) setImmediate(() => reject(this.failWith!.error));
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
      await this.settling;
    } finally {
      this.live.delete(name);
      this.log.push(`-${name}`);
    }
  };

  sortedLive(): string[] {
    return [...this.live].sort();
  }
}

function makeReady(p: observation.Insights): void {
  p.readyResources.turnOn();
  p.readyNamespaces.turnOn();
}

describe('orchestration', () => {
  it('R-SCOPE-6 namespaced resources go to every served namespace, cluster-scoped ones once with null', () => {
    const dims = orchestration.dimensionsOf([PODS, NODES], new Set(['a', 'b']));
    expect(dims.map((d) => `${d.resource.plural}@${d.namespace}`)).toEqual(['pods@a', 'pods@b', 'nodes@null']);
    expect(orchestration.dimensionsOf([PODS, NODES], new Set([null])).map((d) => `${d.resource.plural}@${d.namespace}`)).toEqual(['pods@null', 'nodes@null']);
    expect(orchestration.dimensionsOf([PODS, NODES], new Set()).map((d) => `${d.resource.plural}@${d.namespace}`)).toEqual(['nodes@null']);
  });

  it('R-SCOPE-3 R-RES-8 keeps one watcher per resource and namespace as the insights change', async () => {
    const p = picture();
    const watchers = new Watchers();
    const run = background((signal) => orchestration.orchestrate({ insights: p, spawn: watchers.spawn, signal }));
    p.reviseResources([PODS, NODES], null);
    p.setNamespaces(['a']);
    await flushed(); // the orchestrator now waits for readiness only
    expect(watchers.log).toEqual([]); // not ready yet

    makeReady(p);
    await eventually(() => watchers.live.size === 2, 'first watchers');
    expect(watchers.sortedLive()).toEqual(['nodes@-', 'pods@a']);

    p.addNamespace('b');
    await eventually(() => watchers.live.has('pods@b'), 'pods in b');
    p.reviseResources([PODS, NODES, WIDGETS], null);
    await eventually(() => watchers.live.size === 5, 'widgets');
    expect(watchers.sortedLive()).toEqual(['nodes@-', 'pods@a', 'pods@b', 'widgets@a', 'widgets@b']);

    p.removeNamespace('a');
    await eventually(() => watchers.live.size === 3, 'namespace a gone');
    expect(watchers.sortedLive()).toEqual(['nodes@-', 'pods@b', 'widgets@b']);
    p.reviseResources([PODS, NODES], ['example.com']);
    await eventually(() => watchers.live.size === 2, 'widgets gone');
    expect(watchers.sortedLive()).toEqual(['nodes@-', 'pods@b']);

    expect(watchers.log.filter((line) => line.startsWith('+')).sort()).toEqual(['+nodes@-', '+pods@a', '+pods@b', '+widgets@a', '+widgets@b']);
    await run.stop();
    expect(watchers.live.size).toBe(0);
  });

  it('resolves on abort only after every watcher has settled', async () => {
    const p = picture();
    makeReady(p);
    p.reviseResources([PODS], null);
    p.setNamespaces(['a', 'b']);
    const watchers = new Watchers();
    const release = watchers.holdStops();
    const run = background((signal) => orchestration.orchestrate({ insights: p, spawn: watchers.spawn, signal }));
    await eventually(() => watchers.live.size === 2, 'watchers');
    let stopped = false;
    const stopping = run.stop().then(() => {
      stopped = true;
    });
    await flushed();
    expect(stopped).toBe(false); // both watchers are aborted, neither has settled
    release();
    await stopping;
    expect(watchers.live.size).toBe(0);
    expect(watchers.log.slice(-2).sort()).toEqual(['-pods@a', '-pods@b']);
  });

  it('does not start a returning dimension until its previous watcher has settled', async () => {
    const p = picture();
    makeReady(p);
    p.reviseResources([PODS], null);
    p.setNamespaces(['a']);
    const watchers = new Watchers();
    const release = watchers.holdStops();
    const run = background((signal) => orchestration.orchestrate({ insights: p, spawn: watchers.spawn, signal }));
    await eventually(() => watchers.live.has('pods@a'), 'first watcher');
    p.removeNamespace('a');
    await flushed();
    p.addNamespace('a');
    await flushed();
    expect(watchers.log).toEqual(['+pods@a']); // aborted, not settled: the returning one waits
    release();
    await eventually(() => watchers.log.length === 3, 'restart');
    expect(watchers.log).toEqual(['+pods@a', '-pods@a', '+pods@a']);
    await run.stop();
  });

  it('R-WATCH-3 a failing watcher stops all others and orchestrate rejects with its error', async () => {
    const p = picture();
    makeReady(p);
    p.reviseResources([PODS, NODES], null);
    p.setNamespaces(['a']);
    const watchers = new Watchers();
    const fatal = new Error('Error in the watch-stream');
    watchers.failWith = { name: 'pods@a', error: fatal };
    const run = background((signal) => orchestration.orchestrate({ insights: p, spawn: watchers.spawn, signal }));
    await expect(run.done).rejects.toBe(fatal);
    expect(watchers.live.size).toBe(0);
    expect(watchers.log).toContain('-nodes@-');
  });

  it('treats abort errors of aborted watchers as a normal stop', async () => {
    const p = picture();
    makeReady(p);
    p.reviseResources([PODS], null);
    p.setNamespaces(['a']);
    const spawned: string[] = [];
    const spawn: orchestration.Spawn = (resource, namespace, signal) =>
      new Promise((_, reject) => {
        spawned.push(`${resource.plural}@${namespace}`);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    const run = background((signal) => orchestration.orchestrate({ insights: p, spawn, signal }));
    await eventually(() => spawned.length === 1, 'watcher');
    p.removeNamespace('a');
    p.addNamespace('b');
    await eventually(() => spawned.length === 2, 'second watcher');
    await expect(run.stop()).resolves.toBeUndefined();
    expect(spawned).toEqual(['pods@a', 'pods@b']);
  });
});
