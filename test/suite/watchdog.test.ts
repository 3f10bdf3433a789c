/**
 * The test watchdog (test/support/watchdog.ts) turns a loop that never yields into a failure within
 * a bounded time, with the test that was running and where it was stuck. Each case runs a fixture
 * file (test/suite/fixtures/, never part of the suite itself) in a child vitest run with a 2-second
 * limit, and checks how that run ended and how long it took.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as processes from '../support/processes.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const VITEST = path.join(ROOT, 'node_modules/vitest/vitest.mjs');
const CONFIG = 'test/suite/fixtures/vitest.config.ts';
/** The child run must end well within this, whatever the load: its worker is stopped after 2 s. */
const BOUND_MS = 90_000;

async function runFixture(fixture: string): Promise<processes.Finished & { readonly ms: number }> {
  const started = Date.now();
  const env = processes.childEnv({ KOPF_GEN_TEST_WATCHDOG_S: '2', KOPF_GEN_TEST_BLOCKS: undefined });
  const finished = await processes.run(process.execPath, [VITEST, 'run', '--config', CONFIG, `test/suite/fixtures/${fixture}`], {
    cwd: ROOT,
    env,
    timeoutMs: BOUND_MS,
  });
  return { ...finished, ms: Date.now() - started };
}

describe('the test watchdog', () => {
  it(
    'fails a test whose async loop only awaits settled promises, naming the test and the loop, and the run goes on',
    async () => {
      const run = await runFixture('awaits.fixture.ts');
      expect(run.output).not.toContain('[killed after');
      expect(run.code).toBe(1);
      expect(run.output).toMatch(/× retries without waiting/);
      expect(run.output).toContain('[watchdog] test/suite/fixtures/awaits.fixture.ts > retries without waiting: the event loop has not answered for');
      expect(run.output).toMatch(/stuck at:\n\s+at retryWithoutWaiting \(.*awaits\.fixture\.ts:\d+:\d+\)/);
      expect(run.output).toMatch(/Test Files {2}1 failed/);
    },
    BOUND_MS + 10_000,
  );

  it(
    'ends the run of a test whose synchronous loop never yields, naming the test and the loop',
    async () => {
      const run = await runFixture('spins.fixture.ts');
      expect(run.output).not.toContain('[killed after');
      expect(run.code).not.toBe(0);
      expect(run.output).toContain('[watchdog] test/suite/fixtures/spins.fixture.ts > spins in a synchronous loop: the event loop has not answered for');
      expect(run.output).toMatch(/stuck at:\n\s+at spin \(.*spins\.fixture\.ts:\d+:\d+\)/);
    },
    BOUND_MS + 10_000,
  );

  it(
    'lets a test that blocks its event loop for less than the limit pass',
    async () => {
      const run = await runFixture('passes.fixture.ts');
      expect(run.output).not.toContain('[watchdog]');
      expect(run.code).toBe(0);
    },
    BOUND_MS + 10_000,
  );
});
