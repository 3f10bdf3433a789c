/**
 * Writing responses: common headers (D-WIRE-20: Content-Type, Cache-Control, Audit-Id, Warning),
 * JSON or YAML bodies, and Status errors.
 */
import type * as http from 'node:http';
import * as crypto from 'node:crypto';
import * as YAML from 'yaml';
import * as statuses from './statuses.js';

export function warningHeader(text: string): string {
  return `299 - "${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

export function baseHeaders(res: http.ServerResponse, warnings: readonly string[] = []): void {
  res.setHeader('Cache-Control', 'no-cache, private');
  res.setHeader('Audit-Id', crypto.randomUUID());
  if (warnings.length) res.setHeader('Warning', [...new Set(warnings)].map(warningHeader));
}

export function sendBody(res: http.ServerResponse, code: number, body: unknown, form: 'json' | 'yaml' = 'json',
                         opts: { warnings?: readonly string[]; contentType?: string } = {}): string {
  baseHeaders(res, opts.warnings);
  const text = form === 'yaml' ? YAML.stringify(body) : JSON.stringify(body);
  res.setHeader('Content-Type', opts.contentType ?? (form === 'yaml' ? 'application/yaml' : 'application/json'));
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.writeHead(code);
  res.end(text);
  return text;
}

export function sendError(res: http.ServerResponse, err: statuses.ApiError, warnings: readonly string[] = []): string {
  for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  return sendBody(res, err.code, err.toStatus(), 'json', { warnings });
}

export function sendText(res: http.ServerResponse, code: number, text: string, contentType = 'text/plain; charset=utf-8'): void {
  baseHeaders(res);
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.writeHead(code);
  res.end(text);
}
