/**
 * Security probes: `npm run bench -- security [--parts a,b] [part options]`. Issue 33 found a
 * deployed operator exploitable in a dozen ways; each fix has a probe in `bench/security/` that
 * re-runs the attack in small and counts what got through (forbidden lines, duplicate handler
 * runs, sockets left open, metric series created, plugin re-runs, secret values found, files
 * written outside a project, …). This module runs the parts one after another and prints their
 * figures as one result, each figure prefixed with its part, next to its target.
 */
import type { Result, Target } from './report.js';

type Probe = (args: readonly string[]) => Promise<Result>;

const PARTS: Record<string, () => Promise<Probe>> = {
  rbac: async () => (await import('./security/rbac.js')).run,
  webhooks: async () => (await import('./security/webhooks.js')).run,
  metrics: async () => (await import('./security/metrics.js')).run,
  secrets: async () => (await import('./security/secrets.js')).run,
  credentials: async () => (await import('./security/credentials.js')).run,
  generator: async () => (await import('./security/generator.js')).run,
  devcluster: async () => (await import('./security/devcluster.js')).run,
};

function chosenParts(args: readonly string[]): string[] {
  const at = args.indexOf('--parts');
  const given = at >= 0 ? args[at + 1] : args.find((a) => a.startsWith('--parts='))?.slice('--parts='.length);
  if (given === undefined) return Object.keys(PARTS);
  const parts = given.split(',').filter(Boolean);
  const unknown = parts.filter((p) => !(p in PARTS));
  if (unknown.length) throw new Error(`security: unknown part(s) ${unknown.join(', ')}; available: ${Object.keys(PARTS).join(', ')}`);
  return parts;
}

export async function run(args: readonly string[]): Promise<Result> {
  const figures: Record<string, number> = {};
  const targets: Record<string, Target> = {};
  const notes: Record<string, string> = {};
  for (const part of chosenParts(args)) {
    const result = await (await PARTS[part]!())(args);
    for (const [k, v] of Object.entries(result.figures)) figures[`${part}: ${k}`] = v;
    for (const [k, t] of Object.entries(result.targets ?? {})) targets[`${part}: ${k}`] = t;
    for (const [k, n] of Object.entries(result.notes ?? {})) notes[`${part}: ${k}`] = n;
  }
  return { name: 'security', figures, targets, notes };
}
