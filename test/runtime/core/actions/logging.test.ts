import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import * as settings from '../../../../runtime/cogs/configs/settings.js';
import * as loggers from '../../../../runtime/cogs/structs/loggers.js';
import type * as events from '../../../../runtime/core/actions/events.js';
import * as execution from '../../../../runtime/core/actions/execution.js';
import * as invocation from '../../../../runtime/core/actions/invocation.js';
import * as logging from '../../../../runtime/core/actions/logging.js';
import * as progression from '../../../../runtime/core/actions/progression.js';
import { makeWorld, referenceBody } from './helpers.js';

let lines: string[] = [];
let restore: () => void = () => undefined;

beforeEach(() => {
  lines = [];
  restore = logging.setLogSink((line) => lines.push(line));
});

afterEach(() => {
  restore();
  logging.configure();
});

const body = referenceBody();
const clusterBody = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns1', uid: 'uid-ns' } };

function postingSettings(loggers: boolean): settings.OperatorSettings {
  const config = new settings.OperatorSettings({ warn: () => undefined });
  config.posting.loggers = loggers;
  return config;
}

describe('formats', () => {
  it('R-POST-5 full: time, logger name (20), level (8), the object prefix and the message', () => {
    logging.configure();
    logging.objectLogger({ body }).info('Something was logged here.');
    logging.getLogger('kopf.activities.startup.with.a.long.name').warning('Careful.');
    expect(lines[0]).toMatch(
      /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] kopf\.objects {9}\[INFO {4}\] \[default\/kopf-example-1\] Something was logged here\.$/,
    );
    expect(lines[1]).toMatch(/^\[[^\]]+\] kopf\.activities\.star \[WARNING \] Careful\.$/);
  });

  it('R-POST-5 plain: the message with the prefix; cluster-scoped objects have only the name', () => {
    logging.configure({ logFormat: 'plain' });
    logging.objectLogger({ body }).info('Creation is in progress: x');
    logging.objectLogger({ body: clusterBody }).info('Hello.');
    logging.getLogger('kopf.reactor').info('No prefix.');
    expect(lines).toEqual(['[default/kopf-example-1] Creation is in progress: x', '[ns1] Hello.', 'No prefix.']);
  });

  it('R-POST-5 json: message, timestamp, the object under the refkey, severity; no prefix by default', () => {
    logging.configure({ logFormat: 'json' });
    logging.objectLogger({ body }).warning('Careful.');
    logging.configure({ logFormat: 'json', logRefkey: 'k8s', logPrefix: true });
    logging.objectLogger({ body }).info('Prefixed.');
    const [first, second] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(Object.keys(first!)).toEqual(['message', 'timestamp', 'object', 'severity']);
    expect(first).toMatchObject({
      message: 'Careful.',
      severity: 'warn',
      object: { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', name: 'kopf-example-1', uid: 'uid-1', namespace: 'default' },
    });
    expect(first!['timestamp']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    expect(second).toMatchObject({ message: '[default/kopf-example-1] Prefixed.', k8s: { name: 'kopf-example-1' }, severity: 'info' });
  });

  it('R-POST-5 --no-log-prefix drops the prefix in full/plain', () => {
    logging.configure({ logFormat: 'plain', logPrefix: false });
    logging.objectLogger({ body }).info('Bare.');
    expect(lines).toEqual(['Bare.']);
  });

  it('errors are followed by their stack trace; non-Error values by their inspection', () => {
    logging.configure({ logFormat: 'plain' });
    const logger = logging.getLogger('kopf.x');
    logger.error('Failed.', { error: new Error('boom') });
    logger.error('Failed too.', { error: { weird: true } });
    expect(lines[0]).toMatch(/^Failed\.\nError: boom\n {4}at /);
    expect(lines[1]).toBe('Failed too.\nThrown value: { weird: true }');
  });

  it.each([
    [10, 'DEBUG', 'debug', 'Debug'],
    [20, 'INFO', 'info', 'Normal'],
    [30, 'WARNING', 'warn', 'Warning'],
    [40, 'ERROR', 'error', 'Error'],
    [50, 'CRITICAL', 'fatal', 'Fatal'],
  ])('level %i is %s, severity %s, event type %s', (level, name, severity, type) => {
    expect(logging.levelName(level)).toBe(name);
    expect(logging.severityOf(level)).toBe(severity);
    expect(logging.eventTypeOf(level)).toBe(type);
  });

  it('unknown formats are refused', () => {
    expect(() => logging.configure({ logFormat: 'xml' as never })).toThrow(TypeError);
  });
});

describe('levels', () => {
  function emitAll(): void {
    const named = logging.getLogger('kopf.reactor');
    const low = logging.getLogger('kopf.clients', { lowLevel: true });
    named.debug('named debug');
    named.info('named info');
    named.warning('named warning');
    low.debug('low debug');
    low.info('low info');
    low.warning('low warning');
  }

  it.each([
    ['default INFO', {}, ['named info', 'named warning', 'low warning']],
    ['--verbose DEBUG without low-level logs', { verbose: true }, ['named debug', 'named info', 'named warning', 'low warning']],
    ['--debug DEBUG with low-level logs', { debug: true }, ['named debug', 'named info', 'named warning', 'low debug', 'low info', 'low warning']],
    ['--quiet WARNING', { quiet: true }, ['named warning', 'low warning']],
  ] as const)('R-POST-5 %s', (_title, options, expected) => {
    logging.configure({ ...options, logFormat: 'plain' });
    emitAll();
    expect(lines).toEqual(expected);
  });
});

describe('posting per-object messages as k8s-events', () => {
  function capture(): { posted: events.QueuedEvent[]; sink: events.EventSink } {
    const posted: events.QueuedEvent[] = [];
    return { posted, sink: (event) => posted.push(event) };
  }

  it('R-POST-2 D-1 nothing is posted unless settings.posting.loggers is on', () => {
    const { posted, sink } = capture();
    logging.objectLogger({ body, settings: postingSettings(false), sink }).info('Something was logged here.');
    expect(posted).toEqual([]);
    expect(lines).toHaveLength(1);
  });

  it('R-POST-2 with loggers on: reason Logging, type by level, only at or above posting.level', () => {
    logging.configure({ verbose: true });
    const { posted, sink } = capture();
    const logger = logging.objectLogger({ body, settings: postingSettings(true), sink });
    logger.debug('Creation is in progress: {...}');
    logger.info('Something was logged here.');
    logger.warning('Careful.');
    logger.error('Failed.', { error: new Error('boom') });
    logger.critical('Dead.');
    expect(posted.map((e) => [e.type, e.reason, e.message.split('\n')[0]])).toEqual([
      ['Normal', 'Logging', 'Something was logged here.'],
      ['Warning', 'Logging', 'Careful.'],
      ['Error', 'Logging', 'Failed.'],
      ['Fatal', 'Logging', 'Dead.'],
    ]);
    expect(posted[2]!.message).toMatch(/^Failed\.\nError: boom/);
    expect(posted[0]!.ref).toEqual({ apiVersion: 'kopf.dev/v1', kind: 'KopfExample', name: 'kopf-example-1', uid: 'uid-1', namespace: 'default' });
  });

  it('R-POST-2 posting.level 10 posts DEBUG as type Debug; posting.enabled=false posts nothing; local loggers never post', () => {
    logging.configure({ verbose: true });
    const { posted, sink } = capture();
    const config = postingSettings(true);
    config.posting.level = 10;
    logging.objectLogger({ body, settings: config, sink }).debug('Low.');
    logging.objectLogger({ body, settings: config, sink, local: true }).info('Local.');
    expect(posted.map((e) => e.type)).toEqual(['Debug']);
    config.posting.enabled = false;
    logging.objectLogger({ body, settings: config, sink }).info('Disabled.');
    expect(posted).toHaveLength(1);
  });

  it('R-POST-2 messages below the configured log level are neither printed nor posted', () => {
    logging.configure({ quiet: true });
    const { posted, sink } = capture();
    logging.objectLogger({ body, settings: postingSettings(true), sink }).info('Hidden.');
    expect(posted).toEqual([]);
    expect(lines).toEqual([]);
  });

  it("R-POST-2 without explicit settings and sink, the current operator's are used", () => {
    const { posted, sink } = capture();
    const config = postingSettings(true);
    invocation.runInOperator({ settings: config, events: sink }, () => {
      logging.objectLogger({ body }).info('From the operator.');
    });
    logging.objectLogger({ body }).info('Outside of any operator.');
    expect(posted.map((e) => e.message)).toEqual(['From the operator.']);
  });

  it('A-11 a handler run posts its own message and the success line, but no DEBUG lines', async () => {
    logging.configure({ verbose: true });
    const world = makeWorld();
    const { posted, sink } = capture();
    const logger = logging.objectLogger({ body, settings: postingSettings(true), sink });
    const create_fn: execution.Invocable = {
      id: 'create_fn',
      fn: ({ logger: log }) => {
        (log as logging.ObjectLogger).info('Something was logged here.');
      },
    };
    const state = progression.State.fromScratch().withPurpose('create').withHandlers(['create_fn'], world.clock.now());
    await execution.executeHandlersOnce({
      handlers: [create_fn],
      state,
      scope: { settings: world.settings, clock: world.clock, logger, kwargs: () => ({ logger }) },
    });
    expect(posted.map((e) => e.message)).toEqual(['Something was logged here.', "Handler 'create_fn' succeeded."]);
    expect(lines.some((line) => line.includes("[default/kopf-example-1] Handler 'create_fn' is invoked."))).toBe(true);
  });
});

describe('untrusted names and secret values in log lines', () => {
  const forged = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'evil\n[default/other] Handler succeeded.\u2028', namespace: 'de\rfault', uid: 'u' } };

  it('R-SEC-21 control characters in names and namespaces are escaped in the plain and full formats: one record, one line', () => {
    for (const logFormat of ['plain', 'full'] as const) {
      lines = [];
      logging.configure({ logFormat });
      logging.objectLogger({ body: forged, settings: postingSettings(false) }).info('Processed.');
      expect(lines).toHaveLength(1);
      expect(lines[0]?.split(/\r\n|[\n\r\u2028\u2029]/)).toHaveLength(1);
      expect(lines[0]).toContain('[de\\rfault/evil\\n[default/other] Handler succeeded.\\u2028] Processed.');
    }
  });

  it('R-SEC-21 the JSON format keeps the name exact and the line whole', () => {
    logging.configure({ logFormat: 'json', logPrefix: true });
    logging.objectLogger({ body: forged, settings: postingSettings(false) }).info('Processed.');
    expect(lines).toHaveLength(1);
    expect(lines[0]?.split('\n')).toHaveLength(1);
    const parsed = JSON.parse(lines[0] ?? '') as { object: { name: string }; message: string };
    expect(parsed.object.name).toBe(forged.metadata.name);
    expect(parsed.message.split('\n')).toHaveLength(1);
  });

  it('R-SEC-21 escapeForLog: control characters as escapes, other text as it is', () => {
    expect(loggers.escapeForLog('plain-name')).toBe('plain-name');
    expect(loggers.escapeForLog('a\nb\tc\x00d\x7fe\x9bf')).toBe('a\\nb\\tc\\x00d\\x7fe\\x9bf');
  });

  it('R-SEC-20 a per-object logger of a Secret redacts its values; of other kinds, returns the value as it is', () => {
    const secretLogger = logging.objectLogger({ body: forged, settings: postingSettings(false) });
    expect(loggers.redacted(secretLogger, { data: { a: 'c2VjcmV0' }, type: 'Opaque' })).toEqual({ data: { a: '<redacted 8 bytes>' }, type: 'Opaque' });
    expect(loggers.redactedDiff(secretLogger, [['change', ['data', 'a'], 'eA==', 'eQ==']])).toEqual([
      ['change', ['data', 'a'], '<redacted 4 bytes>', '<redacted 4 bytes>'],
    ]);
    expect(loggers.redactedJsonPatch(secretLogger, [{ op: 'add', path: '/stringData/key', value: 'plain' }])).toEqual([
      { op: 'add', path: '/stringData/key', value: '<redacted 5 bytes>' },
    ]);
    const value = { spec: { a: 1 } };
    expect(loggers.redacted(logging.objectLogger({ body, settings: postingSettings(false) }), value)).toBe(value);
    // Configured fields of another kind.
    const config = postingSettings(false);
    config.persistence.secretFields['KopfExample.kopf.dev'] = ['spec.field'];
    expect(loggers.redacted(logging.objectLogger({ body, settings: config }), { spec: { field: 'value', duration: '1m' } })).toEqual({
      spec: { field: '<redacted 5 bytes>', duration: '1m' },
    });
  });
});
