import { describe, expect, it } from 'vitest';

import * as errors from '../../../../runtime/core/actions/errors.js';

describe('handler errors', () => {
  it('R-ERRORS-1 TemporaryError defaults to a 60 s delay and keeps null and 0 as "as soon as possible"', () => {
    expect(new errors.TemporaryError('x').delay).toBe(60);
    expect(new errors.TemporaryError('x', { delay: 10 }).delay).toBe(10);
    expect(new errors.TemporaryError('x', { delay: null }).delay).toBeNull();
    expect(new errors.TemporaryError('x', { delay: 0 }).delay).toBe(0);
    expect(new errors.TemporaryError().message).toBe('');
    expect(new errors.TemporaryError().messageless).toBe(true);
    expect(new errors.TemporaryError(null).messageless).toBe(true);
    expect(new errors.TemporaryError('').messageless).toBe(false);
  });

  it('R-ERRORS-6 timeout and retries errors are permanent; AdmissionError carries an HTTP status (default 500)', () => {
    expect(new errors.HandlerTimeoutError('t')).toBeInstanceOf(errors.PermanentError);
    expect(new errors.HandlerRetriesError('r')).toBeInstanceOf(errors.PermanentError);
    const admission = new errors.AdmissionError('no');
    expect(admission).toBeInstanceOf(errors.PermanentError);
    expect(admission.status).toBe(500);
    expect(new errors.AdmissionError('no', 403).status).toBe(403);
    expect(new errors.HandlerChildrenRetryError({ delay: 5 })).toBeInstanceOf(errors.TemporaryError);
    expect(new errors.HandlerChildrenRetryError({ delay: 5 }).delay).toBe(5);
  });

  it('every error class has a literal code and its class name as name', () => {
    const table: Array<[errors.KopfError, string, string]> = [
      [new errors.TemporaryError('a'), 'TemporaryError', 'TemporaryError'],
      [new errors.PermanentError('a'), 'PermanentError', 'PermanentError'],
      [new errors.HandlerTimeoutError('a'), 'HandlerTimeoutError', 'HandlerTimeoutError'],
      [new errors.HandlerRetriesError('a'), 'HandlerRetriesError', 'HandlerRetriesError'],
      [new errors.AdmissionError('a'), 'AdmissionError', 'AdmissionError'],
      [new errors.HandlerChildrenRetryError(), 'HandlerChildrenRetry', 'HandlerChildrenRetryError'],
    ];
    for (const [error, code, name] of table) {
      expect(error.code).toBe(code);
      expect(error.name).toBe(name);
      expect(String(error)).toContain(name);
    }
  });

  it('ErrorsMode has the three modes', () => {
    expect(Object.keys(errors.ErrorsMode).sort()).toEqual(['IGNORED', 'PERMANENT', 'TEMPORARY']);
    expect(new Set(Object.values(errors.ErrorsMode)).size).toBe(3);
  });
});

describe('describing thrown values', () => {
  class CustomError extends Error {}
  const table: Array<[string, unknown, string, string]> = [
    // [title, thrown, describeError, errorMessage]
    ['an Error with a message', new Error('Oops!'), 'Oops!', 'Oops!'],
    ['an Error without a message', new Error(''), 'Error', ''],
    ['a subclass without a message', new CustomError(), 'CustomError', ''],
    // Kopf: `str(TemporaryError())` is 'None' (its message argument defaults to None); `TemporaryError('')` is ''.
    ['a TemporaryError without a message', new errors.TemporaryError(), 'None', 'None'],
    ['a TemporaryError with an empty message', new errors.TemporaryError(''), 'TemporaryError', ''],
    ['a parent waiting on its sub-handlers', new errors.HandlerChildrenRetryError(), 'None', 'None'],
    ['a string', 'plain text', 'plain text', 'plain text'],
    ['an empty string', '', 'string', ''],
    ['a number', 42, '42', '42'],
    ['undefined', undefined, 'undefined', ''],
    ['null', null, 'null', ''],
    ['a plain object', { code: 1 }, 'Object', ''],
    ['an object with a message', { message: 'from an object' }, 'from an object', 'from an object'],
    ['a null-prototype object', Object.create(null), 'Object', ''],
    ['a Map', new Map(), 'Map', ''],
  ];
  it.each(table)('R-ERRORS-3 %s', (_title, thrown, described, message) => {
    expect(errors.describeError(thrown)).toBe(described);
    expect(errors.errorMessage(thrown)).toBe(message);
    const wrapped = errors.toError(thrown);
    expect(wrapped).toBeInstanceOf(Error);
    expect(errors.describeError(wrapped)).toBe(described);
    expect(errors.errorMessage(wrapped)).toBe(message);
  });

  it('toError keeps errors and wraps other values with their type name', () => {
    const error = new Error('x');
    expect(errors.toError(error)).toBe(error);
    const wrapped = errors.toError('text') as errors.ThrownValueError;
    expect(wrapped).toBeInstanceOf(errors.ThrownValueError);
    expect(wrapped.value).toBe('text');
    expect(wrapped.name).toBe('string');
    expect(wrapped.code).toBe('ThrownValue');
  });
});
