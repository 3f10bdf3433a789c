#!/usr/bin/env node
// The dependency contracts that keep the layers of the codebase readable from the bottom up and
// its packages separable (a user's operator never loads the generator or the emulator), checked on
// every `npm test`:
//   - devcluster/ never imports runtime/; runtime/ never imports devcluster/ or generator/;
//   - the packages stay apart: generator/ (the @kopf-gen/generator package) imports nothing of
//     runtime/, devcluster/ or cli/, and nothing of kopf-gen imports generator/ by path (the
//     command line loads it by package name, only for init/generate/add); runtime/ and
//     devcluster/ never import cli/ (the command line sits on top of both), nor testing/ (the kit
//     that combines them for users' tests);
//   - runtime layers: index/on → kits → core → cogs (lower layers never import higher ones);
//     inside core: reactor → engines → intents → actions; inside cogs: client → configs → structs → aio;
//   - inside one folder of a runtime layer, modules are ordered too (ORDERS below, lowest first): a
//     module imports only the modules listed before it in its folder, and every module of such a
//     folder must be listed, so that a new module's place is a decision rather than an accident;
//   - independence: cogs/configs/progress ↔ cogs/configs/diffbase, and kits/* ↔ each other;
//   - no import cycles anywhere in devcluster/, runtime/, generator/, cli/ and testing/. Every
//     import counts, `import type` included: a cycle of type-only imports does no harm at run time,
//     but it still means two modules cannot be understood one without the other, and it becomes a
//     run-time cycle as soon as one of the imports needs a value.
// Prints every violation as `file: imports target (rule)` or `import cycle: a → b → a` and exits 1
// if there is any.
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..'));

const RANKS = [
  // [prefix, rank]: a file may import only files of a rank <= its own (within the runtime).
  ['runtime/cogs/aio/', 0],
  ['runtime/cogs/structs/', 1],
  ['runtime/cogs/configs/', 2],
  ['runtime/cogs/client/', 3],
  ['runtime/core/actions/', 10],
  ['runtime/core/intents/', 11],
  ['runtime/core/engines/', 12],
  ['runtime/core/reactor/', 13],
  ['runtime/kits/', 20],
  ['runtime/', 30],
];

// The order of the modules inside each folder of a runtime layer, lowest first: derived from what
// the modules need of each other (modules that need nothing of their folder first, then those that
// need only those, and so on; alphabetical within a step). A module may import only the modules
// before it in its folder. The kits are not here: they are independent of each other altogether.
const ORDERS = {
  'runtime/cogs/aio': ['clocks', 'revisions', 'toggles', 'aborts'],
  'runtime/cogs/structs': [
    'dicts',
    'exactness',
    'printables',
    'errors',
    'labelselectors',
    'loggers',
    'references',
    'resources',
    'webhooks',
    'bodies',
    'diffs',
    'instruments',
    'jsonpatches',
    'patches',
    'views',
  ],
  'runtime/cogs/configs': ['bounds', 'secrets', 'errors', 'conventions', 'timestamps', 'versions', 'diffbase', 'progress', 'settings'],
  'runtime/cogs/client': [
    'errors',
    'denials',
    'proxies',
    'credentials',
    'certificates',
    'kubeconfigs',
    'scanning',
    'authproviders',
    'execplugins',
    'transport',
    'logins',
    'clientnodeconfigs',
    'requests',
    'api',
    'connections',
    'watchconnections',
    'caches',
    'clients',
    'watchstates',
    'watching',
  ],
  'runtime/core/actions': ['application', 'errors', 'events', 'outcomes', 'invocation', 'progression', 'throttling', 'logging', 'lifecycles', 'execution'],
  'runtime/core/intents': [
    'builtins',
    'errors',
    'filters',
    'indices',
    'memos',
    'selectors',
    'stoppers',
    'callbacks',
    'causes',
    'options',
    'handlers',
    'registry',
  ],
  'runtime/core/engines': [
    'errors',
    'activities',
    'caching',
    'configurations',
    'hardening',
    'endpoints',
    'guarding',
    'health',
    'identities',
    'indexing',
    'leases',
    'rings',
    'rendezvous',
    'peers',
    'posting',
    'reviews',
    'selfsigning',
    'serving',
    'spawning',
    'conversionreviews',
    'converting',
    'admission',
    'configuring',
    'crdconversions',
    'daemons',
    'leadership',
    'membership',
    'peering',
    'probing',
    'timers',
    'ratelimits',
    'scheduling',
    'reconciling',
    'reconciliation',
    'triggering',
  ],
  'runtime/core/reactor': [
    'errors',
    'observation',
    'queueing',
    'stopping',
    'subhandling',
    'verdicts',
    'arguments',
    'inventory',
    'options',
    'reconcilers',
    'processing',
    'sharding',
    'orchestration',
    'liveness',
    'reporting',
    'roots',
    'running',
  ],
  'runtime/kits/webhooks': [
    'errors',
    'metadata',
    'runs',
    'certificates',
    'scanning',
    'serving',
    'addresses',
    'detection',
    'materials',
    'listening',
    'servers',
    'autoservers',
    'tunnels',
    'index',
  ],
  'runtime/kits/launching': [
    'errors',
    'footprint',
    'freshness',
    'typescript',
    'importing',
    'output',
    'environment',
    'launching',
    'freezing',
    'runner',
    'commands',
  ],
};

function rankOf(rel) {
  for (const [prefix, rank] of RANKS) if (rel.startsWith(prefix)) return rank;
  return undefined;
}

function* sources(dir) {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') yield* sources(full);
    } else if (/\.(ts|mts|js|mjs)$/.test(entry.name) && !/\.d\.(ts|mts)$/.test(entry.name)) yield full;
  }
}

const IMPORT = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|import\s*['"]([^'"]+)['"]/g;

// Comments may show imports (examples in doc comments): block comments that open a line, and line
// comments, are left out before looking for imports.
const COMMENTS = /^[ \t]*\/\*[\s\S]*?\*\/|^[ \t]*\/\/.*$/gm;

const posix = (p) => p.split(path.sep).join('/');

/** The source file an import specifier names: `./x.js` is written for `./x.ts`. */
function resolveFile(rootDir, target) {
  const abs = path.join(rootDir, target);
  for (const candidate of [abs, abs.replace(/\.js$/, '.ts'), abs.replace(/\.mjs$/, '.mts'), path.join(abs, 'index.ts')]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return posix(path.relative(rootDir, candidate));
  }
  return undefined;
}

const moduleOf = (rel) => ({ folder: path.posix.dirname(rel), name: path.posix.basename(rel).replace(/\.(ts|mts|js|mjs)$/, '') });

/** The import cycles of a graph: one cycle per tangle (strongly connected component), shortest first found. */
function cyclesOf(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const tangles = [];
  let counter = 0;
  const visit = (v) => {
    index.set(v, counter);
    low.set(v, counter);
    counter += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const members = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        members.push(w);
      } while (w !== v);
      if (members.length > 1 || graph.get(v).has(v)) tangles.push(members.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  tangles.sort((a, b) => a[0].localeCompare(b[0]));
  return tangles.map((members) => {
    // The shortest way from the first member back to itself, inside the tangle.
    const start = members[0];
    const inside = new Set(members);
    const previous = new Map();
    const queue = [start];
    let end;
    while (queue.length > 0 && end === undefined) {
      const v = queue.shift();
      for (const w of [...graph.get(v)].sort()) {
        if (!inside.has(w)) continue;
        if (w === start) {
          end = v;
          break;
        }
        if (!previous.has(w)) {
          previous.set(w, v);
          queue.push(w);
        }
      }
    }
    const cycle = [start];
    for (let v = end; v !== start; v = previous.get(v)) cycle.splice(1, 0, v);
    cycle.push(start);
    const others = members.filter((m) => !cycle.includes(m));
    return `import cycle: ${cycle.join(' → ')}${others.length ? ` (tangled with it: ${others.join(', ')})` : ''}`;
  });
}

export function check(rootDir, { orders = ORDERS } = {}) {
  const violations = [];
  const graph = new Map();
  for (const top of ['devcluster', 'runtime', 'testing', 'generator', 'cli']) {
    for (const file of sources(path.join(rootDir, top))) {
      const rel = posix(path.relative(rootDir, file));
      const edges = new Set();
      graph.set(rel, edges);
      const text = fs.readFileSync(file, 'utf8').replace(COMMENTS, '');
      const here = moduleOf(rel);
      if (Object.hasOwn(orders, here.folder) && !orders[here.folder].includes(here.name))
        violations.push(`${rel}: is not placed in the order of ${here.folder} (every module of a layer's folder is listed)`);
      for (const m of text.matchAll(IMPORT)) {
        const spec = m[1] ?? m[2] ?? m[3];
        let target;
        if (spec.startsWith('.')) target = posix(path.relative(rootDir, path.resolve(path.dirname(file), spec)));
        else if (spec === 'kopf-gen' || spec.startsWith('kopf-gen/')) {
          const sub = spec === 'kopf-gen' ? 'runtime' : spec.slice('kopf-gen/'.length);
          const entries = { testing: 'testing/index.ts', generator: 'cli/generator.ts', 'client-node': 'runtime/clientnode.ts' };
          target = entries[sub] ?? `${sub}/index.ts`;
        } else continue;
        const resolved = resolveFile(rootDir, target);
        if (resolved !== undefined && spec.startsWith('.')) edges.add(resolved);
        const say = (rule) => violations.push(`${rel}: imports ${target} (${rule})`);
        if (rel.startsWith('devcluster/') && target.startsWith('runtime/')) say('the devcluster never imports the runtime');
        if (rel.startsWith('generator/') && /^(runtime|devcluster|cli)\//.test(target)) say("the generator package never imports kopf-gen's folders");
        if (!rel.startsWith('generator/') && target.startsWith('generator/')) say('kopf-gen loads the generator by package name, never by path');
        if (/^(runtime|devcluster)\//.test(rel) && target.startsWith('cli/')) say('the runtime and the devcluster never import the command line');
        if (/^(runtime|devcluster)\//.test(rel) && target.startsWith('testing/'))
          say('the runtime and the devcluster never import the testing kit that combines them');
        if (rel.startsWith('runtime/') && target.startsWith('devcluster/')) say('the runtime never imports the devcluster');
        if (rel.startsWith('runtime/') && target.startsWith('generator/')) say('the runtime never imports the generator');
        if (rel.startsWith('runtime/') && target.startsWith('runtime/')) {
          const from = rankOf(rel);
          const to = rankOf(target);
          if (from !== undefined && to !== undefined && to > from) say('a lower runtime layer never imports a higher one');
          const there = moduleOf(target);
          const order = orders[here.folder];
          if (order && there.folder === here.folder && there.name !== here.name) {
            const [a, b] = [order.indexOf(here.name), order.indexOf(there.name)];
            if (a >= 0 && b >= 0 && b > a) say(`${here.name} comes before ${there.name} in the order of ${here.folder}`);
          }
          const pair = [rel, target].map((p) => p.replace(/\.(ts|js)$/, ''));
          if (pair.includes('runtime/cogs/configs/progress') && pair.includes('runtime/cogs/configs/diffbase'))
            say('progress and diffbase storages are independent');
          const kit = (p) => (p.startsWith('runtime/kits/') ? p.split('/')[2].replace(/\.(ts|js)$/, '') : undefined);
          if (kit(rel) && kit(target) && kit(rel) !== kit(target)) say('kits are independent of each other');
        }
      }
    }
  }
  for (const edges of graph.values()) for (const target of edges) if (!graph.has(target)) edges.delete(target);
  violations.push(...cyclesOf(graph));
  return violations;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const violations = check(root);
  if (violations.length) {
    console.error(`Layer check failed (${violations.length}):\n${violations.map((v) => `  ${v}`).join('\n')}`);
    process.exit(1);
  }
  console.log('Layer check passed.');
}
