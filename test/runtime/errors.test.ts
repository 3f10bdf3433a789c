// The runtime's error scheme (docs/architecture.md, "Errors"), checked over what users get: every
// error class exported by kopf-gen/runtime and kopf-gen/testing is named `…Error`, has `name`
// equal to its class name and a literal `code`, and extends `TypeError` exactly when it reports a
// misuse of an API by the calling code; and every error class of the runtime and the binary is
// declared in the `errors.ts` of the folder where it fails.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as runtime from '../../runtime/index.js';
import * as testing from '../../testing/index.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The exported errors that report a misuse of an API by the caller: the only `TypeError`s. */
const MISUSE = new Set([
  'ClientUsageError',
  'ConnectionOptionsError',
  'InvalidConnectionInfoError',
  'SettingsError',
  'DuplicateHandlerIdError',
  'IndexKeyError',
  'EndpointUrlError',
  'EndpointConflictError',
  'EndpointOptionsError',
  'OperatorScopeError',
  'OperatorModeError',
  'PeeringOptionsError',
  'WebhookOptionsError',
  'HierarchyError',
  'EntryPointError',
]);

/** Constructor arguments of the classes that take more than a message. */
const ARGUMENTS: Record<string, readonly unknown[]> = {
  RoundTripError: ['v1 → v2 → v1', {}, {}, [{ kind: 'lost', path: 'spec.a', before: 1, after: undefined }], []],
  ApiError: [418, undefined],
  ApiClientError: [400, undefined],
  ApiServerError: [500, undefined],
  ApiUnauthorizedError: [401, undefined],
  ApiForbiddenError: [403, undefined],
  ApiNotFoundError: [404, undefined],
  ApiConflictError: [409, undefined],
  ApiGoneError: [410, undefined],
  ApiUnprocessableError: [422, undefined],
  ApiTooManyRequestsError: [429, undefined],
  WatchingError: [{ kind: 'Status' }],
  HierarchyError: ['INCOMPLETE_OWNER', 'a message'],
  WebhookRequestError: ['malformed', 'a message'],
  AdmissionSetupError: ['no-server', 'a message'],
  ActivityError: ['a message', { outcomes: new Map() }],
  DuplicateHandlerIdError: ['an-id', 'on.create', ['a.ts:1', 'b.ts:2'], ''],
  MissingDependencyError: ['a-package', 'a message'],
};

type ErrorClass = new (...args: unknown[]) => Error & { readonly code?: unknown };

function errorClasses(exports: Record<string, unknown>): Array<[string, ErrorClass]> {
  return Object.entries(exports).filter((entry): entry is [string, ErrorClass] => {
    const value = entry[1];
    return typeof value === 'function' && value.prototype instanceof Error;
  });
}

describe('the error scheme', () => {
  const exported = [...errorClasses(runtime), ...errorClasses(testing)];

  it('finds the exported error classes', () => {
    expect(exported.length).toBeGreaterThanOrEqual(40);
  });

  it.each(exported)('%s: named …Error, name = class name, a literal code, TypeError only for misuse', (exportName, cls) => {
    expect(exportName).toMatch(/Error$/);
    expect(cls.name).toBe(exportName);
    const error = new cls(...(ARGUMENTS[exportName] ?? ['a message']));
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(cls.name);
    expect(typeof error.code).toBe('string');
    expect(error.code).not.toBe('');
    expect(error instanceof TypeError).toBe(MISUSE.has(exportName));
  });

  it('every error class of the runtime and the binary is declared in an errors.ts', () => {
    const misplaced: string[] = [];
    const visit = (dir: string): void => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) visit(full);
        else if (entry.name.endsWith('.ts') && entry.name !== 'errors.ts') {
          const text = fs.readFileSync(full, 'utf8');
          for (const match of text.matchAll(/^export class (\w+) extends (\w*Error|Error|TypeError)\b/gm)) {
            misplaced.push(`${path.relative(ROOT, full)}: ${match[1]}`);
          }
        }
      }
    };
    for (const folder of ['runtime', 'cli', 'testing']) visit(path.join(ROOT, folder));
    // A kit of one module is its own folder, and kits are independent of each other.
    expect(misplaced).toEqual(['runtime/kits/hierarchies.ts: HierarchyError']);
  });
});
