/**
 * Writing responses: every answer of the server goes out through here, so that all of them carry
 * the headers clients look at (Content-Type, Cache-Control, Audit-Id, Warning; D-WIRE-20), bodies
 * are JSON or YAML as negotiated, and errors are always Kubernetes `Status` objects.
 */
import type * as http from 'node:http';
import * as crypto from 'node:crypto';
import * as YAML from 'yaml';
import type * as statuses from './statuses.js';

export function warningHeader(text: string): string {
  return `299 - "${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

export function baseHeaders(res: http.ServerResponse, warnings: readonly string[] = []): void {
  res.setHeader('Cache-Control', 'no-cache, private');
  res.setHeader('Audit-Id', crypto.randomUUID());
  if (warnings.length) res.setHeader('Warning', [...new Set(warnings)].map(warningHeader));
}

export function sendBody(
  res: http.ServerResponse,
  code: number,
  body: unknown,
  form: 'json' | 'yaml' = 'json',
  opts: { warnings?: readonly string[]; contentType?: string } = {},
): string {
  const text = form === 'yaml' ? YAML.stringify(body) : JSON.stringify(body);
  writeComplete(res, code, text, opts.contentType ?? (form === 'yaml' ? 'application/yaml' : 'application/json'), opts.warnings);
  return text;
}

/**
 * Writes a whole response at once: the headers of `baseHeaders` plus Content-Type and
 * Content-Length go to `writeHead` as one list (cheaper than one `setHeader` each; headers set
 * earlier on `res` still come first), and the body goes out with `end`.
 */
function writeComplete(res: http.ServerResponse, code: number, text: string, contentType: string, warnings: readonly string[] = []): void {
  const headers: http.OutgoingHttpHeader[] = ['Cache-Control', 'no-cache, private', 'Audit-Id', crypto.randomUUID()];
  if (warnings.length) headers.push('Warning', [...new Set(warnings)].map(warningHeader));
  headers.push('Content-Type', contentType, 'Content-Length', Buffer.byteLength(text));
  res.writeHead(code, headers);
  res.end(text);
}

export function sendError(res: http.ServerResponse, err: statuses.ApiError, warnings: readonly string[] = []): string {
  for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  return sendBody(res, err.code, err.toStatus(), 'json', { warnings });
}

/**
 * Writes an already encoded body (OpenAPI documents). `headers` may replace the default
 * Cache-Control (a v3 document asked for by its current hash is `public, immutable`).
 */
export function sendBytes(res: http.ServerResponse, code: number, body: Buffer, contentType: string, headers: Readonly<Record<string, string>> = {}): void {
  const list: http.OutgoingHttpHeader[] = ['Cache-Control', headers['Cache-Control'] ?? 'no-cache, private', 'Audit-Id', crypto.randomUUID()];
  for (const [k, v] of Object.entries(headers)) if (k !== 'Cache-Control') list.push(k, v);
  list.push('Content-Type', contentType, 'Content-Length', body.length);
  res.writeHead(code, list);
  res.end(body);
}

export function sendText(res: http.ServerResponse, code: number, text: string, contentType = 'text/plain; charset=utf-8'): void {
  writeComplete(res, code, text, contentType);
}
