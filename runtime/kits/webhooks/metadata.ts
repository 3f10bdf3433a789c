/**
 * Just enough of the Reflect metadata API for the X.509 library to load.
 *
 * `@peculiar/x509` registers its algorithm providers through `tsyringe`, which refuses to load
 * unless `Reflect.getMetadata` exists. kopf-gen ships no metadata polyfill, so the certificate
 * module imports this one for its side effect right before it loads the library: it installs the
 * three functions `tsyringe` calls, backed by a `WeakMap`, and leaves a real polyfill alone if the
 * application already has one. Nothing in the runtime uses decorators otherwise.
 */

const tables = new WeakMap<object, Map<unknown, unknown>>();

function tableOf(target: object, create: boolean): Map<unknown, unknown> | undefined {
  let table = tables.get(target);
  if (table === undefined && create) {
    table = new Map();
    tables.set(target, table);
  }
  return table;
}

const functions = {
  defineMetadata(key: unknown, value: unknown, target: object): void {
    tableOf(target, true)!.set(key, value);
  },
  getOwnMetadata(key: unknown, target: object): unknown {
    return tableOf(target, false)?.get(key);
  },
  getMetadata(key: unknown, target: object): unknown {
    // Looks up the prototype chain, as the real API does.
    for (let current: object | null = target; current !== null; current = Object.getPrototypeOf(current) as object | null) {
      const table = tableOf(current, false);
      if (table?.has(key)) return table.get(key);
    }
    return undefined;
  },
};

const reflect = Reflect as unknown as Record<string, unknown>;
if (typeof reflect['getMetadata'] !== 'function') {
  for (const [name, fn] of Object.entries(functions)) {
    Object.defineProperty(reflect, name, { value: fn, configurable: true, writable: true, enumerable: false });
  }
}

export {};
