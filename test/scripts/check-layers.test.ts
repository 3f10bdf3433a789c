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
    expect(check(dir)).toEqual([
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
    expect(check(dir).sort()).toEqual([
      'runtime/cogs/configs/progress.ts: imports runtime/cogs/configs/diffbase.js (progress and diffbase storages are independent)',
      'runtime/cogs/structs/a.ts: imports runtime/core/reactor/processing.js (a lower runtime layer never imports a higher one)',
      'runtime/core/actions/b.ts: imports runtime/core/intents/handlers.js (a lower runtime layer never imports a higher one)',
      'runtime/kits/runner.ts: imports runtime/kits/webhooks.js (kits are independent of each other)',
    ]);
  });
});
