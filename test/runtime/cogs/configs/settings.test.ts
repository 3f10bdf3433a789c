import { describe, expect, it } from 'vitest';

import * as diffbase from '../../../../runtime/cogs/configs/diffbase.js';
import * as progress from '../../../../runtime/cogs/configs/progress.js';
import * as settings from '../../../../runtime/cogs/configs/settings.js';
import * as configErrors from '../../../../runtime/cogs/configs/errors.js';

describe('OperatorSettings', () => {
  const s = new settings.OperatorSettings({ warn: () => undefined });

  it.each<[string, unknown, unknown]>([
    ['process.ultimateExitingTimeout', s.process.ultimateExitingTimeout, 600],
    ['posting.enabled', s.posting.enabled, true],
    ['posting.loggers', s.posting.loggers, false],
    ['posting.level', s.posting.level, 20],
    ['posting.reportingComponent', s.posting.reportingComponent, 'kopf'],
    ['posting.reportingInstance', s.posting.reportingInstance, 'dev'],
    ['posting.eventNamePrefix', s.posting.eventNamePrefix, 'kopf-event-'],
    ['peering.name', s.peering.name, 'default'],
    ['peering.priority', s.peering.priority, 0],
    ['peering.lifetime', s.peering.lifetime, 60],
    ['peering.mandatory', s.peering.mandatory, false],
    ['peering.standalone', s.peering.standalone, false],
    ['peering.stealth', s.peering.stealth, false],
    ['peering.clusterwide', s.peering.clusterwide, null],
    ['watching.serverTimeout', s.watching.serverTimeout, null],
    ['watching.clientTimeout', s.watching.clientTimeout, null],
    ['watching.connectTimeout', s.watching.connectTimeout, null],
    ['watching.reconnectBackoff', s.watching.reconnectBackoff, 0.1],
    ['watching.inactivityTimeout', s.watching.inactivityTimeout, 70],
    ['queueing.workerLimit', s.queueing.workerLimit, null],
    ['queueing.idleTimeout', s.queueing.idleTimeout, 5],
    ['queueing.exitTimeout', s.queueing.exitTimeout, 2],
    ['queueing.errorDelays', s.queueing.errorDelays, [1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610]],
    ['queueing.batchWindow', s.queueing.batchWindow, 0.1],
    ['scanning.disabled', s.scanning.disabled, false],
    ['admission.server', s.admission.server, null],
    ['admission.managed', s.admission.managed, null],
    ['execution.defaultBackoff', s.execution.defaultBackoff, 60],
    ['execution.maxWorkers', s.execution.maxWorkers, null],
    ['background.cancellationPolling', s.background.cancellationPolling, 60],
    ['background.instantExitTimeout', s.background.instantExitTimeout, null],
    ['background.instantExitZeroTimeCycles', s.background.instantExitZeroTimeCycles, 10],
    ['networking.requestTimeout', s.networking.requestTimeout, 300],
    ['networking.connectTimeout', s.networking.connectTimeout, null],
    ['networking.errorBackoffs', s.networking.errorBackoffs, [1, 1, 2, 3, 5, 8, 13, 21]],
    ['networking.enforceRetryAfter', s.networking.enforceRetryAfter, false],
    ['networking.trustEnv', s.networking.trustEnv, false],
    ['persistence.finalizer', s.persistence.finalizer, 'kopf.zalando.org/KopfFinalizerMarker'],
    ['persistence.consistencyTimeout', s.persistence.consistencyTimeout, 5],
  ])('R-CONFIG-1 %s defaults to %j', (_name, actual, expected) => {
    expect(actual).toEqual(expected);
  });

  it('R-CONFIG-1 the default storages are the smart progress and the annotations diff-base storages', () => {
    expect(s.persistence.progressStorage).toBeInstanceOf(progress.SmartProgressStorage);
    expect(s.persistence.diffbaseStorage).toBeInstanceOf(diffbase.AnnotationsDiffBaseStorage);
  });

  it('R-CONFIG-1 batching is a deprecated alias of queueing', () => {
    const warnings: string[] = [];
    const own = new settings.OperatorSettings({ warn: (message) => warnings.push(message) });
    own.batching.idleTimeout = 42;
    expect(own.queueing.idleTimeout).toBe(42);
    expect(own.batching).toBe(own.queueing);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/batching.*deprecated.*queueing/);
  });

  it('R-CONFIG-1 execution.maxWorkers below 1 throws; 1 and null are accepted', () => {
    const own = new settings.OperatorSettings({ warn: () => undefined });
    expect(() => {
      own.execution.maxWorkers = 0;
    }).toThrow(configErrors.SettingsError);
    expect(() => {
      own.execution.maxWorkers = -5;
    }).toThrow(/at least 1/);
    own.execution.maxWorkers = 1;
    expect(own.execution.maxWorkers).toBe(1);
    own.execution.maxWorkers = null;
    expect(own.execution.maxWorkers).toBeNull();
  });

  it('R-CONFIG-2 two settings objects share no group and no storage', () => {
    const a = new settings.OperatorSettings();
    const b = new settings.OperatorSettings();
    a.watching.serverTimeout = 10;
    a.peering.priority = 100;
    expect(b.watching.serverTimeout).toBeNull();
    expect(b.peering.priority).toBe(0);
    expect(a.persistence.progressStorage).not.toBe(b.persistence.progressStorage);
    expect(a.persistence.diffbaseStorage).not.toBe(b.persistence.diffbaseStorage);
    expect(a.queueing.errorDelays).not.toBe(b.queueing.errorDelays);
  });
});

describe('settings that do not exist (R-CONFIG-3)', () => {
  const GROUPS = [
    'process',
    'posting',
    'peering',
    'leaderElection',
    'sharding',
    'watching',
    'queueing',
    'scanning',
    'admission',
    'conversion',
    'health',
    'execution',
    'background',
    'networking',
    'persistence',
  ] as const;

  it('R-CONFIG-3 assigning settings.peering.namespaced throws a SettingsError naming it and the setting meant', () => {
    const own = new settings.OperatorSettings({ warn: () => undefined });
    const assign = (): void => {
      (own.peering as unknown as Record<string, unknown>)['namespaced'] = true;
    };
    expect(assign).toThrow(configErrors.SettingsError);
    expect(assign).toThrow(
      'settings.peering.namespaced is not a setting: did you mean settings.peering.clusterwide (true for cluster-wide peering, false for namespaced)?',
    );
    expect(own.peering.clusterwide).toBeNull();
  });

  it.each(GROUPS)('R-CONFIG-3 every group refuses an unknown setting: settings.%s', (group) => {
    const own = new settings.OperatorSettings({ warn: () => undefined });
    const section = own[group] as unknown as Record<string, unknown>;
    let error: unknown;
    try {
      section['noSuchSetting'] = 1;
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(configErrors.SettingsError);
    expect(error).toMatchObject({ code: 'InvalidSetting' });
    expect((error as Error).message).toMatch(new RegExp(`^settings\\.${group}\\.noSuchSetting is not a setting: the settings there are: \\w`));
    expect(() => Object.defineProperty(section, 'noSuchSetting', { value: 1 })).toThrow(configErrors.SettingsError);
    expect(Object.hasOwn(section, 'noSuchSetting')).toBe(false);
  });

  it("R-CONFIG-3 Kopf's snake_case names and the settings object itself: the camelCase setting is named", () => {
    const own = new settings.OperatorSettings({ warn: () => undefined });
    expect(() => {
      (own.execution as unknown as Record<string, unknown>)['default_backoff'] = 1;
    }).toThrow('settings.execution.default_backoff is not a setting: did you mean settings.execution.defaultBackoff?');
    expect(() => {
      (own as unknown as Record<string, unknown>)['peerings'] = {};
    }).toThrow(/^settings\.peerings is not a setting: the settings there are: .*\bpeering\b/);
    // Known settings are set as before, accessors included.
    own.peering.clusterwide = true;
    own.leaderElection.leaseName = 'lease';
    Object.assign(own.watching, { serverTimeout: 10 });
    expect([own.peering.clusterwide, own.leaderElection.leaseName, own.watching.serverTimeout]).toEqual([true, 'lease', 10]);
    expect(own.leaderElection).toBeInstanceOf(settings.LeaderElectionSettings);
    expect(() => own.leaderElection.validate()).not.toThrow();
  });
});

describe('settings without effect (R-CONFIG-4)', () => {
  it('R-CONFIG-4 setting queueing.batchWindow warns once that it has no effect; the value is kept', () => {
    const warnings: string[] = [];
    const own = new settings.OperatorSettings({ warn: (message) => warnings.push(message) });
    expect(own.queueing.batchWindow).toBe(0.1);
    expect(warnings).toEqual([]); // reading is fine
    own.queueing.batchWindow = 0.5;
    own.queueing.batchWindow = 1;
    expect(own.queueing.batchWindow).toBe(1);
    expect(warnings).toEqual(['settings.queueing.batchWindow is deprecated and has no effect: every event is processed as it comes.']);
  });

  it('R-CONFIG-4 setting execution.maxWorkers warns once that it has no effect, and is still validated', () => {
    const warnings: string[] = [];
    const own = new settings.OperatorSettings({ warn: (message) => warnings.push(message) });
    expect(() => {
      own.execution.maxWorkers = 0;
    }).toThrow(configErrors.SettingsError);
    expect(warnings).toEqual([]);
    own.execution.maxWorkers = 4;
    own.execution.maxWorkers = 8;
    expect(own.execution.maxWorkers).toBe(8);
    expect(warnings).toEqual([
      'settings.execution.maxWorkers has no effect: handlers run on the event loop, not in a thread pool; use settings.queueing.workerLimit to limit how many objects are handled at once.',
    ]);
  });

  it('R-CONFIG-4 without a warn option, the warning is a Node DeprecationWarning', () => {
    const emitted: unknown[] = [];
    const listener = (warning: Error): void => {
      emitted.push([warning.name, warning.message]);
    };
    process.on('warning', listener);
    new settings.OperatorSettings().queueing.batchWindow = 2;
    // Node emits 'warning' events on the next tick: listen until then.
    return new Promise<void>((resolve) => {
      process.nextTick(() => {
        process.off('warning', listener);
        expect(emitted).toEqual([
          ['DeprecationWarning', 'settings.queueing.batchWindow is deprecated and has no effect: every event is processed as it comes.'],
        ]);
        resolve();
      });
    });
  });
});

describe('sharding settings (R-SHARD-101)', () => {
  const fresh = (): settings.ShardingSettings => new settings.OperatorSettings({ warn: () => undefined }).sharding;

  it('R-SHARD-101 the defaults: no ring, identity and namespace derived, key uid, 15/10/2 s; they validate', () => {
    const s = fresh();
    expect([s.ring, s.identity, s.namespace, s.key, s.leaseDuration, s.renewDeadline, s.retryPeriod]).toEqual([null, null, null, 'uid', 15, 10, 2]);
    expect(() => s.validate()).not.toThrow();
    Object.assign(s, { ring: 'my-operator', identity: 'pod-7f9c-x2', namespace: 'ops', key: 'namespace' });
    expect(() => s.validate()).not.toThrow();
    Object.assign(s, { ring: 'A.b_c-9', identity: 'Z'.repeat(63) });
    expect(() => s.validate()).not.toThrow();
  });

  it.each<[string, Partial<Record<keyof settings.ShardingSettings, unknown>>, string]>([
    ['renewDeadline ≥ leaseDuration', { renewDeadline: 15 }, 'sharding.renewDeadline (15 s) must be less than sharding.leaseDuration (15 s).'],
    ['retryPeriod ≥ renewDeadline', { retryPeriod: 10 }, 'sharding.retryPeriod (10 s) must be less than sharding.renewDeadline (10 s).'],
    ['a negative retryPeriod', { retryPeriod: -1 }, 'sharding.retryPeriod must be a positive number of seconds, got -1.'],
    ['a fractional leaseDuration', { leaseDuration: 15.5 }, 'sharding.leaseDuration must be a whole number of seconds'],
    ['an infinite renewDeadline', { renewDeadline: Number.POSITIVE_INFINITY }, 'sharding.renewDeadline must be a positive number of seconds, got Infinity.'],
    ['an empty ring', { ring: '' }, 'sharding.ring must be null or a label name'],
    ['a ring with a slash', { ring: 'a/b' }, 'got "a/b"'],
    ['a ring ending in a dash', { ring: 'ring-' }, 'sharding.ring must be null or a label name'],
    ['a ring of 64 characters', { ring: 'r'.repeat(64) }, 'sharding.ring must be null or a label name'],
    ['an identity with a space', { identity: 'my pod' }, 'sharding.identity must be null or a non-empty label value (at most 63 characters'],
    ['an empty identity', { identity: '' }, 'got "".'],
    ['an identity of 64 characters', { identity: 'i'.repeat(64) }, 'sharding.identity must be null or a non-empty label value'],
    ['an unknown key', { key: 'name' }, `sharding.key must be 'uid' or 'namespace', got "name".`],
    ['an empty namespace', { namespace: '' }, 'sharding.namespace must be a non-empty string or null, got "".'],
  ])('R-SHARD-101 refuses %s with a SettingsError naming the setting and the value', (_title, values, message) => {
    const s = fresh();
    Object.assign(s, values);
    expect(() => s.validate()).toThrow(configErrors.SettingsError);
    expect(() => s.validate()).toThrow(message);
  });

  it('R-SHARD-101 label names and values: 63 characters at most, alphanumeric at both ends', () => {
    expect(settings.isLabelNamePart('a')).toBe(true);
    expect(settings.isLabelNamePart('a'.repeat(63))).toBe(true);
    expect(settings.isLabelNamePart('a'.repeat(64))).toBe(false);
    expect(settings.isLabelNamePart('-a')).toBe(false);
    expect(settings.isLabelNamePart('a_b.c-d')).toBe(true);
    expect(settings.isLabelNamePart('')).toBe(false);
    expect(settings.isLabelValue('')).toBe(true);
    expect(settings.isLabelValue('a b')).toBe(false);
  });
});
