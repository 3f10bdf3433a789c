/**
 * Watch health on a virtual clock: what a stream's observer reports, and the problems found
 * against the budgets — listings not complete, streams down, streams silent across reconnections,
 * paused streams never counted — plus the validation of `settings.health`.
 */
import { describe, expect, it } from 'vitest';
import * as clocks from '../../../../runtime/cogs/aio/clocks.js';
import * as settingsModule from '../../../../runtime/cogs/configs/settings.js';
import * as health from '../../../../runtime/core/engines/health.js';
import * as configErrors from '../../../../runtime/cogs/configs/errors.js';

const BUDGETS = { listingBudget: 60, downtimeBudget: 30, silenceBudget: 100 };

function setup() {
  const clock = new clocks.VirtualClock({ start: 0 });
  const streams = new health.StreamHealth(clock);
  const tracker = streams.track('pods@/default', "pods.v1 in 'default'");
  const problems = (): string[] => health.assessStreams(streams.snapshots(), BUDGETS, clock.now()).map((p) => `${p.name}: ${p.reason}`);
  return { clock, streams, tracker, problems };
}

describe('watch health of streams', () => {
  it('a stream whose initial listing does not complete within the listing budget is a problem', async () => {
    const { clock, tracker, problems, streams } = setup();
    await clock.advance(60_000);
    expect(problems()).toEqual([]);
    await clock.advance(1_000);
    expect(problems()).toEqual(["pods.v1 in 'default': the listing is not complete after 61 s (budget 60 s)"]);
    tracker.listed();
    tracker.opened();
    expect(problems()).toEqual([]);
    expect(streams.listedKeys()).toEqual(new Set(['pods@/default']));
  });

  it('a stream without a connection beyond the downtime budget is a problem; a new connection ends it', async () => {
    const { clock, tracker, problems } = setup();
    tracker.listed();
    tracker.opened();
    await clock.advance(10_000);
    tracker.line();
    tracker.closed();
    await clock.advance(30_000);
    expect(problems()).toEqual([]);
    await clock.advance(1_000);
    expect(problems()).toEqual(["pods.v1 in 'default': no watch connection for 31 s (budget 30 s)"]);
    tracker.opened();
    expect(problems()).toEqual([]);
  });

  it('silence counts across reconnections; only a line, a listing or a resume ends it', async () => {
    const { clock, tracker, problems } = setup();
    tracker.listed();
    for (let i = 0; i < 5; i += 1) {
      tracker.opened();
      await clock.advance(20_000);
      tracker.closed(); // the inactivity timeout reconnects a silent stream; that is not data
    }
    tracker.opened();
    await clock.advance(1_000);
    expect(problems()).toEqual(["pods.v1 in 'default': silent for 101 s: no event or bookmark (budget 100 s)"]);
    tracker.line(); // a bookmark
    expect(problems()).toEqual([]);
  });

  it('a paused stream is never a problem, and its clocks restart when it resumes', async () => {
    const { clock, tracker, problems } = setup();
    tracker.listed();
    tracker.opened();
    tracker.paused();
    await clock.advance(1_000_000);
    expect(problems()).toEqual([]);
    tracker.resumed();
    await clock.advance(59_000);
    expect(problems()).toEqual([]); // re-listing after the resume: the listing budget applies
    tracker.listed();
    tracker.opened();
    await clock.advance(100_000);
    expect(problems()).toEqual([]);
    await clock.advance(1_000);
    expect(problems()).toEqual(["pods.v1 in 'default': silent for 101 s: no event or bookmark (budget 100 s)"]);
  });

  it('null budgets are not checked; stopped streams are forgotten', async () => {
    const { clock, tracker, streams } = setup();
    await clock.advance(10_000_000);
    expect(health.assessStreams(streams.snapshots(), { listingBudget: null, downtimeBudget: null, silenceBudget: null }, clock.now())).toEqual([]);
    tracker.stop();
    expect(streams.snapshots()).toEqual([]);
  });

  it('malformed health settings are rejected naming the setting', () => {
    const settings = new settingsModule.OperatorSettings({ warn: () => undefined });
    expect(() => health.checkBudgets(settings.health)).not.toThrow();
    settings.health.silenceBudget = -1;
    expect(() => health.checkBudgets(settings.health)).toThrow('settings.health.silenceBudget must be a number of seconds (0 or more) or null, got -1.');
    settings.health.silenceBudget = null;
    settings.health.probeTimeout = 0;
    expect(() => health.checkBudgets(settings.health)).toThrow(configErrors.SettingsError);
    settings.health.probeTimeout = 1;
    settings.health.readinessPath = 'readyz';
    expect(() => health.checkBudgets(settings.health)).toThrow('settings.health.readinessPath must be a path starting with / (or null), got "readyz".');
  });
});
