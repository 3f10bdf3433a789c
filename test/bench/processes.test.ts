import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as processes from '../../bench/processes.js';
import { eventually } from '../support/waiting.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-processes-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('an operator process measured from outside', () => {
  it('counts the CPU time and peak memory of the whole tree, and stops it', async () => {
    // sh -c with two commands keeps the shell as the parent of node. The child spins until it has
    // used 0.5 s of CPU (not of wall time: the machine may be busy), then says so and idles.
    const busy =
      'const a = []; while (process.cpuUsage().user + process.cpuUsage().system < 500000) { if (a.length < 1e6) a.push({ x: a.length }); } console.log(\\"spun\\"); setInterval(() => {}, 1000);';
    const op = new processes.OperatorProcess(`echo started; node -e "${busy}"; true`, {}, path.join(dir, 'busy.log'));
    await eventually(() => op.logTail().includes('spun'), 'the child to have spun', 30_000);
    const usage = op.usage();
    expect(usage.processes).toBe(2);
    expect(usage.cpuSeconds).toBeGreaterThanOrEqual(0.4); // /proc counts in 10 ms ticks
    expect(usage.peakRssBytes).toBeGreaterThanOrEqual(usage.rssBytes);
    expect(usage.peakRssBytes).toBeGreaterThan(50 * 1048576);
    await op.stop(2000);
    expect(op.exited).toBe(true);
    expect(op.logTail()).toContain('started');
  });

  it('fails with the exit code and the output once the operator has exited', async () => {
    const op = new processes.OperatorProcess('echo "cannot log in" >&2; exit 3', {}, path.join(dir, 'exit.log'));
    await eventually(() => op.exited, 'the command to exit');
    expect(() => op.assertRunning()).toThrow(processes.OperatorExitedError);
    try {
      op.assertRunning();
    } catch (err) {
      expect((err as processes.OperatorExitedError).exitCode).toBe(3);
      expect((err as processes.OperatorExitedError).logTail).toContain('cannot log in');
    }
    await op.stop();
  });

  it('passes the environment to the command', async () => {
    const op = new processes.OperatorProcess('echo "config=$KUBECONFIG"', { KUBECONFIG: '/some/where' }, path.join(dir, 'env.log'));
    await eventually(() => op.logTail().includes('config='), 'the command output');
    expect(op.logTail()).toContain('config=/some/where');
    await op.stop();
  });
});
