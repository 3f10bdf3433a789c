import { defineConfig } from 'vitest/config';

// Tests run in forked workers: several suites start their own devcluster on a loopback port,
// and kubectl suites spawn child processes, so isolation per file matters more than raw speed.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'] },
  },
});
