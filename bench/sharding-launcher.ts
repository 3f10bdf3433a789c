/**
 * `kopf-gen run` for the sharding benchmarks' replicas when the benchmark shortens the ring's
 * Lease duration (`--lease-duration`): the command line has no flag for the ring's timings (a
 * startup handler could set them, but the fixture stays the same for every run), so this entry
 * point runs the same `run` command with settings made beforehand. The durations
 * come from `BENCH_SHARDING_LEASE_DURATION` (seconds): the renew deadline at two thirds of it and
 * the retry period at a seventh, at least 1 s, keeping `retryPeriod < renewDeadline <
 * leaseDuration`. Compiled next to the fixture and run with plain Node on `dist/`.
 */
import { OperatorSettings, runCommand } from 'kopf-gen/runtime';

const lease = Number(process.env['BENCH_SHARDING_LEASE_DURATION']);
if (!Number.isInteger(lease) || lease < 3) throw new Error('BENCH_SHARDING_LEASE_DURATION must be a whole number of seconds, at least 3');
const settings = new OperatorSettings();
settings.sharding.leaseDuration = lease;
settings.sharding.renewDeadline = Math.max(2, Math.floor((lease * 2) / 3));
settings.sharding.retryPeriod = Math.max(1, Math.floor(lease / 7));
process.exitCode = await runCommand(process.argv.slice(2), { operator: { settings } });
