import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script without type declarations.
import { check } from '../../scripts/check-layers.mjs';

function tree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'layers-'));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

describe('the dependency/layer check', () => {
  it('passes on the repository itself', () => {
    expect(check(path.resolve(import.meta.dirname, '../..'))).toEqual([]);
  });

  it('reports the devcluster importing the runtime', () => {
    const dir = tree({ 'devcluster/a.ts': "import * as x from '../runtime/index.js';\n", 'runtime/index.ts': '' });
    expect(check(dir)).toEqual(['devcluster/a.ts: imports runtime/index.js (the devcluster never imports the runtime)']);
  });

  it('reports the runtime importing the devcluster, the testing kit or the generator, also through package self-references', () => {
    const dir = tree({
      'runtime/cogs/client/a.ts':
        "import * as d from '../../../devcluster/testing.js';\nimport { DevCluster } from 'kopf-gen/testing';\nimport * as g from '../../../generator/index.js';\n",
    });
    expect(check(dir, { orders: {} })).toEqual([
      'runtime/cogs/client/a.ts: imports devcluster/testing.js (the runtime never imports the devcluster)',
      'runtime/cogs/client/a.ts: imports testing/index.ts (the runtime and the devcluster never import the testing kit that combines them)',
      'runtime/cogs/client/a.ts: imports generator/index.js (kopf-gen loads the generator by package name, never by path)',
      'runtime/cogs/client/a.ts: imports generator/index.js (the runtime never imports the generator)',
    ]);
  });

  it('lets only the testing kit combine the runtime and the devcluster', () => {
    const dir = tree({
      'testing/index.ts': "export * from '../devcluster/testing.js';\nexport { KopfRunner } from '../runtime/kits/runner.js';\n",
      'devcluster/a.ts': "import { KopfRunner } from '../testing/index.js';\n",
      'runtime/b.ts': "import { DevCluster } from '../devcluster/testing.js';\n",
    });
    expect(check(dir).sort()).toEqual([
      'devcluster/a.ts: imports testing/index.js (the runtime and the devcluster never import the testing kit that combines them)',
      'runtime/b.ts: imports devcluster/testing.js (the runtime never imports the devcluster)',
    ]);
  });

  it('keeps the two packages apart: the generator imports nothing of kopf-gen, the command line loads the generator by name', () => {
    const dir = tree({
      'generator/a.ts': "import * as r from '../runtime/index.js';\nimport * as c from '../cli/main.js';\n",
      'cli/b.ts': "import * as g from '../generator/index.js';\nimport * as ok from '../runtime/index.js';\nconst lazy = import('@kopf-gen/generator/cli');\n",
      'devcluster/c.ts': "import * as m from '../cli/main.js';\n",
    });
    expect(check(dir).sort()).toEqual([
      'cli/b.ts: imports generator/index.js (kopf-gen loads the generator by package name, never by path)',
      'devcluster/c.ts: imports cli/main.js (the runtime and the devcluster never import the command line)',
      "generator/a.ts: imports cli/main.js (the generator package never imports kopf-gen's folders)",
      "generator/a.ts: imports runtime/index.js (the generator package never imports kopf-gen's folders)",
    ]);
  });

  it('reports a lower runtime layer importing a higher one, and independence breaches', () => {
    const dir = tree({
      'runtime/cogs/structs/a.ts': "import * as r from '../../core/reactor/processing.js';\n",
      'runtime/core/actions/b.ts': "export * from '../intents/handlers.js';\n",
      'runtime/core/reactor/c.ts': "import * as ok from '../actions/execution.js';\n",
      'runtime/cogs/configs/progress.ts': "import * as d from './diffbase.js';\n",
      'runtime/kits/runner.ts': "import * as w from './webhooks.js';\n",
    });
    expect(check(dir, { orders: {} }).sort()).toEqual([
      'runtime/cogs/configs/progress.ts: imports runtime/cogs/configs/diffbase.js (progress and diffbase storages are independent)',
      'runtime/cogs/structs/a.ts: imports runtime/core/reactor/processing.js (a lower runtime layer never imports a higher one)',
      'runtime/core/actions/b.ts: imports runtime/core/intents/handlers.js (a lower runtime layer never imports a higher one)',
      'runtime/kits/runner.ts: imports runtime/kits/webhooks.js (kits are independent of each other)',
    ]);
  });

  it('reports every import cycle once, with one concrete way around it, type-only imports included', () => {
    const dir = tree({
      'generator/a.ts': "import * as b from './b.js';\n",
      'generator/b.ts': "import type * as a from './a.js';\n",
      'devcluster/x.ts': "import { y } from './y.js';\n",
      'devcluster/y.ts': "export { z } from './z.js';\n",
      'devcluster/z.ts': "import type { X } from './x.js';\nimport * as y from './y.js';\n",
      'cli/self.ts': "import * as me from './self.js';\n",
      'cli/ok.ts': "import * as b from '../generator/b.js';\n",
    });
    expect(check(dir, { orders: {} })).toEqual([
      'cli/ok.ts: imports generator/b.js (kopf-gen loads the generator by package name, never by path)',
      'import cycle: cli/self.ts → cli/self.ts',
      'import cycle: devcluster/x.ts → devcluster/y.ts → devcluster/z.ts → devcluster/x.ts',
      'import cycle: generator/a.ts → generator/b.ts → generator/a.ts',
    ]);
  });

  it('names the other modules of a tangle that the reported cycle does not pass through', () => {
    const dir = tree({
      'runtime/a.ts': "import * as b from './b.js';\n",
      'runtime/b.ts': "import * as a from './a.js';\nimport * as c from './c.js';\n",
      'runtime/c.ts': "import * as b from './b.js';\n",
    });
    expect(check(dir, { orders: {} })).toEqual(['import cycle: runtime/a.ts → runtime/b.ts → runtime/a.ts (tangled with it: runtime/c.ts)']);
  });

  it('orders the modules inside a folder of a runtime layer, and wants every module of such a folder placed', () => {
    const orders = { 'runtime/core/actions': ['errors', 'execution'] };
    const dir = tree({
      'runtime/core/actions/errors.ts': "import * as execution from './execution.js';\n",
      'runtime/core/actions/execution.ts': "import * as errors from './errors.js';\n",
      'runtime/core/actions/extra.ts': '',
    });
    expect(check(dir, { orders })).toEqual([
      'runtime/core/actions/errors.ts: imports runtime/core/actions/execution.js (errors comes before execution in the order of runtime/core/actions)',
      "runtime/core/actions/extra.ts: is not placed in the order of runtime/core/actions (every module of a layer's folder is listed)",
      'import cycle: runtime/core/actions/errors.ts → runtime/core/actions/execution.ts → runtime/core/actions/errors.ts',
    ]);
  });

  it('ignores imports shown in comments', () => {
    const dir = tree({
      'runtime/cogs/aio/clocks.ts':
        "/**\n * @example\n * import { main } from 'kopf-gen/runtime';\n * import './handlers.js';\n */\n// import * as r from '../../core/reactor/running.js';\nexport const x = 1;\n",
    });
    expect(check(dir, { orders: {} })).toEqual([]);
  });
});
