/**
 * R-API-1: the names the package exports, each with the right kind of value. Names of engines that
 * a later issue brings (webhook servers) are not asserted here; the storage
 * classes of R-STORAGE and the type-only names are.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';

import * as kopf from '../../../runtime/index.js';

type Kind = 'function' | 'class' | 'object' | 'symbol';

/** The kind of an exported value: classes are told from plain functions by their source form. */
function kindOf(value: unknown): string {
  if (typeof value === 'function') return /^class\b/.test(Function.prototype.toString.call(value)) ? 'class' : 'function';
  if (value === null) return 'null';
  return typeof value;
}

const exported = kopf as unknown as Record<string, unknown>;

const EXPECTED: Record<string, Kind> = {
  on: 'object',
  daemon: 'function',
  timer: 'function',
  index: 'function',
  subhandler: 'function',
  register: 'function',
  execute: 'function',
  event: 'function',
  info: 'function',
  warn: 'function',
  exception: 'function',
  TemporaryError: 'class',
  PermanentError: 'class',
  HandlerTimeoutError: 'class',
  HandlerRetriesError: 'class',
  AdmissionError: 'class',
  LoginError: 'class',
  PRESENT: 'symbol',
  ABSENT: 'symbol',
  EVERYTHING: 'symbol',
  COPY: 'symbol',
  notFn: 'function',
  allFn: 'function',
  anyFn: 'function',
  noneFn: 'function',
  ErrorsMode: 'object',
  Reason: 'object',
  DaemonStoppingReason: 'object',
  OperatorSettings: 'class',
  OperatorRegistry: 'class',
  Memo: 'class',
  Patch: 'class',
  lifecycles: 'object',
  getDefaultLifecycle: 'function',
  setDefaultLifecycle: 'function',
  getDefaultRegistry: 'function',
  setDefaultRegistry: 'function',
  run: 'function',
  operator: 'function',
  spawnTasks: 'function',
  runTasks: 'function',
  configure: 'function',
  loginWithKubeconfig: 'function',
  loginWithServiceAccount: 'function',
  adopt: 'function',
  appendOwnerReference: 'function',
  removeOwnerReference: 'function',
  label: 'function',
  harmonizeNaming: 'function',
  adjustNamespace: 'function',
  buildObjectReference: 'function',
  buildOwnerReference: 'function',
  HierarchyError: 'class',
};

/** The storage classes of R-STORAGE (configurable through `settings.persistence`). */
const STORAGES = [
  'AnnotationsProgressStorage',
  'StatusProgressStorage',
  'MultiProgressStorage',
  'SmartProgressStorage',
  'AnnotationsDiffBaseStorage',
  'StatusDiffBaseStorage',
  'MultiDiffBaseStorage',
] as const;

describe('the exported names', () => {
  it('R-API-1 every name of the list is exported with the right kind of value', () => {
    const actual = Object.fromEntries(Object.keys(EXPECTED).map((name) => [name, kindOf(exported[name])]));
    expect(actual).toEqual(EXPECTED);
  });

  it('R-API-1 the on namespace has every registrar, the lifecycles namespace every lifecycle', () => {
    const registrars = [
      'startup',
      'cleanup',
      'login',
      'probe',
      'resume',
      'create',
      'update',
      'delete',
      'field',
      'event',
      'index',
      'daemon',
      'timer',
      'validate',
      'mutate',
    ];
    expect(Object.fromEntries(registrars.map((name) => [name, kindOf((kopf.on as unknown as Record<string, unknown>)[name])]))).toEqual(
      Object.fromEntries(registrars.map((name) => [name, 'function'])),
    );
    const lifecycles = ['asap', 'allAtOnce', 'oneByOne', 'randomized', 'shuffled'];
    expect(Object.fromEntries(lifecycles.map((name) => [name, kindOf((kopf.lifecycles as unknown as Record<string, unknown>)[name])]))).toEqual(
      Object.fromEntries(lifecycles.map((name) => [name, 'function'])),
    );
    // The top-level aliases are the same functions as in the namespace.
    expect([kopf.daemon, kopf.timer, kopf.index]).toEqual([kopf.on.daemon, kopf.on.timer, kopf.on.index]);
  });

  it('R-API-1 the enums have exactly the listed members', () => {
    expect(Object.values(kopf.ErrorsMode).sort()).toEqual(['IGNORED', 'PERMANENT', 'TEMPORARY']);
    expect(Object.values(kopf.Reason).sort()).toEqual(['create', 'delete', 'free', 'gone', 'noop', 'resume', 'update']);
    expect(Object.keys(kopf.DaemonStoppingReason).length).toBeGreaterThan(0);
    // The error classes extend each other as R-ERRORS-6 says.
    expect(new kopf.HandlerTimeoutError('x')).toBeInstanceOf(kopf.PermanentError);
    expect(new kopf.HandlerRetriesError('x')).toBeInstanceOf(kopf.PermanentError);
    expect(new kopf.AdmissionError('x')).toBeInstanceOf(kopf.PermanentError);
  });

  it('R-API-1 the struct names exist as types: Diff, DiffOperation, ConnectionInfo', () => {
    expectTypeOf<kopf.DiffOperation>().toEqualTypeOf<'add' | 'change' | 'remove'>();
    expectTypeOf<kopf.Diff[number][0]>().toEqualTypeOf<kopf.DiffOperation>();
    expectTypeOf<kopf.ConnectionInfo>().toHaveProperty('server');
  });

  it('R-API-1 the storage classes of R-STORAGE are exported', () => {
    const actual = Object.fromEntries(STORAGES.map((name) => [name, kindOf(exported[name])]));
    expect(actual).toEqual(Object.fromEntries(STORAGES.map((name) => [name, 'class'])));
  });
});
