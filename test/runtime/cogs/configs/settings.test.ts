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
    const own = new settings.OperatorSettings();
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
