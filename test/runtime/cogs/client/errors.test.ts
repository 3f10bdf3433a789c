import { describe, expect, it } from 'vitest';
import * as errors from '../../../../runtime/cogs/client/errors.js';

const status = (code: number, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, message: `message ${code}`, reason: `Reason${code}`, ...extra });

describe('apiErrorFor', () => {
  it.each([
    [401, errors.ApiUnauthorizedError, 'ApiUnauthorized'],
    [403, errors.ApiForbiddenError, 'ApiForbidden'],
    [404, errors.ApiNotFoundError, 'ApiNotFound'],
    [409, errors.ApiConflictError, 'ApiConflict'],
    [410, errors.ApiGoneError, 'ApiGone'],
    [422, errors.ApiUnprocessableError, 'ApiUnprocessable'],
    [429, errors.ApiTooManyRequestsError, 'ApiTooManyRequests'],
    [400, errors.ApiClientError, 'ApiClientError'],
    [418, errors.ApiClientError, 'ApiClientError'],
    [500, errors.ApiServerError, 'ApiServerError'],
    [503, errors.ApiServerError, 'ApiServerError'],
    [302, errors.ApiError, 'ApiError'],
  ])('R-AUTH-5 maps HTTP %i to its class and literal code', (code, cls, literal) => {
    const error = errors.apiErrorFor(code, status(code));
    expect(error).toBeInstanceOf(cls);
    expect(error).toBeInstanceOf(errors.ApiError);
    expect(error.code).toBe(literal);
    expect(error.status).toBe(code);
    if (code >= 400 && code < 500) expect(error).toBeInstanceOf(errors.ApiClientError);
    if (code >= 500) expect(error).toBeInstanceOf(errors.ApiServerError);
  });

  it('R-AUTH-5 keeps the Status payload with its reason, message and details', () => {
    const error = errors.apiErrorFor(404, status(404, { details: { name: 'x', kind: 'widgets' } }));
    expect(error.payload).toMatchObject({ kind: 'Status', code: 404 });
    expect(error.reason).toBe('Reason404');
    expect(error.message).toBe('message 404');
    expect(error.details).toEqual({ name: 'x', kind: 'widgets' });
  });

  it('R-AUTH-5 drops JSON payloads that are not a Status', () => {
    const error = errors.apiErrorFor(500, JSON.stringify({ kind: 'Secret', data: { password: 'c2VjcmV0' } }));
    expect(error.payload).toBeUndefined();
    expect(error.message).not.toContain('c2VjcmV0');
    expect(error.message).toBe('HTTP 500');
  });

  it('R-AUTH-5 keeps short non-JSON bodies as trimmed text', () => {
    const error = errors.apiErrorFor(429, 'Too many requests, please try again later.\n');
    expect(error.payload).toBe('Too many requests, please try again later.');
    expect(error.message).toBe('Too many requests, please try again later.');
  });

  it('R-AUTH-5 truncates long non-JSON bodies to 256 characters', () => {
    const error = errors.apiErrorFor(502, 'x'.repeat(1000));
    expect(error.payload).toHaveLength(errors.TEXT_ERROR_MAX_SIZE);
    expect(error.payload).toBe(`${'x'.repeat(253)}...`);
  });

  it('chains the cause and keeps lower-cased headers', () => {
    const cause = new Error('underlying');
    const error = errors.apiErrorFor(500, '', { cause, headers: { 'retry-after': '3' } });
    expect(error.cause).toBe(cause);
    expect(error.headers['retry-after']).toBe('3');
    expect(error.payload).toBeUndefined();
  });
});

describe('retryAfterSeconds', () => {
  it('reads seconds from the Retry-After header', () => {
    expect(errors.apiErrorFor(429, 'busy', { headers: { 'retry-after': '7' } }).retryAfterSeconds()).toBe(7);
  });

  it('reads an HTTP date from the Retry-After header relative to now', () => {
    const now = Date.parse('2024-01-01T00:00:00Z');
    const error = errors.apiErrorFor(429, 'busy', { headers: { 'retry-after': 'Mon, 01 Jan 2024 00:00:12 GMT' } });
    expect(error.retryAfterSeconds(now)).toBe(12);
  });

  it('falls back to details.retryAfterSeconds of the Status', () => {
    expect(errors.apiErrorFor(429, status(429, { details: { retryAfterSeconds: 4 } })).retryAfterSeconds()).toBe(4);
  });

  it('is undefined without any advice', () => {
    expect(errors.apiErrorFor(429, status(429)).retryAfterSeconds()).toBeUndefined();
  });
});

describe('other errors', () => {
  it('R-WATCH-3 a WatchingError says "Error in the watch-stream" with the object', () => {
    const object = { kind: 'Status', code: 500, message: 'boom' };
    const error = new errors.WatchingError(object);
    expect(error.code).toBe('WatchingError');
    expect(error.message).toBe(`Error in the watch-stream: ${JSON.stringify(object)}`);
    expect(error.payload).toEqual(object);
  });

  it('timeouts are connection errors with their own code', () => {
    const error = new errors.RequestTimeoutError('slow');
    expect(error).toBeInstanceOf(errors.ConnectionError);
    expect(errors.isConnectionError(error)).toBe(true);
    expect(error.code).toBe('RequestTimeout');
    expect(new errors.ConnectionError('reset').code).toBe('ConnectionError');
    expect(errors.isConnectionError(new Error('x'))).toBe(false);
  });

  it('a connection error keeps a short detail for lines that name the request already', () => {
    expect(new errors.ConnectionError('GET https://x/api failed: connect ECONNREFUSED', { detail: 'connect ECONNREFUSED' }).detail).toBe(
      'connect ECONNREFUSED',
    );
    expect(new errors.ConnectionError('reset').detail).toBe('reset');
  });

  it('credentials and connection failures are self-explanatory (logged without stack traces); others are not', () => {
    expect(errors.isSelfExplanatory(new errors.LoginError('no context'))).toBe(true);
    expect(errors.isSelfExplanatory(new errors.RequestTimeoutError('slow'))).toBe(true);
    expect(errors.isSelfExplanatory(errors.apiErrorFor(500, ''))).toBe(false);
    expect(errors.isSelfExplanatory(new TypeError('bug'))).toBe(false);
  });
});
