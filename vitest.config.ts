import os from 'node:os';
import { defineConfig } from 'vitest/config';

// Tests run in forked workers: several suites start their own devcluster on a loopback port,
// and kubectl suites spawn child processes, so isolation per file matters more than raw speed.
// `kopf-gen-source` makes `kopf-gen/runtime`, `kopf-gen/testing` and `@kopf-gen/generator`
// resolve to the TypeScript sources; the packaging tests exercise the compiled distribution.
const conditions = ['kopf-gen-source', 'import', 'module', 'node', 'default'];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['kopf-gen-source'] } },
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // vitest's default is one fork less than the cores: a single fork on a 2-core machine, where most
    // files wait on loopback HTTP and child processes rather than compute. Two forks at least.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    // The watchdog (test/support/watchdog.ts) fails a test whose loop never yields; it terminates the
    // loop's JavaScript, which Node allows inside a callback only without its async-hooks checks.
    poolOptions: { forks: { execArgv: ['--no-force-async-hooks-checks'] } },
    setupFiles: ['test/support/watchdog.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
